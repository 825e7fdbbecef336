/*
 * bf_launcher.c
 *		The launcher: a static background worker (restarted after a crash)
 *		that starts the workers which load databases and build filters.
 *
 * At start-up (and after a crash restart) it asks for every database to be
 * loaded: a load worker reads a database's definitions and requests a build
 * of each.  Then it serves what backends flag in shared memory:
 *  - load requests (a check that found no slot, e.g. after a restore);
 *  - build requests (request_seq ahead of done_seq): one build worker per
 *    filter at a time, none before the slot's next_try (backoff after a
 *    failure), none while the filter is suspended;
 * it frees the slots of databases that no longer exist (DROP DATABASE), and
 * it applies the removals of counting filters once they are due
 * (bf_removals.c).
 *
 * A build worker's own exit records its outcome in the slot (see
 * bf_build.c); the launcher only notices workers that stopped without ever
 * running (the postmaster could not start them), and counts those as failed
 * attempts too.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "bf_slot.h"
#include "bf_worker.h"

PGDLLEXPORT void bf_launcher_main(Datum arg);

#define LOAD_INTERVAL_MS	5000	/* at most one load per database this often */
#define SWEEP_INTERVAL_MS	10000	/* look for dropped databases this often */
#define IDLE_WAIT_MS		10000
#define REMOVALS_INTERVAL_MS 200	/* apply the removal queue this often */

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

static bool
start_worker(Oid dbid, int mode, int slot, BackgroundWorkerHandle **handle)
{
	BackgroundWorker w;
	BfWorkerArgs args;

	memset(&w, 0, sizeof(w));
	memset(&args, 0, sizeof(args));
	args.mode = mode;
	args.slot = slot;
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(w.bgw_library_name, "bloomfilter", BGW_MAXLEN);
	strlcpy(w.bgw_function_name, "bf_worker_main", BGW_MAXLEN);
	if (mode == BF_WORKER_LOAD)
	{
		snprintf(w.bgw_name, BGW_MAXLEN, "bloomfilter load of database %u", dbid);
		strlcpy(w.bgw_type, "bloomfilter load", BGW_MAXLEN);
	}
	else
	{
		snprintf(w.bgw_name, BGW_MAXLEN, "bloomfilter build");
		strlcpy(w.bgw_type, "bloomfilter build", BGW_MAXLEN);
	}
	w.bgw_main_arg = ObjectIdGetDatum(dbid);
	memcpy(w.bgw_extra, &args, sizeof(args));
	w.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&w, handle);
}

static void
launcher_exit(int code, Datum arg)
{
	bf_shared->launcher_latch = NULL;
	bf_shared->launcher_pid = 0;
}

/* The databases that exist, or NIL if they cannot be read now. */
static List *
existing_databases(bool loadable_only)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	List	   *result = NIL;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (!loadable_only ||
			(db->datallowconn && !db->datistemplate && db->datconnlimit != -2))
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			result = lappend_oid(result, db->oid);
			MemoryContextSwitchTo(old);
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	return result;
}

/* Free the slots of databases that were dropped. */
static void
sweep_dropped_databases(void)
{
	List	   *dbs = existing_databases(false);

	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSlot	   *s = &bf_shared->slots[i];
		Oid			dbid;
		bool		in_use;

		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		in_use = s->in_use;
		dbid = s->dbid;
		LWLockRelease(bf_slot_lock(i));
		if (in_use && !list_member_oid(dbs, dbid))
			bf_filters_forget_db(dbid, InvalidOid);
	}
	list_free(dbs);
}

typedef struct LoadAttempt
{
	Oid			dbid;
	TimestampTz at;
} LoadAttempt;

static LoadAttempt load_attempts[BF_MAX_LOAD_REQUESTS * 2];
static int	nload_attempts = 0;
static bool load_start_failed = false;	/* warned about it already */

/* Start a load worker per queued database (at most one per interval). */
static bool
serve_loads(TimestampTz now)
{
	Oid			queue[BF_MAX_LOAD_REQUESTS];
	int			nqueue;
	int			kept = 0;

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	nqueue = bf_shared->nload;
	memcpy(queue, bf_shared->load_dbid, sizeof(Oid) * nqueue);
	bf_shared->nload = 0;
	LWLockRelease(bf_registry_lock());
	for (int q = 0; q < nqueue; q++)
	{
		BackgroundWorkerHandle *h;
		int			a;

		for (a = 0; a < nload_attempts; a++)
			if (load_attempts[a].dbid == queue[q])
				break;
		if (a < nload_attempts &&
			!TimestampDifferenceExceeds(load_attempts[a].at, now, LOAD_INTERVAL_MS))
		{
			queue[kept++] = queue[q];	/* later */
			continue;
		}
		if (!start_worker(queue[q], BF_WORKER_LOAD, -1, &h))
		{
			if (!load_start_failed)
				ereport(WARNING,
						(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
						 errmsg("could not start a worker to load the shared bloom filters of database %u",
								queue[q]),
						 errdetail("No background worker slot is free; the filters answer \"maybe\" until one is."),
						 errhint("Raise max_worker_processes (needs a restart).")));
			load_start_failed = true;
			queue[kept++] = queue[q];	/* later */
			continue;
		}
		load_start_failed = false;
		if (a == nload_attempts)
		{
			if (nload_attempts < lengthof(load_attempts))
				nload_attempts++;
			else
				a = 0;			/* forget the oldest-ish attempt */
		}
		load_attempts[a].dbid = queue[q];
		load_attempts[a].at = now;
	}
	for (int q = 0; q < kept; q++)
		bf_request_load(queue[q]);
	return kept > 0;
}

/* The launcher's handle on the build worker it started for each slot. */
static BackgroundWorkerHandle **build_handles;

/* A build worker that stopped without taking its slot: a failed attempt. */
static void
reap_build_worker(int i)
{
	BfSlot	   *s = &bf_shared->slots[i];
	pid_t		pid;

	if (build_handles[i] == NULL ||
		GetBackgroundWorkerPid(build_handles[i], &pid) != BGWH_STOPPED)
		return;
	pfree(build_handles[i]);
	build_handles[i] = NULL;
	LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
	if (s->launching)
	{
		s->launching = false;
		bf_slot_record_failure(s, "the build worker could not start");
	}
	LWLockRelease(bf_slot_lock(i));
}

/*
 * Start the builds that are due; returns how long until the next one is
 * (milliseconds, at most IDLE_WAIT_MS).
 */
static long
serve_builds(TimestampTz now)
{
	long		wait_ms = IDLE_WAIT_MS;

	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSlot	   *s = &bf_shared->slots[i];
		bool		due = false;
		Oid			dbid = InvalidOid;

		reap_build_worker(i);
		LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
		/* a next without a builder: a growth by a layer, soon swapped */
		if (s->in_use && s->request_seq != s->done_seq && s->builder_pid == 0 &&
			!s->launching && !s->suspended && !s->has_next &&
			build_handles[i] == NULL)
		{
			if (s->next_try <= now)
			{
				due = true;
				s->launching = true;
				dbid = s->dbid;
			}
			else
			{
				long		secs;
				int			usecs;

				TimestampDifference(now, s->next_try, &secs, &usecs);
				wait_ms = Min(wait_ms, secs * 1000 + usecs / 1000 + 1);
			}
		}
		LWLockRelease(bf_slot_lock(i));
		if (due && !start_worker(dbid, BF_WORKER_BUILD, i, &build_handles[i]))
		{
			/*
			 * No free worker slot: not the build's failure (a guard on a
			 * partitioned table asks for a build per partition at once).
			 * It waits, as the builds after it, for a worker to end.
			 */
			LWLockAcquire(bf_slot_lock(i), LW_EXCLUSIVE);
			s->launching = false;
			LWLockRelease(bf_slot_lock(i));
			build_handles[i] = NULL;
			wait_ms = Min(wait_ms, 200);
			break;
		}
	}
	return wait_ms;
}

void
bf_launcher_main(Datum arg)
{
	TimestampTz last_sweep = 0;
	List	   *dbs;
	ListCell   *lc;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	bf_shared->launcher_pid = MyProcPid;
	bf_shared->launcher_latch = MyLatch;
	on_shmem_exit(launcher_exit, (Datum) 0);
	build_handles = MemoryContextAllocZero(TopMemoryContext,
										   sizeof(BackgroundWorkerHandle *) * bf_shared->nslots);

	/* a slot a previous launcher was starting a worker for: start again */
	for (int i = 0; i < bf_shared->nslots; i++)
		bf_shared->slots[i].launching = false;

	/* at start-up (and after a crash) every database is loaded */
	dbs = existing_databases(true);
	foreach(lc, dbs)
		bf_request_load(lfirst_oid(lc));
	list_free(dbs);

	for (;;)
	{
		TimestampTz now;
		long		wait_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		now = GetCurrentTimestamp();
		if (TimestampDifferenceExceeds(last_sweep, now, SWEEP_INTERVAL_MS))
		{
			sweep_dropped_databases();
			last_sweep = now;
		}
		wait_ms = serve_builds(now);
		if (serve_loads(now))
			wait_ms = Min(wait_ms, 1000);
		/* removals wait for their transactions and the xmin horizon */
		if (bf_removals_apply() > 0)
			wait_ms = Min(wait_ms, REMOVALS_INTERVAL_MS);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
