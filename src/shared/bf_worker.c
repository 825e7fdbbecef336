/*
 * bf_worker.c
 *		Background workers: the launcher, and the workers that build filters.
 *
 * The launcher (a static worker, restarted after a crash) asks for every
 * database to be loaded at start-up, then serves requests flagged in shared
 * memory by backends: loads (a definition without a filter, e.g. after a
 * restart, a restore or a type change) and grow rebuilds.
 *
 * A build, like CREATE INDEX CONCURRENTLY: (a) allocate the new buffer and
 * publish it as the slot's "next", so every trigger firing from now on adds
 * to it; (b) wait for every transaction that may have written the table
 * without seeing "next" (WaitForLockers in ShareLock mode); (c) scan the
 * table with a fresh snapshot, adding every non-NULL key; (d) make "next"
 * live and free the old buffer.  Every committed row is then either seen by
 * the scan or was added by its trigger.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/namespace.h"
#include "catalog/pg_database.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bf_layout.h"
#include "bf_sizing.h"
#include "bf_value.h"
#include "bf_shared.h"
#include "bf_text.h"

PGDLLEXPORT void bf_launcher_main(Datum arg);
PGDLLEXPORT void bf_worker_main(Datum arg);

#define BF_BATCH 4096

void
bf_register_launcher(void)
{
	BackgroundWorker w;

	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = 5;
	strlcpy(w.bgw_library_name, "bloomfilter", BGW_MAXLEN);
	strlcpy(w.bgw_function_name, "bf_launcher_main", BGW_MAXLEN);
	strlcpy(w.bgw_name, "bloomfilter launcher", BGW_MAXLEN);
	strlcpy(w.bgw_type, "bloomfilter launcher", BGW_MAXLEN);
	RegisterBackgroundWorker(&w);
}

bool
bf_start_worker(Oid dbid, int mode, TransactionId wait_xid, int slot, int64 capacity)
{
	BackgroundWorker w;
	BfWorkerArgs args;
	BackgroundWorkerHandle *handle;

	memset(&w, 0, sizeof(w));
	memset(&args, 0, sizeof(args));
	args.mode = mode;
	args.wait_xid = wait_xid;
	args.capacity = capacity;
	args.slot = slot;
	args.generation = slot >= 0 ? bf_shared->slots[slot].generation : 0;
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(w.bgw_library_name, "bloomfilter", BGW_MAXLEN);
	strlcpy(w.bgw_function_name, "bf_worker_main", BGW_MAXLEN);
	if (mode == BF_WORKER_LOAD)
		snprintf(w.bgw_name, BGW_MAXLEN, "bloomfilter load of database %u", dbid);
	else
		snprintf(w.bgw_name, BGW_MAXLEN, "bloomfilter build");
	strlcpy(w.bgw_type, "bloomfilter build", BGW_MAXLEN);
	w.bgw_main_arg = ObjectIdGetDatum(dbid);
	memcpy(w.bgw_extra, &args, sizeof(args));
	w.bgw_notify_pid = 0;
	return RegisterDynamicBackgroundWorker(&w, &handle);
}

/* ------------------------------------------------------------ launcher -- */

static void
launcher_exit(int code, Datum arg)
{
	bf_shared->launcher_latch = NULL;
	bf_shared->launcher_pid = 0;
}

typedef struct LoadAttempt
{
	Oid			dbid;
	TimestampTz at;
} LoadAttempt;

void
bf_launcher_main(Datum arg)
{
	LoadAttempt attempts[BF_MAX_LOAD_REQUESTS * 2];
	int			nattempts = 0;
	TimestampTz *grow_at;
	TimestampTz *grow_build;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	bf_shared->launcher_pid = MyProcPid;
	bf_shared->launcher_latch = MyLatch;
	on_shmem_exit(launcher_exit, (Datum) 0);
	grow_at = MemoryContextAllocZero(TopMemoryContext, sizeof(TimestampTz) * bf_shared->nslots);
	grow_build = MemoryContextAllocZero(TopMemoryContext, sizeof(TimestampTz) * bf_shared->nslots);

	/* at start-up (and after a crash) every database is loaded */
	{
		Relation	rel;
		TableScanDesc scan;
		HeapTuple	tup;

		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		rel = table_open(DatabaseRelationId, AccessShareLock);
		scan = table_beginscan_catalog(rel, 0, NULL);
		while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
		{
			Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

			if (db->datallowconn && !db->datistemplate && db->datconnlimit != -2)
				bf_request_load(db->oid);
		}
		table_endscan(scan);
		table_close(rel, AccessShareLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}

	for (;;)
	{
		TimestampTz now;
		Oid			queue[BF_MAX_LOAD_REQUESTS];
		int			nqueue;
		int			kept = 0;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		now = GetCurrentTimestamp();

		/* grow requests */
		for (int i = 0; i < bf_shared->nslots; i++)
		{
			BfSharedSlot *s = &bf_shared->slots[i];
			bool		go;
			Oid			dbid;
			int64		cap;
			TimestampTz built;

			LWLockAcquire(bf_slot_lock(i), LW_SHARED);
			go = s->in_use && s->has_live && !s->has_next &&
				pg_atomic_read_u32(&s->grow_requested) != 0 &&
				pg_atomic_read_u32(&s->pending) == 0;
			dbid = s->dbid;
			cap = (int64) Max(2 * pg_atomic_read_u64(&s->added), 2 * s->live_hdr.capacity);
			built = s->last_build;
			LWLockRelease(bf_slot_lock(i));
			/*
			 * A grow whose build failed (no build finished since) is retried
			 * once a minute only.
			 */
			if (!go || (grow_at[i] != 0 && grow_build[i] == built &&
						!TimestampDifferenceExceeds(grow_at[i], now, 60000)))
				continue;
			if (pg_atomic_exchange_u32(&s->pending, 1) != 0)
				continue;
			grow_at[i] = now;
			grow_build[i] = built;
			if (!bf_start_worker(dbid, BF_WORKER_BUILD, InvalidTransactionId, i, cap))
				pg_atomic_write_u32(&s->pending, 0);
		}

		/* load requests (at most one start per database every 5 s) */
		LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
		nqueue = bf_shared->nload;
		memcpy(queue, bf_shared->load_dbid, sizeof(Oid) * nqueue);
		bf_shared->nload = 0;
		LWLockRelease(bf_registry_lock());
		for (int q = 0; q < nqueue; q++)
		{
			int			a;
			bool		started = false;

			for (a = 0; a < nattempts; a++)
				if (attempts[a].dbid == queue[q])
					break;
			if (a < nattempts && !TimestampDifferenceExceeds(attempts[a].at, now, 5000))
			{
				queue[kept++] = queue[q];	/* later */
				continue;
			}
			if (bf_start_worker(queue[q], BF_WORKER_LOAD, InvalidTransactionId, -1, 0))
				started = true;
			else
				queue[kept++] = queue[q];
			if (started)
			{
				if (a == nattempts)
				{
					if (nattempts == lengthof(attempts))
						a = 0;	/* overwrite the oldest-ish entry */
					else
						nattempts++;
				}
				attempts[a].dbid = queue[q];
				attempts[a].at = now;
			}
		}
		for (int q = 0; q < kept; q++)
			bf_request_load(queue[q]);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 kept > 0 ? 1000 : 10000, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* -------------------------------------------------------------- builds -- */

/* the build in progress, for clean-up on error or exit */
static int	cur_slot = -1;
static uint32 cur_gen;
static uint64 cur_off;

static void
build_cleanup(void)
{
	BfSharedSlot *s;

	if (cur_slot < 0)
		return;
	s = &bf_shared->slots[cur_slot];
	LWLockReleaseAll();
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	LWLockAcquire(bf_slot_lock(cur_slot), LW_EXCLUSIVE);
	if (s->in_use && s->generation == cur_gen)
	{
		if (s->next_bytes > 0 && s->next_off == cur_off)
		{
			s->has_next = false;
			s->next_bytes = 0;
		}
		pg_atomic_write_u32(&s->pending, 0);
	}
	LWLockRelease(bf_slot_lock(cur_slot));
	LWLockRelease(bf_registry_lock());
	cur_slot = -1;
}

static void
build_exit(int code, Datum arg)
{
	build_cleanup();
}

static int64
estimate_rows(Relation rel, const char *qualified, bool only)
{
	float4		reltuples = rel->rd_rel->reltuples;
	int64		n;
	bool		isnull;

	if (reltuples >= 1)
		return (int64) reltuples;
	if (SPI_execute(psprintf("SELECT count(*) FROM %s%s", only ? "ONLY " : "", qualified),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "bloomfilter: could not count the rows of %s", qualified);
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return n;
}

/*
 * The table or column of a build changed under it (type, typmod, collation,
 * relkind, or the table the definition names): abort the build.  Unload the
 * slot if it is still this build's (any live filter was built for the old
 * column too), so checks answer "maybe", and ask for a load to retry.
 */
static void
build_abort_changed(int i, uint32 gen, const char *name, const char *what)
{
	BfSharedSlot *s = &bf_shared->slots[i];
	bool		mine;

	LWLockAcquire(bf_slot_lock(i), LW_SHARED);
	mine = s->in_use && s->generation == gen;
	LWLockRelease(bf_slot_lock(i));
	if (mine)
		bf_slot_unload(i);
	bf_request_load(MyDatabaseId);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("build of shared bloom filter \"%s\" abandoned: %s changed during the build",
					name, what),
			 errdetail("The filter answers \"maybe\" until a new build finishes; one was requested.")));
}

/*
 * Does the table have the guard's trigger, enabled ALWAYS: an AFTER INSERT
 * OR UPDATE ... FOR EACH ROW trigger calling this extension's
 * bloom_shared_trigger() for this filter?  (Without it, writes after the
 * scan would be missed: a restore creates the trigger after the data.)
 */
static bool
guard_trigger_ok(Relation rel, const char *name, const char *colname)
{
	TriggerDesc *td = rel->trigdesc;
	Oid			extnsp = bf_extension_schema(true);

	if (td == NULL || !OidIsValid(extnsp))
		return false;
	for (int k = 0; k < td->numtriggers; k++)
	{
		Trigger    *tg = &td->triggers[k];
		char	   *fname;

		if (tg->tgenabled != TRIGGER_FIRES_ALWAYS ||
			!TRIGGER_FOR_ROW(tg->tgtype) || !TRIGGER_FOR_AFTER(tg->tgtype) ||
			!TRIGGER_FOR_INSERT(tg->tgtype) || !TRIGGER_FOR_UPDATE(tg->tgtype) ||
			tg->tgnargs < 1 || strcmp(tg->tgargs[0], name) != 0 ||
			(tg->tgnargs >= 2 && strcmp(tg->tgargs[1], colname) != 0))
			continue;
		if (get_func_namespace(tg->tgfoid) != extnsp)
			continue;
		fname = get_func_name(tg->tgfoid);
		if (fname && strcmp(fname, "bloom_shared_trigger") == 0)
			return true;
	}
	return false;
}

/* Build (or rebuild) slot i of generation gen; returns quietly if it is gone. */
static void
build_slot(int i, uint32 gen, int64 want_capacity)
{
	BfSharedSlot *s = &bf_shared->slots[i];
	char		name[BF_SHARED_NAME_LEN];
	int64		defid;
	BfDefinition def;
	BfDefinition def2;
	Oid			relid;
	Oid			slot_relid;
	AttrNumber	attnum = InvalidAttrNumber;
	Oid			atttypid = InvalidOid;
	int32		atttypmod = -1;
	Oid			attcoll = InvalidOid;
	BfKeyType	kt;
	Relation	rel;
	TupleDesc	desc;
	bool		partitioned;
	char	   *qualified;
	char	   *column;
	int64		capacity;
	BfSize		size;
	BfHeader	hdr;
	uint64		bytes;
	uint64		off;
	uint64		max_nbits;
	List	   *locktags = NIL;
	uint64		threshold;
	bool		grow_now = false;
	bool		trigger_ok;
	bool		ok;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());

	LWLockAcquire(bf_slot_lock(i), LW_SHARED);
	if (!s->in_use || s->generation != gen || s->dbid != MyDatabaseId)
	{
		LWLockRelease(bf_slot_lock(i));
		PopActiveSnapshot();
		CommitTransactionCommand();
		return;
	}
	strlcpy(name, s->name, sizeof(name));
	defid = s->defid;
	slot_relid = s->relid;
	LWLockRelease(bf_slot_lock(i));

	bf_def_invalidate();
	if (!bf_def_lookup(name, &def) || def.id != defid)
	{
		/* the definition is gone (its transaction rolled back, or unguarded) */
		if (s->in_use && s->generation == gen)
			bf_slot_free(i);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return;
	}

	cur_slot = i;
	cur_gen = gen;
	cur_off = PG_UINT64_MAX;

	/*
	 * Lock the table first (by name, retrying if it is renamed meanwhile),
	 * then take everything else from its descriptor, under the lock: a
	 * concurrent ALTER COLUMN TYPE waits, or has committed and is seen.
	 */
	relid = RangeVarGetRelidExtended(makeRangeVar(NameStr(def.schema_name),
												  NameStr(def.table_name), -1),
									 AccessShareLock, RVR_MISSING_OK, NULL, NULL);
	rel = OidIsValid(relid) ? table_open(relid, NoLock) : NULL;
	desc = rel ? RelationGetDescr(rel) : NULL;
	for (int k = 0; desc && k < desc->natts; k++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, k);

		if (!att->attisdropped && strcmp(NameStr(att->attname), NameStr(def.column_name)) == 0)
		{
			attnum = att->attnum;
			atttypid = att->atttypid;
			atttypmod = att->atttypmod;
			attcoll = att->attcollation;
			break;
		}
	}
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("cannot build shared bloom filter \"%s\": column %s of table %s.%s does not exist",
						name, NameStr(def.column_name), NameStr(def.schema_name),
						NameStr(def.table_name)),
				 errhint("Remove the definition with bloom_unguard() or DELETE FROM bloom_shared_definitions.")));

	/*
	 * The definition may have followed a rename (or a swap by renames) that
	 * committed while we waited for the lock: re-read it, now that the
	 * table is locked, and check it still names this table; and a rebuild
	 * must be of the table the slot was built for.
	 */
	PopActiveSnapshot();
	PushActiveSnapshot(GetTransactionSnapshot());
	bf_def_invalidate();
	if (!bf_def_lookup(name, &def2) || def2.id != defid ||
		strcmp(NameStr(def2.schema_name), NameStr(def.schema_name)) != 0 ||
		strcmp(NameStr(def2.table_name), NameStr(def.table_name)) != 0 ||
		strcmp(NameStr(def2.column_name), NameStr(def.column_name)) != 0 ||
		(OidIsValid(slot_relid) && slot_relid != relid))
		build_abort_changed(i, gen, name, "the table");
	bf_key_type_init(&kt, atttypid, attcoll, InvalidOid);

	partitioned = rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE;
	qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));

	SPI_connect();
	capacity = def.capacity;
	if (capacity <= 0)
		capacity = Max(1000, 2 * estimate_rows(rel, qualified, !partitioned));
	capacity = Max(capacity, want_capacity);
	SPI_finish();

	max_nbits = (bf_shared->pool_bytes / BF_BLOCK_BYTES) * BF_BLOCK_BITS;
	max_nbits = Min(max_nbits, BF_MAX_NBITS(BF_LAYOUT_BLOCKED));
	if (!bf_size_for(BF_LAYOUT_BLOCKED, (uint64) capacity, def.fpr, max_nbits, &size))
	{
		char		rate[32];

		/* the rate as it reads back (%g would print 0.9999999999999999 as 1) */
		bf_format_double(def.fpr, rate, sizeof(rate));
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("shared bloom filter \"%s\" of capacity " INT64_FORMAT " at false-positive rate %s does not fit in bloomfilter.shared_memory (%d MB)",
						name, capacity, rate, bf_shared_memory_mb),
				 errhint("Raise bloomfilter.shared_memory (needs a restart).")));
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.version = BF_FORMAT_VERSION;
	hdr.family = BF_FAMILY_BLOOM;
	hdr.layout = BF_LAYOUT_BLOCKED;
	hdr.key_kind = (uint8) kt.kind;
	hdr.hashes = (uint16) size.hashes;
	hdr.layers = 1;
	hdr.nbits = size.nbits;
	hdr.capacity = (uint64) capacity;
	hdr.target_fpr = def.fpr;
	bytes = bf_payload_bytes(size.nbits);

	/* (a) allocate, clear and publish the new buffer */
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	if (!s->in_use || s->generation != gen)
	{
		LWLockRelease(bf_registry_lock());
		ereport(ERROR, (errmsg("shared bloom filter \"%s\" was removed during its build", name)));
	}
	if (s->next_bytes > 0 || !bf_pool_alloc(bytes, &off))
	{
		uint64		used = bf_pool_used();

		LWLockRelease(bf_registry_lock());
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("shared bloom filter \"%s\" needs %llu kB, which do not fit in bloomfilter.shared_memory (%d MB, %llu kB in use)",
						name, (unsigned long long) (bytes / 1024), bf_shared_memory_mb,
						(unsigned long long) (used / 1024)),
				 errhint("Raise bloomfilter.shared_memory (needs a restart), or unguard other columns.")));
	}
	s->next_off = off;
	s->next_bytes = bytes;
	cur_off = off;

	/*
	 * Clear the extent while holding the slot lock (taken before the
	 * registry lock is released): unloading or freeing the slot, the only
	 * ways its extent returns to the pool, need that lock exclusively, so no
	 * one else can be handed this memory while it is cleared.  has_next is
	 * still false: nothing writes to it yet.
	 */
	LWLockAcquire(bf_slot_lock(i), LW_SHARED);
	LWLockRelease(bf_registry_lock());
	memset(bf_pool + off, 0, bytes);
	LWLockRelease(bf_slot_lock(i));

	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	ok = s->in_use && s->generation == gen && !s->has_next &&
		s->next_bytes == bytes && s->next_off == off;
	if (ok)
	{
		s->next_hdr = hdr;
		s->relid = relid;
		s->attnum = attnum;
		s->atttypid = atttypid;
		s->key_kind = kt.kind;
		pg_atomic_write_u64(&s->next_added, 0);
		s->has_next = true;
	}
	LWLockRelease(bf_slot_lock(i));
	if (!ok)
		ereport(ERROR, (errmsg("shared bloom filter \"%s\" was removed during its build", name)));

	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		if (partitioned)
		{
			List	   *rels = find_all_inheritors(relid, NoLock, NULL);
		ListCell   *lc;

			foreach(lc, rels)
			{
				LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

				SET_LOCKTAG_RELATION(*tag, MyDatabaseId, lfirst_oid(lc));
				locktags = lappend(locktags, tag);
			}
		}
		else
		{
			LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

			SET_LOCKTAG_RELATION(*tag, MyDatabaseId, relid);
			locktags = lappend(locktags, tag);
		}
		MemoryContextSwitchTo(old);
	}
	table_close(rel, AccessShareLock);
	PopActiveSnapshot();
	CommitTransactionCommand();

	/* (b) wait for the writers that may not have seen "next" */
	StartTransactionCommand();
	{
		MemoryContext old = MemoryContextSwitchTo(CurTransactionContext);
		List	   *copy = NIL;
		ListCell   *lc;

		foreach(lc, locktags)
		{
			LOCKTAG    *t = palloc(sizeof(LOCKTAG));

			*t = *(LOCKTAG *) lfirst(lc);
			copy = lappend(copy, t);
		}
		MemoryContextSwitchTo(old);
		WaitForLockersMultiple(copy, ShareLock, false);
	}
	CommitTransactionCommand();

	/*
	 * (c) scan with a fresh snapshot.  The table by OID, locked before its
	 * name is resolved (a rename needs a lock that conflicts with ours), and
	 * the column by number, checked to be of the type the filter was made
	 * for before any value is hashed.
	 */
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	rel = try_table_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("shared bloom filter \"%s\" was removed during its build: its table was dropped", name)));
	desc = RelationGetDescr(rel);
	if (attnum > desc->natts ||
		TupleDescAttr(desc, attnum - 1)->attisdropped ||
		TupleDescAttr(desc, attnum - 1)->atttypid != atttypid ||
		TupleDescAttr(desc, attnum - 1)->atttypmod != atttypmod ||
		TupleDescAttr(desc, attnum - 1)->attcollation != attcoll ||
		(rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE) != partitioned)
		build_abort_changed(i, gen, name, "the column's type");
	qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));
	column = pstrdup(quote_identifier(NameStr(TupleDescAttr(desc, attnum - 1)->attname)));
	SPI_connect();
	{
		char	   *sql;
		SPIPlanPtr	plan;
		Portal		portal;
		BfHash	   *hashes = palloc(sizeof(BfHash) * BF_BATCH);

		sql = psprintf("SELECT %s FROM %s%s WHERE %s IS NOT NULL", column,
					   partitioned ? "" : "ONLY ", qualified, column);
		plan = SPI_prepare(sql, 0, NULL);
		if (plan == NULL)
			elog(ERROR, "bloomfilter: could not prepare \"%s\"", sql);
		portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
		for (;;)
		{
			uint64		n;
			TupleDesc	rdesc;

			SPI_cursor_fetch(portal, true, BF_BATCH);
			n = SPI_processed;
			if (n == 0)
				break;
			rdesc = SPI_tuptable->tupdesc;
			if (rdesc->natts != 1 ||
				TupleDescAttr(rdesc, 0)->atttypid != atttypid ||
				TupleDescAttr(rdesc, 0)->atttypmod != atttypmod ||
				TupleDescAttr(rdesc, 0)->attcollation != attcoll)
				build_abort_changed(i, gen, name, "the column's type");
			for (uint64 r = 0; r < n; r++)
			{
				bool		isnull;
				Datum		d = SPI_getbinval(SPI_tuptable->vals[r], rdesc, 1, &isnull);

				hashes[r] = isnull ? (BfHash) {0, 0} : bf_key_hash(&kt, d, BF_LAYOUT_BLOCKED);
			}
			LWLockAcquire(bf_slot_lock(i), LW_SHARED);
			ok = s->in_use && s->generation == gen && s->has_next && s->next_off == off &&
				s->relid == relid && s->attnum == attnum;
			if (ok)
			{
				for (uint64 r = 0; r < n; r++)
					bf_shared_add_hash((uint8 *) bf_pool + off, &hdr, hashes[r]);
				pg_atomic_fetch_add_u64(&s->next_added, n);
			}
			LWLockRelease(bf_slot_lock(i));
			if (!ok)
				ereport(ERROR, (errmsg("shared bloom filter \"%s\" was removed during its build", name)));
			SPI_freetuptable(SPI_tuptable);
			CHECK_FOR_INTERRUPTS();
		}
		SPI_cursor_close(portal);
	}
	SPI_finish();

	/*
	 * Publish only if the guard's trigger is there and fires ALWAYS: else
	 * writes after the scan would be missed (pg_restore, for one, restores
	 * the definitions, as data, before the triggers).
	 */
	trigger_ok = guard_trigger_ok(rel, name, NameStr(TupleDescAttr(desc, attnum - 1)->attname));
	if (!trigger_ok)
		ereport(WARNING,
				(errmsg("shared bloom filter \"%s\" was not published: table %s has no enabled-ALWAYS bloom_shared_trigger('%s') trigger",
						name, qualified, name),
				 errdetail("The filter answers \"maybe\" until it is rebuilt with its trigger in place."),
				 errhint("Re-create the guard with bloom_unguard() and bloom_guard(), or ALTER TABLE %s ENABLE ALWAYS TRIGGER on its trigger.",
						 qualified)));
	table_close(rel, AccessShareLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (!trigger_ok)
	{
		/* free the new buffer; the slot stays not loaded (or keeps its live filter) */
		build_cleanup();
		return;
	}

	/* (d) swap */
	threshold = bf_grow_threshold(&hdr);
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	if (s->in_use && s->generation == gen && s->has_next && s->next_off == off &&
		s->relid == relid && s->attnum == attnum)
	{
		uint64		added = pg_atomic_read_u64(&s->next_added);

		s->live_off = off;
		s->live_bytes = bytes;
		s->live_hdr = hdr;
		s->has_live = true;
		s->has_next = false;
		s->next_bytes = 0;
		pg_atomic_write_u64(&s->added, added);
		s->grow_threshold = threshold;
		pg_atomic_write_u32(&s->grow_requested, 0);
		s->last_build = GetCurrentTimestamp();
		pg_atomic_write_u32(&s->pending, 0);
		if (added > threshold)
		{
			pg_atomic_write_u32(&s->grow_requested, 1);
			grow_now = true;
		}
	}
	LWLockRelease(bf_slot_lock(i));
	LWLockRelease(bf_registry_lock());
	cur_slot = -1;
	if (grow_now)
		bf_wake_launcher();
	elog(DEBUG1, "bloomfilter: built shared filter \"%s\"", name);
}

/* Build every definition of this database that has no filter. */
static void
load_database(void)
{
	List	   *defs;
	ListCell   *lc;
	Oid			cfgoid;
	MemoryContext ctx = AllocSetContextCreate(TopMemoryContext, "bloomfilter load",
											  ALLOCSET_DEFAULT_SIZES);

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	cfgoid = bf_config_table(true);
	if (!OidIsValid(cfgoid))
	{
		/* the extension is not installed here */
		bf_slots_purge_db(MyDatabaseId, InvalidOid, NULL);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return;
	}
	bf_slots_purge_db(MyDatabaseId, cfgoid, NULL);
	{
		MemoryContext old = MemoryContextSwitchTo(ctx);

		defs = bf_def_all();
		MemoryContextSwitchTo(old);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();

	foreach(lc, defs)
	{
		BfDefinition *d = lfirst(lc);
		int			i;
		uint32		gen;
		bool		skip;
		MemoryContext oldcontext = CurrentMemoryContext;

		i = bf_slot_find_or_create(MyDatabaseId, d->name, cfgoid, d->id);
		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		skip = bf_shared->slots[i].has_live || bf_shared->slots[i].has_next;
		gen = bf_shared->slots[i].generation;
		LWLockRelease(bf_slot_lock(i));
		if (skip || pg_atomic_exchange_u32(&bf_shared->slots[i].pending, 1) != 0)
			continue;
		PG_TRY();
		{
			build_slot(i, gen, 0);
		}
		PG_CATCH();
		{
			/* report, clean up, and go on with the other filters */
			MemoryContextSwitchTo(oldcontext);
			build_cleanup();
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
		}
		PG_END_TRY();
	}
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

	if (TransactionIdIsValid(args.wait_xid))
	{
		/* the guard's transaction: its definition is visible once it ends */
		StartTransactionCommand();
		XactLockTableWait(args.wait_xid, NULL, NULL, XLTW_None);
		CommitTransactionCommand();
	}

	if (args.mode == BF_WORKER_LOAD)
		load_database();
	else
	{
		PG_TRY();
		{
			build_slot(args.slot, args.generation, args.capacity);
		}
		PG_CATCH();
		{
			build_cleanup();
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	proc_exit(0);
}
