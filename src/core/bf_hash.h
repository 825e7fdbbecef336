/*
 * bf_hash.h
 *		Key hashing: XXH3 (seed 0) over a key's canonical bytes.
 *
 * The blocked layout uses XXH3-64; the classic layout uses XXH3-128.  The
 * functions are inline (XXH_INLINE_ALL) so that no xxhash runtime library is
 * needed and each hot path gets the hash inlined.  Free of PostgreSQL.
 */
#ifndef BF_HASH_H
#define BF_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include "core/bf_format.h"

/* A key's hash: blocked uses lo only; classic uses lo and hi. */
typedef struct BfHash
{
	uint64_t	lo;
	uint64_t	hi;
} BfHash;

static inline BfHash
bf_hash_bytes(int layout, const void *data, size_t len)
{
	BfHash		h;

	if (layout == BF_LAYOUT_CLASSIC)
	{
		XXH128_hash_t w = XXH3_128bits(data, len);

		h.lo = w.low64;
		h.hi = w.high64;
	}
	else
	{
		h.lo = XXH3_64bits(data, len);
		h.hi = 0;
	}
	return h;
}

/* Hash an integer-like key: its canonical bytes are int64 little-endian. */
static inline BfHash
bf_hash_int64(int layout, int64_t v)
{
	uint8_t		buf[8];

	bf_write_u64le(buf, (uint64_t) v);
	return bf_hash_bytes(layout, buf, sizeof(buf));
}

#endif							/* BF_HASH_H */
