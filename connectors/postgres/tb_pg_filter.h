/*
 * tb_pg_filter.h - which schemas, tables and columns are captured:
 * schema.include.list / schema.exclude.list, table.include.list /
 * table.exclude.list and column.include.list / column.exclude.list, each a
 * list of regular expressions matched, in any case, against the whole of
 * <schema>, <schema>.<table> and <schema>.<table>.<column>, as Debezium
 * matches them. PostgreSQL's own schemas (pg_catalog, information_schema,
 * pg_toast) are never captured.
 */
#ifndef TB_PG_FILTER_H
#define TB_PG_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/postgres/tb_pg_config.h"

typedef struct tb_pg_filter tb_pg_filter_t;

/* From a task's parsed config (nothing of it kept). NULL with errstr
 * naming the key when a pattern does not compile. */
tb_pg_filter_t *tb_pg_filter_create(const tb_pg_options_t *o, char *errstr,
                                    size_t errstr_size);

/* NULL is a no-op. */
void tb_pg_filter_destroy(tb_pg_filter_t *f);

bool tb_pg_filter_table(const tb_pg_filter_t *f, const char *schema, const char *table);

bool tb_pg_filter_column(const tb_pg_filter_t *f, const char *schema, const char *table,
                         const char *column);

#endif
