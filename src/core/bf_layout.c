/*
 * bf_layout.c
 *		Whole-array operations on the bit array, and estimates from the bits.
 *
 * The per-key add and test functions are inline in bf_layout.h.  Here are
 * the operations that touch the whole array: union, intersection, population
 * count, and the cardinality and false-positive-rate estimates built on the
 * population counts.
 *
 * The loops work on 8-byte words loaded and stored with memcpy, which the
 * compiler turns into plain (vectorisable) loads and stores whatever the
 * alignment of the arrays; the last nbytes % 8 bytes are done one at a time.
 *
 * One bit array only (a filter of family 1 or 2, or one layer): the checks
 * and estimates of a scalable filter's layers are bf_scalable.c's.  Above
 * bf_format.c and bf_counting.c in the core.  Free of PostgreSQL.
 */
#include "core/bf_layout.h"

#include <math.h>
#include <string.h>

static inline int
popcount64(uint64_t w)
{
#if defined(__GNUC__) || defined(__clang__)
	return __builtin_popcountll(w);
#else
	w = w - ((w >> 1) & UINT64_C(0x5555555555555555));
	w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
	w = (w + (w >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
	return (int) ((w * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

/* dst = dst OR src, or dst AND src, 8 bytes at a time (vectorizable). */
static inline void
merge_bits(uint8_t *dst, const uint8_t *src, uint64_t nbytes, bool intersect)
{
	uint64_t	i;

	for (i = 0; i + 8 <= nbytes; i += 8)
	{
		uint64_t	a;
		uint64_t	b;

		memcpy(&a, dst + i, 8);
		memcpy(&b, src + i, 8);
		a = intersect ? (a & b) : (a | b);
		memcpy(dst + i, &a, 8);
	}
	for (; i < nbytes; i++)
		dst[i] = intersect ? (dst[i] & src[i]) : (dst[i] | src[i]);
}

void
bf_bits_or(uint8_t *dst, const uint8_t *src, uint64_t nbytes)
{
	merge_bits(dst, src, nbytes, false);
}

void
bf_bits_and(uint8_t *dst, const uint8_t *src, uint64_t nbytes)
{
	merge_bits(dst, src, nbytes, true);
}

uint64_t
bf_bits_popcount(const uint8_t *bits, uint64_t nbytes)
{
	uint64_t	total = 0;
	uint64_t	i;

	for (i = 0; i + 8 <= nbytes; i += 8)
	{
		uint64_t	w;

		memcpy(&w, bits + i, 8);
		total += (uint64_t) popcount64(w);
	}
	for (; i < nbytes; i++)
		total += (uint64_t) popcount64(bits[i]);
	return total;
}

/*
 * Histogram of the population counts of the 512-bit blocks: hist[x] is the
 * number of blocks with exactly x bits set, 0 <= x <= 512.
 */
static void
block_histogram(const uint8_t *bits, uint64_t nblocks, uint64_t *hist)
{
	uint64_t	b;

	memset(hist, 0, sizeof(uint64_t) * (BF_BLOCK_BITS + 1));
	for (b = 0; b < nblocks; b++)
	{
		const uint8_t *block = bits + b * BF_BLOCK_BYTES;
		int			x = 0;
		int			j;

		for (j = 0; j < BF_BLOCK_BYTES; j += 8)
		{
			uint64_t	w;

			memcpy(&w, block + j, 8);
			x += popcount64(w);
		}
		hist[x]++;
	}
}

/*
 * The same for the counting layout: hist[x] is the number of blocks with
 * exactly x non-zero counters, 0 <= x <= 128.
 */
static void
counting_histogram(const uint8_t *bits, uint64_t nblocks, uint64_t *hist)
{
	memset(hist, 0, sizeof(uint64_t) * (BF_COUNTING_SLOTS + 1));
	for (uint64_t b = 0; b < nblocks; b++)
		hist[bf_counting_block_nonzero(bits + b * BF_BLOCK_BYTES)]++;
}

/*
 * Histogram of the fill of the blocks of a blocked or counting array: slots
 * positions per block (512 bits or 128 counters).
 */
static int
fill_histogram(const BfHeader *h, const uint8_t *bits, uint64_t *hist)
{
	if (h->layout == BF_LAYOUT_COUNTING)
	{
		counting_histogram(bits, h->nbits / BF_BLOCK_BITS, hist);
		return BF_COUNTING_SLOTS;
	}
	block_histogram(bits, h->nbits / BF_BLOCK_BITS, hist);
	return BF_BLOCK_BITS;
}

/*
 * Estimated number of distinct keys added, from the fill.
 *
 * classic: Swamidass & Baldi, n = -(m / k) ln(1 - X / m) for X bits set out
 * of m.
 *
 * blocked: the same estimate for each 512-bit block (each block is a small
 * classic filter holding the keys that hashed to it), summed over blocks.
 *
 * A completely full array (or block) gives an infinite estimate; we count a
 * full one as half a bit short of full (X = m - 0.5, x_b = 511.5).  That is a
 * finite, conservative stand-in for "at least this many": it is larger than
 * the estimate for any array with one bit clear, so the estimate stays
 * monotone in the fill, and it keeps the sum over blocks usable when a few
 * blocks of an overloaded filter are saturated.
 */
double
bf_bits_estimate_cardinality(const BfHeader *h, const uint8_t *bits)
{
	double		k = (double) h->hashes;

	if (h->nbits == 0 || h->hashes == 0)
		return 0.0;

	if (h->layout == BF_LAYOUT_CLASSIC)
	{
		double		m = (double) h->nbits;
		double		x = (double) bf_bits_popcount(bits, bf_payload_bytes(h->nbits));

		if (x >= m)
			x = m - 0.5;
		return -(m / k) * log1p(-x / m);
	}
	else
	{
		uint64_t	hist[BF_BLOCK_BITS + 1];
		double		sum = 0.0;
		int			slots = fill_histogram(h, bits, hist);
		int			x;

		for (x = 1; x <= slots; x++)
		{
			double		xb = (x == slots) ? slots - 0.5 : (double) x;

			if (hist[x] == 0)
				continue;
			sum += (double) hist[x] *
				(-((double) slots / k) * log1p(-xb / slots));
		}
		return sum;
	}
}

/*
 * Probability that a random key that was never added tests positive, given
 * the bits as they are: (X / m)^k for classic; for blocked, the key picks a
 * uniformly random block, so the mean over blocks of (x_b / 512)^k.
 */
double
bf_bits_estimate_fpr(const BfHeader *h, const uint8_t *bits)
{
	double		k = (double) h->hashes;

	if (h->nbits == 0 || h->hashes == 0)
		return 0.0;

	if (h->layout == BF_LAYOUT_CLASSIC)
	{
		double		m = (double) h->nbits;
		double		x = (double) bf_bits_popcount(bits, bf_payload_bytes(h->nbits));

		return pow(x / m, k);
	}
	else
	{
		uint64_t	nblocks = h->nbits / BF_BLOCK_BITS;
		uint64_t	hist[BF_BLOCK_BITS + 1];
		double		sum = 0.0;
		int			slots = fill_histogram(h, bits, hist);
		int			x;

		for (x = 1; x <= slots; x++)
		{
			if (hist[x] == 0)
				continue;
			sum += (double) hist[x] * pow((double) x / slots, k);
		}
		return sum / (double) nblocks;
	}
}
