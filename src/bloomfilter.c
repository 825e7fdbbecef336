/*
 * bloomfilter.c
 *		Module magic and initialization of the bloomfilter extension.
 *
 * The folders, lowest first, each calling only those before it (checked by
 * test/layering.sh): core/ (PostgreSQL-free: the format, layouts, sizing,
 * scalable and counting filters, cuckoo filters, text forms), value/ (the
 * type: I/O, keys, values in memory, aggregates' states, expanded objects,
 * the cuckoofilter functions), cache/ (call sites and the stored-filter
 * cache, and the functions, operators and aggregates that read their
 * filters through them), index/ (the guard access method), plan/ (the
 * planner's gates and BloomBatch).  This file, above them all, starts them.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/guc.h"

#include "cache/bf_cache.h"
#include "index/bf_index.h"
#include "plan/bf_plan.h"
#include "value/bf_value.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static ProcessUtility_hook_type prev_process_utility = NULL;

/*
 * DISCARD ALL resets a session for its next user (connection poolers run
 * it): the stored filters it read go too.  PostgreSQL calls no callback
 * for it, so the utility hook watches for it.
 */
static void
bf_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
	if (IsA(stmt, DiscardStmt) && ((DiscardStmt *) stmt)->target == DISCARD_ALL)
		bf_cache_discard();
}

void
_PG_init(void)
{
	DefineCustomIntVariable("bloomfilter.agg_max_distinct",
							"Most distinct keys a bloom_agg without a capacity accepts per group.",
							"Such a build keeps 8 bytes per distinct key (up to 16 while it runs); past this many it fails with program_limit_exceeded.",
							&bf_agg_max_distinct,
							100000000, 1, 100000000,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	bf_cache_init();
	bfi_init();

	/*
	 * The planner hooks of the gates and BloomBatch last, so that their
	 * planner_hook is the outermost (it must see every planning, to know a
	 * cursor's).
	 */
	bfp_init();
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = bf_process_utility;

	/*
	 * Only now is every GUC of the library defined: reserving the prefix
	 * earlier would drop a setting of a later one (planner_guards in
	 * postgresql.conf, ALTER SYSTEM or -c) as a misspelled placeholder.
	 */
	MarkGUCPrefixReserved("bloomfilter");
}
