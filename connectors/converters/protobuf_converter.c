/*
 * ProtobufConverter - io.confluent.connect.protobuf.ProtobufConverter:
 * Protobuf messages in Confluent's wire format (the message indexes after
 * the schema id), through the schema registry. registry/protobuf/tb_protobuf.h says
 * how Protobuf data maps to JSON; the registry converter
 * (registry_converter.c) does the framing, the subjects and the cache of
 * compiled schemas by id.
 *
 * Source side: a .proto schema cannot be inferred from JSON in general (the
 * field numbers, and which message of which file, are not in the data), so
 * values are encoded under a schema the subject already has: set
 * use.latest.version=true after registering it. Without that, encoding
 * fails with a reason saying so. Connect data (after transforms) has a
 * schema to derive a .proto from (tb_protobuf_data.h), registered or
 * looked up as the other registry formats do.
 */
#include <stdio.h>

#include "connectors/converters/tb_protobuf_data.h"
#include "connectors/converters/tb_registry_converter.h"
#include "registry/protobuf/tb_protobuf.h"
#include "registry/tb_wire.h"

static void *pb_compile(const char *text, const json_t *references, char *errstr,
                        size_t errstr_size)
{
    return tb_protobuf_schema_create(text, references, errstr, errstr_size);
}

static void pb_destroy(void *compiled)
{
    tb_protobuf_schema_destroy(compiled);
}

static const char *pb_record_name(const void *compiled)
{
    return tb_protobuf_schema_name(compiled);
}

static bool pb_takes_text(const void *compiled)
{
    (void)compiled; /* a message is always a JSON object */
    return false;
}

static int pb_decode(const void *compiled, const uint8_t *payload, size_t len,
                     tb_buf_t *out, char *errstr, size_t errstr_size)
{
    return tb_protobuf_decode(compiled, payload, len, out, errstr, errstr_size);
}

static int pb_encode(const void *compiled, const json_t *value, tb_buf_t *out,
                     char *errstr, size_t errstr_size)
{
    return tb_protobuf_encode(compiled, value, out, errstr, errstr_size);
}

static char *pb_infer(const json_t *value, char *errstr, size_t errstr_size)
{
    (void)value;
    snprintf(errstr, errstr_size,
             "ProtobufConverter cannot infer a .proto schema from JSON data: register "
             "the message's schema under the subject and set "
             "use.latest.version=true (and auto.register.schemas=false)");
    return NULL;
}

static tb_schema_t *pb_to_connect(const void *compiled, const uint8_t *payload,
                                  size_t len, char *errstr, size_t errstr_size)
{
    return tb_protobuf_to_connect(compiled, payload, len, errstr, errstr_size);
}

/* The message indexes pick the message. */
static size_t pb_selector(const uint8_t *payload, size_t len)
{
    int32_t indexes[TB_WIRE_MAX_INDEXES];
    size_t count;
    size_t used = 0;
    char errstr[128];
    return tb_wire_read_indexes(payload, len, indexes, &count, &used, errstr,
                                sizeof(errstr)) == 0
               ? used
               : 0;
}

static int pb_to_value(const void *compiled, const tb_schema_t *connect,
                       const uint8_t *payload, size_t len, tb_value_t **value,
                       char *errstr, size_t errstr_size)
{
    return tb_protobuf_to_value(compiled, connect, payload, len, value, errstr,
                                errstr_size);
}

static int pb_from_value(const void *compiled, const tb_schema_t *schema,
                         const tb_value_t *value, tb_buf_t *out, char *errstr,
                         size_t errstr_size)
{
    return tb_protobuf_from_value(compiled, schema, value, out, errstr, errstr_size);
}

static const tb_registry_format_t protobuf_format = {
    .type = TB_SCHEMA_PROTOBUF,
    .name = "Protobuf",
    .compile = pb_compile,
    .destroy = pb_destroy,
    .record_name = pb_record_name,
    .takes_text = pb_takes_text,
    .decode = pb_decode,
    .encode = pb_encode,
    .infer = pb_infer,
    .to_connect = pb_to_connect,
    .from_connect = tb_protobuf_from_connect,
    .to_value = pb_to_value,
    .from_value = pb_from_value,
    .selector = pb_selector,
};

static void *pb_create(const json_t *values, bool for_key, char *errstr,
                       size_t errstr_size)
{
    return tb_registry_converter_create(&protobuf_format, values, for_key, errstr,
                                        errstr_size);
}

/* The registry converters' settings table is shared; registry_converter.c
 * (not this file's owner) exports it under the Avro and JSON Schema class
 * names only, so ProtobufConverter uses the Avro one: the same keys. */
const tb_converter_class_t tb_protobuf_converter = {
    .name = "io.confluent.connect.protobuf.ProtobufConverter",
    .alias = "ProtobufConverter",
    .config = &tb_avro_converter_config,
    .create = pb_create,
    .destroy = tb_registry_converter_destroy,
    .to_plugin = tb_registry_converter_to_plugin,
    .from_plugin_topic = tb_registry_converter_from_plugin,
    .to_typed = tb_registry_converter_to_typed,
    .from_typed = tb_registry_converter_from_typed,
};
