/*
 * bf_build.c
 *		The worker that builds one shared filter, and the worker that loads a
 *		database's definitions.
 *
 * A build follows the order of CREATE INDEX CONCURRENTLY:
 *  1. identify: the definition, the table (locked, by OID), the column and
 *     the size;
 *  2. publish "next": a cleared buffer that every guard trigger firing from
 *     now on adds to;
 *  3. wait for every transaction that may have written the table before it
 *     could see "next" (WaitForLockersMultiple in ShareLock mode);
 *  4. scan the table and all the tables below it directly (no SQL), as the
 *     table's owner under SECURITY_RESTRICTED_OPERATION, adding the key of
 *     every row version not yet dead to everyone (so also the rows deleted
 *     before the scan that an older snapshot may still see);
 *  5. swap: "next" becomes live.
 * Every committed row is then either seen by the scan or was added by its
 * trigger.  Before the swap the build checks that every table of the tree
 * still has its guard trigger enabled ALWAYS; if not, the filter is left
 * suspended (checks answer "maybe").
 *
 * The slot's generation is checked at each step: if the filter was reset
 * meanwhile (a DDL command changed its keys), the build stops and the
 * launcher starts another.  Its outcome is recorded in the slot when the
 * worker exits, however it exits: a failure counts towards the backoff and
 * leaves its message for the view.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bf_layout.h"
#include "bf_sizing.h"
#include "bf_value.h"
#include "bf_worker.h"
#include "bf_text.h"

PGDLLEXPORT void bf_worker_main(Datum arg);

#define BF_BATCH 4096
#define BACKOFF_MAX_MS (300 * 1000)

typedef enum BuildOutcome
{
	BUILD_RUNNING,				/* not finished (an error, an exit) */
	BUILD_DONE,					/* published */
	BUILD_SUPERSEDED,			/* the slot was reset: another build follows */
	BUILD_SUSPENDED,			/* a guard trigger is missing or disabled */
	BUILD_GONE					/* the definition is gone */
} BuildOutcome;

typedef struct BuildState
{
	int			slot;
	uint32		generation;
	uint32		seq;			/* the request this build serves */
	TransactionId wait_xid;
	int64		want_capacity;
	bool		outgrown;		/* the live filter grew by layers or is full */
	uint64		live_added;		/* the live filter's keys (0 without one) */
	BfDefinition def;
	Oid			member;			/* the slot's partition, or InvalidOid */
	Oid			atttypid;
	int32		atttypmod;
	Oid			attcoll;
	BfKeyType	kt;
	BfHeader	hdr;
	uint64		bytes;
	uint64		off;			/* of "next", once allocated */
	List	   *locktags;		/* of the tables to wait for */
	int64		rows;
	TimestampTz started;
	BuildOutcome outcome;
	char		error[BF_SLOT_ERROR_LEN];
} BuildState;

static BuildState *cur_build = NULL;

/* Count a failed build: backoff and the error to show; slot lock held. */
void
bf_slot_record_failure(BfSlot *s, const char *error)
{
	long		delay = 1000;

	s->failures++;
	for (int k = 1; k < s->failures && delay < BACKOFF_MAX_MS; k++)
		delay *= 2;
	s->next_try = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
											  Min(delay, BACKOFF_MAX_MS));
	strlcpy(s->last_error, error, sizeof(s->last_error));
}

/* The slot, locked exclusively, if it is still the build's generation. */
static BfSlot *
build_slot_acquire(BuildState *b)
{
	BfFilterRef ref = {b->slot, b->generation};

	return bf_slot_acquire(&ref, LW_EXCLUSIVE);
}

/*
 * Record the outcome in the slot: runs at every exit of the worker, also
 * after an error or pg_terminate_backend().
 */
static void
build_exit(int code, Datum arg)
{
	BuildState *b = cur_build;
	BfSlot	   *s;

	if (b == NULL)
		return;
	cur_build = NULL;
	LWLockReleaseAll();
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	s = &bf_shared->slots[b->slot];
	LWLockAcquire(bf_slot_lock(b->slot), LW_EXCLUSIVE);
	if (s->builder_pid == MyProcPid)
		s->builder_pid = 0;
	if (s->in_use && s->generation == b->generation)
	{
		/* "next" not made live: give its memory back */
		if (b->outcome != BUILD_DONE && s->has_next && s->next_off == b->off)
		{
			s->has_next = false;
			s->next_bytes = 0;
		}
		if (b->outcome == BUILD_RUNNING)
			bf_slot_record_failure(s, b->error[0] ? b->error :
								   "the build was interrupted");
		else if (b->outcome == BUILD_SUSPENDED)
		{
			/* the live bits may miss writes: never answer from them again */
			bf_slot_write_begin(s);
			s->generation++;
			s->has_live = false;
			s->live_bytes = 0;

			/*
			 * Suspended until DDL asks again, unless it already did while this
			 * build ran (the trigger may have been enabled since the build
			 * looked): then the next build decides.
			 */
			if (s->request_seq == b->seq)
			{
				s->suspended = true;
				s->done_seq = b->seq;
			}
			bf_slot_write_end(s);
			strlcpy(s->last_error, b->error, sizeof(s->last_error));
		}
		else if (b->outcome == BUILD_GONE)
		{
			/* nothing to build until a definition names a table again */
			s->done_seq = b->seq;
			strlcpy(s->last_error, "the guarded table does not exist", sizeof(s->last_error));
		}
	}
	LWLockRelease(bf_slot_lock(b->slot));
	LWLockRelease(bf_registry_lock());
}

/* Take the slot for this worker; false if another worker builds it. */
static bool
build_claim(BuildState *b, int slot)
{
	BfSlot	   *s = &bf_shared->slots[slot];
	bool		ok;

	LWLockAcquire(bf_slot_lock(slot), LW_EXCLUSIVE);
	s->launching = false;
	ok = s->in_use && s->dbid == MyDatabaseId && s->builder_pid == 0 &&
		s->request_seq != s->done_seq;
	if (ok)
	{
		s->builder_pid = MyProcPid;
		b->slot = slot;
		b->generation = s->generation;
		b->seq = s->request_seq;
		b->wait_xid = s->wait_xid;
		b->want_capacity = s->request_capacity;
		b->outgrown = s->has_live &&
			(s->live_hdr.family == BF_FAMILY_SCALABLE ||
			 pg_atomic_read_u64(&s->added) > s->live_hdr.capacity);
		b->live_added = s->has_live ? pg_atomic_read_u64(&s->added) : 0;
		b->def.id = s->defid;
		b->member = s->member;
		b->off = PG_UINT64_MAX;
		b->outcome = BUILD_RUNNING;
	}
	LWLockRelease(bf_slot_lock(slot));
	return ok;
}

/* Stop the build quietly: the slot was reset and another build follows. */
static void
superseded(BuildState *b)
{
	b->outcome = BUILD_SUPERSEDED;
	proc_exit(0);
}

static void
suspend(BuildState *b, const char *why)
{
	ereport(LOG,
			(errmsg("shared bloom filter \"%s\" is suspended: %s", b->def.name, why)));
	strlcpy(b->error, why, sizeof(b->error));
	b->outcome = BUILD_SUSPENDED;
	proc_exit(0);
}

/*
 * Find the definition, waiting for the transaction that created it if it is
 * not visible yet.  Returns false if it does not exist (rolled back or
 * removed).
 */
static bool
build_find_definition(BuildState *b)
{
	bool		found;

	StartTransactionCommand();
	found = bf_def_by_id(b->def.id, &b->def);
	CommitTransactionCommand();
	if (!found && TransactionIdIsValid(b->wait_xid))
	{
		StartTransactionCommand();
		XactLockTableWait(b->wait_xid, NULL, NULL, XLTW_None);
		bf_def_invalidate();
		found = bf_def_by_id(b->def.id, &b->def);
		CommitTransactionCommand();
	}
	b->def.member = b->member;
	return found;
}

/* The table the build reads: a partition (its own filter), or the tree. */
static Oid
build_table(const BuildState *b)
{
	return OidIsValid(b->def.member) ? b->def.member : b->def.relid;
}

/* The filter does not fit in the pool. */
static void
fits_not(BuildState *b, int64 capacity)
{
	char		rate[32];

	bf_format_double(b->def.fpr, rate, sizeof(rate));
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("shared bloom filter \"%s\" of capacity " INT64_FORMAT " at false-positive rate %s does not fit in bloomfilter.shared_memory (%d MB)",
					b->def.name, capacity, rate, bf_shared_memory_mb),
			 errhint("Raise bloomfilter.shared_memory (needs a restart).")));
}

/* A cuckoo guard's table (bf_cuckoo_slot.c). */
static void
build_size_cuckoo(BuildState *b, uint64 capacity)
{
	int			why;

	if (!bf_cuckoo_slot_size(capacity, b->def.fpr, bf_shared_max_nbits() / 8,
							 &b->hdr, &b->bytes, &why))
		fits_not(b, (int64) capacity);
	b->hdr.key_kind = (uint8) b->kt.kind;
}

/*
 * Does the table hold more keys than the defined capacity, as far as we know?
 * The live filter grew by layers or is full, or it counted more keys than
 * the capacity (a second rebuild of a filter sized for the rows), or the
 * table's statistics say so (a first build after a restart).  Not from a
 * guess: the estimate of a small table never vacuumed assumes ten pages.
 */
static bool
build_outgrown(const BuildState *b, int64 capacity, double rows, bool counted)
{
	if (rows <= (double) capacity)
		return false;
	return b->outgrown || b->live_added > (uint64) capacity || counted;
}

static void
build_size(BuildState *b, Relation rel)
{
	int64		capacity = b->def.capacity;
	bool		counted;
	double		rows = bf_tree_estimate_rows(RelationGetRelid(rel), &counted);
	BfSize		size;

	/* a capacity given for a partitioned table is shared by its partitions */
	if (capacity > 0 && OidIsValid(b->def.member))
		capacity = Max(1000, capacity /
					   Max(1, list_length(bf_tree_leaves(b->def.relid, NoLock))));

	/*
	 * Twice the rows without a defined capacity, or for a table that outgrew
	 * its defined capacity: one layer for the rows, not a filter that would
	 * fill up at once and be built again.
	 */
	if (capacity <= 0 || build_outgrown(b, capacity, rows, counted))
		capacity = (int64) Max(Max(1000, 2 * rows), capacity);
	capacity = Max(capacity, b->want_capacity);
	if (b->def.layout == BF_GUARD_CUCKOO)
	{
		build_size_cuckoo(b, (uint64) capacity);
		return;
	}
	if (!bf_size_for(b->def.layout, (uint64) capacity,
					 bf_first_layer_fpr(b->def.layout, b->def.fpr),
					 Min(bf_shared_max_nbits(), BF_MAX_NBITS(b->def.layout)), &size))
		fits_not(b, capacity);
	memset(&b->hdr, 0, sizeof(b->hdr));
	b->hdr.version = BF_FORMAT_VERSION;
	b->hdr.family = (uint8) bf_layout_family(b->def.layout);
	b->hdr.layout = (uint8) b->def.layout;
	b->hdr.key_kind = (uint8) b->kt.kind;
	b->hdr.hashes = (uint16) size.hashes;
	b->hdr.layers = 1;
	b->hdr.nbits = size.nbits;
	b->hdr.capacity = (uint64) capacity;
	b->hdr.target_fpr = b->def.fpr;
	b->bytes = bf_payload_bytes(size.nbits);
}

/* 1. The table, its column and the filter's size. */
static void
build_identify(BuildState *b)
{
	Relation	rel;
	AttrNumber	attnum;
	List	   *members;
	ListCell   *lc;
	MemoryContext old;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	rel = try_table_open(build_table(b), AccessShareLock);
	if (rel == NULL)
	{
		/* dropped: the event trigger removes the definition */
		b->outcome = BUILD_GONE;
		proc_exit(0);
	}
	attnum = get_attnum(build_table(b), NameStr(b->def.column_name));
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist",
						NameStr(b->def.column_name), RelationGetRelationName(rel))));
	get_atttypetypmodcoll(build_table(b), attnum, &b->atttypid, &b->atttypmod, &b->attcoll);
	bf_key_type_init(&b->kt, b->atttypid, b->attcoll, InvalidOid);
	build_size(b, rel);

	members = bf_tree_members(build_table(b), AccessShareLock);
	old = MemoryContextSwitchTo(TopMemoryContext);
	foreach(lc, members)
	{
		LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

		SET_LOCKTAG_RELATION(*tag, MyDatabaseId, lfirst_oid(lc));
		b->locktags = lappend(b->locktags, tag);
	}
	MemoryContextSwitchTo(old);
	table_close(rel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/* 2. Allocate, clear and publish "next". */
static void
build_publish_next(BuildState *b)
{
	BfSlot	   *s;
	uint64		off;

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	s = build_slot_acquire(b);
	if (s == NULL)
	{
		LWLockRelease(bf_registry_lock());
		superseded(b);
	}
	if (s->next_bytes > 0 || !bf_pool_alloc(b->bytes, &off))
	{
		uint64		used = bf_pool_used();

		bf_slot_release(s);
		LWLockRelease(bf_registry_lock());
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("shared bloom filter \"%s\" needs %llu kB, which do not fit in bloomfilter.shared_memory (%d MB, %llu kB in use)",
						b->def.name, (unsigned long long) (b->bytes / 1024),
						bf_shared_memory_mb, (unsigned long long) (used / 1024)),
				 errhint("Raise bloomfilter.shared_memory (needs a restart), or remove other guards.")));
	}

	/*
	 * The extent is ours once recorded under the registry lock; it returns to
	 * the pool only with the slot lock held exclusively, which we hold, so it
	 * can be cleared before anyone can write to it (has_next is false).
	 */
	s->next_off = off;
	s->next_bytes = b->bytes;
	b->off = off;
	LWLockRelease(bf_registry_lock());
	memset(bf_pool + off, 0, b->bytes);
	s->next_hdr = b->hdr;
	s->next_overflowed = false;
	bf_slot_write_begin(s);
	s->key_kind = b->kt.kind;
	bf_slot_write_end(s);
	pg_atomic_write_u64(&s->next_added, 0);
	s->has_next = true;
	bf_slot_release(s);
}

/* 3. Wait for the writers that may not have seen "next". */
static void
build_wait_writers(BuildState *b)
{
	StartTransactionCommand();
	WaitForLockersMultiple(b->locktags, ShareLock, false);
	CommitTransactionCommand();
}

/* Add a batch of hashes to "next". */
static void
add_batch(BuildState *b, BfHash *hashes, int n)
{
	BfFilterRef ref = {b->slot, b->generation};
	BfSlot	   *s;

	if (bf_hdr_is_cuckoo(&b->hdr))
	{
		/* (the slot lock, exclusive) */
		if (!bf_cuckoo_slot_add_batch(&ref, b->off, &b->hdr, hashes, n))
			superseded(b);
		b->rows += n;
		return;
	}
	s = bf_slot_acquire(&ref, LW_SHARED);
	if (s == NULL)
		superseded(b);
	for (int i = 0; i < n; i++)
		bf_bits_add_atomic((uint8 *) bf_pool + b->off, &b->hdr, hashes[i]);
	pg_atomic_fetch_add_u64(&s->next_added, n);
	bf_slot_release(s);
	b->rows += n;
}

/*
 * Scan one table of the tree, adding the key of every row version that is
 * not dead to everyone: the live rows, and also the rows deleted (or whose
 * key an UPDATE changed) that an older snapshot may still see, as an index
 * build does.  Those keys only raise the false-positive rate, until the
 * next rebuild; leaving them out would make such a snapshot's check of a
 * row it sees answer "no".
 */
static void
scan_member(BuildState *b, Relation rel, BfHash *hashes, MemoryContext batch_cxt)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(rel), NameStr(b->def.column_name));
	TupleDesc	desc = RelationGetDescr(rel);
	Form_pg_attribute att;
	TransactionId oldest_xmin;
	TableScanDesc scan;
	HeapTuple	tuple;
	int			n = 0;
	MemoryContext old;

	if (attnum <= 0)
		superseded(b);
	att = TupleDescAttr(desc, attnum - 1);
	if (att->atttypid != b->atttypid || att->atttypmod != b->atttypmod ||
		att->attcollation != b->attcoll)
		superseded(b);
	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		suspend(b, psprintf("table \"%s\" does not use the heap access method",
							RelationGetRelationName(rel)));

	oldest_xmin = GetOldestNonRemovableTransactionId(rel);
	scan = table_beginscan_strat(rel, SnapshotAny, 0, NULL, true, false);
	old = MemoryContextSwitchTo(batch_cxt);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Buffer		buf = ((HeapScanDesc) scan)->rs_cbuf;
		HTSV_Result status;
		bool		isnull;
		Datum		d;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		status = HeapTupleSatisfiesVacuum(tuple, oldest_xmin, buf);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (status == HEAPTUPLE_DEAD)
			continue;
		d = heap_getattr(tuple, attnum, desc, &isnull);
		if (isnull)
			continue;
		hashes[n++] = bf_key_hash(&b->kt, d, BF_LAYOUT_BLOCKED);
		if (n == BF_BATCH)
		{
			add_batch(b, hashes, n);
			n = 0;
			MemoryContextReset(batch_cxt);
			CHECK_FOR_INTERRUPTS();
		}
	}
	add_batch(b, hashes, n);
	MemoryContextSwitchTo(old);
	MemoryContextReset(batch_cxt);
	table_endscan(scan);
}

/* Is the guard sound?  Suspends the build (and exits) if not. */
static void
build_check_guard(BuildState *b)
{
	Oid			culprit;
	BfGuardState st = bf_guard_state(build_table(b), b->def.name,
									  bf_guard_follows_deletes(b->def.layout),
									  &culprit);
	List	   *members = bf_tree_members(build_table(b), AccessShareLock);
	ListCell   *lc;

	/* a foreign table's rows are written where no trigger sees them */
	foreach(lc, members)
	{
		char		relkind = get_rel_relkind(lfirst_oid(lc));

		if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
			suspend(b, psprintf("table \"%s\" of the guarded tree is not a plain table",
								get_rel_name(lfirst_oid(lc))));
	}
	if (st == BF_GUARD_OK)
		return;
	suspend(b, psprintf(st == BF_GUARD_MISSING || st == BF_GUARD_CHILD_MISSING ?
						"table \"%s\" has no guard trigger" :
						st == BF_GUARD_DISABLED ?
						"the guard trigger of table \"%s\" is disabled" :
						st == BF_GUARD_DUPLICATE ?
						"table \"%s\" has more than one guard trigger" :
						"the guard trigger of table \"%s\" is not enabled ALWAYS or has the wrong shape",
						get_rel_name(culprit)));
}

/*
 * A partition's filter: is the partition still in the guarded tree, now
 * that the writers that may have attached or detached it have ended?  If
 * not, its filter goes (the DDL review frees it too; this covers an
 * ATTACH that rolled back).
 */
static void
build_member_check(BuildState *b)
{
	if (!OidIsValid(b->def.member) || bf_tree_contains(b->def.relid, b->def.member))
		return;
	bf_filter_forget_member(b->def.id, b->def.member);
	b->outcome = BUILD_GONE;
	proc_exit(0);
}

/* 4. Scan the tree with a fresh snapshot, as the table's owner. */
static void
build_scan(BuildState *b)
{
	Relation	root;
	List	   *members;
	ListCell   *lc;
	Oid			save_userid;
	int			save_sec;
	int			level;
	Snapshot	snap;
	BfHash	   *hashes;
	MemoryContext batch_cxt;

	StartTransactionCommand();
	root = try_table_open(build_table(b), AccessShareLock);
	if (root == NULL)
	{
		b->outcome = BUILD_GONE;
		proc_exit(0);
	}
	build_member_check(b);
	build_check_guard(b);
	members = bf_tree_members(build_table(b), AccessShareLock);

	GetUserIdAndSecContext(&save_userid, &save_sec);
	/* a partition is read as the guarded table's owner, as the tree is */
	SetUserIdAndSecContext(bf_rel_owner(b->def.relid),
						   save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	level = bf_fixed_search_path();
	/* the scan reads every version; this snapshot is for detoasting */
	snap = RegisterSnapshot(GetLatestSnapshot());
	PushActiveSnapshot(snap);
	hashes = palloc(sizeof(BfHash) * BF_BATCH);
	batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomfilter build batch",
									  ALLOCSET_DEFAULT_SIZES);
	foreach(lc, members)
	{
		Relation	rel = table_open(lfirst_oid(lc), NoLock);

		if (rel->rd_rel->relkind == RELKIND_RELATION)
			scan_member(b, rel, hashes, batch_cxt);
		table_close(rel, NoLock);
	}
	PopActiveSnapshot();
	UnregisterSnapshot(snap);
	bf_restore_search_path(level);
	SetUserIdAndSecContext(save_userid, save_sec);
	table_close(root, NoLock);
	CommitTransactionCommand();
}

/* 5. Make "next" live. */
static void
build_swap(BuildState *b)
{
	uint64		threshold = bf_live_grow_threshold(&b->hdr, NULL, 0);
	BfSlot	   *s;
	uint64		added;

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	s = build_slot_acquire(b);
	if (s == NULL || !s->has_next || s->next_off != b->off)
	{
		if (s)
			bf_slot_release(s);
		LWLockRelease(bf_registry_lock());
		superseded(b);
	}
	added = pg_atomic_read_u64(&s->next_added);
	bf_slot_write_begin(s);
	s->live_off = b->off;
	s->live_bytes = b->bytes;
	s->live_hdr = b->hdr;
	s->has_live = true;
	s->overflowed = s->next_overflowed;
	/* removals queued against the old buffer are dropped (src/README.md) */
	s->live_epoch++;
	pg_atomic_write_u64(&s->removed, 0);
	s->suspended = false;
	bf_slot_write_end(s);
	s->has_next = false;
	s->next_bytes = 0;
	pg_atomic_write_u64(&s->added, added);
	s->layer_base = 0;
	s->grow_threshold = threshold;
	pg_atomic_write_u32(&s->grow_requested, 0);
	s->last_build = GetCurrentTimestamp();
	s->done_seq = b->seq;
	/* a build that overflowed keeps counting toward the backoff */
	if (!s->overflowed)
		s->failures = 0;
	s->next_try = 0;
	s->last_error[0] = '\0';
	s->request_capacity = 0;
	if (added > threshold)
	{
		/* it filled up during the build: grow at once */
		s->request_capacity = (int64) (2 * added);
		s->request_seq++;
	}
	if (s->overflowed)
		bf_cuckoo_slot_overflowed(s);	/* a key did not fit: grow */
	b->outcome = BUILD_DONE;
	bf_slot_release(s);
	LWLockRelease(bf_registry_lock());
}

static void
build_filter(int slot)
{
	BuildState *b = MemoryContextAllocZero(TopMemoryContext, sizeof(BuildState));
	MemoryContext oldcontext = CurrentMemoryContext;

	if (!build_claim(b, slot))
		return;
	cur_build = b;
	b->started = GetCurrentTimestamp();
	PG_TRY();
	{
		if (!build_find_definition(b))
		{
			b->outcome = BUILD_GONE;
			StartTransactionCommand();
			bf_filter_forget(b->def.id);
			CommitTransactionCommand();
			proc_exit(0);
		}
		build_identify(b);
		build_publish_next(b);
		build_wait_writers(b);
		build_scan(b);
		build_swap(b);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		strlcpy(b->error, edata->message, sizeof(b->error));
		PG_RE_THROW();
	}
	PG_END_TRY();
	{
		long		secs;
		int			usecs;

		TimestampDifference(b->started, GetCurrentTimestamp(), &secs, &usecs);
		ereport(LOG,
				(errmsg("built shared bloom filter \"%s\": " INT64_FORMAT " keys in %ld.%03d s, %llu kB",
						b->def.name, b->rows, secs, usecs / 1000,
						(unsigned long long) (b->bytes / 1024))));
	}
}

/* Ask for a build of every definition of this database without a filter. */
static void
load_database(void)
{
	Oid			cfgoid;
	List	   *defs;
	ListCell   *lc;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	cfgoid = bf_config_table(true);
	if (!OidIsValid(cfgoid))
	{
		/* the extension is not installed here (any more) */
		bf_filters_forget_db(MyDatabaseId, InvalidOid);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return;
	}
	bf_filters_forget_db(MyDatabaseId, cfgoid);
	defs = NIL;
	/* a guard on a partitioned table has a filter per partition */
	foreach(lc, bf_def_all())
		defs = list_concat(defs, bf_filter_members(lfirst(lc)));
	foreach(lc, defs)
	{
		BfDefinition *d = lfirst(lc);
		BfFilterRef ref;

		if (bf_filter_lookup(d, false, &ref))
			continue;
		if (!bf_filter_slot_free())
		{
			/* the others stay "not loaded" (checks answer "maybe") */
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("shared bloom filter \"%s\" cannot be loaded: all %d shared bloom filter slots are in use",
							d->name, bf_max_shared_filters),
					 errhint("Increase bloomfilter.max_shared_filters (needs a restart), or remove guards with bloom_unguard().")));
			continue;
		}
		bf_filter_request_build(d, InvalidTransactionId, false);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

void
bf_worker_main(Datum arg)
{
	Oid			dbid = DatumGetObjectId(arg);
	BfWorkerArgs args;

	memcpy(&args, MyBgworkerEntry->bgw_extra, sizeof(args));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);
	before_shmem_exit(build_exit, (Datum) 0);

	if (args.mode == BF_WORKER_LOAD)
		load_database();
	else
		build_filter(args.slot);
	proc_exit(0);
}
