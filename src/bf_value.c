/*
 * bf_value.c
 *		bloomfilter values in memory: open, create, merge.
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"

#include "bf_layout.h"
#include "bf_sizing.h"
#include "bf_text.h"
#include "bf_value.h"

void
bf_value_open(struct varlena *raw, BfValue *v)
{
	char		msg[256];

	Assert(!VARATT_IS_EXTENDED(raw));
	if (bf_header_decode((const uint8_t *) VARDATA(raw), VARSIZE(raw) - VARHDRSZ,
						 &v->hdr, msg, sizeof(msg)) != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("bloomfilter value is corrupted"),
				 errdetail("%s.", bf_sentence(msg))));
	v->raw = raw;
	v->bits = (uint8 *) VARDATA(raw) + BF_HEADER_SIZE;
}

void
bf_value_from_datum(Datum d, bool copy, BfValue *v)
{
	struct varlena *raw;

	if (copy)
		raw = PG_DETOAST_DATUM_COPY(d);
	else
		raw = PG_DETOAST_DATUM(d);
	bf_value_open(raw, v);
}

int
bf_layout_parse(const char *name)
{
	int			layout = bf_layout_from_name(name);

	if (layout < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized bloomfilter layout \"%s\"", name),
				 errhint("Use 'blocked' (the default), 'classic' or 'counting'.")));
	return layout;
}

/*
 * A message of the core (lower case, no period) as a DETAIL sentence: its
 * first letter capitalized.  Use as errdetail("%s.", bf_sentence(msg)).
 */
char *
bf_sentence(char *msg)
{
	if (msg[0] >= 'a' && msg[0] <= 'z')
		msg[0] = msg[0] - 'a' + 'A';
	return msg;
}

void
bf_value_check_sizing(int64 capacity, double fpr, int layout, BfSize *size)
{
	uint64		max_nbits = BF_MAX_NBITS(layout);
	char		rate[32];		/* fpr, shortest round-trip form */

	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter capacity must be positive, not " INT64_FORMAT,
						capacity),
				 errhint("Give the number of distinct keys the filter should hold.")));
	/* shortest round trip: %g would print 0.9999999999999999 as 1 */
	if (isfinite(fpr))
		bf_format_double(fpr, rate, sizeof(rate));
	else
		snprintf(rate, sizeof(rate), "%g", fpr);
	if (!(fpr > 0.0 && fpr < 1.0))	/* also rejects NaN */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter false-positive rate must be between 0 and 1 (exclusive), not %s",
						rate),
				 errhint("For example 0.01 for 1%%.")));

	if (!bf_size_for(layout, (uint64) capacity, fpr, max_nbits, size))
	{
		uint64		largest = bf_max_capacity(layout, fpr, max_nbits);

		if (largest == 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("bloomfilter false-positive rate %s is too small for a %s filter",
							rate, bf_layout_name(layout)),
					 errdetail("A bloomfilter value is at most 1 GB."),
					 errhint("Use a larger false-positive rate.")));
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloomfilter capacity " INT64_FORMAT " is too large at false-positive rate %s",
						capacity, rate),
				 errdetail("A bloomfilter value is at most 1 GB: the largest capacity of a %s filter at this rate is " UINT64_FORMAT ".",
						   bf_layout_name(layout), largest),
				 errhint("Use a larger false-positive rate, or split the keys over several filters.")));
	}
}

void
bf_value_create(int64 capacity, double fpr, int layout, BfValue *v)
{
	BfSize		size;
	Size		total;

	bf_value_check_sizing(capacity, fpr, layout, &size);

	memset(&v->hdr, 0, sizeof(v->hdr));
	v->hdr.version = BF_FORMAT_VERSION;
	v->hdr.family = (uint8) bf_layout_family(layout);
	v->hdr.layout = (uint8) layout;
	v->hdr.key_kind = BF_KEY_NONE;
	v->hdr.hashes = (uint16) size.hashes;
	v->hdr.flags = 0;
	v->hdr.layers = 1;
	v->hdr.nbits = size.nbits;
	v->hdr.capacity = (uint64) capacity;
	v->hdr.target_fpr = fpr;
	v->hdr.added = 0;

	total = VARHDRSZ + BF_HEADER_SIZE + (Size) bf_payload_bytes(size.nbits);
	Assert(total <= MaxAllocSize);
	v->raw = (struct varlena *) palloc0(total);
	SET_VARSIZE(v->raw, total);
	bf_header_encode(&v->hdr, (uint8_t *) VARDATA(v->raw));
	v->bits = (uint8 *) VARDATA(v->raw) + BF_HEADER_SIZE;
}

void
bf_value_note_added(BfValue *v, int kind, uint64 nkeys)
{
	uint8_t    *buf = (uint8_t *) VARDATA(v->raw);

	if (v->hdr.key_kind != kind)
	{
		Assert(v->hdr.key_kind == BF_KEY_NONE);
		v->hdr.key_kind = (uint8) kind;
		bf_header_set_key_kind(buf, (uint8_t) kind);
	}
	/* saturate: the count is informational */
	v->hdr.added = (v->hdr.added > PG_UINT64_MAX - nkeys) ?
		PG_UINT64_MAX : v->hdr.added + nkeys;
	bf_header_set_added(buf, v->hdr.added);
}

static void
describe(StringInfo buf, const BfHeader *h)
{
	char		fpr[32];

	bf_format_double(h->target_fpr, fpr, sizeof(fpr));
	appendStringInfo(buf, "layout %s, " UINT64_FORMAT " bits, %u hashes, capacity " UINT64_FORMAT ", fpr %s",
					 bf_layout_name(h->layout), h->nbits, h->hashes,
					 h->capacity, fpr);
}

void
bf_value_merge(BfValue *dst, const BfValue *src, BfMergeOp op)
{
	const BfHeader *a = &dst->hdr;
	const BfHeader *b = &src->hdr;

	if (a->layout != b->layout || a->nbits != b->nbits ||
		a->hashes != b->hashes || a->capacity != b->capacity ||
		a->target_fpr != b->target_fpr)
	{
		StringInfoData left,
					right;

		initStringInfo(&left);
		initStringInfo(&right);
		describe(&left, a);
		describe(&right, b);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 op == BF_MERGE_UNION ?
				 errmsg("cannot unite bloom filters with different parameters") :
				 errmsg("cannot intersect bloom filters with different parameters"),
				 errdetail("Left: %s; right: %s.", left.data, right.data),
				 errhint("Build both filters with the same capacity, fpr and layout.")));
	}
	if (a->key_kind != BF_KEY_NONE && b->key_kind != BF_KEY_NONE &&
		a->key_kind != b->key_kind)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 op == BF_MERGE_UNION ?
				 errmsg("cannot unite a bloom filter of key kind %s with one of key kind %s",
						bf_key_kind_name(a->key_kind), bf_key_kind_name(b->key_kind)) :
				 errmsg("cannot intersect a bloom filter of key kind %s with one of key kind %s",
						bf_key_kind_name(a->key_kind), bf_key_kind_name(b->key_kind)),
				 errhint("Both filters must be built from keys of the same kind.")));

	if (op == BF_MERGE_UNION)
	{
		if (a->layout == BF_LAYOUT_COUNTING)
			bf_counting_sum(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		else
			bf_bits_or(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		if (a->key_kind == BF_KEY_NONE)
			bf_value_note_added(dst, b->key_kind, 0);
		bf_value_note_added(dst, dst->hdr.key_kind, b->added);
	}
	else
	{
		if (a->layout == BF_LAYOUT_COUNTING)
			bf_counting_min(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		else
			bf_bits_and(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		if (a->key_kind == BF_KEY_NONE)
			bf_value_note_added(dst, b->key_kind, 0);
		if (b->added < dst->hdr.added)
		{
			dst->hdr.added = b->added;
			bf_header_set_added((uint8_t *) VARDATA(dst->raw), b->added);
		}
	}
}

/*
 * The fewest keys at which a filter's predicted false-positive rate is more
 * than factor times its target (PG_UINT64_MAX if no count gets there).
 */
uint64
bf_value_keys_over_rate(const BfHeader *h, double factor)
{
	double		limit = factor * h->target_fpr;
	uint64		lo = Max(h->capacity, 1);
	uint64		hi = lo;

#define OVER(n) (bf_predict_fpr(h->layout, h->nbits, h->hashes, (double) (n)) > limit)
	if (OVER(lo))
	{
		/* below the capacity already (a small filter): search from 1 */
		hi = lo;
		lo = 0;
	}
	else
	{
		while (!OVER(hi))
		{
			lo = hi;
			if (hi > PG_UINT64_MAX / 4)
				return PG_UINT64_MAX;
			hi *= 2;
		}
	}
	while (hi - lo > 1)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (OVER(mid))
			hi = mid;
		else
			lo = mid;
	}
#undef OVER
	return hi;
}

/*
 * A NOTICE if the filter holds so many distinct keys (estimated from its
 * bits) that its predicted false-positive rate is over twice the target;
 * true if it gave one.  final: the filter is complete (the count is what it
 * holds, not a lower bound).
 */
bool
bf_value_notice_if_crowded(const BfValue *v, bool final)
{
	double		distinct = bf_estimate_cardinality(&v->hdr, v->bits);
	double		predicted = bf_predict_fpr(v->hdr.layout, v->hdr.nbits, v->hdr.hashes,
										   distinct);
	char		rate[32];
	char		target[32];

	if (!(predicted > 2 * v->hdr.target_fpr))
		return false;
	bf_format_double(predicted, rate, sizeof(rate));
	bf_format_double(v->hdr.target_fpr, target, sizeof(target));
	ereport(NOTICE,
			(errmsg("bloom filter of capacity " UINT64_FORMAT " holds %s %.0f distinct keys",
					v->hdr.capacity, final ? "about" : "at least", distinct),
			 errdetail("Its predicted false-positive rate is %s, more than twice the target %s.",
					   rate, target),
			 final ?
			 errhint("Build it with a capacity of at least %.0f, or with bloom_agg(key) to size it from the keys.",
					 distinct) :
			 errhint("Build it with a capacity of at least the number of distinct keys, or with bloom_agg(key) to size it from them.")));
	return true;
}

void
bf_value_note_removed(BfValue *v)
{
	/* a saturated count stays saturated, like a counter */
	if (v->hdr.added > 0 && v->hdr.added < PG_UINT64_MAX)
	{
		v->hdr.added--;
		bf_header_set_added((uint8_t *) VARDATA(v->raw), v->hdr.added);
	}
}
