"""A test double of Confluent Schema Registry: its REST API, in memory.

No real registry server can be installed on the test machines, so the
integration tests start this one (see the ``registry`` fixture of
tests/integration/test_registry_*.py) on a free loopback port. It speaks the
subset of the API that Confluent's serializers and tributary's client use, with
the same paths, bodies, status codes and error codes:

  GET  /schemas/ids/{id}                       {"schema", "schemaType"?, "references"?}
  GET  /schemas/types
  GET  /subjects, /subjects/{s}/versions
  GET  /subjects/{s}/versions/{n|latest}
  POST /subjects/{s}/versions                   register: {"id"}
  POST /subjects/{s}                            look up: {"subject","id","version","schema",...}
  DELETE /subjects/{s}
  GET/PUT /config, GET/PUT /config/{s}

Errors are {"error_code", "message"}: 40401 subject not found, 40402 version not
found, 40403 schema not found, 42201 invalid schema, 401 unauthorized. A schema
has one id however many subjects hold it; AVRO and JSON schemas are compared
after parsing (key order and spacing do not matter). PROTOBUF schemas, given as
.proto text or as a base64 FileDescriptorProto (what confluent-kafka's
ProtobufSerializer sends), are stored as .proto text in one canonical form and
compared in it; ``?format=serialized`` answers the base64 FileDescriptorProto
(protobuf_schemas.py; needs protoc and the protobuf package). Compatibility is
not checked: every new schema is accepted.

Test controls: ``down`` makes every request answer 503 (an outage),
``requests`` counts requests by path, ``auth`` = ("basic", "user:pw") or
("bearer", "token") requires credentials.

Run standalone: python3 registry.py [--port N]
"""
import argparse
import base64
import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import protobuf_schemas



CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class RegistryError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class Store:
    """The registry's state: schemas by id and subjects' versions."""

    def __init__(self):
        self.lock = threading.Lock()
        self.schemas = {}  # id -> {"schema", "schemaType", "references"}
        self.ids = {}  # identity -> id
        self.subjects = {}  # subject -> [id of version 1, id of version 2, ...]
        self.config = {"compatibilityLevel": "BACKWARD"}

    @staticmethod
    def _identity(schema_type, text, refs):
        if schema_type in ("AVRO", "JSON"):
            try:
                text = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
            except ValueError:
                raise RegistryError(422, 42201, "Invalid schema: not JSON")
        key_refs = json.dumps(sorted((r["name"], r["subject"], r["version"]) for r in refs))
        return (schema_type, text, key_refs)

    def _normalised(self, body):
        if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
            raise RegistryError(422, 42201, "Invalid schema: no schema field")
        schema_type = body.get("schemaType", "AVRO")
        if schema_type not in ("AVRO", "PROTOBUF", "JSON"):
            raise RegistryError(422, 42201, f"Invalid schema type {schema_type}")
        refs = body.get("references") or []
        for ref in refs:
            self.version(ref["subject"], str(ref["version"]))  # must exist
        return schema_type, body["schema"], refs

    def _imports(self, refs, into=None):
        """Import path -> .proto text of refs, and of what they reference."""
        into = {} if into is None else into
        for ref in refs:
            stored = self.schemas[self.version(ref["subject"], str(ref["version"]))["id"]]
            if ref["name"] not in into:
                into[ref["name"]] = stored["schema"]
                self._imports(stored["references"], into)
        return into

    def _protobuf(self, text, refs):
        """(canonical .proto text, base64 FileDescriptorProto) of a PROTOBUF schema."""
        try:
            return protobuf_schemas.canonical(text, self._imports(refs))
        except protobuf_schemas.InvalidSchema as e:
            raise RegistryError(422, 42201, f"Invalid schema: {e}")

    def register(self, subject, body):
        with self.lock:
            schema_type, text, refs = self._normalised(body)
            serialized = None
            if schema_type == "PROTOBUF":
                text, serialized = self._protobuf(text, refs)
            identity = self._identity(schema_type, text, refs)
            schema_id = self.ids.get(identity)
            if schema_id is None:
                schema_id = len(self.schemas) + 1
                self.ids[identity] = schema_id
                self.schemas[schema_id] = {"schema": text, "schemaType": schema_type,
                                           "references": refs, "serialized": serialized}
            versions = self.subjects.setdefault(subject, [])
            if schema_id not in versions:
                versions.append(schema_id)
            return {"id": schema_id}

    def lookup(self, subject, body):
        with self.lock:
            if subject not in self.subjects:
                raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
            schema_type, text, refs = self._normalised(body)
            if schema_type == "PROTOBUF":
                text = self._protobuf(text, refs)[0]
            schema_id = self.ids.get(self._identity(schema_type, text, refs))
            versions = self.subjects[subject]
            if schema_id not in versions:
                raise RegistryError(404, 40403, "Schema not found")
            return self._answer(subject, versions.index(schema_id) + 1, schema_id)

    def _answer(self, subject, version, schema_id, fmt=None):
        return {"subject": subject, "version": version, "id": schema_id,
                **self.by_id(schema_id, fmt)}

    def by_id(self, schema_id, fmt=None):
        """The schema of schema_id; fmt "serialized": a PROTOBUF one as a base64
        FileDescriptorProto."""
        stored = self.schemas.get(schema_id)
        if stored is None:
            raise RegistryError(404, 40403, "Schema not found")
        answer = {"schema": stored["schema"]}
        if fmt == "serialized" and stored.get("serialized"):
            answer["schema"] = stored["serialized"]
        if stored["schemaType"] != "AVRO":
            answer["schemaType"] = stored["schemaType"]
        if stored["references"]:
            answer["references"] = stored["references"]
        return answer

    def version(self, subject, version, fmt=None):
        versions = self.subjects.get(subject)
        if not versions:
            raise RegistryError(404, 40401, f"Subject '{subject}' not found.")
        number = len(versions) if version in ("latest", "-1") else int(version)
        if not 1 <= number <= len(versions):
            raise RegistryError(404, 40402, f"Version {version} not found.")
        return self._answer(subject, number, versions[number - 1], fmt)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    registry = None  # the TestRegistry, set per server

    def log_message(self, *args):
        pass

    def _reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self):
        auth = self.registry.auth
        if auth is None:
            return True
        kind, secret = auth
        given = self.headers.get("Authorization", "")
        if kind == "basic":
            return given == "Basic " + base64.b64encode(secret.encode()).decode()
        return given == "Bearer " + secret

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            raise RegistryError(422, 42201, "Invalid JSON body")

    def _handle(self, method):
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
        registry = self.registry
        with registry.counter_lock:
            registry.requests[f"{method} {url.path}"] = \
                registry.requests.get(f"{method} {url.path}", 0) + 1
        if registry.down:
            self._reply(503, {"error_code": 50003, "message": "registry is down (test)"})
            return
        if not self._authorised():
            self._reply(401, {"error_code": 401, "message": "Unauthorized"})
            return
        fmt = urllib.parse.parse_qs(url.query).get("format", [None])[0]
        try:
            self._reply(200, self._route(method, parts, fmt))
        except RegistryError as e:
            self._reply(e.status, {"error_code": e.code, "message": e.message})

    def _route(self, method, parts, fmt=None):
        store = self.registry.store
        match (method, parts):
            case ("GET", ["schemas", "ids", schema_id]) if schema_id.isdigit():
                return store.by_id(int(schema_id), fmt)
            case ("GET", ["schemas", "types"]):
                return ["AVRO", "PROTOBUF", "JSON"]
            case ("GET", ["subjects"]):
                return sorted(store.subjects)
            case ("GET", ["subjects", subject, "versions"]):
                store.version(subject, "latest")
                return list(range(1, len(store.subjects[subject]) + 1))
            case ("GET", ["subjects", subject, "versions", version]):
                return store.version(subject, version, fmt)
            case ("POST", ["subjects", subject, "versions"]):
                return store.register(subject, self._body())
            case ("POST", ["subjects", subject]):
                return store.lookup(subject, self._body())
            case ("DELETE", ["subjects", subject]):
                store.version(subject, "latest")
                return list(range(1, len(store.subjects.pop(subject)) + 1))
            case ("GET", ["config", *_]):
                return store.config
            case ("PUT", ["config", *_]):
                return self._body()
        raise RegistryError(404, 404, "HTTP 404 Not Found")

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_DELETE(self):
        self._handle("DELETE")


class TestRegistry:
    """A registry on 127.0.0.1; start() returns self, url is its base URL."""

    __test__ = False  # not a pytest test class

    def __init__(self, port=0):
        self.store = Store()
        self.down = False
        self.auth = None
        self.requests = {}
        self.counter_lock = threading.Lock()
        handler = type("BoundHandler", (Handler,), {"registry": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def count(self, prefix):
        """Requests so far whose "METHOD /path" starts with prefix."""
        with self.counter_lock:
            return sum(n for key, n in self.requests.items() if key.startswith(prefix))

    def register(self, subject, schema, schema_type="AVRO", references=None):
        body = {"schema": schema, "schemaType": schema_type,
                "references": references or []}
        return self.store.register(subject, body)["id"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8081)
    args = parser.parse_args()
    registry = TestRegistry(args.port)
    print(f"test schema registry on {registry.url}", flush=True)
    registry.server.serve_forever()


if __name__ == "__main__":
    main()
