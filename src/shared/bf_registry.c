/*
 * bf_registry.c
 *		The shared tier's registry: GUCs, shared memory, the slots that hold
 *		loaded filters, the pool their bits live in, and build requests.
 */
#include "postgres.h"

#include <limits.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
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

#include "bf_value.h"
#include "bf_slot.h"
#include "bf_worker.h"

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
static object_access_hook_type prev_object_access_hook = NULL;
#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif

static Size
bf_state_size(void)
{
	return add_size(offsetof(BfSharedState, slots),
					mul_size(bf_max_shared_filters, sizeof(BfSlot)));
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
	bf_removals_request_shmem();
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
	bf_removals_shmem_init();
	if (!found)
	{
		memset(bf_shared, 0, bf_state_size());
		bf_shared->nslots = bf_max_shared_filters;
		bf_shared->pool_bytes = bf_pool_size();
		for (int i = 0; i < bf_shared->nslots; i++)
		{
			BfSlot *s = &bf_shared->slots[i];

			pg_atomic_init_u32(&s->check_seq, 0);
			pg_atomic_init_u64(&s->added, 0);
			pg_atomic_init_u64(&s->next_added, 0);
			pg_atomic_init_u64(&s->checks, 0);
			pg_atomic_init_u64(&s->negatives, 0);
			pg_atomic_init_u32(&s->grow_requested, 0);
			pg_atomic_init_u64(&s->removed, 0);
			pg_atomic_init_u64(&s->removals_dropped, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * DROP EXTENSION bloomfilter: its event triggers are dropped with it and do
 * not fire, so forget this database's filters here (a rolled-back drop
 * leaves definitions without filters: they are built again on first use).
 * DROP DATABASE: forget the dropped database's filters.
 */
static void
bf_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || bf_shared == NULL)
		return;
	if (classId == ExtensionRelationId &&
		objectId == get_extension_oid("bloomfilter", true))
		bf_filters_forget_db(MyDatabaseId, InvalidOid);
	/* DROP DATABASE: at once (the launcher's sweep would take seconds) */
	if (classId == DatabaseRelationId)
		bf_filters_forget_db(objectId, InvalidOid);
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
	bf_removals_define_guc();
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bf_shmem_startup;
	prev_object_access_hook = object_access_hook;
	object_access_hook = bf_object_access;

	bf_planner_init();
	bf_register_launcher();
	bf_shared_enabled = true;
}

bool
bf_shared_available(void)
{
	return bf_shared_enabled && bf_shared != NULL;
}

void
bf_shared_check_enabled(void)
{
	if (!bf_shared_available())
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


/* The largest filter the pool could hold, in bits. */
uint64
bf_shared_max_nbits(void)
{
	uint64		nbits = (bf_shared->pool_bytes / BF_BLOCK_BYTES) * BF_BLOCK_BITS;

	return Min(nbits, BF_MAX_NBITS(BF_LAYOUT_BLOCKED));
}

int
bf_slot_index(const BfSlot *s)
{
	return (int) (s - bf_shared->slots);
}

BfSlot *
bf_slot_acquire(const BfFilterRef *ref, LWLockMode mode)
{
	BfSlot	   *s;

	if (ref->slot < 0 || ref->slot >= bf_shared->nslots)
		return NULL;
	s = &bf_shared->slots[ref->slot];
	LWLockAcquire(bf_slot_lock(ref->slot), mode);
	if (s->in_use && s->generation == ref->generation)
		return s;
	LWLockRelease(bf_slot_lock(ref->slot));
	return NULL;
}

void
bf_slot_release(BfSlot *s)
{
	LWLockRelease(bf_slot_lock(bf_slot_index(s)));
}

static bool
slot_is(const BfSlot *s, Oid dbid, Oid cfgoid, int64 defid)
{
	return s->in_use && s->dbid == dbid && s->cfgoid == cfgoid && s->defid == defid;
}

/* The slot of one filter: a definition's, or one of its partitions'. */
static bool
slot_is_member(const BfSlot *s, Oid dbid, Oid cfgoid, int64 defid, Oid member)
{
	return slot_is(s, dbid, cfgoid, defid) && s->member == member;
}

/*
 * Forget a slot's bits; both locks are held exclusively, inside a write
 * section (bf_slot_write_begin).
 */
static void
slot_forget_locked(BfSlot *s)
{
	s->generation++;
	s->has_live = false;
	s->has_next = false;
	s->live_bytes = 0;
	s->next_bytes = 0;
	pg_atomic_write_u64(&s->added, 0);
	pg_atomic_write_u64(&s->next_added, 0);
	pg_atomic_write_u32(&s->grow_requested, 0);
	s->layer_base = 0;
	pg_atomic_write_u64(&s->removed, 0);
	pg_atomic_write_u64(&s->removals_dropped, 0);
	s->overflowed = false;
	s->next_overflowed = false;
}

/* Free a slot; the registry lock is held exclusively. */
static void
slot_free_locked(int i)
{
	BfSlot	   *s = &bf_shared->slots[i];

	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	bf_slot_write_begin(s);
	slot_forget_locked(s);
	s->in_use = false;
	bf_slot_write_end(s);
	LWLockRelease(bf_slot_lock(i));
}

void
bf_slot_reset(int i)
{
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	bf_slot_write_begin(&bf_shared->slots[i]);
	slot_forget_locked(&bf_shared->slots[i]);
	bf_slot_write_end(&bf_shared->slots[i]);
	LWLockRelease(bf_slot_lock(i));
	LWLockRelease(bf_registry_lock());
}

/* Is a slot free?  (A hint only: another backend may take it first.) */
bool
bf_filter_slot_free(void)
{
	bool		free_slot = false;

	LWLockAcquire(bf_registry_lock(), LW_SHARED);
	for (int i = 0; i < bf_shared->nslots && !free_slot; i++)
		free_slot = !bf_shared->slots[i].in_use;
	LWLockRelease(bf_registry_lock());
	return free_slot;
}

/* Take a free slot for a definition; the registry lock is held exclusively. */
static int
slot_assign_locked(Oid dbid, Oid cfgoid, const BfDefinition *def)
{
	BfSlot	   *s = NULL;
	int			i;

	for (i = 0; i < bf_shared->nslots; i++)
		if (!bf_shared->slots[i].in_use)
		{
			s = &bf_shared->slots[i];
			break;
		}
	if (s == NULL)
	{
		LWLockRelease(bf_registry_lock());
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("all %d shared bloom filter slots are in use",
						bf_shared->nslots),
				 errhint("Increase bloomfilter.max_shared_filters (needs a restart), or remove a guard with bloom_unguard().")));
	}
	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	bf_slot_write_begin(s);
	slot_forget_locked(s);
	s->in_use = true;
	s->dbid = dbid;
	s->cfgoid = cfgoid;
	s->defid = def->id;
	s->member = def->member;
	strlcpy(s->name, def->name, sizeof(s->name));
	s->relid = def->relid;
	s->column = def->column_name;
	s->key_kind = BF_KEY_NONE;
	s->grow_threshold = PG_UINT64_MAX;
	s->last_build = 0;
	s->request_seq = 0;
	s->done_seq = 0;
	s->wait_xid = InvalidTransactionId;
	s->request_capacity = 0;
	s->builder_pid = 0;
	s->launching = false;
	s->suspended = false;
	s->failures = 0;
	s->next_try = 0;
	s->last_error[0] = '\0';
	pg_atomic_write_u64(&s->checks, 0);
	pg_atomic_write_u64(&s->negatives, 0);
	bf_slot_write_end(s);
	LWLockRelease(bf_slot_lock(i));
	return i;
}

/*
 * Find the slot of a definition of this database (creating it if asked and
 * missing) and fill ref with its current generation.  A new slot holds no
 * bits: checks answer "maybe" until a build publishes.
 */
bool
bf_filter_lookup(const BfDefinition *def, bool create, BfFilterRef *ref)
{
	Oid			cfgoid = bf_config_table(false);
	int			found = -1;

	LWLockAcquire(bf_registry_lock(), create ? LW_EXCLUSIVE : LW_SHARED);
	for (int i = 0; i < bf_shared->nslots; i++)
		if (slot_is_member(&bf_shared->slots[i], MyDatabaseId, cfgoid, def->id,
						   def->member))
		{
			found = i;
			break;
		}
	if (found < 0 && create)
		found = slot_assign_locked(MyDatabaseId, cfgoid, def);
	if (found >= 0)
	{
		/* the generation changes only under the registry lock: stable here */
		ref->slot = found;
		ref->generation = bf_shared->slots[found].generation;
	}
	else
		*ref = BF_FILTER_REF_NONE;
	LWLockRelease(bf_registry_lock());
	return found >= 0;
}

/*
 * Ask for a build of a definition's filter (creating its slot if needed);
 * for a guard on a partitioned table, of each leaf partition's filter.
 * forget: drop the current bits first, so that checks answer "maybe" until
 * the build publishes (the keys may have changed).  wait_xid: the build
 * first waits for that transaction (the one that defined the filter).
 * A request clears any backoff: the build starts at once.
 */
void
bf_filter_request_build(const BfDefinition *def, TransactionId wait_xid, bool forget)
{
	BfFilterRef ref;
	BfSlot	   *s;

	/* a guard on a partitioned table: each partition's filter (bf_members.c) */
	if (!OidIsValid(def->member) && bf_tree_per_partition(def->relid))
	{
		bf_members_request_build(def, wait_xid, forget);
		return;
	}
	for (;;)
	{
		(void) bf_filter_lookup(def, true, &ref);
		if (forget)
		{
			bf_slot_reset(ref.slot);
			forget = false;
			(void) bf_filter_lookup(def, true, &ref);
		}
		s = bf_slot_acquire(&ref, LW_EXCLUSIVE);
		if (s != NULL)
			break;
	}
	s->request_seq++;
	if (TransactionIdIsValid(wait_xid))
		s->wait_xid = wait_xid;
	s->failures = 0;
	s->next_try = 0;
	bf_slot_write_begin(s);
	s->suspended = false;
	bf_slot_write_end(s);
	bf_slot_release(s);
	bf_wake_launcher();
}

/* Free the slot of a definition of this database, if any. */
void
bf_filter_forget(int64 defid)
{
	Oid			cfgoid = bf_config_table(true);

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < bf_shared->nslots; i++)
		if (slot_is(&bf_shared->slots[i], MyDatabaseId, cfgoid, defid))
			slot_free_locked(i);
	LWLockRelease(bf_registry_lock());
}

/* Free the slot of one partition's filter of a definition, if any. */
void
bf_filter_forget_member(int64 defid, Oid member)
{
	bf_filter_forget_member_of(bf_config_table(true), defid, member);
}

/* The same, the configuration table given (no catalog access: at commit). */
void
bf_filter_forget_member_of(Oid cfgoid, int64 defid, Oid member)
{
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < bf_shared->nslots; i++)
		if (slot_is_member(&bf_shared->slots[i], MyDatabaseId, cfgoid, defid, member))
			slot_free_locked(i);
	LWLockRelease(bf_registry_lock());
}

/* The partitions that have a slot for a definition of this database. */
List *
bf_filter_slot_members(int64 defid)
{
	Oid			cfgoid = bf_config_table(true);
	List	   *result = NIL;

	LWLockAcquire(bf_registry_lock(), LW_SHARED);
	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSlot	   *s = &bf_shared->slots[i];

		if (slot_is(s, MyDatabaseId, cfgoid, defid) && OidIsValid(s->member))
			result = lappend_oid(result, s->member);
	}
	LWLockRelease(bf_registry_lock());
	return result;
}

/*
 * Free the slots of a database, except those of the configuration table
 * keep_cfgoid (InvalidOid: all of them).
 */
void
bf_filters_forget_db(Oid dbid, Oid keep_cfgoid)
{
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSlot	   *s = &bf_shared->slots[i];

		if (s->in_use && s->dbid == dbid &&
			(!OidIsValid(keep_cfgoid) || s->cfgoid != keep_cfgoid))
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
		BfSlot	   *s = &bf_shared->slots[i];

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

/* Free bytes in the pool now (fragmentation aside). */
uint64
bf_pool_free_bytes(void)
{
	uint64		used;

	LWLockAcquire(bf_registry_lock(), LW_SHARED);
	used = bf_pool_used();
	LWLockRelease(bf_registry_lock());
	return bf_shared->pool_bytes - Min(used, bf_shared->pool_bytes);
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

/* Ask the launcher to load every definition of a database. */
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
