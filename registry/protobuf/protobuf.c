/*
 * protobuf.c - tb_protobuf.h for the binary: each call goes to the Protobuf
 * module (tb_protobuf_module.h says why it is one), loaded the first time a
 * schema is compiled and kept until the process ends, since its schemas and
 * libprotobuf's own state live as long as the process does.
 *
 * Every function but tb_protobuf_schema_create() takes a schema, which only
 * a loaded module can have made.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "registry/protobuf/tb_protobuf.h"
#include "registry/protobuf/tb_protobuf_module.h"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const tb_protobuf_module_t *module; /* NULL when loading failed */
static char load_error[512];

/* The module beside the running program (a build directory), or in
 * lib/tributary beside its bin/ (an installed one). NULL with reason. */
static void *open_module(char *reason, size_t size)
{
    static const char *const places[] = {"%s/" TB_PROTOBUF_MODULE_FILE,
                                         "%s/../lib/tributary/" TB_PROTOBUF_MODULE_FILE};
    char program[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", program, sizeof(program) - 1);
    if (n < 0) {
        snprintf(reason, size, "the running program's path is unknown");
        return NULL;
    }
    program[n] = '\0';
    const char *dir = dirname(program);
    for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
        snprintf(path, sizeof(path), places[i], dir);
        if (access(path, F_OK) == 0) {
            void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (handle == NULL) {
                snprintf(reason, size, "%s", dlerror());
            }
            return handle;
        }
    }
    snprintf(reason, size, "%s is neither in %s nor in %s/../lib/tributary",
             TB_PROTOBUF_MODULE_FILE, dir, dir);
    return NULL;
}

static void load_module(void)
{
    char reason[400];
    void *handle = open_module(reason, sizeof(reason));
    if (handle != NULL && (module = dlsym(handle, TB_PROTOBUF_MODULE_SYMBOL)) == NULL) {
        snprintf(reason, sizeof(reason), "%s", dlerror());
    }
    if (module == NULL) {
        snprintf(load_error, sizeof(load_error),
                 "Protobuf is not available: its module could not be loaded: %s", reason);
    }
}

tb_protobuf_schema_t *tb_protobuf_schema_create(const char *text,
                                                const json_t *references, char *errstr,
                                                size_t errstr_size)
{
    pthread_once(&load_once, load_module);
    if (module == NULL) {
        snprintf(errstr, errstr_size, "%s", load_error);
        return NULL;
    }
    return module->schema_create(text, references, errstr, errstr_size);
}

void tb_protobuf_schema_destroy(tb_protobuf_schema_t *schema)
{
    if (schema != NULL) {
        module->schema_destroy(schema);
    }
}

const char *tb_protobuf_schema_name(const tb_protobuf_schema_t *schema)
{
    return module->schema_name(schema);
}

int tb_protobuf_decode(const tb_protobuf_schema_t *schema, const uint8_t *payload,
                       size_t len, tb_buf_t *out, char *errstr, size_t errstr_size)
{
    return module->decode(schema, payload, len, out, errstr, errstr_size);
}

int tb_protobuf_encode(const tb_protobuf_schema_t *schema, const json_t *value,
                       tb_buf_t *out, char *errstr, size_t errstr_size)
{
    return module->encode(schema, value, out, errstr, errstr_size);
}

json_t *tb_protobuf_describe(const tb_protobuf_schema_t *schema, const int32_t *indexes,
                             size_t count, char *errstr, size_t errstr_size)
{
    return module->describe(schema, indexes, count, errstr, errstr_size);
}
