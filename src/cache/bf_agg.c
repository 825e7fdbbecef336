/*
 * bf_agg.c
 *		Aggregates building and combining bloomfilter values.
 *
 * The state of every aggregate is a bloomfilter value (not internal), so that
 * partial aggregation needs no serialization and distributed planners can
 * push the aggregates down.  When called as an aggregate, the transition
 * functions update the state in place in the aggregate's memory context: a
 * row costs one key hash and k bit sets, never a copy of the filter.
 *
 * What they keep per call site (the key type, the sizing last checked, the
 * batched state, the over-capacity warning) is in the call site's state
 * (bf_cache.h): hence this file is in src/cache/, above the value type.
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/builtins.h"

#include "cache/bf_cache.h"
#include "value/bf_value.h"

PG_FUNCTION_INFO_V1(bloom_agg_transfn);
PG_FUNCTION_INFO_V1(bloom_union_transfn);
PG_FUNCTION_INFO_V1(bloom_intersect_transfn);

#define DEFAULT_FPR		0.01

/*
 * Open the state in argument 0 for writing.  It is modified in place only
 * when we own it: called as a plain aggregate (not as a window function,
 * whose state may be shown to later rows) and in a plain varlena, which is
 * then a copy in the aggregate's context (nodeAgg copies a strict
 * aggregate's first input, and every value we return).  Otherwise work on a
 * copy in the per-call context; nodeAgg moves it into its own context.
 */
static void
open_state(FunctionCallInfo fcinfo, BfValue *v)
{
	Datum		d = PG_GETARG_DATUM(0);

	if (AggCheckCallContext(fcinfo, NULL) == AGG_CONTEXT_AGGREGATE &&
		!VARATT_IS_EXTENDED(DatumGetPointer(d)))
		bf_value_open((struct varlena *) DatumGetPointer(d), v);
	else
		bf_value_from_datum(d, true, v);
}

static void
check_same_sizing(const BfValue *v, int64 capacity, double fpr, int layout)
{
	if (v->hdr.capacity != (uint64) capacity || v->hdr.target_fpr != fpr ||
		v->hdr.layout != layout || v->hdr.family != bf_layout_family(layout))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom_agg capacity, fpr and layout must be the same for every row of a group")));
}

/*
 * Say so (once per call site) when a filter built by an aggregate holds so
 * many more keys than its capacity that its predicted false-positive rate is
 * over twice the target.  The count of adds includes duplicates: when it
 * passes that point, the distinct keys are estimated from the bits, and
 * looked at again each time the count doubles.
 */
static void
notice_if_crowded_at(BfCallSite *site, const BfValue *v, BfAggBatch *batch)
{
	if (site->crowded_warned)
		return;
	if (site->crowded_nbits != v->hdr.nbits || site->crowded_fpr != v->hdr.target_fpr)
	{
		site->crowded_at = bf_value_keys_over_rate(&v->hdr, 2.0);
		site->crowded_next = site->crowded_at;
		site->crowded_nbits = v->hdr.nbits;
		site->crowded_fpr = v->hdr.target_fpr;
	}
	if (v->hdr.added < site->crowded_next)
		return;
	if (batch != NULL)
		bf_agg_batch_settle(batch);	/* the estimate reads the bits */
	if (bf_value_notice_if_crowded(v, false))
		site->crowded_warned = true;
	else
		site->crowded_next = v->hdr.added > PG_UINT64_MAX / 2 ?
			PG_UINT64_MAX : 2 * v->hdr.added;
}

/*
 * A caller without call expressions (Citus's worker_partial_agg) makes a new
 * call site per row: there the bounds found for the last filter are kept
 * here, so that they are not searched for again on every row, and a filter's
 * first key starts over.  batch: v's batched state, or NULL.
 */
static void
notice_if_crowded(FunctionCallInfo fcinfo, BfCallSite *site, const BfValue *v,
				  BfAggBatch *batch)
{
	static BfCallSite bare;

	if (fcinfo->flinfo->fn_expr != NULL)
	{
		notice_if_crowded_at(site, v, batch);
		return;
	}
	if (v->hdr.added <= 1)
	{
		bare.crowded_warned = false;
		bare.crowded_next = bare.crowded_at;
	}
	site->crowded_warned = bare.crowded_warned;
	site->crowded_nbits = bare.crowded_nbits;
	site->crowded_fpr = bare.crowded_fpr;
	site->crowded_at = bare.crowded_at;
	site->crowded_next = bare.crowded_next;
	notice_if_crowded_at(site, v, batch);
	bare.crowded_warned = site->crowded_warned;
	bare.crowded_nbits = site->crowded_nbits;
	bare.crowded_fpr = site->crowded_fpr;
	bare.crowded_at = site->crowded_at;
	bare.crowded_next = site->crowded_next;
}

/*
 * The state of a plain or sorted aggregation whose filter is large enough to
 * gain from batched adds (bf_agg_batch.c), created on the first key's row;
 * NULL when the state is a plain value: in a window or hashed aggregation
 * (which counts its memory by the aggregate's context and expects states it
 * can copy cheaply), for a smaller filter, or called outside an aggregate.
 */
static BfAggBatch *
batch_state(FunctionCallInfo fcinfo, int64 capacity, double fpr, int layout)
{
	MemoryContext aggcontext;
	BfAggBatch *batch;
	BfCallSite *site;
	BfSize		size;
	AggStrategy strategy;

	if (AggCheckCallContext(fcinfo, &aggcontext) != AGG_CONTEXT_AGGREGATE ||
		!IsA(fcinfo->context, AggState))
		return NULL;
	if (!PG_ARGISNULL(0))
	{
		batch = bf_agg_batch_owned(PG_GETARG_DATUM(0), aggcontext);
		if (batch != NULL)
			check_same_sizing(bf_agg_batch_peek(batch), capacity, fpr, layout);
		return batch;
	}
	strategy = ((AggState *) fcinfo->context)->aggstrategy;
	if (strategy != AGG_PLAIN && strategy != AGG_SORTED)
		return NULL;
	bf_value_check_sizing(capacity, fpr, layout, &size);
	if (bf_payload_bytes(size.nbits) < BF_AGG_BATCH_MIN_BYTES)
		return NULL;
	batch = bf_agg_batch_create(capacity, fpr, layout, aggcontext);
	site = bf_call_site(fcinfo);
	site->agg_batch = batch;
	site->agg_batch_datum = bf_agg_batch_datum(batch);
	return batch;
}

/*
 * The batched state in argument 0 if it is the one last created at this call
 * site (so owned by this aggregation: nodeAgg hands a transition function its
 * own states only), else NULL.  A row's short path: no context lookups.
 */
static inline BfAggBatch *
site_batch(FunctionCallInfo fcinfo, BfCallSite *site)
{
	Datum		d = PG_GETARG_DATUM(0);

	if (site->agg_batch == NULL || PG_ARGISNULL(0) ||
		!VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)) ||
		d != site->agg_batch_datum)
		return NULL;
	return site->agg_batch;
}

/* The rest of bloom_agg_transfn's row with a batched state. */
static Datum
batch_add(FunctionCallInfo fcinfo, BfCallSite *site, BfAggBatch *batch)
{
	const BfValue *v = bf_agg_batch_peek(batch);
	const BfKeyType *kt;
	BfHash		hashes[BF_KEY_MAX_FORMS];
	int			n;

	kt = bf_call_site_arg_key(fcinfo, site, 1, 0);
	bf_key_check_value(v->hdr.key_kind, kt);
	n = bf_key_add_hashes(kt, PG_GETARG_DATUM(1), v->hdr.layout, hashes);
	bf_agg_batch_add_key(batch, hashes, n, kt->kind);
	/* the usual row: warned already, or not yet time to look again */
	if (fcinfo->flinfo->fn_expr == NULL ||
		(!site->crowded_warned &&
		 (site->crowded_nbits != v->hdr.nbits || site->crowded_fpr != v->hdr.target_fpr ||
		  v->hdr.added >= site->crowded_next)))
		notice_if_crowded(fcinfo, site, v, batch);
	PG_RETURN_DATUM(bf_agg_batch_datum(batch));
}

/*
 * bloom_agg_transfn(state, key, capacity [, fpr [, layout]])
 *
 * The first row with a non-NULL key creates the filter; the sizing arguments
 * must be valid on every row (NULL keys included) and stay the same for
 * every row of the group.
 */
Datum
bloom_agg_transfn(PG_FUNCTION_ARGS)
{
	int64		capacity;
	double		fpr = DEFAULT_FPR;
	int			layout = BF_LAYOUT_BLOCKED;
	BfValue		v;
	BfCallSite *site;
	const BfKeyType *kt;
	BfHash		hashes[BF_KEY_MAX_FORMS];
	int			n;
	BfAggBatch *batch;

	/*
	 * The sizing arguments are checked on every row, NULL keys included: a
	 * group of NULL keys gives NULL only for valid arguments.
	 */
	if (PG_ARGISNULL(2) || (PG_NARGS() > 3 && PG_ARGISNULL(3)) ||
		(PG_NARGS() > 4 && PG_ARGISNULL(4)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_agg capacity, fpr and layout must not be NULL")));
	capacity = PG_GETARG_INT64(2);
	if (PG_NARGS() > 3)
		fpr = PG_GETARG_FLOAT8(3);
	if (PG_NARGS() > 4)
		layout = bf_layout_parse(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	site = bf_call_site(fcinfo);

	/* NULL keys are skipped; only NULL keys (or no rows) give NULL */
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
		{
			/* validated once per call site and arguments */
			if (!site->sizing_checked || site->sizing_capacity != capacity ||
				site->sizing_fpr != fpr || site->sizing_layout != layout)
			{
				BfSize		size;

				site->sizing_checked = false;
				bf_value_check_sizing(capacity, fpr, layout, &size);
				site->sizing_capacity = capacity;
				site->sizing_fpr = fpr;
				site->sizing_layout = layout;
				site->sizing_checked = true;
			}
			PG_RETURN_NULL();
		}
		/* the header only: a window aggregate's state is not copied */
		bf_value_from_datum(PG_GETARG_DATUM(0), false, &v);
		check_same_sizing(&v, capacity, fpr, layout);
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}

	batch = site_batch(fcinfo, site);
	if (batch != NULL)
		check_same_sizing(bf_agg_batch_peek(batch), capacity, fpr, layout);
	else
		batch = batch_state(fcinfo, capacity, fpr, layout);
	if (batch != NULL)
		return batch_add(fcinfo, site, batch);
	if (PG_ARGISNULL(0))
		bf_value_create(capacity, fpr, layout, &v);
	else
	{
		open_state(fcinfo, &v);
		check_same_sizing(&v, capacity, fpr, layout);
	}

	kt = bf_call_site_arg_key(fcinfo, site, 1, 0);
	bf_key_check_value(v.hdr.key_kind, kt);
	n = bf_key_add_hashes(kt, PG_GETARG_DATUM(1), v.hdr.layout, hashes);
	for (int h = 0; h < n; h++)
		bf_add_hash(&v.hdr, v.bits, hashes[h]);
	bf_value_note_added(&v, kt->kind, 1);
	notice_if_crowded(fcinfo, site, &v, NULL);
	PG_RETURN_POINTER(v.raw);
}

static Datum
merge_transfn(FunctionCallInfo fcinfo, BfMergeOp op)
{
	BfValue		state,
				other;

	open_state(fcinfo, &state);
	bf_value_from_datum(PG_GETARG_DATUM(1), false, &other);
	bf_value_merge(&state, &other, op);
	if (op == BF_MERGE_UNION)
		notice_if_crowded(fcinfo, bf_call_site(fcinfo), &state, NULL);
	PG_RETURN_POINTER(state.raw);
}

/*
 * bloom_union_transfn(state, filter): transition and combine function of
 * bloom_union_agg, combine function of bloom_agg.
 */
Datum
bloom_union_transfn(PG_FUNCTION_ARGS)
{
	return merge_transfn(fcinfo, BF_MERGE_UNION);
}

/* bloom_intersect_transfn(state, filter): for bloom_intersect_agg */
Datum
bloom_intersect_transfn(PG_FUNCTION_ARGS)
{
	return merge_transfn(fcinfo, BF_MERGE_INTERSECT);
}
