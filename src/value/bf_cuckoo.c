/*
 * bf_cuckoo.c
 *		The cuckoofilter type: I/O, casts, functions, operators and the
 *		aggregate (the table itself is core/bf_cuckoo.c).
 *
 * A value is the portable byte format of core/bf_cuckoo.h behind a varlena
 * header.  Keys are hashed exactly as for bloomfilter (bf_keys.c, XXH3-64
 * of the canonical bytes).  Every function that changes a filter works on a
 * copy, so an add that finds the filter full leaves the argument as it was.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "core/bf_core.h"
#include "value/bf_keys.h"
#include "value/bf_value_mem.h"

PG_FUNCTION_INFO_V1(cuckoofilter_in);
PG_FUNCTION_INFO_V1(cuckoofilter_out);
PG_FUNCTION_INFO_V1(cuckoofilter_recv);
PG_FUNCTION_INFO_V1(cuckoofilter_send);
PG_FUNCTION_INFO_V1(cuckoo_to_bytea);
PG_FUNCTION_INFO_V1(cuckoo_from_bytea);
PG_FUNCTION_INFO_V1(cuckoo_empty);
PG_FUNCTION_INFO_V1(cuckoo_add);
PG_FUNCTION_INFO_V1(cuckoo_add_literal);
PG_FUNCTION_INFO_V1(cuckoo_remove);
PG_FUNCTION_INFO_V1(cuckoo_remove_literal);
PG_FUNCTION_INFO_V1(cuckoo_contains);
PG_FUNCTION_INFO_V1(cuckoo_contains_literal);
PG_FUNCTION_INFO_V1(cuckoo_contained);
PG_FUNCTION_INFO_V1(cuckoo_contained_literal);
PG_FUNCTION_INFO_V1(cuckoo_count);
PG_FUNCTION_INFO_V1(cuckoo_count_literal);
PG_FUNCTION_INFO_V1(cuckoo_info);
PG_FUNCTION_INFO_V1(cuckoo_agg_transfn);

#if PG_VERSION_NUM >= 160000
#define INPUT_ERROR(fcinfo, ...) ereturn((fcinfo)->context, (Datum) 0, __VA_ARGS__)
#else
#define INPUT_ERROR(fcinfo, ...) ereport(ERROR, __VA_ARGS__)
#endif

/* read up to MaxAllocSize, made up to BF_MAX_NEW_VALUE_BYTES (bf_value_mem.h) */
#define CUCKOO_MAX_PAYLOAD	((uint64) (MaxAllocSize - VARHDRSZ - BF_HEADER_SIZE))
#define CUCKOO_MAX_NEW_PAYLOAD \
	((uint64) (BF_MAX_NEW_VALUE_BYTES - VARHDRSZ - BF_HEADER_SIZE))

/* A cuckoo filter opened: its header and its slots. */
typedef struct CfValue
{
	BfCuckooHeader hdr;
	struct varlena *raw;
	uint8	   *slots;
} CfValue;

static void
cf_open(Datum d, bool copy, CfValue *v)
{
	char		msg[256];

	v->raw = copy ? PG_DETOAST_DATUM_COPY(d) : PG_DETOAST_DATUM(d);
	if (bf_cuckoo_decode((const uint8_t *) VARDATA(v->raw), VARSIZE(v->raw) - VARHDRSZ,
						 &v->hdr, msg, sizeof(msg)) != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("cuckoofilter value is corrupted"),
				 errdetail("%s.", bf_sentence(msg))));
	v->slots = (uint8 *) VARDATA(v->raw) + BF_HEADER_SIZE;
}

/*
 * Write the header fields that change (key kind, count) back, in the
 * format version this build writes.
 */
static void
cf_store_header(CfValue *v)
{
	v->hdr.version = BF_FORMAT_VERSION;
	bf_cuckoo_encode(&v->hdr, (uint8_t *) VARDATA(v->raw));
}

/*
 * Per call site: the key type, and the stored filter last read here (a
 * check in a query runs once per row with the same filter: it is detoasted
 * once, keyed by its TOAST pointer, which a changed value never shares).
 */
typedef struct CfSite
{
	BfKeyType	kt;
	bool		have_stored;
	struct varatt_external toast;
	struct varlena *stored;		/* detoasted, in fn_mcxt */
} CfSite;

static CfSite *
cf_site(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
														  sizeof(CfSite));
	return (CfSite *) fcinfo->flinfo->fn_extra;
}

/* Open argument argno for reading, through the call site's cache. */
static void
cf_open_arg(FunctionCallInfo fcinfo, int argno, CfValue *v)
{
	struct varlena *ptr = (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(argno));
	CfSite	   *site = cf_site(fcinfo);
	struct varatt_external toast;

	if (!VARATT_IS_EXTERNAL_ONDISK(ptr))
	{
		cf_open(PointerGetDatum(ptr), false, v);
		return;
	}
	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	if (!site->have_stored || memcmp(&toast, &site->toast, sizeof(toast)) != 0)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
		struct varlena *copy = detoast_external_attr(ptr);

		MemoryContextSwitchTo(old);
		if (site->have_stored)
			pfree(site->stored);
		site->have_stored = false;
		cf_open(PointerGetDatum(copy), false, v);	/* validates */
		site->stored = copy;
		site->toast = toast;
		site->have_stored = true;
	}
	cf_open(PointerGetDatum(site->stored), false, v);
}

/*
 * The key type of argument argno (text for the bloom_literal variants),
 * resolved once per call site and type.
 */
static const BfKeyType *
cf_key_type(FunctionCallInfo fcinfo, int argno, bool literal)
{
	BfKeyType  *kt = &cf_site(fcinfo)->kt;
	Oid			typid = literal ? TEXTOID : get_fn_expr_argtype(fcinfo->flinfo, argno);
	Oid			collation = PG_GET_COLLATION();

	if (kt->typid != typid || kt->collation != collation)
	{
		kt->typid = InvalidOid;
		bf_key_type_init(kt, typid, collation, InvalidOid);
	}
	return kt;
}

/* ---------------------------------------------------------------- I/O */

static BfStatus decode_input(const uint8_t *data, size_t len, char *msg, size_t msglen);

Datum
cuckoofilter_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	char		msg[256];
	BfStatus	st;
	BfCuckooHeader h;
	const char *data;
	size_t		datalen;
	uint64		nbytes;
	struct varlena *raw;

	st = bf_cuckoo_text_parse(str, &h, &data, &datalen, msg, sizeof(msg));
	/* A header describing more than a value can hold: say so, whatever data follows. */
	if ((st == BF_OK || st == BF_ERR_LENGTH) &&
		bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits) > CUCKOO_MAX_PAYLOAD)
		INPUT_ERROR(fcinfo,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("cuckoofilter of " UINT64_FORMAT " buckets is too large", h.nbuckets),
					 errdetail("A cuckoofilter value is at most 1 GB.")));
	if (st != BF_OK)
		INPUT_ERROR(fcinfo,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for type cuckoofilter"),
					 errdetail("%s.", bf_sentence(msg)),
					 errhint("The text form is what cuckoofilter output produces: \"version=2 family=cuckoo ... data=<base64>\".")));
	nbytes = bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits);
	raw = (struct varlena *) palloc(VARHDRSZ + BF_HEADER_SIZE + nbytes);
	SET_VARSIZE(raw, VARHDRSZ + BF_HEADER_SIZE + nbytes);
	bf_cuckoo_encode(&h, (uint8_t *) VARDATA(raw));
	if (!bf_base64_decode(data, datalen, (uint8_t *) VARDATA(raw) + BF_HEADER_SIZE, nbytes))
		INPUT_ERROR(fcinfo,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for type cuckoofilter"),
					 errdetail("The data field is not canonical base64.")));
	if (decode_input((const uint8_t *) VARDATA(raw), BF_HEADER_SIZE + nbytes, msg, sizeof(msg)) != BF_OK)
		INPUT_ERROR(fcinfo,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for type cuckoofilter"),
					 errdetail("%s.", bf_sentence(msg))));
	PG_RETURN_POINTER(raw);
}

Datum
cuckoofilter_out(PG_FUNCTION_ARGS)
{
	CfValue		v;
	size_t		len;
	char	   *out;

	cf_open(PG_GETARG_DATUM(0), false, &v);
	len = bf_cuckoo_text_length(&v.hdr);
	if (len >= MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cuckoofilter of " UINT64_FORMAT " buckets is too large for text output",
						v.hdr.nbuckets),
				 errhint("Use binary output (COPY ... WITH (FORMAT binary)) or the cast to bytea.")));
	out = palloc(len + 1);
	bf_cuckoo_text_render(&v.hdr, v.slots, out);
	PG_RETURN_CSTRING(out);
}

/*
 * Untrusted input also has its count checked against the slots in use (a
 * stored value is not scanned on every read).
 */
static BfStatus
decode_input(const uint8_t *data, size_t len, char *msg, size_t msglen)
{
	BfCuckooHeader h;
	BfStatus	st = bf_cuckoo_decode(data, len, &h, msg, msglen);
	uint64		used;

	if (st != BF_OK)
		return st;
	used = bf_cuckoo_occupied(&h, data + BF_HEADER_SIZE);
	if (used != h.count)
	{
		snprintf(msg, msglen, "count " UINT64_FORMAT " does not match the " UINT64_FORMAT " slots in use",
				 h.count, used);
		return BF_ERR_CAPACITY;
	}
	return BF_OK;
}

/* A validated copy of format bytes, or an error with errmsg what. */
static struct varlena *
from_bytes(const char *data, size_t len, const char *what)
{
	char		msg[256];
	struct varlena *raw;

	if (decode_input((const uint8_t *) data, len, msg, sizeof(msg)) != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("%s", what),
				 errdetail("%s.", bf_sentence(msg)),
				 errhint("The bytes must be the portable format, as produced by the cast of a cuckoofilter to bytea.")));
	raw = (struct varlena *) palloc(VARHDRSZ + len);
	SET_VARSIZE(raw, VARHDRSZ + len);
	memcpy(VARDATA(raw), data, len);
	return raw;
}

Datum
cuckoofilter_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	struct varlena *raw;

	raw = from_bytes(buf->data + buf->cursor, buf->len - buf->cursor,
					 "invalid binary cuckoofilter value");
	buf->cursor = buf->len;
	PG_RETURN_POINTER(raw);
}

/* send and the cast to bytea: a copy of the format bytes (see bf_io.c) */
Datum
cuckoofilter_send(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P((bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}

Datum
cuckoo_to_bytea(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P((bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}

Datum
cuckoo_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_POINTER(from_bytes(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
								 "bytea is not a valid cuckoofilter value"));
}

/* ---------------------------------------------------------------- creation */

static struct varlena *
cf_create(int64 capacity, double fpr)
{
	BfCuckooHeader h;
	struct varlena *raw;
	uint64		nbytes;
	int			why = 0;
	char		rate[32];

	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cuckoofilter capacity must be positive, not " INT64_FORMAT, capacity),
				 errhint("Give the number of keys the filter should hold.")));
	if (isfinite(fpr))
		bf_format_double(fpr, rate, sizeof(rate));
	else
		snprintf(rate, sizeof(rate), "%g", fpr);
	if (!(fpr > 0.0 && fpr < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cuckoofilter false-positive rate must be between 0 and 1 (exclusive), not %s",
						rate),
				 errhint("For example 0.01 for 1%%.")));
	if (!bf_cuckoo_size((uint64) capacity, fpr, CUCKOO_MAX_NEW_PAYLOAD, &h, &why))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 why == 1 ?
				 errmsg("cuckoofilter false-positive rate %s is too small", rate) :
				 errmsg("cuckoofilter capacity " INT64_FORMAT " is too large at false-positive rate %s",
						capacity, rate),
				 why == 1 ?
				 errdetail("Fingerprints are at most %d bits: the lowest rate is about 2e-09.",
						   BF_CUCKOO_MAX_FP_BITS) :
				 errdetail("A cuckoofilter value is at most 1 GB."),
				 errhint("Use a larger false-positive rate, or a bloomfilter.")));
	nbytes = bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits);
	raw = (struct varlena *) palloc0(VARHDRSZ + BF_HEADER_SIZE + nbytes);
	SET_VARSIZE(raw, VARHDRSZ + BF_HEADER_SIZE + nbytes);
	bf_cuckoo_encode(&h, (uint8_t *) VARDATA(raw));
	return raw;
}

/* cuckoo_empty(capacity bigint, fpr float8) */
Datum
cuckoo_empty(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(cf_create(PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1)));
}

/* ---------------------------------------------------------------- add, remove */

/* Add a key to an open (writable) filter; an error when it is full. */
static void
cf_add(CfValue *v, const BfKeyType *kt, Datum key)
{
	char		rate[32];

	bf_key_check_value(v->hdr.key_kind, kt);
	if (!bf_cuckoo_insert(&v->hdr, v->slots, bf_key_hash(kt, key, BF_LAYOUT_BLOCKED).lo))
	{
		bf_format_double(v->hdr.target_fpr, rate, sizeof(rate));
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cuckoofilter is full"),
				 errdetail("It holds " UINT64_FORMAT " fingerprints in " UINT64_FORMAT " slots (capacity " UINT64_FORMAT "); no place was found for the key after %d moves.",
						   v->hdr.count, v->hdr.nbuckets * BF_CUCKOO_SLOTS,
						   v->hdr.capacity, BF_CUCKOO_MAX_KICKS),
				 errhint("Build a filter with a larger capacity, for example cuckoo_empty(" UINT64_FORMAT ", %s).",
						 Max(v->hdr.capacity, v->hdr.count) * 2, rate)));
	}
	v->hdr.key_kind = (uint8) kt->kind;
	v->hdr.count++;
	cf_store_header(v);
}

static Datum
add_key(FunctionCallInfo fcinfo, bool literal)
{
	CfValue		v;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	cf_open(PG_GETARG_DATUM(0), true, &v);
	cf_add(&v, cf_key_type(fcinfo, 1, literal), PG_GETARG_DATUM(1));
	PG_RETURN_POINTER(v.raw);
}

Datum
cuckoo_add(PG_FUNCTION_ARGS)
{
	return add_key(fcinfo, false);
}

Datum
cuckoo_add_literal(PG_FUNCTION_ARGS)
{
	return add_key(fcinfo, true);
}

static Datum
remove_key(FunctionCallInfo fcinfo, bool literal)
{
	const BfKeyType *kt;
	CfValue		v;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	kt = cf_key_type(fcinfo, 1, literal);
	cf_open(PG_GETARG_DATUM(0), true, &v);
	bf_key_check_value(v.hdr.key_kind, kt);
	if (v.hdr.key_kind == BF_KEY_NONE ||
		!bf_cuckoo_remove(&v.hdr, v.slots, bf_key_hash(kt, PG_GETARG_DATUM(1), BF_LAYOUT_BLOCKED).lo))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot remove a key that is not in the cuckoo filter"),
				 errdetail("The key's fingerprint is in neither of its buckets."),
				 errhint("Remove only keys that were added, as many times as they were added.")));
	v.hdr.count--;
	cf_store_header(&v);
	PG_RETURN_POINTER(v.raw);
}

Datum
cuckoo_remove(PG_FUNCTION_ARGS)
{
	return remove_key(fcinfo, false);
}

Datum
cuckoo_remove_literal(PG_FUNCTION_ARGS)
{
	return remove_key(fcinfo, true);
}

/* ---------------------------------------------------------------- checks */

/*
 * Copies of the key in the filter, over the forms a check tests (two for
 * some keys: see bf_key_probe_hashes); stop_at_one for a membership test.
 */
static int
count_key(FunctionCallInfo fcinfo, int filter_argno, int key_argno, bool literal,
		  bool stop_at_one)
{
	const BfKeyType *kt = cf_key_type(fcinfo, key_argno, literal);
	CfValue		v;
	BfHash		hashes[BF_KEY_MAX_PROBES];
	int			n;
	int			total = 0;

	cf_open_arg(fcinfo, filter_argno, &v);
	if (v.hdr.key_kind == BF_KEY_NONE)
		return 0;
	bf_key_check_value(v.hdr.key_kind, kt);
	n = bf_key_probe_hashes(kt, PG_GETARG_DATUM(key_argno), BF_LAYOUT_BLOCKED, hashes);
	for (int i = 0; i < n && !(stop_at_one && total > 0); i++)
		total += bf_cuckoo_count(&v.hdr, v.slots, hashes[i].lo);
	return total;
}

Datum
cuckoo_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(count_key(fcinfo, 0, 1, false, true) > 0);
}

Datum
cuckoo_contains_literal(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(count_key(fcinfo, 0, 1, true, true) > 0);
}

Datum
cuckoo_contained(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(count_key(fcinfo, 1, 0, false, true) > 0);
}

Datum
cuckoo_contained_literal(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(count_key(fcinfo, 1, 0, true, true) > 0);
}

Datum
cuckoo_count(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(count_key(fcinfo, 0, 1, false, false));
}

Datum
cuckoo_count_literal(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(count_key(fcinfo, 0, 1, true, false));
}

/* cuckoo_info(cuckoofilter) -> jsonb */
Datum
cuckoo_info(PG_FUNCTION_ARGS)
{
	CfValue		v;
	StringInfoData buf;
	char		num[32];
	uint64		slots;

	cf_open_arg(fcinfo, 0, &v);
	slots = v.hdr.nbuckets * BF_CUCKOO_SLOTS;
	initStringInfo(&buf);
	appendStringInfo(&buf, "{\"version\": %u, \"family\": \"cuckoo\", \"fingerprint_bits\": %u"
					 ", \"buckets\": " UINT64_FORMAT ", \"slots\": " UINT64_FORMAT
					 ", \"bytes\": " UINT64_FORMAT ", \"key_kind\": \"%s\", \"capacity\": " UINT64_FORMAT
					 ", \"count\": " UINT64_FORMAT,
					 (unsigned) v.hdr.version, (unsigned) v.hdr.fp_bits, v.hdr.nbuckets, slots,
					 (uint64) (VARSIZE(v.raw) - VARHDRSZ), bf_key_kind_name(v.hdr.key_kind),
					 v.hdr.capacity, v.hdr.count);
	bf_format_double(v.hdr.target_fpr, num, sizeof(num));
	appendStringInfo(&buf, ", \"target_fpr\": %s", num);
	bf_format_double((double) v.hdr.count / (double) slots, num, sizeof(num));
	appendStringInfo(&buf, ", \"load\": %s", num);
	bf_format_double(bf_cuckoo_predict_fpr(&v.hdr, (double) v.hdr.count), num, sizeof(num));
	appendStringInfo(&buf, ", \"estimated_fpr\": %s}", num);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/* ---------------------------------------------------------------- aggregate */

/*
 * cuckoo_agg_transfn(state, key, capacity, fpr): the state is a cuckoofilter
 * in the aggregate's memory context, changed in place.
 */
Datum
cuckoo_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	MemoryContext old;
	CfValue		v;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "cuckoo_agg_transfn called in non-aggregate context");
	if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("cuckoo_agg capacity and fpr must not be NULL")));
	if (PG_ARGISNULL(0))
	{
		old = MemoryContextSwitchTo(aggcxt);
		v.raw = cf_create(PG_GETARG_INT64(2), PG_GETARG_FLOAT8(3));
		MemoryContextSwitchTo(old);
		cf_open(PointerGetDatum(v.raw), false, &v);
	}
	else
	{
		cf_open(PG_GETARG_DATUM(0), false, &v);
		if (v.hdr.capacity != (uint64) PG_GETARG_INT64(2) ||
			v.hdr.target_fpr != PG_GETARG_FLOAT8(3))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cuckoo_agg capacity and fpr must be the same for every row of a group")));
	}
	if (!PG_ARGISNULL(1))
		cf_add(&v, cf_key_type(fcinfo, 1, false), PG_GETARG_DATUM(1));
	PG_RETURN_POINTER(v.raw);
}
