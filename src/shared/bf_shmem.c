/*
 * bf_shmem.c
 *		The shared tier's registry: GUCs, shared memory, slots, the bit pool,
 *		and the per-backend cache of filter definitions.
 */
#include "postgres.h"

#include <limits.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bf_shared.h"

#define BF_TRANCHE "bloomfilter"

#if PG_VERSION_NUM >= 140000
#define BF_HASH_STRINGS HASH_STRINGS
#else
#define BF_HASH_STRINGS 0
#endif

bool		bf_shared_enabled = false;
int			bf_shared_memory_mb = 64;
int			bf_max_shared_filters = 64;
BfSharedState *bf_shared = NULL;
char	   *bf_pool = NULL;

static LWLockPadded *bf_locks = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif

static Size
bf_state_size(void)
{
	return add_size(offsetof(BfSharedState, slots),
					mul_size(bf_max_shared_filters, sizeof(BfSharedSlot)));
}

static Size
bf_pool_size(void)
{
	return (Size) bf_shared_memory_mb * 1024 * 1024;
}

static void
bf_request_shmem(void)
{
	RequestAddinShmemSpace(add_size(bf_state_size(),
									add_size(bf_pool_size(), BF_POOL_ALIGN)));
	RequestNamedLWLockTranche(BF_TRANCHE, 1 + bf_max_shared_filters);
}

#if PG_VERSION_NUM >= 150000
static void
bf_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	bf_request_shmem();
}
#endif

static void
bf_shmem_startup(void)
{
	bool		found;
	bool		pool_found;
	char	   *pool;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bf_shared = ShmemInitStruct("bloomfilter registry", bf_state_size(), &found);
	pool = ShmemInitStruct("bloomfilter pool", bf_pool_size() + BF_POOL_ALIGN,
						   &pool_found);
	bf_pool = (char *) TYPEALIGN(BF_POOL_ALIGN, pool);
	bf_locks = GetNamedLWLockTranche(BF_TRANCHE);
	if (!found)
	{
		memset(bf_shared, 0, bf_state_size());
		bf_shared->nslots = bf_max_shared_filters;
		bf_shared->pool_bytes = bf_pool_size();
		for (int i = 0; i < bf_shared->nslots; i++)
		{
			BfSharedSlot *s = &bf_shared->slots[i];

			pg_atomic_init_u64(&s->added, 0);
			pg_atomic_init_u64(&s->next_added, 0);
			pg_atomic_init_u64(&s->checks, 0);
			pg_atomic_init_u64(&s->negatives, 0);
			pg_atomic_init_u32(&s->grow_requested, 0);
			pg_atomic_init_u32(&s->pending, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

void
bf_shared_init(void)
{
	DefineCustomIntVariable("bloomfilter.shared_memory",
							"Memory for the bits of all shared Bloom filters.",
							"A filter that would not fit is refused.",
							&bf_shared_memory_mb,
							64, 1, INT_MAX / 2,
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("bloomfilter.max_shared_filters",
							"Maximum number of shared Bloom filters.",
							NULL,
							&bf_max_shared_filters,
							64, 1, 10000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("bloomfilter");
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bf_shmem_request;
#else
	EmitWarningsOnPlaceholders("bloomfilter");
	bf_request_shmem();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bf_shmem_startup;

	bf_register_launcher();
	bf_shared_enabled = true;
}

void
bf_shared_check_enabled(void)
{
	if (!bf_shared_enabled || bf_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared bloom filters are not available"),
				 errdetail("The bloomfilter library was not loaded at server start."),
				 errhint("Add bloomfilter to shared_preload_libraries and restart the server.")));
}

LWLock *
bf_registry_lock(void)
{
	return &bf_locks[0].lock;
}

LWLock *
bf_slot_lock(int i)
{
	return &bf_locks[1 + i].lock;
}

static bool
slot_matches(BfSharedSlot *s, Oid dbid, const char *name, Oid cfgoid, int64 defid)
{
	return s->in_use && s->dbid == dbid && s->cfgoid == cfgoid &&
		s->defid == defid && strcmp(s->name, name) == 0;
}

int
bf_slot_find(Oid dbid, const char *name, Oid cfgoid, int64 defid)
{
	int			found = -1;

	LWLockAcquire(bf_registry_lock(), LW_SHARED);
	for (int i = 0; i < bf_shared->nslots; i++)
		if (slot_matches(&bf_shared->slots[i], dbid, name, cfgoid, defid))
		{
			found = i;
			break;
		}
	LWLockRelease(bf_registry_lock());
	return found;
}

/* registry lock held exclusively */
static void
slot_free_locked(int i)
{
	BfSharedSlot *s = &bf_shared->slots[i];

	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	s->in_use = false;
	s->generation++;
	s->has_live = false;
	s->has_next = false;
	s->live_bytes = 0;
	s->next_bytes = 0;
	pg_atomic_write_u32(&s->pending, 0);
	pg_atomic_write_u32(&s->grow_requested, 0);
	LWLockRelease(bf_slot_lock(i));
}

int
bf_slot_find_or_create(Oid dbid, const char *name, Oid cfgoid, int64 defid)
{
	int			free_slot = -1;
	BfSharedSlot *s;

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < bf_shared->nslots; i++)
	{
		s = &bf_shared->slots[i];
		if (slot_matches(s, dbid, name, cfgoid, defid))
		{
			LWLockRelease(bf_registry_lock());
			return i;
		}
		/* a stale slot of the same name (older definition): reuse it */
		if (s->in_use && s->dbid == dbid && strcmp(s->name, name) == 0)
			slot_free_locked(i);
		if (!s->in_use && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
	{
		LWLockRelease(bf_registry_lock());
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("all %d shared bloom filter slots are in use",
						bf_shared->nslots),
				 errhint("Increase bloomfilter.max_shared_filters (needs a restart), or unguard a column with bloom_unguard().")));
	}
	s = &bf_shared->slots[free_slot];
	LWLockAcquire(bf_slot_lock(free_slot), LW_EXCLUSIVE);
	s->in_use = true;
	s->generation++;
	s->dbid = dbid;
	s->cfgoid = cfgoid;
	s->defid = defid;
	strlcpy(s->name, name, sizeof(s->name));
	s->live_bytes = s->next_bytes = 0;
	s->has_live = s->has_next = false;
	s->relid = InvalidOid;
	s->attnum = 0;
	s->atttypid = InvalidOid;
	s->key_kind = BF_KEY_NONE;
	s->grow_threshold = PG_UINT64_MAX;
	s->last_build = 0;
	s->request_capacity = 0;
	pg_atomic_write_u64(&s->added, 0);
	pg_atomic_write_u64(&s->next_added, 0);
	pg_atomic_write_u64(&s->checks, 0);
	pg_atomic_write_u64(&s->negatives, 0);
	pg_atomic_write_u32(&s->grow_requested, 0);
	pg_atomic_write_u32(&s->pending, 0);
	LWLockRelease(bf_slot_lock(free_slot));
	LWLockRelease(bf_registry_lock());
	return free_slot;
}

/*
 * Forget a slot's bits (a new generation: call sites and running builds see
 * the change); the slot stays, "not loaded", until a load rebuilds it.
 */
void
bf_slot_unload(int i)
{
	BfSharedSlot *s = &bf_shared->slots[i];

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	s->generation++;
	s->has_live = false;
	s->has_next = false;
	s->live_bytes = 0;
	s->next_bytes = 0;
	pg_atomic_write_u32(&s->pending, 0);
	pg_atomic_write_u32(&s->grow_requested, 0);
	LWLockRelease(bf_slot_lock(i));
	LWLockRelease(bf_registry_lock());
}

void
bf_slot_free(int i)
{
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	slot_free_locked(i);
	LWLockRelease(bf_registry_lock());
}

/*
 * Free the slots of a database that belong to another configuration table
 * than cfgoid (InvalidOid: all of them), or, if name is given, the slots of
 * that name.
 */
void
bf_slots_purge_db(Oid dbid, Oid cfgoid, const char *name)
{
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSharedSlot *s = &bf_shared->slots[i];

		if (!s->in_use || s->dbid != dbid)
			continue;
		if (name ? strcmp(s->name, name) == 0 : s->cfgoid != cfgoid)
			slot_free_locked(i);
	}
	LWLockRelease(bf_registry_lock());
}

typedef struct Extent
{
	uint64		off;
	uint64		bytes;
} Extent;

static int
extent_cmp(const void *a, const void *b)
{
	const Extent *x = a;
	const Extent *y = b;

	return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

static int
collect_extents(Extent *ext)
{
	int			n = 0;

	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSharedSlot *s = &bf_shared->slots[i];

		if (!s->in_use)
			continue;
		if (s->live_bytes > 0)
			ext[n++] = (Extent) {s->live_off, s->live_bytes};
		if (s->next_bytes > 0)
			ext[n++] = (Extent) {s->next_off, s->next_bytes};
	}
	qsort(ext, n, sizeof(Extent), extent_cmp);
	return n;
}

uint64
bf_pool_used(void)
{
	Extent	   *ext = palloc(sizeof(Extent) * 2 * bf_shared->nslots);
	int			n = collect_extents(ext);
	uint64		used = 0;

	for (int i = 0; i < n; i++)
		used += ext[i].bytes;
	pfree(ext);
	return used;
}

/* First fit; the registry lock is held exclusively. */
bool
bf_pool_alloc(uint64 bytes, uint64 *off)
{
	Extent	   *ext = palloc(sizeof(Extent) * 2 * bf_shared->nslots);
	int			n = collect_extents(ext);
	uint64		pos = 0;
	bool		ok = false;

	bytes = TYPEALIGN(BF_POOL_ALIGN, bytes);
	for (int i = 0; i <= n; i++)
	{
		uint64		end = (i < n) ? ext[i].off : bf_shared->pool_bytes;

		if (end >= pos && end - pos >= bytes)
		{
			*off = pos;
			ok = true;
			break;
		}
		if (i < n)
			pos = Max(pos, TYPEALIGN(BF_POOL_ALIGN, ext[i].off + ext[i].bytes));
	}
	pfree(ext);
	return ok;
}

void
bf_wake_launcher(void)
{
	Latch	   *latch = bf_shared->launcher_latch;

	if (latch)
		SetLatch(latch);
}

void
bf_request_load(Oid dbid)
{
	bool		queued = false;

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < bf_shared->nload; i++)
		if (bf_shared->load_dbid[i] == dbid)
			queued = true;
	if (!queued && bf_shared->nload < BF_MAX_LOAD_REQUESTS)
		bf_shared->load_dbid[bf_shared->nload++] = dbid;
	LWLockRelease(bf_registry_lock());
	bf_wake_launcher();
}

/* ---------------------------------------------------------------------
 * Definitions: the configuration table, cached per backend.
 *
 * Only positive entries are cached: a name not in the cache re-reads the
 * table.  guard/unguard send a relcache invalidation for the configuration
 * table at commit, which flushes every backend's cache; a definition deleted
 * behind our back leaves a cached entry whose slot is gone, so checks answer
 * "maybe" — never "no".
 * ---------------------------------------------------------------------
 */
uint64		bf_def_epoch = 1;
static HTAB *def_cache = NULL;
static Oid	cached_cfgoid = InvalidOid;
static bool callback_registered = false;

static void
def_relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == cached_cfgoid)
		bf_def_invalidate();
}

void
bf_def_invalidate(void)
{
	bf_def_epoch++;
	cached_cfgoid = InvalidOid;
	if (def_cache)
	{
		hash_destroy(def_cache);
		def_cache = NULL;
	}
}

Oid
bf_extension_schema(bool missing_ok)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("bloomfilter"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(nsp) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"bloomfilter\" is not installed in this database")));
	return nsp;
}

Oid
bf_config_table(bool missing_ok)
{
	Oid			nsp;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(def_relcache_callback, (Datum) 0);
		callback_registered = true;
	}
	if (OidIsValid(cached_cfgoid))
		return cached_cfgoid;
	nsp = bf_extension_schema(missing_ok);
	if (OidIsValid(nsp))
		cached_cfgoid = get_relname_relid(BF_SHARED_CONFIG_TABLE, nsp);
	if (!OidIsValid(cached_cfgoid) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("bloomfilter configuration table \"%s\" is missing",
						BF_SHARED_CONFIG_TABLE)));
	return cached_cfgoid;
}

/*
 * Read every definition (columns: id, name, schema_name, table_name,
 * column_name, fpr, capacity) with a fresh snapshot.
 */
List *
bf_def_all(void)
{
	Oid			cfgoid = bf_config_table(false);
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	Snapshot	snap;
	List	   *result = NIL;
	TupleDesc	desc;

	rel = table_open(cfgoid, AccessShareLock);
	desc = RelationGetDescr(rel);
	snap = RegisterSnapshot(GetLatestSnapshot());
	scan = table_beginscan(rel, snap, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[7];
		bool		nulls[7];
		BfDefinition *d = palloc0(sizeof(BfDefinition));
		char	   *name;

		if (desc->natts < 7)
			elog(ERROR, "bloomfilter configuration table has an unexpected shape");
		heap_deform_tuple(tup, desc, values, nulls);
		if (nulls[0] || nulls[1] || nulls[2] || nulls[3] || nulls[4] || nulls[5])
			continue;
		d->id = DatumGetInt64(values[0]);
		name = TextDatumGetCString(values[1]);
		strlcpy(d->name, name, sizeof(d->name));
		d->schema_name = *DatumGetName(values[2]);
		d->table_name = *DatumGetName(values[3]);
		d->column_name = *DatumGetName(values[4]);
		d->fpr = DatumGetFloat8(values[5]);
		d->capacity = nulls[6] ? 0 : DatumGetInt64(values[6]);
		result = lappend(result, d);
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);
	return result;
}

bool
bf_def_lookup(const char *name, BfDefinition *def)
{
	BfDefinition *e;
	bool		found;
	char		key[BF_SHARED_NAME_LEN];

	if (strlen(name) >= BF_SHARED_NAME_LEN)
		return false;
	memset(key, 0, sizeof(key));
	strlcpy(key, name, sizeof(key));
	(void) bf_config_table(false);
	if (def_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = BF_SHARED_NAME_LEN;
		ctl.entrysize = sizeof(BfDefinition);
		ctl.hcxt = TopMemoryContext;
		def_cache = hash_create("bloomfilter definitions", 64, &ctl,
								HASH_ELEM | BF_HASH_STRINGS | HASH_CONTEXT);
	}
	e = hash_search(def_cache, key, HASH_FIND, &found);
	if (!found)
	{
		List	   *all = bf_def_all();
		ListCell   *lc;

		/* the read may have processed invalidations: recreate if needed */
		if (def_cache == NULL)
			return bf_def_lookup(name, def);
		foreach(lc, all)
		{
			BfDefinition *d = lfirst(lc);
			BfDefinition *n = hash_search(def_cache, d->name, HASH_ENTER, NULL);

			memcpy(n, d, sizeof(BfDefinition));
		}
		list_free_deep(all);
		e = hash_search(def_cache, key, HASH_FIND, &found);
		if (!found)
			return false;
	}
	memcpy(def, e, sizeof(BfDefinition));
	return true;
}
