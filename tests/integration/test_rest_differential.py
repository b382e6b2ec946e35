"""The differential REST sequence (issue 36): one sequence of calls covering every endpoint of
Connect's REST API (shared reference connect-rest-api.md), sent to Kafka Connect distributed
(the bed's BED_CONNECT_VERSION, connect_peer.py) and to a tributary distributed worker on the
same broker, each with its own group and internal topics and its own FileStreamSource and
FileStreamSink. For each call the status codes must be equal and the bodies must have the
same shape: the same keys, recursively, with values of the same JSON types (values that differ
legitimately, such as worker ids, versions, commits and message texts, are not compared). Where
tributary differs by design, KNOWN_DEVIATIONS says what and why (README, "Kafka Connect
compatibility"); any other difference fails the test, and so does a deviation listed that no
longer differs."""
import json

import pytest

from connect_peer import FILE_SINK, FILE_SOURCE, ConnectDistributed, connect_topics
from test_distributed import cluster_settings
from worker import wait_for

pytestmark = pytest.mark.integration

# step -> what differs by design and why, with where the README says so. "drop": key paths
# left out of both bodies ("*" is every element of a list or every value of a map); "codes":
# (Connect's, tributary's) status codes, taken as equal; "bodies differ": the bodies are not
# compared.
README = "README.md, Kafka Connect compatibility"
ORDER = f"`order` beside 4.2's `order_in_group`, for 3.9 clients ({README}: order)"
MALFORMED = f"malformed JSON is the client's mistake: 400, not 500 ({README}: malformed JSON body)"
RESTARTS = f"a restarted task shows its `restarts` count ({README}: task status)"
KNOWN_DEVIATIONS = {
    **{step: {"why": ORDER, "drop": ["*.order"]}
       for step in ("plugin config", "plugin config transformation", "plugin config version")},
    **{step: {"why": ORDER, "drop": ["configs.*.definition.order"]}
       for step in ("validate", "validate invalid")},
    **{step: {"why": MALFORMED, "codes": (500, 400)}
       for step in ("create bad json", "offsets patch bad json")},
    "tasks-config": {
        "why": f"still served, as 3.9 did; Connect 4.0 removed it (KIP-970) ({README}: "
               "tasks-config)",
        "codes": (404, 200), "bodies differ": True},
    # "may": the count shows once the task has restarted, which the restart under way
    # may not have done yet when the answer is made, so the step may answer as Connect's
    **{step: {"why": RESTARTS, "drop": ["tasks.*.restarts"], "may": True}
       for step in ("restart with tasks", "restart only failed")},
}

# step -> paths whose values, not only their types, must be the same (in any order where the
# path has a "*"): the keys a plugin config and a validation list with their groups and
# positions, the keys validation finds in error, and the states a status shows
KEY_INFO = ("name", "group", "order_in_group", "required", "type", "importance")
SAME_VALUES = {
    "plugin config": ["*"],
    "validate": ["groups", "error_count", "configs.*.definition"],
    "validate invalid": ["groups", "error_count", "configs.*.definition",
                         "configs.*.value.errors"],
    "status": ["connector.state", "tasks.*.state", "type"],
    "task status": ["state"],
    "status stopped": ["connector.state"],
    "restart with tasks": ["connector.state", "tasks.*.state"],
    "offsets source": ["offsets.*.offset"],
}

# step -> paths of objects keyed by names of the worker's own (loggers), compared as the shape
# of their values
MAPS = {"loggers": [""]}

LINES = "".join(f"line-{i}\n" for i in range(5))


def steps():
    """(name, method, path, keyword arguments of the request); {src}, {sink}, {topic},
    {file_in} and {file_out} name one side's connectors, topic and files."""
    src_config = {"connector.class": FILE_SOURCE, "file": "{file_in}", "topic": "{topic}",
                  "tasks.max": "1"}
    sink_config = {"connector.class": FILE_SINK, "file": "{file_out}", "topics": "{topic}",
                   "tasks.max": "1"}
    return [
        ("root", "GET", "/", {}),
        ("health", "GET", "/health", {}),
        ("plugins", "GET", "/connector-plugins", {}),
        ("plugins all", "GET", "/connector-plugins?connectorsOnly=false", {}),
        ("plugin config", "GET", "/connector-plugins/FileStreamSinkConnector/config", {}),
        ("plugin config unknown", "GET", "/connector-plugins/NoSuchConnector/config", {}),
        ("plugin config transformation", "GET",
         "/connector-plugins/org.apache.kafka.connect.transforms.Cast$Value/config", {}),
        ("plugin config version", "GET",
         "/connector-plugins/FileStreamSinkConnector/config?version=latest", {}),
        ("plugin config bad version", "GET",
         "/connector-plugins/FileStreamSinkConnector/config?version=[1.0", {}),
        ("validate", "PUT", "/connector-plugins/FileStreamSinkConnector/config/validate",
         {"json": {**sink_config, "name": "{sink}"}}),
        ("validate invalid", "PUT", "/connector-plugins/FileStreamSinkConnector/config/validate",
         {"json": {"connector.class": FILE_SINK, "name": "{sink}", "tasks.max": "0"}}),
        ("create", "POST", "/connectors", {"json": {"name": "{src}", "config": src_config}}),
        ("create exists", "POST", "/connectors",
         {"json": {"name": "{src}", "config": src_config}}),
        ("create name mismatch", "POST", "/connectors",
         {"json": {"name": "{src}-x", "config": {**src_config, "name": "{src}-y"}}}),
        ("create bad json", "POST", "/connectors",
         {"data": '{"name": "x", "config": {', "headers": {"Content-Type": "application/json"}}),
        ("create no class", "POST", "/connectors",
         {"json": {"name": "{src}-x", "config": {"tasks.max": "1"}}}),
        ("create stopped", "POST", "/connectors",
         {"json": {"name": "{src}-stopped", "config": src_config, "initial_state": "STOPPED"}}),
        ("delete stopped", "DELETE", "/connectors/{src}-stopped", {}),
        ("put config creates", "PUT", "/connectors/{sink}/config", {"json": sink_config}),
        ("put config replaces", "PUT", "/connectors/{sink}/config",
         {"json": {**sink_config, "name": "{sink}"}}),
        ("patch config", "PATCH", "/connectors/{sink}/config", {"json": {"tasks.max": "1"}}),
        ("put config name mismatch", "PUT", "/connectors/{sink}/config",
         {"json": {**sink_config, "name": "{sink}-y"}}),
        ("patch config unknown", "PATCH", "/connectors/{src}-none/config",
         {"json": {"tasks.max": "1"}}),
        ("wait running", None, None, {}),
        ("list", "GET", "/connectors", {}),
        ("list expanded", "GET", "/connectors?expand=status&expand=info", {}),
        ("info", "GET", "/connectors/{src}", {}),
        ("config", "GET", "/connectors/{src}/config", {}),
        ("status", "GET", "/connectors/{src}/status", {}),
        ("tasks", "GET", "/connectors/{src}/tasks", {}),
        ("tasks-config", "GET", "/connectors/{src}/tasks-config", {}),
        ("task status", "GET", "/connectors/{sink}/tasks/0/status", {}),
        ("task status unknown", "GET", "/connectors/{sink}/tasks/9/status", {}),
        ("task restart", "POST", "/connectors/{sink}/tasks/0/restart", {}),
        ("task restart unknown", "POST", "/connectors/{sink}/tasks/9/restart", {}),
        ("restart unknown", "POST", "/connectors/{src}-none/restart", {}),
        ("restart", "POST", "/connectors/{sink}/restart", {}),
        ("restart with tasks", "POST", "/connectors/{sink}/restart?includeTasks=true", {}),
        ("restart only failed", "POST",
         "/connectors/{sink}/restart?includeTasks=true&onlyFailed=true", {}),
        ("wait offsets", None, None, {}),
        ("offsets source", "GET", "/connectors/{src}/offsets", {}),
        ("offsets sink", "GET", "/connectors/{sink}/offsets", {}),
        ("topics", "GET", "/connectors/{sink}/topics", {}),
        ("topics reset", "PUT", "/connectors/{sink}/topics/reset", {}),
        ("topics unknown", "GET", "/connectors/{src}-none/topics", {}),
        ("pause", "PUT", "/connectors/{sink}/pause", {}),
        ("pause again", "PUT", "/connectors/{sink}/pause", {}),
        ("resume", "PUT", "/connectors/{sink}/resume", {}),
        ("offsets patch running", "PATCH", "/connectors/{src}/offsets",
         {"json": {"offsets": [{"partition": {"filename": "{file_in}"},
                                "offset": {"position": 7}}]}}),
        ("offsets delete running", "DELETE", "/connectors/{src}/offsets", {}),
        ("offsets unknown", "GET", "/connectors/{src}-none/offsets", {}),
        ("stop", "PUT", "/connectors/{src}/stop", {}),
        ("stop again", "PUT", "/connectors/{src}/stop", {}),
        ("stop sink", "PUT", "/connectors/{sink}/stop", {}),
        ("wait stopped", None, None, {}),
        ("status stopped", "GET", "/connectors/{src}/status", {}),
        ("offsets patch", "PATCH", "/connectors/{src}/offsets",
         {"json": {"offsets": [{"partition": {"filename": "{file_in}"},
                                "offset": {"position": 7}}]}}),
        ("offsets patch empty", "PATCH", "/connectors/{src}/offsets", {"json": {"offsets": []}}),
        ("offsets patch bad json", "PATCH", "/connectors/{src}/offsets",
         {"data": '{"offsets": [', "headers": {"Content-Type": "application/json"}}),
        ("offsets delete", "DELETE", "/connectors/{src}/offsets", {}),
        ("offsets patch sink", "PATCH", "/connectors/{sink}/offsets",
         {"json": {"offsets": [{"partition": {"kafka_topic": "{topic}", "kafka_partition": 0},
                                "offset": {"kafka_offset": 2}}]}}),
        ("offsets patch sink bad partition", "PATCH", "/connectors/{sink}/offsets",
         {"json": {"offsets": [{"partition": {"kafka_topic": "{topic}"},
                                "offset": {"kafka_offset": 2}}]}}),
        ("loggers", "GET", "/admin/loggers", {}),
        ("logger root", "GET", "/admin/loggers/root", {}),
        ("logger unset", "GET", "/admin/loggers/no.such.logger", {}),
        ("logger set", "PUT", "/admin/loggers/root", {"json": {"level": "INFO"}}),
        ("logger set cluster", "PUT", "/admin/loggers/root?scope=cluster",
         {"json": {"level": "INFO"}}),
        ("logger set no level", "PUT", "/admin/loggers/root", {"json": {}}),
        ("logger set bad level", "PUT", "/admin/loggers/root", {"json": {"level": "LOUD"}}),
        ("unknown connector", "GET", "/connectors/{src}-none", {}),
        ("unknown connector status", "GET", "/connectors/{src}-none/status", {}),
        ("unknown connector pause", "PUT", "/connectors/{src}-none/pause", {}),
        ("unknown connector resume", "PUT", "/connectors/{src}-none/resume", {}),
        ("unknown connector stop", "PUT", "/connectors/{src}-none/stop", {}),
        ("unknown path", "GET", "/no-such-path", {}),
        ("wrong method", "DELETE", "/connectors", {}),
        ("delete", "DELETE", "/connectors/{src}", {}),
        ("delete sink", "DELETE", "/connectors/{sink}", {}),
        ("deleted", "GET", "/connectors/{src}", {}),
        ("delete unknown", "DELETE", "/connectors/{src}", {}),
    ]


def filled(value, names):
    """value with one side's names put into its strings."""
    if isinstance(value, dict):
        return {filled(k, names): filled(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [filled(v, names) for v in value]
    if isinstance(value, str):
        return value.format(**names)
    return value


def leave_out(value, path):
    """value without the key at path (a list of keys, "*" for every element or value)."""
    if not path or not isinstance(value, (dict, list)):
        return value
    head, rest = path[0], path[1:]
    if head == "*":
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for _, item in items:
            leave_out(item, rest)
    elif isinstance(value, dict) and head in value:
        if rest:
            leave_out(value[head], rest)
        else:
            del value[head]
    return value


def values_at(value, path):
    """The values at path (a list of keys, "*" for every element or value) in value."""
    if not path:
        return [value]
    head, rest = path[0], path[1:]
    if head == "*":
        items = value.values() if isinstance(value, dict) else value
        return [v for item in items for v in values_at(item, rest)]
    return values_at(value[head], rest) if isinstance(value, dict) and head in value else []


def shape(value, names, maps=(), here=""):
    """The JSON types of value, recursively: an object's keys (one side's connector names
    replaced by their roles) with their shapes, a list's elements merged into one shape
    (("list", None) when empty), a scalar the set of its types; an object at one of the paths
    maps, keyed by names of the worker's choosing, as ("map", its values merged)."""
    if isinstance(value, dict):
        if here in maps:
            return ("map", merged(shape(v, names) for v in value.values()))
        renamed = {}
        for key, item in value.items():
            role = key
            for k in ("src", "sink"):  # "src" and "src-0" alike
                role = role.replace(names[k], "{" + k + "}")
            renamed[role] = shape(item, names, maps, f"{here}.{role}".lstrip("."))
        return renamed
    if isinstance(value, list):
        return ("list", merged(shape(v, names, maps, f"{here}.*".lstrip("."))
                               for v in value))
    return frozenset({{bool: "bool", int: "int", float: "number", str: "str",
                       type(None): "null"}[type(value)]})


def merged(shapes):
    """One shape for the elements of a list: the union of their keys and types."""
    result = None
    for s in shapes:
        result = s if result is None else merge(result, s)
    return result


def merge(a, b):
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        return a | b
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k))
                for k in {**a, **b}}
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        return (a[0], b[1] if a[1] is None else a[1] if b[1] is None else merge(a[1], b[1]))
    return frozenset({"mixed"})


def differences(a, b, path="body"):
    """Where Connect's shape a and tributary's b differ. A null matches any type (an optional
    value), and so does the element of an empty list (tasks not yet generated)."""
    if a is None or b is None:
        return []
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        a, b = a - {"null"}, b - {"null"}
        return [f"{path}: {sorted(a)} / {sorted(b)}"] if a and b and a != b else []
    if isinstance(a, dict) and isinstance(b, dict):
        found = [f"{path}.{k}: only Connect's" for k in sorted(set(a) - set(b))]
        found += [f"{path}.{k}: only tributary's" for k in sorted(set(b) - set(a))]
        for k in sorted(set(a) & set(b)):
            found += differences(a[k], b[k], f"{path}.{k}")
        return found
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        return differences(a[1], b[1], f"{path}[]")
    if isinstance(a, frozenset) and a == {"null"} or isinstance(b, frozenset) and b == {"null"}:
        return []
    return [f"{path}: {a} / {b}"]


class Side:
    """One REST peer and the names of its connectors, topic and files."""

    def __init__(self, label, request, names):
        self.label, self.request, self.names = label, request, names

    def status(self, name):
        return self.request("GET", f"/connectors/{name}/status").json()

    def running(self):
        for name in (self.names["src"], self.names["sink"]):
            status = self.status(name)
            if status["connector"]["state"] != "RUNNING" or not status["tasks"] or any(
                    t["state"] != "RUNNING" for t in status["tasks"]):
                return False
        return True

    def offsets(self):
        return all(self.request("GET", f"/connectors/{self.names[c]}/offsets").json()["offsets"]
                   for c in ("src", "sink"))

    def stopped(self):
        return all(self.status(self.names[c])["connector"]["state"] == "STOPPED"
                   for c in ("src", "sink"))


WAITS = {"wait running": Side.running, "wait offsets": Side.offsets,
         "wait stopped": Side.stopped}


def answer(side, method, path, kwargs):
    """(status code, body or None, whether a Location header came) of one step on one side."""
    kwargs = dict(kwargs)
    if "json" in kwargs:
        kwargs["json"] = filled(kwargs["json"], side.names)
    response = side.request(method, filled(path, side.names), **kwargs)
    body = response.json() if response.content else None
    return response.status_code, body, "Location" in response.headers


def compare(name, peers, connect, ours, deviation):
    """How Connect's and tributary's answers to step name differ once deviation is applied to
    both: a list of lines, empty when they do not."""
    (c_code, c_body, c_loc), (t_code, t_body, t_loc) = connect, ours
    deviation = deviation or {}
    if (c_code, t_code) == deviation.get("codes"):
        t_code = c_code
    for path in deviation.get("drop", ()):
        leave_out(c_body, path.split("."))
        leave_out(t_body, path.split("."))
    found = [] if c_code == t_code else [f"status code: {c_code} / {t_code}"]
    if c_loc != t_loc:
        found.append(f"Location header: {c_loc} / {t_loc}")
    if not deviation.get("bodies differ"):
        maps = MAPS.get(name, ())
        found += differences(shape(c_body, peers[0].names, maps),
                             shape(t_body, peers[1].names, maps))
    for path in SAME_VALUES.get(name, ()):
        keys = path.split(".") if path else []
        c_values, t_values = values_at(c_body, keys), values_at(t_body, keys)
        if path in ("*", "configs.*.definition"):  # a ConfigKeyInfo: what defines the key
            c_values, t_values = ([{k: info[k] for k in KEY_INFO} for info in v]
                                  for v in (c_values, t_values))
        if "*" in keys:
            c_values, t_values = (sorted(v, key=json.dumps) for v in (c_values, t_values))
        if c_values != t_values:
            found += [f"values at {path}: {c} / {t}" for c, t in zip(c_values, t_values)
                      if c != t] or [f"values at {path}: {c_values} / {t_values}"]
    return [f"{name}: {line}" for line in found]


@pytest.fixture
def peers(bed, tmp_path, start_worker):
    """Connect and a tributary worker, each in its own group on its own topics."""
    sides = []
    group = bed.unique_topic("rdiff-connect")
    java = ConnectDistributed(bed, tmp_path / "connect", group, connect_topics(bed, group), 25)
    try:
        ours = start_worker({**cluster_settings(bed, bed.unique_topic("rdiff-tb")),
                             "key.converter": "org.apache.kafka.connect.storage.StringConverter"})
        for label, request in (("Connect", java.request),
                               ("tributary", lambda m, p, **kw: ours_request(ours, m, p, **kw))):
            folder = tmp_path / label
            folder.mkdir()
            (folder / "in.txt").write_text(LINES)
            prefix = bed.unique_topic(f"rdiff-{label.lower()}")
            sides.append(Side(label, request, {
                "src": f"{prefix}-src", "sink": f"{prefix}-sink", "topic": prefix,
                "file_in": str(folder / "in.txt"), "file_out": str(folder / "out.txt")}))
        yield sides
    finally:
        java.stop()


def ours_request(worker, method, path, **kwargs):
    return getattr(worker, method.lower())(path, **kwargs)


def test_the_rest_sequence_answers_as_connect_does(peers):
    found, deviating = [], set()
    for name, method, path, kwargs in steps():
        if method is None:
            for side in peers:
                wait_for(lambda: WAITS[name](side), timeout=90, what=f"{side.label}: {name}")
            continue
        answers = [answer(side, method, path, kwargs) for side in peers]
        if compare(name, peers, *answers, None):
            deviating.add(name)
        found += compare(name, peers, *answers, KNOWN_DEVIATIONS.get(name))
    assert not found, "answers that differ (Connect's / tributary's):\n" + "\n".join(found)
    stale = {step for step in set(KNOWN_DEVIATIONS) - deviating
             if not KNOWN_DEVIATIONS[step].get("may")}
    assert not stale, f"known deviations that no longer differ: {sorted(stale)}"
