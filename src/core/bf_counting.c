/*
 * bf_counting.c
 *		Whole-array operations of the counting layout: removal, union (sum)
 *		and intersection (minimum) of counters, and counts of counters.
 *
 * See bf_counting.h for the layout.  Free of PostgreSQL.
 */
#include "core/bf_counting.h"

bool
bf_counting_remove(uint8_t *bits, uint64_t nbits, int k, uint64_t hash)
{
	uint8_t    *block = bf_counting_block(bits, nbits, hash);
	uint8_t		copy[BF_BLOCK_BYTES];
	uint32_t	s = ((uint32_t) hash) | 1u;

	/* work on a copy of the block, so that a refused removal changes nothing */
	memcpy(copy, block, BF_BLOCK_BYTES);
	for (int i = 0; i < k; i++)
	{
		unsigned	c = bf_counting_next(&s);
		unsigned	v = bf_counter_get(copy, c);

		if (v == 0)
			return false;
		if (v < BF_COUNTER_MAX)
			bf_counter_set(copy, c, v - 1);
	}
	memcpy(block, copy, BF_BLOCK_BYTES);
	return true;
}

/* One byte (two counters) of a sum or a minimum. */
static inline uint8_t
combine_byte(uint8_t a, uint8_t b, bool minimum)
{
	unsigned	lo_a = a & 0x0F,
				lo_b = b & 0x0F,
				hi_a = a >> 4,
				hi_b = b >> 4;
	unsigned	lo,
				hi;

	if (minimum)
	{
		lo = lo_a < lo_b ? lo_a : lo_b;
		hi = hi_a < hi_b ? hi_a : hi_b;
	}
	else
	{
		lo = lo_a + lo_b > BF_COUNTER_MAX ? BF_COUNTER_MAX : lo_a + lo_b;
		hi = hi_a + hi_b > BF_COUNTER_MAX ? BF_COUNTER_MAX : hi_a + hi_b;
	}
	return (uint8_t) (lo | (hi << 4));
}

void
bf_counting_sum(uint8_t *dst, const uint8_t *src, uint64_t nbytes)
{
	for (uint64_t i = 0; i < nbytes; i++)
		dst[i] = combine_byte(dst[i], src[i], false);
}

void
bf_counting_min(uint8_t *dst, const uint8_t *src, uint64_t nbytes)
{
	for (uint64_t i = 0; i < nbytes; i++)
		dst[i] = combine_byte(dst[i], src[i], true);
}

static inline int
byte_nonzero(uint8_t b)
{
	return ((b & 0x0F) != 0) + ((b & 0xF0) != 0);
}

static inline int
byte_saturated(uint8_t b)
{
	return ((b & 0x0F) == 0x0F) + ((b & 0xF0) == 0xF0);
}

int
bf_counting_block_nonzero(const uint8_t *block)
{
	int			n = 0;

	for (int i = 0; i < BF_BLOCK_BYTES; i++)
		n += byte_nonzero(block[i]);
	return n;
}

uint64_t
bf_counting_nonzero(const uint8_t *bits, uint64_t nbytes)
{
	uint64_t	n = 0;

	for (uint64_t i = 0; i < nbytes; i++)
		n += (uint64_t) byte_nonzero(bits[i]);
	return n;
}

uint64_t
bf_counting_saturated(const uint8_t *bits, uint64_t nbytes)
{
	uint64_t	n = 0;

	for (uint64_t i = 0; i < nbytes; i++)
		n += (uint64_t) byte_saturated(bits[i]);
	return n;
}
