/* Where a partition resumes, from the bucket's object names and the newest
 * one's metadata (tb_s3_recovery.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/s3/tb_s3_recovery.h"
#include "connectors/tb_plugin.h"

typedef struct {
    const tb_s3_layout_t *layout;
    const char *topic;
    int32_t partition;
    int64_t best;
    tb_s3_recovery_t *out;
} scan_t;

static void on_key(void *arg, const char *key)
{
    scan_t *scan = arg;
    int64_t start =
        tb_s3_key_start_offset(scan->layout, key, scan->topic, scan->partition);
    if (start > scan->best) {
        scan->best = start;
        snprintf(scan->out->latest, sizeof(scan->out->latest), "%s", key);
    }
}

/* A metadata value as an offset, or -1. */
static int64_t offset_of(const char *text)
{
    char *end = NULL;
    long long v = text[0] != '\0' ? strtoll(text, &end, 10) : -1;
    return end != NULL && *end == '\0' && v >= 0 ? (int64_t)v : -1;
}

tb_s3_outcome_t tb_s3_recovery_find(tb_s3_client_t *client, const tb_s3_layout_t *layout,
                                    const tb_s3_partitioner_t *partitioner,
                                    const char *topic, int32_t partition,
                                    tb_s3_recovery_t *out, char *errstr,
                                    size_t errstr_size)
{
    scan_t scan = {
        .layout = layout, .topic = topic, .partition = partition, .best = -1, .out = out};
    char value[32];
    *out = (tb_s3_recovery_t){.next = TB_PLUGIN_NO_OFFSET};
    char *prefix = tb_s3_list_prefix(layout, partitioner, topic, partition);
    if (prefix == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return TB_S3_TRANSIENT;
    }
    tb_s3_outcome_t rc = tb_s3_list(client, prefix, on_key, &scan, errstr, errstr_size);
    free(prefix);
    if (rc != TB_S3_OK || scan.best < 0) {
        return rc;
    }
    rc = tb_s3_head_meta(client, out->latest, TB_S3_META_NEXT, value, sizeof(value),
                         errstr, errstr_size);
    if (rc == TB_S3_OK && offset_of(value) >= 0) {
        out->next = offset_of(value);
        return rc;
    }
    if (rc == TB_S3_OK) {
        rc = tb_s3_head_meta(client, out->latest, TB_S3_META_GROUP_START, value,
                             sizeof(value), errstr, errstr_size);
    }
    out->next = rc == TB_S3_OK ? offset_of(value) : TB_PLUGIN_NO_OFFSET;
    out->foreign = rc == TB_S3_OK && out->next < 0;
    return rc;
}
