/*
 * libFuzzer target: secret references in config values (core/tb_secret.h),
 * ${env:NAME} and ${file:/path:key}. tb_secret_is_reference runs on every
 * input; tb_secret_resolve only on what cannot leave the sandbox: any
 * ${env:...} or plain value, and ${file:...} references inside this
 * process's own sandbox directory (no ".."), where the first input creates
 * a properties file, so that nothing else is opened (a fuzzed /dev/zero
 * would never end). Inputs name the sandbox as "${file:@/...": the target
 * puts the directory's path in place of the @. Both the file and the
 * variable hold SECRET, which no error message may contain.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/tb_secret.h"

#define SANDBOX_MARK "${file:@/"
#define SECRET "s3cr3t-Value"

static char sandbox[] = "/tmp/tb-fuzz-secret-XXXXXX"; /* made by mkdtemp */

static void check(bool condition)
{
    if (!condition) {
        __builtin_trap();
    }
}

static void sandbox_remove(void)
{
    char path[64];
    snprintf(path, sizeof(path), "%s/s.properties", sandbox);
    unlink(path);
    rmdir(sandbox);
}

static void sandbox_create(void)
{
    char path[64];
    FILE *f;
    check(mkdtemp(sandbox) != NULL);
    atexit(sandbox_remove);
    snprintf(path, sizeof(path), "%s/s.properties", sandbox);
    check((f = fopen(path, "w")) != NULL);
    fputs("password=" SECRET "\nempty=\nkey:with\\:colon=" SECRET "\n", f);
    check(fclose(f) == 0);
    check(setenv("TB_FUZZ_SECRET", SECRET, 1) == 0);
}

/* The input as a string, a leading "${file:@/" pointed at the sandbox.
 * malloc'd; NULL on no memory. */
static char *value_of(const uint8_t *data, size_t size)
{
    size_t mark = strlen(SANDBOX_MARK) - 2; /* "${file:" */
    bool marked =
        size >= strlen(SANDBOX_MARK) && memcmp(data, SANDBOX_MARK, mark + 1) == 0;
    size_t grow = marked ? strlen(sandbox) - 1 : 0;
    char *value = malloc(size + grow + 1);
    if (value == NULL) {
        return NULL;
    }
    if (marked) {
        memcpy(value, SANDBOX_MARK, mark);
        memcpy(value + mark, sandbox, strlen(sandbox));
        memcpy(value + mark + strlen(sandbox), data + mark + 1, size - mark - 1);
    } else {
        memcpy(value, data, size);
    }
    value[size + grow] = '\0';
    return value;
}

/* May tb_secret_resolve read what value refers to? */
static bool harmless(const char *value)
{
    const char *file = "${file:";
    if (strncmp(value, file, strlen(file)) != 0) {
        return true;
    }
    const char *path = value + strlen(file);
    return strncmp(path, sandbox, strlen(sandbox)) == 0 && path[strlen(sandbox)] == '/' &&
           strstr(value, "..") == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    char errstr[1024] = "";

    if (!ready) {
        sandbox_create();
        ready = true;
    }
    char *value = value_of(data, size);
    if (value == NULL) {
        return 0;
    }
    bool reference = tb_secret_is_reference(value);
    if (harmless(value)) {
        char *resolved = tb_secret_resolve(value, errstr, sizeof(errstr));
        /* anything but a reference stands for itself */
        check(reference || (resolved != NULL && strcmp(resolved, value) == 0));
        /* an error says which reference failed, never a secret */
        check(resolved != NULL || errstr[0] != '\0');
        check(resolved != NULL || strstr(value, SECRET) != NULL ||
              strstr(errstr, SECRET) == NULL);
        free(resolved);
    }
    free(value);
    return 0;
}
