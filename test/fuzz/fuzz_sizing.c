/*
 * fuzz_sizing.c
 *		libFuzzer harness: sizing (bloom_empty, bloom_agg) on arbitrary
 *		capacities, rates and bit limits.
 *
 * The input picks a layout, a capacity (any uint64, or the positive bigint
 * range SQL passes), a rate (any double, or one in (0, 1)) and a bit limit
 * (the extension's own limits, or any).  Properties:
 *	- bf_predict_fpr is a probability (never NaN, within [0, 1]);
 *	- bf_size_for refuses an invalid capacity or rate; when it succeeds the
 *	  size is a positive multiple of the layout's unit within the limit, k is
 *	  in 1..64, the predicted rate meets the target and is what
 *	  bf_predict_fpr says, and no k meets the target with one unit less (the
 *	  fewest bits); when it fails no k meets the target at the limit;
 *	- bf_max_capacity agrees with bf_size_for at the boundary.
 * A slow input (libFuzzer -timeout) is a finding too: sizing runs inside
 * bloom_empty on user input.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/bf_format.h"
#include "core/bf_sizing.h"
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The extension's limits: BF_MAX_NBITS of src/value/bf_value_mem.h for a 1 GB value. */
#define MAX_PAYLOAD	(UINT64_C(0x3fffffff) - 4 - BF_HEADER_SIZE)
#define MAX_NBITS_BLOCKED	((MAX_PAYLOAD / BF_BLOCK_BYTES) * BF_BLOCK_BITS)
#define MAX_NBITS_CLASSIC	((MAX_PAYLOAD / 8) * BF_CLASSIC_ALIGN_BITS)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		in[26] = {0};
	int			layout;
	uint64_t	capacity;
	uint64_t	rawfpr;
	double		fpr;
	uint64_t	max_nbits;
	uint64_t	unit;
	bool		valid;
	bool		ok;
	BfSize		sz;

	if (size > sizeof(in))
		return 0;
	if (size > 0)
		memcpy(in, data, size);

	layout = (in[0] & 2) ? BF_LAYOUT_COUNTING :
		(in[0] & 1) ? BF_LAYOUT_CLASSIC : BF_LAYOUT_BLOCKED;
	if (in[0] & 0x80)
		layout = in[0] & 0x7F;	/* also an unknown layout now and then */
	unit = (layout == BF_LAYOUT_CLASSIC) ? BF_CLASSIC_ALIGN_BITS : BF_BLOCK_BITS;

	capacity = bf_read_u64le(in + 2);
	switch (in[1] & 3)
	{
		case 0:
			break;				/* any uint64 */
		case 1:
			capacity &= INT64_MAX;	/* a bigint from SQL */
			break;
		default:
			capacity %= 10000000;	/* everyday sizes */
			break;
	}

	rawfpr = bf_read_u64le(in + 10);
	if (in[1] & 4)
		memcpy(&fpr, &rawfpr, sizeof(fpr));	/* any double: NaN, inf, ... */
	else
		fpr = (double) (rawfpr >> 11) / 9007199254740992.0;	/* [0, 1) */

	switch ((in[1] >> 3) & 3)
	{
		case 0:
		case 1:
			max_nbits = (layout == BF_LAYOUT_CLASSIC) ? MAX_NBITS_CLASSIC : MAX_NBITS_BLOCKED;
			break;
		case 2:
			max_nbits = bf_read_u64le(in + 18);
			break;
		default:
			max_nbits = bf_read_u64le(in + 18) % (UINT64_C(1) << 24);
			break;
	}

	valid = (layout >= BF_LAYOUT_BLOCKED && layout <= BF_LAYOUT_COUNTING) &&
		capacity >= 1 && isfinite(fpr) && fpr > 0.0 && fpr < 1.0;

	ok = bf_size_for(layout, capacity, fpr, max_nbits, &sz);
	if (!valid)
	{
		FUZZ_CHECK(!ok, "sized layout %d, capacity %llu, fpr %g", layout,
				   (unsigned long long) capacity, fpr);
		FUZZ_CHECK(bf_max_capacity(layout, fpr, max_nbits) == 0 || capacity < 1,
				   "max capacity for an invalid layout or rate");
		return 0;
	}

	if (ok)
	{
		double		pred = bf_predict_fpr(layout, sz.nbits, sz.hashes, (double) capacity);

		FUZZ_CHECK(sz.nbits >= unit && sz.nbits % unit == 0 && sz.nbits <= max_nbits,
				   "%llu bits (unit %llu, limit %llu)", (unsigned long long) sz.nbits,
				   (unsigned long long) unit, (unsigned long long) max_nbits);
		FUZZ_CHECK(sz.hashes >= 1 && sz.hashes <= BF_MAX_HASHES, "k = %d", sz.hashes);
		FUZZ_CHECK(!isnan(pred) && pred >= 0.0 && pred <= 1.0, "predicted rate %g", pred);
		FUZZ_CHECK(pred <= fpr, "predicted %.17g above the target %.17g (n %llu, m %llu, k %d)",
				   pred, fpr, (unsigned long long) capacity,
				   (unsigned long long) sz.nbits, sz.hashes);
		FUZZ_CHECK(memcmp(&pred, &sz.predicted_fpr, sizeof(double)) == 0,
				   "predicted_fpr %.17g, bf_predict_fpr %.17g", sz.predicted_fpr, pred);
		if (sz.nbits > unit)
		{
			for (int k = 1; k <= BF_MAX_HASHES; k++)
			{
				double		p = bf_predict_fpr(layout, sz.nbits - unit, k, (double) capacity);

				FUZZ_CHECK(!isnan(p) && p >= 0.0 && p <= 1.0, "predicted rate %g", p);
				FUZZ_CHECK(p > fpr, "not the fewest bits: %llu bits with k = %d give %.17g <= %.17g (n %llu)",
						   (unsigned long long) (sz.nbits - unit), k, p, fpr,
						   (unsigned long long) capacity);
			}
		}
	}
	else if (max_nbits / unit > 0)
	{
		for (int k = 1; k <= BF_MAX_HASHES; k++)
		{
			double		p = bf_predict_fpr(layout, (max_nbits / unit) * unit, k, (double) capacity);

			FUZZ_CHECK(!isnan(p) && p >= 0.0 && p <= 1.0, "predicted rate %g", p);
			FUZZ_CHECK(p > fpr, "refused, yet %llu bits with k = %d give %.17g <= %.17g (n %llu)",
					   (unsigned long long) ((max_nbits / unit) * unit), k, p, fpr,
					   (unsigned long long) capacity);
		}
	}

	/* The boundary: what bloom_empty's error message reports. */
	if (in[1] & 0x20)
	{
		uint64_t	c = bf_max_capacity(layout, fpr, max_nbits);

		if (c > 0)
		{
			FUZZ_CHECK(bf_size_for(layout, c, fpr, max_nbits, NULL),
					   "bf_max_capacity %llu is refused", (unsigned long long) c);
			if (c < (UINT64_C(1) << 62))
				FUZZ_CHECK(!bf_size_for(layout, c + 1, fpr, max_nbits, NULL),
						   "bf_max_capacity %llu, yet %llu is accepted",
						   (unsigned long long) c, (unsigned long long) (c + 1));
		}
		else
			FUZZ_CHECK(!bf_size_for(layout, 1, fpr, max_nbits, NULL),
					   "bf_max_capacity 0, yet capacity 1 is accepted");
	}
	return 0;
}
