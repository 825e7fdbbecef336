/*
 * bf_text.h
 *		The text form of a value: a readable header and the bits in base64.
 *
 *	version=2 layout=blocked hashes=7 key_kind=text bits=1024 capacity=100
 *	target_fpr=0.01 added=3 data=<base64 of the bit array>
 *
 * on one line, fields separated by single spaces, in exactly this order.
 * Integers are decimal without sign or leading zeros; target_fpr is the
 * shortest decimal that reads back to the same double; data is standard
 * base64 with padding.  Input accepts exactly what output produces.
 * Free of PostgreSQL.
 */
#ifndef BF_TEXT_H
#define BF_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "core/bf_format.h"

/* Length of the text form (without the terminating NUL). */
extern size_t bf_text_length(const BfHeader *h);

/* Render into out, which holds bf_text_length(h) + 1 bytes; NUL-terminated. */
extern void bf_text_render(const BfHeader *h, const uint8_t *bits, char *out);

/*
 * Parse and validate the header part of s (NUL-terminated).  On success fills
 * *h and points *data / *datalen at the base64 payload inside s, whose length
 * has been checked against the bit count.  On failure returns the status and
 * a one-line description in msg; on BF_ERR_LENGTH (a valid header whose
 * payload has the wrong length) *h is filled all the same, so that a caller
 * can tell a header describing a value too large to exist.
 */
extern BfStatus bf_text_parse_header(const char *s, BfHeader *h,
									 const char **data, size_t *datalen,
									 char *msg, size_t msglen);

/* Decode the payload into bits (nbytes = bf_payload_bytes(h->nbits)). */
extern BfStatus bf_text_decode_payload(const char *data, size_t datalen,
									   uint8_t *bits, uint64_t nbytes,
									   char *msg, size_t msglen);

/* Strict standard base64 with padding. */
extern size_t bf_base64_encoded_length(size_t n);
extern void bf_base64_encode(const uint8_t *src, size_t n, char *dst);
/* true if src is the canonical encoding of exactly dstlen bytes */
extern bool bf_base64_decode(const char *src, size_t srclen, uint8_t *dst, size_t dstlen);

/* bf_format_double, the form of target_fpr, is in bf_format.h. */

#endif							/* BF_TEXT_H */
