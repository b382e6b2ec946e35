/*
 * tb_record_log.h - a failed record as the error log shows it
 * (errors.log.enable): its coordinates, and with errors.log.include.messages
 * also its key and value, as Connect's log reporter shows the record.
 */
#ifndef TB_RECORD_LOG_H
#define TB_RECORD_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/tb_plugin.h"

/* Bytes of a key or value shown; the rest is counted, not shown. */
#define TB_RECORD_LOG_SHOWN 256

/* Writes into buf `record T-P at offset O`, and with include_messages
 * ` (key "K", value "V")`: printable ASCII as it is, a quote, a backslash and
 * any other byte as \xNN, a null key or value as null. buf is always
 * terminated; a line longer than size is cut. */
void tb_record_log_describe(const tb_sink_record_t *record, bool include_messages,
                            char *buf, size_t size);

#endif
