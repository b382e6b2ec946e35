/*
 * jdbc_url.c - connection.url: JDBC's URLs of PostgreSQL and SQLite.
 *
 *   jdbc:postgresql://host[:port][,host2[:port2]...][/database][?k=v&...]
 *   jdbc:sqlite:path   (a file, file:... or :memory:)
 *
 * PostgreSQL's URL parameters are the JDBC driver's names; each maps to a
 * libpq keyword, and one without a libpq equivalent is refused by name
 * rather than ignored. Reasons never hold a password.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/jdbc/tb_jdbc.h"

#define PG_PREFIX "jdbc:postgresql:"
#define SQLITE_PREFIX "jdbc:sqlite:"

/* The JDBC driver's parameters and the libpq keyword each maps to. */
static const struct {
    const char *jdbc;
    const char *libpq;
} pg_params[] = {
    {"user", "user"},
    {"password", "password"},
    {"sslmode", "sslmode"},
    {"sslrootcert", "sslrootcert"},
    {"sslcert", "sslcert"},
    {"sslkey", "sslkey"},
    {"sslpassword", "sslpassword"},
    {"connectTimeout", "connect_timeout"},
    {"loginTimeout", "connect_timeout"},
    {"ApplicationName", "application_name"},
    {"options", "options"},
    {"targetServerType", "target_session_attrs"},
    {"gssEncMode", "gssencmode"},
    {"channelBinding", "channel_binding"},
};

static int add(tb_jdbc_url_t *url, const char *keyword, const char *value, size_t len)
{
    char **k = realloc(url->keywords, (url->count + 1) * sizeof(*k));
    if (k != NULL) {
        url->keywords = k;
    }
    char **v = realloc(url->values, (url->count + 1) * sizeof(*v));
    if (v != NULL) {
        url->values = v;
    }
    if (k == NULL || v == NULL) {
        return -1;
    }
    url->keywords[url->count] = strdup(keyword);
    url->values[url->count] = strndup(value, len);
    url->count++;
    return url->keywords[url->count - 1] != NULL && url->values[url->count - 1] != NULL
               ? 0
               : -1;
}

/* Sets keyword, replacing an earlier value. */
static int set(tb_jdbc_url_t *url, const char *keyword, const char *value)
{
    for (size_t i = 0; i < url->count; i++) {
        if (strcmp(url->keywords[i], keyword) == 0) {
            char *copy = strdup(value);
            if (copy == NULL) {
                return -1;
            }
            free(url->values[i]);
            url->values[i] = copy;
            return 0;
        }
    }
    return add(url, keyword, value, strlen(value));
}

const char *tb_jdbc_url_get(const tb_jdbc_url_t *url, const char *keyword)
{
    for (size_t i = 0; i < url->count; i++) {
        if (strcmp(url->keywords[i], keyword) == 0) {
            return url->values[i];
        }
    }
    return NULL;
}

void tb_jdbc_url_clear(tb_jdbc_url_t *url)
{
    for (size_t i = 0; i < url->count; i++) {
        free(url->keywords[i]);
        free(url->values[i]);
    }
    free(url->keywords);
    free(url->values);
    free(url->path);
    *url = (tb_jdbc_url_t){0};
}

/* Decodes %xx escapes of text[0..len) into a new string; NULL when one is
 * malformed. */
static char *decode(const char *text, size_t len)
{
    char *out = malloc(len + 1);
    size_t o = 0;
    for (size_t i = 0; out != NULL && i < len; i++) {
        if (text[i] != '%') {
            out[o++] = text[i];
            continue;
        }
        if (i + 2 >= len || !isxdigit((unsigned char)text[i + 1]) ||
            !isxdigit((unsigned char)text[i + 2])) {
            free(out);
            return NULL;
        }
        char hex[3] = {text[i + 1], text[i + 2], '\0'};
        out[o++] = (char)strtol(hex, NULL, 16);
        i += 2;
    }
    if (out != NULL) {
        out[o] = '\0';
    }
    return out;
}

/* One k=v parameter of a PostgreSQL URL. */
static int pg_param(tb_jdbc_url_t *url, const char *param, size_t len, bool *ssl,
                    char *reason, size_t reason_size)
{
    const char *eq = memchr(param, '=', len);
    size_t name_len = eq != NULL ? (size_t)(eq - param) : len;
    char *value = eq != NULL ? decode(eq + 1, len - name_len - 1) : strdup("");
    int rc = -1;
    if (value == NULL) {
        snprintf(reason, reason_size, "the parameter %.*s has a malformed %%-escape",
                 (int)name_len, param);
        return -1;
    }
    if (name_len == 3 && strncmp(param, "ssl", 3) == 0) {
        *ssl = strcasecmp(value, "true") == 0 || value[0] == '\0';
        free(value);
        return 0;
    }
    if (name_len == 13 && strncmp(param, "socketTimeout", 13) == 0) {
        /* the driver's bound on a wait for the server, in seconds; 0 (the
         * driver's "none") is refused: every statement is bounded here */
        char *end;
        long seconds = strtol(value, &end, 10);
        rc =
            value[0] != '\0' && *end == '\0' && seconds >= 1 && seconds <= 86400 ? 0 : -1;
        if (rc == 0) {
            url->socket_timeout_s = (int)seconds;
        } else {
            snprintf(reason, reason_size,
                     "socketTimeout=%s is not a number of seconds from 1 to 86400 (every "
                     "statement waits for the server at most that long)",
                     value);
        }
        free(value);
        return rc;
    }
    if (name_len == 13 && strncmp(param, "currentSchema", 13) == 0) {
        char *options = NULL;
        rc = asprintf(&options, "-c search_path=%s", value) < 0
                 ? -1
                 : set(url, "options", options);
        free(options);
        free(value);
        return rc;
    }
    for (size_t i = 0; i < sizeof(pg_params) / sizeof(pg_params[0]); i++) {
        if (strlen(pg_params[i].jdbc) == name_len &&
            strncmp(pg_params[i].jdbc, param, name_len) == 0) {
            rc = set(url, pg_params[i].libpq, value);
            free(value);
            return rc;
        }
    }
    free(value);
    snprintf(reason, reason_size,
             "the URL parameter '%.*s' is not supported (supported: user, password, "
             "ssl, sslmode, sslrootcert, sslcert, sslkey, sslpassword, connectTimeout, "
             "loginTimeout, socketTimeout, ApplicationName, options, currentSchema, "
             "targetServerType, gssEncMode, channelBinding)",
             (int)name_len, param);
    return -1;
}

/* host[:port][,host[:port]...] into libpq's host and port lists. */
static int pg_hosts(tb_jdbc_url_t *url, const char *text, size_t len, char *reason,
                    size_t reason_size)
{
    char hosts[1024] = "", ports[256] = "";
    size_t hl = 0, pl = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma != NULL ? comma : end;
        const char *host = p, *host_end, *port = NULL;
        if (*p == '[') { /* an IPv6 address */
            host = p + 1;
            host_end = memchr(p, ']', (size_t)(stop - p));
            if (host_end == NULL) {
                snprintf(reason, reason_size, "an IPv6 host lacks its closing ']'");
                return -1;
            }
            port = host_end + 1 < stop && host_end[1] == ':' ? host_end + 2 : NULL;
        } else {
            host_end = memchr(p, ':', (size_t)(stop - p));
            port = host_end != NULL ? host_end + 1 : NULL;
            host_end = host_end != NULL ? host_end : stop;
        }
        if (host_end == host) {
            snprintf(reason, reason_size, "the URL names no host");
            return -1;
        }
        size_t port_len = port != NULL ? (size_t)(stop - port) : 0;
        for (size_t i = 0; i < port_len; i++) {
            if (!isdigit((unsigned char)port[i]) || port_len > 5) {
                snprintf(reason, reason_size, "the port '%.*s' is not a number",
                         (int)port_len, port);
                return -1;
            }
        }
        hl += (size_t)snprintf(hosts + hl, sizeof(hosts) - hl, "%s%.*s", hl ? "," : "",
                               (int)(host_end - host), host);
        pl += (size_t)snprintf(ports + pl, sizeof(ports) - pl, "%s%.*s", pl ? "," : "",
                               port_len ? (int)port_len : 4, port_len ? port : "5432");
        if (hl >= sizeof(hosts) || pl >= sizeof(ports)) {
            snprintf(reason, reason_size, "the URL names too many hosts");
            return -1;
        }
        p = comma != NULL ? comma + 1 : end;
    }
    return set(url, "host", hosts) == 0 && set(url, "port", ports) == 0 ? 0 : -1;
}

static int parse_pg(const char *rest, tb_jdbc_url_t *url, char *reason,
                    size_t reason_size)
{
    if (strncmp(rest, "//", 2) != 0) {
        snprintf(reason, reason_size,
                 "expected jdbc:postgresql://host[:port]/database[?parameters]");
        return -1;
    }
    rest += 2;
    size_t authority = strcspn(rest, "/?");
    if (memchr(rest, '@', authority) != NULL) {
        snprintf(reason, reason_size,
                 "user information (user:password@) is not accepted in the URL: use "
                 "connection.user and connection.password");
        return -1;
    }
    if (pg_hosts(url, rest, authority, reason, reason_size) != 0) {
        return -1;
    }
    rest += authority;
    if (*rest == '/') {
        size_t n = strcspn(++rest, "?");
        char *db = decode(rest, n);
        int rc = db == NULL ? -1 : n > 0 ? set(url, "dbname", db) : 0;
        free(db);
        if (rc != 0) {
            snprintf(reason, reason_size, "the database name is malformed");
            return -1;
        }
        rest += n;
    }
    bool ssl = false;
    if (*rest == '?') {
        for (const char *p = rest + 1; *p != '\0';) {
            size_t n = strcspn(p, "&");
            if (n > 0 && pg_param(url, p, n, &ssl, reason, reason_size) != 0) {
                return -1;
            }
            p += n + (p[n] == '&');
        }
    }
    if (ssl && tb_jdbc_url_get(url, "sslmode") == NULL &&
        set(url, "sslmode", "require")) {
        return -1;
    }
    return 0;
}

int tb_jdbc_url_parse(const char *text, tb_jdbc_url_t *url, char *reason,
                      size_t reason_size)
{
    *url = (tb_jdbc_url_t){0};
    if (strncmp(text, PG_PREFIX, strlen(PG_PREFIX)) == 0) {
        url->kind = TB_JDBC_POSTGRES;
        if (parse_pg(text + strlen(PG_PREFIX), url, reason, reason_size) == 0) {
            return 0;
        }
        if (reason[0] == '\0') {
            snprintf(reason, reason_size, "out of memory");
        }
    } else if (strncmp(text, SQLITE_PREFIX, strlen(SQLITE_PREFIX)) == 0) {
        const char *path = text + strlen(SQLITE_PREFIX);
        url->kind = TB_JDBC_SQLITE;
        if (path[0] == '\0') {
            snprintf(reason, reason_size, "expected jdbc:sqlite:/path/to/database.db");
        } else if (strchr(path, '?') != NULL) {
            snprintf(reason, reason_size,
                     "parameters after '?' are not supported in a SQLite URL");
        } else if ((url->path = strdup(path)) != NULL) {
            return 0;
        }
    } else {
        snprintf(reason, reason_size,
                 "only jdbc:postgresql://... and jdbc:sqlite:... URLs are supported");
    }
    tb_jdbc_url_clear(url);
    return -1;
}

/* Whether a URL parameter's name says its value is a secret. */
static bool secret_name(const char *name, size_t len)
{
    static const char *const words[] = {"password", "secret", "token"};
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        size_t wl = strlen(words[w]);
        for (size_t i = 0; i + wl <= len; i++) {
            if (strncasecmp(name + i, words[w], wl) == 0) {
                return true;
            }
        }
    }
    return false;
}

void tb_jdbc_url_redact(const char *url, char *out, size_t out_size)
{
    size_t o = 0;
    const char *scheme = strstr(url, "//");
    const char *p = url;
    if (out_size == 0) {
        return;
    }
    /* user information before the host */
    if (scheme != NULL) {
        const char *host = scheme + 2;
        size_t authority = strcspn(host, "/?");
        const char *at = memchr(host, '@', authority);
        if (at != NULL) {
            o += (size_t)snprintf(out + o, out_size - o, "%.*s[hidden]",
                                  (int)(host - url), url);
            p = at;
        }
    }
    while (*p != '\0' && o + 1 < out_size) {
        out[o++] = *p;
        if (*p == '?' || *p == '&' || *p == ';') {
            const char *name = p + 1;
            size_t n = strcspn(name, "=&;");
            if (name[n] == '=' && secret_name(name, n)) {
                o += (size_t)snprintf(out + o, out_size - o, "%.*s=[hidden]", (int)n,
                                      name);
                p = name + n + 1 + strcspn(name + n + 1, "&;");
                continue;
            }
        }
        p++;
    }
    out[o < out_size ? o : out_size - 1] = '\0';
}

int tb_jdbc_url_check(const json_t *value, char *reason, size_t reason_size)
{
    tb_jdbc_url_t url;
    reason[0] = '\0';
    if (!json_is_string(value)) {
        return 0;
    }
    int rc = tb_jdbc_url_parse(json_string_value(value), &url, reason, reason_size);
    tb_jdbc_url_clear(&url);
    return rc;
}

int tb_jdbc_url_validate(const char *url, const char *key, json_t *errors,
                         tb_jdbc_kind_t *kind)
{
    char reason[512], shown[1024], message[1800];
    tb_jdbc_url_t parsed;
    if (url == NULL) {
        return -1;
    }
    int rc = tb_jdbc_url_parse(url, &parsed, reason, sizeof(reason));
    if (rc != 0) {
        tb_jdbc_url_redact(url, shown, sizeof(shown));
        snprintf(message, sizeof(message), "Invalid value %s for configuration %s: %s",
                 shown, key, reason);
        tb_config_error_add(errors, key, message);
    } else {
        *kind = parsed.kind;
    }
    tb_jdbc_url_clear(&parsed);
    return rc;
}
