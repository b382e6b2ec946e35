/* The schema, table and column filters (tb_pg_filter.h). */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/postgres/tb_pg_filter.h"

/* One list: its compiled patterns, and whether it includes or excludes. */
typedef struct {
    regex_t *patterns;
    size_t count;
    bool include;
} list_t;

struct tb_pg_filter {
    list_t schemas;
    list_t tables;
    list_t columns;
};

static void list_free(list_t *l)
{
    for (size_t i = 0; i < l->count; i++) {
        regfree(&l->patterns[i]);
    }
    free(l->patterns);
}

/* The include list when it has patterns, else the exclude list; include
 * and exclude name their keys. */
static int list_compile(list_t *l, const tb_pg_list_keys_t *lists, const char *include,
                        const char *exclude, char *errstr, size_t errstr_size)
{
    const json_t *patterns = lists->include;
    const char *key = include;
    l->include = json_array_size(patterns) > 0;
    if (!l->include) {
        patterns = lists->exclude;
        key = exclude;
    }
    l->patterns = calloc(json_array_size(patterns) + 1, sizeof(*l->patterns));
    if (l->patterns == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    size_t i;
    json_t *item;
    json_array_foreach (patterns, i, item) {
        char *anchored = malloc(strlen(json_string_value(item)) + 5);
        sprintf(anchored, "^(%s)$", json_string_value(item));
        int rc = regcomp(&l->patterns[l->count], anchored,
                         REG_EXTENDED | REG_ICASE | REG_NOSUB);
        free(anchored);
        if (rc != 0) {
            snprintf(errstr, errstr_size, "%s: %s is not a valid regular expression", key,
                     json_string_value(item));
            return -1;
        }
        l->count++;
    }
    return 0;
}

/* Whether name passes the list (an empty list passes everything). */
static bool list_passes(const list_t *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++) {
        if (regexec(&l->patterns[i], name, 0, NULL, 0) == 0) {
            return l->include;
        }
    }
    return !l->include || l->count == 0;
}

tb_pg_filter_t *tb_pg_filter_create(const tb_pg_options_t *o, char *errstr,
                                    size_t errstr_size)
{
    tb_pg_filter_t *f = calloc(1, sizeof(*f));
    if (f == NULL ||
        list_compile(&f->schemas, &o->schemas, "schema.include.list",
                     "schema.exclude.list", errstr, errstr_size) != 0 ||
        list_compile(&f->tables, &o->tables, "table.include.list", "table.exclude.list",
                     errstr, errstr_size) != 0 ||
        list_compile(&f->columns, &o->columns, "column.include.list",
                     "column.exclude.list", errstr, errstr_size) != 0) {
        tb_pg_filter_destroy(f);
        return NULL;
    }
    return f;
}

void tb_pg_filter_destroy(tb_pg_filter_t *f)
{
    if (f != NULL) {
        list_free(&f->schemas);
        list_free(&f->tables);
        list_free(&f->columns);
        free(f);
    }
}

bool tb_pg_filter_table(const tb_pg_filter_t *f, const char *schema, const char *table)
{
    if (strcmp(schema, "pg_catalog") == 0 || strcmp(schema, "information_schema") == 0 ||
        strncmp(schema, "pg_toast", 8) == 0) {
        return false;
    }
    char name[512];
    snprintf(name, sizeof(name), "%s.%s", schema, table);
    return list_passes(&f->schemas, schema) && list_passes(&f->tables, name);
}

bool tb_pg_filter_column(const tb_pg_filter_t *f, const char *schema, const char *table,
                         const char *column)
{
    char name[768];
    snprintf(name, sizeof(name), "%s.%s.%s", schema, table, column);
    return list_passes(&f->columns, name);
}
