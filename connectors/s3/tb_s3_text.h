/*
 * tb_s3_text.h - the text of S3's and STS's APIs: percent-encoding for
 * paths and form bodies, and the text of an element of an XML answer.
 * Neither allocates but into the buffer it is given.
 */
#ifndef TB_S3_TEXT_H
#define TB_S3_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/tb_buf.h"

/* key percent-encoded as a URI path is (every byte but A-Z a-z 0-9 - . _ ~
 * and /), appended to out. */
void tb_s3_uri_encode(tb_buf_t *out, const char *text, bool keep_slash);

/* The text of the first <tag>...</tag> of xml[0..len), XML entities
 * decoded, into out (size bytes); "" when absent. Returns where the
 * element ends, or NULL when absent. */
const char *tb_s3_xml_text(const char *xml, size_t len, const char *tag, char *out,
                           size_t size);

#endif
