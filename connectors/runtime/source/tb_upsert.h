/*
 * tb_upsert.h - upsert write mode and message ids of source records.
 *
 * Upsert (write.mode=upsert): a record's value must be a JSON object; the
 * fields named by primary.key become its key (a JSON object), and its
 * "__row_kind" field decides what is written: "delete" writes a tombstone
 * (a null value), "update_before" writes nothing, "insert", "update_after"
 * or no row kind write the row without "__row_kind".
 *
 * Message ids (message.id.header): a header whose value is derived from
 * the record's source partition and offset only, so a record replayed after
 * a crash carries the same id and consumers can drop the duplicate.
 */
#ifndef TB_UPSERT_H
#define TB_UPSERT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/tb_plugin.h"

typedef enum {
    TB_UPSERT_WRITE = 0, /* write the (reshaped) record */
    TB_UPSERT_SKIP,      /* an update_before row: write nothing */
    TB_UPSERT_INVALID,   /* not a row: see reason */
} tb_upsert_result_t;

/* Reshapes record in place (its key and value are replaced, the old ones
 * freed). primary_key is an array of field names (borrowed). */
tb_upsert_result_t tb_upsert_apply(const json_t *primary_key, tb_source_record_t *record,
                                   char *reason, size_t reason_size);

/* Writes the message id of a record (64 hex digits and a NUL) into id:
 * SHA-256 of the connector name and the canonical JSON of the source
 * partition and offset. */
void tb_message_id(const char *connector, const json_t *source_partition,
                   const json_t *source_offset, char id[65]);

#endif
