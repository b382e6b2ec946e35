/*
 * tb_connector_file.h - connector files given on the command line, as
 * connect-standalone takes them: a Java properties file, a JSON map of
 * strings, or a JSON object {"name","config","initial_state"?}.
 */
#ifndef TB_CONNECTOR_FILE_H
#define TB_CONNECTOR_FILE_H

#include <stddef.h>

#include <jansson.h>

/* Reads path and returns {"name","config","initial_state"} (initial_state
 * defaults to "RUNNING"; name comes from the config's "name" key when the
 * file is a plain map). Returns NULL and fills errstr, naming the file and
 * the problem, on failure. New reference. */
json_t *tb_connector_file_load(const char *path, char *errstr, size_t errstr_size);

#endif
