/* tb_base64.h - base64 decoding (RFC 4648), for every reader of it.
 *
 * Two readings, as the formats tributary reads differ:
 *   TB_BASE64_STRICT   the standard alphabet, padded to a multiple of four
 *                      characters, nothing else: Connect's records, its
 *                      JsonConverter's bytes, HTTP Basic credentials and
 *                      password hashes;
 *   TB_BASE64_LENIENT  the standard or the URL-safe alphabet, padding
 *                      optional: the JSON text Confluent's serializers take.
 * Encoding needs no helper: OpenSSL's EVP_EncodeBlock writes the standard,
 * padded form. */
#ifndef TB_BASE64_H
#define TB_BASE64_H

#include <stddef.h>
#include <stdint.h>

typedef enum { TB_BASE64_STRICT, TB_BASE64_LENIENT } tb_base64_mode_t;

/* Room enough for the bytes of any len characters of base64. */
#define TB_BASE64_DECODED_MAX(len) ((len) / 4 * 3 + 3)

/* Decodes text[0..len) into out, which has room for out_size bytes. Returns
 * the number of bytes written, or -1 when the text is not base64 of that
 * mode or the bytes do not fit. */
long tb_base64_decode(const char *text, size_t len, tb_base64_mode_t mode, uint8_t *out,
                      size_t out_size);

#endif
