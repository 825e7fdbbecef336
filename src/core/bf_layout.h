/*
 * bf_layout.h
 *		The bit layouts: where a key's k bits go, given its hash (and the
 *		dispatch to the counting layout of bf_counting.h).
 *
 * blocked: 512-bit blocks (one cache line).  The upper 32 bits of the 64-bit
 *	hash pick the block by multiply-shift, ((h >> 32) * nblocks) >> 32.  The
 *	lower 32 bits, forced odd, are multiplied k times by BF_BLOCK_MUL (mod 2^32);
 *	the top 9 bits of each product give a bit position in the block.
 *
 * classic: one array of m bits; positions by enhanced double hashing
 *	(Dillinger & Manolios) from a 128-bit hash: x = lo mod m, y = hi mod m,
 *	then for i = 1 .. k-1: x = (x + y) mod m, y = (y + i) mod m.
 *
 * Bit j of the array is bit (j % 8) of byte (j / 8).  Free of PostgreSQL.
 */
#ifndef BF_LAYOUT_H
#define BF_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/bf_counting.h"
#include "core/bf_format.h"
#include "core/bf_hash.h"

#define BF_BLOCK_MUL	UINT32_C(0x9E3779B1)

static inline uint64_t
bf_blocked_block(uint64_t hash, uint64_t nblocks)
{
	return ((hash >> 32) * nblocks) >> 32;
}

/* First position state for a blocked key; next with bf_blocked_next. */
static inline uint32_t
bf_blocked_seed(uint64_t hash)
{
	return ((uint32_t) hash) | 1u;
}

static inline uint32_t
bf_blocked_next(uint32_t *state)
{
	*state *= BF_BLOCK_MUL;
	return *state >> 23;
}

/* Set or test a key's k bits in its 512-bit block. */
static inline void
bf_block_add(uint8_t *block, int k, uint64_t hash)
{
	uint32_t	s = bf_blocked_seed(hash);

	for (int i = 0; i < k; i++)
	{
		uint32_t	p = bf_blocked_next(&s);

		block[p >> 3] |= (uint8_t) (1u << (p & 7));
	}
}

static inline bool
bf_block_test(const uint8_t *block, int k, uint64_t hash)
{
	uint32_t	s = bf_blocked_seed(hash);

	for (int i = 0; i < k; i++)
	{
		uint32_t	p = bf_blocked_next(&s);

		if (!(block[p >> 3] & (1u << (p & 7))))
			return false;
	}
	return true;
}

static inline void
bf_blocked_add(uint8_t *bits, uint64_t nbits, int k, uint64_t hash)
{
	bf_block_add(bits + bf_blocked_block(hash, nbits / BF_BLOCK_BITS) * BF_BLOCK_BYTES,
				 k, hash);
}

static inline bool
bf_blocked_test(const uint8_t *bits, uint64_t nbits, int k, uint64_t hash)
{
	return bf_block_test(bits + bf_blocked_block(hash, nbits / BF_BLOCK_BITS) * BF_BLOCK_BYTES,
						 k, hash);
}

/* Iterate over the k positions of a classic key. */
typedef struct BfClassicIter
{
	uint64_t	x;
	uint64_t	y;
	uint64_t	nbits;
	uint64_t	i;
} BfClassicIter;

static inline void
bf_classic_iter_init(BfClassicIter *it, uint64_t nbits, BfHash hash)
{
	it->x = hash.lo % nbits;
	it->y = hash.hi % nbits;
	it->nbits = nbits;
	it->i = 0;
}

static inline uint64_t
bf_classic_iter_next(BfClassicIter *it)
{
	uint64_t	pos = it->x;

	it->x += it->y;
	if (it->x >= it->nbits)
		it->x -= it->nbits;
	it->y += ++it->i;
	if (it->y >= it->nbits)
		it->y -= it->nbits;
	return pos;
}

static inline void
bf_classic_add(uint8_t *bits, uint64_t nbits, int k, BfHash hash)
{
	BfClassicIter it;

	bf_classic_iter_init(&it, nbits, hash);
	for (int i = 0; i < k; i++)
	{
		uint64_t	x = bf_classic_iter_next(&it);

		bits[x >> 3] |= (uint8_t) (1u << (x & 7));
	}
}

static inline bool
bf_classic_test(const uint8_t *bits, uint64_t nbits, int k, BfHash hash)
{
	BfClassicIter it;

	bf_classic_iter_init(&it, nbits, hash);
	for (int i = 0; i < k; i++)
	{
		uint64_t	x = bf_classic_iter_next(&it);

		if (!(bits[x >> 3] & (1u << (x & 7))))
			return false;
	}
	return true;
}

/* Add or test a hashed key in a filter described by h. */
static inline void
bf_add_hash(const BfHeader *h, uint8_t *bits, BfHash hash)
{
	if (h->layout == BF_LAYOUT_CLASSIC)
		bf_classic_add(bits, h->nbits, h->hashes, hash);
	else if (h->layout == BF_LAYOUT_COUNTING)
		bf_counting_add(bits, h->nbits, h->hashes, hash.lo);
	else
		bf_blocked_add(bits, h->nbits, h->hashes, hash.lo);
}

/*
 * A key is set with bf_add_hash in a single-layer filter only: a scalable
 * one may need a new layer (bf_scalable_add).  The test of a value of any
 * family, bf_test_hash, is in bf_scalable.h.
 */

/*
 * Prefetch the line at p.  On x86 an asm statement: GCC 12 at -O2 deletes a
 * __builtin_prefetch whose address is computed in one of two branches (as
 * in bf_prefetch_hash), since the builtin has no effect it must keep.
 */
static inline void
bf_prefetch_line(const void *p)
{
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
	__asm__ __volatile__("prefetcht0 %0" : : "m"(*(const char *) p));
#elif defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(p);
#else
	(void) p;
#endif
}

/* Prefetch the cache line a key's check or add will read first. */
static inline void
bf_prefetch_hash(const BfHeader *h, const uint8_t *bits, BfHash hash)
{
	if (h->family == BF_FAMILY_SCALABLE)
		return;					/* one line per layer: not worth it */
	if (h->layout == BF_LAYOUT_CLASSIC)
		bf_prefetch_line(bits + ((hash.lo % h->nbits) >> 3));
	else
		bf_prefetch_line(bits + bf_blocked_block(hash.lo, h->nbits / BF_BLOCK_BITS) * BF_BLOCK_BYTES);
}

/* Whole-array operations (nbytes = bf_payload_bytes(nbits)). */
extern void bf_bits_or(uint8_t *dst, const uint8_t *src, uint64_t nbytes);
extern void bf_bits_and(uint8_t *dst, const uint8_t *src, uint64_t nbytes);
extern uint64_t bf_bits_popcount(const uint8_t *bits, uint64_t nbytes);

/*
 * Estimates from the bits of one array (h: family 1 or 2, or a layer's).
 * Cardinality: Swamidass & Baldi, per block for the blocked and counting
 * layouts (counting: non-zero counters of 128).  FPR: the probability that a
 * random absent key tests positive given the current bits (fill^k; per
 * block for blocked and counting).  Of a value of any family:
 * bf_estimate_cardinality and bf_estimate_fpr (bf_scalable.h).
 */
extern double bf_bits_estimate_cardinality(const BfHeader *h, const uint8_t *bits);
extern double bf_bits_estimate_fpr(const BfHeader *h, const uint8_t *bits);

#endif							/* BF_LAYOUT_H */
