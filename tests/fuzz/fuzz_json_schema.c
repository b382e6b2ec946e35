/*
 * libFuzzer target: the JSON Schema format: the payload after a wire frame
 * (or the whole input, so that plain JSON reaches the validator) as a value
 * validated against a schema using most keywords.
 */
#include <stdint.h>
#include <stdlib.h>

#include "registry/json_schema/tb_json_schema.h"
#include "registry/tb_wire.h"

#define SCHEMA                                                                           \
    "{\"type\":\"object\",\"required\":[\"a\"],\"additionalProperties\":false,"          \
    "\"definitions\":{\"n\":{\"type\":\"number\",\"minimum\":0,\"multipleOf\":0.5}},"    \
    "\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\","               \
    "\"maxLength\":8},\"b\":{\"$ref\":\"#/definitions/n\"},\"c\":{\"type\":\"array\","   \
    "\"items\":{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"null\"}]},"                \
    "\"uniqueItems\":true,\"maxItems\":4},\"d\":{\"oneOf\":[{\"const\":1},{\"enum\":"    \
    "[2,3]}]},\"e\":{\"if\":{\"type\":\"string\"},\"then\":{\"minLength\":2},"           \
    "\"else\":{\"not\":{\"type\":\"null\"}}}},\"patternProperties\":{\"^x\":true}}"

static tb_json_schema_t *schema;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char errstr[256];
    const uint8_t *payload;
    size_t payload_len;
    int32_t id;

    if (schema == NULL) {
        schema = tb_json_schema_create(SCHEMA, NULL, errstr, sizeof(errstr));
        if (schema == NULL) {
            abort();
        }
    }
    if (tb_wire_parse(data, size, &id, &payload, &payload_len, errstr, sizeof(errstr)) !=
        0) {
        payload = data;
        payload_len = size;
    }
    json_t *value = json_loadb((const char *)payload, payload_len, JSON_DECODE_ANY, NULL);
    if (value != NULL) {
        (void)tb_json_schema_validate(schema, value, errstr, sizeof(errstr));
        json_decref(value);
    }
    return 0;
}
