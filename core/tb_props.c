#include "core/tb_props.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A growing byte buffer for one key or value. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
} buf_t;

static int buf_put(buf_t *b, char c)
{
    if (b->len + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        char *data = realloc(b->data, cap);
        if (data == NULL) {
            return -1;
        }
        b->data = data;
        b->cap = cap;
    }
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
    return 0;
}

/* Empties b, leaving a valid empty string in it. */
static int buf_reset(buf_t *b)
{
    b->len = 0;
    if (buf_put(b, '\0') != 0) {
        return -1;
    }
    b->len = 0;
    return 0;
}

static int buf_put_utf8(buf_t *b, unsigned cp)
{
    if (cp < 0x80) {
        return buf_put(b, (char)cp);
    }
    if (cp < 0x800) {
        return buf_put(b, (char)(0xC0 | (cp >> 6))) ||
               buf_put(b, (char)(0x80 | (cp & 0x3F)));
    }
    if (cp < 0x10000) {
        return buf_put(b, (char)(0xE0 | (cp >> 12))) ||
               buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3F))) ||
               buf_put(b, (char)(0x80 | (cp & 0x3F)));
    }
    return buf_put(b, (char)(0xF0 | (cp >> 18))) ||
           buf_put(b, (char)(0x80 | ((cp >> 12) & 0x3F))) ||
           buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3F))) ||
           buf_put(b, (char)(0x80 | (cp & 0x3F)));
}

/* Reads the input one logical character at a time, joining continued
 * lines, as Properties.LineReader does. */
typedef struct {
    const char *p;
    const char *end;
    int line;
} reader_t;

static bool at_eol(const reader_t *r)
{
    return r->p >= r->end || *r->p == '\n' || *r->p == '\r';
}

static void skip_eol(reader_t *r)
{
    if (r->p < r->end && *r->p == '\r') {
        r->p++;
    }
    if (r->p < r->end && *r->p == '\n') {
        r->p++;
    }
    r->line++;
}

static void skip_blanks(reader_t *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\f')) {
        r->p++;
    }
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Reads the 4 hex digits of a \u escape. */
static int read_hex4(reader_t *r, unsigned *cp)
{
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        int v = r->p < r->end ? hex_value(*r->p) : -1;
        if (v < 0) {
            return -1;
        }
        *cp = *cp * 16 + (unsigned)v;
        r->p++;
    }
    return 0;
}

/* Reads one escaped unit after a backslash into b. A backslash at the end
 * of a line continues the logical line. Returns -1 on a bad \u escape. */
static int read_escape(reader_t *r, buf_t *b)
{
    if (at_eol(r)) {
        skip_eol(r);
        skip_blanks(r);
        return 0;
    }
    char c = *r->p++;
    switch (c) {
    case 't':
        return buf_put(b, '\t');
    case 'n':
        return buf_put(b, '\n');
    case 'r':
        return buf_put(b, '\r');
    case 'f':
        return buf_put(b, '\f');
    case 'u': {
        unsigned cp, low;
        if (read_hex4(r, &cp) != 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) {
            return -1;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            /* a character beyond U+FFFF, as Java writes it: a UTF-16
             * surrogate pair; either half alone has no UTF-8 form */
            if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u') {
                return -1;
            }
            r->p += 2;
            if (read_hex4(r, &low) != 0 || low < 0xDC00 || low > 0xDFFF) {
                return -1;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        return buf_put_utf8(b, cp);
    }
    default:
        return buf_put(b, c);
    }
}

static bool is_key_end(char c)
{
    return c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f';
}

json_t *tb_props_parse(const char *text, size_t len, char *errstr, size_t errstr_size)
{
    reader_t r = {text, text + len, 1};
    json_t *props = json_object();
    buf_t key = {0}, value = {0};
    int line = 0;

    while (r.p < r.end) {
        skip_blanks(&r);
        if (at_eol(&r)) {
            skip_eol(&r);
            continue;
        }
        if (*r.p == '#' || *r.p == '!') {
            while (!at_eol(&r)) {
                r.p++;
            }
            continue;
        }
        line = r.line;
        if (buf_reset(&key) != 0 || buf_reset(&value) != 0) {
            goto no_memory;
        }
        while (!at_eol(&r) && !is_key_end(*r.p)) {
            char c = *r.p++;
            if ((c == '\\' ? read_escape(&r, &key) : buf_put(&key, c)) != 0) {
                goto bad_escape;
            }
        }
        skip_blanks(&r);
        if (!at_eol(&r) && (*r.p == '=' || *r.p == ':')) {
            r.p++;
            skip_blanks(&r);
        }
        while (!at_eol(&r)) {
            char c = *r.p++;
            if ((c == '\\' ? read_escape(&r, &value) : buf_put(&value, c)) != 0) {
                goto bad_escape;
            }
        }
        /* jansson refuses a key or value that is not UTF-8 */
        if (json_object_set_new(props, key.data, json_stringn(value.data, value.len)) !=
            0) {
            goto not_utf8;
        }
    }
    free(key.data);
    free(value.data);
    return props;

bad_escape:
    snprintf(errstr, errstr_size, "line %d: malformed \\uXXXX escape", line);
    goto fail;
not_utf8:
    snprintf(errstr, errstr_size, "line %d: the key or value is not valid UTF-8", line);
    goto fail;
no_memory:
    snprintf(errstr, errstr_size, "out of memory");
fail:
    free(key.data);
    free(value.data);
    json_decref(props);
    return NULL;
}

char *tb_file_read_all(const char *path, size_t *len, char *errstr, size_t errstr_size)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0, used = 0;

    if (f == NULL) {
        snprintf(errstr, errstr_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (used + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *grown = realloc(data, cap);
            if (grown == NULL) {
                snprintf(errstr, errstr_size, "%s: out of memory", path);
                goto fail;
            }
            data = grown;
        }
        size_t n = fread(data + used, 1, cap - used - 1, f);
        used += n;
        if (n == 0) {
            break;
        }
    }
    if (ferror(f)) {
        snprintf(errstr, errstr_size, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    data[used] = '\0';
    *len = used;
    return data;

fail:
    fclose(f);
    free(data);
    return NULL;
}

json_t *tb_props_load_file(const char *path, char *errstr, size_t errstr_size)
{
    size_t len;
    char reason[256];
    char *text = tb_file_read_all(path, &len, errstr, errstr_size);
    if (text == NULL) {
        return NULL;
    }
    json_t *props = tb_props_parse(text, len, reason, sizeof(reason));
    if (props == NULL) {
        snprintf(errstr, errstr_size, "%s: %s", path, reason);
    }
    free(text);
    return props;
}

/* Reads the regular file open at fd, at most max bytes, into a new
 * NUL-terminated buffer (its length in *len); NULL with errstr naming path. */
static char *read_regular(int fd, const char *path, size_t max, size_t *len, char *errstr,
                          size_t errstr_size)
{
    struct stat st;
    char *data = NULL;
    size_t used = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(errstr, errstr_size,
                 "%s is not a regular file: only regular files are read", path);
        return NULL;
    }
    if ((unsigned long long)st.st_size > max ||
        (data = malloc((size_t)st.st_size + 2)) == NULL) {
        snprintf(errstr, errstr_size, "%s is larger than %zu bytes", path, max);
        return NULL;
    }
    /* one byte more than its size: a file that grew meanwhile is noticed */
    for (ssize_t n = 1; n > 0 && used <= (size_t)st.st_size; used += (size_t)n) {
        n = read(fd, data + used, (size_t)st.st_size + 1 - used);
        if (n < 0) {
            snprintf(errstr, errstr_size, "%s: %s", path, strerror(errno));
            explicit_bzero(data, used);
            free(data);
            return NULL;
        }
    }
    if (used > (size_t)st.st_size) {
        snprintf(errstr, errstr_size, "%s grew while it was read", path);
        explicit_bzero(data, used);
        free(data);
        return NULL;
    }
    data[used] = '\0';
    *len = used;
    return data;
}

json_t *tb_props_load_regular(const char *path, size_t max, char *errstr,
                              size_t errstr_size)
{
    char reason[256];
    size_t len = 0;
    json_t *props = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(errstr, errstr_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = read_regular(fd, path, max, &len, errstr, errstr_size);
    close(fd);
    if (text != NULL &&
        (props = tb_props_parse(text, len, reason, sizeof(reason))) == NULL) {
        snprintf(errstr, errstr_size, "%s: %s", path, reason);
    }
    if (text != NULL) {
        explicit_bzero(text, len);
    }
    free(text);
    return props;
}

/* Writes s escaped for a properties file: every separator and comment
 * character of a key, and a value's leading blank, are escaped. */
static void write_escaped(FILE *f, const char *s, bool key)
{
    for (const char *c = s; *c != '\0'; c++) {
        switch (*c) {
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\f':
            fputs("\\f", f);
            break;
        case '=':
        case ':':
        case '#':
        case '!':
        case ' ':
            if (key || (*c == ' ' && c == s)) {
                fputc('\\', f);
            }
            fputc(*c, f);
            break;
        default:
            fputc(*c, f);
        }
    }
}

/* Syncs the directory that holds path, so that a file renamed into it
 * survives power loss too, not only a crash of the process. */
static int sync_parent_dir(const char *path, char *errstr, size_t errstr_size)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof(dir), ".");
    } else {
        slash[slash == dir ? 1 : 0] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(errstr, errstr_size, "%s: cannot sync the directory: %s", dir,
                 strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    close(fd);
    return 0;
}

/* The properties file at path, or an empty map when there is none. */
static json_t *load_or_empty(const char *path, char *errstr, size_t errstr_size)
{
    return access(path, F_OK) == 0 ? tb_props_load_file(path, errstr, errstr_size)
                                   : json_object();
}

/* Replaces the file at path atomically with props (readable by its owner
 * only). Returns -1 with errstr naming the path on failure. */
static int write_file(const char *path, const json_t *props, char *errstr,
                      size_t errstr_size)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        snprintf(errstr, errstr_size, "%s: %s", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)props, k, v) {
        write_escaped(f, k, true);
        fputc('=', f);
        write_escaped(f, json_string_value(v), false);
        fputc('\n', f);
    }
    bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(errstr, errstr_size, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return sync_parent_dir(path, errstr, errstr_size);
}

int tb_props_file_set(const char *path, const char *key, const char *value, char *errstr,
                      size_t errstr_size)
{
    json_t *props = load_or_empty(path, errstr, errstr_size);
    if (props == NULL) {
        return -1;
    }
    json_object_set_new(props, key, json_string(value));
    int rc = write_file(path, props, errstr, errstr_size);
    json_decref(props);
    return rc;
}

int tb_props_file_remove_prefix(const char *path, const char *prefix, char *errstr,
                                size_t errstr_size)
{
    json_t *props = load_or_empty(path, errstr, errstr_size);
    const char *k;
    json_t *v;
    void *tmp;
    size_t removed = 0;
    if (props == NULL) {
        return -1;
    }
    json_object_foreach_safe (props, tmp, k, v) {
        if (strncmp(k, prefix, strlen(prefix)) == 0) {
            json_object_del(props, k);
            removed++;
        }
    }
    int rc = removed > 0 ? write_file(path, props, errstr, errstr_size) : 0;
    json_decref(props);
    return rc;
}
