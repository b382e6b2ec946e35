#include "connectors/tb_limits.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORKER_FILE                                                                      \
    "the path is one of the worker's own files (its properties file, or a file its "     \
    "config names: REST credentials, TLS and client keys and certificates, secrets): "   \
    "file connectors may never reach it"

/* The real path of a file that may not exist yet: its directory resolved,
 * its name appended. NULL when the directory does not exist. malloc'd. */
static char *real_target(const char *path)
{
    char *resolved = realpath(path, NULL);
    if (resolved != NULL) {
        return resolved;
    }
    char *dir_copy = strdup(path);
    char *name_copy = strdup(path);
    char *dir = realpath(dirname(dir_copy), NULL);
    char *out = NULL;
    if (dir != NULL && asprintf(&out, "%s/%s", dir, basename(name_copy)) < 0) {
        out = NULL;
    }
    free(dir);
    free(dir_copy);
    free(name_copy);
    return out;
}

/* Is path root itself or a path under it? Both are real paths. */
static bool path_within(const char *path, const char *root)
{
    size_t n = strlen(root);
    return strncmp(path, root, n) == 0 &&
           (path[n] == '\0' || path[n] == '/' || strcmp(root, "/") == 0);
}

static bool path_allowed(const json_t *dirs, const char *target)
{
    bool allowed = false;
    size_t i;
    json_t *dir;
    json_array_foreach ((json_t *)dirs, i, dir) {
        char *root = realpath(json_string_value(dir), NULL);
        allowed = allowed || (root != NULL && path_within(target, root));
        free(root);
    }
    return allowed;
}

/* The worker's data directory, resolved (malloc'd), or NULL when there is
 * no store. */
static char *data_dir(const tb_limits_t *limits)
{
    if (limits->store_path == NULL) {
        return NULL;
    }
    char *copy = strdup(limits->store_path);
    char *dir = copy != NULL ? realpath(dirname(copy), NULL) : NULL;
    free(copy);
    return dir;
}

/* Why the limits refuse target (a real path, NULL when its directory does
 * not exist), or NULL when they allow it. Static text. */
static const char *path_refusal(const tb_limits_t *limits, const char *target)
{
    char *data = target != NULL ? data_dir(limits) : NULL;
    bool in_data = data != NULL && path_within(target, data);
    free(data);
    if (in_data) {
        return "the path is in the worker's data directory (that of "
               "offset.storage.file.filename), which holds the store and its secrets "
               "file: file connectors may never reach it";
    }
    if (target != NULL && tb_secret_deny_file(limits->deny, target, NULL)) {
        return WORKER_FILE;
    }
    if (json_array_size(limits->allowed_dirs) > 0 &&
        (target == NULL || !path_allowed(limits->allowed_dirs, target))) {
        return "the path is outside the worker's file.allowed.dirs";
    }
    return NULL;
}

/* Why st is refused: it is one of the store's files or of the worker's own
 * (a hard link to one included), or NULL. Static text. */
static const char *store_file_refusal(const tb_limits_t *limits, const struct stat *st)
{
    if (tb_secret_deny_file(limits->deny, NULL, st)) {
        return WORKER_FILE;
    }
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".secrets"};
    char name[PATH_MAX];
    struct stat store;
    for (size_t i = 0;
         limits->store_path != NULL && i < sizeof(suffixes) / sizeof(*suffixes); i++) {
        snprintf(name, sizeof(name), "%s%s", limits->store_path, suffixes[i]);
        if (stat(name, &store) == 0 && store.st_dev == st->st_dev &&
            store.st_ino == st->st_ino) {
            return "the file is the worker's store or its secrets file: file "
                   "connectors may never reach it";
        }
    }
    return NULL;
}

/* Why path (as configured) is refused, or NULL. Static text. */
static const char *refusal(const tb_limits_t *limits, const char *path)
{
    char *target = real_target(path);
    struct stat st;
    const char *reason = path_refusal(limits, target);
    if (reason == NULL && target != NULL && stat(target, &st) == 0) {
        reason = store_file_refusal(limits, &st);
    }
    free(target);
    return reason;
}

static bool host_allowed(const json_t *hosts, const char *url)
{
    CURLU *parsed = curl_url();
    char *host = NULL;
    bool allowed = false;
    if (curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(parsed, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        size_t i;
        json_t *entry;
        json_array_foreach ((json_t *)hosts, i, entry) {
            allowed = allowed || strcasecmp(json_string_value(entry), host) == 0;
        }
    }
    curl_free(host);
    curl_url_cleanup(parsed);
    return allowed;
}

/* Whether every URL of a LIST key's value ("url1,url2") is on an allowed
 * host: a search sink's connection.url names several. */
static bool list_hosts_allowed(const json_t *hosts, const char *urls)
{
    char *copy = strdup(urls);
    char *save = NULL;
    bool allowed = copy != NULL;
    for (char *url = copy ? strtok_r(copy, ",", &save) : NULL; url != NULL && allowed;
         url = strtok_r(NULL, ",", &save)) {
        url += strspn(url, " \t");
        url[strcspn(url, " \t")] = '\0';
        allowed = url[0] == '\0' || host_allowed(hosts, url);
    }
    free(copy);
    return allowed;
}

/* Adds an error for each key of config whose references name one of the
 * worker's own files or variables. */
static void check_references(const tb_limits_t *limits, const json_t *config,
                             json_t *errors)
{
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)config, key, value) {
        char reason[1536], message[2048];
        const char *text = json_string_value(value);
        if (text != NULL &&
            tb_secret_deny_check(limits->deny, text, reason, sizeof(reason)) != 0) {
            snprintf(message, sizeof(message), "%s: %s", key, reason);
            tb_config_error_add(errors, key, message);
        }
    }
}

void tb_limits_check(const tb_limits_t *limits, const tb_config_table_t *table,
                     const json_t *config, json_t *errors)
{
    check_references(limits, config, errors);
    for (size_t i = 0; i < table->count; i++) {
        const tb_config_def_t *def = &table->defs[i];
        const char *value = json_string_value(json_object_get(config, def->name));
        char message[1024];
        if (value == NULL || def->role == TB_CONFIG_ROLE_NONE) {
            continue;
        }
        const char *reason =
            def->role == TB_CONFIG_ROLE_PATH ? refusal(limits, value) : NULL;
        if (reason != NULL) {
            snprintf(message, sizeof(message),
                     "Invalid value %s for configuration %s: %s", value, def->name,
                     reason);
            tb_config_error_add(errors, def->name, message);
        }
        if (def->role == TB_CONFIG_ROLE_URL &&
            json_array_size(limits->allowed_hosts) > 0 &&
            !(def->type == TB_CONFIG_LIST
                  ? list_hosts_allowed(limits->allowed_hosts, value)
                  : host_allowed(limits->allowed_hosts, value))) {
            snprintf(message, sizeof(message),
                     "Invalid value for configuration %s: its host is not in the "
                     "worker's http.sink.allowed.hosts",
                     def->name);
            tb_config_error_add(errors, def->name, message);
        }
    }
}

/* Opens the directory dir (a real path) one component at a time from "/",
 * following no symbolic link. Returns an O_PATH descriptor, or -1 with
 * errno set (ELOOP or ENOTDIR when a component is a symbolic link). */
static int open_dir_nofollow(const char *dir)
{
    char *copy = strdup(dir);
    char *save = NULL;
    int fd = copy != NULL ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    for (char *name = strtok_r(copy, "/", &save); fd >= 0 && name != NULL;
         name = strtok_r(NULL, "/", &save)) {
        int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(fd);
        errno = saved;
        fd = next;
    }
    free(copy);
    return fd;
}

/* Opens the leaf of target (a real path) below its directory without
 * following a symbolic link, and refuses the store's files. Returns a
 * descriptor, or -1 with errno set and *reason for a refusal. */
static int open_target(const tb_limits_t *limits, char *target, bool append,
                       const char **reason)
{
    char *slash = strrchr(target, '/');
    *slash = '\0';
    int dir = open_dir_nofollow(slash == target ? "/" : target);
    *slash = '/';
    int flags = (append ? O_RDWR | O_APPEND | O_CREAT : O_RDONLY) | O_NOFOLLOW |
                O_NOCTTY | O_CLOEXEC;
    int fd = dir >= 0 ? openat(dir, slash + 1, flags, 0666) : -1;
    struct stat st;
    int saved = errno;
    if (dir >= 0) {
        close(dir);
    }
    errno = saved;
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
        *reason = "a symbolic link took the place of part of the path after it was "
                  "checked";
    } else if (fd >= 0 && fstat(fd, &st) == 0 && limits != NULL) {
        *reason = store_file_refusal(limits, &st);
    }
    if (*reason != NULL && fd >= 0) {
        close(fd);
        fd = -1;
    }
    if (*reason != NULL) {
        errno = EACCES;
    }
    return fd;
}

FILE *tb_limits_fopen(const tb_limits_t *limits, const char *path, bool append,
                      char *errstr, size_t errstr_size)
{
    char *target = real_target(path);
    const char *reason = limits != NULL ? path_refusal(limits, target) : NULL;
    FILE *file = NULL;
    int fd = -1;
    if (reason == NULL && target != NULL) {
        fd = open_target(limits, target, append, &reason);
    } else if (reason != NULL) {
        errno = EACCES;
    }
    if (fd >= 0) {
        file = fdopen(fd, append ? "a+" : "r");
    }
    int saved = errno;
    if (file == NULL) {
        snprintf(errstr, errstr_size, "cannot open file %s%s: %s", path,
                 append ? " for appending" : "",
                 reason != NULL ? reason : strerror(saved));
    }
    if (file == NULL && fd >= 0) {
        close(fd);
    }
    free(target);
    errno = saved;
    return file;
}
