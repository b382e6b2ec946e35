/* Connect data through the registry formats, as AvroConverter's and
 * JsonSchemaConverter's to_typed and from_typed take it: Connect schema ->
 * Avro schema (checked by libavro) or JSON Schema -> Connect schema, and
 * values through Avro binary or JSON text, Decimals exact. */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_avro_data.h"
#include "connectors/converters/tb_json_data.h"
#include "connectors/converters/tb_json_schema_data.h"
#include "connectors/converters/tb_protobuf_data.h"

/* Connect's JSON form of a struct with every type Avro carries. */
static const char order_schema[] =
    "{\"type\":\"struct\",\"name\":\"com.example.Order\",\"version\":3,"
    "\"doc\":\"an order\",\"optional\":false,\"fields\":["
    "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"
    "{\"type\":\"int8\",\"optional\":false,\"field\":\"small\"},"
    "{\"type\":\"int16\",\"optional\":false,\"field\":\"medium\"},"
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"big\"},"
    "{\"type\":\"string\",\"optional\":true,\"field\":\"note\"},"
    "{\"type\":\"bytes\",\"optional\":false,"
    "\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,"
    "\"parameters\":{\"scale\":\"9\"},\"field\":\"price\"},"
    "{\"type\":\"int32\",\"optional\":false,"
    "\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1,\"field\":\"day\"},"
    "{\"type\":\"int32\",\"optional\":false,"
    "\"name\":\"org.apache.kafka.connect.data.Time\",\"version\":1,"
    "\"field\":\"at_time\"},{\"type\":\"int64\",\"optional\":false,"
    "\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1,"
    "\"field\":\"at\"},"
    "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":false},"
    "\"optional\":false,\"field\":\"tags\"},"
    "{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":false},"
    "\"values\":{\"type\":\"double\",\"optional\":true},\"optional\":false,"
    "\"field\":\"scores\"},{\"type\":\"float\",\"optional\":false,\"field\":\"ratio\"},"
    "{\"type\":\"boolean\",\"optional\":false,\"default\":true,\"field\":\"active\"},"
    "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":false,"
    "\"field\":\"x\"}],\"optional\":true,\"field\":\"inner\"},"
    "{\"type\":\"bytes\",\"optional\":false,\"field\":\"blob\"}]}";

#define ORDER_PAYLOAD                                                                    \
    "{\"id\":42,\"small\":-8,\"medium\":300,\"big\":9007199254740993,\"note\":null,"     \
    "\"price\":12345678901234567890.123456789,\"day\":19675,\"at_time\":3600000,"        \
    "\"at\":1700000000000,\"tags\":[\"a\",\"b\"],\"scores\":{\"x\":1.5,\"y\":null},"     \
    "\"ratio\":0.25,\"active\":false,\"inner\":{\"x\":7},\"blob\":\"AQI=\"}"

static tb_schema_t *connect_schema(const char *text)
{
    char errstr[256] = "";
    json_t *json = json_loads(text, 0, NULL);
    assert_non_null(json);
    tb_schema_t *s = tb_json_schema_parse(json, errstr, sizeof(errstr));
    json_decref(json);
    if (s == NULL) {
        fail_msg("%s", errstr);
    }
    return s;
}

static tb_avro_schema_t *avro_of(const tb_schema_t *schema, char **text)
{
    char errstr[256] = "";
    *text = tb_avro_from_connect(schema, errstr, sizeof(errstr));
    if (*text == NULL) {
        fail_msg("%s", errstr);
    }
    tb_avro_schema_t *avro = tb_avro_schema_create(*text, NULL, errstr, sizeof(errstr));
    if (avro == NULL) {
        fail_msg("%s: %s", *text, errstr);
    }
    return avro;
}

static void test_schema_round_trip_and_connect_properties(void **state)
{
    (void)state;
    char errstr[256] = "";
    char *text = NULL;
    tb_schema_t *schema = connect_schema(order_schema);
    tb_avro_schema_t *avro = avro_of(schema, &text);
    assert_non_null(strstr(text, "\"name\":\"Order\",\"namespace\":\"com.example\""));
    assert_non_null(strstr(text, "\"connect.name\":\"com.example.Order\""));
    assert_non_null(strstr(text, "\"connect.version\":3"));
    assert_non_null(strstr(text, "{\"type\":\"int\",\"connect.type\":\"int8\"}"));
    assert_non_null(strstr(text, "\"type\":[\"null\",\"string\"],\"default\":null"));
    assert_non_null(
        strstr(text, "\"scale\":9,\"precision\":64,\"logicalType\":\"decimal\""));
    assert_non_null(strstr(text, "\"logicalType\":\"timestamp-millis\""));
    assert_non_null(strstr(text, "\"logicalType\":\"time-millis\""));
    assert_non_null(strstr(text, "\"name\":\"ConnectDefault\",\"namespace\":"
                                 "\"io.confluent.connect.avro\""));
    assert_non_null(strstr(text, "\"type\":\"boolean\",\"default\":true"));
    tb_schema_t *back = tb_avro_to_connect(avro, errstr, sizeof(errstr));
    if (back == NULL) {
        fail_msg("%s", errstr);
    }
    /* the unnamed struct comes back under the record name it was given */
    const tb_field_t *inner = tb_schema_field(back, "inner");
    assert_string_equal(tb_schema_name(inner->schema),
                        "io.confluent.connect.avro.ConnectDefault");
    tb_schema_set_name(inner->schema, NULL);
    assert_true(tb_schema_equal(schema, back));
    tb_schema_decref(back);
    tb_avro_schema_destroy(avro);
    tb_schema_decref(schema);
    free(text);
}

static void test_values_through_avro_binary_keep_decimals_exact(void **state)
{
    (void)state;
    char errstr[256] = "";
    char *text = NULL;
    tb_schema_t *schema = connect_schema(order_schema);
    tb_avro_schema_t *avro = avro_of(schema, &text);
    json_t *payload = json_loads(ORDER_PAYLOAD, 0, NULL);
    tb_value_t *value = NULL;
    assert_int_equal(tb_json_value_parse_text(schema, payload, ORDER_PAYLOAD,
                                              strlen(ORDER_PAYLOAD), &value, errstr,
                                              sizeof(errstr)),
                     0);
    tb_buf_t bin = {0};
    tb_value_t *back = NULL;
    if (tb_avro_from_value(avro, schema, value, &bin, errstr, sizeof(errstr)) != 0 ||
        tb_avro_to_value(avro, schema, (const uint8_t *)bin.data, bin.len, &back, errstr,
                         sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    assert_true(tb_value_equal(value, back));
    /* the Decimal's digits in Avro's own JSON form too */
    tb_buf_t decoded = {0};
    assert_int_equal(tb_avro_decode(avro, (const uint8_t *)bin.data, bin.len, &decoded,
                                    errstr, sizeof(errstr)),
                     0);
    tb_buf_putc(&decoded, '\0');
    assert_non_null(strstr(decoded.data, "\"price\":12345678901234567890.123456789,"));
    tb_buf_release(&decoded);
    tb_value_free(back);
    tb_buf_release(&bin);
    tb_value_free(value);
    json_decref(payload);
    tb_avro_schema_destroy(avro);
    tb_schema_decref(schema);
    free(text);
}

static void test_what_has_no_other_form_is_named(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_schema_t *schema = connect_schema(
        "{\"type\":\"struct\",\"optional\":false,\"fields\":[{\"type\":\"struct\","
        "\"optional\":false,\"field\":\"outer\",\"fields\":[{\"type\":\"map\",\"keys\":"
        "{\"type\":\"int32\",\"optional\":false},\"values\":{\"type\":\"string\","
        "\"optional\":false},\"optional\":false,\"field\":\"byid\"}]}]}");
    assert_null(tb_avro_from_connect(schema, errstr, sizeof(errstr)));
    assert_string_equal(errstr, "field outer.byid: a MAP with INT32 keys has no Avro "
                                "form here (only STRING keys)");
    tb_schema_decref(schema);
    tb_avro_schema_t *avro = tb_avro_schema_create(
        "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"u\",\"type\":"
        "[\"null\",\"int\",\"string\"]}]}",
        NULL, errstr, sizeof(errstr));
    assert_non_null(avro);
    assert_null(tb_avro_to_connect(avro, errstr, sizeof(errstr)));
    assert_string_equal(errstr, "field u: an Avro union of 3 types has no Connect form "
                                "here (only a union of null and one type does)");
    tb_avro_schema_destroy(avro);
    /* Avro's own types map as Confluent maps them */
    avro = tb_avro_schema_create(
        "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"n\",\"fields\":[{\"name\":"
        "\"k\",\"type\":{\"type\":\"enum\",\"name\":\"K\",\"symbols\":[\"A\"]}},"
        "{\"name\":\"f\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":2}},"
        "{\"name\":\"us\",\"type\":{\"type\":\"long\",\"logicalType\":"
        "\"timestamp-micros\"}}]}",
        NULL, errstr, sizeof(errstr));
    schema = tb_avro_to_connect(avro, errstr, sizeof(errstr));
    assert_non_null(schema);
    assert_string_equal(tb_schema_name(schema), "n.R");
    const tb_field_t *k = tb_schema_field(schema, "k");
    assert_int_equal(tb_schema_type(k->schema), TB_TYPE_STRING);
    assert_string_equal(tb_schema_parameter(k->schema, "io.confluent.connect.avro.Enum"),
                        "n.K");
    const tb_field_t *f = tb_schema_field(schema, "f");
    assert_string_equal(tb_schema_parameter(f->schema, "connect.fixed.size"), "2");
    assert_int_equal(tb_schema_type(tb_schema_field(schema, "us")->schema),
                     TB_TYPE_INT64);
    tb_schema_decref(schema);
    tb_avro_schema_destroy(avro);
}

static tb_json_schema_t *json_schema_of(const tb_schema_t *schema, char **text)
{
    char errstr[256] = "";
    *text = tb_json_schema_from_connect(schema, errstr, sizeof(errstr));
    if (*text == NULL) {
        fail_msg("%s", errstr);
    }
    tb_json_schema_t *js = tb_json_schema_create(*text, NULL, errstr, sizeof(errstr));
    if (js == NULL) {
        fail_msg("%s: %s", *text, errstr);
    }
    return js;
}

static void test_json_schema_round_trip_with_exact_decimals(void **state)
{
    (void)state;
    char errstr[256] = "";
    char *text = NULL;
    tb_schema_t *schema = connect_schema(order_schema);
    tb_json_schema_t *js = json_schema_of(schema, &text);
    assert_non_null(strstr(text, "\"title\":\"com.example.Order\""));
    assert_non_null(strstr(text, "\"small\":{\"type\":\"integer\",\"connect.type\":"
                                 "\"int8\",\"connect.index\":1}"));
    assert_non_null(strstr(text, "\"note\":{\"oneOf\":[{\"type\":\"null\"},{\"type\":"
                                 "\"string\"}],\"connect.index\":4}"));
    assert_non_null(strstr(text, "{\"type\":\"number\",\"connect.type\":\"bytes\","
                                 "\"title\":\"org.apache.kafka.connect.data.Decimal\""));
    tb_schema_t *back = tb_json_schema_to_connect(js, errstr, sizeof(errstr));
    if (back == NULL) {
        fail_msg("%s", errstr);
    }
    assert_true(tb_schema_equal(schema, back));

    /* the value as JSON text: valid under the derived schema, every digit kept */
    json_t *payload = json_loads(ORDER_PAYLOAD, 0, NULL);
    tb_value_t *value = NULL;
    assert_int_equal(tb_json_value_parse_text(schema, payload, ORDER_PAYLOAD,
                                              strlen(ORDER_PAYLOAD), &value, errstr,
                                              sizeof(errstr)),
                     0);
    json_t *json = NULL;
    assert_int_equal(tb_json_value_dump(schema, value, TB_DECIMAL_NUMERIC, &json, errstr,
                                        sizeof(errstr)),
                     0);
    size_t len;
    char *written = tb_json_write(json, &len);
    assert_non_null(strstr(written, "\"price\":12345678901234567890.123456789,"));
    json_t *parsed = json_loads(written, 0, NULL);
    if (tb_json_schema_validate(js, parsed, errstr, sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    tb_value_t *again = NULL;
    assert_int_equal(
        tb_json_value_read(back, written, len, &again, errstr, sizeof(errstr)), 0);
    assert_true(tb_value_equal(value, again));
    tb_value_free(again);
    json_decref(parsed);
    free(written);
    json_decref(json);
    tb_value_free(value);
    json_decref(payload);
    tb_schema_decref(back);
    tb_json_schema_destroy(js);
    tb_schema_decref(schema);
    free(text);
}

static void test_json_schemas_written_by_hand(void **state)
{
    (void)state;
    char errstr[256] = "";
    /* $ref, a nullable type, a property not required, plain integers */
    tb_json_schema_t *js = tb_json_schema_create(
        "{\"type\":\"object\",\"title\":\"Person\",\"properties\":{"
        "\"id\":{\"type\":\"integer\"},\"name\":{\"type\":[\"null\",\"string\"]},"
        "\"home\":{\"$ref\":\"#/definitions/Address\"}},\"required\":[\"id\",\"home\"],"
        "\"definitions\":{\"Address\":{\"type\":\"object\",\"properties\":{"
        "\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}",
        NULL, errstr, sizeof(errstr));
    assert_non_null(js);
    tb_schema_t *s = tb_json_schema_to_connect(js, errstr, sizeof(errstr));
    if (s == NULL) {
        fail_msg("%s", errstr);
    }
    assert_string_equal(tb_schema_name(s), "Person");
    assert_int_equal(tb_schema_type(tb_schema_field(s, "id")->schema), TB_TYPE_INT64);
    assert_true(tb_schema_optional(tb_schema_field(s, "name")->schema));
    const tb_schema_t *home = tb_schema_field(s, "home")->schema;
    assert_false(tb_schema_optional(home));
    assert_int_equal(tb_schema_type(tb_schema_field(home, "city")->schema),
                     TB_TYPE_STRING);
    tb_schema_decref(s);
    tb_json_schema_destroy(js);

    js = tb_json_schema_create("{\"type\":\"object\",\"properties\":{\"any\":{}}}", NULL,
                               errstr, sizeof(errstr));
    assert_null(tb_json_schema_to_connect(js, errstr, sizeof(errstr)));
    assert_string_equal(errstr, "field any: a JSON Schema without one \"type\" has no "
                                "Connect form here");
    tb_json_schema_destroy(js);
}

/* What Protobuf carries of Connect's types (INT8, INT16, Decimal, Date and
 * Time need type files of their own). */
static const char proto_schema[] =
    "{\"type\":\"struct\",\"name\":\"com.example.Order\",\"optional\":false,"
    "\"fields\":["
    "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"big\"},"
    "{\"type\":\"string\",\"optional\":true,\"field\":\"note\"},"
    "{\"type\":\"int64\",\"optional\":true,"
    "\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1,"
    "\"field\":\"at\"},"
    "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":false},"
    "\"optional\":false,\"field\":\"tags\"},"
    "{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":false},"
    "\"values\":{\"type\":\"double\",\"optional\":false},\"optional\":false,"
    "\"field\":\"scores\"},{\"type\":\"float\",\"optional\":false,\"field\":\"ratio\"},"
    "{\"type\":\"boolean\",\"optional\":false,\"field\":\"active\"},"
    "{\"type\":\"struct\",\"name\":\"com.example.Address\","
    "\"fields\":[{\"type\":\"string\",\"optional\":false,\"field\":\"city\"}],"
    "\"optional\":true,\"field\":\"inner\"},"
    "{\"type\":\"bytes\",\"optional\":false,\"field\":\"blob\"},"
    "{\"type\":\"int64\",\"optional\":true,\"field\":\"count\"}]}";

#define PROTO_PAYLOAD                                                                    \
    "{\"id\":42,\"big\":9007199254740993,\"note\":null,\"at\":1700000000123,"            \
    "\"tags\":[\"a\",\"b\"],\"scores\":{\"x\":1.5},\"ratio\":0.25,\"active\":true,"      \
    "\"inner\":{\"city\":\"c\"},\"blob\":\"AQI=\",\"count\":null}"

static void test_protobuf_round_trip(void **state)
{
    (void)state;
    char errstr[256] = "";
    tb_schema_t *schema = connect_schema(proto_schema);
    char *text = tb_protobuf_from_connect(schema, errstr, sizeof(errstr));
    if (text == NULL) {
        fail_msg("%s", errstr);
    }
    assert_non_null(strstr(text, "syntax = \"proto3\";\npackage com.example;\n"
                                 "import \"google/protobuf/timestamp.proto\";\n"
                                 "message Order {\n  int32 id = 1;\n"));
    assert_non_null(strstr(text, "  optional string note = 3;\n"
                                 "  google.protobuf.Timestamp at = 4;\n"
                                 "  repeated string tags = 5;\n"
                                 "  map<string, double> scores = 6;\n"));
    assert_non_null(strstr(text, "  Address inner = 9;\n"));
    assert_non_null(strstr(text, "}\nmessage Address {\n  string city = 1;\n}\n"));
    tb_protobuf_schema_t *pb =
        tb_protobuf_schema_create(text, NULL, errstr, sizeof(errstr));
    if (pb == NULL) {
        fail_msg("%s: %s", text, errstr);
    }
    json_t *payload = json_loads(PROTO_PAYLOAD, 0, NULL);
    tb_value_t *value = NULL;
    assert_int_equal(tb_json_value_parse(schema, payload, &value, errstr, sizeof(errstr)),
                     0);
    tb_buf_t bin = {0};
    if (tb_protobuf_from_value(pb, schema, value, &bin, errstr, sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    /* the payload's message index [0] picks Order */
    tb_schema_t *back = tb_protobuf_to_connect(pb, (const uint8_t *)bin.data, bin.len,
                                               errstr, sizeof(errstr));
    if (back == NULL) {
        fail_msg("%s", errstr);
    }
    assert_true(tb_schema_equal(schema, back));
    tb_value_t *again = NULL;
    if (tb_protobuf_to_value(pb, back, (const uint8_t *)bin.data, bin.len, &again, errstr,
                             sizeof(errstr)) != 0) {
        fail_msg("%s", errstr);
    }
    assert_true(tb_value_equal(value, again));
    tb_value_free(again);
    tb_buf_release(&bin);
    tb_value_free(value);
    json_decref(payload);
    tb_schema_decref(back);

    /* message index [1] picks the file's second message: {city: "c"} */
    static const uint8_t address[] = {0x02, 0x02, 0x0a, 0x01, 'c'};
    back = tb_protobuf_to_connect(pb, address, sizeof(address), errstr, sizeof(errstr));
    assert_non_null(back);
    assert_string_equal(tb_schema_name(back), "com.example.Address");
    assert_int_equal(tb_protobuf_to_value(pb, back, address, sizeof(address), &again,
                                          errstr, sizeof(errstr)),
                     0);
    assert_string_equal(tb_value_text(tb_value_struct_get(again, "city"), NULL), "c");
    tb_value_free(again);
    tb_schema_decref(back);
    static const uint8_t nowhere[] = {0x02, 0x08, 0x00};
    assert_null(
        tb_protobuf_to_connect(pb, nowhere, sizeof(nowhere), errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "message index [4] is not in the schema"));
    tb_protobuf_schema_destroy(pb);
    free(text);

    /* what Protobuf cannot carry is named */
    tb_schema_decref(schema);
    schema = connect_schema(order_schema);
    assert_null(tb_protobuf_from_connect(schema, errstr, sizeof(errstr)));
    assert_string_equal(errstr, "field price: org.apache.kafka.connect.data.Decimal has "
                                "no Protobuf form here");
    tb_schema_decref(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_round_trip_and_connect_properties),
        cmocka_unit_test(test_values_through_avro_binary_keep_decimals_exact),
        cmocka_unit_test(test_what_has_no_other_form_is_named),
        cmocka_unit_test(test_json_schema_round_trip_with_exact_decimals),
        cmocka_unit_test(test_json_schemas_written_by_hand),
        cmocka_unit_test(test_protobuf_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
