/*
 * bfp_hook.c
 *		The planner hooks of the gates on guard indexes, and their GUC.
 *
 * set_rel_pathlist_hook is where a custom path provider adds its paths
 * (allpaths.c): after the core has made a base relation's paths and before
 * the cheapest are chosen and Gather paths are made.  There
 * bfp_batch_paths wraps a relation's sequential scans that check a large
 * filter in BloomBatch paths, and then bfp_gate_paths wraps the relation's
 * paths (those among them) in gates.
 *
 * planner_hook is used to know what the planner plans: a cursor's plan gets
 * no BloomBatch.  DECLARE and PL/pgSQL plan cursors with CURSOR_OPT_FAST_PLAN
 * or a scroll option; their rows are fetched a few at a time, which leaves
 * nothing to batch, and a SCROLL cursor would read them through a Material
 * node (BloomBatch does not scan backward), where WHERE CURRENT OF cannot
 * find them.  Gates apply to cursors' plans: they scan backward when their
 * child does, and give WHERE CURRENT OF their rows' positions
 * (bfp_position.c).  Planning that did not pass through the hook (the
 * library was loaded by the planner itself, when it opened a guard index)
 * gets neither: that one plan is marked transient, so that a cached copy is
 * made again (with gates) in the next transaction.
 *
 * Neither hook needs shared_preload_libraries: the library is loaded when a
 * guard index is first opened (its handler is a function of the library),
 * or at session start by session_preload_libraries.
 */
#include "postgres.h"

#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "utils/guc.h"

#include "plan/bf_plan.h"

bool		bfp_planner_guards = true;
bool		bfp_batch_checks = true;

static planner_hook_type prev_planner_hook = NULL;
static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/* planner() calls under way, and whether the innermost plans a cursor */
static int	planning_depth = 0;
static bool planning_cursor = false;

static bool
is_cursor_plan(int cursorOptions)
{
	return (cursorOptions & (CURSOR_OPT_BINARY | CURSOR_OPT_SCROLL |
							 CURSOR_OPT_NO_SCROLL | CURSOR_OPT_INSENSITIVE |
							 CURSOR_OPT_HOLD | CURSOR_OPT_FAST_PLAN)) != 0;
}

static PlannedStmt *
bfp_planner(Query *parse, const char *query_string, int cursorOptions,
			ParamListInfo boundParams)
{
	bool		save_cursor = planning_cursor;
	PlannedStmt *stmt;

	planning_cursor = is_cursor_plan(cursorOptions);
	planning_depth++;
	PG_TRY();
	{
		if (prev_planner_hook)
			stmt = prev_planner_hook(parse, query_string, cursorOptions,
									 boundParams);
		else
			stmt = standard_planner(parse, query_string, cursorOptions,
									boundParams);
	}
	PG_FINALLY();
	{
		planning_depth--;
		planning_cursor = save_cursor;
	}
	PG_END_TRY();
	return stmt;
}

static void
bfp_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					 RangeTblEntry *rte)
{
	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	if (!bfp_planner_guards && !bfp_batch_checks)
		return;

	/*
	 * Loaded by this very planning (planner_hook did not see it start): no
	 * gate, and a plan that is made again in the next transaction (as for
	 * an index too new for the plan's snapshots), so that a cached plan
	 * gets its gates.
	 */
	if (planning_depth == 0)
	{
		if (bfp_planner_guards && bfp_rel_has_guard(rel))
			root->glob->transientPlan = true;
		return;
	}
	if (!planning_cursor)
		bfp_batch_paths(root, rel, rti, rte);
	if (bfp_planner_guards)
		bfp_gate_paths(root, rel, rti, rte);
}

void
bfp_init(void)
{
	DefineCustomBoolVariable("bloomfilter.planner_guards",
							 "Lets the planner check a guard before scanning its table.",
							 "A scan whose condition compares a guarded column with a value known before the scan is skipped when the guard answers \"no\".",
							 &bfp_planner_guards,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("bloomfilter.batch_checks",
							 "Checks of a large filter in a sequential scan prefetch a batch of rows at a time.",
							 "Applies to plans made afterwards; the answers are the same either way.",
							 &bfp_batch_checks,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	bfp_scan_init();
	bfp_batch_scan_init();
	prev_planner_hook = planner_hook;
	planner_hook = bfp_planner;
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = bfp_set_rel_pathlist;
}
