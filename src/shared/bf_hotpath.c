/*
 * bf_hotpath.c
 *		Checks and adds against shared filters, snapshots, waiting, and the
 *		information function behind the view bloom_shared_filters.
 *
 * A check: hash the key (outside any lock), take the slot lock in shared
 * mode, verify that the slot still belongs to the call site's definition
 * (generation), test the live buffer's bits, release.  Anything unknown
 * (no slot, no live buffer, hot standby) answers "maybe".
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "bf_layout.h"
#include "bf_sizing.h"
#include "bf_shared.h"

PG_FUNCTION_INFO_V1(bloom_shared_contains);
PG_FUNCTION_INFO_V1(bloom_shared_contains_text);
PG_FUNCTION_INFO_V1(bloom_shared_add);
PG_FUNCTION_INFO_V1(bloom_shared_add_text);
PG_FUNCTION_INFO_V1(bloom_shared_get);
PG_FUNCTION_INFO_V1(bloom_shared_wait);
PG_FUNCTION_INFO_V1(bloom_shared_filters_info);

StaticAssertDecl(sizeof(pg_atomic_uint32) == sizeof(uint32),
				 "atomic words must overlay the bit array");

/*
 * Bit j of the format is bit j % 8 of byte j / 8.  In a native 32-bit word
 * holding bytes 4w .. 4w+3 that is bit j % 32 on little-endian machines; on
 * big-endian ones byte 0 is the most significant.
 */
#ifdef WORDS_BIGENDIAN
#define BF_WORD_BIT(p)	((uint32) 1 << (((3 - (((p) >> 3) & 3)) << 3) | ((p) & 7)))
#else
#define BF_WORD_BIT(p)	((uint32) 1 << ((p) & 31))
#endif

static inline void
atomic_or_word(uint8 *bits, uint64 word, uint32 mask)
{
	pg_atomic_uint32 *w = (pg_atomic_uint32 *) (bits + word * 4);

	/* skip the locked instruction when the bits are already set */
	if ((w->value & mask) != mask)
		pg_atomic_fetch_or_u32(w, mask);
}

/* Add a hashed key to a published buffer with atomic ORs. */
void
bf_shared_add_hash(uint8 *bits, const BfHeader *h, BfHash hash)
{
	if (h->layout == BF_LAYOUT_CLASSIC)
	{
		BfClassicIter it;

		bf_classic_iter_init(&it, h->nbits, hash);
		for (int i = 0; i < h->hashes; i++)
		{
			uint64		x = bf_classic_iter_next(&it);

			atomic_or_word(bits, x >> 5, BF_WORD_BIT(x & 31));
		}
	}
	else
	{
		uint64		block = bf_blocked_block(hash.lo, h->nbits / BF_BLOCK_BITS);
		uint32		masks[BF_BLOCK_BITS / 32] = {0};
		uint32		s = bf_blocked_seed(hash.lo);

		for (int i = 0; i < h->hashes; i++)
		{
			uint32		p = bf_blocked_next(&s);

			masks[p >> 5] |= BF_WORD_BIT(p);
		}
		for (int w = 0; w < BF_BLOCK_BITS / 32; w++)
			if (masks[w])
				atomic_or_word(bits, block * (BF_BLOCK_BITS / 32) + w, masks[w]);
	}
}

/*
 * The number of keys past which the predicted FPR exceeds 1.5 times the
 * target: the trigger asks for a larger rebuild there, well before the FPR
 * reaches twice the target.
 */
uint64
bf_grow_threshold(const BfHeader *h)
{
	double		limit = 1.5 * h->target_fpr;
	uint64		lo = 1,
				hi = Max(h->capacity, 1);

	if (bf_predict_fpr(h->layout, h->nbits, h->hashes, (double) hi) > limit)
		return hi;
	while (bf_predict_fpr(h->layout, h->nbits, h->hashes, (double) hi) <= limit)
	{
		lo = hi;
		if (hi > PG_UINT64_MAX / 4)
			return hi;
		hi *= 2;
	}
	while (hi - lo > 1)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (bf_predict_fpr(h->layout, h->nbits, h->hashes, (double) mid) <= limit)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ------------------------------------------------------------------ */

typedef enum SiteMode
{
	SITE_CHECK,					/* SELECT on the column */
	SITE_ADD					/* ownership of the table */
} SiteMode;

typedef struct BfSharedSite
{
	uint64		epoch;
	Oid			userid;
	char		name[BF_SHARED_NAME_LEN];
	BfDefinition def;
	Oid			cfgoid;
	Oid			relid;
	AttrNumber	attnum;
	BfKeyType	colkt;			/* the column's key type */
	BfKeyType	kt;				/* the argument's key type */
	bool		parse_text;		/* text argument, non-text column */
	FmgrInfo	typinput;
	Oid			typioparam;
	int32		typmod;
	int			slot;
	uint32		generation;
	bool		load_requested;
} BfSharedSite;

static void
undefined_filter(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("shared bloom filter \"%s\" does not exist", name),
			 errhint("Create it with bloom_guard(table, column); the view bloom_shared_filters lists the existing ones.")));
}

/* Resolve a definition's table and column; errors if they are gone. */
static void
resolve_def(const BfDefinition *def, Oid *relid, AttrNumber *attnum)
{
	Oid			nsp = get_namespace_oid(NameStr(def->schema_name), true);

	*relid = OidIsValid(nsp) ? get_relname_relid(NameStr(def->table_name), nsp) : InvalidOid;
	*attnum = OidIsValid(*relid) ? get_attnum(*relid, NameStr(def->column_name)) : InvalidAttrNumber;
	if (*attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("the column guarded by shared bloom filter \"%s\" no longer exists",
						def->name),
				 errhint("Remove the definition with bloom_unguard(), or DELETE FROM bloom_shared_definitions WHERE name = '%s'.",
						 def->name)));
}

static BfSharedSite *
site_setup(FunctionCallInfo fcinfo, text *name_t, SiteMode mode, bool text_arg)
{
	BfSharedSite *site = fcinfo->flinfo->fn_extra;
	char	   *name = text_to_cstring(name_t);
	MemoryContext old;
	Oid			userid = GetUserId();

	if (site && site->epoch == bf_def_epoch && site->userid == userid &&
		strcmp(site->name, name) == 0)
	{
		pfree(name);
		return site;
	}
	if (site == NULL)
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfSharedSite));
	else
		memset(site, 0, sizeof(BfSharedSite));
	fcinfo->flinfo->fn_extra = site;

	if (!bf_def_lookup(name, &site->def))
		undefined_filter(name);
	strlcpy(site->name, name, sizeof(site->name));
	site->cfgoid = bf_config_table(false);
	resolve_def(&site->def, &site->relid, &site->attnum);

	if (mode == SITE_CHECK)
	{
		if (pg_class_aclcheck(site->relid, userid, ACL_SELECT) != ACLCHECK_OK &&
			pg_attribute_aclcheck(site->relid, site->attnum, userid, ACL_SELECT) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for column %s of table %s",
							NameStr(site->def.column_name), get_rel_name(site->relid)),
					 errdetail("Checking shared bloom filter \"%s\" reveals whether the column holds a value.",
							   name),
					 errhint("Grant SELECT on the column (or the table) to the role.")));
	}
	else
		bf_check_owner(site->relid);

	{
		Oid			atttypid;
		int32		atttypmod;
		Oid			attcoll;

		get_atttypetypmodcoll(site->relid, site->attnum, &atttypid, &atttypmod, &attcoll);
		bf_key_type_init(&site->colkt, atttypid, attcoll, InvalidOid);
		site->typmod = atttypmod;
		if (text_arg && site->colkt.kind != BF_KEY_TEXT)
		{
			Oid			typinput;

			/* a string literal for a non-text column: read it as the column's type */
			getTypeInputInfo(atttypid, &typinput, &site->typioparam);
			old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
			fmgr_info(typinput, &site->typinput);
			MemoryContextSwitchTo(old);
			site->parse_text = true;
			site->kt = site->colkt;
		}
		else
		{
			Oid			argtype = text_arg ? TEXTOID :
				get_fn_expr_argtype(fcinfo->flinfo, 1);

			if (!OidIsValid(argtype))
				elog(ERROR, "could not determine the key's type");
			bf_key_type_init(&site->kt, argtype, PG_GET_COLLATION(), InvalidOid);
			bf_key_check_kind(site->colkt.kind, &site->kt);
		}
	}
	site->slot = -1;
	site->userid = userid;
	site->epoch = bf_def_epoch;
	pfree(name);
	return site;
}

/*
 * The call site's slot with its lock held in shared mode, or -1 (no slot:
 * not loaded; a load is requested once per call site).
 */
static int
site_acquire(BfSharedSite *site)
{
	int			i = site->slot;

	if (i >= 0)
	{
		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		if (bf_shared->slots[i].in_use &&
			bf_shared->slots[i].generation == site->generation)
			return i;
		LWLockRelease(bf_slot_lock(i));
	}
	i = bf_slot_find(MyDatabaseId, site->name, site->cfgoid, site->def.id);
	if (i < 0)
	{
		site->slot = -1;
		if (!site->load_requested && !RecoveryInProgress())
		{
			site->load_requested = true;
			bf_request_load(MyDatabaseId);
		}
		return -1;
	}
	LWLockAcquire(bf_slot_lock(i), LW_SHARED);
	if (!bf_shared->slots[i].in_use || bf_shared->slots[i].defid != site->def.id ||
		bf_shared->slots[i].cfgoid != site->cfgoid ||
		strcmp(bf_shared->slots[i].name, site->name) != 0)
	{
		LWLockRelease(bf_slot_lock(i));
		return -1;
	}
	site->slot = i;
	site->generation = bf_shared->slots[i].generation;
	return i;
}

static void
kind_mismatch(BfSharedSite *site, int slot_kind)
{
	bf_key_check_kind(slot_kind, &site->kt);
	/* same kind but a rebuilt column: let the next call re-resolve */
	site->epoch = 0;
}

static BfHash
site_hash(BfSharedSite *site, Datum key)
{
	if (site->parse_text)
	{
		char	   *s = TextDatumGetCString(key);
		Datum		v = InputFunctionCall(&site->typinput, s, site->typioparam,
										  site->typmod);

		return bf_key_hash(&site->colkt, v, BF_LAYOUT_BLOCKED);
	}
	return bf_key_hash(&site->kt, key, BF_LAYOUT_BLOCKED);
}

/*
 * The hashes a check tests (see bf_key_probe_hashes): the filter may hold
 * the key if any of them is present.
 */
static int
site_probe_hashes(BfSharedSite *site, Datum key, BfHash *hashes)
{
	if (site->parse_text)
	{
		char	   *s = TextDatumGetCString(key);
		Datum		v = InputFunctionCall(&site->typinput, s, site->typioparam,
										  site->typmod);

		return bf_key_probe_hashes(&site->colkt, v, BF_LAYOUT_BLOCKED, hashes);
	}
	return bf_key_probe_hashes(&site->kt, key, BF_LAYOUT_BLOCKED, hashes);
}

static Datum
contains_common(FunctionCallInfo fcinfo, bool text_arg)
{
	BfSharedSite *site;
	BfHash		h[BF_KEY_MAX_PROBES];
	int			nh;
	int			i;
	bool		result = true;
	int			bad_kind = -1;

	bf_shared_check_enabled();
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	site = site_setup(fcinfo, PG_GETARG_TEXT_PP(0), SITE_CHECK, text_arg);
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	nh = site_probe_hashes(site, PG_GETARG_DATUM(1), h);

	if (RecoveryInProgress())
		PG_RETURN_BOOL(true);
	i = site_acquire(site);
	if (i < 0)
		PG_RETURN_BOOL(true);
	{
		BfSharedSlot *s = &bf_shared->slots[i];

		if (s->has_live)
		{
			if (s->key_kind != (int) site->kt.kind && s->key_kind != BF_KEY_NONE)
				bad_kind = s->key_kind;
			else
			{
				result = false;
				for (int k = 0; k < nh && !result; k++)
					result = bf_test_hash(&s->live_hdr,
										  (const uint8 *) bf_pool + s->live_off, h[k]);
				pg_atomic_fetch_add_u64(&s->checks, 1);
				if (!result)
					pg_atomic_fetch_add_u64(&s->negatives, 1);
			}
		}
		else
			pg_atomic_fetch_add_u64(&s->checks, 1);
	}
	LWLockRelease(bf_slot_lock(i));
	if (bad_kind >= 0)
	{
		kind_mismatch(site, bad_kind);
		result = true;
	}
	PG_RETURN_BOOL(result);
}

Datum
bloom_shared_contains(PG_FUNCTION_ARGS)
{
	return contains_common(fcinfo, false);
}

Datum
bloom_shared_contains_text(PG_FUNCTION_ARGS)
{
	return contains_common(fcinfo, true);
}

/*
 * Add a hashed key to a slot whose lock is held (shared).  Returns true if a
 * grow rebuild should be requested (the caller wakes the launcher after
 * releasing the lock).
 */
bool
bf_slot_add_locked(BfSharedSlot *s, BfHash h)
{
	bool		wake = false;

	if (s->has_live)
	{
		uint64		n;

		bf_shared_add_hash((uint8 *) bf_pool + s->live_off, &s->live_hdr, h);
		n = pg_atomic_add_fetch_u64(&s->added, 1);
		if (n > s->grow_threshold && !s->has_next &&
			pg_atomic_read_u32(&s->grow_requested) == 0 &&
			pg_atomic_exchange_u32(&s->grow_requested, 1) == 0)
			wake = true;
	}
	if (s->has_next)
	{
		bf_shared_add_hash((uint8 *) bf_pool + s->next_off, &s->next_hdr, h);
		pg_atomic_fetch_add_u64(&s->next_added, 1);
	}
	return wake;
}

static Datum
add_common(FunctionCallInfo fcinfo, bool text_arg)
{
	BfSharedSite *site;
	BfHash		h;
	int			i;
	bool		wake = false;
	bool		loaded = true;
	int			bad_kind = -1;

	bf_shared_check_enabled();
	if (PG_ARGISNULL(0))
		PG_RETURN_VOID();
	site = site_setup(fcinfo, PG_GETARG_TEXT_PP(0), SITE_ADD, text_arg);
	if (PG_ARGISNULL(1))
		PG_RETURN_VOID();
	h = site_hash(site, PG_GETARG_DATUM(1));

	i = site_acquire(site);
	if (i >= 0)
	{
		BfSharedSlot *s = &bf_shared->slots[i];

		if (!s->has_live && !s->has_next)
			loaded = false;
		else if (s->key_kind != (int) site->kt.kind)
			bad_kind = s->key_kind;
		else
			wake = bf_slot_add_locked(s, h);
		LWLockRelease(bf_slot_lock(i));
	}
	else
		loaded = false;
	if (bad_kind >= 0)
		kind_mismatch(site, bad_kind);
	if (!loaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared bloom filter \"%s\" is not loaded", site->name),
				 errdetail("A key added now would be lost when the filter is built from its table."),
				 errhint("Wait for it with bloom_shared_wait('%s').", site->name)));
	if (wake)
		bf_wake_launcher();
	PG_RETURN_VOID();
}

Datum
bloom_shared_add(PG_FUNCTION_ARGS)
{
	return add_common(fcinfo, false);
}

Datum
bloom_shared_add_text(PG_FUNCTION_ARGS)
{
	return add_common(fcinfo, true);
}

Datum
bloom_shared_get(PG_FUNCTION_ARGS)
{
	BfSharedSite *site;
	int			i;
	struct varlena *result = NULL;

	bf_shared_check_enabled();
	site = site_setup(fcinfo, PG_GETARG_TEXT_PP(0), SITE_CHECK, true);
	i = RecoveryInProgress() ? -1 : site_acquire(site);
	if (i >= 0)
	{
		BfSharedSlot *s = &bf_shared->slots[i];

		if (s->has_live && bf_payload_bytes(s->live_hdr.nbits) <=
			MaxAllocSize - VARHDRSZ - BF_HEADER_SIZE)
		{
			BfHeader	hdr = s->live_hdr;
			Size		payload = bf_payload_bytes(hdr.nbits);
			Size		total = VARHDRSZ + BF_HEADER_SIZE + payload;

			hdr.key_kind = (uint8) s->key_kind;
			hdr.added = pg_atomic_read_u64(&s->added);
			result = (struct varlena *) palloc(total);
			SET_VARSIZE(result, total);
			bf_header_encode(&hdr, (uint8_t *) VARDATA(result));
			memcpy((char *) VARDATA(result) + BF_HEADER_SIZE,
				   bf_pool + s->live_off, payload);
		}
		LWLockRelease(bf_slot_lock(i));
	}
	if (result == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared bloom filter \"%s\" is not ready", site->name),
				 errhint("Wait for it with bloom_shared_wait('%s'); the view bloom_shared_filters shows its state.",
						 site->name)));
	PG_RETURN_POINTER(result);
}

Datum
bloom_shared_wait(PG_FUNCTION_ARGS)
{
	char	   *name;
	int32		timeout_ms = PG_GETARG_INT32(1);
	BfDefinition def;
	Oid			cfgoid;
	TimestampTz deadline;
	bool		requested = false;

	bf_shared_check_enabled();
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!bf_def_lookup(name, &def))
		undefined_filter(name);
	cfgoid = bf_config_table(false);
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), Max(timeout_ms, 0));

	for (;;)
	{
		int			i = RecoveryInProgress() ? -2 :
			bf_slot_find(MyDatabaseId, name, cfgoid, def.id);

		if (i == -1 && !requested)
		{
			bf_request_load(MyDatabaseId);
			requested = true;
		}
		if (i >= 0)
		{
			BfSharedSlot *s = &bf_shared->slots[i];
			bool		ready;

			LWLockAcquire(bf_slot_lock(i), LW_SHARED);
			ready = s->in_use && s->has_live && !s->has_next &&
				pg_atomic_read_u32(&s->pending) == 0 &&
				pg_atomic_read_u32(&s->grow_requested) == 0;
			LWLockRelease(bf_slot_lock(i));
			if (ready)
				PG_RETURN_BOOL(true);
		}
		if (GetCurrentTimestamp() >= deadline)
			PG_RETURN_BOOL(false);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* The state of a slot, its lock held. */
static const char *
slot_state(BfSharedSlot *s)
{
	bool		pending = pg_atomic_read_u32(&s->pending) != 0;

	if (s->has_live)
		return (s->has_next || pending || pg_atomic_read_u32(&s->grow_requested)) ?
			"rebuilding" : "ready";
	if (s->has_next || pending)
		return "building";
	return "not loaded";
}

/*
 * One row per slot of this database: name, definition_id, state, capacity,
 * bits, hashes, keys_added, estimated_fpr, memory_bytes, checks, negatives,
 * last_build.
 */
Datum
bloom_shared_filters_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	tupdesc;
	Tuplestorestate *store;
	MemoryContext old;
	Oid			cfgoid;
	bool		standby;

	bf_shared_check_enabled();
	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	cfgoid = bf_config_table(true);
	standby = RecoveryInProgress();

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	tupdesc = CreateTupleDescCopy(tupdesc);
	store = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = tupdesc;
	MemoryContextSwitchTo(old);

	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSharedSlot *s = &bf_shared->slots[i];
		Datum		values[12];
		bool		nulls[12] = {0};
		const BfHeader *h = NULL;

		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		if (!s->in_use || s->dbid != MyDatabaseId || s->cfgoid != cfgoid)
		{
			LWLockRelease(bf_slot_lock(i));
			continue;
		}
		values[0] = CStringGetTextDatum(s->name);
		values[1] = Int64GetDatum(s->defid);
		values[2] = CStringGetTextDatum(standby ? "standby" : slot_state(s));
		if (s->has_live)
			h = &s->live_hdr;
		if (h)
		{
			values[3] = Int64GetDatum((int64) h->capacity);
			values[4] = Int64GetDatum((int64) h->nbits);
			values[5] = Int32GetDatum(h->hashes);
			values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&s->added));
			values[7] = Float8GetDatum(bf_estimate_fpr(h, (const uint8 *) bf_pool + s->live_off));
		}
		else
		{
			nulls[3] = nulls[4] = nulls[5] = nulls[6] = nulls[7] = true;
		}
		values[8] = Int64GetDatum((int64) (s->live_bytes + s->next_bytes));
		values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&s->checks));
		values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&s->negatives));
		if (s->last_build != 0)
			values[11] = TimestampTzGetDatum(s->last_build);
		else
			nulls[11] = true;
		LWLockRelease(bf_slot_lock(i));
		tuplestore_putvalues(store, tupdesc, values, nulls);
	}
	return (Datum) 0;
}
