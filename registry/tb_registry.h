/*
 * tb_registry.h - a client of the Confluent Schema Registry REST API.
 *
 * Schemas by id, lookup and registration under a subject, a subject's latest
 * version, and the schemas a schema references. Requests go to the first
 * URL that answers (several URLs fail over in turn, the last good one first);
 * a connection failure, a timeout, a 5xx or a 429 from every URL is retried
 * with exponential backoff, a bounded number of times, after which the call
 * returns TB_REGISTRY_UNAVAILABLE and later calls fail fast until the backoff
 * has passed. Answers are kept in bounded in-memory caches (by id, by
 * subject and schema, by subject and version, and a subject's latest).
 *
 * Every function may be called from several threads at once.
 */
#ifndef TB_REGISTRY_H
#define TB_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef enum {
    TB_REGISTRY_OK = 0,
    TB_REGISTRY_NOT_FOUND,   /* no such id, subject, version or schema */
    TB_REGISTRY_UNAVAILABLE, /* no URL answered: retry later */
    TB_REGISTRY_ERROR,       /* the registry refused (4xx) or answered nonsense */
} tb_registry_status_t;

typedef enum {
    TB_SCHEMA_AVRO = 0,
    TB_SCHEMA_PROTOBUF,
    TB_SCHEMA_JSON,
} tb_schema_type_t;

/* A schema as the registry holds it. Shared and reference counted:
 * tb_registry_schema_release() drops a reference. Read-only. */
typedef struct {
    int32_t id;
    int version; /* -1 when the answer did not say */
    tb_schema_type_t type;
    char *text;
    json_t *references; /* array of {"name","subject","version"}; never NULL */
} tb_registry_schema_t;

typedef struct {
    const char *urls; /* comma-separated http(s) URLs; required */
    /* "user:password" for HTTP basic auth, or NULL. */
    const char *user_info;
    /* A bearer token, or NULL (not with user_info). */
    const char *bearer_token;
    const char *ca_location;   /* PEM CA file, or NULL for the system's */
    const char *cert_location; /* PEM client certificate, or NULL */
    const char *key_location;  /* PEM client key, or NULL */
    const char *key_password;  /* or NULL */
    long timeout_ms;           /* per request, connection included */
    int max_retries;           /* retries after the first pass over the URLs */
    long retry_wait_ms;        /* the first backoff; doubles each retry */
    long retry_max_wait_ms;    /* the backoff's ceiling */
    size_t cache_capacity;     /* entries per cache */
    long latest_ttl_ms;        /* how long a latest version is kept; <0: forever */
} tb_registry_config_t;

typedef struct tb_registry tb_registry_t;

/* Creates a client; copies what config points to. Returns NULL with errstr
 * (a URL that is not http(s), basic auth and a token together). */
tb_registry_t *tb_registry_create(const tb_registry_config_t *config, char *errstr,
                                  size_t errstr_size);

/* NULL is a no-op. */
void tb_registry_destroy(tb_registry_t *r);

/* The name of a schema type as the API spells it ("AVRO", "PROTOBUF",
 * "JSON"). */
const char *tb_registry_type_name(tb_schema_type_t type);

/* Drops a reference; NULL is a no-op. */
void tb_registry_schema_release(tb_registry_schema_t *schema);

/* GET /schemas/ids/{id}. On OK, *out is a new reference. */
tb_registry_status_t tb_registry_schema_by_id(tb_registry_t *r, int32_t id,
                                              tb_registry_schema_t **out, char *errstr,
                                              size_t errstr_size);

/* The id of schema under subject: POST /subjects/{subject}/versions when
 * register_it, else the lookup POST /subjects/{subject}. references is an
 * array as in tb_registry_schema_t (borrowed; NULL = none). */
tb_registry_status_t tb_registry_schema_id(tb_registry_t *r, const char *subject,
                                           tb_schema_type_t type, const char *text,
                                           const json_t *references, bool register_it,
                                           int32_t *id, char *errstr, size_t errstr_size);

/* GET /subjects/{subject}/versions/{version}; version < 0 is "latest".
 * On OK, *out is a new reference. */
tb_registry_status_t tb_registry_subject_version(tb_registry_t *r, const char *subject,
                                                 int version, tb_registry_schema_t **out,
                                                 char *errstr, size_t errstr_size);

/* Every schema schema references, directly or not, as a new object
 * name -> schema text (*out). */
tb_registry_status_t tb_registry_resolve_references(tb_registry_t *r,
                                                    const tb_registry_schema_t *schema,
                                                    json_t **out, char *errstr,
                                                    size_t errstr_size);

#endif
