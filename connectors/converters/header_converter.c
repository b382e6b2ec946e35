/*
 * header_converter.c - the header converter classes tributary accepts:
 * Connect's default SimpleHeaderConverter, StringConverter and
 * ByteArrayConverter (what MirrorMaker 2's configs name).
 *
 * tributary's plugins see a header value as its bytes, read as text: the
 * HTTP sink writes each one as a JSON string, and sources write their
 * headers (the chain's, message.id.header) as the bytes it made of them:
 * the bytes of a string for InsertHeader and message ids. For those, both
 * classes convert alike (SimpleHeaderConverter writes a string as its UTF-8
 * bytes, as StringConverter does); SimpleHeaderConverter's inferred types
 * (numbers, booleans, lists, maps) reach no plugin, since none takes typed
 * headers. ByteArrayConverter passes bytes as they are, as tributary does
 * under every class. So the choice is validated, not acted on.
 */
#include <stdio.h>
#include <string.h>

#include "connectors/converters/tb_converter.h"

static const char *const header_classes[] = {
    "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    "org.apache.kafka.connect.storage.StringConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter",
    NULL,
};

const char *tb_header_converter_canonical_name(const char *name)
{
    for (size_t i = 0; header_classes[i] != NULL; i++) {
        if (strcmp(name, header_classes[i]) == 0 ||
            strcmp(name, strrchr(header_classes[i], '.') + 1) == 0) {
            return header_classes[i];
        }
    }
    return NULL;
}

int tb_header_converter_check(const json_t *value, char *reason, size_t size)
{
    const char *name = json_string_value(value);
    if (name[0] != '\0' && tb_header_converter_canonical_name(name) == NULL) {
        snprintf(reason, size, "Class %s could not be found.", name);
        return -1;
    }
    return 0;
}
