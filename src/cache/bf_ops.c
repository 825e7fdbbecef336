/*
 * bf_ops.c
 *		SQL functions and operators on bloomfilter values: construction,
 *		adding keys, membership, set operations, comparison and inspection.
 *
 * They read their filter arguments through call sites (bf_cache.h): the
 * key type resolved once, a stored filter from the backend's cache or by
 * slicing.  Hence this file is in src/cache/, above the value type.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/expandeddatum.h"
#include "utils/jsonb.h"

#include "cache/bf_cache.h"
#include "cache/bf_prefetch.h"
#include "core/bf_core.h"
#include "value/bf_value.h"

PG_FUNCTION_INFO_V1(bloom_empty);
PG_FUNCTION_INFO_V1(bloom_empty_scalable);
PG_FUNCTION_INFO_V1(bloom_add);
PG_FUNCTION_INFO_V1(bloom_add_literal);
PG_FUNCTION_INFO_V1(bloom_add_all);
PG_FUNCTION_INFO_V1(bloom_remove);
PG_FUNCTION_INFO_V1(bloom_remove_literal);
PG_FUNCTION_INFO_V1(bloom_contains);
PG_FUNCTION_INFO_V1(bloom_contained);
PG_FUNCTION_INFO_V1(bloom_contains_literal);
PG_FUNCTION_INFO_V1(bloom_contained_literal);
PG_FUNCTION_INFO_V1(bloom_contains_all);
PG_FUNCTION_INFO_V1(bloom_contains_any);
PG_FUNCTION_INFO_V1(bloom_maybe);
PG_FUNCTION_INFO_V1(bloom_union);
PG_FUNCTION_INFO_V1(bloom_intersect);
PG_FUNCTION_INFO_V1(bloom_eq);
PG_FUNCTION_INFO_V1(bloom_ne);
PG_FUNCTION_INFO_V1(bloom_lt);
PG_FUNCTION_INFO_V1(bloom_le);
PG_FUNCTION_INFO_V1(bloom_gt);
PG_FUNCTION_INFO_V1(bloom_ge);
PG_FUNCTION_INFO_V1(bloom_cmp);
PG_FUNCTION_INFO_V1(bloom_hash);
PG_FUNCTION_INFO_V1(bloom_hash_extended);
PG_FUNCTION_INFO_V1(bloom_info);
PG_FUNCTION_INFO_V1(bloom_cardinality);
PG_FUNCTION_INFO_V1(bloom_fpr);

#define PG_RETURN_BLOOMFILTER(v)	PG_RETURN_POINTER((v)->raw)

/*
 * bloom_empty(capacity bigint, fpr float8, layout text)
 */
Datum
bloom_empty(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		fpr = PG_GETARG_FLOAT8(1);
	char	   *layout_name = text_to_cstring(PG_GETARG_TEXT_PP(2));
	BfValue		v;

	bf_value_create(capacity, fpr, bf_layout_parse(layout_name), &v);
	PG_RETURN_BLOOMFILTER(&v);
}

/*
 * bloom_empty_scalable(initial_capacity bigint, fpr float8, growth int,
 *						ratio float8, layout text)
 */
Datum
bloom_empty_scalable(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		fpr = PG_GETARG_FLOAT8(1);
	int32		growth = PG_GETARG_INT32(2);
	double		ratio = PG_GETARG_FLOAT8(3);
	char	   *layout_name = text_to_cstring(PG_GETARG_TEXT_PP(4));
	BfValue		v;

	bf_value_create_scalable(capacity, fpr, growth, ratio,
							 bf_layout_parse(layout_name), &v);
	PG_RETURN_BLOOMFILTER(&v);
}

/*
 * Add the elements of an array to a filter being added to; returns how many
 * were added (NULL elements are skipped).
 */
static uint64
add_array(FunctionCallInfo fcinfo, BfCallSite *site, BfAdd *a,
		  ArrayType *arr)
{
	const BfKeyType *kt = bf_call_site_key(fcinfo, site, ARR_ELEMTYPE(arr), 0);
	int			nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	array_iter	iter;
	uint64		added = 0;

	bf_key_check_value(a->v.hdr.key_kind, kt);
	array_iter_setup(&iter, (AnyArrayType *) arr);
	for (int i = 0; i < nitems; i++)
	{
		bool		isnull;
		Datum		elem = array_iter_next(&iter, &isnull, i, kt->typlen,
										   kt->typbyval, kt->typalign);
		BfHash		hashes[BF_KEY_MAX_FORMS];
		int			n;

		if (isnull)
			continue;
		n = bf_key_add_hashes(kt, elem, a->v.hdr.layout, hashes);
		for (int h = 0; h < n; h++)
			bf_add_key(a, hashes[h]);
		added++;
	}
	bf_add_note_added(a, kt->kind, added);
	return added;
}

/*
 * The key type of argument key_argno: its declared type at this call, or,
 * for the bloom_literal overloads (literal true), text.
 */
static inline const BfKeyType *
key_type(FunctionCallInfo fcinfo, BfCallSite *site, int key_argno,
		 int filter_argno, bool literal)
{
	if (literal)
	{
		if (site->key.typid == TEXTOID && site->key.collation == PG_GET_COLLATION())
			return &site->key;
		return bf_call_site_key(fcinfo, site, TEXTOID, filter_argno);
	}
	return bf_call_site_arg_key(fcinfo, site, key_argno, filter_argno);
}

/*
 * bloom_add(bloomfilter, anyelement): the filter with the key added.  A NULL
 * key leaves the filter unchanged; a NULL filter gives NULL.
 *
 * In PL/pgSQL, "f := bloom_add(f, k)" and "f := f || k" add in place: see
 * bf_expanded.c.
 */
static Datum
add_key(FunctionCallInfo fcinfo, bool literal)
{
	const BfKeyType *kt;
	BfAdd		a;
	BfHash		hashes[BF_KEY_MAX_FORMS];
	int			n;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
	{
		/* keep an expanded variable expanded (no flattening copy) */
		if (!bf_expanded_is(PG_GETARG_DATUM(0)))
			PG_RETURN_DATUM(PG_GETARG_DATUM(0));
		bf_add_begin(fcinfo, 0, &a);
		PG_RETURN_DATUM(bf_add_end(&a));
	}

	kt = key_type(fcinfo, bf_call_site(fcinfo), 1, 0, literal);
	bf_add_begin(fcinfo, 0, &a);
	bf_key_check_value(a.v.hdr.key_kind, kt);
	n = bf_key_add_hashes(kt, PG_GETARG_DATUM(1), a.v.hdr.layout, hashes);
	for (int h = 0; h < n; h++)
		bf_add_key(&a, hashes[h]);
	bf_add_note_added(&a, kt->kind, 1);
	PG_RETURN_DATUM(bf_add_end(&a));
}

Datum
bloom_add(PG_FUNCTION_ARGS)
{
	return add_key(fcinfo, false);
}

/*
 * bloom_add(bloomfilter, bloom_literal), operator ||: a string literal, an
 * untyped parameter or a text value, added as text.  bloom_literal has one
 * cast, from text, and PostgreSQL never chains implicit casts: a value of
 * another type with an implicit cast to text (citext) cannot reach this
 * variant, takes the anyelement one and is judged by its own type.  (A
 * function cannot tell that its text argument was a citext: the planner folds
 * 'Alice'::citext into a text constant before the call.)
 */
Datum
bloom_add_literal(PG_FUNCTION_ARGS)
{
	return add_key(fcinfo, true);
}

/*
 * bloom_add_all(bloomfilter, anyarray): the filter with every non-NULL
 * element added.
 */
Datum
bloom_add_all(PG_FUNCTION_ARGS)
{
	BfAdd		a;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1) && !bf_expanded_is(PG_GETARG_DATUM(0)))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	bf_add_begin(fcinfo, 0, &a);
	if (!PG_ARGISNULL(1))
		add_array(fcinfo, bf_call_site(fcinfo), &a, PG_GETARG_ARRAYTYPE_P(1));
	PG_RETURN_DATUM(bf_add_end(&a));
}

/*
 * Open the filter argument for nchecks checks.  Slices are read only for
 * the bit layouts: a counting or scalable filter is always read whole.
 */
static void
open_probe(FunctionCallInfo fcinfo, BfCallSite *site, int argno, int nchecks,
		   BfProbe *p)
{
	bf_call_site_probe(fcinfo, site, argno, nchecks, p);
	if (p->bits == NULL && (p->hdr->layout == BF_LAYOUT_COUNTING ||
							p->hdr->family == BF_FAMILY_SCALABLE))
	{
		bf_call_site_value(fcinfo, site, argno, &p->own);
		p->hdr = &p->own.hdr;
		p->bits = p->own.bits;
	}
}

/*
 * Decrement the counters of every form an add of the key raised (a text key
 * has up to three, as bf_key_add_hashes gives them), in the writable copy
 * v, so that a removal undoes its add exactly.  False if the filter cannot
 * hold the key: some counter would go below zero (the caller discards v).
 */
static bool
remove_forms(BfValue *v, const BfKeyType *kt, Datum key)
{
	BfHash		hashes[BF_KEY_MAX_FORMS];
	int			n = bf_key_add_hashes(kt, key, v->hdr.layout, hashes);

	for (int h = 0; h < n; h++)
	{
		if (!bf_counting_remove(v->bits, v->hdr.nbits, v->hdr.hashes, hashes[h].lo))
			return false;
	}
	return true;
}

/*
 * bloom_remove(bloomfilter, anyelement), operator -: the counting filter
 * with one occurrence of the key removed.  A NULL key leaves the filter
 * unchanged.  Always a copy (no in-place form for PL/pgSQL).
 */
static Datum
remove_key(FunctionCallInfo fcinfo, bool literal)
{
	const BfKeyType *kt;
	BfValue		v;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	kt = key_type(fcinfo, bf_call_site(fcinfo), 1, 0, literal);
	bf_value_from_datum(PG_GETARG_DATUM(0), true, &v);
	if (v.hdr.family == BF_FAMILY_SCALABLE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot remove a key from a scalable bloom filter"),
				 errdetail("Its layers keep bits, not counts that a removal can decrement."),
				 errhint("Use a filter of layout counting, or a cuckoofilter, for keys that must be removed.")));
	if (v.hdr.layout != BF_LAYOUT_COUNTING)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot remove a key from a bloom filter of layout %s",
						bf_layout_name(v.hdr.layout)),
				 errdetail("Only a filter of layout counting keeps counts that a removal can decrement."),
				 errhint("Build the filter with layout 'counting', for example bloom_empty(capacity, fpr, 'counting').")));
	if (v.hdr.key_kind != BF_KEY_NONE)
		bf_key_check_kind(v.hdr.key_kind, kt);
	if (v.hdr.key_kind == BF_KEY_NONE ||
		!remove_forms(&v, kt, PG_GETARG_DATUM(1)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot remove a key that is not in the bloom filter"),
				 errdetail("The filter says the key was never added (or was already removed); removing it would make keys that were added test absent."),
				 errhint("Remove only keys that were added, as many times as they were added.")));
	bf_value_note_removed(&v);
	PG_RETURN_BLOOMFILTER(&v);
}

/* bloom_remove(bloomfilter, anyelement), operator - */
Datum
bloom_remove(PG_FUNCTION_ARGS)
{
	return remove_key(fcinfo, false);
}

/* bloom_remove(bloomfilter, bloom_literal), operator - */
Datum
bloom_remove_literal(PG_FUNCTION_ARGS)
{
	return remove_key(fcinfo, true);
}

/* Test one key against the filter argument, through the call-site cache. */
static bool
contains_key(FunctionCallInfo fcinfo, int filter_argno, int key_argno,
			 bool literal)
{
	BfCallSite *site = bf_call_site(fcinfo);
	const BfKeyType *kt;
	BfProbe		p;
	BfHash		hashes[BF_KEY_MAX_PROBES];
	int			n;

	kt = key_type(fcinfo, site, key_argno, filter_argno, literal);
	open_probe(fcinfo, site, filter_argno, 1, &p);
	bf_key_check_value(p.hdr->key_kind, kt);
	if (p.hdr->key_kind == BF_KEY_NONE)
		return false;			/* no key was ever added */
	n = bf_key_probe_hashes(kt, PG_GETARG_DATUM(key_argno), p.hdr->layout,
							hashes);
	for (int i = 0; i < n; i++)
	{
		if (bf_probe_test(&p, hashes[i]))
			return true;
	}
	return false;
}

Size
bf_filter_datum_bytes(Datum d)
{
	struct varlena *ptr = (struct varlena *) DatumGetPointer(d);

	/*
	 * An expanded value (a PL/pgSQL variable) counts as its flat form, which
	 * is what a parallel worker is given of it.
	 */
	if (VARATT_IS_EXTERNAL_EXPANDED(ptr))
		return EOH_get_flat_size(DatumGetEOHP(d)) - VARHDRSZ;
	if (VARATT_IS_EXTERNAL_ONDISK(ptr))
	{
		struct varatt_external toast;

		VARATT_EXTERNAL_GET_POINTER(toast, ptr);
		return (Size) toast.va_rawsize - VARHDRSZ;
	}
	if (VARATT_IS_EXTERNAL(ptr))
		return 0;				/* an indirect pointer: never a bloomfilter's */
	if (VARATT_IS_COMPRESSED(ptr))
		return (Size) VARDATA_COMPRESSED_GET_EXTSIZE(ptr);
	return VARSIZE_ANY_EXHDR(ptr);
}

BfPrefetch
bf_contains_prefetch(FunctionCallInfo fcinfo, int filter_argno, int key_argno,
					 bool literal, const Datum *keys, const bool *isnull,
					 int nkeys, int stride, Size *filter_bytes)
{
	BfCallSite *site = bf_call_site(fcinfo);
	const BfKeyType *kt;
	BfValue		v;
	BfHash		hashes[BF_KEY_MAX_PROBES];

	if (!bf_call_site_peek(fcinfo, site, filter_argno, &v))
		return BF_PREFETCH_LATER;
	if (v.hdr.family != BF_FAMILY_BLOOM || v.hdr.layout == BF_LAYOUT_COUNTING)
		return BF_PREFETCH_NEVER;
	/* an empty filter answers "no" without reading its bits */
	if (v.hdr.key_kind == BF_KEY_NONE)
		return BF_PREFETCH_NEVER;
	kt = key_type(fcinfo, site, key_argno, filter_argno, literal);
	/* only where the check itself takes its usual way, raising nothing */
	if (v.hdr.key_kind != (int) kt->kind || kt->basetype == CHAROID)
		return BF_PREFETCH_NEVER;
	for (int i = 0; i < nkeys; i++)
	{
		int			n;

		if (isnull[i * stride])
			continue;
		n = bf_key_probe_hashes(kt, keys[i * stride], v.hdr.layout, hashes);
		for (int h = 0; h < n; h++)
			bf_prefetch_hash(&v.hdr, v.bits, hashes[h]);
	}
	*filter_bytes = (Size) bf_payload_bytes(v.hdr.nbits);
	return BF_PREFETCH_DONE;
}

/* bloom_contains(bloomfilter, anyelement), operator @> */
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(contains_key(fcinfo, 0, 1, false));
}

/* bloom_contained(anyelement, bloomfilter), operator <@ */
Datum
bloom_contained(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(contains_key(fcinfo, 1, 0, false));
}

/* bloom_contains(bloomfilter, bloom_literal), operator @>: a text key */
Datum
bloom_contains_literal(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(contains_key(fcinfo, 0, 1, true));
}

/* bloom_contained(bloom_literal, bloomfilter), operator <@: a text key */
Datum
bloom_contained_literal(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(contains_key(fcinfo, 1, 0, true));
}

/*
 * Check the elements of the array in argument 1 against the filter in
 * argument 0, in batches: hash a batch and prefetch the cache line each key
 * needs, then test them, so that the memory latency of a large filter
 * overlaps.  NULL elements are counted, not checked.  With stop_on_absent /
 * stop_on_present the scan ends at the first such element.  If keep is not
 * NULL, the elements that may be present are accumulated there.
 */
#define PROBE_BATCH 16

typedef struct ArrayProbe
{
	int			present;
	int			absent;
	int			nulls;
} ArrayProbe;

static ArrayProbe
probe_array(FunctionCallInfo fcinfo, bool stop_on_absent, bool stop_on_present,
			ArrayBuildState *keep)
{
	BfCallSite *site = bf_call_site(fcinfo);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	const BfKeyType *kt = bf_call_site_key(fcinfo, site, ARR_ELEMTYPE(arr), 0);
	int			nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	ArrayProbe	r = {0, 0, 0};
	array_iter	iter;
	BfProbe		p;
	bool		empty;
	int			done = 0;

	open_probe(fcinfo, site, 0, nitems, &p);
	empty = (p.hdr->key_kind == BF_KEY_NONE);
	bf_key_check_value(p.hdr->key_kind, kt);

	array_iter_setup(&iter, (AnyArrayType *) arr);
	while (done < nitems)
	{
		Datum		elems[PROBE_BATCH];
		bool		nulls[PROBE_BATCH];
		BfHash		hashes[PROBE_BATCH][BF_KEY_MAX_PROBES];
		int			nhashes[PROBE_BATCH];
		int			n = Min(PROBE_BATCH, nitems - done);

		for (int j = 0; j < n; j++)
		{
			elems[j] = array_iter_next(&iter, &nulls[j], done + j, kt->typlen,
									   kt->typbyval, kt->typalign);
			nhashes[j] = 0;
			if (!nulls[j] && !empty)
			{
				nhashes[j] = bf_key_probe_hashes(kt, elems[j], p.hdr->layout,
												 hashes[j]);
				if (p.bits != NULL)
				{
					for (int h = 0; h < nhashes[j]; h++)
						bf_prefetch_hash(p.hdr, p.bits, hashes[j][h]);
				}
			}
		}
		for (int j = 0; j < n; j++)
		{
			bool		maybe = false;

			for (int h = 0; h < nhashes[j] && !maybe; h++)
				maybe = bf_probe_test(&p, hashes[j][h]);

			if (nulls[j])
				r.nulls++;
			else if (maybe)
			{
				r.present++;
				if (keep != NULL)
					accumArrayResult(keep, elems[j], false, kt->typid,
									 CurrentMemoryContext);
				if (stop_on_present)
					return r;
			}
			else
			{
				r.absent++;
				if (stop_on_absent)
					return r;
			}
		}
		done += n;
	}
	return r;
}

/*
 * bloom_contains_all(bloomfilter, anyarray): as key = ALL(array) — false if
 * some element is definitely absent, else NULL if some element is NULL, else
 * true (also for an empty array).
 */
Datum
bloom_contains_all(PG_FUNCTION_ARGS)
{
	ArrayProbe	r = probe_array(fcinfo, true, false, NULL);

	if (r.absent > 0)
		PG_RETURN_BOOL(false);
	if (r.nulls > 0)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(true);
}

/*
 * bloom_contains_any(bloomfilter, anyarray): as key = ANY(array) — true if
 * some element may be present, else NULL if some element is NULL, else false
 * (also for an empty array).
 */
Datum
bloom_contains_any(PG_FUNCTION_ARGS)
{
	ArrayProbe	r = probe_array(fcinfo, false, true, NULL);

	if (r.present > 0)
		PG_RETURN_BOOL(true);
	if (r.nulls > 0)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(false);
}

/*
 * bloom_maybe(bloomfilter, anyarray): the elements that may be in the filter,
 * in order (NULL elements left out): what a batch of candidates still needs a
 * table check for.
 */
Datum
bloom_maybe(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	ArrayBuildState *keep = initArrayResult(ARR_ELEMTYPE(arr),
											CurrentMemoryContext, false);

	probe_array(fcinfo, false, false, keep);
	PG_RETURN_DATUM(makeArrayResult(keep, CurrentMemoryContext));
}

/* Union or intersection; the second filter is read through the cache. */
static Datum
merge(FunctionCallInfo fcinfo, BfMergeOp op)
{
	BfValue		a,
				b;

	bf_value_from_datum(PG_GETARG_DATUM(0), true, &a);
	bf_call_site_value(fcinfo, bf_call_site(fcinfo), 1, &b);
	bf_value_merge(&a, &b, op);
	PG_RETURN_BLOOMFILTER(&a);
}

/* bloom_union(bloomfilter, bloomfilter), operator | */
Datum
bloom_union(PG_FUNCTION_ARGS)
{
	return merge(fcinfo, BF_MERGE_UNION);
}

/* bloom_intersect(bloomfilter, bloomfilter), operator & */
Datum
bloom_intersect(PG_FUNCTION_ARGS)
{
	return merge(fcinfo, BF_MERGE_INTERSECT);
}

/* Identical values: same size first, so different sizes never detoast. */
static bool
values_equal(FunctionCallInfo fcinfo)
{
	Datum		d1 = PG_GETARG_DATUM(0);
	Datum		d2 = PG_GETARG_DATUM(1);
	struct varlena *a;
	struct varlena *b;

	if (toast_raw_datum_size(d1) != toast_raw_datum_size(d2))
		return false;
	a = PG_DETOAST_DATUM_PACKED(d1);
	b = PG_DETOAST_DATUM_PACKED(d2);
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/* bloom_eq(bloomfilter, bloomfilter), operator = */
Datum
bloom_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(values_equal(fcinfo));
}

/* bloom_ne(bloomfilter, bloomfilter), operator <> */
Datum
bloom_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!values_equal(fcinfo));
}

/*
 * The order of the btree operator class: the bytes of the portable format
 * (the value as stored), compared as unsigned bytes; a value that is a
 * prefix of another sorts first.  Equal exactly when "=" (byte identity)
 * holds.  The header comes first, so values sort by layout, key kind, k and
 * size before their bits.
 */
static int
values_cmp(FunctionCallInfo fcinfo)
{
	struct varlena *a = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
	struct varlena *b = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(1));
	Size		la = VARSIZE_ANY_EXHDR(a);
	Size		lb = VARSIZE_ANY_EXHDR(b);
	int			c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(la, lb));

	if (c == 0 && la != lb)
		c = la < lb ? -1 : 1;
	else if (c != 0)
		c = c < 0 ? -1 : 1;
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	return c;
}

/* bloom_cmp(bloomfilter, bloomfilter): -1, 0 or 1, the btree support function */
Datum
bloom_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(values_cmp(fcinfo));
}

/* bloom_lt(bloomfilter, bloomfilter), operator < */
Datum
bloom_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(values_cmp(fcinfo) < 0);
}

/* bloom_le(bloomfilter, bloomfilter), operator <= */
Datum
bloom_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(values_cmp(fcinfo) <= 0);
}

/* bloom_gt(bloomfilter, bloomfilter), operator > */
Datum
bloom_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(values_cmp(fcinfo) > 0);
}

/* bloom_ge(bloomfilter, bloomfilter), operator >= */
Datum
bloom_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(values_cmp(fcinfo) >= 0);
}

/*
 * bloom_hash(bloomfilter): PostgreSQL's hash of the value's bytes, the hash
 * support function (equal values have equal bytes, so equal hashes).  Not
 * the hash of the keys, and not stable across PostgreSQL versions: for hash
 * tables, hash indexes and partitions only.
 */
Datum
bloom_hash(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
	Datum		h = hash_any((const unsigned char *) VARDATA_ANY(v),
							 (int) VARSIZE_ANY_EXHDR(v));

	PG_FREE_IF_COPY(v, 0);
	return h;
}

/* bloom_hash_extended(bloomfilter, bigint): the seeded 64-bit variant */
Datum
bloom_hash_extended(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
	Datum		h = hash_any_extended((const unsigned char *) VARDATA_ANY(v),
									  (int) VARSIZE_ANY_EXHDR(v),
									  PG_GETARG_INT64(1));

	PG_FREE_IF_COPY(v, 0);
	return h;
}

static void
append_double(StringInfo buf, const char *key, double d)
{
	char		num[32];

	bf_format_double(d, num, sizeof(num));
	appendStringInfo(buf, ", \"%s\": %s", key, num);
}

/*
 * bloom_info of a counting filter: counters in place of bits_set.
 */
static Datum
counting_info(const BfValue *v)
{
	uint64		nbytes = bf_payload_bytes(v->hdr.nbits);
	uint64		nonzero = bf_counting_nonzero(v->bits, nbytes);
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"version\": %u, \"layout\": \"%s\", \"bits\": " UINT64_FORMAT
					 ", \"counters\": " UINT64_FORMAT
					 ", \"bytes\": " UINT64_FORMAT ", \"hashes\": %u, \"key_kind\": \"%s\""
					 ", \"capacity\": " UINT64_FORMAT,
					 v->hdr.version, bf_layout_name(v->hdr.layout), v->hdr.nbits,
					 v->hdr.nbits / 4, (uint64) (BF_HEADER_SIZE + nbytes),
					 v->hdr.hashes, bf_key_kind_name(v->hdr.key_kind),
					 v->hdr.capacity);
	append_double(&buf, "target_fpr", v->hdr.target_fpr);
	appendStringInfo(&buf, ", \"added\": " UINT64_FORMAT ", \"counters_set\": " UINT64_FORMAT
					 ", \"counters_saturated\": " UINT64_FORMAT,
					 v->hdr.added, nonzero, bf_counting_saturated(v->bits, nbytes));
	append_double(&buf, "fill", (double) nonzero / (double) (v->hdr.nbits / 4));
	append_double(&buf, "estimated_cardinality",
				  bf_estimate_cardinality(&v->hdr, v->bits));
	append_double(&buf, "estimated_fpr", bf_estimate_fpr(&v->hdr, v->bits));
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * bloom_info of a scalable filter: the whole, then "layers", an array of
 * each layer's fields and estimates.
 */
static Datum
scalable_info(const BfValue *v)
{
	StringInfoData buf;
	const uint8 *p = v->bits;

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"version\": %u, \"family\": \"scalable\", \"layout\": \"%s\""
					 ", \"bits\": " UINT64_FORMAT ", \"bytes\": " UINT64_FORMAT
					 ", \"key_kind\": \"%s\", \"capacity\": " UINT64_FORMAT,
					 v->hdr.version, bf_layout_name(v->hdr.layout), v->hdr.nbits,
					 (uint64) (BF_HEADER_SIZE + bf_value_payload_bytes(&v->hdr)),
					 bf_key_kind_name(v->hdr.key_kind), v->hdr.capacity);
	append_double(&buf, "target_fpr", v->hdr.target_fpr);
	appendStringInfo(&buf, ", \"growth\": %u", v->hdr.growth);
	append_double(&buf, "ratio", v->hdr.ratio);
	appendStringInfo(&buf, ", \"added\": " UINT64_FORMAT, v->hdr.added);
	append_double(&buf, "estimated_cardinality",
				  bf_estimate_cardinality(&v->hdr, v->bits));
	append_double(&buf, "estimated_fpr", bf_estimate_fpr(&v->hdr, v->bits));
	append_double(&buf, "predicted_fpr", bf_scalable_predict_fpr(&v->hdr, v->bits));
	appendStringInfoString(&buf, ", \"layers\": [");
	for (uint32 i = 0; i < v->hdr.layers; i++)
	{
		BfHeader	l;
		const uint8 *bits = p + BF_HEADER_SIZE;
		uint64		bits_set;

		bf_scalable_layer_header(p, &l);
		bits_set = bf_bits_popcount(bits, bf_payload_bytes(l.nbits));
		appendStringInfo(&buf, "%s{\"bits\": " UINT64_FORMAT ", \"hashes\": %u"
						 ", \"capacity\": " UINT64_FORMAT,
						 i > 0 ? ", " : "", l.nbits, l.hashes, l.capacity);
		append_double(&buf, "target_fpr", l.target_fpr);
		appendStringInfo(&buf, ", \"added\": " UINT64_FORMAT ", \"bits_set\": " UINT64_FORMAT,
						 l.added, bits_set);
		append_double(&buf, "fill", (double) bits_set / (double) l.nbits);
		append_double(&buf, "estimated_cardinality", bf_estimate_cardinality(&l, bits));
		append_double(&buf, "estimated_fpr", bf_estimate_fpr(&l, bits));
		append_double(&buf, "predicted_fpr",
					  l.added > 0 ? bf_predict_fpr(l.layout, l.nbits, l.hashes, (double) l.added) : 0.0);
		appendStringInfoChar(&buf, '}');
		p = bf_scalable_next(p);
	}
	appendStringInfoString(&buf, "]}");
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * bloom_info(bloomfilter) -> jsonb: the header fields and estimates.
 */
Datum
bloom_info(PG_FUNCTION_ARGS)
{
	BfValue		v;
	StringInfoData buf;
	uint64		bits_set;

	bf_call_site_value(fcinfo, bf_call_site(fcinfo), 0, &v);
	if (v.hdr.family == BF_FAMILY_SCALABLE)
		PG_RETURN_DATUM(scalable_info(&v));
	if (v.hdr.layout == BF_LAYOUT_COUNTING)
		PG_RETURN_DATUM(counting_info(&v));
	bits_set = bf_bits_popcount(v.bits, bf_payload_bytes(v.hdr.nbits));

	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"version\": %u, \"layout\": \"%s\", \"bits\": " UINT64_FORMAT
					 ", \"bytes\": " UINT64_FORMAT ", \"hashes\": %u, \"key_kind\": \"%s\""
					 ", \"capacity\": " UINT64_FORMAT,
					 v.hdr.version, bf_layout_name(v.hdr.layout), v.hdr.nbits,
					 (uint64) (BF_HEADER_SIZE + bf_payload_bytes(v.hdr.nbits)),
					 v.hdr.hashes, bf_key_kind_name(v.hdr.key_kind),
					 v.hdr.capacity);
	append_double(&buf, "target_fpr", v.hdr.target_fpr);
	appendStringInfo(&buf, ", \"added\": " UINT64_FORMAT ", \"bits_set\": " UINT64_FORMAT,
					 v.hdr.added, bits_set);
	append_double(&buf, "fill", (double) bits_set / (double) v.hdr.nbits);
	append_double(&buf, "estimated_cardinality",
				  bf_estimate_cardinality(&v.hdr, v.bits));
	append_double(&buf, "estimated_fpr", bf_estimate_fpr(&v.hdr, v.bits));
	appendStringInfoChar(&buf, '}');

	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/* bloom_cardinality(bloomfilter): distinct keys added, estimated from the bits */
Datum
bloom_cardinality(PG_FUNCTION_ARGS)
{
	BfValue		v;

	bf_call_site_value(fcinfo, bf_call_site(fcinfo), 0, &v);
	PG_RETURN_FLOAT8(bf_estimate_cardinality(&v.hdr, v.bits));
}

/* bloom_fpr(bloomfilter): the current false-positive rate, estimated */
Datum
bloom_fpr(PG_FUNCTION_ARGS)
{
	BfValue		v;

	bf_call_site_value(fcinfo, bf_call_site(fcinfo), 0, &v);
	PG_RETURN_FLOAT8(bf_estimate_fpr(&v.hdr, v.bits));
}
