/*
 * tb_search_sink.h - the parts of the search sink (Elasticsearch and
 * OpenSearch), shared by its files only. The plugins themselves are
 * tb_search_sink_plugin (Confluent's ElasticsearchSinkConnector) and
 * tb_opensearch_sink_plugin (Aiven's OpensearchSinkConnector), listed in
 * plugins.c.
 *
 *   search_sink.c    config table, task lifecycle, put() and its retries
 *   search_doc.c     documents: ids, index names, bulk lines, the source
 *                    from Connect data, the index mapping from a schema
 *   search_client.c  libcurl: bulk requests in the background (its thread
 *                    and a curl multi handle) with failover across
 *                    connection.url, per-item results
 */
#ifndef TB_SEARCH_SINK_H
#define TB_SEARCH_SINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <curl/curl.h>
#include <jansson.h>

#include "connectors/tb_plugin.h"

/* ---- documents (search_doc.c) ---- */

enum { TB_SEARCH_INSERT = 0, TB_SEARCH_UPSERT }; /* write.method */
enum { TB_SEARCH_NULL_IGNORE = 0, TB_SEARCH_NULL_DELETE, TB_SEARCH_NULL_FAIL };
enum { TB_SEARCH_STREAM_NONE = 0, TB_SEARCH_STREAM_LOGS, TB_SEARCH_STREAM_METRICS };

/* What the documents of a task look like; borrowed strings of the task's
 * parsed config. */
typedef struct {
    bool key_ignore;
    bool schema_ignore;
    bool compact_map_entries;
    int write_method; /* TB_SEARCH_INSERT / UPSERT */
    int null_values;  /* TB_SEARCH_NULL_* */
    int stream_type;  /* TB_SEARCH_STREAM_* */
    const char *stream_dataset;
    const json_t *stream_timestamp_fields; /* array of field names, may be empty */
    const char *version_header;            /* external.version.header; NULL: the offset */
    const json_t *index_map; /* topic.to.index.map ("topic:index"), may be NULL */
} tb_search_doc_options_t;

/* What a record comes to. */
typedef enum {
    TB_SEARCH_DOC_WRITE = 0, /* lines were appended */
    TB_SEARCH_DOC_SKIP,      /* nothing to write (a null under ignore) */
    TB_SEARCH_DOC_INVALID,   /* cannot be written: reason says why */
} tb_search_doc_result_t;

/* The index (or data stream) record goes to, into out: topic.to.index.map's,
 * else the topic lower-cased; a data stream is "<type>-<dataset>-<topic>". */
void tb_search_doc_index(const tb_search_doc_options_t *o, const char *topic, char *out,
                         size_t out_size);

/* Appends the bulk lines of record (its action line and, but for a delete,
 * its source) to body. reason is set for TB_SEARCH_DOC_INVALID. Returns -1
 * on a write failure of body (no memory). */
int tb_search_doc_lines(const tb_search_doc_options_t *o, const tb_sink_record_t *record,
                        FILE *body, tb_search_doc_result_t *result, char *reason,
                        size_t reason_size);

/* The document id of record: "<topic>+<partition>+<offset>" with
 * key.ignore, else the key's text. Returns 0, or -1 with reason (a null key
 * or one of a type an id cannot be made of). */
int tb_search_doc_id(const tb_search_doc_options_t *o, const tb_sink_record_t *record,
                     char **id, char *reason, size_t reason_size);

/* The mapping ({"properties":{...}}) of a value schema, as the reference
 * connector makes it; NULL for a schema that is no STRUCT. New reference. */
json_t *tb_search_doc_mapping(const tb_schema_t *schema);

/* ---- the client (search_client.c) ---- */

/* What a request, or one item of a bulk response, came to. */
typedef enum {
    TB_SEARCH_OK = 0,    /* written (or a version conflict: a newer one is there) */
    TB_SEARCH_RETRY,     /* network, timeout, 429, 5xx: try again later */
    TB_SEARCH_MALFORMED, /* the document is refused (mapping, parsing) */
    TB_SEARCH_FATAL,     /* the cluster refuses the connector (auth, closed index) */
} tb_search_outcome_t;

typedef struct {
    const json_t *urls; /* connection.url, an array of strings */
    const char *username;
    const char *password;
    long connect_timeout_ms;
    long read_timeout_ms;
    const char *ca_location; /* PEM; NULL: the system's */
    const char *cert_location;
    const char *key_location;
    const char *key_password;
    bool verify_host;
    int max_in_flight;
    /* called on the client's thread each time a request is done */
    void (*on_done)(void *arg);
    void *on_done_arg;
} tb_search_client_options_t;

/* One bulk request: its body, and once done its outcome and per-item
 * outcomes (items[i] for the i-th action of body). */
typedef struct {
    char *body;
    size_t body_len;
    size_t *records;    /* for each action, its record in put() (the sink frees it) */
    size_t count;       /* actions */
    int64_t not_before; /* monotonic ms: not sent before (a retry's backoff) */
    /* set by the client's thread once the fields below are filled; until
     * then the request is the client's, and only done may be read */
    atomic_bool done;
    tb_search_outcome_t outcome;
    tb_search_outcome_t *items; /* count entries, when outcome is OK */
    char **reasons;             /* per item, for MALFORMED and FATAL; owned */
    char reason[512];           /* the request's, when outcome is not OK */
} tb_search_request_t;

typedef struct tb_search_client tb_search_client_t;

/* A client for options (borrowed for its life), its thread started. Needs
 * curl_global_init() done by the process. NULL with errstr. */
tb_search_client_t *tb_search_client_new(const tb_search_client_options_t *options,
                                         char *errstr, size_t errstr_size);
/* Stops the client's thread and frees it; requests still on the wire are
 * abandoned (never done). */
void tb_search_client_free(tb_search_client_t *client);

/* Lends request to the client, which sends it once its not_before is past,
 * bounded by the timeouts; a URL that cannot be reached makes the next one
 * of connection.url current. Its done is set, its outcome and items filled,
 * on the client's thread, which then calls on_done. The caller keeps at
 * most max_in_flight requests lent: -1 when every lane is taken. */
int tb_search_client_send(tb_search_client_t *client, tb_search_request_t *request);

/* One plain request (index creation, mapping) to the current URL: method,
 * path ("/index"), a JSON body or NULL. Returns the HTTP status (0 when none
 * came, with reason) and the response as JSON in *response (may be NULL). */
long tb_search_client_call(tb_search_client_t *client, const char *method,
                           const char *path, const char *body, json_t **response,
                           char *reason, size_t reason_size);

/* Frees what a request owns and zeroes it. */
void tb_search_request_clear(tb_search_request_t *request);

/* Config check of connection.url: every entry an http:// or https:// URL. */
int tb_search_urls_check(const json_t *value, char *reason, size_t reason_size);

#endif
