/*
 * datagen - a source that generates JSON records: deterministic for a seed,
 * numbered so that loss and duplication can be checked downstream, at a
 * bounded rate or as fast as Kafka takes them.
 *
 * Each task numbers its records 0, 1, 2, ...; its source partition is
 * {"task":N} and its offset {"sequence":next}, so a restarted task goes on
 * from the next unacknowledged number. With source.partitions=P above 1,
 * record n belongs to source partition {"task":N,"slot":n mod P} (many
 * source partitions, for testing how offsets scale), and a restarted task
 * goes on from the highest offset among them.
 *
 * A poll writes its records' keys and values into one buffer of the task's,
 * reused by the next poll (bytes_borrowed in tb_plugin.h): a record costs
 * no allocation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/tb_plugin.h"

/* Indexes of shapes[]: the task resolves its shape's name once, at start. */
typedef enum { SHAPE_ORDERS = 0, SHAPE_USERS, SHAPE_PAGEVIEWS } shape_t;
static const char *const shapes[] = {"orders", "users", "pageviews", NULL};
static const tb_config_range_t non_negative = {.has_min = true, .min = 0};
static const tb_config_range_t count_range = {.has_min = true, .min = -1};
static const tb_config_range_t slots_range = {
    .has_min = true, .min = 1, .has_max = true, .max = 100000};

/* A task's keys, filled from datagen_keys (tb_config_load). */
typedef struct {
    const char *topic;
    double rate;
    long long count;
    int shape; /* shape_t */
    long long seed;
    int slots;
} datagen_settings_t;

static const tb_config_def_t datagen_keys[] = {
    {.name = "topic",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = "Datagen",
     .order = 1,
     .field = TB_CONFIG_AT(datagen_settings_t, topic),
     .documentation = "Topic the records are written to."},
    {.name = "records.per.second",
     .type = TB_CONFIG_DOUBLE,
     .default_value = "10",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Datagen",
     .order = 2,
     .range = &non_negative,
     .field = TB_CONFIG_AT(datagen_settings_t, rate),
     .documentation = "Records per second, per task; 0 means as fast as Kafka "
                      "takes them."},
    {.name = "count",
     .type = TB_CONFIG_LONG,
     .default_value = "-1",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Datagen",
     .order = 3,
     .range = &count_range,
     .field = TB_CONFIG_AT(datagen_settings_t, count),
     .documentation = "Records to generate in all (spread over the tasks); -1 "
                      "means endless."},
    {.name = "shape",
     .type = TB_CONFIG_STRING,
     .default_value = "orders",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = "Datagen",
     .order = 4,
     .one_of = shapes,
     .field = TB_CONFIG_ENUM_AT(datagen_settings_t, shape),
     .documentation = "The kind of record: orders, users or pageviews."},
    {.name = "seed",
     .type = TB_CONFIG_LONG,
     .default_value = "42",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Datagen",
     .order = 5,
     .field = TB_CONFIG_AT(datagen_settings_t, seed),
     .documentation = "Seed of the generator: the same seed gives the same keys "
                      "and values."},
    {.name = "source.partitions",
     .type = TB_CONFIG_INT,
     .default_value = "1",
     .importance = TB_IMPORTANCE_LOW,
     .group = "Datagen",
     .order = 6,
     .range = &slots_range,
     .field = TB_CONFIG_AT(datagen_settings_t, slots),
     .documentation = "Source partitions of each task: above 1, record n has the "
                      "source partition {\"task\":N,\"slot\":n mod this}, so the "
                      "task's offsets have one entry per slot (tributary)."},
};

static const tb_config_table_t datagen_table = TB_CONFIG_TABLE("datagen", datagen_keys);

#define TASK_ID_KEY "datagen.task.id"
#define TASK_COUNT_KEY "datagen.task.count"

#define FIELDS_MAX 8
#define FIELD_NAME_MAX 16 /* name and prefix, each */
/* The text of a value before a field's number: the comma, the quoted name,
 * the colon, and a string's quote and prefix */
#define PIECE_MAX (2 * FIELD_NAME_MAX + 6)
/* A record's key (a number) and value (every field's piece, 20 digits and a
 * quote, and the closing brace) */
#define RECORD_MAX (20 + FIELDS_MAX * (PIECE_MAX + 21) + 1)

/* A value's fixed text, written once at start: each field's piece before
 * its number, and whether a quote closes it after. */
typedef struct {
    char text[FIELDS_MAX][PIECE_MAX];
    size_t len[FIELDS_MAX];
    bool quoted[FIELDS_MAX];
} value_pieces_t;

typedef struct {
    int task;
    char *topic;
    double rate;
    long long limit; /* records this task generates; -1 endless */
    unsigned long long seed;
    shape_t shape;
    long long next;      /* sequence number of the next record */
    long long generated; /* since start, for the rate */
    struct timespec started;
    json_t **partitions; /* by slot: {"task": task(, "slot": n)}, shared by records */
    int slots;
    bool offset_every_record; /* else only the last record of a poll has one */
    value_pieces_t pieces;    /* of the shape's values */
    char *bytes;              /* the last poll's keys and values */
    size_t bytes_records;     /* records bytes has room for */
} datagen_task_t;

/* splitmix64: a small, well-mixed generator of deterministic values. */
static unsigned long long mix(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static json_t *task_configs(const json_t *config, int max_tasks)
{
    json_t *list = json_array();
    for (int i = 0; i < max_tasks; i++) {
        json_t *task = json_deep_copy(config);
        char text[16];
        snprintf(text, sizeof(text), "%d", i);
        json_object_set_new(task, TASK_ID_KEY, json_string(text));
        snprintf(text, sizeof(text), "%d", max_tasks);
        json_object_set_new(task, TASK_COUNT_KEY, json_string(text));
        json_array_append_new(list, task);
    }
    return list;
}

static long long share_of(long long total, int task, int tasks)
{
    if (total < 0) {
        return -1;
    }
    return total / tasks + (task < total % tasks ? 1 : 0);
}

/* An integer the runtime put into the task config. */
static int int_of(const json_t *config, const char *key, int fallback)
{
    const char *text = json_string_value(json_object_get(config, key));
    return text != NULL ? atoi(text) : fallback;
}

static void build_pieces(const datagen_task_t *task, value_pieces_t *pieces);

static int task_start(const tb_task_context_t *ctx, const json_t *config, void **out,
                      char *errstr, size_t errstr_size)
{
    datagen_settings_t settings;
    json_t *values =
        tb_config_load(&datagen_table, config, &settings, errstr, errstr_size);
    datagen_task_t *task = NULL;
    int tasks = int_of(config, TASK_COUNT_KEY, 1);

    if (values == NULL) {
        goto done;
    }
    task = calloc(1, sizeof(*task));
    task->task = int_of(config, TASK_ID_KEY, 0);
    task->topic = strdup(settings.topic);
    task->rate = settings.rate;
    task->limit = share_of(settings.count, task->task, tasks > 0 ? tasks : 1);
    task->seed = (unsigned long long)settings.seed;
    task->shape = (shape_t)settings.shape;
    task->slots = settings.slots;
    task->partitions = calloc((size_t)task->slots, sizeof(*task->partitions));
    task->offset_every_record = ctx->offset_every_record;
    for (int slot = 0; slot < task->slots; slot++) {
        task->partitions[slot] =
            task->slots == 1 ? json_pack("{s:i}", "task", task->task)
                             : json_pack("{s:i, s:i}", "task", task->task, "slot", slot);
        json_t *offset = ctx->offset_for(ctx->runtime, task->partitions[slot]);
        json_t *sequence = json_object_get(offset, "sequence");
        if (json_is_integer(sequence) && json_integer_value(sequence) > task->next) {
            task->next = json_integer_value(sequence);
        }
        json_decref(offset);
    }
    build_pieces(task, &task->pieces);
    clock_gettime(CLOCK_MONOTONIC, &task->started);
    *out = task;

done:
    json_decref(values);
    return task != NULL ? 0 : -1;
}

/* How many records the rate allows now; *wake_ms says when the next is due. */
static long long allowed_now(datagen_task_t *task, int64_t *wake_ms)
{
    struct timespec now;
    if (task->rate <= 0) {
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    double elapsed = (double)(now.tv_sec - task->started.tv_sec) +
                     (double)(now.tv_nsec - task->started.tv_nsec) / 1e9;
    long long due = (long long)(elapsed * task->rate) + 1 - task->generated;
    if (due <= 0) {
        double next_at = (double)(task->generated) / task->rate;
        *wake_ms = (int64_t)((next_at - elapsed) * 1000.0) + 1;
        return 0;
    }
    return due;
}

/* A field of a generated value: a JSON number, or when prefix is set the
 * string prefix followed by the number. */
typedef struct {
    const char *name;
    const char *prefix;
    unsigned long long number;
} field_t;

static char *put_number(char *p, unsigned long long v)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) {
        *p++ = digits[--n];
    }
    return p;
}

/* The fields of the task's shape for random bits r. */
static size_t shape_fields(const datagen_task_t *task, unsigned long long r,
                           field_t *fields)
{
    unsigned long long seq = (unsigned long long)task->next;
    unsigned long long id = (unsigned long long)task->task;
    if (task->shape == SHAPE_USERS) {
        field_t users[] = {{"seq", NULL, seq},
                           {"task", NULL, id},
                           {"user_id", "user_", r % 1000},
                           {"region", "region_", (r >> 10) % 10},
                           {"score", NULL, (r >> 20) % 100}};
        memcpy(fields, users, sizeof(users));
        return sizeof(users) / sizeof(users[0]);
    }
    if (task->shape == SHAPE_PAGEVIEWS) {
        field_t pageviews[] = {{"seq", NULL, seq},
                               {"task", NULL, id},
                               {"user_id", "user_", r % 1000},
                               {"page", "/page/", (r >> 10) % 50},
                               {"duration_ms", NULL, (r >> 20) % 60000}};
        memcpy(fields, pageviews, sizeof(pageviews));
        return sizeof(pageviews) / sizeof(pageviews[0]);
    }
    field_t orders[] = {{"seq", NULL, seq},
                        {"task", NULL, id},
                        {"order_id", NULL, seq},
                        {"customer", "customer_", r % 500},
                        {"item", "item_", (r >> 10) % 100},
                        {"quantity", NULL, (r >> 20) % 10 + 1},
                        {"price_cents", NULL, (r >> 30) % 100000}};
    memcpy(fields, orders, sizeof(orders));
    return sizeof(orders) / sizeof(orders[0]);
}

/* The fixed text of the shape's values, between their numbers. */
static void build_pieces(const datagen_task_t *task, value_pieces_t *pieces)
{
    field_t fields[FIELDS_MAX];
    size_t count = shape_fields(task, 0, fields);
    for (size_t i = 0; i < count; i++) {
        bool quoted = fields[i].prefix != NULL;
        int n =
            snprintf(pieces->text[i], PIECE_MAX, "%s\"%s\":%s%s", i == 0 ? "{" : ",",
                     fields[i].name, quoted ? "\"" : "", quoted ? fields[i].prefix : "");
        pieces->len[i] = (size_t)n;
        pieces->quoted[i] = quoted;
    }
}

/* Writes the value as compact JSON text at p, by hand from the task's
 * pieces (snprintf's format parsing was a third of the generator's CPU,
 * strlen of each name and prefix a tenth of what was left); returns its
 * end. */
static char *put_value(const datagen_task_t *task, unsigned long long r, char *p)
{
    field_t fields[FIELDS_MAX];
    size_t count = shape_fields(task, r, fields);
    for (size_t i = 0; i < count; i++) {
        memcpy(p, task->pieces.text[i], task->pieces.len[i]);
        p = put_number(p + task->pieces.len[i], fields[i].number);
        if (task->pieces.quoted[i]) {
            *p++ = '"';
        }
    }
    *p++ = '}';
    return p;
}

/* Makes room in the task's buffer for max records; the last poll's are the
 * runtime's no more. */
static bool room_for(datagen_task_t *task, size_t max)
{
    if (max <= task->bytes_records) {
        return true;
    }
    char *grown = realloc(task->bytes, max * RECORD_MAX);
    if (grown == NULL) {
        return false;
    }
    task->bytes = grown;
    task->bytes_records = max;
    return true;
}

/* Marks record as the task's progress up to sequence number sequence (the
 * record's number + 1). */
static void set_offset(const datagen_task_t *task, tb_source_record_t *record,
                       long long sequence)
{
    record->source_partition =
        json_incref(task->partitions[(sequence - 1) % task->slots]);
    record->source_offset = json_object();
    json_object_set_new(record->source_offset, "sequence",
                        json_integer((json_int_t)sequence));
}

static int poll(void *opaque, tb_source_record_t *out, size_t max, size_t *count,
                int64_t *wake_ms, char *errstr, size_t errstr_size)
{
    datagen_task_t *task = opaque;
    long long allowed = allowed_now(task, wake_ms);
    *count = 0;
    if (allowed == 0) {
        return 0;
    }
    if (task->limit >= 0 && task->next >= task->limit) {
        *wake_ms = -1; /* done: nothing more, ever */
        return 0;
    }
    if (!room_for(task, max)) {
        snprintf(errstr, errstr_size, "out of memory for %zu records", max);
        return -1;
    }
    char *p = task->bytes;
    while (*count < max && (allowed < 0 || (long long)*count < allowed) &&
           (task->limit < 0 || task->next < task->limit)) {
        unsigned long long r = mix(task->seed ^ ((unsigned long long)task->task << 40) ^
                                   (unsigned long long)task->next);
        tb_source_record_t *record = &out[(*count)++];
        memset(record, 0, sizeof(*record));
        record->topic = task->topic;
        record->partition = -1;
        record->bytes_borrowed = true;
        record->key = p;
        p = put_number(p, r % 1000);
        record->key_len = (size_t)(p - (char *)record->key);
        record->key_kind = TB_DATA_STRING;
        record->value = p;
        p = put_value(task, r, p);
        record->value_len = (size_t)(p - (char *)record->value);
        record->value_kind = TB_DATA_JSON;
        task->next++;
        task->generated++;
        if (task->offset_every_record) {
            set_offset(task, record, task->next);
        }
    }
    if (*count > 0 && !task->offset_every_record) {
        set_offset(task, &out[*count - 1], task->next);
    }
    return 0;
}

static void task_stop(void *opaque)
{
    datagen_task_t *task = opaque;
    if (task != NULL) {
        for (int slot = 0; task->partitions != NULL && slot < task->slots; slot++) {
            json_decref(task->partitions[slot]);
        }
        free(task->partitions);
        free(task->bytes);
        free(task->topic);
        free(task);
    }
}

static const char *const datagen_aliases[] = {"datagen", "DatagenConnector", NULL};

/* The topic every record goes to (tb_plugin_t.config_topic). */
static const char *config_topic(const json_t *values)
{
    datagen_settings_t settings = {0};
    return tb_config_fill(&datagen_table, values, &settings) == 0 ? settings.topic : NULL;
}

const tb_plugin_t tb_datagen_plugin = {
    .class_name = "io.tributary.connect.datagen.DatagenConnector",
    .aliases = datagen_aliases,
    .kind = TB_PLUGIN_SOURCE,
    .version = "0.1.0",
    .config = &datagen_table,
    .task_configs = task_configs,
    .config_topic = config_topic,
    .task_start = task_start,
    .poll = poll,
    .task_stop = task_stop,
};
