/*
 * libFuzzer target: secret references in config values (core/tb_secret.h),
 * ${env:NAME} and ${file:/path:key}. tb_secret_is_reference runs on every
 * input; tb_secret_resolve only on what cannot leave the sandbox: any
 * ${env:...} or plain value, and ${file:...} references inside DIR (no
 * ".."), where the first input creates a properties file, so that nothing
 * else is opened (a fuzzed /dev/zero would never end). Both the file and
 * the variable hold SECRET, which no error message may contain.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/tb_secret.h"

#define DIR "/tmp/tributary-fuzz-secret"
#define SECRET "s3cr3t-Value"

static void check(bool condition)
{
    if (!condition) {
        __builtin_trap();
    }
}

static void sandbox_create(void)
{
    FILE *f;
    check(mkdir(DIR, 0700) == 0 || access(DIR, W_OK) == 0);
    check((f = fopen(DIR "/s.properties", "w")) != NULL);
    fputs("password=" SECRET "\nempty=\nkey:with\\:colon=" SECRET "\n", f);
    check(fclose(f) == 0);
    check(setenv("TB_FUZZ_SECRET", SECRET, 1) == 0);
}

/* May tb_secret_resolve read what value refers to? */
static bool harmless(const char *value)
{
    const char *file = "${file:";
    if (strncmp(value, file, strlen(file)) != 0) {
        return true;
    }
    return strncmp(value + strlen(file), DIR "/", strlen(DIR "/")) == 0 &&
           strstr(value, "..") == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    char errstr[1024] = "";
    char *value = malloc(size + 1);

    if (!ready) {
        sandbox_create();
        ready = true;
    }
    if (value == NULL) {
        return 0;
    }
    memcpy(value, data, size);
    value[size] = '\0';
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
