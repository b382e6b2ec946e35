/*
 * tb_props.h - Java .properties files, as connect-standalone reads them.
 *
 * Follows java.util.Properties.load: '#' and '!' comments, '=' ':' or
 * whitespace between key and value, backslash line continuation, and the
 * escapes \t \n \r \f \uXXXX (written out as UTF-8; a surrogate pair, as
 * Java writes a character beyond U+FFFF, is one character). A repeated key
 * keeps its last value, as Java does. The text is read as UTF-8: a key or
 * value that is not valid UTF-8 is refused, naming its line, not dropped.
 */
#ifndef TB_PROPS_H
#define TB_PROPS_H

#include <stddef.h>

#include <jansson.h>

/* Parses text into a new JSON object of strings. Returns NULL and fills
 * errstr when the text is not valid (a malformed \u escape or a lone
 * surrogate, a key or value that is not UTF-8). */
json_t *tb_props_parse(const char *text, size_t len, char *errstr, size_t errstr_size);

/* Reads and parses a whole file; errors name the file. */
json_t *tb_props_load_file(const char *path, char *errstr, size_t errstr_size);

/* As tb_props_load_file, for a file that may hold secrets and that a
 * connector's config names: only a regular file of at most max bytes is
 * read. It is opened without blocking (a FIFO without a writer does not
 * hold the caller) and checked (fstat) before anything is read, so a
 * device, a FIFO, a socket or a directory is refused, as is a file larger
 * than max; its text is wiped before it is freed. */
json_t *tb_props_load_regular(const char *path, size_t max, char *errstr,
                              size_t errstr_size);

/* Sets key to value in the properties file at path (created, readable by
 * its owner only, when missing), replacing the file atomically. Returns -1
 * with errstr naming the path on failure; never puts value in errstr. */
int tb_props_file_set(const char *path, const char *key, const char *value, char *errstr,
                      size_t errstr_size);

/* Removes every key starting with prefix from the properties file at path
 * (rewritten as tb_props_file_set does; a missing file or no such key is
 * no change). Returns -1 with errstr naming the path on failure. */
int tb_props_file_remove_prefix(const char *path, const char *prefix, char *errstr,
                                size_t errstr_size);

/* Reads a whole file into a new NUL-terminated buffer (free() it), with its
 * length in *len. Returns NULL and fills errstr (naming path) on failure. */
char *tb_file_read_all(const char *path, size_t *len, char *errstr, size_t errstr_size);

#endif
