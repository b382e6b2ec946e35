/*
 * tb_secret.h - secret references in configs, and what they may reach.
 *
 * A secret value holds a reference, resolved only when a task starts:
 *   ${env:NAME}           the environment variable NAME
 *   ${file:/path:key}     key of the Java properties file /path
 *   ${sealed:v1:...}      a literal secret a distributed worker sealed
 *                         (tb_secret_seal.h)
 * A connector's references are checked against the worker's policy when
 * its config is validated (tb_secret_policy_check). Nothing here logs or
 * returns a resolved value in an error message.
 */
#ifndef TB_SECRET_H
#define TB_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include <jansson.h>

/* The largest file a ${file:} reference reads (as large as PEM files may
 * be); only regular files are read. */
#define TB_SECRET_FILE_MAX (1024 * 1024)

/* True when value is one whole reference of a known kind. */
bool tb_secret_is_reference(const char *value);

/* Resolves value: a reference to its secret, anything else to itself.
 * Returns a malloc'd string (free it with tb_secret_free), or NULL with
 * errstr naming the reference (its variable, file or key, never a secret)
 * when it cannot be resolved. */
char *tb_secret_resolve(const char *value, char *errstr, size_t errstr_size);

/* Wipes (explicit_bzero, which the compiler keeps) and frees a secret the
 * caller owns. NULL is a no-op. */
void tb_secret_free(char *secret);

/* Wipes in place the text of value, a JSON string or every string of an
 * object, when nothing else holds it (a reference count of 1): a resolved
 * secret about to be released. Other values are left as they are. */
void tb_secret_wipe_json(json_t *value);

/* True when a header, query parameter or similar name of len bytes looks
 * like it carries a credential: it contains auth, token, secret, key,
 * password, cookie or credential, in any case (Authorization,
 * Proxy-Authorization, X-API-Key, Cookie, ...). */
bool tb_secret_name_is_credential(const char *name, size_t len);

/* Gives the replacement of a credential header's value (a string fn owns,
 * valid until its next call), or NULL to keep the value. */
typedef const char *(*tb_secret_header_fn)(void *arg, const char *name,
                                           const char *value);

/* A header list ("Name: value|Name: value", as the HTTP sink's http.headers)
 * with the value of each credential header that is not an ${env:} or
 * ${file:} reference (a literal one, or a sealed one: fn tells them apart
 * with tb_secret_is_sealed) replaced by what fn gives; the other entries
 * are kept as written.
 * Returns a malloc'd string, NULL when out of memory. */
char *tb_secret_headers_rewrite(const char *headers, tb_secret_header_fn fn, void *arg);

/* The key under which the worker's secrets file keeps the secret of
 * config_key of connector owner: "<owner>.<config_key>", each part
 * %-encoded so that neither holds '.', ':', '}' (owner) or anything but
 * letters, digits and ._- (config_key). Returns the length written, as
 * snprintf does. */
int tb_secret_file_key(const char *owner, const char *config_key, char *buf, size_t size);

/* The same key, whole, in a new string (free() it); NULL when out of
 * memory. Identities are compared whole: a buffer would cut a long name. */
char *tb_secret_file_key_new(const char *owner, const char *config_key);

/* Cuts from a jansson parse error the text it quotes (" near '\"s3cret'"),
 * which may be part of a secret: line and column say where. Returns
 * error->text. */
const char *tb_secret_json_error_text(json_error_t *error);

/* The worker's own files and variables: its properties file, every file
 * and variable its config names (its references, its REST credentials, its
 * TLS and Kafka client key and certificate files). No connector may reach
 * them, whatever the allowlists say: neither through a reference nor as a
 * file connector's path. Files are kept as real paths (symbolic links and
 * ".." resolved when added) with their device and inode (a hard link). */
typedef struct tb_secret_deny tb_secret_deny_t;

/* An empty set, or NULL when out of memory. */
tb_secret_deny_t *tb_secret_deny_create(void);

/* Frees deny; NULL is a no-op. */
void tb_secret_deny_destroy(tb_secret_deny_t *deny);

/* Adds the file at path (a file that does not exist is kept by the real
 * path of its directory and its name); the variable name; every file and
 * variable that the references within value name. Each returns 0, or -1
 * when out of memory. */
int tb_secret_deny_add_file(tb_secret_deny_t *deny, const char *path);
int tb_secret_deny_add_env(tb_secret_deny_t *deny, const char *name);
int tb_secret_deny_add_references(tb_secret_deny_t *deny, const char *value);

/* True when the file at real (a real path), or st (NULL: unknown; a hard
 * link to one of them), is one of deny's. deny may be NULL: none. */
bool tb_secret_deny_file(const tb_secret_deny_t *deny, const char *real,
                         const struct stat *st);

/* Checks every reference within value against deny (NULL: none). Returns
 * 0, or -1 with reason saying which reference is refused and why. */
int tb_secret_deny_check(const tb_secret_deny_t *deny, const char *value, char *reason,
                         size_t reason_size);

/* What the references of connectors' configs may reach: the worker's
 * config.providers settings. Pointers are owned by the caller and must
 * outlive the policy's use. */
typedef struct {
    bool file_enabled;           /* config.providers names file */
    bool env_enabled;            /* config.providers names env */
    const json_t *allowed_paths; /* ...file.param.allowed.paths; empty: any */
    const char *env_pattern;     /* ...env.param.allowlist.pattern; NULL: any */
    /* The worker's store: it, its directory and everything under it
     * (the <store>.secrets file but a connector's own entries) are never
     * readable through a reference. NULL: no store to protect. */
    const char *store_path;
} tb_secret_policy_t;

/* Checks every reference in value (a whole reference, or references
 * within it, as in a header list) of a config of connector owner; a sealed
 * one must be owner's, under this worker's key (tb_secret_seal_check). Returns
 * 0, or -1 with reason saying which reference is refused and why (never a
 * secret). */
int tb_secret_policy_check(const tb_secret_policy_t *policy, const char *owner,
                           const char *value, char *reason, size_t reason_size);

#endif
