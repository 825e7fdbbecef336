/*
 * fuzz_common.h
 *		Shared by the libFuzzer harnesses of test/fuzz and the corpus
 *		generator: checks that abort with a message, and header comparison.
 *
 * The harnesses link the core sources of src/core directly (the very files
 * the extension is built from); nothing here depends on PostgreSQL.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf_format.h"

/* Payloads larger than this are skipped (cannot happen with -max_len). */
#define FUZZ_MAX_PAYLOAD	(64u * 1024 * 1024)

/* A property that must hold: on failure print it and abort (a finding). */
#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "\nFUZZ_CHECK failed at %s:%d: %s\n  ", \
					__FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
			abort(); \
		} \
	} while (0)

static inline int
fuzz_headers_equal(const BfHeader *a, const BfHeader *b)
{
	return a->version == b->version && a->family == b->family &&
		a->layout == b->layout && a->key_kind == b->key_kind &&
		a->hashes == b->hashes && a->flags == b->flags &&
		a->layers == b->layers && a->nbits == b->nbits &&
		a->capacity == b->capacity &&
		memcmp(&a->target_fpr, &b->target_fpr, sizeof(double)) == 0 &&
		a->added == b->added;
}

/*
 * An error message must be one non-empty line of printable ASCII that fits
 * in its buffer (it ends up in errdetail).
 */
static inline int
fuzz_good_message(const char *msg, size_t bufsize)
{
	size_t		n = strnlen(msg, bufsize);

	if (n == 0 || n >= bufsize)
		return 0;
	for (size_t i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) msg[i];

		if (c < 0x20 || c >= 0x7F)
			return 0;
	}
	return 1;
}

#endif							/* FUZZ_COMMON_H */
