/*
 * bf_writers.c
 *		The statements of this backend that may have written rows whose guard
 *		triggers have not fired yet.
 *
 * A guard trigger is an AFTER ROW trigger: it adds a row's key when the
 * writing statement ends (ExecutorFinish), not when the row is written.
 * Meanwhile a query run by that statement — a function called per row, a
 * BEFORE trigger of a later row, RETURNING, an AFTER trigger that fires
 * before the guard trigger — already sees the row (SPI takes a new command
 * id).  Its gate must then answer "maybe".  This file keeps, per backend,
 * the open executor runs of writing statements (INSERT, UPDATE, MERGE, and
 * any statement with a data-modifying WITH) and COPY FROM, and tells a gate
 * whether one of them may have such rows:
 *  - a COPY FROM in progress, a writer with RETURNING or a data-modifying
 *    WITH: yes (they may show rows before counting them);
 *  - another writer: once it has processed a row (es_processed > 0); before
 *    its first row (a BEFORE trigger of a one-row INSERT) it has none;
 *  - a logical replication apply worker (it writes without the executor's
 *    entry points): always.
 * Entries are removed at ExecutorEnd, and on (sub)transaction abort.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "replication/logicalworker.h"
#include "tcop/utility.h"
#include "utils/memutils.h"

#include "bf_shared.h"

typedef struct OpenWriter
{
	QueryDesc  *qd;
	int			nestlevel;		/* the subtransaction it started in */
} OpenWriter;

static List *open_writers = NIL;	/* of OpenWriter *, TopMemoryContext */
static int	copy_from_depth = 0;

static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorEnd_hook_type prev_executor_end = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;

static bool
is_writer(QueryDesc *qd)
{
	return qd->operation == CMD_INSERT || qd->operation == CMD_UPDATE ||
		qd->operation == CMD_MERGE ||
		(qd->plannedstmt != NULL && qd->plannedstmt->hasModifyingCTE);
}

static void
bf_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	if (is_writer(queryDesc) && !(eflags & EXEC_FLAG_EXPLAIN_ONLY))
	{
		OpenWriter *w = MemoryContextAlloc(TopMemoryContext, sizeof(OpenWriter));
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		w->qd = queryDesc;
		w->nestlevel = GetCurrentTransactionNestLevel();
		open_writers = lappend(open_writers, w);
		MemoryContextSwitchTo(old);
	}
}

static void
forget_writer(QueryDesc *queryDesc)
{
	ListCell   *lc;

	foreach(lc, open_writers)
	{
		OpenWriter *w = lfirst(lc);

		if (w->qd == queryDesc)
		{
			open_writers = foreach_delete_current(open_writers, lc);
			pfree(w);
			return;
		}
	}
}

static void
bf_executor_end(QueryDesc *queryDesc)
{
	forget_writer(queryDesc);
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

static void
bf_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	bool		copy_from = IsA(pstmt->utilityStmt, CopyStmt) &&
		((CopyStmt *) pstmt->utilityStmt)->is_from;

	bf_ddl_check_attach(pstmt->utilityStmt);
	if (copy_from)
		copy_from_depth++;
	PG_TRY();
	{
		if (prev_process_utility)
			prev_process_utility(pstmt, queryString, readOnlyTree, context,
								 params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		if (copy_from)
			copy_from_depth--;
	}
	PG_END_TRY();
}

/* An aborted (sub)transaction's executors never reach ExecutorEnd. */
static void
forget_from_level(int nestlevel)
{
	ListCell   *lc;

	foreach(lc, open_writers)
	{
		OpenWriter *w = lfirst(lc);

		if (w->nestlevel >= nestlevel)
		{
			open_writers = foreach_delete_current(open_writers, lc);
			pfree(w);
		}
	}
}

static void
bf_writers_xact(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
	{
		forget_from_level(0);
		copy_from_depth = 0;
	}
}

static void
bf_writers_subxact(SubXactEvent event, SubTransactionId mySubid,
				   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		forget_from_level(GetCurrentTransactionNestLevel());
}

/*
 * May a statement of this backend have written rows that a query can see
 * before their guard triggers have added their keys?
 */
bool
bf_unfired_writes(void)
{
	ListCell   *lc;

	if (copy_from_depth > 0 || IsLogicalWorker())
		return true;
	foreach(lc, open_writers)
	{
		OpenWriter *w = lfirst(lc);
		QueryDesc  *qd = w->qd;

		if (qd->plannedstmt->hasReturning || qd->plannedstmt->hasModifyingCTE ||
			qd->estate == NULL || qd->estate->es_processed > 0)
			return true;
	}
	return false;
}

/*
 * Is a writing statement of this backend open at all (even before its first
 * row)?  A gate checked at ExecutorStart instead of at its first row
 * (bf_gate_scan.c) defers its check while one is: the writer may process
 * rows between the two.
 */
bool
bf_open_writers(void)
{
	return copy_from_depth > 0 || IsLogicalWorker() || open_writers != NIL;
}

/* From bf_planner_init. */
void
bf_writers_init(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = bf_executor_start;
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = bf_executor_end;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = bf_process_utility;
	RegisterXactCallback(bf_writers_xact, NULL);
	RegisterSubXactCallback(bf_writers_subxact, NULL);
}
