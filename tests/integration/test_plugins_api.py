"""/connector-plugins: the list, each plugin's keys, and validation."""
import pytest

from worker import wait_for

pytestmark = pytest.mark.integration

DATAGEN = "io.tributary.connect.datagen.DatagenConnector"


def test_list_plugins(worker):
    plugins = worker.get("/connector-plugins").json()
    assert {"class": DATAGEN, "type": "source", "version": "0.1.0"} in plugins
    kinds = [p["type"] for p in plugins]
    assert kinds == sorted(kinds, key=lambda k: k != "sink"), "sinks come first"
    assert worker.get("/connector-plugins?connectorsOnly=true").json() == plugins


@pytest.mark.parametrize("name", [DATAGEN, "datagen", "DatagenConnector", "Datagen"])
def test_plugin_config_by_any_name(worker, name):
    reply = worker.get(f"/connector-plugins/{name}/config")
    assert reply.status_code == 200
    keys = reply.json()
    names = [k["name"] for k in keys]
    assert names[:5] == ["topic", "records.per.second", "count", "shape", "seed"]
    assert {"name", "connector.class", "tasks.max", "errors.tolerance",
            "exactly.once.support"} <= set(names)
    topic = keys[0]
    assert topic == {
        "name": "topic", "type": "STRING", "required": True, "default_value": None,
        "importance": "HIGH", "documentation": "Topic the records are written to.",
        "group": "Datagen", "width": "NONE", "display_name": "topic",
        "dependents": [], "order": 1, "order_in_group": 1}
    tasks_max = next(k for k in keys if k["name"] == "tasks.max")
    assert tasks_max["default_value"] == "1" and tasks_max["required"] is False
    # KIP-1004's key, as Connect 4.1 lists it (documentation in tributary's words;
    # fifth of Common since connector.plugin.version came third)
    enforce = next(k for k in keys if k["name"] == "tasks.max.enforce")
    assert {**enforce, "documentation": None} == {
        "name": "tasks.max.enforce", "type": "BOOLEAN", "required": False,
        "default_value": "true", "importance": "LOW", "documentation": None,
        "group": "Common", "width": "SHORT", "display_name": "Enforce tasks max",
        "dependents": [], "order": 5, "order_in_group": 5}


def test_unknown_plugin_is_404(worker):
    reply = worker.get("/connector-plugins/Nope/config")
    assert reply.status_code == 404
    assert reply.json() == {"error_code": 404, "message": "Unknown plugin Nope."}


def test_plugin_config_of_a_version_range(worker):
    """KIP-891 (Connect 4.1): ?version= takes Maven version ranges, which the
    plugin's one version must lie in; a malformed one is 400 whatever the
    plugin, a range without its version 400 with Connect's message."""
    plain = worker.get(f"/connector-plugins/{DATAGEN}/config").json()
    for version in ["0.1.0", "0.1", "latest", "[0.1,1.0)", "(,0.1.0]", "[0.0.9,)"]:
        reply = worker.get(f"/connector-plugins/datagen/config", params={"version": version})
        assert reply.status_code == 200, version
        assert reply.json() == plain
    reply = worker.get("/connector-plugins/datagen/config", params={"version": "1.0"})
    assert reply.status_code == 400
    assert reply.json() == {"error_code": 400, "message":
        f"Plugin {DATAGEN} has version 0.1.0 which does not match the required "
        "version range [1.0,1.0]"}
    reply = worker.get("/connector-plugins/datagen/config",
                       params={"version": "[1.0,2.0)"})
    assert reply.status_code == 400 and "version range [1.0,2.0)" in reply.json()["message"]
    for name in ["datagen", "Nope"]:
        reply = worker.get(f"/connector-plugins/{name}/config", params={"version": "[1.0"})
        assert reply.status_code == 400
        assert reply.json() == {"error_code": 400, "message":
            "Invalid version specification: [1.0: Unbounded range: [1.0"}
    assert worker.get("/connector-plugins/Nope/config",
                      params={"version": "1.0"}).status_code == 404
    # a built-in transformation has the version the plugin list shows
    listed = worker.get("/connector-plugins?connectorsOnly=false").json()
    flt = next(p for p in listed if p["class"].endswith("transforms.Filter"))
    ok = worker.get(f"/connector-plugins/{flt['class']}/config",
                    params={"version": flt["version"]})
    assert ok.status_code == 200
    reply = worker.get(f"/connector-plugins/{flt['class']}/config",
                       params={"version": "[99,)"})
    assert reply.status_code == 400
    assert reply.json()["message"] == (
        f"Plugin {flt['class']} has version {flt['version']} which does not match "
        "the required version range [99,)")


def test_plugin_version_keys(worker, bed):
    """KIP-891's *.plugin.version keys: listed as Connect 4.1 lists them,
    taken when their range holds the built-in plugin's version, refused
    under the key otherwise, with Connect's messages."""
    keys = {k["name"]: k for k in worker.get("/connector-plugins/datagen/config").json()}
    cpv = keys["connector.plugin.version"]
    assert (cpv["type"], cpv["default_value"], cpv["group"], cpv["order"]) == (
        "STRING", "0.1.0", "Common", 3)
    for conv, order in [("key", 7), ("value", 9), ("header", 11)]:
        k = keys[f"{conv}.converter.plugin.version"]
        assert (k["default_value"], k["order"]) == (None, order)
        assert keys[f"{conv}.converter"]["order"] == order - 1
    builtin = next(p["version"] for p in worker.get(
        "/connector-plugins?connectorsOnly=false").json()
        if p["class"].endswith("transforms.Filter"))
    base = {"connector.class": "datagen", "name": "g", "topic": "t",
            "transforms": "f", "transforms.f.type": "Filter",
            "transforms.f.predicate": "p", "predicates": "p",
            "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "x"}

    def errors(**config):
        infos = worker.put("/connector-plugins/datagen/config/validate",
                           json={**base, **config}).json()
        return infos, {c["value"]["name"]: c["value"]["errors"]
                       for c in infos["configs"] if c["value"] and c["value"]["errors"]}

    infos, found = errors(**{
        "connector.plugin.version": "[0.1,1.0)",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.plugin.version": builtin,
        "key.converter.plugin.version": "latest",
        "transforms.f.plugin.version": f"[{builtin}]",
        "predicates.p.plugin.version": "(,99)"})
    assert found == {} and infos["error_count"] == 0
    # unset, connector.plugin.version shows its default, the plugin's version
    infos, _ = errors()
    shown = next(c for c in infos["configs"]
                 if c["definition"] and c["definition"]["name"] == "connector.plugin.version")
    assert shown["value"]["value"] == "0.1.0"

    infos, found = errors(**{
        "connector.plugin.version": "1.0",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.plugin.version": "[4.0,)",
        "header.converter.plugin.version": "[1.0",
        "transforms.f.plugin.version": "4.4.0",
        "predicates.p.plugin.version": "(1.0)"})
    assert infos["error_count"] == 5
    assert found == {
        "connector.plugin.version": [
            f"Invalid value 1.0 for configuration connector.plugin.version: Plugin "
            f"{DATAGEN} has version 0.1.0 which does not match the required version "
            "range [1.0,1.0]"],
        "value.converter.plugin.version": [
            "Invalid value [4.0,) for configuration value.converter.plugin.version: "
            "Plugin org.apache.kafka.connect.json.JsonConverter has version "
            f"{builtin} which does not match the required version range [4.0,)"],
        "header.converter.plugin.version": [
            "Invalid value [1.0 for configuration header.converter.plugin.version: "
            "Unbounded range: [1.0"],
        "transforms.f.plugin.version": [
            "Invalid value 4.4.0 for configuration transforms.f.plugin.version: "
            f"Plugin Filter has version {builtin} which does not match the required "
            "version range [4.4.0,4.4.0]"],
        "predicates.p.plugin.version": [
            "Invalid value (1.0) for configuration predicates.p.plugin.version: "
            "Single version must be surrounded by []: (1.0)"]}

    # creating the connector is refused the same way, naming the key
    reply = worker.post("/connectors", json={"name": "g", "config": {
        **base, "topic": bed.unique_topic("pv"), "transforms.f.plugin.version": "4.4.0"}})
    assert reply.status_code == 400
    assert "transforms.f.plugin.version: Plugin Filter has version" in reply.json()["message"]
    assert worker.get("/connectors").json() == []
    # matching versions run: the converter and the chain take their keys
    good = {**base, "topic": bed.unique_topic("pv"), "connector.plugin.version": "0.1.0",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.plugin.version": builtin,
            "transforms.f.plugin.version": builtin, "predicates.p.plugin.version": builtin}
    assert worker.post("/connectors", json={"name": "g", "config": good}).status_code == 201
    wait_for(lambda: (lambda st: st["connector"]["state"] == "RUNNING" and
                      [t["state"] for t in st["tasks"]] == ["RUNNING"])(
                          worker.get("/connectors/g/status").json()),
             what="connector g and its task RUNNING")


def test_validate_reports_every_error_with_200(worker):
    reply = worker.put(f"/connector-plugins/datagen/config/validate",
                       json={"connector.class": "datagen", "tasks.max": "0",
                             "shape": "cubes"})
    assert reply.status_code == 200
    infos = reply.json()
    assert infos["name"] == DATAGEN
    assert infos["error_count"] == 4  # name, topic, tasks.max, shape
    assert infos["groups"][:4] == ["Common", "Transforms", "Predicates", "Error Handling"]
    by_name = {c["value"]["name"]: c for c in infos["configs"]}
    assert by_name["tasks.max"]["value"]["errors"] == [
        "Invalid value 0 for configuration tasks.max: Value must be at least 1"]
    assert by_name["shape"]["value"]["errors"] == [
        "Invalid value cubes for configuration shape: String must be one of: "
        "orders, users, pageviews"]
    assert by_name["topic"]["value"]["errors"] == [
        'Missing required configuration "topic" which has no default value.']
    # 3.9's "order" and 4.2's "order_in_group", one value under both names
    assert {k: by_name["topic"]["definition"][k] for k in ("order", "order_in_group")} == {
        "order": 1, "order_in_group": 1}
    assert by_name["seed"]["value"] == {
        "name": "seed", "value": "42", "recommended_values": [], "errors": [],
        "visible": True}


def test_validate_valid_config_and_mismatches(worker):
    ok = worker.put("/connector-plugins/DatagenConnector/config/validate",
                    json={"connector.class": "datagen", "name": "g", "topic": "t"})
    assert ok.status_code == 200 and ok.json()["error_count"] == 0
    reply = worker.put("/connector-plugins/Datagen/config/validate",
                       json={"connector.class": "Nope", "name": "g"})
    assert reply.status_code == 400  # Connect: 500
    reply = worker.put("/connector-plugins/datagen/config/validate", json={"name": "g"})
    assert reply.status_code == 400  # Connect: 500
    assert "contains no connector type" in reply.json()["message"]
    reply = worker.put("/connector-plugins/datagen/config/validate", data="[1,",
                       headers={"Content-Type": "application/json"})
    assert reply.status_code == 400


def test_transforms_and_predicates_are_listed_and_checked_by_class(worker, bed):
    """Connect's built-in transforms and predicates are listed with their
    keys; a chain naming an unknown class, or missing a class's required
    key, is refused with Connect's messages under the key the user wrote."""
    keys = {k["name"]: k for k in worker.get(
        "/connector-plugins/FileStreamSink/config").json()}
    assert keys["transforms"]["type"] == "LIST" and keys["transforms"]["group"] == "Transforms"
    assert keys["predicates"]["type"] == "LIST" and keys["predicates"]["group"] == "Predicates"
    listed = {p["class"]: p["type"] for p in worker.get(
        "/connector-plugins", params={"connectorsOnly": "false"}).json()}
    sided = ["Cast", "ExtractField", "Flatten", "HeaderFrom", "HoistField", "InsertField",
             "MaskField", "ReplaceField", "SetSchemaMetadata", "TimestampConverter"]
    builtins = {f"{name}${side}" for name in sided for side in ("Key", "Value")} | {
        "DropHeaders", "Filter", "InsertHeader", "RegexRouter", "TimestampRouter",
        "ValueToKey"}
    for name in builtins:  # every one of Connect 3.9's built-in transformations
        assert listed.get(f"org.apache.kafka.connect.transforms.{name}") == \
            "transformation", name
    cast_keys = {k["name"] for k in worker.get(
        "/connector-plugins/org.apache.kafka.connect.transforms.Cast$Value/config").json()}
    assert cast_keys == {"spec", "replace.null.with.default"}
    assert listed["org.apache.kafka.connect.transforms.predicates.TopicNameMatches"] == \
        "predicate"
    assert "org.apache.kafka.connect.transforms.RegexRouter" not in {
        p["class"] for p in worker.get("/connector-plugins").json()}
    router_keys = {k["name"]: k for k in worker.get(
        "/connector-plugins/org.apache.kafka.connect.transforms.RegexRouter/config").json()}
    assert set(router_keys) == {"regex", "replacement"}
    assert router_keys["regex"]["required"] is True
    unknown = "org.apache.kafka.connect.transforms.NoSuchTransform"
    config = {"connector.class": "FileStreamSink", "topics": bed.unique_topic("smt"),
              "file": "out.txt", "transforms": "route, hoist, bad",
              "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
              "transforms.route.regex": "(.*)",
              "transforms.bad.type": unknown,
              "predicates": "tomb", "predicates.tomb.type": ""}
    reply = worker.post("/connectors", json={"name": "smt", "config": config})
    assert reply.status_code == 400
    for message in (
            f"Invalid value {unknown} for configuration transforms.bad.type: "
            f"Class {unknown} could not be found.",
            'Missing required configuration "transforms.route.replacement" which has no '
            "default value.",
            'Missing required configuration "transforms.hoist.type" which has no '
            "default value.",
            'Missing required configuration "predicates.tomb.type" which has no '
            "default value."):
        assert message in reply.json()["message"]
    assert worker.get("/connectors").json() == []
    infos = worker.put("/connector-plugins/FileStreamSink/config/validate",
                       json={**config, "name": "smt"}).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"]}
    assert errors["transforms.bad.type"] == [
        f"Invalid value {unknown} for configuration transforms.bad.type: "
        f"Class {unknown} could not be found."]
    duplicate = worker.put("/connector-plugins/FileStreamSink/config/validate", json={
        **config, "name": "smt", "transforms": "route,route"}).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in duplicate["configs"]}
    assert errors["transforms"] == [
        "Invalid value route,route for configuration transforms: Duplicate alias provided."]
    checked = worker.put("/connector-plugins/FileStreamSink/config/validate", json={
        "connector.class": "FileStreamSink", "topics": "t", "name": "smt",
        "transforms": "mask,cast",
        "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
        "transforms.mask.fields": "",
        "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Key",
        "transforms.cast.spec": "a:map"}).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in checked["configs"]}
    assert errors["transforms.mask.fields"] == [
        "Invalid value  for configuration transforms.mask.fields: Empty list"]
    assert errors["transforms.cast.spec"] == [
        "Cast transformation does not support casting to MAP; supported types are "
        "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"]


@pytest.mark.parametrize("name,errors", [
    ("org.apache.kafka.connect.storage.SimpleHeaderConverter", []),
    ("org.apache.kafka.connect.storage.StringConverter", []),
    ("org.apache.kafka.connect.converters.ByteArrayConverter", []),
    ("com.example.Headers", ["Invalid value com.example.Headers for configuration "
                             "header.converter: Class com.example.Headers could not be "
                             "found."])])
def test_validate_header_converter(worker, name, errors):
    reply = worker.put("/connector-plugins/DatagenConnector/config/validate",
                       json={"connector.class": "datagen", "name": "g", "topic": "t",
                             "header.converter": name})
    by_name = {c["definition"]["name"]: c for c in reply.json()["configs"]}
    assert by_name["header.converter"]["value"]["errors"] == errors
    assert reply.json()["error_count"] == len(errors)
