/*
 * bf_gate.c
 *		The planner's gates: one check of a shared filter before a scan whose
 *		condition "column = value" (or "column = ANY (array)") the filter can
 *		answer for.  bloom_shared_gate() and bloom_shared_gate_any() are what
 *		a plan's One-Time Filter calls (bf_planner.c puts them there); this
 *		file also holds the rule for which keys a gate can answer for, the
 *		per-backend list of definitions the planner consults, and the shared
 *		count of skipped scans.
 *
 * A gate answers "maybe" (true) whenever it cannot be sure: the planner
 * guards are turned off, the library is not preloaded, a standby, the
 * definition is gone (a plan cached before an unguard), the filter is not
 * loaded, building or suspended, a statement of this backend may have
 * written rows whose guard triggers have not fired yet (bf_writers.c), a
 * parallel worker (it cannot know the leader's writers), the key is NULL,
 * the key's type or collation is not one the filter's keys agree with, or
 * the caller could not check the filter with bloom_shared_contains (no
 * SELECT on the guarded column of the guarded table, or row-level security
 * there).  It answers "no" (false) only where bloom_shared_contains would.
 *
 * For a partition of a table guarded per partition, the gate names the
 * partition and asks that partition's own filter (bf_members.c).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_coerce.h"
#include "parser/parse_oper.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "bf_keyconv.h"
#include "bf_plan.h"
#include "bf_shared.h"

PG_FUNCTION_INFO_V1(bloom_shared_gate);
PG_FUNCTION_INFO_V1(bloom_shared_gate_any);
PG_FUNCTION_INFO_V1(bloom_shared_gate_elements);
PG_FUNCTION_INFO_V1(bloom_shared_skipped_scans);

#if PG_VERSION_NUM >= 170000
#define BF_LXID		(MyProc->vxid.lxid)
#else
#define BF_LXID		(MyProc->lxid)
#endif

/* ---------------------------------------------------------------------
 * The definitions the planner consults
 * ---------------------------------------------------------------------
 */

static List *gate_defs = NIL;	/* of BfDefinition *, in TopMemoryContext */
static uint64 gate_defs_epoch = 0;
static Oid	gate_defs_cfgoid = InvalidOid;
static bool ext_missing = false;	/* known absent until a relcache flush */
static bool gate_callback_registered = false;

static void
gate_relcache_callback(Datum arg, Oid relid)
{
	/* CREATE EXTENSION creates tables: look again after any of them */
	ext_missing = false;
}

/*
 * The guards of this database, NIL when the extension is not installed (or
 * not updated); *cfgoid is the configuration table (InvalidOid then).  The
 * list is the backend's own: it is valid until the next catalog access,
 * which may take in an invalidation and read the definitions again.
 */
static List *
gate_defs_current(Oid *cfgoid)
{
	*cfgoid = InvalidOid;
	if (!gate_callback_registered)
	{
		CacheRegisterRelcacheCallback(gate_relcache_callback, (Datum) 0);
		gate_callback_registered = true;
	}
	if (ext_missing)
		return NIL;
	while (gate_defs_epoch != bf_def_epoch)
	{
		uint64		epoch = bf_def_epoch;
		Oid			cfg = bf_config_table(true);
		List	   *all = NIL;
		MemoryContext old;
		ListCell   *lc;

		if (!OidIsValid(cfg) || !bf_config_current())
		{
			ext_missing = !OidIsValid(cfg);
			return NIL;
		}
		list_free_deep(gate_defs);
		gate_defs = NIL;
		all = bf_def_all();
		old = MemoryContextSwitchTo(TopMemoryContext);
		foreach(lc, all)
		{
			BfDefinition *d = palloc(sizeof(BfDefinition));

			memcpy(d, lfirst(lc), sizeof(BfDefinition));
			gate_defs = lappend(gate_defs, d);
		}
		MemoryContextSwitchTo(old);
		list_free_deep(all);
		gate_defs_cfgoid = cfg;
		/* a read that took in invalidations reads again */
		if (epoch == bf_def_epoch)
			gate_defs_epoch = epoch;
	}
	*cfgoid = gate_defs_cfgoid;
	return gate_defs;
}

/*
 * The guards of this database (see gate_defs_current), copied into the
 * current memory context: the caller may look up catalogs while it reads
 * them.
 */
List *
bf_gate_definitions(Oid *cfgoid)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, gate_defs_current(cfgoid))
	{
		BfDefinition *d = palloc(sizeof(BfDefinition));

		memcpy(d, lfirst(lc), sizeof(BfDefinition));
		result = lappend(result, d);
	}
	return result;
}

/* Copy the definition with this id into *def; false if there is none. */
static bool
gate_def_by_id(int64 id, BfDefinition *def)
{
	Oid			cfgoid;
	ListCell   *lc;

	foreach(lc, gate_defs_current(&cfgoid))
	{
		BfDefinition *d = lfirst(lc);

		if (d->id == id)
		{
			*def = *d;
			return true;
		}
	}
	return false;
}

/*
 * The guarded column of a definition in relid (the guarded table or one of
 * its partitions, whose attribute numbers may differ), or
 * InvalidAttrNumber when the definition is gone.
 */
AttrNumber
bf_gate_guarded_attnum(int64 defid, Oid relid)
{
	BfDefinition def;

	if (!gate_def_by_id(defid, &def))
		return InvalidAttrNumber;
	return get_attnum(relid, NameStr(def.column_name));
}

/* ---------------------------------------------------------------------
 * Skipped scans, counted in shared memory per registry slot
 * ---------------------------------------------------------------------
 */

typedef struct GateCounter
{
	slock_t		mutex;			/* protects the identity */
	Oid			dbid;
	Oid			cfgoid;
	int64		defid;
	pg_atomic_uint64 skipped;
} GateCounter;

static GateCounter *gate_counters = NULL;
static int	gate_ncounters = 0;

Size
bf_gate_shmem_size(void)
{
	return mul_size(bf_max_shared_filters, sizeof(GateCounter));
}

void
bf_gate_shmem_init(void)
{
	bool		found;

	gate_counters = ShmemInitStruct("bloomfilter skipped scans",
									bf_gate_shmem_size(), &found);
	gate_ncounters = bf_max_shared_filters;
	if (!found)
	{
		for (int i = 0; i < gate_ncounters; i++)
		{
			GateCounter *c = &gate_counters[i];

			SpinLockInit(&c->mutex);
			c->dbid = InvalidOid;
			c->cfgoid = InvalidOid;
			c->defid = 0;
			pg_atomic_init_u64(&c->skipped, 0);
		}
	}
}

static void
count_skip(const BfFilterRef *ref, Oid cfgoid, int64 defid)
{
	GateCounter *c;

	if (gate_counters == NULL || ref->slot < 0 || ref->slot >= gate_ncounters)
		return;
	c = &gate_counters[ref->slot];
	SpinLockAcquire(&c->mutex);
	if (c->dbid != MyDatabaseId || c->cfgoid != cfgoid || c->defid != defid)
	{
		/* the slot serves another filter now: start its count */
		c->dbid = MyDatabaseId;
		c->cfgoid = cfgoid;
		c->defid = defid;
		pg_atomic_write_u64(&c->skipped, 0);
	}
	SpinLockRelease(&c->mutex);
	pg_atomic_fetch_add_u64(&c->skipped, 1);
}

/* The view's rule: roles that may check the filter, and the table's owner. */
static bool
may_see_counts(const BfDefinition *def)
{
	AttrNumber	attnum = get_attnum(def->relid, NameStr(def->column_name));

	if (attnum != InvalidAttrNumber &&
		bf_read_access(def->relid, attnum, GetUserId()) == BF_READ_OK)
		return true;
	return bf_class_ownercheck(def->relid, GetUserId());
}

/* Skipped scans of a definition; NULL for roles that may not see them. */
Datum
bloom_shared_skipped_scans(PG_FUNCTION_ARGS)
{
	int64		defid = PG_GETARG_INT64(0);
	BfDefinition def;
	Oid			cfgoid = bf_config_table(true);
	uint64		sum = 0;

	if (!gate_def_by_id(defid, &def) ||
		!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(def.relid)) ||
		!may_see_counts(&def))
		PG_RETURN_NULL();

	for (int i = 0; i < gate_ncounters; i++)
	{
		GateCounter *c = &gate_counters[i];
		bool		match;

		SpinLockAcquire(&c->mutex);
		match = c->dbid == MyDatabaseId && c->cfgoid == cfgoid && c->defid == defid;
		SpinLockRelease(&c->mutex);
		if (match)
			sum += pg_atomic_read_u64(&c->skipped);
	}
	PG_RETURN_INT64((int64) sum);
}

/* ---------------------------------------------------------------------
 * The gates
 * ---------------------------------------------------------------------
 */

typedef struct GateKey
{
	int64		defid;
	Oid			member;			/* the partition's filter, or InvalidOid */
	Oid			argtype;
} GateKey;

/* A role's access to a guarded column, as of a local transaction. */
typedef struct GateAccess
{
	Oid			relid;
	AttrNumber	attnum;
	LocalTransactionId lxid;
	Oid			userid;
	bool		readable;
} GateAccess;

/* What a backend resolved for a definition and a key type. */
typedef struct GateState
{
	GateKey		key;
	bool		usable;			/* false: always "maybe" */
	BfDefinition def;
	Oid			cfgoid;
	AttrNumber	attnum;			/* in the guarded table */
	BfKeyType	kt;				/* how keys are hashed */
	BfFilterRef ref;
	GateAccess	access;			/* may the caller check the filter? */
	bool		load_requested;
} GateState;

/* A call site: its state while bf_def_epoch stays, its collation's verdict. */
typedef struct GateSite
{
	uint64		epoch;
	GateState  *state;
	bool		collation_ok;
} GateSite;

static HTAB *gate_states = NULL;
static uint64 gate_states_epoch = 0;

static void
state_resolve(GateState *g)
{
	Oid			atttypid;
	int32		atttypmod;
	Oid			attcoll;
	Oid			cfgoid;

	g->usable = false;
	g->ref = BF_FILTER_REF_NONE;
	g->access.lxid = InvalidLocalTransactionId;
	/* a copy: the catalog lookups below may read the definitions again */
	if (!gate_def_by_id(g->key.defid, &g->def))
		return;
	g->def.member = g->key.member;
	/*
	 * A guard on a partitioned table has a filter per partition only, which
	 * answers for a partition of that table only.
	 */
	if (OidIsValid(g->key.member) != bf_tree_per_partition(g->def.relid))
		return;
	if (OidIsValid(g->key.member) &&
		(get_rel_relkind(g->key.member) != RELKIND_RELATION ||
		 !bf_tree_contains(g->def.relid, g->key.member)))
		return;
	(void) gate_defs_current(&cfgoid);
	g->cfgoid = cfgoid;
	g->attnum = get_attnum(g->def.relid, NameStr(g->def.column_name));
	if (g->attnum == InvalidAttrNumber)
		return;
	get_atttypetypmodcoll(g->def.relid, g->attnum, &atttypid, &atttypmod, &attcoll);
	switch (bf_key_gate_mode(atttypid, attcoll, g->key.argtype))
	{
		case BF_GATE_AS_COLUMN:
			bf_key_type_init(&g->kt, atttypid, attcoll, InvalidOid);
			break;
		case BF_GATE_AS_KEY:
			bf_key_type_init(&g->kt, g->key.argtype, attcoll, InvalidOid);
			break;
		case BF_GATE_NONE:
			return;
	}
	g->usable = true;
}

static GateState *
state_lookup(int64 defid, Oid member, Oid argtype)
{
	GateKey		key;
	GateState  *g;
	bool		found;

	/* definitions changed: resolve everything again */
	if (gate_states != NULL && gate_states_epoch != bf_def_epoch)
	{
		hash_destroy(gate_states);
		gate_states = NULL;
	}
	if (gate_states == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(GateKey);
		ctl.entrysize = sizeof(GateState);
		ctl.hcxt = TopMemoryContext;
		gate_states = hash_create("bloomfilter gates", 16, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		gate_states_epoch = bf_def_epoch;
	}
	memset(&key, 0, sizeof(key));
	key.defid = defid;
	key.member = member;
	key.argtype = argtype;
	g = hash_search(gate_states, &key, HASH_ENTER, &found);
	if (!found)
	{
		g->usable = false;
		PG_TRY();
		{
			state_resolve(g);
		}
		PG_CATCH();
		{
			hash_search(gate_states, &key, HASH_REMOVE, NULL);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	return g;
}

/*
 * Could the caller check the filter itself (bf_check.c's rule)?  Asked once
 * per transaction and role; the partitions of a guard share the answer (it
 * is about the guarded table), so the last one is kept for the next.
 */
static bool
state_readable(GateState *g)
{
	static GateAccess last = {InvalidOid, InvalidAttrNumber,
	InvalidLocalTransactionId, InvalidOid, false};
	Oid			userid = GetUserId();

	if (g->access.lxid == BF_LXID && g->access.userid == userid)
		return g->access.readable;
	if (last.lxid != BF_LXID || last.userid != userid ||
		last.relid != g->def.relid || last.attnum != g->attnum)
	{
		last.readable = bf_read_access(g->def.relid, g->attnum, userid) == BF_READ_OK;
		last.relid = g->def.relid;
		last.attnum = g->attnum;
		last.lxid = BF_LXID;
		last.userid = userid;
	}
	g->access = last;
	return g->access.readable;
}

/* Is one hash of a key of this state's kind possibly in the filter? */
static bool
state_maybe_hash(GateState *g, BfHash h)
{
	int			filter_kind = BF_KEY_NONE;
	BfCheckResult r;

	r = bf_filter_check(&g->ref, h, g->kt.kind, &filter_kind);
	if (r == BF_CHECK_UNKNOWN)
	{
		/* the slot was reset or never looked up: find it again */
		if (bf_filter_lookup(&g->def, false, &g->ref))
			r = bf_filter_check(&g->ref, h, g->kt.kind, &filter_kind);
		else if (!g->load_requested && !IsParallelWorker())
		{
			g->load_requested = true;
			bf_request_load(MyDatabaseId);
		}
	}
	return r != BF_CHECK_NO;
}

/*
 * Is a key of this state's type possibly in the filter?  Every form of the
 * key is tested, as bloomfilter values test them (bf_key_probe_hashes): a
 * cross-type "=" may hold between keys whose canonical bytes differ (a name
 * 'ab ' equals a varchar 'ab ', whose key is hashed without its blanks).
 */
static bool
state_maybe(GateState *g, Datum key)
{
	BfHash		hashes[BF_KEY_MAX_PROBES];
	int			n = bf_key_probe_hashes(&g->kt, key, BF_LAYOUT_BLOCKED, hashes);

	for (int i = 0; i < n; i++)
	{
		if (state_maybe_hash(g, hashes[i]))
			return true;
	}
	return false;
}

/*
 * A gate's answer for keys of this state's type: true if the filter may hold
 * any of them; false (a skipped scan, counted) if it certainly holds none.
 */
static bool
state_answer(GateState *g, const Datum *keys, int nkeys)
{
	for (int i = 0; i < nkeys; i++)
	{
		if (state_maybe(g, keys[i]))
			return true;
	}
	count_skip(&g->ref, g->cfgoid, g->def.id);
	return false;
}

/*
 * Can a gate answer "no" in this backend now?  Not while the planner guards
 * are off, on a standby, while a statement's writes have not reached the
 * filters, nor in a parallel worker, which does not know the leader's open
 * writers.  Nor under SERIALIZABLE: the scan a "no" skips would have taken
 * the predicate locks by which a concurrent insert of the key is seen as a
 * conflict, and a filter in shared memory has no page to lock in their place
 * (two transactions that each found no row for a key and inserted it would
 * both commit).
 */
bool
bf_gates_can_answer(void)
{
	return bfp_planner_guards && bf_shared_available() && !RecoveryInProgress() &&
		!IsParallelWorker() && !IsolationIsSerializable() && !bf_unfired_writes();
}

/*
 * The state of a call site for a key of type argtype, or NULL when the gate
 * can only answer "maybe" there.
 */
static GateState *
gate_setup(FunctionCallInfo fcinfo, Oid member, Oid argtype)
{
	GateSite   *site = fcinfo->flinfo->fn_extra;
	int64		defid = PG_GETARG_INT64(0);

	if (!bf_gates_can_answer())
		return NULL;
	if (site == NULL)
	{
		Oid			collation = PG_GET_COLLATION();

		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(GateSite));
		site->collation_ok = !OidIsValid(collation) ||
			get_collation_isdeterministic(collation);
		fcinfo->flinfo->fn_extra = site;
	}
	if (!site->collation_ok || !OidIsValid(argtype))
		return NULL;
	/* arguments may change between calls (a column, an anyarray of pg_stats) */
	if (site->state == NULL || site->epoch != bf_def_epoch ||
		gate_states_epoch != bf_def_epoch ||
		site->state->key.defid != defid || site->state->key.member != member ||
		site->state->key.argtype != argtype)
	{
		site->state = NULL;
		site->state = state_lookup(defid, member, argtype);
		site->epoch = gate_states_epoch;
	}
	if (!site->state->usable || !state_readable(site->state))
		return NULL;
	return site->state;
}

/*
 * The partition of a three-argument gate (definition_id, partition, key),
 * InvalidOid for the two-argument form; *keyarg is the key's argument.
 */
static Oid
gate_member(FunctionCallInfo fcinfo, int *keyarg)
{
	*keyarg = PG_NARGS() - 1;
	return PG_NARGS() == 3 && !PG_ARGISNULL(1) ? PG_GETARG_OID(1) : InvalidOid;
}

/* The elements of a gate's array of keys (with what building one needs). */
void
bf_gate_keys(ArrayType *arr, BfGateKeys *keys)
{
	keys->elemtype = ARR_ELEMTYPE(arr);
	get_typlenbyvalalign(keys->elemtype, &keys->typlen, &keys->typbyval,
						 &keys->typalign);
	deconstruct_array(arr, keys->elemtype, keys->typlen, keys->typbyval,
					  keys->typalign, &keys->elems, &keys->nulls, &keys->n);
}

/*
 * bloom_shared_gate(definition_id, [partition,] key): false when the filter
 * of the definition (of that partition, for a guard on a partitioned table)
 * certainly holds no key equal to this one, true otherwise.
 */
Datum
bloom_shared_gate(PG_FUNCTION_ARGS)
{
	GateState  *g;
	Datum		key;
	int			keyarg;
	Oid			member = gate_member(fcinfo, &keyarg);

	if (PG_ARGISNULL(0) || PG_ARGISNULL(keyarg) ||
		(keyarg == 2 && PG_ARGISNULL(1)))
		PG_RETURN_BOOL(true);
	g = gate_setup(fcinfo, member, get_fn_expr_argtype(fcinfo->flinfo, keyarg));
	if (g == NULL)
		PG_RETURN_BOOL(true);
	key = PG_GETARG_DATUM(keyarg);
	PG_RETURN_BOOL(state_answer(g, &key, 1));
}

/*
 * bloom_shared_gate(definition_id, partition, key) or, for several keys,
 * bloom_shared_gate_any(definition_id, partition, keys) without a call site,
 * for BloomAppend (bf_gate_append.c), which asks the filters of many
 * partitions about the same keys: the caller has seen bf_gates_can_answer()
 * and a deterministic collation (or none); the keys are not NULL and of
 * type argtype.
 */
bool
bf_gate_partition_maybe(int64 defid, Oid partition, Oid argtype,
						const Datum *keys, int nkeys)
{
	GateState  *g = state_lookup(defid, partition, argtype);

	if (!g->usable || !state_readable(g))
		return true;
	return state_answer(g, keys, nkeys);
}

/*
 * bloom_shared_gate_any(definition_id, [partition,] keys): false when the filter
 * certainly holds none of the keys; true otherwise, also when the array or
 * any element is NULL.
 */
Datum
bloom_shared_gate_any(PG_FUNCTION_ARGS)
{
	ArrayType  *arr;
	GateState  *g;
	BfGateKeys	keys;
	int			keyarg;
	Oid			member = gate_member(fcinfo, &keyarg);

	if (PG_ARGISNULL(0) || PG_ARGISNULL(keyarg) ||
		(keyarg == 2 && PG_ARGISNULL(1)))
		PG_RETURN_BOOL(true);
	arr = PG_GETARG_ARRAYTYPE_P(keyarg);
	g = gate_setup(fcinfo, member, ARR_ELEMTYPE(arr));
	if (g == NULL || array_contains_nulls(arr))
		PG_RETURN_BOOL(true);
	bf_gate_keys(arr, &keys);
	PG_RETURN_BOOL(state_answer(g, keys.elems, keys.n));
}

/*
 * bloom_shared_gate_elements(definition_id, [partition,] keys): the keys
 * without the elements the filter certainly does not hold, in a
 * one-dimensional array; the keys as they are whenever the gate could not
 * answer "no" (see gate_setup).  NULL elements stay.  bf_gate_narrow.c puts
 * it around the array of an index condition "column = ANY (keys)" under a
 * gate, so that the index is searched for the "maybe" elements only.
 */
Datum
bloom_shared_gate_elements(PG_FUNCTION_ARGS)
{
	ArrayType  *arr;
	GateState  *g;
	BfGateKeys	keys;
	int			kept = 0;
	int			dims[1];
	int			lbs[1] = {1};
	int			keyarg;
	Oid			member = gate_member(fcinfo, &keyarg);

	if (PG_ARGISNULL(keyarg))
		PG_RETURN_NULL();
	arr = PG_GETARG_ARRAYTYPE_P(keyarg);
	if (PG_ARGISNULL(0) || (keyarg == 2 && PG_ARGISNULL(1)))
		PG_RETURN_ARRAYTYPE_P(arr);
	g = gate_setup(fcinfo, member, ARR_ELEMTYPE(arr));
	if (g == NULL)
		PG_RETURN_ARRAYTYPE_P(arr);
	bf_gate_keys(arr, &keys);
	for (int i = 0; i < keys.n; i++)
	{
		if (keys.nulls[i] || state_maybe(g, keys.elems[i]))
		{
			keys.elems[kept] = keys.elems[i];
			keys.nulls[kept] = keys.nulls[i];
			kept++;
		}
	}
	if (kept == keys.n)
		PG_RETURN_ARRAYTYPE_P(arr);
	dims[0] = kept;
	PG_RETURN_ARRAYTYPE_P(construct_md_array(keys.elems, keys.nulls, kept > 0 ? 1 : 0,
											 dims, lbs, keys.elemtype, keys.typlen,
											 keys.typbyval, keys.typalign));
}
