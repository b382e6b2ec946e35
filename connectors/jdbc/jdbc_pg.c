/*
 * jdbc_pg.c - the PostgreSQL dialect, through libpq.
 *
 * Parameters go as text (bytes as binary), untyped: the server reads each
 * as the type of the column it lands in. What failed is told by the
 * SQLSTATE: class 22 (data) and 23 (constraints) and a datatype mismatch
 * are the row's fault, class 08, an administrator's shutdown, a
 * serialization failure or a deadlock are retried, anything else stops the
 * task; a connection that libpq reports as bad is lost whatever the state.
 * A statement of many parameters (a put's multi-row upsert) is prepared on
 * its connection the first time and run by name after that, a few kept.
 *
 * Connecting never blocks on the network: PQconnectStartParams starts it
 * (a host name is still resolved there, blocking; an address is not), and
 * pg_connect_poll drives PQconnectPoll for as long as its caller allows,
 * until the connect timeout (connectTimeout, else 10 s) gives the attempt
 * up. A statement waits for the server at most the URL's socketTimeout
 * (else 30 s), and no longer than one slice once the task is stopping
 * (connectors/libpq/tb_pg_wait.h): then the connection is lost (LOST,
 * and every later statement on it fails at once), the transaction rolled
 * back by the server, and the put retried on a new connection.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "connectors/jdbc/tb_jdbc.h"
#include "connectors/libpq/tb_pg_wait.h"
#include "core/tb_time.h"

#define CONNECT_TIMEOUT_S 10
#define SOCKET_TIMEOUT_S 30

/* Statements with this many parameters or more are prepared once per
 * connection and run again by name: a put's multi-row INSERT of thousands
 * of parameters is otherwise parsed and planned by the server every time. */
#define PREPARE_FROM 64
#define PREPARED_MAX 8

typedef struct {
    char *sql; /* owned; NULL: a free slot */
    char name[24];
    uint64_t used; /* when last run, in the connection's uses */
} prepared_t;

struct tb_jdbc_conn {
    PGconn *pg;
    prepared_t prepared[PREPARED_MAX];
    uint64_t uses;
    unsigned names;                    /* prepared statements named so far */
    const char *shown_url;             /* the settings', for messages */
    PostgresPollingStatusType polling; /* what PQconnectPoll last said */
    int64_t deadline_ms;               /* when a connect under way gives up */
    int socket_timeout_s;              /* a statement's longest wait */
    const atomic_bool *stopping;       /* the settings' */
    char lost[128]; /* why a wait gave up (then every statement is LOST), or "" */
};

/* A server's message on one line, without its trailing newline. */
static void message_of(const char *text, char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size, "%s", text != NULL && text[0] ? text : "unknown error");
    for (char *p = errstr; *p != '\0'; p++) {
        if (*p == '\n') {
            *p = p[1] != '\0' ? ' ' : '\0';
        }
    }
}

/* Why connecting failed, in errstr, and what that comes to: wrong
 * credentials or names do not heal by themselves. */
static tb_jdbc_rc_t connect_failed(tb_jdbc_conn_t *c, char *errstr, size_t errstr_size)
{
    const char *why = c->pg != NULL ? PQerrorMessage(c->pg) : "out of memory";
    char message[512];
    message_of(why, message, sizeof(message));
    snprintf(errstr, errstr_size, "cannot connect to %s: %s", c->shown_url, message);
    return strstr(why, "authentication failed") != NULL || strstr(why, "does not exist")
               ? TB_JDBC_FATAL
               : TB_JDBC_LOST;
}

static void pg_disconnect(tb_jdbc_conn_t *c);

/* Starts connecting (PQconnectStartParams); pg_connect_poll goes on. */
static tb_jdbc_conn_t *pg_connect(const tb_jdbc_settings_t *s, const tb_limits_t *limits,
                                  tb_jdbc_rc_t *rc, char *errstr, size_t errstr_size)
{
    const tb_jdbc_url_t *url = &s->url;
    const char *keywords[64], *values[64];
    char user_timeout_ms[24];
    size_t n = 0;
    (void)limits; /* a server, not a file */
    for (size_t i = 0; i < url->count && n < 58 - TB_PG_WAIT_KEEPALIVE_KEYWORDS; i++) {
        /* connection.user and connection.password win over the URL's */
        if ((s->user != NULL && strcmp(url->keywords[i], "user") == 0) ||
            (s->password != NULL && strcmp(url->keywords[i], "password") == 0)) {
            continue;
        }
        keywords[n] = url->keywords[i];
        values[n++] = url->values[i];
    }
    if (s->user != NULL) {
        keywords[n] = "user";
        values[n++] = s->user;
    }
    if (s->password != NULL) {
        keywords[n] = "password";
        values[n++] = s->password;
    }
    keywords[n] = "fallback_application_name";
    values[n++] = "tributary";
    int socket_timeout_s =
        url->socket_timeout_s > 0 ? url->socket_timeout_s : SOCKET_TIMEOUT_S;
    snprintf(user_timeout_ms, sizeof(user_timeout_ms), "%d", socket_timeout_s * 1000);
    n = tb_pg_wait_keepalives(keywords, values, n, user_timeout_ms);
    keywords[n] = NULL;
    values[n] = NULL;

    tb_jdbc_conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        *rc = TB_JDBC_FATAL;
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    /* libpq leaves connect_timeout to its blocking wait: the attempt's
     * deadline is kept here */
    const char *timeout = tb_jdbc_url_get(url, "connect_timeout");
    long seconds = timeout != NULL ? strtol(timeout, NULL, 10) : CONNECT_TIMEOUT_S;
    c->deadline_ms =
        tb_monotonic_ms() + (seconds > 0 ? seconds : CONNECT_TIMEOUT_S) * 1000;
    c->shown_url = s->shown_url;
    c->socket_timeout_s = socket_timeout_s;
    c->stopping = s->stopping;
    c->polling = PGRES_POLLING_WRITING; /* as libpq says to begin */
    c->pg = PQconnectStartParams(keywords, values, 0);
    if (c->pg != NULL && PQstatus(c->pg) != CONNECTION_BAD) {
        return c;
    }
    *rc = connect_failed(c, errstr, errstr_size);
    pg_disconnect(c);
    return NULL;
}

/* Drives PQconnectPoll while the socket is ready, waiting for it at most
 * wait_ms in all. */
static tb_jdbc_rc_t pg_connect_poll(tb_jdbc_conn_t *c, int wait_ms, char *errstr,
                                    size_t errstr_size)
{
    int64_t step_end = tb_monotonic_ms() + wait_ms;
    switch (tb_pg_wait_connect(c->pg, &c->polling,
                               step_end < c->deadline_ms ? step_end : c->deadline_ms,
                               c->stopping)) {
    case TB_PG_WAIT_DONE:
        return TB_JDBC_OK;
    case TB_PG_WAIT_FAILED:
        return connect_failed(c, errstr, errstr_size);
    case TB_PG_WAIT_STOPPED:
        snprintf(errstr, errstr_size, "connecting to %s: the task is stopping",
                 c->shown_url);
        return TB_JDBC_LOST;
    case TB_PG_WAIT_EXPIRED:
        break;
    }
    if (tb_monotonic_ms() >= c->deadline_ms) {
        snprintf(errstr, errstr_size,
                 "cannot connect to %s: no answer within the connect timeout",
                 c->shown_url);
        return TB_JDBC_LOST;
    }
    snprintf(errstr, errstr_size, "connecting to %s: waiting for the server",
             c->shown_url);
    return TB_JDBC_PENDING;
}

static void pg_disconnect(tb_jdbc_conn_t *c)
{
    if (c != NULL) {
        for (size_t i = 0; i < PREPARED_MAX; i++) {
            free(c->prepared[i].sql);
        }
        PQfinish(c->pg);
        free(c);
    }
}

static tb_jdbc_rc_t classify(const char *state)
{
    if (state == NULL) {
        return TB_JDBC_LOST;
    }
    if (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0 ||
        strcmp(state, "42804") == 0) {
        return TB_JDBC_BAD_ROW;
    }
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0) {
        return TB_JDBC_LOST;
    }
    if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
        return TB_JDBC_CONFLICT;
    }
    return TB_JDBC_FATAL;
}

/* When a wait for the server that starts now gives up. */
static int64_t answer_deadline(const tb_jdbc_conn_t *c)
{
    return tb_monotonic_ms() + c->socket_timeout_s * 1000LL;
}

/* Whether a wait on c ended well; one that gave up (no answer in time, or
 * the task stopping) leaves c in the middle of a statement: lost for
 * good. */
static bool waited(tb_jdbc_conn_t *c, tb_pg_wait_rc_t rc)
{
    if (rc == TB_PG_WAIT_STOPPED && c->lost[0] == '\0') {
        snprintf(c->lost, sizeof(c->lost), "the task is stopping");
    } else if (rc == TB_PG_WAIT_EXPIRED && c->lost[0] == '\0') {
        snprintf(c->lost, sizeof(c->lost),
                 "no answer from the server within socketTimeout=%d s",
                 c->socket_timeout_s);
    }
    return rc == TB_PG_WAIT_DONE;
}

/* The answer to a statement sent on c (sent: what PQsend* returned),
 * waited for at most socketTimeout: its result (PQclear it), or NULL when
 * there is none (failed() says why). */
static PGresult *await(tb_jdbc_conn_t *c, int sent)
{
    tb_pg_wait_rc_t rc = TB_PG_WAIT_FAILED;
    PGresult *res = NULL;
    if (sent && c->lost[0] == '\0') {
        res = tb_pg_wait_result(c->pg, answer_deadline(c), c->stopping, &rc);
    }
    waited(c, rc);
    return res;
}

/* The result of a statement that was not what it wanted (res NULL: none):
 * its message and what it came to. */
static tb_jdbc_rc_t failed(tb_jdbc_conn_t *c, PGresult *res, char *errstr,
                           size_t errstr_size)
{
    if (c->lost[0] != '\0') {
        snprintf(errstr, errstr_size, "%s", c->lost);
        return TB_JDBC_LOST;
    }
    message_of(res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(c->pg), errstr,
               errstr_size);
    return PQstatus(c->pg) == CONNECTION_BAD
               ? TB_JDBC_LOST
               : classify(res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL);
}

/* The text of a non-text parameter, into buf. */
static const char *number_text(const tb_jdbc_param_t *p, char *buf, size_t size)
{
    if (p->kind == TB_JDBC_P_BOOL) {
        return p->i ? "true" : "false";
    }
    if (p->kind == TB_JDBC_P_INT) {
        snprintf(buf, size, "%lld", (long long)p->i);
    } else if (isnan(p->d)) {
        return "NaN";
    } else if (isinf(p->d)) {
        return p->d > 0 ? "Infinity" : "-Infinity";
    } else {
        snprintf(buf, size, "%.17g", p->d);
    }
    return buf;
}

#define NUMBER_TEXT 32

/* The name of sql prepared on c with n parameters: found, or prepared now
 * in the least recently used slot (whose statement is deallocated). NULL
 * with *failed the server's answer when preparing failed, or on no memory
 * (then *failed is NULL too, and the statement runs unnamed). */
static const char *prepared_name(tb_jdbc_conn_t *c, const char *sql, size_t n,
                                 PGresult **failed)
{
    prepared_t *slot = &c->prepared[0];
    *failed = NULL;
    c->uses++;
    for (size_t i = 0; i < PREPARED_MAX; i++) {
        prepared_t *p = &c->prepared[i];
        if (p->sql != NULL && strcmp(p->sql, sql) == 0) {
            p->used = c->uses;
            return p->name;
        }
        if (p->sql == NULL || (slot->sql != NULL && p->used < slot->used)) {
            slot = p;
        }
    }
    char *copy = strdup(sql);
    if (copy == NULL) {
        return NULL;
    }
    if (slot->sql != NULL) {
        char deallocate[48];
        snprintf(deallocate, sizeof(deallocate), "DEALLOCATE %s", slot->name);
        PQclear(await(c, PQsendQuery(c->pg, deallocate)));
        free(slot->sql);
        slot->sql = NULL;
    }
    char name[sizeof(slot->name)];
    snprintf(name, sizeof(name), "tb_%u", c->names++);
    PGresult *res = await(c, PQsendPrepare(c->pg, name, sql, (int)n, NULL));
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        free(copy);
        *failed = res;
        return NULL;
    }
    PQclear(res);
    *slot = (prepared_t){.sql = copy, .used = c->uses};
    memcpy(slot->name, name, sizeof(name));
    return slot->name;
}

static tb_jdbc_rc_t pg_exec(tb_jdbc_conn_t *c, const char *sql,
                            const tb_jdbc_param_t *params, size_t n, json_t **rows,
                            char *errstr, size_t errstr_size)
{
    const char **values = calloc(n + 1, sizeof(*values));
    int *lengths = calloc(n + 1, sizeof(*lengths));
    int *formats = calloc(n + 1, sizeof(*formats));
    char *numbers = malloc((n + 1) * NUMBER_TEXT);
    tb_jdbc_rc_t rc = TB_JDBC_FATAL;
    PGresult *res = NULL;
    if (values == NULL || lengths == NULL || formats == NULL || numbers == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const tb_jdbc_param_t *p = &params[i];
        switch (p->kind) {
        case TB_JDBC_P_NULL:
            break;
        case TB_JDBC_P_TEXT:
            values[i] = p->data;
            break;
        case TB_JDBC_P_BLOB:
            values[i] = p->len > 0 ? p->data : "";
            lengths[i] = (int)p->len;
            formats[i] = 1;
            break;
        default:
            values[i] = number_text(p, numbers + i * NUMBER_TEXT, NUMBER_TEXT);
            break;
        }
    }
    const char *name = n >= PREPARE_FROM ? prepared_name(c, sql, n, &res) : NULL;
    if (name != NULL) {
        res = await(
            c, PQsendQueryPrepared(c->pg, name, (int)n, values, lengths, formats, 0));
    } else if (res == NULL && c->lost[0] == '\0') {
        res = await(
            c, PQsendQueryParams(c->pg, sql, (int)n, NULL, values, lengths, formats, 0));
    }
    ExecStatusType status = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        rc = TB_JDBC_OK;
        if (rows != NULL) {
            *rows = json_array();
            for (int r = 0; r < PQntuples(res); r++) {
                json_t *row = json_array();
                for (int f = 0; f < PQnfields(res); f++) {
                    json_array_append_new(row, PQgetisnull(res, r, f)
                                                   ? json_null()
                                                   : json_string(PQgetvalue(res, r, f)));
                }
                json_array_append_new(*rows, row);
            }
        }
        goto done;
    }
    rc = failed(c, res, errstr, errstr_size);
done:
    PQclear(res);
    free(values);
    free(lengths);
    free(formats);
    free(numbers);
    return rc;
}

#define COPY_CHUNK 65536

/* One value in COPY's text format: \N for a null, backslash escapes. */
static void copy_value(tb_jdbc_sql_t *out, const tb_jdbc_param_t *p)
{
    char number[NUMBER_TEXT];
    static const char hex[] = "0123456789abcdef";
    switch (p->kind) {
    case TB_JDBC_P_NULL:
        tb_jdbc_sql_bytes(out, "\\N", 2);
        return;
    case TB_JDBC_P_BLOB:
        tb_jdbc_sql_bytes(out, "\\\\x", 3);
        for (size_t i = 0; i < p->len; i++) {
            unsigned char b = (unsigned char)p->data[i];
            char two[2] = {hex[b >> 4], hex[b & 15]};
            tb_jdbc_sql_bytes(out, two, 2);
        }
        return;
    case TB_JDBC_P_TEXT:
        break;
    default: {
        const char *text = number_text(p, number, sizeof(number));
        tb_jdbc_sql_bytes(out, text, strlen(text));
        return;
    }
    }
    size_t len = p->len > 0 ? p->len : strlen(p->data);
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        char c = p->data[i];
        const char *escape = c == '\\'   ? "\\\\"
                             : c == '\n' ? "\\n"
                             : c == '\r' ? "\\r"
                             : c == '\t' ? "\\t"
                                         : NULL;
        if (escape != NULL) {
            tb_jdbc_sql_bytes(out, p->data + from, i - from);
            tb_jdbc_sql_bytes(out, escape, 2);
            from = i + 1;
        }
    }
    tb_jdbc_sql_bytes(out, p->data + from, len - from);
}

static tb_jdbc_rc_t pg_copy(tb_jdbc_conn_t *c, const char *sql,
                            const struct tb_jdbc_row *const *rows, size_t n, char *errstr,
                            size_t errstr_size)
{
    PGresult *res = await(c, PQsendQuery(c->pg, sql));
    if (PQresultStatus(res) != PGRES_COPY_IN) {
        tb_jdbc_rc_t rc = failed(c, res, errstr, errstr_size);
        PQclear(res);
        return rc;
    }
    PQclear(res);
    res = NULL;
    tb_jdbc_sql_t buf = {0};
    bool sent = true;
    for (size_t r = 0; r < n && sent; r++) {
        for (size_t col = 0; col < rows[r]->count; col++) {
            if (col > 0) {
                tb_jdbc_sql_bytes(&buf, "\t", 1);
            }
            copy_value(&buf, &rows[r]->columns[col].param);
        }
        tb_jdbc_sql_bytes(&buf, "\n", 1);
        if (buf.failed) {
            break;
        }
        if (buf.len >= COPY_CHUNK || r + 1 == n) {
            sent = waited(c, tb_pg_wait_copy_data(c->pg, buf.data, (int)buf.len,
                                                  answer_deadline(c), c->stopping));
            buf.len = 0;
        }
    }
    bool complete = sent && !buf.failed;
    tb_jdbc_sql_free(&buf);
    if (c->lost[0] == '\0') {
        res = waited(c, tb_pg_wait_copy_end(c->pg, complete ? NULL : "out of memory",
                                            answer_deadline(c), c->stopping))
                  ? await(c, 1)
                  : NULL;
    }
    tb_jdbc_rc_t rc = TB_JDBC_OK;
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        rc = failed(c, res, errstr, errstr_size);
    }
    PQclear(res);
    if (rc == TB_JDBC_OK && !complete) {
        snprintf(errstr, errstr_size, "COPY failed: out of memory or connection lost");
        rc = PQstatus(c->pg) == CONNECTION_BAD ? TB_JDBC_LOST : TB_JDBC_FATAL;
    }
    return rc;
}

const tb_jdbc_dialect_t tb_jdbc_postgres = {
    .name = "PostgreSQL",
    .connect = pg_connect,
    .connect_poll = pg_connect_poll,
    .disconnect = pg_disconnect,
    .exec = pg_exec,
    .copy = pg_copy,
    .columns_sql = "SELECT column_name FROM information_schema.columns "
                   "WHERE table_schema = COALESCE($1, current_schema()) "
                   "AND table_name = $2",
    .column_type = tb_jdbc_pg_type,
    .begin = "BEGIN",
    .lock_rows = " FOR UPDATE",
    .param_prefix = '$',
    .max_params = 65535,
};
