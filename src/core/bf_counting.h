/*
 * bf_counting.h
 *		The counting layout: 4-bit counters in place of bits, so that keys
 *		can be removed.
 *
 * The payload of m bits holds m/4 counters in blocks of 128 (one 64-byte
 * cache line, like a block of the blocked layout).  A key's block is chosen
 * exactly as in the blocked layout, ((h >> 32) * nblocks) >> 32 with
 * nblocks = m / 512, from its XXH3-64 hash h.  Its k counters in the block
 * come from the same multiplicative sequence as blocked positions: s starts
 * as the lower 32 bits of h forced odd, and each step s *= BF_BLOCK_MUL
 * (mod 2^32) gives counter s >> 25 (the top 7 bits).  Counter c of a block
 * is the low nibble of byte c / 2 when c is even, the high nibble when odd.
 *
 * Adding a key increments its k counters (a counter picked twice by one key
 * is incremented twice); a counter at 15 is saturated and stays at 15.
 * Removing decrements them, except saturated ones; a key one of whose
 * counters would go below zero was never added (or was already removed),
 * and is not removed at all.  A key tests present when all its k counters
 * are non-zero.
 *
 * Free of PostgreSQL.
 */
#ifndef BF_COUNTING_H
#define BF_COUNTING_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/bf_format.h"

#define BF_COUNTING_SLOTS		128 /* counters per 64-byte block */
#define BF_COUNTER_MAX			15	/* a saturated counter */
#define BF_COUNTING_MUL			UINT32_C(0x9E3779B1)	/* = BF_BLOCK_MUL */

static inline uint8_t *
bf_counting_block(uint8_t *bits, uint64_t nbits, uint64_t hash)
{
	uint64_t	nblocks = nbits / BF_BLOCK_BITS;

	return bits + (((hash >> 32) * nblocks) >> 32) * BF_BLOCK_BYTES;
}

static inline unsigned
bf_counter_get(const uint8_t *block, unsigned c)
{
	return (block[c >> 1] >> ((c & 1) * 4)) & 0x0F;
}

static inline void
bf_counter_set(uint8_t *block, unsigned c, unsigned v)
{
	unsigned	shift = (c & 1) * 4;

	block[c >> 1] = (uint8_t) ((block[c >> 1] & ~(0x0F << shift)) | (v << shift));
}

/* The i-th counter of a key: call with s = (uint32_t) hash | 1 first. */
static inline unsigned
bf_counting_next(uint32_t *s)
{
	*s *= BF_COUNTING_MUL;
	return *s >> 25;
}

static inline void
bf_counting_add(uint8_t *bits, uint64_t nbits, int k, uint64_t hash)
{
	uint8_t    *block = bf_counting_block(bits, nbits, hash);
	uint32_t	s = ((uint32_t) hash) | 1u;

	for (int i = 0; i < k; i++)
	{
		unsigned	c = bf_counting_next(&s);
		unsigned	v = bf_counter_get(block, c);

		if (v < BF_COUNTER_MAX)
			bf_counter_set(block, c, v + 1);
	}
}

/* Test a key against one block (also used on a block read alone). */
static inline bool
bf_counting_test_block(const uint8_t *block, int k, uint64_t hash)
{
	uint32_t	s = ((uint32_t) hash) | 1u;

	for (int i = 0; i < k; i++)
	{
		if (bf_counter_get(block, bf_counting_next(&s)) == 0)
			return false;
	}
	return true;
}

static inline bool
bf_counting_test(const uint8_t *bits, uint64_t nbits, int k, uint64_t hash)
{
	return bf_counting_test_block(bf_counting_block((uint8_t *) bits, nbits, hash),
								  k, hash);
}

/*
 * Remove a key: returns false, changing nothing, if one of its counters
 * would go below zero (the key is definitely not in the filter).
 */
extern bool bf_counting_remove(uint8_t *bits, uint64_t nbits, int k,
							   uint64_t hash);

/* dst = saturating dst + src, or min(dst, src), counter by counter. */
extern void bf_counting_sum(uint8_t *dst, const uint8_t *src, uint64_t nbytes);
extern void bf_counting_min(uint8_t *dst, const uint8_t *src, uint64_t nbytes);

/* Counters that are non-zero, and saturated, in the whole array. */
extern uint64_t bf_counting_nonzero(const uint8_t *bits, uint64_t nbytes);
extern uint64_t bf_counting_saturated(const uint8_t *bits, uint64_t nbytes);

/* Non-zero counters of one 64-byte block (0 .. 128). */
extern int	bf_counting_block_nonzero(const uint8_t *block);

#endif							/* BF_COUNTING_H */
