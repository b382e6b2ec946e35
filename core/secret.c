#include "core/tb_secret.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <jansson.h>

#include "core/tb_props.h"
#include "core/tb_secret_seal.h"

#define ENV_PREFIX "${env:"
#define FILE_PREFIX "${file:"
#define SEALED_PREFIX "${sealed:"

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The text between a prefix and the closing brace, or NULL. malloc'd. */
static char *inner(const char *value, const char *prefix)
{
    size_t n = strlen(value);
    size_t p = strlen(prefix);
    if (!has_prefix(value, prefix) || n <= p + 1 || value[n - 1] != '}') {
        return NULL;
    }
    return strndup(value + p, n - p - 1);
}

bool tb_secret_is_reference(const char *value)
{
    char *env = value != NULL ? inner(value, ENV_PREFIX) : NULL;
    char *file = value != NULL ? inner(value, FILE_PREFIX) : NULL;
    bool reference = (env != NULL && env[0] != '\0') ||
                     (file != NULL && strrchr(file, ':') != NULL && file[0] == '/');
    free(env);
    free(file);
    return reference || tb_secret_is_sealed(value);
}

static char *from_env(const char *name, char *errstr, size_t errstr_size)
{
    const char *value = getenv(name);
    if (value == NULL) {
        snprintf(errstr, errstr_size, "secret reference ${env:%s}: no such variable",
                 name);
        return NULL;
    }
    return strdup(value);
}

static char *from_file(char *spec, char *errstr, size_t errstr_size)
{
    char *colon = strrchr(spec, ':');
    char reason[512];
    *colon = '\0';
    const char *key = colon + 1;
    json_t *props =
        tb_props_load_regular(spec, TB_SECRET_FILE_MAX, reason, sizeof(reason));
    const char *value = json_string_value(json_object_get(props, key));
    char *secret = value != NULL ? strdup(value) : NULL;
    tb_secret_wipe_json(props); /* every key's value, not only this one */
    if (props == NULL) {
        snprintf(errstr, errstr_size, "secret reference ${file:%s:%s}: %s", spec, key,
                 reason);
    } else if (secret == NULL) {
        snprintf(errstr, errstr_size, "secret reference ${file:%s:%s}: no key %s in %s",
                 spec, key, key, spec);
    }
    json_decref(props);
    return secret;
}

char *tb_secret_resolve(const char *value, char *errstr, size_t errstr_size)
{
    char *spec = NULL;
    char *secret;
    if (!tb_secret_is_reference(value)) {
        return strdup(value);
    }
    if (tb_secret_is_sealed(value)) {
        return tb_secret_seal_open(value, errstr, errstr_size);
    }
    if ((spec = inner(value, ENV_PREFIX)) != NULL) {
        secret = from_env(spec, errstr, errstr_size);
    } else {
        spec = inner(value, FILE_PREFIX);
        secret = from_file(spec, errstr, errstr_size);
    }
    free(spec);
    return secret;
}

const char *tb_secret_json_error_text(json_error_t *error)
{
    char *near = strstr(error->text, " near '");
    if (near != NULL) {
        *near = '\0';
    }
    return error->text;
}

void tb_secret_free(char *secret)
{
    if (secret != NULL) {
        explicit_bzero(secret, strlen(secret));
    }
    free(secret);
}

void tb_secret_wipe_json(json_t *value)
{
    const char *key;
    json_t *member;
    if (value == NULL || value->refcount != 1) {
        return;
    }
    if (json_is_string(value)) {
        explicit_bzero((char *)json_string_value(value), json_string_length(value));
    }
    json_object_foreach (value, key, member) {
        tb_secret_wipe_json(member);
    }
}

/* ---- credential names and header lists ---- */

bool tb_secret_name_is_credential(const char *name, size_t len)
{
    static const char *const words[] = {
        "auth", "token", "secret", "key", "password", "cookie", "credential", NULL,
    };
    for (size_t i = 0; words[i] != NULL; i++) {
        size_t w = strlen(words[i]);
        for (size_t at = 0; at + w <= len; at++) {
            if (strncasecmp(name + at, words[i], w) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* Appends n bytes of s to the malloc'd *out of length *len; false when out
 * of memory (*out is then freed and NULL). */
static bool append(char **out, size_t *len, const char *s, size_t n)
{
    char *grown = realloc(*out, *len + n + 1);
    if (grown == NULL) {
        free(*out);
        *out = NULL;
        return false;
    }
    memcpy(grown + *len, s, n);
    *len += n;
    grown[*len] = '\0';
    *out = grown;
    return true;
}

/* The bounds of s[0..n) without blanks at either end. */
static void trim_bounds(const char *s, size_t n, size_t *from, size_t *to)
{
    *from = 0;
    *to = n;
    while (*from < *to && isspace((unsigned char)s[*from])) {
        (*from)++;
    }
    while (*to > *from && isspace((unsigned char)s[*to - 1])) {
        (*to)--;
    }
}

/* The replacement of one "Name: value" entry of n bytes, or NULL to keep
 * it as written. */
static const char *entry_replacement(const char *entry, size_t n, tb_secret_header_fn fn,
                                     void *arg, char **name, char **value)
{
    const char *colon = memchr(entry, ':', n);
    size_t from, to, vfrom, vto;
    if (colon == NULL) {
        return NULL;
    }
    trim_bounds(entry, (size_t)(colon - entry), &from, &to);
    trim_bounds(colon + 1, n - (size_t)(colon - entry) - 1, &vfrom, &vto);
    *name = strndup(entry + from, to - from);
    *value = strndup(colon + 1 + vfrom, vto - vfrom);
    if (*name == NULL || *value == NULL || (*value)[0] == '\0' ||
        !tb_secret_name_is_credential(*name, strlen(*name)) ||
        (tb_secret_is_reference(*value) && !tb_secret_is_sealed(*value))) {
        return NULL;
    }
    return fn(arg, *name, *value);
}

char *tb_secret_headers_rewrite(const char *headers, tb_secret_header_fn fn, void *arg)
{
    char *out = strdup("");
    size_t len = 0;
    for (const char *p = headers; out != NULL;) {
        size_t n = strcspn(p, "|");
        char *name = NULL, *value = NULL;
        const char *replacement = entry_replacement(p, n, fn, arg, &name, &value);
        bool ok = replacement == NULL
                      ? append(&out, &len, p, n)
                      : append(&out, &len, name, strlen(name)) &&
                            append(&out, &len, ": ", 2) &&
                            append(&out, &len, replacement, strlen(replacement));
        free(name);
        tb_secret_free(value);
        if (!ok || p[n] == '\0') {
            break;
        }
        append(&out, &len, "|", 1);
        p += n + 1;
    }
    return out;
}

/* ---- the keys of the worker's secrets file ---- */

/* Appends s to buf (of size, *used so far), %-encoding every byte that is
 * not a letter, a digit, '_', '-' or one of keep. */
static void encode(const char *s, const char *keep, char *buf, size_t size, int *used)
{
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
        bool plain = isalnum(*c) || *c == '_' || *c == '-' ||
                     (*c != '\0' && strchr(keep, *c) != NULL);
        size_t room = (size_t)*used < size ? size - (size_t)*used : 0;
        *used += plain ? snprintf(buf + (size - room), room, "%c", *c)
                       : snprintf(buf + (size - room), room, "%%%02X", *c);
    }
}

int tb_secret_file_key(const char *owner, const char *config_key, char *buf, size_t size)
{
    int used = 0;
    if (size > 0) {
        buf[0] = '\0';
    }
    encode(owner, "", buf, size, &used);
    encode(".", ".", buf, size, &used);
    encode(config_key, ".", buf, size, &used);
    return used;
}

char *tb_secret_file_key_new(const char *owner, const char *config_key)
{
    char probe[1];
    int n = tb_secret_file_key(owner, config_key, probe, sizeof(probe));
    char *key = malloc((size_t)n + 1);
    if (key != NULL) {
        tb_secret_file_key(owner, config_key, key, (size_t)n + 1);
    }
    return key;
}

/* ---- what references may reach ---- */

/* The real path of path, symbolic links resolved; a file that does not
 * exist is its directory's real path and its name. malloc'd, or NULL when
 * its directory does not exist either. */
static char *real_path_of(const char *path)
{
    char *real = realpath(path, NULL);
    const char *slash = strrchr(path, '/');
    if (real != NULL || errno != ENOENT || slash == NULL || slash[1] == '\0') {
        return real;
    }
    char *dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    char *real_dir = dir != NULL ? realpath(dir, NULL) : NULL;
    char *joined = NULL;
    if (real_dir != NULL &&
        asprintf(&joined, "%s%s", strcmp(real_dir, "/") == 0 ? "" : real_dir, slash) <
            0) {
        joined = NULL;
    }
    free(dir);
    free(real_dir);
    return joined;
}

/* True when path is dir or under it. */
static bool is_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (strcmp(dir, "/") == 0) {
        return true;
    }
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool under_any(const char *path, const json_t *dirs)
{
    size_t i;
    json_t *dir;
    json_array_foreach ((json_t *)dirs, i, dir) {
        char *real = real_path_of(json_string_value(dir));
        bool under = real != NULL && is_under(path, real);
        free(real);
        if (under) {
            return true;
        }
    }
    return false;
}

/* Why the file at real (a file that does not exist yet passes: it is
 * checked again when read) cannot be read by a reference, in reason;
 * 0 when it can. stat() does not open it, so a FIFO cannot block. */
static int regular_file_check(const char *real, char *reason, size_t reason_size)
{
    struct stat st;
    if (stat(real, &st) != 0) {
        return 0;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(reason, reason_size,
                 "it is not a regular file (a device, FIFO, socket or directory): "
                 "${file:} reads regular files only");
        return -1;
    }
    if (st.st_size > TB_SECRET_FILE_MAX) {
        snprintf(reason, reason_size,
                 "it is larger than %d bytes, the most ${file:} reads",
                 TB_SECRET_FILE_MAX);
        return -1;
    }
    return 0;
}

/* Why ${file:path:key} of owner is refused by policy, in reason; 0 when
 * it is not. */
static int check_file(const tb_secret_policy_t *policy, const char *owner,
                      const char *path, const char *key, char *reason, size_t reason_size)
{
    char *own = NULL, *real = NULL, *store = NULL, *secrets = NULL;
    int rc = -1;
    if (!policy->file_enabled) {
        snprintf(reason, reason_size, "the worker's config.providers does not name file");
        goto done;
    }
    if ((real = real_path_of(path)) == NULL) {
        snprintf(reason, reason_size, "its directory does not exist");
        goto done;
    }
    store = policy->store_path != NULL ? real_path_of(policy->store_path) : NULL;
    if (store != NULL && asprintf(&secrets, "%s.secrets", store) < 0) {
        secrets = NULL;
    }
    own = tb_secret_file_key_new(owner, "");
    if ((store != NULL && secrets == NULL) || own == NULL) {
        snprintf(reason, reason_size, "out of memory");
        goto done;
    }
    if (secrets != NULL && strcmp(real, secrets) == 0) {
        rc = strncmp(key, own, strlen(own)) == 0 ? 0 : -1;
        if (rc != 0) {
            snprintf(reason, reason_size,
                     "it is the worker's secrets file, where a connector may read only "
                     "its own entries (%.256s*)",
                     own);
        }
        goto done;
    }
    if (store != NULL) {
        *strrchr(store, '/') = '\0';
    }
    if (store != NULL && is_under(real, store[0] != '\0' ? store : "/")) {
        snprintf(reason, reason_size,
                 "it is in the worker's data directory %s (the store's), which no "
                 "reference may read",
                 store[0] != '\0' ? store : "/");
        goto done;
    }
    if (json_array_size(policy->allowed_paths) > 0 &&
        !under_any(real, policy->allowed_paths)) {
        snprintf(reason, reason_size,
                 "it is not under the worker's "
                 "config.providers.file.param.allowed.paths");
        goto done;
    }
    rc = regular_file_check(real, reason, reason_size);

done:
    free(own);
    free(real);
    free(store);
    free(secrets);
    return rc;
}

/* True when name matches all of the extended regular expression pattern. */
static bool matches_whole(const char *pattern, const char *name)
{
    regex_t re;
    char *anchored = NULL;
    if (asprintf(&anchored, "^(%s)$", pattern) < 0) {
        return false;
    }
    bool compiled = regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB) == 0;
    bool match = compiled && regexec(&re, name, 0, NULL, 0) == 0;
    if (compiled) {
        regfree(&re);
    }
    free(anchored);
    return match;
}

/* Why ${env:name} is refused by policy, in reason; 0 when it is not. */
static int check_env(const tb_secret_policy_t *policy, const char *name, char *reason,
                     size_t reason_size)
{
    if (!policy->env_enabled) {
        snprintf(reason, reason_size, "the worker's config.providers does not name env");
        return -1;
    }
    if (strncmp(name, "TRIBUTARY_", strlen("TRIBUTARY_")) == 0) {
        snprintf(reason, reason_size,
                 "TRIBUTARY_* variables hold the worker's own configuration");
        return -1;
    }
    if (policy->env_pattern != NULL && policy->env_pattern[0] != '\0' &&
        !matches_whole(policy->env_pattern, name)) {
        snprintf(reason, reason_size,
                 "the name does not match the worker's "
                 "config.providers.env.param.allowlist.pattern");
        return -1;
    }
    return 0;
}

/* Called on each reference within a value: env tells its kind, spec is
 * the text between its prefix and '}' (a scratch copy fn may change).
 * Returns 0, or -1 with why. */
typedef int (*reference_fn)(void *arg, bool env, char *spec, char *why, size_t why_size);

/* Checks the sealed secret p..end (inclusive) of a config of owner. */
static int check_sealed(const char *owner, const char *p, const char *end, char *reason,
                        size_t reason_size)
{
    char *sealed = strndup(p, (size_t)(end - p) + 1);
    char why[1024];
    int rc =
        sealed != NULL ? tb_secret_seal_check(sealed, owner, NULL, why, sizeof(why)) : -1;
    if (rc != 0) {
        snprintf(reason, reason_size, "a sealed secret is refused: %s",
                 sealed != NULL ? why : "out of memory");
    }
    free(sealed);
    return rc;
}

/* Calls fn on every reference within value; stops at the first it
 * refuses, with reason naming that reference and why. A sealed secret is
 * checked as sealed for sealed_owner, or passed over when that is NULL. */
static int each_reference(const char *value, const char *sealed_owner, reference_fn fn,
                          void *arg, char *reason, size_t reason_size)
{
    for (const char *p = strstr(value, "${"); p != NULL; p = strstr(p + 2, "${")) {
        bool env = has_prefix(p, ENV_PREFIX);
        const char *end = strchr(p, '}');
        if (has_prefix(p, SEALED_PREFIX) && end != NULL) {
            if (sealed_owner != NULL &&
                check_sealed(sealed_owner, p, end, reason, reason_size) != 0) {
                return -1;
            }
            continue;
        }
        if ((!env && !has_prefix(p, FILE_PREFIX)) || end == NULL) {
            continue;
        }
        size_t skip = strlen(env ? ENV_PREFIX : FILE_PREFIX);
        char *spec = strndup(p + skip, (size_t)(end - p) - skip);
        char why[1024];
        int rc = spec != NULL ? fn(arg, env, spec, why, sizeof(why)) : -1;
        if (rc != 0) {
            snprintf(reason, reason_size, "the reference %.*s is refused: %s",
                     (int)(end - p + 1), p, spec != NULL ? why : "out of memory");
        }
        free(spec);
        if (rc != 0) {
            return -1;
        }
    }
    return 0;
}

typedef struct {
    const tb_secret_policy_t *policy;
    const char *owner;
} policy_arg_t;

/* reference_fn: the policy's check of one reference. */
static int check_one(void *arg, bool env, char *spec, char *why, size_t why_size)
{
    const policy_arg_t *a = arg;
    if (env) {
        return check_env(a->policy, spec, why, why_size);
    }
    char *colon = strrchr(spec, ':');
    if (spec[0] != '/' || colon == NULL) {
        snprintf(why, why_size, "it is not of the form ${file:/absolute/path:key}");
        return -1;
    }
    *colon = '\0';
    return check_file(a->policy, a->owner, spec, colon + 1, why, why_size);
}

int tb_secret_policy_check(const tb_secret_policy_t *policy, const char *owner,
                           const char *value, char *reason, size_t reason_size)
{
    policy_arg_t arg = {.policy = policy, .owner = owner};
    return each_reference(value, owner, check_one, &arg, reason, reason_size);
}

/* ---- the worker's own files and variables ---- */

typedef struct {
    char *real;
    bool known; /* dev and ino are the file's */
    dev_t dev;
    ino_t ino;
} denied_file_t;

struct tb_secret_deny {
    denied_file_t *files;
    size_t file_count;
    char **env;
    size_t env_count;
};

tb_secret_deny_t *tb_secret_deny_create(void)
{
    return calloc(1, sizeof(tb_secret_deny_t));
}

void tb_secret_deny_destroy(tb_secret_deny_t *deny)
{
    for (size_t i = 0; deny != NULL && i < deny->file_count; i++) {
        free(deny->files[i].real);
    }
    for (size_t i = 0; deny != NULL && i < deny->env_count; i++) {
        free(deny->env[i]);
    }
    if (deny != NULL) {
        free(deny->files);
        free(deny->env);
    }
    free(deny);
}

int tb_secret_deny_add_file(tb_secret_deny_t *deny, const char *path)
{
    struct stat st;
    char *real = real_path_of(path);
    if (real == NULL) {
        /* no directory there: no file to keep away */
        return errno == ENOMEM ? -1 : 0;
    }
    denied_file_t *grown = realloc(deny->files, (deny->file_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(real);
        return -1;
    }
    bool known = stat(real, &st) == 0;
    grown[deny->file_count++] = (denied_file_t){.real = real,
                                                .known = known,
                                                .dev = known ? st.st_dev : 0,
                                                .ino = known ? st.st_ino : 0};
    deny->files = grown;
    return 0;
}

int tb_secret_deny_add_env(tb_secret_deny_t *deny, const char *name)
{
    char *copy = strdup(name);
    char **grown =
        copy != NULL ? realloc(deny->env, (deny->env_count + 1) * sizeof(*grown)) : NULL;
    if (grown == NULL) {
        free(copy);
        return -1;
    }
    grown[deny->env_count++] = copy;
    deny->env = grown;
    return 0;
}

/* reference_fn: adds what one reference names to the set arg. */
static int add_reference(void *arg, bool env, char *spec, char *why, size_t why_size)
{
    char *colon = strrchr(spec, ':');
    int rc = 0;
    if (env) {
        rc = tb_secret_deny_add_env(arg, spec);
    } else if (colon != NULL) {
        *colon = '\0';
        rc = tb_secret_deny_add_file(arg, spec);
    }
    if (rc != 0) {
        snprintf(why, why_size, "out of memory");
    }
    return rc;
}

int tb_secret_deny_add_references(tb_secret_deny_t *deny, const char *value)
{
    char reason[1536];
    return each_reference(value, NULL, add_reference, deny, reason, sizeof(reason));
}

bool tb_secret_deny_file(const tb_secret_deny_t *deny, const char *real,
                         const struct stat *st)
{
    for (size_t i = 0; deny != NULL && i < deny->file_count; i++) {
        const denied_file_t *f = &deny->files[i];
        if ((real != NULL && strcmp(real, f->real) == 0) ||
            (st != NULL && f->known && st->st_dev == f->dev && st->st_ino == f->ino)) {
            return true;
        }
    }
    return false;
}

/* reference_fn: refuses a reference to one of the worker's own files or
 * variables (arg: the set). */
static int check_denied(void *arg, bool env, char *spec, char *why, size_t why_size)
{
    const tb_secret_deny_t *deny = arg;
    char *colon = strrchr(spec, ':');
    struct stat st;
    bool denied = false;
    for (size_t i = 0; env && i < deny->env_count; i++) {
        denied = denied || strcmp(spec, deny->env[i]) == 0;
    }
    if (!env && colon != NULL) {
        *colon = '\0';
        char *real = real_path_of(spec);
        denied = real != NULL &&
                 tb_secret_deny_file(deny, real, stat(real, &st) == 0 ? &st : NULL);
        free(real);
    }
    if (denied) {
        snprintf(why, why_size,
                 env ? "the worker's own configuration reads this variable, which no "
                       "connector may read"
                     : "it is one of the worker's own files (its properties file, or a "
                       "file its config names: REST credentials, TLS and client keys "
                       "and certificates, secrets), which no connector may read");
    }
    return denied ? -1 : 0;
}

int tb_secret_deny_check(const tb_secret_deny_t *deny, const char *value, char *reason,
                         size_t reason_size)
{
    if (deny == NULL) {
        return 0;
    }
    return each_reference(value, NULL, check_denied, (void *)deny, reason, reason_size);
}
