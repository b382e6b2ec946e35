/*
 * tb_config.h - configuration definitions as data.
 *
 * A table of tb_config_def_t describes every key a component accepts: its
 * type, default, importance, documentation, group and checks. The same table
 * drives parsing (raw strings -> typed JSON values), validation with every
 * error collected, Connect's ConfigInfos and ConfigKeyInfo JSON, redaction of
 * PASSWORD values, and the generated reference in docs/configuration.md.
 *
 * Raw configs are JSON objects of strings, as Connect's REST API carries
 * them. Parsed values are typed: BOOLEAN -> true/false, INT/SHORT/LONG ->
 * integer, DOUBLE -> real, LIST -> array of strings, others -> string; a key
 * with a null default and no value parses to null. Booleans and enum values
 * (one_of) are read in any case, as Connect reads them, and parse to one
 * spelling: true/false, and the value as its one_of list spells it.
 */
#ifndef TB_CONFIG_H
#define TB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef enum {
    TB_CONFIG_BOOLEAN = 0,
    TB_CONFIG_STRING,
    TB_CONFIG_INT,
    TB_CONFIG_SHORT,
    TB_CONFIG_LONG,
    TB_CONFIG_DOUBLE,
    TB_CONFIG_LIST,
    TB_CONFIG_CLASS,
    TB_CONFIG_PASSWORD,
} tb_config_type_t;

typedef enum {
    TB_IMPORTANCE_HIGH = 0,
    TB_IMPORTANCE_MEDIUM,
    TB_IMPORTANCE_LOW,
} tb_importance_t;

typedef enum {
    TB_WIDTH_NONE = 0,
    TB_WIDTH_SHORT,
    TB_WIDTH_MEDIUM,
    TB_WIDTH_LONG,
} tb_width_t;

/* What a key's value points at, for the worker's limits on what connectors
 * may reach (file.allowed.dirs, http.sink.allowed.hosts), or what it holds. */
typedef enum {
    TB_CONFIG_ROLE_NONE = 0,
    TB_CONFIG_ROLE_PATH,    /* a file the connector reads or writes */
    TB_CONFIG_ROLE_URL,     /* a URL the connector sends to */
    TB_CONFIG_ROLE_HEADERS, /* "Name: value|..." whose credential headers'
                             * values are secrets (tb_secret_headers_rewrite) */
} tb_config_role_t;

/* An extra check of a parsed value. Returns 0 when valid, or -1 with the
 * reason (without the key name) written to reason. */
typedef int (*tb_config_check_fn)(const json_t *value, char *reason, size_t reason_size);

/*
 * Typed config: a key's column in the struct its component reads (nginx's
 * ngx_command_t, fluent-bit's config_map). tb_config_fill() writes each
 * parsed value there, so that a plugin reads a typed struct filled and
 * checked once, never a value looked up by its key's name. The field's C
 * type follows the key's type: BOOLEAN bool, INT and SHORT int, LONG long
 * long, DOUBLE double, STRING, CLASS and PASSWORD const char * (borrowed
 * from the parsed values), LIST const json_t * (borrowed), an enum
 * (a STRING with one_of) read as its index in one_of, an int, and the
 * parsed value itself (TB_CONFIG_VALUE_AT), for a key whose null means
 * unset where the type's C value could not say so.
 */
typedef enum {
    TB_CONFIG_FIELD_NONE = 0, /* the key has no column */
    TB_CONFIG_FIELD_BOOL,
    TB_CONFIG_FIELD_INT,
    TB_CONFIG_FIELD_LONG,
    TB_CONFIG_FIELD_DOUBLE,
    TB_CONFIG_FIELD_STRING,
    TB_CONFIG_FIELD_LIST,
    TB_CONFIG_FIELD_ENUM,
    TB_CONFIG_FIELD_VALUE,
} tb_config_field_kind_t;

typedef struct {
    tb_config_field_kind_t kind;
    size_t offset; /* offsetof the member in its struct */
} tb_config_field_t;

/* The column of member in struct type T, its kind taken from the member's C
 * type (a member of another type does not compile). */
#define TB_CONFIG_AT(T, member)                                                            \
    {                                                                                      \
        .kind = _Generic(((T *)0)->member,                                               \
            bool: TB_CONFIG_FIELD_BOOL,                                                  \
            int: TB_CONFIG_FIELD_INT,                                                    \
            long long: TB_CONFIG_FIELD_LONG,                                             \
            double: TB_CONFIG_FIELD_DOUBLE,                                              \
            const char *: TB_CONFIG_FIELD_STRING,                                        \
            const json_t *: TB_CONFIG_FIELD_LIST),                                       \
        .offset = offsetof(T, member) \
    }

/* The column of an enum key's index in its one_of list: an int member. */
#define TB_CONFIG_ENUM_AT(T, member)                                                     \
    {                                                                                    \
        .kind = _Generic(((T *)0)->member, int                                           \
                         : TB_CONFIG_FIELD_ENUM),                                        \
        .offset = offsetof(T, member)                                                    \
    }

/* The column of a key's parsed value (any type; JSON null when unset), a
 * const json_t * member borrowed from the parsed values. */
#define TB_CONFIG_VALUE_AT(T, member)                                                      \
    {                                                                                      \
        .kind = _Generic(((T *)0)->member, const json_t *                                \
                         : TB_CONFIG_FIELD_VALUE),                                       \
        .offset = offsetof(T, member) \
    }

/* Inclusive bounds of a number. */
typedef struct {
    bool has_min;
    bool has_max;
    double min;
    double max;
} tb_config_range_t;

typedef struct {
    const char *name;
    tb_config_type_t type;
    /* The default as Connect prints it; NULL is a null default, unless
     * required is set, in which case the key has no default at all. */
    const char *default_value;
    bool required;
    tb_importance_t importance;
    const char *documentation;
    const char *group;
    int order;
    tb_width_t width;
    const char *display_name;
    /* Allowed values of a STRING, NULL-terminated. A value matches one
     * case-insensitively and parses to the spelling listed here. */
    const char *const *one_of;
    const tb_config_range_t *range;
    tb_config_check_fn check;
    tb_config_role_t role;
    tb_config_field_t field; /* where tb_config_fill() writes it; kind NONE: nowhere */
} tb_config_def_t;

/* One component's keys: the worker's, the connector framework's, or a
 * plugin's. */
typedef struct {
    const char *name;
    const tb_config_def_t *defs;
    size_t count;
} tb_config_table_t;

#define TB_CONFIG_TABLE(table_name, array)                                               \
    {                                                                                    \
        .name = (table_name), .defs = (array),                                           \
        .count = sizeof(array) / sizeof((array)[0])                                      \
    }

/* The definition of name in tables, or NULL. */
const tb_config_def_t *tb_config_find(const tb_config_table_t *const *tables,
                                      size_t ntables, const char *name);

/*
 * Parses raw against tables. Returns a new object holding a typed value for
 * every defined key (defaults applied). errors (a JSON object, borrowed) gets
 * name -> array of messages for each invalid key; keys not in tables are
 * ignored. Messages follow Connect's texts, e.g.
 * "Invalid value x for configuration tasks.max: Not a number of type INT".
 */
json_t *tb_config_parse(const tb_config_table_t *const *tables, size_t ntables,
                        const json_t *raw, json_t *errors);

/* Total number of messages in an errors object from tb_config_parse. */
size_t tb_config_error_count(const json_t *errors);

/* Writes every message of an errors object into buf, separated by
 * separator (truncated to size). Returns the length written. */
size_t tb_config_errors_join(const json_t *errors, const char *separator, char *buf,
                             size_t size);

/* Adds one message for key to an errors object. */
void tb_config_error_add(json_t *errors, const char *key, const char *message);

/* Connect's ConfigInfos for a validation: {"name","error_count","groups",
 * "configs":[{"definition","value"}]}. extra_errors holds errors for keys
 * without definitions (listed with a null definition). New reference. */
json_t *tb_config_infos(const char *name, const tb_config_table_t *const *tables,
                        size_t ntables, const json_t *raw, const json_t *errors);

/* The ConfigKeyInfo array of tables, in table order. New reference. */
json_t *tb_config_keys_json(const tb_config_table_t *const *tables, size_t ntables);

/* A copy of raw with every PASSWORD value replaced by "[hidden]". */
json_t *tb_config_redact(const tb_config_table_t *const *tables, size_t ntables,
                         const json_t *raw);

/* Typed accessors of a parsed object; the key must be defined with a
 * matching type (a programming error otherwise, caught by unit tests). */
long long tb_config_int(const json_t *values, const char *name);
bool tb_config_bool(const json_t *values, const char *name);
double tb_config_double(const json_t *values, const char *name);
/* NULL for a null value. Borrowed from values. */
const char *tb_config_string(const json_t *values, const char *name);
/* Array of strings, borrowed from values. */
const json_t *tb_config_list(const json_t *values, const char *name);

/* Writes the parsed value of every key of table that has a column
 * (tb_config_def_t.field) into the struct at out. Strings and lists are
 * borrowed from values, which must outlive the struct. Returns 0, or -1
 * when a column does not fit its key's type (a programming error, which
 * tb_config_fields_check finds first). */
int tb_config_fill(const tb_config_table_t *table, const json_t *values, void *out);

/* Whether raw (the keys as written) gives the key whose column in out, a
 * struct filled from table, is member: set by the user rather than left to
 * its default. The key is found by its column, never by its name, so a
 * member without a key does not compile into a silent false: it is a
 * programming error (false, caught by unit tests). */
bool tb_config_given(const tb_config_table_t *table, const json_t *raw, const void *out,
                     const void *member);

/* Parses raw against table and fills out (tb_config_fill): the one call a
 * component reads its config with. Returns the parsed values, which out's
 * strings and lists borrow from (the caller keeps them as long as out and
 * frees them with json_decref), or NULL with every error, each naming its
 * key, joined by "; " in errstr. */
json_t *tb_config_load(const tb_config_table_t *table, const json_t *raw, void *out,
                       char *errstr, size_t errstr_size);

/* Checks that every column of table fits its key's type. Returns 0, or -1
 * with the first key that does not in reason. */
int tb_config_fields_check(const tb_config_table_t *table, char *reason,
                           size_t reason_size);

/* Appends the Markdown reference of one table to out (a growing string
 * owned by the caller, freed with free()). Returns 0, or -1 on no memory. */
int tb_config_doc_markdown(const tb_config_table_t *table, char **out);

/* Appends printf-formatted text to *out (realloc'd; the caller frees it).
 * Returns 0, or -1 when out of memory. */
__attribute__((format(printf, 2, 3))) int tb_config_doc_append(char **out,
                                                               const char *fmt, ...);

const char *tb_config_type_name(tb_config_type_t type);

#endif
