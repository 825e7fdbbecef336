/*
 * fuzz_text.c
 *		libFuzzer harness: the text form (bloomfilter_in) on arbitrary input.
 *
 * The input, cut at its first NUL byte, is the C string text input sees.
 * For every input:
 *	- bf_text_parse_header must not crash or read past the NUL; on failure
 *	  it gives a one-line ASCII message, and the same status with a tiny
 *	  message buffer or none.
 * For an input whose header parses:
 *	- the payload pointer and length lie inside the input and end it, and
 *	  the payload length is exactly the base64 length of bits/8 bytes;
 *	- the payload decodes into a buffer of exactly bits/8 bytes (ASan
 *	  catches a write past it) or fails with a message.
 * For an input that parses and decodes:
 *	- the value (bf_header_encode + the bits) passes bf_header_decode with
 *	  the same header;
 *	- rendering it again gives the input byte for byte: text input accepts
 *	  only what text output produces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf_cuckoo.h"
#include "core/bf_format.h"
#include "core/bf_text.h"
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The same text as a cuckoo filter: the parser refuses it with a message,
 * or the value it describes is valid and renders back to the input.
 */
static void
check_cuckoo_text(const char *s, size_t slen)
{
	BfCuckooHeader h;
	char		msg[256];
	const char *d;
	size_t		dlen;
	uint64_t	nbytes;
	uint8_t    *value;
	char	   *out;

	if (bf_cuckoo_text_parse(s, &h, &d, &dlen, msg, sizeof(msg)) != BF_OK)
	{
		FUZZ_CHECK(fuzz_good_message(msg, sizeof(msg)), "bad cuckoo text message: \"%s\"", msg);
		return;
	}
	nbytes = bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits);
	FUZZ_CHECK(d + dlen == s + slen && dlen == bf_base64_encoded_length((size_t) nbytes),
			   "cuckoo payload length");
	if (nbytes > FUZZ_MAX_PAYLOAD)
		return;
	value = malloc(BF_HEADER_SIZE + nbytes);
	FUZZ_CHECK(value != NULL, "malloc");
	bf_cuckoo_encode(&h, value);
	if (bf_base64_decode(d, dlen, value + BF_HEADER_SIZE, nbytes) &&
		bf_cuckoo_decode(value, BF_HEADER_SIZE + nbytes, NULL, msg, sizeof(msg)) == BF_OK)
	{
		out = malloc(bf_cuckoo_text_length(&h) + 1);
		FUZZ_CHECK(out != NULL, "malloc");
		bf_cuckoo_text_render(&h, value + BF_HEADER_SIZE, out);
		FUZZ_CHECK(strcmp(out, s) == 0, "cuckoo text in -> out differs\n  in:  %.300s\n  out: %.300s", s, out);
		free(out);
	}
	free(value);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *s;
	size_t		slen;
	BfHeader	h;
	BfHeader	h2;
	BfStatus	st;
	BfStatus	st2;
	char		msg[256];
	char		small[8];
	const char *d = NULL;
	size_t		dlen = 0;
	uint64_t	nbytes;
	uint8_t    *value;
	char	   *out;
	size_t		tlen;

	/* An exactly sized copy, so that ASan sees any read past the NUL. */
	s = malloc(size + 1);
	FUZZ_CHECK(s != NULL, "malloc");
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	slen = strlen(s);
	check_cuckoo_text(s, slen);

	st = bf_text_parse_header(s, &h, &d, &dlen, msg, sizeof(msg));
	st2 = bf_text_parse_header(s, NULL, NULL, NULL, small, sizeof(small));
	FUZZ_CHECK(st == st2, "status %d with a large message buffer, %d with a small one", st, st2);
	FUZZ_CHECK(strnlen(small, sizeof(small)) < sizeof(small), "small message not terminated");
	st2 = bf_text_parse_header(s, NULL, NULL, NULL, NULL, 0);
	FUZZ_CHECK(st == st2, "status %d with a message buffer, %d without", st, st2);
	if (st != BF_OK)
	{
		FUZZ_CHECK(fuzz_good_message(msg, sizeof(msg)), "bad message for status %d: \"%s\"", st, msg);
		free(s);
		return 0;
	}

	FUZZ_CHECK(bf_header_check(&h, NULL, 0) == BF_OK, "parsed header fails bf_header_check");
	nbytes = bf_value_payload_bytes(&h);	/* scalable: the layers too */
	FUZZ_CHECK(d != NULL && d >= s && d + dlen == s + slen,
			   "payload [%p, +%zu) is not the end of the input [%p, +%zu)",
			   (const void *) d, dlen, (void *) s, slen);
	FUZZ_CHECK((uint64_t) dlen == bf_base64_encoded_length((size_t) nbytes),
			   "payload of %zu characters accepted for %llu bytes",
			   dlen, (unsigned long long) nbytes);
	if (nbytes > FUZZ_MAX_PAYLOAD)
	{
		free(s);
		return 0;
	}

	/* The value as bloomfilter_in builds it: header, then decoded bits. */
	value = malloc(BF_HEADER_SIZE + nbytes);
	FUZZ_CHECK(value != NULL, "malloc");
	bf_header_encode(&h, value);
	st = bf_text_decode_payload(d, dlen, value + BF_HEADER_SIZE, nbytes, msg, sizeof(msg));
	if (st != BF_OK)
	{
		FUZZ_CHECK(fuzz_good_message(msg, sizeof(msg)), "bad payload message for status %d: \"%s\"", st, msg);
		free(value);
		free(s);
		return 0;
	}

	/*
	 * What text input produced must be a valid value (a scalable one's
	 * layers are in the payload: bloomfilter_in validates them now, and
	 * refuses the value with this message)...
	 */
	st = bf_header_decode(value, BF_HEADER_SIZE + nbytes, &h2, msg, sizeof(msg));
	if (st != BF_OK && h.family == BF_FAMILY_SCALABLE)
	{
		FUZZ_CHECK(fuzz_good_message(msg, sizeof(msg)), "bad layer message for status %d: \"%s\"", st, msg);
		free(value);
		free(s);
		return 0;
	}
	FUZZ_CHECK(st == BF_OK, "text input built an invalid value (%d): %s", st, msg);
	FUZZ_CHECK(fuzz_headers_equal(&h, &h2), "binary header differs from the parsed one");

	/* ...whose text output is the input, byte for byte. */
	tlen = bf_text_length(&h);
	out = malloc(tlen + 1);
	FUZZ_CHECK(out != NULL, "malloc");
	bf_text_render(&h, value + BF_HEADER_SIZE, out);
	FUZZ_CHECK(tlen == slen && strcmp(out, s) == 0,
			   "text in -> out differs\n  in:  %.300s\n  out: %.300s", s, out);

	free(out);
	free(value);
	free(s);
	return 0;
}
