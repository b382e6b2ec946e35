"""openapi.yaml is a valid OpenAPI 3.0 document and follows the project's own
rules for it. Needs no server and no Kafka."""
import pathlib

import pytest
import yaml
from openapi_spec_validator import OpenAPIV30SpecValidator

ROOT = pathlib.Path(__file__).resolve().parents[2]
METHODS = ("get", "put", "post", "patch", "delete", "head", "options", "trace")
ERROR_MESSAGE = "#/components/schemas/ErrorMessage"
# Operations whose error bodies are not ErrorMessages (or that have none).
# these always answer: no error body to describe
WITHOUT_ERROR_MESSAGE = {("get", "/"), ("get", "/health"), ("get", "/health/live"),
                         ("get", "/metrics")}


@pytest.fixture(scope="module")
def spec():
    return yaml.safe_load((ROOT / "openapi.yaml").read_text())


def operations(spec):
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                yield method, path, item[method]


def resolve(spec, node):
    """Follows local $refs ("#/a/b") until the node is not a reference."""
    seen = set()
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), f"only local references are expected: {ref}"
        assert ref not in seen, f"reference cycle at {ref}"
        seen.add(ref)
        node = spec
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def test_is_a_valid_openapi_3_0_document(spec):
    assert spec["openapi"] == "3.0.3"
    errors = [f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
              for error in OpenAPIV30SpecValidator(spec).iter_errors()]
    assert errors == []


def test_every_operation_has_a_unique_operation_id_and_a_summary(spec):
    ids = []
    for method, path, operation in operations(spec):
        assert operation.get("operationId"), f"{method.upper()} {path} has no operationId"
        assert operation.get("summary"), f"{method.upper()} {path} has no summary"
        ids.append(operation["operationId"])
    assert ids
    assert len(ids) == len(set(ids)), "operationIds are not unique"


def test_every_operation_documents_an_error_message_response(spec):
    missing = []
    for method, path, operation in operations(spec):
        if (method, path) in WITHOUT_ERROR_MESSAGE:
            continue
        found = False
        for status, response in operation["responses"].items():
            if str(status)[0] not in "45":
                continue
            response = resolve(spec, response)
            schema = response.get("content", {}).get("application/json", {}).get("schema", {})
            if schema.get("$ref") == ERROR_MESSAGE:
                found = True
        if not found:
            missing.append(f"{method.upper()} {path}")
    assert missing == [], "operations without a 4xx/5xx ErrorMessage response"


def test_every_error_response_is_an_error_message(spec):
    """Every non-2xx body is an ErrorMessage, except /health's, which are Health."""
    wrong = []
    for method, path, operation in operations(spec):
        if (method, path) in WITHOUT_ERROR_MESSAGE:
            continue
        for status, response in operation["responses"].items():
            if str(status)[0] not in "45":
                continue
            response = resolve(spec, response)
            schema = response.get("content", {}).get("application/json", {}).get("schema", {})
            if schema.get("$ref") != ERROR_MESSAGE:
                wrong.append(f"{method.upper()} {path} {status}")
    assert wrong == []


def test_empty_responses_have_no_content(spec):
    with_content = []
    for method, path, operation in operations(spec):
        for status, response in operation["responses"].items():
            if str(status) == "204" and "content" in resolve(spec, response):
                with_content.append(f"{method.upper()} {path} {status}")
    assert with_content == []


def test_path_parameters_use_the_agreed_names(spec):
    agreed = {"connector", "task", "plugin", "logger", "path"}
    for path in spec["paths"]:
        names = {part[1:-1] for part in path.split("/") if part.startswith("{")}
        assert names <= agreed, f"{path} uses {names - agreed}"
