/*
 * bf_agg_state.c
 *		The type bloom_agg_state: the state of bloom_agg(key) and
 *		bloom_agg(key, capacity_or_fpr) for keys of a fixed type.
 *
 * Citus pushes an aggregate down to its workers only when its state is of a
 * real type (not internal) and it has a combine function: every worker runs
 * the transition function over its shards and sends the state's text form;
 * the coordinator reads the states with the type's input function, merges
 * them with the combine function and applies the final function.  It calls
 * the transition function without a call expression, so the key's type is
 * the declared one (bf_key_arg_type): these aggregates have one overload per
 * key type.
 *
 * Within an aggregate the state is an expanded object (utils/expandeddatum.h)
 * holding the AutoState of bf_agg_auto.c.  nodeAgg, nodeWindowAgg and Citus
 * keep a read/write expanded state that lives in a child of the aggregate's
 * memory context without copying it, and the transition function changes
 * it in place: a row costs what it costs with the internal state.
 *
 * Its flat form is a varlena whose payload is the serialization of
 * bf_agg_auto.c ("BLMA" and the distinct hashes, or the filter of the
 * capacity mode).  Flattening compacts the hashes first, so a state has one
 * flat form.  The binary form (send/recv) is the payload; the text form is
 * the payload in base64.  Input validates every field, so functions given a
 * flat state can trust it.
 */
#include "postgres.h"

#include "value/bf_compat.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "core/bf_core.h"
#include "value/bf_agg_auto.h"
#include "value/bf_value_mem.h"

PG_FUNCTION_INFO_V1(bloom_agg_state_in);
PG_FUNCTION_INFO_V1(bloom_agg_state_out);
PG_FUNCTION_INFO_V1(bloom_agg_state_recv);
PG_FUNCTION_INFO_V1(bloom_agg_state_send);
PG_FUNCTION_INFO_V1(bloom_agg_state_transfn);
PG_FUNCTION_INFO_V1(bloom_agg_state_combinefn);
PG_FUNCTION_INFO_V1(bloom_agg_state_finalfn);

/* An expanded bloom_agg_state. */
typedef struct AutoExpanded
{
	ExpandedObjectHeader eoh;	/* standard header: must be first */
	AutoState  *st;				/* in eoh.eoh_context */
} AutoExpanded;

static Size axp_get_flat_size(ExpandedObjectHeader *eohptr);
static void axp_flatten_into(ExpandedObjectHeader *eohptr,
							 void *result, Size allocated_size);

static const ExpandedObjectMethods axp_methods =
{
	axp_get_flat_size,
	axp_flatten_into
};

static Size
axp_get_flat_size(ExpandedObjectHeader *eohptr)
{
	AutoExpanded *x = (AutoExpanded *) eohptr;

	return VARHDRSZ + bf_auto_serial_size(x->st);
}

static void
axp_flatten_into(ExpandedObjectHeader *eohptr, void *result,
				 Size allocated_size)
{
	AutoExpanded *x = (AutoExpanded *) eohptr;

	/* axp_get_flat_size gave the size, and compacted the hashes */
	SET_VARSIZE(result, allocated_size);
	bf_auto_serialize(x->st, (uint8 *) VARDATA(result));
}

/* The expanded state d points to (read/write or read-only), or NULL. */
static AutoExpanded *
axp_of(Datum d)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
		return NULL;
	eoh = DatumGetEOHP(d);
	if (eoh->eoh_methods != &axp_methods)
		elog(ERROR, "expanded object is not a bloom_agg_state");
	return (AutoExpanded *) eoh;
}

/* A new expanded state, without its AutoState, in a new child of parent. */
static AutoExpanded *
axp_create(MemoryContext parent)
{
	MemoryContext cxt;
	AutoExpanded *x;

	cxt = AllocSetContextCreate(parent, "bloom_agg_state", ALLOCSET_SMALL_SIZES);
	x = (AutoExpanded *) MemoryContextAllocZero(cxt, sizeof(AutoExpanded));
	EOH_init_header(&x->eoh, &axp_methods, cxt);
	return x;
}

/* The state of a flat value (validated by input), in the current context. */
static AutoState *
state_of_flat(Datum d)
{
	struct varlena *v = PG_DETOAST_DATUM(d);
	AutoState  *st = palloc(sizeof(AutoState));
	const char *why;

	why = bf_auto_deserialize((const uint8 *) VARDATA(v), VARSIZE(v) - VARHDRSZ, st);
	if (why != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid bloom_agg_state value"),
				 errdetail_internal("%s", why)));
	return st;
}

/*
 * The state d holds, to read: the expanded object's own, or one read from
 * the flat value in the current memory context.
 */
static AutoState *
state_read(Datum d)
{
	AutoExpanded *x = axp_of(d);

	return x != NULL ? x->st : state_of_flat(d);
}

/*
 * The state d holds, to change in place: the object itself when d is a
 * read/write pointer (the caller owns the object), else a new expanded copy
 * in a child of parent.
 */
static AutoExpanded *
state_own(Datum d, MemoryContext parent)
{
	AutoExpanded *x = axp_of(d);
	AutoExpanded *copy;
	MemoryContext oldcxt;

	if (x != NULL && VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)))
		return x;
	copy = axp_create(parent);
	oldcxt = MemoryContextSwitchTo(copy->eoh.eoh_context);
	copy->st = x != NULL ? bf_auto_copy(x->st) : state_of_flat(d);
	MemoryContextSwitchTo(oldcxt);
	return copy;
}

/* ---------------------------------------------------------------------- */
/* I/O                                                                     */

/* A flat state of the payload bytes, validated; NULL and *why if invalid. */
static struct varlena *
flat_of_payload(const uint8 *p, Size len, const char **why)
{
	struct varlena *v;
	AutoState	st;

	*why = bf_auto_deserialize(p, len, &st);
	if (*why != NULL)
		return NULL;
	v = palloc(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	memcpy(VARDATA(v), p, len);
	return v;
}

/* bloom_agg_state_in(cstring): the payload in base64 */
Datum
bloom_agg_state_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	size_t		slen = strlen(str);
	size_t		len;
	uint8	   *bytes;
	struct varlena *v;
	const char *why;

	if (slen == 0 || slen % 4 != 0)
		BF_INPUT_ERROR(fcinfo,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloom_agg_state"),
						errdetail("The text form is base64 with padding, a non-empty multiple of 4 characters."),
						errhint("The text form is what bloom_agg_state output produces.")));
	len = slen / 4 * 3 - (str[slen - 1] == '=') - (str[slen - 2] == '=');
	bytes = palloc(Max(len, 1));
	if (!bf_base64_decode(str, slen, bytes, len))
		BF_INPUT_ERROR(fcinfo,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloom_agg_state"),
						errdetail("The text form is not valid base64."),
						errhint("The text form is what bloom_agg_state output produces.")));
	v = flat_of_payload(bytes, len, &why);
	if (v == NULL)
		BF_INPUT_ERROR(fcinfo,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloom_agg_state"),
						errdetail("%s", why)));
	pfree(bytes);
	PG_RETURN_POINTER(v);
}

/* bloom_agg_state_out(bloom_agg_state): the flat payload in base64 */
Datum
bloom_agg_state_out(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	Size		len = VARSIZE(v) - VARHDRSZ;
	size_t		olen = bf_base64_encoded_length(len);
	char	   *out;

	if (olen >= MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloom_agg_state of %zu bytes is too large for text output", len),
				 errhint("Use binary output.")));
	out = palloc(olen + 1);
	bf_base64_encode((const uint8 *) VARDATA(v), len, out);
	out[olen] = '\0';
	PG_RETURN_CSTRING(out);
}

/* bloom_agg_state_recv(internal): the payload */
Datum
bloom_agg_state_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	struct varlena *v;
	const char *why;

	v = flat_of_payload((const uint8 *) buf->data + buf->cursor,
						buf->len - buf->cursor, &why);
	if (v == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary bloom_agg_state value"),
				 errdetail("%s", why)));
	buf->cursor = buf->len;
	PG_RETURN_POINTER(v);
}

/*
 * bloom_agg_state_send(bloom_agg_state): the payload, in a new bytea (never
 * the argument itself: see bloomfilter_send).
 */
Datum
bloom_agg_state_send(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P((bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}

/* ---------------------------------------------------------------------- */
/* Aggregate support                                                       */

/*
 * The support functions take and return bloom_agg_state, so a plain call
 * from SQL reaches them: say so as a user error, not an internal one.
 */
static void
not_in_aggregate(const char *fname)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s called in non-aggregate context", fname),
			 errdetail("It is a support function of bloom_agg, called only by the aggregate.")));
}

/*
 * bloom_agg_state_transfn(state, key [, capacity_or_fpr]): as
 * bloom_agg_auto_transfn, the state a read/write expanded object.
 */
Datum
bloom_agg_state_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AutoExpanded *x = NULL;
	AutoState  *st;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		not_in_aggregate("bloom_agg_state_transfn");
	if (!PG_ARGISNULL(0))
		x = state_own(PG_GETARG_DATUM(0), aggcxt);
	else if (!PG_ARGISNULL(1))
		x = axp_create(aggcxt);
	st = bf_auto_transition(fcinfo, x != NULL ? x->st : NULL,
							x != NULL ? x->eoh.eoh_context : CurrentMemoryContext);
	if (st == NULL)
		PG_RETURN_NULL();		/* only NULL keys so far: x is NULL */
	x->st = st;
	PG_RETURN_DATUM(EOHPGetRWDatum(&x->eoh));
}

/* bloom_agg_state_combinefn(state, state) */
Datum
bloom_agg_state_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	AutoExpanded *a;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		not_in_aggregate("bloom_agg_state_combinefn");
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	if (PG_ARGISNULL(0))
		a = state_own(PG_GETARG_DATUM(1), aggcxt);	/* a copy */
	else
	{
		a = state_own(PG_GETARG_DATUM(0), aggcxt);
		bf_auto_merge(a->st, state_read(PG_GETARG_DATUM(1)), a->eoh.eoh_context);
	}
	PG_RETURN_DATUM(EOHPGetRWDatum(&a->eoh));
}

/*
 * bloom_agg_state_finalfn(state): the filter, as bloom_agg_auto_finalfn.
 * The state keeps its meaning (its hashes may be compacted in place).
 */
Datum
bloom_agg_state_finalfn(PG_FUNCTION_ARGS)
{
	if (!AggCheckCallContext(fcinfo, NULL))
		not_in_aggregate("bloom_agg_state_finalfn");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	return bf_auto_result(fcinfo, state_read(PG_GETARG_DATUM(0)));
}
