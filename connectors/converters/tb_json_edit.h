/*
 * tb_json_edit.h - a schemaless JSON object edited as text: its members
 * held as pieces of the input, changed (put; a caller drops or renames
 * members in members[] itself), and written back, the untouched members'
 * values copied as they are.
 *
 * This is the fast path of a chain of transforms on a value that
 * JsonConverter without schemas reads as a map (tb_chain.h,
 * tb_chain_apply_json): written back, it must be exactly the text that
 * reading it into Connect data, changing that map in the same way and
 * writing it with tb_json_write_value() gives. So tb_json_object_read()
 * accepts only objects whose every piece the writer would write as it is:
 * no duplicate keys, keys without escapes, string values with no escape
 * but \" \\ \b \t \n \f \r, valid UTF-8, integers as the writer writes
 * int64 (not -0, in range), reals as it writes doubles (1.5, 1.0E10,
 * -0.0), and nested objects and arrays written without whitespace of the
 * same. Two exceptions, which the writer's own text replaces: a top-level
 * member's finite real written otherwise (1e5, 1.50; not 1E400) is
 * written again as the writer writes that double, and whitespace between
 * the top level's tokens is dropped. Everything else is declined; the
 * caller then takes the tree path.
 *
 * A tb_json_object_t is reused from record to record: its arrays and
 * buffer grow once and stay, up to the bounds below; what grew past them
 * for one large object is freed when the next is read.
 */
#ifndef TB_JSON_EDIT_H
#define TB_JSON_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tb_buf.h"

/* One member: its name (raw text, no quotes: a piece of the input, or a
 * string the caller keeps alive until the object is written; a caller
 * that sets another name clears name_plain) and its
 * value's JSON text (a piece of the input when value_off is SIZE_MAX,
 * else value_len bytes at value_off in the object's own buffer). */
typedef struct {
    const char *name;
    size_t name_len;
    bool name_plain; /* read: written as it is, between quotes */
    const char *value;
    size_t value_off;
    size_t value_len;
} tb_json_member_t;

/* What a tb_json_object_t keeps from one object to the next: members[]
 * of this many members, a values buffer of this many bytes. */
#define TB_JSON_OBJECT_KEEP_MEMBERS 256
#define TB_JSON_OBJECT_KEEP_BYTES (64 * 1024)

typedef struct {
    tb_json_member_t *members;
    size_t count;
    size_t cap;
    tb_buf_t values; /* the texts of the values put */
    tb_buf_t number; /* scratch: a real written again */
} tb_json_object_t;

/* Reads text[0..len) into o (emptied first), borrowing the text until o
 * is written. False: declined (see above), o then empty. */
bool tb_json_object_read(tb_json_object_t *o, const char *text, size_t len);

/* The index of the member called name, or -1. */
long tb_json_object_find(const tb_json_object_t *o, const char *name, size_t name_len);

/* Puts name -> a string value s[0..n) (s NULL: a JSON null), replacing the
 * value of a member so called in place, else appending, as a map put does.
 * name is borrowed until o is written. -1 out of memory. */
int tb_json_object_put_string(tb_json_object_t *o, const char *name, const char *s,
                              size_t n);

/* The same with an integer value. */
int tb_json_object_put_int(tb_json_object_t *o, const char *name, int64_t i);

/* Appends o as compact JSON to out. */
void tb_json_object_write(const tb_json_object_t *o, tb_buf_t *out);

/* Frees what o holds; o is then empty and reusable. */
void tb_json_object_release(tb_json_object_t *o);

#endif
