#include "connectors/runtime/source/tb_upsert.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_KIND "__row_kind"

static tb_upsert_result_t invalid(char *reason, size_t size, const char *text)
{
    snprintf(reason, size, "%s", text);
    return TB_UPSERT_INVALID;
}

tb_upsert_result_t tb_upsert_apply(const json_t *primary_key, tb_source_record_t *record,
                                   char *reason, size_t reason_size)
{
    json_error_t error;
    json_t *row = record->value != NULL
                      ? json_loadb(record->value, record->value_len, 0, &error)
                      : NULL;
    tb_upsert_result_t result = TB_UPSERT_WRITE;
    json_t *key = json_object();

    if (!json_is_object(row)) {
        result = invalid(reason, reason_size,
                         "write.mode=upsert needs a JSON object value, and this record's "
                         "value is not one");
        goto done;
    }
    size_t i;
    json_t *field;
    json_array_foreach ((json_t *)primary_key, i, field) {
        json_t *value = json_object_get(row, json_string_value(field));
        if (value == NULL) {
            snprintf(reason, reason_size,
                     "write.mode=upsert: the value has no primary key field '%s'",
                     json_string_value(field));
            result = TB_UPSERT_INVALID;
            goto done;
        }
        json_object_set(key, json_string_value(field), value);
    }
    const char *kind = json_string_value(json_object_get(row, ROW_KIND));
    if (kind != NULL && strcmp(kind, "update_before") == 0) {
        result = TB_UPSERT_SKIP;
        goto done;
    }
    if (kind != NULL && strcmp(kind, "delete") != 0 && strcmp(kind, "insert") != 0 &&
        strcmp(kind, "update_after") != 0) {
        snprintf(reason, reason_size,
                 "write.mode=upsert: unknown __row_kind '%s' (insert, update_before, "
                 "update_after or delete)",
                 kind);
        result = TB_UPSERT_INVALID;
        goto done;
    }
    free(record->key);
    record->key = json_dumps(key, JSON_COMPACT);
    record->key_len = strlen(record->key);
    record->key_kind = TB_DATA_JSON;
    free(record->value);
    record->value = NULL;
    record->value_len = 0;
    if (kind == NULL || strcmp(kind, "delete") != 0) {
        json_object_del(row, ROW_KIND);
        record->value = json_dumps(row, JSON_COMPACT);
        record->value_len = strlen(record->value);
        record->value_kind = TB_DATA_JSON;
    }

done:
    json_decref(key);
    json_decref(row);
    return result;
}

void tb_message_id(const char *connector, const json_t *source_partition,
                   const json_t *source_offset, char id[65])
{
    unsigned char digest[32];
    unsigned int length = 0;
    char *partition =
        json_dumps(source_partition, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    char *offset =
        json_dumps(source_offset, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    EVP_DigestUpdate(ctx, connector, strlen(connector) + 1);
    EVP_DigestUpdate(ctx, partition ? partition : "null",
                     strlen(partition ? partition : "null") + 1);
    EVP_DigestUpdate(ctx, offset ? offset : "null", strlen(offset ? offset : "null"));
    EVP_DigestFinal_ex(ctx, digest, &length);
    EVP_MD_CTX_free(ctx);
    for (unsigned int i = 0; i < length; i++) {
        snprintf(id + 2 * i, 3, "%02x", digest[i]);
    }
    free(partition);
    free(offset);
}
