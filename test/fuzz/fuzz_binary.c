/*
 * fuzz_binary.c
 *		libFuzzer harness: the byte format (recv, the bytea cast, stored
 *		values) on arbitrary bytes.
 *
 * For every input:
 *	- bf_header_decode must not crash or read past the input; on failure it
 *	  must give a one-line ASCII message, also when the message buffer is
 *	  tiny or absent, and the same status every time;
 *	- bf_header_decode_prefix on the first 64 bytes (how a slice of a large
 *	  stored value is read) must agree with the whole-value decode, given
 *	  the same total length.
 * For an input that decodes:
 *	- the length is exactly 64 + bits/8, bf_header_check agrees, and
 *	  bf_header_encode reproduces the 64 header bytes exactly;
 *	- popcount, the cardinality and FPR estimates are sane (no NaN, the FPR
 *	  within [0, 1]);
 *	- a key added to a copy of the bits tests positive (no false negative),
 *	  whatever the bit count; counting: its removal is accepted and undoes
 *	  the add except in saturated counters;
 *	- text output, then text input (bf_text_parse_header and
 *	  bf_text_decode_payload), reproduces the header and the bytes exactly.
 * A scalable value (family 4): the prefix decode may accept what the whole
 * decode refuses (only the whole decode sees the layers); one that decodes
 * has consistent layers, sane estimates, survives text output and input,
 * a key added to a copy (after a new layer if the last is full) is found,
 * and so is every key of the value's after the add.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf_cuckoo.h"
#include "core/bf_format.h"
#include "core/bf_hash.h"
#include "core/bf_layout.h"
#include "core/bf_scalable.h"
#include "core/bf_sizing.h"
#include "core/bf_text.h"
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The same input as a cuckoo filter: a value that decodes survives text
 * output and input byte for byte; a key derived from the input, added to a
 * copy, is found and can be removed, and an add that finds the filter full
 * leaves the copy as it was.
 */
static void
check_cuckoo(const uint8_t *data, size_t size)
{
	BfCuckooHeader h;
	BfCuckooHeader h2;
	char		msg[256];
	uint64_t	nbytes;
	uint8_t    *copy;
	uint64_t	kh;

	if (bf_cuckoo_decode(data, size, &h, msg, sizeof(msg)) != BF_OK)
	{
		FUZZ_CHECK(fuzz_good_message(msg, sizeof(msg)), "bad cuckoo message: \"%s\"", msg);
		return;
	}
	nbytes = bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits);
	FUZZ_CHECK(size == BF_HEADER_SIZE + nbytes, "cuckoo length %zu accepted", size);
	{
		size_t		tlen = bf_cuckoo_text_length(&h);
		char	   *text = malloc(tlen + 1);
		const char *d;
		size_t		dlen;

		FUZZ_CHECK(text != NULL, "malloc");
		bf_cuckoo_text_render(&h, data + BF_HEADER_SIZE, text);
		FUZZ_CHECK(strlen(text) == tlen, "cuckoo text length");
		FUZZ_CHECK(bf_cuckoo_text_parse(text, &h2, &d, &dlen, msg, sizeof(msg)) == BF_OK,
				   "own cuckoo text refused: %s", msg);
		copy = malloc(nbytes ? nbytes : 1);
		FUZZ_CHECK(copy != NULL, "malloc");
		FUZZ_CHECK(bf_base64_decode(d, dlen, copy, nbytes) &&
				   memcmp(copy, data + BF_HEADER_SIZE, nbytes) == 0, "cuckoo text round trip");
		free(text);
	}
	kh = XXH3_64bits(data, size < 80 ? size : 80);
	if (bf_cuckoo_insert(&h, copy, kh))
	{
		FUZZ_CHECK(bf_cuckoo_contains(&h, copy, kh), "cuckoo: false negative after an add");
		FUZZ_CHECK(bf_cuckoo_remove(&h, copy, kh), "cuckoo: removal of a key just added refused");
		FUZZ_CHECK(bf_cuckoo_occupied(&h, copy) == bf_cuckoo_occupied(&h, data + BF_HEADER_SIZE),
				   "cuckoo: add then remove changed the number of slots in use");
	}
	else
		FUZZ_CHECK(memcmp(copy, data + BF_HEADER_SIZE, nbytes) == 0,
				   "cuckoo: a refused add changed the slots");
	free(copy);
}

/* A decoded scalable value: the checks listed at the top. */
static void
check_scalable(const BfHeader *h, const uint8_t *data, size_t size)
{
	uint64_t	payload = bf_value_payload_bytes(h);
	const uint8_t *layers = data + BF_HEADER_SIZE;
	uint8_t		hdr[BF_HEADER_SIZE];
	char		msg[256];

	FUZZ_CHECK(size - BF_HEADER_SIZE == payload, "scalable length %zu accepted", size);
	FUZZ_CHECK(h->hashes == 0 && h->layers >= 1 && h->layers <= BF_MAX_LAYERS &&
			   (h->layout == BF_LAYOUT_BLOCKED || h->layout == BF_LAYOUT_CLASSIC) &&
			   h->growth >= BF_MIN_GROWTH && h->growth <= BF_MAX_GROWTH &&
			   h->ratio > 0.0 && h->ratio < 1.0, "scalable header fields");
	bf_header_encode(h, hdr);
	FUZZ_CHECK(memcmp(hdr, data, BF_HEADER_SIZE) == 0, "scalable: bf_header_encode does not reproduce the header");
	if (payload > FUZZ_MAX_PAYLOAD)
		return;
	{
		double		card = bf_estimate_cardinality(h, layers);
		double		fpr = bf_estimate_fpr(h, layers);
		double		pred = bf_scalable_predict_fpr(h, layers);

		FUZZ_CHECK(!isnan(card) && card >= 0.0, "scalable cardinality %g", card);
		FUZZ_CHECK(!isnan(fpr) && fpr >= 0.0 && fpr <= 1.0, "scalable fpr %g", fpr);
		FUZZ_CHECK(!isnan(pred) && pred >= 0.0 && pred <= 1.0, "scalable predicted fpr %g", pred);
	}

	/* text out, text in */
	{
		size_t		tlen = bf_text_length(h);
		char	   *text = malloc(tlen + 1);
		uint8_t    *back = malloc(BF_HEADER_SIZE + payload);
		const char *d;
		size_t		dlen;
		BfHeader	h2;

		FUZZ_CHECK(text != NULL && back != NULL, "malloc");
		bf_text_render(h, layers, text);
		FUZZ_CHECK(strlen(text) == tlen, "scalable text length");
		FUZZ_CHECK(bf_text_parse_header(text, &h2, &d, &dlen, msg, sizeof(msg)) == BF_OK,
				   "own scalable text refused: %s", msg);
		FUZZ_CHECK(fuzz_headers_equal(h, &h2) && h2.growth == h->growth &&
				   memcmp(&h2.ratio, &h->ratio, sizeof(double)) == 0,
				   "scalable text round trip changes the header");
		bf_header_encode(&h2, back);
		FUZZ_CHECK(bf_text_decode_payload(d, dlen, back + BF_HEADER_SIZE, payload, msg, sizeof(msg)) == BF_OK,
				   "own scalable base64 refused: %s", msg);
		FUZZ_CHECK(memcmp(back, data, size) == 0, "scalable text round trip changes the bytes");
		free(back);
		free(text);
	}

	/* a key added to a copy, growing it if need be, is found */
	{
		BfHash		kh = bf_hash_bytes(h->layout, data, size < 80 ? size : 80);
		BfHeader	hc = *h;
		BfHeader	layer;
		size_t		room = size;
		uint8_t    *copy;
		BfScalableAdd r;

		if (bf_scalable_new_layer(h, FUZZ_MAX_PAYLOAD * 8, &layer, NULL, 0) == BF_OK &&
			bf_payload_bytes(layer.nbits) <= FUZZ_MAX_PAYLOAD)
			room = size + BF_HEADER_SIZE + bf_payload_bytes(layer.nbits);
		copy = malloc(room);
		FUZZ_CHECK(copy != NULL, "malloc");
		memcpy(copy, data, size);
		r = bf_scalable_add(&hc, copy + BF_HEADER_SIZE, kh);
		if (r == BF_SCALABLE_FULL && room > size)
		{
			bf_scalable_append(&hc, copy, &layer);
			FUZZ_CHECK(bf_header_decode(copy, room, NULL, msg, sizeof(msg)) == BF_OK,
					   "scalable: the value with a new layer does not decode: %s", msg);
			r = bf_scalable_add(&hc, copy + BF_HEADER_SIZE, kh);
			FUZZ_CHECK(r == BF_SCALABLE_SET, "scalable: a new layer did not take the key");
		}
		if (r != BF_SCALABLE_FULL)
		{
			FUZZ_CHECK(bf_test_hash(&hc, copy + BF_HEADER_SIZE, kh), "scalable: false negative after an add");
			FUZZ_CHECK(bf_header_decode(copy, r == BF_SCALABLE_FULL ? size : (hc.layers > h->layers ? room : size),
										NULL, msg, sizeof(msg)) == BF_OK,
					   "scalable: the value after an add does not decode: %s", msg);
		}
		free(copy);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	BfHeader	h;
	BfHeader	h2;
	BfStatus	st;
	BfStatus	st2;
	char		msg[256];
	char		small[8];
	uint8_t		hdr[BF_HEADER_SIZE];
	const uint8_t *bits;
	uint64_t	nbytes;

	/*
	 * libFuzzer hands over a buffer of exactly size bytes (ASan catches any
	 * read past it); an empty input may come as a NULL pointer.
	 */
	check_cuckoo(data, size);

	memset(&h, 0xA5, sizeof(h));
	st = bf_header_decode(data, size, &h, msg, sizeof(msg));
	st2 = bf_header_decode(data, size, NULL, small, sizeof(small));
	FUZZ_CHECK(st == st2, "status %d with a large message buffer, %d with a small one", st, st2);
	st2 = bf_header_decode(data, size, NULL, NULL, 0);
	FUZZ_CHECK(st == st2, "status %d with a message buffer, %d without", st, st2);
	FUZZ_CHECK(strnlen(small, sizeof(small)) < sizeof(small), "small message not terminated");

	if (size >= BF_HEADER_SIZE)
	{
		/* A slice: the header only, the whole length known. */
		BfHeader	hp;

		st2 = bf_header_decode_prefix(data, BF_HEADER_SIZE, size, &hp, NULL, 0);
		FUZZ_CHECK(st == st2 || (data[5] == BF_FAMILY_SCALABLE && st2 == BF_OK),
				   "prefix decode gives status %d, whole decode %d", st2, st);
		if (st == BF_OK)
			FUZZ_CHECK(fuzz_headers_equal(&h, &hp), "prefix decode gives another header");
	}

	if (st != BF_OK)
	{
		FUZZ_CHECK(fuzz_good_message(msg, sizeof(msg)), "bad message for status %d: \"%s\"", st, msg);
		return 0;
	}

	/* A value that decodes. */
	if (h.family == BF_FAMILY_SCALABLE)
	{
		check_scalable(&h, data, size);
		return 0;
	}
	nbytes = bf_payload_bytes(h.nbits);
	FUZZ_CHECK(size - BF_HEADER_SIZE == nbytes, "length %zu accepted for %llu bits",
			   size, (unsigned long long) h.nbits);
	if (nbytes > FUZZ_MAX_PAYLOAD)
		return 0;
	FUZZ_CHECK(bf_header_check(&h, NULL, 0) == BF_OK, "bf_header_check refuses a decoded header");
	FUZZ_CHECK(h.hashes >= 1 && h.hashes <= BF_MAX_HASHES, "hashes %u", h.hashes);
	FUZZ_CHECK(h.layout >= BF_LAYOUT_BLOCKED && h.layout <= BF_LAYOUT_COUNTING, "layout %u", h.layout);
	FUZZ_CHECK(h.family == bf_layout_family(h.layout), "family %u with layout %u", h.family, h.layout);
	FUZZ_CHECK(bf_layout_name(h.layout) != NULL && bf_key_kind_name(h.key_kind) != NULL,
			   "decoded layout %u or key kind %u has no name", h.layout, h.key_kind);
	bf_header_encode(&h, hdr);
	FUZZ_CHECK(memcmp(hdr, data, BF_HEADER_SIZE) == 0, "bf_header_encode does not reproduce the header");

	bits = data + BF_HEADER_SIZE;

	/* Estimates from the bits. */
	{
		uint64_t	pop = bf_bits_popcount(bits, nbytes);
		double		card = bf_estimate_cardinality(&h, bits);
		double		fpr = bf_estimate_fpr(&h, bits);

		FUZZ_CHECK(pop <= h.nbits, "popcount %llu > %llu bits",
				   (unsigned long long) pop, (unsigned long long) h.nbits);
		FUZZ_CHECK(!isnan(card) && card >= 0.0 && (pop > 0 || card == 0.0),
				   "cardinality estimate %g for %llu bits set", card, (unsigned long long) pop);
		FUZZ_CHECK(!isnan(fpr) && fpr >= 0.0 && fpr <= 1.0, "fpr estimate %g", fpr);
	}

	/* Add a key derived from the input to a copy: it must test positive. */
	{
		uint8_t    *copy = malloc(nbytes);
		BfHash		kh = bf_hash_bytes(h.layout, data, size < 80 ? size : 80);

		FUZZ_CHECK(copy != NULL, "malloc");
		memcpy(copy, bits, nbytes);
		bf_add_hash(&h, copy, kh);
		FUZZ_CHECK(bf_test_hash(&h, copy, kh), "false negative after an add");
		if (h.layout == BF_LAYOUT_COUNTING)
		{
			/*
			 * A removal undoes the add, except where a counter reached 15
			 * (saturated: it stays, even when the add saturated it)
			 */
			FUZZ_CHECK(bf_counting_remove(copy, h.nbits, h.hashes, kh.lo),
					   "removal of a key just added refused");
			for (uint64_t c = 0; c < 2 * nbytes; c++)
				FUZZ_CHECK(bf_counter_get(copy, (unsigned) c) == bf_counter_get(bits, (unsigned) c) ||
						   bf_counter_get(copy, (unsigned) c) == BF_COUNTER_MAX,
						   "add then remove changes counter %llu", (unsigned long long) c);
			bf_add_hash(&h, copy, kh);
			bf_counting_sum(copy, bits, nbytes);
			FUZZ_CHECK(bf_test_hash(&h, copy, kh), "false negative after a sum");
		}
		else
		{
			bf_bits_or(copy, bits, nbytes);
			FUZZ_CHECK(bf_test_hash(&h, copy, kh), "false negative after an OR");
		}
		free(copy);
	}

	/* Text out, text in: the same header and bytes. */
	{
		size_t		tlen = bf_text_length(&h);
		char	   *text = malloc(tlen + 1);
		uint8_t    *back = malloc(nbytes ? nbytes : 1);
		const char *d;
		size_t		dlen;

		FUZZ_CHECK(text != NULL && back != NULL, "malloc");
		memset(text, 0x5A, tlen + 1);
		bf_text_render(&h, bits, text);
		FUZZ_CHECK(strlen(text) == tlen, "rendered %zu characters, bf_text_length said %zu",
				   strlen(text), tlen);
		st = bf_text_parse_header(text, &h2, &d, &dlen, msg, sizeof(msg));
		FUZZ_CHECK(st == BF_OK, "own text output refused (%d): %s\n  text: %.300s", st, msg, text);
		FUZZ_CHECK(fuzz_headers_equal(&h, &h2), "text round trip changes the header: %.300s", text);
		FUZZ_CHECK(d + dlen == text + tlen, "payload does not end the text");
		st = bf_text_decode_payload(d, dlen, back, nbytes, msg, sizeof(msg));
		FUZZ_CHECK(st == BF_OK, "own base64 refused (%d): %s", st, msg);
		FUZZ_CHECK(memcmp(back, bits, nbytes) == 0, "text round trip changes the bits");
		free(back);
		free(text);
	}
	return 0;
}
