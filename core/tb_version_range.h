/* tb_version_range.h - plugin version ranges, as Kafka Connect 4.1 reads
 * the version a user asks of a plugin (KIP-891): Maven's range syntax and
 * version order. */
#ifndef TB_VERSION_RANGE_H
#define TB_VERSION_RANGE_H

#include <stddef.h>

/* Orders two versions as Maven does: numbers numerically ("1.10" after
 * "1.9"), trailing zeros ignored ("1.0" is "1.0.0"), qualifiers alpha <
 * beta < milestone < rc < snapshot < release (also "", "ga", "final") < sp
 * < any other, and a number after any qualifier. <0, 0 or >0. */
int tb_version_compare(const char *a, const char *b);

typedef enum {
    TB_VERSION_RANGE_MALFORMED = -1,
    TB_VERSION_RANGE_OUTSIDE = 0,
    TB_VERSION_RANGE_INSIDE = 1,
} tb_version_range_match_t;

/* Whether version lies in spec, read as Connect reads a plugin version:
 * NULL, "" and "latest" take any version; a bare version "1.0" only that
 * one; else Maven ranges such as "[1.0,2.0)", "(,1.0]", "[1.0]", joined
 * by commas. On OUTSIDE, text receives the range as Connect prints it
 * ("[1.0,1.0]", "[1.0,2.0)"); on MALFORMED, Maven's reason ("Unbounded
 * range: [1.0"). text may be NULL when text_size is 0. */
tb_version_range_match_t tb_version_range_match(const char *spec, const char *version,
                                                char *text, size_t text_size);

#endif
