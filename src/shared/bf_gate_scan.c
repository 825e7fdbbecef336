/*
 * bf_gate_scan.c
 *		The BloomGate custom scan: a planner gate checked when the executor
 *		starts, so that a scan the filter rules out is never initialized.
 *
 * A gated scan is planned as a Result whose One-Time Filter calls
 * bloom_shared_gate (bf_planner.c).  That Result checks the gate on its
 * first row, after ExecInitNode has opened and locked the scan's table and
 * indexes: over 64 partitions, a lookup initializes 64 scans even when every
 * filter answers "no".  A planner_hook pass, run after standard_planner
 * (after setrefs), replaces such a Result by a CustomScan "BloomGate" that
 * holds the scan in custom_plans and the gate in custom_exprs, where
 *  - the One-Time Filter is nothing but gate calls, whose arguments are
 *    constants and external parameters (known at ExecutorStart, and raising
 *    no error there that the scan would not raise anyway);
 *  - the child is a plain table scan, not parallel-aware;
 *  - the Result has no other qual.
 * Elsewhere (a PARAM_EXEC parameter, a join's gate, a parallel-aware scan)
 * the Result stays.
 *
 * BeginCustomScan checks the gate once; on "no" the child is never
 * initialized and the node returns no rows; on "maybe" the child is
 * initialized and its rows are passed through (its slot is returned as is,
 * or projected through the Result's targetlist).  The check is deferred to
 * the first row, as the Result does, while this backend has an open writing
 * statement or in an EvalPlanQual recheck (see bf_writers.c); EXPLAIN
 * without ANALYZE initializes the child and checks nothing.
 */
#include "postgres.h"

#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/ruleutils.h"

#include "bf_plan.h"
#include "bf_shared.h"

typedef enum GateAnswer
{
	GATE_UNCHECKED,				/* not checked yet (deferred, or EXPLAIN) */
	GATE_NO,					/* the child was never initialized */
	GATE_MAYBE					/* rows come from the child */
} GateAnswer;

typedef struct GateScanState
{
	CustomScanState css;
	ExprState  *gate;			/* the One-Time Filter */
	PlanState  *child;			/* NULL while not initialized */
	bool		deferred;		/* check on the first row of each (re)scan */
	GateAnswer	answer;
} GateScanState;

static planner_hook_type prev_planner_hook = NULL;

static Node *gate_scan_create_state(CustomScan *cscan);
static void gate_scan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gate_scan_exec(CustomScanState *node);
static void gate_scan_end(CustomScanState *node);
static void gate_scan_rescan(CustomScanState *node);
static void gate_scan_mark(CustomScanState *node);
static void gate_scan_restore(CustomScanState *node);
static void gate_scan_explain(CustomScanState *node, List *ancestors,
							  ExplainState *es);

static const CustomScanMethods gate_scan_methods = {
	.CustomName = "BloomGate",
	.CreateCustomScanState = gate_scan_create_state,
};

static const CustomExecMethods gate_exec_methods = {
	.CustomName = "BloomGate",
	.BeginCustomScan = gate_scan_begin,
	.ExecCustomScan = gate_scan_exec,
	.EndCustomScan = gate_scan_end,
	.ReScanCustomScan = gate_scan_rescan,
	.MarkPosCustomScan = gate_scan_mark,
	.RestrPosCustomScan = gate_scan_restore,
	.ExplainCustomScan = gate_scan_explain,
};

/* ---------------------------------------------------------------------
 * The planner pass
 * ---------------------------------------------------------------------
 */

/*
 * A value known at ExecutorStart whose evaluation raises no error that the
 * scan would not raise anyway (it is evaluated there, even when the scan
 * never runs): constants, external parameters, relabelings and
 * one-dimensional ARRAY[...] of them.  A multidimensional ARRAY[...] of
 * array parameters fails when their dimensions differ.
 */
static bool
known_at_start(Node *node)
{
	if (node == NULL || IsA(node, Const))
		return true;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind == PARAM_EXTERN;
	if (IsA(node, RelabelType))
		return known_at_start((Node *) ((RelabelType *) node)->arg);
	if (IsA(node, ArrayExpr))
	{
		ListCell   *lc;

		if (((ArrayExpr *) node)->multidims)
			return false;
		foreach(lc, ((ArrayExpr *) node)->elements)
			if (!known_at_start(lfirst(lc)))
				return false;
		return true;
	}
	return false;
}

/* Is the One-Time Filter only gate calls on values known at start? */
static bool
only_gates(List *quals)
{
	ListCell   *lc;

	if (quals == NIL)
		return false;
	foreach(lc, quals)
	{
		FuncExpr   *fn = lfirst(lc);
		ListCell   *arg;

		if (!IsA(fn, FuncExpr) || !bf_planner_is_gate(fn->funcid))
			return false;
		foreach(arg, fn->args)
			if (!known_at_start(lfirst(arg)))
				return false;
	}
	return true;
}

/* A scan of a table whose targetlist can be read without its own node. */
static bool
is_table_scan(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
			return true;
		default:
			return false;
	}
}

static bool
has_parallel_aware(Plan *plan)
{
	if (plan == NULL)
		return false;
	return plan->parallel_aware ||
		has_parallel_aware(plan->lefttree) ||
		has_parallel_aware(plan->righttree);
}

typedef struct VarMap
{
	int			from;			/* the special varno to replace (0: none) */
	List	   *tlist;			/* by this tlist's expressions */
	int			to;				/* or, without a tlist, by this varno */
	bool		failed;			/* met a Var of another varno */
	Index		allowed;		/* a plain varno allowed to stay */
} VarMap;

static Node *
map_vars(Node *node, VarMap *map)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		if (map->from != 0 && var->varno == map->from)
		{
			TargetEntry *tle;

			if (map->tlist == NIL)
			{
				var = copyObject(var);
				var->varno = map->to;
				return (Node *) var;
			}
			tle = get_tle_by_resno(map->tlist, var->varattno);
			if (tle == NULL)
			{
				map->failed = true;
				return node;
			}
			return copyObject((Node *) tle->expr);
		}
		if (var->varno != map->allowed || IS_SPECIAL_VARNO(var->varno))
			map->failed = true;
		return copyObject(node);
	}
	return expression_tree_mutator(node, map_vars, (void *) map);
}

/*
 * The scan tuple of the gate node is the child's output: its targetlist
 * with IndexOnlyScan's INDEX_VARs read through the index tlist, so that
 * EXPLAIN can name every column through custom_scan_tlist.
 */
static List *
child_scan_tlist(Plan *child, bool *failed)
{
	VarMap		map = {0};
	List	   *tlist;

	if (IsA(child, IndexOnlyScan))
	{
		map.from = INDEX_VAR;
		map.tlist = ((IndexOnlyScan *) child)->indextlist;
	}
	map.allowed = ((Scan *) child)->scanrelid;
	tlist = (List *) map_vars((Node *) child->targetlist, &map);
	*failed = map.failed;
	return tlist;
}

/* The Result's targetlist, reading the scan tuple (INDEX_VAR). */
static List *
gate_tlist(Result *result, bool *failed)
{
	VarMap		map = {0};
	List	   *tlist;

	map.from = OUTER_VAR;
	map.to = INDEX_VAR;
	map.allowed = 0;			/* only OUTER_VAR */
	tlist = (List *) map_vars((Node *) result->plan.targetlist, &map);
	*failed = map.failed;
	return tlist;
}

/*
 * The BloomGate for a gating Result, or NULL; narrowed: index conditions
 * of its child were narrowed (EXPLAIN says so).
 */
static Plan *
make_gate_scan(Result *result, bool narrowed, bool parallel)
{
	Plan	   *child = result->plan.lefttree;
	CustomScan *cscan;
	List	   *scan_tlist;
	List	   *tlist;
	bool		failed;

	if (result->plan.righttree != NULL || result->plan.qual != NIL ||
		child == NULL || !is_table_scan(child) || has_parallel_aware(child) ||
		!only_gates((List *) result->resconstantqual))
		return NULL;
	scan_tlist = child_scan_tlist(child, &failed);
	if (failed)
		return NULL;
	tlist = gate_tlist(result, &failed);
	if (failed)
		return NULL;

	cscan = makeNode(CustomScan);
	/* cost, width, node id, initPlans and params as the Result's */
	memcpy(&cscan->scan.plan, &result->plan, sizeof(Plan));
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.lefttree = NULL;
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_MARK_RESTORE;
	/* the Result scanned backward iff its child did */
	if (ExecSupportsBackwardScan(child))
		cscan->flags |= CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
	cscan->custom_plans = list_make1(child);
	cscan->custom_exprs = (List *) result->resconstantqual;
	cscan->custom_private = list_make2(makeInteger(narrowed ? 1 : 0),
									   makeInteger(parallel ? 1 : 0));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = bms_make_singleton(((Scan *) child)->scanrelid);
	cscan->methods = &gate_scan_methods;
	return (Plan *) cscan;
}

/*
 * The gate call of a BloomGate whose One-Time Filter is one
 * bloom_shared_gate(definition_id, partition, key) or
 * bloom_shared_gate_any(definition_id, partition, keys) with a constant
 * definition and partition, else NULL (BloomAppend's children).
 */
FuncExpr *
bf_gate_scan_partition_gate(Plan *plan)
{
	CustomScan *cscan = (CustomScan *) plan;
	FuncExpr   *fn;
	Const	   *defid;
	Const	   *partition;
	bool		any;

	if (!IsA(plan, CustomScan) || cscan->methods != &gate_scan_methods ||
		list_length(cscan->custom_exprs) != 1)
		return NULL;
	fn = linitial(cscan->custom_exprs);
	if (!IsA(fn, FuncExpr) || !bf_planner_is_partition_gate(fn->funcid, &any) ||
		list_length(fn->args) != 3)
		return NULL;
	defid = linitial(fn->args);
	partition = lsecond(fn->args);
	if (!IsA(defid, Const) || defid->constisnull ||
		!IsA(partition, Const) || partition->constisnull)
		return NULL;
	return fn;
}

/*
 * The output of a BloomGate or a table scan as expressions over the scanned
 * table's columns (what EXPLAIN can name), *scanrelid that table's range
 * table index; *failed for other plans.
 */
List *
bf_gate_scan_output(Plan *plan, Index *scanrelid, bool *failed)
{
	CustomScan *cscan = (CustomScan *) plan;
	VarMap		map = {0};
	List	   *tlist;

	if (is_table_scan(plan))
	{
		*scanrelid = ((Scan *) plan)->scanrelid;
		return child_scan_tlist(plan, failed);
	}
	if (!IsA(plan, CustomScan) || cscan->methods != &gate_scan_methods)
	{
		*failed = true;
		return NIL;
	}
	*scanrelid = ((Scan *) linitial(cscan->custom_plans))->scanrelid;
	map.from = INDEX_VAR;
	map.tlist = cscan->custom_scan_tlist;
	map.allowed = *scanrelid;
	tlist = (List *) map_vars((Node *) plan->targetlist, &map);
	*failed = map.failed;
	return tlist;
}

static Plan *replace_gates(Plan *plan, List *rtable, bool parallel);

static void
replace_gates_in(List *plans, List *rtable, bool parallel)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = replace_gates(lfirst(lc), rtable, parallel);
}

/*
 * The plan tree with the index conditions under gates narrowed
 * (bf_gate_narrow.c) and every replaceable gating Result replaced.
 */
static Plan *
replace_gates(Plan *plan, List *rtable, bool parallel)
{
	Plan	   *gate_scan;
	bool		narrowed;

	if (plan == NULL)
		return NULL;
	/* below a Gather, parallel workers may run the plan too */
	if (IsA(plan, Gather) || IsA(plan, GatherMerge))
		parallel = true;
	plan->lefttree = replace_gates(plan->lefttree, rtable, parallel);
	plan->righttree = replace_gates(plan->righttree, rtable, parallel);
	switch (nodeTag(plan))
	{
		case T_Append:
			replace_gates_in(((Append *) plan)->appendplans, rtable, parallel);
			return bf_gate_append((Append *) plan, parallel);
		case T_MergeAppend:
			replace_gates_in(((MergeAppend *) plan)->mergeplans, rtable, parallel);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				replace_gates(((SubqueryScan *) plan)->subplan, rtable, parallel);
			break;
		case T_CustomScan:
			replace_gates_in(((CustomScan *) plan)->custom_plans, rtable, parallel);
			break;
		case T_Result:
			narrowed = ((Result *) plan)->resconstantqual != NULL &&
				bf_gate_narrow((List *) ((Result *) plan)->resconstantqual,
							   plan->lefttree, rtable);
			gate_scan = make_gate_scan((Result *) plan, narrowed, parallel);
			if (gate_scan != NULL)
				return gate_scan;
			break;
		default:
			break;
	}
	return plan;
}

/*
 * Is this the plan of a cursor?  WHERE CURRENT OF finds a cursor's row in
 * the scan of the table, looking through Results and Appends
 * (execCurrent.c) but not into custom scans without a relation of their
 * own: a cursor's plan keeps its gating Results (checked on the first
 * row) and gets neither BloomGate, BloomAppend nor BloomBatch.  The
 * cursors of DECLARE and PL/pgSQL are planned with CURSOR_OPT_FAST_PLAN.
 */
static bool
is_cursor_plan(int cursorOptions)
{
	return (cursorOptions & (CURSOR_OPT_BINARY | CURSOR_OPT_SCROLL |
							 CURSOR_OPT_NO_SCROLL | CURSOR_OPT_INSENSITIVE |
							 CURSOR_OPT_HOLD | CURSOR_OPT_FAST_PLAN)) != 0;
}

static PlannedStmt *
bf_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	PlannedStmt *stmt;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	if (is_cursor_plan(cursorOptions))
		return stmt;
	if (bfp_planner_guards)
	{
		stmt->planTree = replace_gates(stmt->planTree, stmt->rtable, false);
		/* a subplan may be run below a Gather, by workers */
		replace_gates_in(stmt->subplans, stmt->rtable, stmt->parallelModeNeeded);
	}
	return stmt;
}

/* ---------------------------------------------------------------------
 * The executor node
 * ---------------------------------------------------------------------
 */

static Node *
gate_scan_create_state(CustomScan *cscan)
{
	GateScanState *g = (GateScanState *) newNode(sizeof(GateScanState),
												  T_CustomScanState);

	g->css.methods = &gate_exec_methods;
	return (Node *) g;
}

static bool
gate_says_maybe(GateScanState *g)
{
	ExprContext *econtext = g->css.ss.ps.ps_ExprContext;

	ResetExprContext(econtext);
	return ExecQual(g->gate, econtext);
}

/*
 * Initialize the child and read its rows as the scan tuple: the projection
 * built by ExecInitCustomScan assumed a virtual scan slot.
 */
static void
init_child(GateScanState *g, EState *estate, int eflags)
{
	CustomScan *cscan = (CustomScan *) g->css.ss.ps.plan;
	PlanState  *ps = &g->css.ss.ps;

	g->child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	g->css.custom_ps = list_make1(g->child);
	ps->scanops = ExecGetResultSlotOps(g->child, &ps->scanopsfixed);
	ps->scanopsset = true;
	ExecConditionalAssignProjectionInfo(ps,
										g->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										INDEX_VAR);
}

/*
 * Is a gate checked on the first row of each (re)scan rather than when the
 * executor starts?  EXPLAIN without ANALYZE checks nothing; an EvalPlanQual
 * recheck and a backend with an open writing statement (bf_writers.c) must
 * see rows written since the statement started.  And a gate that parallel
 * workers may run too (parallel: below a Gather) in an instrumented plan
 * (EXPLAIN ANALYZE, auto_explain): a worker's gate answers "maybe" and
 * initializes its child, whose instrumentation the worker reports into the
 * slots the leader made for the nodes it initialized, so the leader must
 * initialize the same nodes.
 */
bool
bf_gate_scan_defers(EState *estate, int eflags, bool parallel)
{
	return (eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 ||
		estate->es_epq_active != NULL || bf_open_writers() ||
		(parallel && estate->es_instrument != 0);
}

static void
gate_scan_begin(CustomScanState *node, EState *estate, int eflags)
{
	GateScanState *g = (GateScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	g->gate = ExecInitQual(cscan->custom_exprs, &node->ss.ps);
	g->answer = GATE_UNCHECKED;
	g->deferred = bf_gate_scan_defers(estate, eflags,
									  intVal(lsecond(cscan->custom_private)) != 0);
	if (!g->deferred)
		g->answer = gate_says_maybe(g) ? GATE_MAYBE : GATE_NO;
	if (g->answer != GATE_NO)
		init_child(g, estate, eflags);
}

static TupleTableSlot *
gate_scan_exec(CustomScanState *node)
{
	GateScanState *g = (GateScanState *) node;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;
	TupleTableSlot *slot;

	if (g->answer == GATE_UNCHECKED)
		g->answer = gate_says_maybe(g) ? GATE_MAYBE : GATE_NO;
	if (g->answer == GATE_NO)
		return NULL;
	slot = ExecProcNode(g->child);
	if (TupIsNull(slot) || proj == NULL)
		return slot;
	ResetExprContext(proj->pi_exprContext);
	proj->pi_exprContext->ecxt_scantuple = slot;
	return ExecProject(proj);
}

static void
gate_scan_end(CustomScanState *node)
{
	GateScanState *g = (GateScanState *) node;

	if (g->child != NULL)
		ExecEndNode(g->child);
}

static void
gate_scan_rescan(CustomScanState *node)
{
	GateScanState *g = (GateScanState *) node;

	if (g->deferred)
		g->answer = GATE_UNCHECKED;
	if (g->child == NULL)
		return;
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(g->child, node->ss.ps.chgParam);
	if (g->child->chgParam == NULL)
		ExecReScan(g->child);
}

static void
gate_scan_mark(CustomScanState *node)
{
	GateScanState *g = (GateScanState *) node;

	if (g->child != NULL)
		ExecMarkPos(g->child);
}

static void
gate_scan_restore(CustomScanState *node)
{
	GateScanState *g = (GateScanState *) node;

	if (g->child != NULL)
		ExecRestrPos(g->child);
}

static void
gate_scan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GateScanState *g = (GateScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	char	   *gate;

	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan,
									   ancestors);
	gate = deparse_expression((Node *) make_ands_explicit(cscan->custom_exprs),
							  context, es->verbose, false);
	ExplainPropertyText("One-Time Filter", gate, es);
	if (intVal(linitial(cscan->custom_private)) != 0)
		ExplainPropertyText("Index Keys", "narrowed to the filter's \"maybe\" keys", es);
	if (es->analyze && g->answer == GATE_NO && !g->deferred)
		ExplainPropertyText("Scan", "not initialized", es);
}

/* From bf_planner_init, during shared_preload_libraries. */
void
bf_gate_scan_init(void)
{
	RegisterCustomScanMethods(&gate_scan_methods);
	bf_gate_append_init();
	prev_planner_hook = planner_hook;
	planner_hook = bf_planner;
}
