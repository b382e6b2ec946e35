/*
 * jdbc_writer.c - one put() in one transaction: its rows, in their order,
 * and the next offset of every partition it read from, in the offsets
 * table.
 *
 * Consecutive rows of one shape (table, columns, insert or delete) share
 * statements: INSERT with as many rows as batch.size and the database's
 * parameter limit allow (upsert adds ON CONFLICT, and writes only the last
 * row of each key, since one statement cannot touch a row twice);
 * UPDATE and DELETE take one row each. When the database refuses a row,
 * the transaction is rolled back and made again with a savepoint around
 * each row, so that only the rows at fault are left out.
 *
 * A failed record (one that is no row, or that the database refused) is
 * given to the runtime's record_failed before the commit. Under
 * errors.tolerance=none the put stops at the first one: the records before
 * it are committed with their offsets, none from it on, so that the task
 * fails and its restart reads that record again. Under all, the commit
 * waits until the failed records are in the dead letter queue, and writes
 * nothing when they are not: the offsets table never moves past a record
 * that is neither in the table nor in the queue (one whose commit answer
 * was lost may reach the queue twice).
 *
 * The transaction first locks the offsets of its partitions (claiming a row
 * of -1 for a partition written the first time, so that there is a row to
 * lock) and skips the rows below them: a put after a commit whose answer
 * was lost, or the records a task that lost its partition still had, are
 * not written twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/jdbc/tb_jdbc.h"
#include "core/tb_time.h"

#define OFFSETS "\"" TB_JDBC_OFFSETS_TABLE "\""

/* One partition of a put: where its records end, and what was stored. */
typedef struct {
    const char *topic;
    int32_t partition;
    int64_t next;   /* after the put's last record */
    int64_t stored; /* next offset in the table; -1: none */
} part_t;

typedef struct {
    tb_jdbc_writer_t *w;
    const tb_sink_record_t *records;
    size_t count;
    tb_jdbc_row_t *rows;
    size_t row_count;
    part_t *parts;
    size_t part_count;
    /* records[0..end) are written: under errors.tolerance=none, the first
     * failed record, else count */
    size_t end;
    size_t written; /* rows written by the transaction */
    bool careful;   /* each row in a savepoint of its own */
    char *errstr;
    size_t errstr_size;
} put_t;

int tb_jdbc_writer_fail(tb_jdbc_writer_t *w, size_t record, const char *reason)
{
    if (w->failure_count == w->failure_cap) {
        size_t cap = w->failure_cap ? w->failure_cap * 2 : 16;
        tb_jdbc_failure_t *grown = realloc(w->failures, cap * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        w->failures = grown;
        w->failure_cap = cap;
    }
    tb_jdbc_failure_t *f = &w->failures[w->failure_count++];
    f->record = record;
    snprintf(f->reason, sizeof(f->reason), "%s", reason);
    return 0;
}

void tb_jdbc_writer_clear(tb_jdbc_writer_t *w)
{
    free(w->failures);
    w->failures = NULL;
    w->failure_count = w->failure_cap = 0;
    tb_jdbc_ddl_forget(&w->tables);
}

/* Counts a statement that started at started (tb_monotonic_us). */
static void count_statement(const put_t *p, int64_t started)
{
    tb_series_add(p->w->metrics->statements, 1);
    tb_series_observe(p->w->metrics->statement_seconds,
                      (double)(tb_monotonic_us() - started) / 1e6);
}

static tb_jdbc_rc_t exec(put_t *p, const char *sql, const tb_jdbc_param_t *params,
                         size_t n, json_t **rows)
{
    if (sql == NULL) {
        snprintf(p->errstr, p->errstr_size, "out of memory");
        return TB_JDBC_FATAL;
    }
    int64_t started = tb_monotonic_us();
    tb_jdbc_rc_t rc =
        p->w->dialect->exec(p->w->conn, sql, params, n, rows, p->errstr, p->errstr_size);
    count_statement(p, started);
    return rc;
}

static void param_ref(tb_jdbc_sql_t *sql, const tb_jdbc_writer_t *w, size_t n)
{
    tb_jdbc_sql_append(sql, "%c%zu", w->dialect->param_prefix, n);
}

/* Reads the stored offsets of the connector, locking those of parts (all
 * when parts is NULL), into each part's stored; fill, when not NULL, also
 * gets them. */
static tb_jdbc_rc_t read_offsets(tb_jdbc_writer_t *w, part_t *parts, size_t count,
                                 bool lock, tb_sink_partition_t *fill, size_t fill_count,
                                 char *errstr, size_t errstr_size)
{
    tb_jdbc_sql_t sql = {0};
    tb_jdbc_param_t *params = calloc(count * 2 + 1, sizeof(*params));
    size_t n = 0;
    tb_jdbc_rc_t rc = TB_JDBC_FATAL;
    if (params == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return rc;
    }
    params[n++] = (tb_jdbc_param_t){
        .kind = TB_JDBC_P_TEXT, .data = w->connector, .len = strlen(w->connector)};
    tb_jdbc_sql_append(&sql, "SELECT topic, kafka_partition, next_offset FROM " OFFSETS
                             " WHERE connector = ");
    param_ref(&sql, w, 1);
    for (size_t i = 0; i < count; i++) {
        tb_jdbc_sql_append(&sql, i == 0 ? " AND (" : " OR ");
        params[n++] = (tb_jdbc_param_t){.kind = TB_JDBC_P_TEXT,
                                        .data = parts[i].topic,
                                        .len = strlen(parts[i].topic)};
        tb_jdbc_sql_append(&sql, "(topic = ");
        param_ref(&sql, w, n);
        params[n++] = (tb_jdbc_param_t){.kind = TB_JDBC_P_INT, .i = parts[i].partition};
        tb_jdbc_sql_append(&sql, " AND kafka_partition = ");
        param_ref(&sql, w, n);
        tb_jdbc_sql_append(&sql, i + 1 == count ? "))" : ")");
    }
    tb_jdbc_sql_append(&sql, "%s", lock ? w->dialect->lock_rows : "");
    json_t *rows = NULL;
    if (sql.data == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    } else {
        rc = w->dialect->exec(w->conn, sql.data, params, n, &rows, errstr, errstr_size);
    }
    size_t i;
    json_t *row;
    json_array_foreach (rc == TB_JDBC_OK ? rows : NULL, i, row) {
        const char *topic = json_string_value(json_array_get(row, 0));
        long partition = strtol(json_string_value(json_array_get(row, 1)), NULL, 10);
        long long next = strtoll(json_string_value(json_array_get(row, 2)), NULL, 10);
        for (size_t k = 0; k < count; k++) {
            if (parts[k].partition == partition && strcmp(parts[k].topic, topic) == 0) {
                parts[k].stored = next;
            }
        }
        for (size_t k = 0; k < fill_count; k++) {
            if (fill[k].partition == partition && strcmp(fill[k].topic, topic) == 0) {
                fill[k].offset = next;
            }
        }
    }
    json_decref(rows);
    free(params);
    tb_jdbc_sql_free(&sql);
    return rc;
}

tb_jdbc_rc_t tb_jdbc_offsets_read(tb_jdbc_writer_t *w, tb_sink_partition_t *parts,
                                  size_t count, char *errstr, size_t errstr_size)
{
    return read_offsets(w, NULL, 0, false, parts, count, errstr, errstr_size);
}

/* The topic record was read from (its offset is of that topic). */
static const char *source_topic(const tb_sink_record_t *r)
{
    return r->original_topic != NULL ? r->original_topic : r->topic;
}

/* The partitions of the put's records. */
static int collect_parts(put_t *p)
{
    p->parts = calloc(p->count + 1, sizeof(*p->parts));
    if (p->parts == NULL) {
        return -1;
    }
    for (size_t i = 0; i < p->count; i++) {
        const tb_sink_record_t *r = &p->records[i];
        part_t *part = NULL;
        for (size_t k = 0; k < p->part_count && part == NULL; k++) {
            if (p->parts[k].partition == r->partition &&
                strcmp(p->parts[k].topic, source_topic(r)) == 0) {
                part = &p->parts[k];
            }
        }
        if (part == NULL) {
            part = &p->parts[p->part_count++];
            *part = (part_t){
                .topic = source_topic(r), .partition = r->partition, .stored = -1};
        }
    }
    return 0;
}

/* The offset after the last record below p->end of each partition (0 for
 * one that has none). */
static void set_next(put_t *p)
{
    for (size_t k = 0; k < p->part_count; k++) {
        p->parts[k].next = 0;
    }
    for (size_t i = 0; i < p->end; i++) {
        const tb_sink_record_t *r = &p->records[i];
        for (size_t k = 0; k < p->part_count; k++) {
            part_t *part = &p->parts[k];
            if (part->partition == r->partition &&
                strcmp(part->topic, source_topic(r)) == 0 && r->offset + 1 > part->next) {
                part->next = r->offset + 1;
            }
        }
    }
}

/* Whether record i was written by an earlier transaction. */
static bool written_before(const put_t *p, size_t i)
{
    const tb_sink_record_t *r = &p->records[i];
    for (size_t k = 0; k < p->part_count; k++) {
        if (p->parts[k].partition == r->partition &&
            strcmp(p->parts[k].topic, source_topic(r)) == 0) {
            return r->offset < p->parts[k].stored;
        }
    }
    return false;
}

/* ---- statements ---- */

static void column_list(tb_jdbc_sql_t *sql, const tb_jdbc_row_t *row, size_t from,
                        size_t to, bool quote)
{
    for (size_t i = from; i < to; i++) {
        if (i > from) {
            tb_jdbc_sql_append(sql, ",");
        }
        tb_jdbc_sql_identifier(sql, row->columns[i].name, quote);
    }
}

/* INSERT (or upsert) of rows[0..n), all of one shape. */
static tb_jdbc_rc_t insert_rows(put_t *p, tb_jdbc_row_t *const *rows, size_t n)
{
    const tb_jdbc_settings_t *s = p->w->settings;
    const tb_jdbc_row_t *shape = rows[0];
    size_t cols = shape->count;
    tb_jdbc_param_t *params = malloc((n * cols + 1) * sizeof(*params));
    tb_jdbc_sql_t sql = {0};
    size_t k = 0;
    if (params == NULL) {
        snprintf(p->errstr, p->errstr_size, "out of memory");
        return TB_JDBC_FATAL;
    }
    tb_jdbc_sql_append(&sql, "INSERT INTO ");
    tb_jdbc_sql_identifier(&sql, shape->table, s->quote);
    tb_jdbc_sql_append(&sql, " (");
    column_list(&sql, shape, 0, cols, s->quote);
    tb_jdbc_sql_append(&sql, ") VALUES ");
    for (size_t r = 0; r < n; r++) {
        tb_jdbc_sql_append(&sql, r > 0 ? ",(" : "(");
        for (size_t c = 0; c < cols; c++) {
            params[k++] = rows[r]->columns[c].param;
            if (c > 0) {
                tb_jdbc_sql_append(&sql, ",");
            }
            param_ref(&sql, p->w, k);
        }
        tb_jdbc_sql_append(&sql, ")");
    }
    if (s->insert_mode == TB_JDBC_UPSERT) {
        tb_jdbc_sql_append(&sql, " ON CONFLICT (");
        column_list(&sql, shape, 0, shape->key_count, s->quote);
        tb_jdbc_sql_append(&sql,
                           cols > shape->key_count ? ") DO UPDATE SET " : ") DO NOTHING");
        for (size_t c = shape->key_count; c < cols; c++) {
            if (c > shape->key_count) {
                tb_jdbc_sql_append(&sql, ",");
            }
            tb_jdbc_sql_identifier(&sql, shape->columns[c].name, s->quote);
            tb_jdbc_sql_append(&sql, "=EXCLUDED.");
            tb_jdbc_sql_identifier(&sql, shape->columns[c].name, s->quote);
        }
    }
    tb_jdbc_rc_t rc = exec(p, sql.data, params, k, NULL);
    tb_jdbc_sql_free(&sql);
    free(params);
    return rc;
}

/* Inserts rows[0..n), all of one shape, with the dialect's COPY. */
static tb_jdbc_rc_t copy_rows(put_t *p, tb_jdbc_row_t *const *rows, size_t n)
{
    const tb_jdbc_settings_t *s = p->w->settings;
    tb_jdbc_sql_t sql = {0};
    tb_jdbc_sql_append(&sql, "COPY ");
    tb_jdbc_sql_identifier(&sql, rows[0]->table, s->quote);
    tb_jdbc_sql_append(&sql, " (");
    column_list(&sql, rows[0], 0, rows[0]->count, s->quote);
    tb_jdbc_sql_append(&sql, ") FROM STDIN");
    if (sql.data == NULL) {
        snprintf(p->errstr, p->errstr_size, "out of memory");
        return TB_JDBC_FATAL;
    }
    int64_t started = tb_monotonic_us();
    tb_jdbc_rc_t rc =
        p->w->dialect->copy(p->w->conn, sql.data, (const struct tb_jdbc_row *const *)rows,
                            n, p->errstr, p->errstr_size);
    count_statement(p, started);
    tb_jdbc_sql_free(&sql);
    return rc;
}

/* UPDATE or DELETE of one row by its key. */
static tb_jdbc_rc_t keyed_row(put_t *p, const tb_jdbc_row_t *row)
{
    const tb_jdbc_settings_t *s = p->w->settings;
    tb_jdbc_param_t *params = malloc((row->count + 1) * sizeof(*params));
    tb_jdbc_sql_t sql = {0};
    size_t k = 0;
    if (params == NULL) {
        snprintf(p->errstr, p->errstr_size, "out of memory");
        return TB_JDBC_FATAL;
    }
    tb_jdbc_sql_append(&sql, row->is_delete ? "DELETE FROM " : "UPDATE ");
    tb_jdbc_sql_identifier(&sql, row->table, s->quote);
    for (size_t c = row->key_count; !row->is_delete && c < row->count; c++) {
        tb_jdbc_sql_append(&sql, c == row->key_count ? " SET " : ",");
        tb_jdbc_sql_identifier(&sql, row->columns[c].name, s->quote);
        params[k++] = row->columns[c].param;
        tb_jdbc_sql_append(&sql, "=");
        param_ref(&sql, p->w, k);
    }
    for (size_t c = 0; c < row->key_count; c++) {
        tb_jdbc_sql_append(&sql, c == 0 ? " WHERE " : " AND ");
        tb_jdbc_sql_identifier(&sql, row->columns[c].name, s->quote);
        params[k++] = row->columns[c].param;
        tb_jdbc_sql_append(&sql, "=");
        param_ref(&sql, p->w, k);
    }
    tb_jdbc_rc_t rc = exec(p, sql.data, params, k, NULL);
    tb_jdbc_sql_free(&sql);
    free(params);
    return rc;
}

/* A hash of a row's key values, to find a key twice in one upsert. */
static uint64_t key_hash(const tb_jdbc_row_t *row)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t c = 0; c < row->key_count; c++) {
        const tb_jdbc_param_t *v = &row->columns[c].param;
        const unsigned char *bytes = (const unsigned char *)v->data;
        size_t len = v->data != NULL ? v->len : sizeof(v->i);
        if (v->data == NULL) {
            bytes = (const unsigned char *)&v->i;
        }
        for (size_t i = 0; i < len; i++) {
            h = (h ^ bytes[i]) * 1099511628211ull;
        }
        h = (h ^ (uint64_t)v->kind ^ 0xff) * 1099511628211ull;
    }
    return h;
}

/* Whether a and b, of one shape, have the same key (a null is like no
 * other value, as in SQL). */
static bool same_key(const tb_jdbc_row_t *a, const tb_jdbc_row_t *b)
{
    for (size_t c = 0; c < a->key_count; c++) {
        const tb_jdbc_param_t *x = &a->columns[c].param;
        const tb_jdbc_param_t *y = &b->columns[c].param;
        if (x->kind != y->kind || x->kind == TB_JDBC_P_NULL) {
            return false;
        }
        bool same = x->kind == TB_JDBC_P_DOUBLE ? x->d == y->d : x->i == y->i;
        if (x->kind == TB_JDBC_P_TEXT || x->kind == TB_JDBC_P_BLOB) {
            same = x->len == y->len &&
                   (x->len == 0 || memcmp(x->data, y->data, x->len) == 0);
        }
        if (!same) {
            return false;
        }
    }
    return true;
}

/* The last row of each key among rows[0..n), in their order, into kept;
 * returns how many there are, or 0 on no memory. Upserting only those
 * leaves the table as upserting them all in turn would. */
static size_t last_per_key(tb_jdbc_row_t *const *rows, size_t n, tb_jdbc_row_t **kept)
{
    size_t slots = 16;
    while (slots < n * 2) {
        slots *= 2;
    }
    size_t *table = calloc(slots, sizeof(*table)); /* a row's index + 1, or 0 */
    bool *last = calloc(n, sizeof(*last));
    size_t m = 0;
    for (size_t i = n; i-- > 0 && table != NULL && last != NULL;) {
        size_t slot = (size_t)key_hash(rows[i]) & (slots - 1);
        while (table[slot] != 0 && !same_key(rows[table[slot] - 1], rows[i])) {
            slot = (slot + 1) & (slots - 1);
        }
        if (table[slot] == 0) {
            table[slot] = i + 1;
            last[i] = true;
        }
    }
    for (size_t i = 0; i < n && table != NULL && last != NULL; i++) {
        if (last[i]) {
            kept[m++] = rows[i];
        }
    }
    free(table);
    free(last);
    return m;
}

/* Writes rows[0..n) of one shape, not careful: INSERTs of up to the batch
 * size (upserts of the last row of each key), or one statement per keyed
 * row. */
static tb_jdbc_rc_t write_run(put_t *p, tb_jdbc_row_t *const *rows, size_t n)
{
    const tb_jdbc_settings_t *s = p->w->settings;
    if (rows[0]->is_delete || s->insert_mode == TB_JDBC_UPDATE) {
        tb_jdbc_rc_t rc = TB_JDBC_OK;
        for (size_t i = 0; i < n && rc == TB_JDBC_OK; i++) {
            if (rows[i]->is_delete || rows[i]->count > rows[i]->key_count) {
                rc = keyed_row(p, rows[i]);
            }
        }
        return rc;
    }
    if (s->insert_mode == TB_JDBC_INSERT && p->w->dialect->copy != NULL) {
        return copy_rows(p, rows, n);
    }
    size_t per = p->w->dialect->max_params / rows[0]->count;
    per = per < s->batch_size ? per : s->batch_size;
    per = per > 0 ? per : 1;
    tb_jdbc_row_t **kept = NULL;
    if (s->insert_mode == TB_JDBC_UPSERT) {
        kept = malloc(n * sizeof(*kept));
        n = kept != NULL ? last_per_key(rows, n, kept) : 0;
        if (n == 0) {
            free(kept);
            snprintf(p->errstr, p->errstr_size, "out of memory");
            return TB_JDBC_FATAL;
        }
        rows = kept;
    }
    tb_jdbc_rc_t rc = TB_JDBC_OK;
    for (size_t first = 0; first < n && rc == TB_JDBC_OK; first += per) {
        rc = insert_rows(p, rows + first, n - first < per ? n - first : per);
    }
    free(kept);
    return rc;
}

/* One row in a savepoint of its own: a refused row is rolled back alone
 * and added to the failures; under errors.tolerance=none the put stops
 * there. */
static tb_jdbc_rc_t write_careful(put_t *p, tb_jdbc_row_t *row)
{
    tb_jdbc_rc_t rc = exec(p, "SAVEPOINT tb_row", NULL, 0, NULL);
    tb_jdbc_row_t *one[1] = {row};
    if (rc == TB_JDBC_OK) {
        rc = write_run(p, one, 1);
    }
    if (rc == TB_JDBC_BAD_ROW) {
        char reason[512];
        snprintf(reason, sizeof(reason), "%s: %s", row->table, p->errstr);
        if (tb_jdbc_writer_fail(p->w, row->record, reason) != 0) {
            snprintf(p->errstr, p->errstr_size, "out of memory");
            return TB_JDBC_FATAL;
        }
        if (!p->w->ctx->tolerates_errors) {
            p->end = row->record;
        }
        return exec(p, "ROLLBACK TO SAVEPOINT tb_row", NULL, 0, NULL);
    }
    if (rc == TB_JDBC_OK) {
        p->written++;
        rc = exec(p, "RELEASE SAVEPOINT tb_row", NULL, 0, NULL);
    }
    return rc;
}

/* Writes the offsets of the put's partitions: each one's next offset, or
 * with claim, a row of -1 for each partition that has none yet, so that a
 * transaction that writes a partition for the first time holds a row to
 * lock, as the others do (a second one waits for it, then sees its
 * offset). */
static tb_jdbc_rc_t write_offsets(put_t *p, bool claim)
{
    tb_jdbc_param_t *params = calloc(p->part_count * 4 + 1, sizeof(*params));
    tb_jdbc_sql_t sql = {0};
    size_t k = 0;
    if (params == NULL) {
        snprintf(p->errstr, p->errstr_size, "out of memory");
        return TB_JDBC_FATAL;
    }
    tb_jdbc_sql_append(&sql, "INSERT INTO " OFFSETS
                             " (connector, topic, kafka_partition, next_offset) VALUES ");
    for (size_t i = 0; i < p->part_count; i++) {
        const part_t *part = &p->parts[i];
        if (claim && part->stored >= 0) {
            continue;
        }
        params[k++] = (tb_jdbc_param_t){.kind = TB_JDBC_P_TEXT,
                                        .data = p->w->connector,
                                        .len = strlen(p->w->connector)};
        params[k++] = (tb_jdbc_param_t){
            .kind = TB_JDBC_P_TEXT, .data = part->topic, .len = strlen(part->topic)};
        params[k++] = (tb_jdbc_param_t){.kind = TB_JDBC_P_INT, .i = part->partition};
        params[k++] = (tb_jdbc_param_t){.kind = TB_JDBC_P_INT,
                                        .i = claim                       ? -1
                                             : part->next > part->stored ? part->next
                                                                         : part->stored};
        tb_jdbc_sql_append(&sql, k > 4 ? ",(" : "(");
        for (size_t j = k - 3; j <= k; j++) {
            param_ref(&sql, p->w, j);
            tb_jdbc_sql_append(&sql, j < k ? "," : ")");
        }
    }
    tb_jdbc_sql_append(&sql, claim ? " ON CONFLICT DO NOTHING"
                                   : " ON CONFLICT (connector, topic, kafka_partition) "
                                     "DO UPDATE SET next_offset = EXCLUDED.next_offset");
    tb_jdbc_rc_t rc = k == 0 ? TB_JDBC_OK : exec(p, sql.data, params, k, NULL);
    tb_jdbc_sql_free(&sql);
    free(params);
    return rc;
}

/* Locks the offsets of the put's partitions and reads them into their
 * stored (-1: none). */
static tb_jdbc_rc_t lock_offsets(put_t *p)
{
    bool unclaimed = false;
    for (size_t k = 0; k < p->part_count; k++) {
        p->parts[k].stored = -1;
    }
    tb_jdbc_rc_t rc = read_offsets(p->w, p->parts, p->part_count, true, NULL, 0,
                                   p->errstr, p->errstr_size);
    for (size_t k = 0; k < p->part_count; k++) {
        unclaimed = unclaimed || p->parts[k].stored < 0;
    }
    if (rc == TB_JDBC_OK && unclaimed) { /* the first write of a partition */
        rc = write_offsets(p, true);
        if (rc == TB_JDBC_OK) {
            rc = read_offsets(p->w, p->parts, p->part_count, true, NULL, 0, p->errstr,
                              p->errstr_size);
        }
    }
    return rc;
}

/* Where the put stops: under errors.tolerance=none, at the first record
 * (not written before) that could not be a row, among the failures[0..
 * built) build_rows found, in their order. */
static size_t first_end(const put_t *p, size_t built)
{
    for (size_t i = 0; i < built && !p->w->ctx->tolerates_errors; i++) {
        if (!written_before(p, p->w->failures[i].record)) {
            return p->w->failures[i].record;
        }
    }
    return p->count;
}

/* Gives the failed records up to p->end (that one included: under none,
 * it is the one that fails the task) to record_failed, in their order
 * (merging failures[0..built), build_rows', and those the database
 * refused after them), except those written before (given then); under
 * errors.tolerance=all, then waits until they are in the dead letter
 * queue. */
static tb_jdbc_rc_t report_failures(put_t *p, size_t built)
{
    const tb_task_context_t *ctx = p->w->ctx;
    const tb_jdbc_failure_t *f = p->w->failures;
    size_t count = p->w->failure_count;
    size_t reported = 0;
    for (size_t a = 0, b = built; a < built || b < count;) {
        size_t i = b >= count || (a < built && f[a].record < f[b].record) ? a++ : b++;
        if (f[i].record <= p->end && !written_before(p, f[i].record)) {
            ctx->record_failed(ctx->runtime, &p->records[f[i].record], f[i].reason);
            reported++;
        }
    }
    char reason[512];
    if (reported > 0 && ctx->tolerates_errors &&
        ctx->failed_delivered(ctx->runtime, reason, sizeof(reason)) != 0) {
        snprintf(p->errstr, p->errstr_size,
                 "nothing of the put is committed, since its failed records are not in "
                 "the dead letter queue: %s",
                 reason);
        return TB_JDBC_FATAL;
    }
    return TB_JDBC_OK;
}

/* The transaction, careful or not; failures[0..built) are build_rows'. */
static tb_jdbc_rc_t transaction(put_t *p, size_t built)
{
    tb_jdbc_writer_t *w = p->w;
    w->failure_count = built;
    w->skipped = 0;
    p->written = 0;
    tb_jdbc_rc_t rc = exec(p, w->dialect->begin, NULL, 0, NULL);
    if (rc == TB_JDBC_OK) {
        rc = lock_offsets(p);
        p->end = first_end(p, built);
    }
    tb_jdbc_row_t **run =
        rc == TB_JDBC_OK ? malloc((p->row_count + 1) * sizeof(*run)) : NULL;
    if (rc == TB_JDBC_OK && run == NULL) {
        snprintf(p->errstr, p->errstr_size, "out of memory");
        rc = TB_JDBC_FATAL;
    }
    size_t n = 0;
    /* rows are in their records' order: the first at or past p->end (which
     * a refused row may lower) ends the loop, after the run before it */
    for (size_t i = 0; rc == TB_JDBC_OK && i <= p->row_count; i++) {
        tb_jdbc_row_t *row =
            i < p->row_count && p->rows[i].record < p->end ? &p->rows[i] : NULL;
        if (row != NULL && written_before(p, row->record)) {
            w->skipped++;
            continue;
        }
        if (n > 0 && (row == NULL || !tb_jdbc_row_same_shape(run[0], row))) {
            rc = write_run(p, run, n);
            p->written += n;
            n = 0;
        }
        if (row == NULL) {
            break;
        }
        if (rc == TB_JDBC_OK && p->careful) {
            rc = write_careful(p, row);
        } else {
            run[n++] = row;
        }
    }
    free(run);
    if (rc == TB_JDBC_OK && p->part_count > 0) {
        set_next(p);
        rc = write_offsets(p, false);
    }
    if (rc == TB_JDBC_OK) {
        rc = report_failures(p, built);
    }
    if (rc == TB_JDBC_OK) {
        rc = exec(p, "COMMIT", NULL, 0, NULL);
    }
    if (rc == TB_JDBC_OK) {
        tb_series_add(w->metrics->rows_written, (double)p->written);
        tb_series_add(w->metrics->rows_skipped, (double)w->skipped);
        tb_series_observe(w->metrics->transaction_rows, (double)p->written);
        return p->end < p->count ? TB_JDBC_STOPPED : rc;
    }
    char ignored[256];
    w->dialect->exec(w->conn, "ROLLBACK", NULL, 0, NULL, ignored, sizeof(ignored));
    return rc;
}

tb_jdbc_rc_t tb_jdbc_write(tb_jdbc_writer_t *w, const tb_sink_record_t *records,
                           size_t count, tb_jdbc_row_t *rows, size_t row_count,
                           char *errstr, size_t errstr_size)
{
    put_t p = {.w = w,
               .records = records,
               .count = count,
               .rows = rows,
               .row_count = row_count,
               .errstr = errstr,
               .errstr_size = errstr_size};
    tb_jdbc_rc_t rc = TB_JDBC_OK;
    if (count == 0) {
        return TB_JDBC_OK;
    }
    for (size_t i = 0; i < row_count && rc == TB_JDBC_OK; i++) {
        if (i == 0 || !tb_jdbc_row_same_shape(&rows[i - 1], &rows[i])) {
            rc = tb_jdbc_ddl_ensure(&w->tables, w->dialect, w->conn, w->settings,
                                    &rows[i], errstr, errstr_size);
        }
    }
    if (rc != TB_JDBC_OK) {
        return rc;
    }
    if (collect_parts(&p) != 0) {
        snprintf(errstr, errstr_size, "out of memory");
        return TB_JDBC_FATAL;
    }
    size_t built = w->failure_count;
    rc = transaction(&p, built);
    if (rc == TB_JDBC_BAD_ROW) {
        p.careful = true;
        rc = transaction(&p, built);
    }
    if (rc == TB_JDBC_STOPPED) {
        const tb_sink_record_t *r = &records[p.end];
        const char *reason = "";
        for (size_t i = 0; i < w->failure_count; i++) {
            reason = w->failures[i].record == p.end ? w->failures[i].reason : reason;
        }
        snprintf(errstr, errstr_size,
                 "record %s-%d at offset %lld cannot be written (errors.tolerance=none: "
                 "the records before it are written, none from it on): %s",
                 r->topic, (int)r->partition, (long long)r->offset, reason);
    }
    free(p.parts);
    return rc;
}
