/*
 * tb_protobuf_module.h - what the Protobuf module exports to the binary.
 *
 * libprotobuf costs a process about 2.4 MB of resident memory as soon as it
 * is loaded (its relocations and static initializers), whether a connector
 * uses Protobuf or not. So the C++ shim (protobuf_shim.cc) and libprotobuf
 * live in a module of their own, TB_PROTOBUF_MODULE_FILE, which protobuf.c
 * loads with dlopen() the first time a Protobuf schema is compiled; a worker
 * that never meets one never maps libprotobuf. The module is looked for
 * beside the running program (a build directory), then in lib/tributary
 * beside its bin/ (an installed one).
 *
 * The module exports one symbol, TB_PROTOBUF_MODULE_SYMBOL: a table of the
 * functions tb_protobuf.h declares, with the same contracts.
 */
#ifndef TB_PROTOBUF_MODULE_H
#define TB_PROTOBUF_MODULE_H

#include "registry/protobuf/tb_protobuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_PROTOBUF_MODULE_FILE "tributary-protobuf.so"
#define TB_PROTOBUF_MODULE_SYMBOL "tb_protobuf_module"

typedef struct tb_protobuf_module {
    tb_protobuf_schema_t *(*schema_create)(const char *text, const json_t *references,
                                           char *errstr, size_t errstr_size);
    void (*schema_destroy)(tb_protobuf_schema_t *schema);
    const char *(*schema_name)(const tb_protobuf_schema_t *schema);
    int (*decode)(const tb_protobuf_schema_t *schema, const uint8_t *payload, size_t len,
                  tb_buf_t *out, char *errstr, size_t errstr_size);
    int (*encode)(const tb_protobuf_schema_t *schema, const json_t *value, tb_buf_t *out,
                  char *errstr, size_t errstr_size);
    json_t *(*describe)(const tb_protobuf_schema_t *schema, const int32_t *indexes,
                        size_t count, char *errstr, size_t errstr_size);
} tb_protobuf_module_t;

#ifdef __cplusplus
}
#endif

#endif
