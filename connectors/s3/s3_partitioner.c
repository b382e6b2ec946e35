/* Encoded partitions and object names of the S3 sink (tb_s3_partitioner.h). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/s3/tb_s3_partitioner.h"
#include "connectors/s3/tb_s3_sink.h"
#include "core/tb_data.h"
#include "core/tb_time.h"
#include "core/tb_zone.h"
#include "core/tb_buf.h"

#define DAILY_FORMAT "'year'=YYYY/'month'=MM/'day'=dd"
#define HOURLY_FORMAT "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"

struct tb_s3_partitioner {
    tb_s3_partition_kind_t kind;
    char **fields; /* FieldPartitioner's, field_count of them */
    size_t field_count;
    char *delim;       /* directory.delim */
    char *path_format; /* TimeBasedPartitioner's */
    int64_t duration_ms;
    tb_zone_t *zone;
    tb_s3_time_source_t source;
    char *timestamp_field;
};

/* ---- path.format ---- */

static const char *const month_names[] = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};

/* The letters a pattern may use. */
static bool known_letter(char c)
{
    return strchr("yYMdHmsSD", c) != NULL;
}

int tb_s3_path_format_check(const char *pattern, char *reason, size_t reason_size)
{
    bool quoted = false;
    for (const char *p = pattern; *p != '\0'; p++) {
        if (*p == '\'') {
            quoted = !quoted;
        } else if (!quoted && isalpha((unsigned char)*p) && !known_letter(*p)) {
            snprintf(reason, reason_size,
                     "The pattern letter '%c' is not one tributary writes (y Y M d H m s "
                     "S D, and 'quoted text')",
                     *p);
            return -1;
        }
    }
    if (quoted) {
        snprintf(reason, reason_size, "A quote is not closed");
        return -1;
    }
    return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Writes the fields of local_ms (civil time, already shifted to the zone)
 * as pattern. */
static void format_local(const char *pattern, int64_t local_ms, tb_buf_t *out)
{
    int64_t days = floor_div(local_ms, 86400000);
    int64_t in_day = local_ms - days * 86400000;
    int64_t year;
    int month, day;
    tb_civil_from_days(days, &year, &month, &day);
    int64_t jan1 = tb_days_from_civil(year, 1, 1);
    for (const char *p = pattern; *p != '\0';) {
        if (*p == '\'') {
            p++;
            if (*p == '\'') { /* '' is a quote */
                tb_buf_putc(out, '\'');
                p++;
                continue;
            }
            for (; *p != '\0'; p++) {
                if (p[0] == '\'' && p[1] == '\'') {
                    tb_buf_putc(out, '\'');
                    p++;
                } else if (*p == '\'') {
                    p++;
                    break;
                } else {
                    tb_buf_putc(out, *p);
                }
            }
            continue;
        }
        if (!known_letter(*p)) {
            tb_buf_putc(out, *p++);
            continue;
        }
        char letter = *p;
        int run = 0;
        while (*p == letter) {
            run++;
            p++;
        }
        int64_t v = 0;
        switch (letter) {
        case 'y':
        case 'Y':
            v = run == 2 ? year % 100 : year;
            break;
        case 'M':
            if (run >= 3) {
                tb_buf_printf(out, "%.*s", run == 3 ? 3 : 20, month_names[month - 1]);
                continue;
            }
            v = month;
            break;
        case 'd':
            v = day;
            break;
        case 'H':
            v = in_day / 3600000;
            break;
        case 'm':
            v = in_day / 60000 % 60;
            break;
        case 's':
            v = in_day / 1000 % 60;
            break;
        case 'S':
            v = in_day % 1000;
            break;
        default: /* 'D' */
            v = days - jan1 + 1;
            break;
        }
        tb_buf_printf(out, "%0*" PRId64, run, v);
    }
}

void tb_s3_partitioner_format_time(const tb_s3_partitioner_t *partitioner, int64_t utc_ms,
                                   char *out, size_t size)
{
    tb_buf_t text = {0};
    int64_t offset_ms =
        (int64_t)tb_zone_offset(partitioner->zone, floor_div(utc_ms, 1000)) * 1000;
    format_local(partitioner->path_format, utc_ms + offset_ms, &text);
    snprintf(out, size, "%s", text.data != NULL && !text.failed ? text.data : "");
    free(text.data);
}

/* ---- the partitioner ---- */

static tb_zone_t *zone_of(const char *name, char *errstr, size_t errstr_size)
{
    if (strcmp(name, "UTC") == 0 || strcmp(name, "GMT") == 0 || strcmp(name, "Z") == 0) {
        return tb_zone_fixed(0);
    }
    char reason[256];
    tb_zone_t *zone = tb_zone_load(name, reason, sizeof(reason));
    if (zone == NULL) {
        snprintf(errstr, errstr_size,
                 "Invalid value %s for configuration " TB_S3_KEY_TIMEZONE ": %s", name,
                 reason);
    }
    return zone;
}

tb_s3_partitioner_t *tb_s3_partitioner_new(const tb_s3_settings_t *k, char *errstr,
                                           size_t errstr_size)
{
    const char *name = tb_s3_config_simple_name(k->partitioner);
    const char *extractor = k->extractor;
    tb_s3_partitioner_t *p = calloc(1, sizeof(*p));
    if (p == NULL || (p->delim = strdup(k->directory_delim)) == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (strcmp(name, "DefaultPartitioner") == 0) {
        p->kind = TB_S3_PARTITION_DEFAULT;
        return p;
    }
    if (strcmp(name, "FieldPartitioner") == 0) {
        const json_t *fields = k->field_name;
        p->kind = TB_S3_PARTITION_FIELD;
        p->field_count = json_array_size(fields);
        p->fields = calloc(p->field_count + 1, sizeof(*p->fields));
        for (size_t i = 0; p->fields != NULL && i < p->field_count; i++) {
            p->fields[i] = strdup(json_string_value(json_array_get(fields, i)));
        }
        if (p->fields == NULL) {
            snprintf(errstr, errstr_size, "out of memory");
            goto fail;
        }
        return p;
    }
    p->kind = TB_S3_PARTITION_TIME;
    const char *format = strcmp(name, "DailyPartitioner") == 0    ? DAILY_FORMAT
                         : strcmp(name, "HourlyPartitioner") == 0 ? HOURLY_FORMAT
                                                                  : k->path_format;
    p->duration_ms = strcmp(name, "DailyPartitioner") == 0    ? 86400000
                     : strcmp(name, "HourlyPartitioner") == 0 ? 3600000
                                                              : k->duration;
    p->path_format = strdup(format);
    p->timestamp_field = strdup(k->timestamp_field);
    p->source = strcmp(extractor, "Record") == 0        ? TB_S3_TIME_RECORD
                : strcmp(extractor, "RecordField") == 0 ? TB_S3_TIME_RECORD_FIELD
                                                        : TB_S3_TIME_WALLCLOCK;
    p->zone = zone_of(k->timezone, errstr, errstr_size);
    if (p->zone == NULL) {
        goto fail;
    }
    if (p->path_format == NULL || p->timestamp_field == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    return p;

fail:
    tb_s3_partitioner_free(p);
    return NULL;
}

void tb_s3_partitioner_free(tb_s3_partitioner_t *p)
{
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; p->fields != NULL && i < p->field_count; i++) {
        free(p->fields[i]);
    }
    free(p->fields);
    free(p->delim);
    free(p->path_format);
    free(p->timestamp_field);
    tb_zone_free(p->zone);
    free(p);
}

tb_s3_partition_kind_t tb_s3_partitioner_kind(const tb_s3_partitioner_t *partitioner)
{
    return partitioner->kind;
}

/* The field name of the record's value: a struct's field or a schemaless
 * map's entry. NULL when there is none (or the value is no such thing). */
static const tb_value_t *value_field(const tb_sink_record_t *record, const char *name)
{
    const tb_value_t *v = record->value_data;
    if (v == NULL) {
        return NULL;
    }
    if (tb_value_type(v) == TB_TYPE_STRUCT) {
        return tb_value_struct_get(v, name);
    }
    return tb_value_type(v) == TB_TYPE_MAP ? tb_value_map_get_string(v, name) : NULL;
}

int64_t tb_s3_partitioner_time(const tb_s3_partitioner_t *partitioner,
                               const tb_sink_record_t *record, int64_t now_ms,
                               char *errstr, size_t errstr_size)
{
    if (partitioner->kind != TB_S3_PARTITION_TIME ||
        partitioner->source == TB_S3_TIME_WALLCLOCK) {
        return now_ms;
    }
    if (partitioner->source == TB_S3_TIME_RECORD) {
        if (record->timestamp < 0) {
            snprintf(errstr, errstr_size,
                     "the record has no timestamp, which " TB_S3_KEY_EXTRACTOR
                     "=Record needs");
        }
        return record->timestamp >= 0 ? record->timestamp : -1;
    }
    const tb_value_t *v = value_field(record, partitioner->timestamp_field);
    tb_type_t type = v != NULL ? tb_value_type(v) : TB_TYPE_STRUCT;
    if (type != TB_TYPE_INT64 && type != TB_TYPE_INT32) {
        snprintf(errstr, errstr_size,
                 "the record's value has no field %s holding a Timestamp or a number of "
                 "milliseconds, which " TB_S3_KEY_EXTRACTOR "=RecordField needs",
                 partitioner->timestamp_field);
        return -1;
    }
    return tb_value_int64(v);
}

/* Appends the text of a primitive v, as Java's toString writes it. -1 when
 * v is no integer, string or boolean. */
static int put_primitive(tb_buf_t *out, const tb_value_t *v)
{
    size_t len;
    switch (v != NULL ? tb_value_type(v) : TB_TYPE_STRUCT) {
    case TB_TYPE_INT8:
    case TB_TYPE_INT16:
    case TB_TYPE_INT32:
    case TB_TYPE_INT64:
        tb_buf_printf(out, "%" PRId64, tb_value_int64(v));
        return 0;
    case TB_TYPE_STRING: {
        const char *text = tb_value_text(v, &len);
        tb_buf_append(out, text, len);
        return 0;
    }
    case TB_TYPE_BOOLEAN:
        tb_buf_puts(out, tb_value_boolean(v) ? "true" : "false");
        return 0;
    default:
        return -1;
    }
}

char *tb_s3_partitioner_encode(const tb_s3_partitioner_t *partitioner,
                               const tb_sink_record_t *record, int64_t time_ms,
                               char *errstr, size_t errstr_size)
{
    tb_buf_t out = {0};
    if (partitioner->kind == TB_S3_PARTITION_DEFAULT) {
        tb_buf_printf(&out, "partition=%d", (int)record->partition);
    } else if (partitioner->kind == TB_S3_PARTITION_FIELD) {
        for (size_t i = 0; i < partitioner->field_count; i++) {
            const char *name = partitioner->fields[i];
            tb_buf_puts(&out, i > 0 ? partitioner->delim : "");
            tb_buf_printf(&out, "%s=", name);
            if (put_primitive(&out, value_field(record, name)) != 0) {
                snprintf(errstr, errstr_size,
                         "the record's value has no field %s of an integer, string or "
                         "boolean type, which " TB_S3_KEY_FIELD_NAME " names",
                         name);
                free(out.data);
                return NULL;
            }
        }
    } else {
        int64_t offset_ms =
            (int64_t)tb_zone_offset(partitioner->zone, floor_div(time_ms, 1000)) * 1000;
        int64_t local = time_ms + offset_ms;
        format_local(
            partitioner->path_format,
            floor_div(local, partitioner->duration_ms) * partitioner->duration_ms, &out);
    }
    char *encoded = tb_buf_take(&out, NULL);
    if (encoded == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    }
    return encoded;
}

/* ---- object names ---- */

char *tb_s3_object_key(const tb_s3_layout_t *layout, const char *topic,
                       const char *encoded, int32_t partition, int64_t start,
                       const char *extension)
{
    tb_buf_t out = {0};
    tb_buf_printf(&out, "%s%s%s%s%s%s%s%s%d%s%0*" PRId64 "%s", layout->topics_dir,
                  layout->directory_delim, topic, layout->directory_delim, encoded,
                  layout->directory_delim, topic, layout->file_delim, (int)partition,
                  layout->file_delim, layout->zero_pad, start, extension);
    return tb_buf_take(&out, NULL);
}

char *tb_s3_list_prefix(const tb_s3_layout_t *layout,
                        const tb_s3_partitioner_t *partitioner, const char *topic,
                        int32_t partition)
{
    tb_buf_t out = {0};
    tb_buf_printf(&out, "%s%s%s%s", layout->topics_dir, layout->directory_delim, topic,
                  layout->directory_delim);
    if (partitioner->kind == TB_S3_PARTITION_DEFAULT) {
        tb_buf_printf(&out, "partition=%d%s", (int)partition, layout->directory_delim);
    }
    return tb_buf_take(&out, NULL);
}

int64_t tb_s3_key_start_offset(const tb_s3_layout_t *layout, const char *key,
                               const char *topic, int32_t partition)
{
    /* the last part after directory.delim */
    const char *name = key;
    size_t dlen = strlen(layout->directory_delim);
    for (const char *hit = key; dlen > 0 && (hit = strstr(hit, layout->directory_delim));
         hit += dlen) {
        name = hit + dlen;
    }
    char head[512];
    int n = snprintf(head, sizeof(head), "%s%s%d%s", topic, layout->file_delim,
                     (int)partition, layout->file_delim);
    if (n < 0 || (size_t)n >= sizeof(head) || strncmp(name, head, (size_t)n) != 0) {
        return -1;
    }
    const char *digits = name + n;
    int64_t start = 0;
    size_t count = 0;
    for (; isdigit((unsigned char)digits[count]) && count < 19; count++) {
        start = start * 10 + (digits[count] - '0');
    }
    /* the keys and headers beside an object (store.kafka.keys,
     * store.kafka.headers) are not objects of values */
    const char *rest = digits + count;
    bool companion =
        strncmp(rest, ".keys.", 6) == 0 || strncmp(rest, ".headers.", 9) == 0;
    return count > 0 && rest[0] == '.' && !companion ? start : -1;
}
