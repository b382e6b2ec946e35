"""PROTOBUF schemas in the test registry (registry.py), as Confluent Schema Registry
keeps them: a schema registered as .proto text or as a base64 FileDescriptorProto
(what confluent-kafka's ProtobufSerializer sends) is stored as .proto text in one
canonical form, so both spellings of a schema get the same id; ``format=serialized``
answers the base64 FileDescriptorProto (what confluent-kafka's deserializers ask
for).

.proto text is compiled with ``protoc`` (Debian's protobuf-compiler; the imports
are the schema's references, google/protobuf/ from /usr/include); descriptors are
printed back to .proto text by ``proto_text`` below. Needs the ``protobuf`` Python
package (tests/requirements.txt).
"""
import base64
import binascii
import os
import re
import shutil
import subprocess
import tempfile

MAIN_FILE = "schema.proto"

_SCALARS = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64",
            7: "fixed32", 8: "bool", 9: "string", 12: "bytes", 13: "uint32",
            15: "sfixed32", 16: "sfixed64", 17: "sint32", 18: "sint64"}
_MESSAGE, _GROUP, _ENUM = 11, 10, 14
_OPTIONAL, _REQUIRED, _REPEATED = 1, 2, 3


class InvalidSchema(Exception):
    """The schema is neither valid .proto text nor a FileDescriptorProto."""


def _descriptor_pb2():
    from google.protobuf import descriptor_pb2
    return descriptor_pb2


def is_serialized(text):
    """Whether text is base64 (a FileDescriptorProto) rather than .proto text."""
    return bool(text) and re.fullmatch(r"[A-Za-z0-9+/=]+", text) is not None


def parse_serialized(text):
    """The FileDescriptorProto that base64 text holds."""
    proto = _descriptor_pb2().FileDescriptorProto()
    try:
        proto.ParseFromString(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, Exception) as e:  # DecodeError is an Exception
        raise InvalidSchema(f"not a base64 FileDescriptorProto: {e}")
    return proto


def compile_text(text, imports):
    """The FileDescriptorProto of .proto text; imports maps the import paths
    it may use (transitively) to their .proto text."""
    protoc = shutil.which("protoc")
    if protoc is None:
        raise InvalidSchema("protoc is not installed (apt-get install protobuf-compiler)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in {**imports, MAIN_FILE: text}.items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(body)
        out = os.path.join(tmp, "out.pb")
        command = [protoc, f"-I{tmp}", f"--descriptor_set_out={out}", MAIN_FILE]
        if os.path.isdir("/usr/include/google/protobuf"):
            command.insert(2, "-I/usr/include")
        done = subprocess.run(command, cwd=tmp, capture_output=True, text=True)
        if done.returncode != 0:
            raise InvalidSchema(done.stderr.strip() or "protoc failed")
        files = _descriptor_pb2().FileDescriptorSet()
        with open(out, "rb") as f:
            files.ParseFromString(f.read())
    return files.file[0]


def _quote(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _enum(enum, indent):
    lines = [f"{indent}enum {enum.name} {{"]
    if enum.options.allow_alias:
        lines.append(f"{indent}  option allow_alias = true;")
    lines += [f"{indent}  {v.name} = {v.number};" for v in enum.value]
    return lines + [f"{indent}}}"]


def _field(field, message, syntax, entries):
    if field.type == _GROUP:
        raise InvalidSchema("groups are not supported by the test registry")
    kind = field.type_name if field.type in (_MESSAGE, _ENUM) else _SCALARS[field.type]
    entry = entries.get(field.type_name.rsplit(".", 1)[-1]) \
        if field.type == _MESSAGE and field.label == _REPEATED else None
    if entry is not None:
        key, value = entry.field[0], entry.field[1]
        value_type = value.type_name if value.type in (_MESSAGE, _ENUM) \
            else _SCALARS[value.type]
        return f"map<{_SCALARS[key.type]}, {value_type}> {field.name} = {field.number};"
    label = ""
    if field.label == _REPEATED:
        label = "repeated "
    elif field.label == _REQUIRED:
        label = "required "
    elif syntax == "proto2" or field.proto3_optional:
        label = "optional "
    options = []
    if field.HasField("default_value"):
        default = field.default_value
        options.append("default = " + (_quote(default) if field.type in (9, 12)
                                       else default))
    if field.options.HasField("packed"):
        options.append(f"packed = {str(field.options.packed).lower()}")
    suffix = f" [{', '.join(options)}]" if options else ""
    return f"{label}{kind} {field.name} = {field.number}{suffix};"


def _message(message, indent, syntax):
    """The lines of message. Nested messages and fields are interleaved so that
    protoc, reading them back, makes the nested types (map entries included) in
    the same order: Confluent's message indexes count them."""
    lines = [f"{indent}message {message.name} {{"]
    inner = indent + "  "
    entries = {n.name: n for n in message.nested_type if n.options.map_entry}
    synthetic = {f.oneof_index for f in message.field if f.proto3_optional}
    fields = []  # (field numbers it covers, lines), in declaration order
    seen = set()
    for field in message.field:
        oneof = field.oneof_index if field.HasField("oneof_index") else None
        if oneof is None or oneof in synthetic:
            fields.append(({field.number}, [inner + _field(field, message, syntax,
                                                           entries)]))
        elif oneof not in seen:
            seen.add(oneof)
            members = [f for f in message.field
                       if f.HasField("oneof_index") and f.oneof_index == oneof]
            fields.append(({f.number for f in members},
                           [f"{inner}oneof {message.oneof_decl[oneof].name} {{"] +
                           [inner + "  " + _field(f, message, syntax, entries)
                            for f in members] + [f"{inner}}}"]))
    pending = list(fields)
    for nested in message.nested_type:
        if not nested.options.map_entry:
            lines += _message(nested, inner, syntax)
            continue
        # the map field whose entry this is, after the fields before it
        owner = next((f.number for f in message.field
                      if f.type_name.rsplit(".", 1)[-1] == nested.name), None)
        while pending:
            numbers, field_lines = pending.pop(0)
            lines += field_lines
            if owner in numbers:
                break
    for enum in message.enum_type:
        lines += _enum(enum, inner)
    for _, field_lines in pending:
        lines += field_lines
    for r in message.reserved_range:
        lines.append(f"{inner}reserved {r.start} to {r.end - 1};")
    return lines + [f"{indent}}}"]


def proto_text(proto):
    """The canonical .proto text of a FileDescriptorProto (what the registry
    stores and answers by default)."""
    syntax = proto.syntax or "proto2"
    lines = [f'syntax = "{syntax}";']
    if proto.package:
        lines.append(f"package {proto.package};")
    public = set(proto.public_dependency)
    for i, dependency in enumerate(proto.dependency):
        lines.append(f'import {"public " if i in public else ""}"{dependency}";')
    for enum in proto.enum_type:
        lines += _enum(enum, "")
    for message in proto.message_type:
        lines += _message(message, "", syntax)
    return "\n".join(lines) + "\n"


def canonical(text, imports):
    """(canonical .proto text, base64 FileDescriptorProto) of a schema given as
    either; imports as in compile_text."""
    proto = parse_serialized(text) if is_serialized(text) else compile_text(text, imports)
    proto.name = MAIN_FILE
    return proto_text(proto), base64.b64encode(proto.SerializeToString()).decode()
