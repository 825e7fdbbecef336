/*
 * bf_agg_auto.c
 *		bloom_agg(key) and bloom_agg(key, capacity_or_fpr): aggregates with an
 *		internal state, self-sizing from the exact distinct count.
 *
 * Self-sizing (bloom_agg(key), or a second argument in (0, 1), the target
 * false-positive rate): the state collects the 64-bit hash of every key (the
 * blocked layout's hash) in a growable array.  When the array is full it is
 * sorted and deduplicated in place (only the hashes added since the last
 * time are sorted, then merged: see compact); it grows only when that freed
 * less than half of it, to twice the distinct count.  So the state holds at
 * most 2 x 8 bytes per distinct key (plus 8 bytes per row since the last
 * compaction, within the same bound), and a compaction 8 bytes more per
 * distinct key while it merges, and 8 bytes per new hash while it sorts
 * them (a scratch array of at most 128 MB: see sort_u64).  The final
 * function sorts and
 * deduplicates once more, sizes a blocked filter for exactly n = the number
 * of distinct hashes with bf_value_create(n, fpr), and sets the bits (in
 * block order, since the block index is monotonic in the hash).  The result
 * is the very value bloom_agg(key, n, fpr) gives: same parameters, bits, key
 * kind, and added = the number of non-NULL rows.
 *
 * The number of distinct keys a self-sizing build accepts is capped at
 * AUTO_MAX_DISTINCT (100 million, whose hashes take 800 MB), or fewer if a
 * filter for that many keys at the rate would not fit in a 1 GB value.  Past
 * the cap the build fails with program_limit_exceeded naming the distinct
 * count seen, rather than growing without bound: give a capacity instead.
 *
 * Capacity mode (a whole number >= 1 as second argument): the state holds a
 * filter sized for that capacity at fpr 0.01, built in place, exactly as
 * bloom_agg(key, capacity, 0.01) builds it (and its result is identical).
 * It is one aggregate with one state type, so both modes share the state
 * struct and the support functions; the mode is fixed by the first non-NULL
 * key's row, and the argument must be the same on every row.
 *
 * The forms with a polymorphic key keep the state as internal and serialize
 * partial states to bytea (see bloom_agg_auto_serialfn), so they run in
 * parallel; Citus cannot ship an internal state, and pulls their rows to the
 * coordinator.  The forms with a key of a fixed type keep the same state in
 * the type bloom_agg_state (bf_agg_state.c), whose flat form is that
 * serialization, so Citus pushes them down.  The transition, combine, final
 * and (de)serialization steps below serve both.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "core/bf_core.h"
#include "value/bf_agg_auto.h"
#include "value/bf_keys.h"
#include "value/bf_value.h"	/* bf_agg_max_distinct */
#include "value/bf_value_mem.h"

PG_FUNCTION_INFO_V1(bloom_agg_auto_transfn);
PG_FUNCTION_INFO_V1(bloom_agg_auto_finalfn);
PG_FUNCTION_INFO_V1(bloom_agg_auto_combinefn);
PG_FUNCTION_INFO_V1(bloom_agg_auto_serialfn);
PG_FUNCTION_INFO_V1(bloom_agg_auto_deserialfn);

#define AUTO_DEFAULT_FPR	0.01

/*
 * At most this many distinct keys without a capacity (documented): the
 * largest value of bloomfilter.agg_max_distinct, its default.
 */
#define AUTO_MAX_DISTINCT	UINT64CONST(100000000)

/* GUC bloomfilter.agg_max_distinct: the cap, at most AUTO_MAX_DISTINCT */
int			bf_agg_max_distinct = (int) AUTO_MAX_DISTINCT;

/* The hash array: at least this many slots, at most one allocation. */
#define AUTO_MIN_SLOTS		64
#define AUTO_MAX_SLOTS		((Size) (MaxAllocSize / sizeof(uint64)))

StaticAssertDecl(AUTO_MAX_DISTINCT < AUTO_MAX_SLOTS,
				 "the distinct cap must leave room in the hash array");

/* Serialized hash-mode state: magic "BLMA", then the fields below. */
#define AUTO_SER_MAGIC		"BLMA"
#define AUTO_SER_VERSION	1
#define AUTO_SER_HEADER		32


/*
 * Per call site (fn_extra): the key type, the last cap computed, and the
 * last second argument found valid on a row with a NULL key.
 */
typedef struct AutoSite
{
	BfKeyType	key;			/* key.typid InvalidOid: unset */
	double		cap_fpr;		/* cap below is for this rate (0: unset) */
	int			cap_limit;		/* ... and this bf_agg_max_distinct */
	uint64		cap;
	bool		param_checked;	/* checked_param below is valid */
	double		checked_param;
	bool		crowded_warned; /* the over-capacity NOTICE was given */
} AutoSite;

#define PARAM_HINT \
	"A value between 0 and 1 (exclusive) is a false-positive rate; a whole number of at least 1 is a capacity, the number of distinct keys."

/* ---------------------------------------------------------------------- */

static AutoSite *
auto_site(FunctionCallInfo fcinfo)
{
	AutoSite   *site = (AutoSite *) fcinfo->flinfo->fn_extra;

	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(AutoSite));
		fcinfo->flinfo->fn_extra = site;
	}
	return site;
}

/* The bloomfilter type, in the namespace of this function (for messages). */
static Oid
filter_type_oid(FunctionCallInfo fcinfo)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);

	if (!OidIsValid(nsp))
		return InvalidOid;
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
						   CStringGetDatum("bloomfilter"),
						   ObjectIdGetDatum(nsp));
}

/*
 * The key argument's type, resolved on the first row: the type and collation
 * of an argument are fixed for a call site.
 */
static const BfKeyType *
auto_key_type(FunctionCallInfo fcinfo, AutoSite *site)
{
	/* the last one resolved without a call expression (Citus: every row) */
	static BfKeyType bare_last;

	if (site->key.typid == InvalidOid)
	{
		Oid			typid = bf_key_arg_type(fcinfo, 1);
		bool		bare = fcinfo->flinfo->fn_expr == NULL;

		if (bare && bare_last.typid == typid &&
			bare_last.collation == PG_GET_COLLATION())
			site->key = bare_last;
		else
		{
			bf_key_type_init(&site->key, typid, PG_GET_COLLATION(),
							 filter_type_oid(fcinfo));
			if (bare)
				bare_last = site->key;
		}
	}
	return &site->key;
}

/*
 * The most distinct keys a self-sizing build at this rate accepts: the
 * documented cap (auto_fit_cap: AUTO_MAX_DISTINCT; auto_cap: the session's
 * bloomfilter.agg_max_distinct), or fewer if no filter for that many fits in
 * one value.  A rate for which not even one key fits raises
 * bf_value_create's error.
 */
static uint64
auto_fit_cap(double fpr)
{
	uint64		cap;

	cap = bf_max_capacity(BF_LAYOUT_BLOCKED, fpr, BF_MAX_NBITS(BF_LAYOUT_BLOCKED));
	if (cap == 0)
	{
		BfSize		size;

		bf_value_check_sizing(1, fpr, BF_LAYOUT_BLOCKED, &size);	/* raises */
		elog(ERROR, "no bloomfilter fits false-positive rate %g", fpr);
	}
	return Min(cap, AUTO_MAX_DISTINCT);
}

static uint64
auto_cap(double fpr, AutoSite *site)
{
	uint64		cap;

	if (site != NULL && site->cap_fpr == fpr &&
		site->cap_limit == bf_agg_max_distinct)
		return site->cap;
	cap = Min(auto_fit_cap(fpr), (uint64) bf_agg_max_distinct);
	if (site != NULL)
	{
		site->cap_fpr = fpr;
		site->cap_limit = bf_agg_max_distinct;
		site->cap = cap;
	}
	return cap;
}

/*
 * Classify the second argument: a false-positive rate in (0, 1), or a
 * capacity (a whole number >= 1, at the default rate).
 */
static AutoMode
parse_param(double x, double *fpr, int64 *capacity)
{
	if (isnan(x) || isinf(x))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom_agg capacity_or_fpr must be a finite number, not %s",
						float8out_internal(x)),
				 errhint(PARAM_HINT)));
	if (x > 0.0 && x < 1.0)
	{
		*fpr = x;
		*capacity = 0;
		return AUTO_HASHES;
	}
	if (x != floor(x))
	{
		if (x < 0.0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("bloom_agg capacity_or_fpr must be positive, not %s",
							float8out_internal(x)),
					 errhint(PARAM_HINT)));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom_agg capacity must be a whole number, not %s",
						float8out_internal(x)),
				 errhint(PARAM_HINT)));
	}
	/* the message of bf_value_create, as for bloom_agg(key, 0, fpr) */
	if (x < 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter capacity must be positive, not %s",
						float8out_internal(x)),
				 errhint("Give the number of distinct keys the filter should hold.")));
	if (x >= 9223372036854775808.0)	/* 2^63: not an int64 */
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloomfilter capacity %s is too large at false-positive rate %g",
						float8out_internal(x), AUTO_DEFAULT_FPR),
				 errdetail("A bloomfilter value is at most 1 GB: the largest capacity of a %s filter at this rate is " UINT64_FORMAT ".",
						   bf_layout_name(BF_LAYOUT_BLOCKED),
						   bf_max_capacity(BF_LAYOUT_BLOCKED, AUTO_DEFAULT_FPR,
										   BF_MAX_NBITS(BF_LAYOUT_BLOCKED))),
				 errhint("Use a larger false-positive rate, or split the keys over several filters.")));
	*fpr = AUTO_DEFAULT_FPR;
	*capacity = (int64) x;
	return AUTO_SIZED;
}

static void
param_changed_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("bloom_agg capacity, fpr and layout must be the same for every row of a group")));
}

static void
too_many_error(uint64 cap, uint64 seen)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("bloom_agg without a capacity can size a filter for at most " UINT64_FORMAT " distinct keys",
					cap),
			 errdetail("This group has at least " UINT64_FORMAT " distinct keys.  Without a capacity, bloom_agg keeps the hashes of the distinct keys in memory (8 bytes each) and accepts at most bloomfilter.agg_max_distinct = %d of them, fewer where a filter for that many would exceed 1 GB at the rate.",
					   seen, bf_agg_max_distinct),
			 errhint("Give the capacity: bloom_agg(key, capacity, fpr), with capacity the number of distinct keys.")));
}

/* ---------------------------------------------------------------------- */
/* Sorting and deduplicating the hashes                                    */

static void
insertion_sort_u64(uint64 *a, Size n)
{
	for (Size i = 1; i < n; i++)
	{
		uint64		v = a[i];
		Size		j = i;

		while (j > 0 && a[j - 1] > v)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

/*
 * In-place MSD radix sort (American flag sort) on the byte at `shift`, then
 * recursively on the lower bytes.  No extra memory beyond 6 kB of stack per
 * level (8 levels at most); hashes are uniform, so the top two levels leave
 * buckets of a few hundred even for 10^7 keys.
 */
static void
radix_sort_u64(uint64 *a, Size n, int shift)
{
	Size		count[256];
	Size		next[256];
	Size		end[256];
	Size		pos;

	if (n <= 48)
	{
		insertion_sort_u64(a, n);
		return;
	}
	if (shift >= 48)
		CHECK_FOR_INTERRUPTS();

	memset(count, 0, sizeof(count));
	for (Size i = 0; i < n; i++)
		count[(a[i] >> shift) & 0xFF]++;
	pos = 0;
	for (int b = 0; b < 256; b++)
	{
		next[b] = pos;
		pos += count[b];
		end[b] = pos;
	}

	/* put every element into its bucket by following swap cycles */
	for (int b = 0; b < 256; b++)
	{
		while (next[b] < end[b])
		{
			uint64		v = a[next[b]];
			int			d = (int) ((v >> shift) & 0xFF);

			while (d != b)
			{
				uint64		t = a[next[d]];

				a[next[d]++] = v;
				v = t;
				d = (int) ((v >> shift) & 0xFF);
			}
			a[next[b]++] = v;
		}
	}

	if (shift == 0)
		return;
	pos = 0;
	for (int b = 0; b < 256; b++)
	{
		if (count[b] > 1)
			radix_sort_u64(a + pos, count[b], shift - 8);
		pos += count[b];
	}
}

/*
 * Out of place, one byte: copy src[0 .. n) to dst, grouped by the byte at
 * `shift` in ascending order (stable); count[b] is set to the size of group b.
 * Reads sequentially and writes 256 sequential streams, where the in-place
 * pass above follows a chain of dependent loads and stores.
 */
static void
radix_scatter_u64(const uint64 *src, uint64 *dst, Size n, int shift,
				  Size *count)
{
	Size		next[256];
	Size		pos = 0;

	memset(count, 0, 256 * sizeof(Size));
	for (Size i = 0; i < n; i++)
		count[(src[i] >> shift) & 0xFF]++;
	for (int b = 0; b < 256; b++)
	{
		next[b] = pos;
		pos += count[b];
	}
	for (Size i = 0; i < n; i++)
	{
		uint64		v = src[i];

		dst[next[(v >> shift) & 0xFF]++] = v;
	}
}

/*
 * Sort n hashes in place.  A long run's top two bytes are sorted out of place
 * through a scratch array of n hashes (to it, then back, group by group: about
 * a third faster than in place), the rest in place; without the scratch (a
 * run of more than SCRATCH_MAX_HASHES, or no memory for it), all in place.
 */
#define SCRATCH_MIN_HASHES	((Size) 65536)
#define SCRATCH_MAX_HASHES	((Size) 16 * 1024 * 1024)	/* 128 MB */

static void
sort_u64(uint64 *a, Size n)
{
	uint64	   *scratch = NULL;
	Size		top[256];
	Size		second[256];
	Size		p = 0;

	if (n >= SCRATCH_MIN_HASHES && n <= SCRATCH_MAX_HASHES)
		scratch = palloc_extended(n * sizeof(uint64), MCXT_ALLOC_NO_OOM);
	if (scratch == NULL)
	{
		radix_sort_u64(a, n, 56);
		return;
	}
	radix_scatter_u64(a, scratch, n, 56, top);
	for (int b = 0; b < 256; b++)
	{
		Size		q = p;

		CHECK_FOR_INTERRUPTS();
		radix_scatter_u64(scratch + p, a + p, top[b], 48, second);
		for (int d = 0; d < 256; d++)
		{
			if (second[d] > 1)
				radix_sort_u64(a + q, second[d], 40);
			q += second[d];
		}
		p += top[b];
	}
	pfree(scratch);
}

/* Sort and deduplicate n hashes in place; returns how many are left. */
static Size
sort_unique(uint64 *a, Size n)
{
	Size		u;

	sort_u64(a, n);
	u = (n > 0) ? 1 : 0;
	for (Size i = 1; i < n; i++)
	{
		if (a[i] != a[u - 1])
			a[u++] = a[i];
	}
	return u;
}

/*
 * Merge a[p .. p + t) into a[0 .. p), both sorted and unique, keeping one of
 * each hash; returns the length of the result, at a[0].  The second run is
 * copied aside (t hashes) and the runs merged from the end down.
 */
static Size
merge_runs(uint64 *a, Size p, Size t)
{
	uint64	   *s = palloc(t * sizeof(uint64));
	Size		i = p,
				j = t,
				k = p + t;
	Size		n;

	memcpy(s, a + p, t * sizeof(uint64));
	while (j > 0)
	{
		if (i > 0 && a[i - 1] >= s[j - 1])
		{
			if (a[i - 1] == s[j - 1])
				j--;
			a[--k] = a[--i];
		}
		else
			a[--k] = s[--j];
	}
	pfree(s);
	/* a[0 .. i) stayed; the rest is at a[k .. p + t): close the gap */
	n = i + (p + t - k);
	if (k > i)
		memmove(a + i, a + k, (p + t - k) * sizeof(uint64));
	return n;
}

/*
 * Sort and deduplicate the hashes in place.  Only those added since the
 * last compaction are sorted, then merged with the sorted ones: a hash is
 * sorted once, not once per compaction (the array is compacted each time it
 * fills, and grows by doubling).  The merge sets aside the new hashes
 * (deduplicated), at most 8 bytes per distinct key for its duration.
 */
static void
compact(AutoState *st)
{
	Size		p = st->nsorted;
	Size		t;

	if (p == st->nhashes)
		return;
	Assert(p < st->nhashes);
	t = sort_unique(st->hashes + p, st->nhashes - p);
	st->nhashes = (p > 0 && t > 0) ? merge_runs(st->hashes, p, t) : p + t;
	st->nsorted = st->nhashes;
}

/*
 * The array is full: compact it, and grow it to twice the distinct count if
 * that freed less than half.  Raises the cap error past the cap.
 */
static void
make_room(AutoState *st)
{
	compact(st);
	if (st->nhashes > st->cap)
		too_many_error(st->cap, st->nhashes);
	if (st->nslots - st->nhashes < st->nhashes ||
		st->nslots - st->nhashes < AUTO_MIN_SLOTS)
	{
		Size		want = Max(2 * st->nhashes, (Size) AUTO_MIN_SLOTS);

		want = Min(want, AUTO_MAX_SLOTS);
		if (want > st->nslots)
		{
			st->hashes = repalloc(st->hashes, want * sizeof(uint64));
			st->nslots = want;
		}
	}
	/* cap <= AUTO_MAX_DISTINCT < AUTO_MAX_SLOTS: room is left */
	if (st->nhashes >= st->nslots)
		elog(ERROR, "bloom_agg hash array is full");
}

/* ---------------------------------------------------------------------- */
/* States                                                                  */

/*
 * Check a second argument as state_create would, without allocating: the
 * errors of a group whose keys are all NULL.
 */
static void
param_check(double param, AutoSite *site)
{
	double		fpr;
	int64		capacity;
	BfSize		size;

	if (parse_param(param, &fpr, &capacity) == AUTO_SIZED)
		bf_value_check_sizing(capacity, fpr, BF_LAYOUT_BLOCKED, &size);
	else
		(void) auto_cap(fpr, site);
}

/* A new state (in the current memory context) for the first key's row. */
static AutoState *
state_create(double param, AutoSite *site)
{
	AutoState  *st = palloc0(sizeof(AutoState));
	int64		capacity;

	st->param = param;
	st->mode = parse_param(param, &st->fpr, &capacity);
	if (st->mode == AUTO_SIZED)
		bf_value_create(capacity, st->fpr, BF_LAYOUT_BLOCKED, &st->filter);
	else
	{
		st->cap = auto_cap(st->fpr, site);
		st->nslots = AUTO_MIN_SLOTS;
		st->hashes = palloc(st->nslots * sizeof(uint64));
		st->nhashes = 0;
		st->nsorted = 0;
	}
	return st;
}

/* A copy of a state in the current memory context. */
static AutoState *
state_copy(const AutoState *src)
{
	AutoState  *st = palloc(sizeof(AutoState));

	*st = *src;
	if (src->mode == AUTO_SIZED)
	{
		Size		len = VARSIZE(src->filter.raw);

		st->filter.raw = palloc(len);
		memcpy(st->filter.raw, src->filter.raw, len);
		bf_value_open(st->filter.raw, &st->filter);
	}
	else
	{
		st->nslots = Max(src->nhashes, (Size) AUTO_MIN_SLOTS);
		st->hashes = palloc(st->nslots * sizeof(uint64));
		memcpy(st->hashes, src->hashes, src->nhashes * sizeof(uint64));
	}
	return st;
}

/*
 * Merge the hashes of src into dst (both compacted first); the new array is
 * allocated in the current memory context, which must be dst's.
 */
static void
merge_hashes(AutoState *dst, AutoState *src)
{
	const uint64 *a,
			   *b;
	Size		na,
				nb,
				i,
				j,
				u;
	uint64	   *out;

	compact(dst);
	compact(src);
	a = dst->hashes;
	na = dst->nhashes;
	b = src->hashes;
	nb = src->nhashes;

	/* count the union first, to check the cap before allocating */
	i = j = u = 0;
	while (i < na && j < nb)
	{
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
			i++, j++;
		u++;
	}
	u += (na - i) + (nb - j);
	if (u > dst->cap)
		too_many_error(dst->cap, u);

	out = palloc(Max(u, (Size) AUTO_MIN_SLOTS) * sizeof(uint64));
	i = j = u = 0;
	while (i < na && j < nb)
	{
		if (a[i] < b[j])
			out[u++] = a[i++];
		else if (a[i] > b[j])
			out[u++] = b[j++];
		else
		{
			out[u++] = a[i++];
			j++;
		}
	}
	while (i < na)
		out[u++] = a[i++];
	while (j < nb)
		out[u++] = b[j++];

	pfree(dst->hashes);
	dst->hashes = out;
	dst->nhashes = u;
	dst->nslots = Max(u, (Size) AUTO_MIN_SLOTS);
	dst->nsorted = u;
	dst->nrows += src->nrows;
	if (dst->key_kind == BF_KEY_NONE)
		dst->key_kind = src->key_kind;
}

/* ---------------------------------------------------------------------- */
/* The steps, for both state types                                         */

AutoState *
bf_auto_transition(FunctionCallInfo fcinfo, AutoState *st, MemoryContext cxt)
{
	double		param = AUTO_DEFAULT_FPR;
	AutoSite   *site;
	const BfKeyType *kt;
	BfHash		hashes[BF_KEY_MAX_FORMS];
	int			n;

	/* the second argument is checked on every row, NULL keys included */
	if (PG_NARGS() > 2)
	{
		if (PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("bloom_agg capacity, fpr and layout must not be NULL")));
		param = PG_GETARG_FLOAT8(2);
	}
	site = auto_site(fcinfo);

	if (PG_ARGISNULL(1))
	{
		if (st != NULL)
		{
			if (st->param != param)
				param_changed_error();
			return st;
		}
		if (!site->param_checked || site->checked_param != param)
		{
			site->param_checked = false;
			param_check(param, site);
			site->checked_param = param;
			site->param_checked = true;
		}
		return NULL;
	}

	if (st == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(cxt);

		st = state_create(param, site);
		MemoryContextSwitchTo(oldcxt);
	}
	else if (st->param != param)
		param_changed_error();

	kt = auto_key_type(fcinfo, site);
	if (st->mode == AUTO_SIZED)
	{
		/* as bloom_agg_transfn does it */
		bf_key_check_value(st->filter.hdr.key_kind, kt);
		n = bf_key_add_hashes(kt, PG_GETARG_DATUM(1), BF_LAYOUT_BLOCKED, hashes);
		for (int i = 0; i < n; i++)
			bf_add_hash(&st->filter.hdr, st->filter.bits, hashes[i]);
		bf_value_note_added(&st->filter, kt->kind, 1);
	}
	else
	{
		/* every form of the key is a hash to size the filter for */
		bf_key_check_value(st->key_kind, kt);
		n = bf_key_add_hashes(kt, PG_GETARG_DATUM(1), BF_LAYOUT_BLOCKED, hashes);
		st->key_kind = (uint8) kt->kind;
		st->nrows++;
		for (int i = 0; i < n; i++)
		{
			if (st->nhashes >= st->nslots)
				make_room(st);
			st->hashes[st->nhashes++] = hashes[i].lo;
		}
	}
	return st;
}

Datum
bf_auto_result(FunctionCallInfo fcinfo, AutoState *st)
{
	BfValue		v;

	if (st->mode == AUTO_SIZED)
	{
		Size		len = VARSIZE(st->filter.raw);
		struct varlena *res = palloc(len);
		AutoSite   *site = auto_site(fcinfo);

		if (!site->crowded_warned &&
			st->filter.hdr.added >= bf_value_keys_over_rate(&st->filter.hdr, 2.0))
			site->crowded_warned = bf_value_notice_if_crowded(&st->filter, true);
		memcpy(res, st->filter.raw, len);
		PG_RETURN_POINTER(res);
	}

	compact(st);
	if (st->nhashes > st->cap)
		too_many_error(st->cap, st->nhashes);
	bf_value_create((int64) Max(st->nhashes, (Size) 1), st->fpr,
					BF_LAYOUT_BLOCKED, &v);
	for (Size i = 0; i < st->nhashes; i++)
	{
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		bf_blocked_add(v.bits, v.hdr.nbits, v.hdr.hashes, st->hashes[i]);
	}
	bf_value_note_added(&v, st->key_kind, st->nrows);
	elog(DEBUG1, "bloom_agg: " UINT64_FORMAT " rows, " UINT64_FORMAT " distinct keys, hash array of " UINT64_FORMAT " bytes",
		 st->nrows, (uint64) st->nhashes, (uint64) (st->nslots * sizeof(uint64)));
	PG_RETURN_POINTER(v.raw);
}

AutoState *
bf_auto_copy(const AutoState *src)
{
	return state_copy(src);
}

void
bf_auto_merge(AutoState *a, AutoState *b, MemoryContext cxt)
{
	if (a->mode != b->mode || a->param != b->param)
		param_changed_error();
	if (a->mode == AUTO_SIZED)
		bf_value_merge(&a->filter, &b->filter, BF_MERGE_UNION);
	else
	{
		MemoryContext oldcxt;

		if (a->key_kind != BF_KEY_NONE && b->key_kind != BF_KEY_NONE &&
			a->key_kind != b->key_kind)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("cannot unite a bloom filter of key kind %s with one of key kind %s",
							bf_key_kind_name(a->key_kind),
							bf_key_kind_name(b->key_kind)),
					 errhint("Both filters must be built from keys of the same kind.")));
		oldcxt = MemoryContextSwitchTo(cxt);
		merge_hashes(a, b);
		MemoryContextSwitchTo(oldcxt);
	}
}

/*
 * The serialized form (the payload of a bloom_agg_auto_serialfn result and
 * of a flat bloom_agg_state).  Capacity mode: the filter's bytes (the
 * portable format, magic "BLMF").  Self-sizing: the hashes, compacted (all
 * integers little-endian):
 *
 *	offset	size	field
 *	0		4		magic "BLMA"
 *	4		1		version (1)
 *	5		1		key kind
 *	6		2		zero
 *	8		8		fpr, IEEE-754 binary64
 *	16		8		rows added (non-NULL keys)
 *	24		8		n, the number of hashes (at least 1)
 *	32		8 n		the hashes, strictly increasing
 *
 * bf_auto_serial_size compacts the hashes (which does not change the state's
 * meaning); a state past its cap stops here, with the error a serial build
 * gives, rather than reaching the leader or the coordinator.
 */
Size
bf_auto_serial_size(AutoState *st)
{
	if (st->mode == AUTO_SIZED)
		return VARSIZE(st->filter.raw) - VARHDRSZ;
	compact(st);
	if (st->nhashes > st->cap)
		too_many_error(st->cap, st->nhashes);
	return AUTO_SER_HEADER + st->nhashes * sizeof(uint64);
}

void
bf_auto_serialize(const AutoState *st, uint8 *p)
{
	uint64		fbits;

	if (st->mode == AUTO_SIZED)
	{
		memcpy(p, VARDATA(st->filter.raw), VARSIZE(st->filter.raw) - VARHDRSZ);
		return;
	}
	Assert(st->nsorted == st->nhashes);
	memcpy(p, AUTO_SER_MAGIC, 4);
	p[4] = AUTO_SER_VERSION;
	p[5] = st->key_kind;
	p[6] = p[7] = 0;
	memcpy(&fbits, &st->fpr, sizeof(fbits));
	bf_write_u64le(p + 8, fbits);
	bf_write_u64le(p + 16, st->nrows);
	bf_write_u64le(p + 24, (uint64) st->nhashes);
	p += AUTO_SER_HEADER;
#ifdef WORDS_BIGENDIAN
	for (Size i = 0; i < st->nhashes; i++)
		bf_write_u64le(p + 8 * i, st->hashes[i]);
#else
	memcpy(p, st->hashes, st->nhashes * sizeof(uint64));
#endif
}

const char *
bf_auto_deserialize(const uint8 *p, Size len, AutoState *st)
{
	memset(st, 0, sizeof(AutoState));
	if (len >= 4 && memcmp(p, AUTO_SER_MAGIC, 4) != 0)
	{
		/* a capacity-mode filter */
		struct varlena *raw;
		double		param;
		BfHeader	h;
		char		msg[256];

		if (bf_header_decode(p, len, &h, msg, sizeof(msg)) != BF_OK)
			return psprintf("%s.", bf_sentence(msg));
		raw = palloc(VARHDRSZ + len);
		SET_VARSIZE(raw, VARHDRSZ + len);
		memcpy(VARDATA(raw), p, len);
		bf_value_open(raw, &st->filter);
		param = (double) st->filter.hdr.capacity;
		/* a scalable filter of blocked layers has layout blocked too */
		if (st->filter.hdr.family != BF_FAMILY_BLOOM ||
			st->filter.hdr.layout != BF_LAYOUT_BLOCKED ||
			st->filter.hdr.target_fpr != AUTO_DEFAULT_FPR ||
			param != floor(param) || param < 1.0)
			return "The state's filter is not one that bloom_agg(key, capacity) builds.";
		st->mode = AUTO_SIZED;
		st->param = param;
		st->fpr = AUTO_DEFAULT_FPR;
	}
	else
	{
		uint64		fbits,
					n;
		const uint8 *h;

		if (len < AUTO_SER_HEADER || p[4] != AUTO_SER_VERSION ||
			p[5] > BF_KEY_KIND_MAX || p[6] != 0 || p[7] != 0)
			return "The state's header is invalid.";
		fbits = bf_read_u64le(p + 8);
		memcpy(&st->fpr, &fbits, sizeof(fbits));
		st->nrows = bf_read_u64le(p + 16);
		n = bf_read_u64le(p + 24);
		if (!(st->fpr > 0.0 && st->fpr < 1.0))
			return "The state's false-positive rate is not between 0 and 1.";
		st->cap = auto_cap(st->fpr, NULL);

		/*
		 * The serialization never holds more than the cap; reading it does
		 * not depend on the session's cap (a build from it stops there).  A
		 * row adds at most BF_KEY_MAX_FORMS hashes (text keys: several).
		 */
		if (n > auto_fit_cap(st->fpr) || n > (len - AUTO_SER_HEADER) / 8 ||
			len != AUTO_SER_HEADER + n * 8 || n == 0 ||
			(n - 1) / BF_KEY_MAX_FORMS >= st->nrows)
			return "The state's counts do not match its length.";
		st->mode = AUTO_HASHES;
		st->param = st->fpr;
		st->key_kind = p[5];
		st->nhashes = (Size) n;
		st->nslots = Max(st->nhashes, (Size) AUTO_MIN_SLOTS);
		st->hashes = palloc(st->nslots * sizeof(uint64));
		h = p + AUTO_SER_HEADER;
		for (Size i = 0; i < st->nhashes; i++)
		{
			st->hashes[i] = bf_read_u64le(h + 8 * i);
			if (i > 0 && st->hashes[i] <= st->hashes[i - 1])
				return "The state's hashes are not strictly increasing.";
		}
		st->nsorted = st->nhashes;
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Support functions of the forms with an internal state                   */

/*
 * bloom_agg_auto_transfn(state, key [, capacity_or_fpr])
 *
 * NULL keys are skipped; the first non-NULL key creates the state.
 */
Datum
bloom_agg_auto_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AutoState  *st;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "bloom_agg_auto_transfn called in non-aggregate context");
	st = PG_ARGISNULL(0) ? NULL : (AutoState *) PG_GETARG_POINTER(0);
	st = bf_auto_transition(fcinfo, st, aggcxt);
	if (st == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(st);
}

/*
 * bloom_agg_auto_finalfn(state): the filter.  Does not change what the state
 * holds (it may compact the hashes in place), so window aggregation can go
 * on with it.
 */
Datum
bloom_agg_auto_finalfn(PG_FUNCTION_ARGS)
{
	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_auto_finalfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	return bf_auto_result(fcinfo, (AutoState *) PG_GETARG_POINTER(0));
}

/* bloom_agg_auto_combinefn(state, state) */
Datum
bloom_agg_auto_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AutoState  *a;
	AutoState  *b;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "bloom_agg_auto_combinefn called in non-aggregate context");
	a = PG_ARGISNULL(0) ? NULL : (AutoState *) PG_GETARG_POINTER(0);
	b = PG_ARGISNULL(1) ? NULL : (AutoState *) PG_GETARG_POINTER(1);

	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	if (a == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(aggcxt);

		a = state_copy(b);
		MemoryContextSwitchTo(oldcxt);
		PG_RETURN_POINTER(a);
	}
	bf_auto_merge(a, b, aggcxt);
	PG_RETURN_POINTER(a);
}

/* bloom_agg_auto_serialfn(state) returns bytea: see bf_auto_serial_size */
Datum
bloom_agg_auto_serialfn(PG_FUNCTION_ARGS)
{
	AutoState  *st;
	bytea	   *res;
	Size		len;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_auto_serialfn called in non-aggregate context");
	st = (AutoState *) PG_GETARG_POINTER(0);
	len = bf_auto_serial_size(st);
	res = palloc(VARHDRSZ + len);
	SET_VARSIZE(res, VARHDRSZ + len);
	bf_auto_serialize(st, (uint8 *) VARDATA(res));
	PG_RETURN_BYTEA_P(res);
}

/* bloom_agg_auto_deserialfn(bytea, internal) returns internal */
Datum
bloom_agg_auto_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *b;
	AutoState  *st;
	const char *why;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bloom_agg_auto_deserialfn called in non-aggregate context");
	b = PG_GETARG_BYTEA_P(0);
	st = palloc(sizeof(AutoState));
	why = bf_auto_deserialize((const uint8 *) VARDATA(b), VARSIZE(b) - VARHDRSZ, st);
	if (why != NULL)
		elog(ERROR, "invalid bloom_agg partial state: %s", why);
	PG_RETURN_POINTER(st);
}
