/*
 * converters.c - the converter classes tributary knows, and the calls every
 * converter goes through: names, settings, nulls and pass-through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/converters/tb_converter_class.h"

struct tb_converter {
    const tb_converter_class_t *cls;
    void *state; /* the class's, from its create() */
};

static const tb_converter_class_t *const classes[] = {
    &tb_string_converter, &tb_byte_array_converter,  &tb_json_converter,
    &tb_avro_converter,   &tb_json_schema_converter, &tb_protobuf_converter,
};

static const tb_converter_class_t *find_class(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        if (strcmp(name, classes[i]->name) == 0 || strcmp(name, classes[i]->alias) == 0) {
            return classes[i];
        }
    }
    return NULL;
}

const char *tb_converter_canonical_name(const char *name)
{
    const tb_converter_class_t *cls = find_class(name);
    return cls != NULL ? cls->name : NULL;
}

const tb_config_table_t *tb_converter_config(const char *name)
{
    const tb_converter_class_t *cls = find_class(name);
    return cls != NULL ? cls->config : NULL;
}

bool tb_converter_secret_key(const char *config_key)
{
    static const char *const prefixes[] = {"key.converter.", "value.converter.",
                                           "header.converter.", NULL};
    const char *setting = NULL;
    for (size_t p = 0; prefixes[p] != NULL && setting == NULL; p++) {
        if (strncmp(config_key, prefixes[p], strlen(prefixes[p])) == 0) {
            setting = config_key + strlen(prefixes[p]);
        }
    }
    for (size_t i = 0; setting != NULL && i < sizeof(classes) / sizeof(classes[0]); i++) {
        const tb_config_def_t *def = classes[i]->config != NULL
                                         ? tb_config_find(&classes[i]->config, 1, setting)
                                         : NULL;
        if (def != NULL && def->type == TB_CONFIG_PASSWORD) {
            return true;
        }
    }
    return false;
}

/* Writes the first message of a tb_config_parse() errors object, in the
 * order of the table's keys. */
static void first_error(const tb_config_table_t *table, const json_t *errors,
                        char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < table->count; i++) {
        const json_t *list = json_object_get(errors, table->defs[i].name);
        if (json_array_size(list) > 0) {
            snprintf(errstr, errstr_size, "%s",
                     json_string_value(json_array_get(list, 0)));
            return;
        }
    }
}

tb_converter_t *tb_converter_create(const char *name, const json_t *settings,
                                    bool for_key, char *errstr, size_t errstr_size)
{
    const tb_converter_class_t *cls = find_class(name);
    tb_converter_t *c = NULL;
    json_t *errors = json_object();
    json_t *values = NULL;

    if (cls == NULL) {
        snprintf(errstr, errstr_size, "Class %s could not be found.",
                 name != NULL ? name : "null");
        goto fail;
    }
    values = tb_config_parse(&cls->config, 1, settings, errors);
    if (tb_config_error_count(errors) > 0) {
        first_error(cls->config, errors, errstr, errstr_size);
        goto fail;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    c->cls = cls;
    if (cls->create != NULL) {
        c->state = cls->create(values, for_key, errstr, errstr_size);
        if (c->state == NULL) {
            goto fail;
        }
    }
    json_decref(values);
    json_decref(errors);
    return c;

fail:
    tb_converter_destroy(c);
    json_decref(values);
    json_decref(errors);
    return NULL;
}

void tb_converter_destroy(tb_converter_t *c)
{
    if (c == NULL) {
        return;
    }
    if (c->state != NULL) {
        c->cls->destroy(c->state);
    }
    free(c);
}

const char *tb_converter_class_name(const tb_converter_t *c)
{
    return c->cls->name;
}

bool tb_converter_passthrough(const tb_converter_t *c)
{
    return c->cls->to_plugin == NULL;
}

bool tb_converter_json_schemaless(const tb_converter_t *c)
{
    return c->cls->json_schemaless != NULL && c->cls->json_schemaless(c->state);
}

int tb_converter_to_plugin(tb_converter_t *c, const void *data, size_t len,
                           const void **out, size_t *out_len, bool *owned, char *errstr,
                           size_t errstr_size)
{
    *out = NULL;
    *out_len = 0;
    *owned = false;
    if (data == NULL) {
        return 0;
    }
    if (c->cls->to_plugin == NULL) {
        *out = data;
        *out_len = len;
        return 0;
    }
    return c->cls->to_plugin(c->state, data, len, out, out_len, owned, errstr,
                             errstr_size);
}

int tb_converter_from_plugin(tb_converter_t *c, tb_data_kind_t kind, const void *data,
                             size_t len, void **out, size_t *out_len, char *errstr,
                             size_t errstr_size)
{
    return tb_converter_from_plugin_topic(c, NULL, kind, data, len, out, out_len, errstr,
                                          errstr_size);
}

int tb_converter_from_plugin_topic(tb_converter_t *c, const char *topic,
                                   tb_data_kind_t kind, const void *data, size_t len,
                                   void **out, size_t *out_len, char *errstr,
                                   size_t errstr_size)
{
    *out = NULL;
    *out_len = 0;
    if (data == NULL) {
        return 0;
    }
    if (c->cls->from_plugin_topic != NULL) {
        return c->cls->from_plugin_topic(c->state, topic, kind, data, len, out, out_len,
                                         errstr, errstr_size);
    }
    if (c->cls->from_plugin != NULL) {
        return c->cls->from_plugin(c->state, kind, data, len, out, out_len, errstr,
                                   errstr_size);
    }
    *out = malloc(len > 0 ? len : 1);
    if (*out == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    memcpy(*out, data, len);
    *out_len = len;
    return 0;
}

bool tb_converter_has_typed(const tb_converter_t *c)
{
    return c->cls->to_typed != NULL && c->cls->from_typed != NULL;
}

static int no_typed_form(const tb_converter_t *c, char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size,
             "%s has no Connect data form, which the transforms of this connector "
             "need",
             c->cls->name);
    return -1;
}

int tb_converter_to_typed(tb_converter_t *c, const void *data, size_t len,
                          tb_schema_t **schema, tb_value_t **value, char *errstr,
                          size_t errstr_size)
{
    *schema = NULL;
    *value = NULL;
    if (!tb_converter_has_typed(c)) {
        return no_typed_form(c, errstr, errstr_size);
    }
    if (data == NULL) {
        return 0;
    }
    return c->cls->to_typed(c->state, data, len, schema, value, errstr, errstr_size);
}

int tb_converter_from_typed(tb_converter_t *c, const char *topic,
                            const tb_schema_t *schema, const tb_value_t *value,
                            void **out, size_t *out_len, char *errstr, size_t errstr_size)
{
    *out = NULL;
    *out_len = 0;
    if (!tb_converter_has_typed(c)) {
        return no_typed_form(c, errstr, errstr_size);
    }
    return c->cls->from_typed(c->state, topic, schema, value, out, out_len, errstr,
                              errstr_size);
}
