/*
 * bf_batch_scan.c
 *		BloomBatch: a sequential scan's check of a large filter, with the
 *		filter's lines of a batch of rows loaded before their checks.
 *
 * A check of a filter larger than the CPU's caches is one cache miss, and in
 * a scan nothing overlaps it: the next row's key is not known until the
 * check has answered.  So where one of a sequential scan's conditions is
 *     filter @> column    or    column <@ filter
 * with a filter known before the scan (a constant, a parameter, the result
 * of an InitPlan), the planner pass (bf_batch_plan, run by the planner hook
 * of src/plan/bfp_hook.c after standard_planner, not for a cursor's plan,
 * with or without shared_preload_libraries) puts a
 * BloomBatch node above the scan and gives it the scan's conditions, all of
 * them in their order, and its projection: the scan below only reads the
 * columns they need.  The node reads BATCH_ROWS rows from the scan, copies
 * them, prefetches the filter line each key's check will read
 * (bf_contains_prefetch: the filter's cached copy, hashes as the check
 * computes them), and then takes the rows one by one through the
 * conditions, the unchanged check among them, and the projection: the
 * answers are the checks' own, and the lines they read have arrived
 * meanwhile.
 *
 * Reading ahead runs no code of the query: the scan below has no condition
 * and no expression to evaluate, so a row the node never reaches (past a
 * LIMIT) costs a read and a copy, never a function call.  The prefetch
 * reads no stored value, evaluates the filter argument only once a check has
 * (an InitPlan's output is never computed for it), and raises no error: the
 * key's type is one the check accepts (planned only then).  For a filter
 * smaller than BATCH_MIN_FILTER_BYTES (in the caches anyway), NULL, empty or
 * not prefetchable, after scans too short to pay for the copies, for a
 * backward scan and in an EvalPlanQual recheck, rows pass through one at a
 * time without a copy; and for pauses while batches find nothing to
 * prefetch (IDLE_BATCHES).  A query that reads the whole row plans no node:
 * the scan would form it for every row read ahead.
 */
#include "postgres.h"

#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "bf_batch_scan.h"
#include "bf_catalog.h"
#include "bf_keys.h"

bool		bf_batch_checks = true;

/* Rows read ahead: their lines in flight at once, and a level 1 cache's. */
#define BATCH_ROWS				32

/* Smaller filters stay in the caches: rows pass through. */
#define BATCH_MIN_FILTER_BYTES	((Size) 2 * 1024 * 1024)

/* A scan (between rescans) of fewer rows makes the later ones pass through */
#define SHORT_SCAN_ROWS			(4 * BATCH_ROWS)

/*
 * A batch with nothing to prefetch (its keys NULL or stored out of line, or
 * the filter not seen yet: an InitPlan's output no check has needed, a
 * stored filter that the checks still read in slices, or never read whole,
 * as an empty one) copies its rows for nothing.  After IDLE_BATCHES of them
 * in a row, rows pass through for a pause, then batching tries again; each
 * pause is twice the last, from PAUSE_MIN_ROWS to PAUSE_MAX_ROWS rows, until
 * a batch prefetches.  So a scan that never prefetches copies 256 rows per
 * pause, and one whose keys come later loses at most a pause of prefetches.
 * A rescan starts over (its parameters may give another filter).
 */
#define IDLE_BATCHES			8
#define PAUSE_MIN_ROWS			1024
#define PAUSE_MAX_ROWS			65536

typedef struct BatchScanState
{
	CustomScanState css;
	ExprState  *filter;			/* the filter argument */
	int			filter_param;	/* its PARAM_EXEC number, or -1 */
	FunctionCallInfo fcinfo;	/* the check's call, for the prefetches */
	int			filter_argno;
	int			key_argno;
	bool		literal;		/* the key is a bloom_literal */
	AttrNumber	keyatt;			/* the key's attribute in the scan tuple */
	bool		batching;		/* false: rows pass through */
	bool		exhausted;		/* the scan returned its last row */
	bool		short_scans;	/* a scan read too few rows to batch */
	uint64		rows_read;		/* read since the last (re)scan */
	int			idle_batches;	/* in a row, with nothing to prefetch */
	uint64		pause_rows;		/* left to pass through before a batch tries
								 * again; 0: batching stopped for the scan */
	uint64		next_pause;
	uint64		rows_batched;	/* EXPLAIN ANALYZE: rows copied into batches */
	uint64		keys_prefetched;	/* and keys whose line was prefetched */
	int16		keylen;			/* the key's typlen */
	int			natts;
	int			nrows;			/* rows in the batch */
	int			next;			/* the next one to return */
	Datum	   *values;			/* BATCH_ROWS x natts */
	bool	   *isnull;
	MemoryContext batch_cxt;	/* the batch's by-reference values */
} BatchScanState;

static Node *batch_create_state(CustomScan *cscan);
static void batch_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *batch_exec(CustomScanState *node);
static void batch_end(CustomScanState *node);
static void batch_rescan(CustomScanState *node);
static void batch_explain(CustomScanState *node, List *ancestors,
						  ExplainState *es);

static const CustomScanMethods batch_scan_methods = {
	.CustomName = "BloomBatch",
	.CreateCustomScanState = batch_create_state,
};

static const CustomExecMethods batch_exec_methods = {
	.CustomName = "BloomBatch",
	.BeginCustomScan = batch_begin,
	.ExecCustomScan = batch_exec,
	.EndCustomScan = batch_end,
	.ReScanCustomScan = batch_rescan,
	.ExplainCustomScan = batch_explain,
};

void
bf_batch_scan_init(void)
{
	DefineCustomBoolVariable("bloomfilter.batch_checks",
							 "Checks of a large filter in a sequential scan prefetch a batch of rows at a time.",
							 "Applies to plans made afterwards, with the library preloaded; the answers are the same either way.",
							 &bf_batch_checks,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	RegisterCustomScanMethods(&batch_scan_methods);
}

/* ---------------------------------------------------------------------
 * The planner pass
 * ---------------------------------------------------------------------
 */

/* A filter argument known before the scan: a constant or a parameter. */
static bool
filter_known(Node *node)
{
	if (IsA(node, Const))
		return !((Const *) node)->constisnull;
	return IsA(node, Param) &&
		(((Param *) node)->paramkind == PARAM_EXTERN ||
		 ((Param *) node)->paramkind == PARAM_EXEC);
}

/* The column a check's key argument reads: a Var, possibly relabeled. */
static Var *
key_column(Node *arg, Index scanrelid)
{
	Var		   *var;

	if (IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	if (!IsA(arg, Var))
		return NULL;
	var = (Var *) arg;
	if (var->varno != scanrelid || var->varlevelsup != 0 || var->varattno <= 0)
		return NULL;
	return var;
}

/*
 * Is funcid one of this extension's checks of one key, bloom_contains or
 * bloom_contained (operators @> and <@)?  If so, the arguments holding the
 * filter and the key, and whether the key is a bloom_literal.
 */
static bool
check_function(Oid funcid, int *filter_argno, int *key_argno, bool *literal)
{
	BfCheckFn	fn = bf_check_fn(funcid);

	switch (fn)
	{
		case BF_CHECK_FN_CONTAINS:
		case BF_CHECK_FN_CONTAINS_LITERAL:
			*filter_argno = 0;
			*key_argno = 1;
			break;
		case BF_CHECK_FN_CONTAINED:
		case BF_CHECK_FN_CONTAINED_LITERAL:
			*filter_argno = 1;
			*key_argno = 0;
			break;
		default:
			return false;
	}
	*literal = fn == BF_CHECK_FN_CONTAINS_LITERAL ||
		fn == BF_CHECK_FN_CONTAINED_LITERAL;
	return true;
}

/* A call's function, arguments and input collation; false if not a call. */
static bool
call_parts(Node *expr, Oid *funcid, List **args, Oid *collation)
{
	if (IsA(expr, OpExpr))
	{
		*funcid = ((OpExpr *) expr)->opfuncid;
		*args = ((OpExpr *) expr)->args;
		*collation = ((OpExpr *) expr)->inputcollid;
		return true;
	}
	if (IsA(expr, FuncExpr))
	{
		*funcid = ((FuncExpr *) expr)->funcid;
		*args = ((FuncExpr *) expr)->args;
		*collation = ((FuncExpr *) expr)->inputcollid;
		return true;
	}
	return false;
}

/*
 * Is the condition a check of a known filter against a column of the scanned
 * table?  If so, the column, the positions of the filter and the key, and
 * whether the key is a bloom_literal.
 */
static bool
is_batch_check(Node *qual, Index scanrelid, Var **key, int *filter_argno,
			   int *key_argno, bool *literal)
{
	Oid			funcid;
	List	   *args;
	Oid			collation;

	if (!call_parts(qual, &funcid, &args, &collation) ||
		list_length(args) != 2 ||
		!check_function(funcid, filter_argno, key_argno, literal) ||
		!filter_known(list_nth(args, *filter_argno)))
		return false;
	/* a key the check refuses: its error is the check's to raise, or not */
	if (!bf_key_type_usable(exprType(list_nth(args, *key_argno)), collation))
		return false;
	*key = key_column(list_nth(args, *key_argno), scanrelid);
	return *key != NULL;
}

/* The resno of a Var in a targetlist of Vars, or 0. */
static AttrNumber
tlist_var_resno(List *tlist, Var *var)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *v = (Var *) tle->expr;

		if (IsA(v, Var) && v->varno == var->varno && v->varattno == var->varattno)
			return tle->resno;
	}
	return 0;
}

/* Is every entry of the targetlist a column of the scanned table? */
static bool
tlist_only_vars(List *tlist, Index scanrelid)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		Var		   *v = (Var *) ((TargetEntry *) lfirst(lc))->expr;

		if (!IsA(v, Var) || v->varno != scanrelid || v->varlevelsup != 0 ||
			v->varattno == InvalidAttrNumber)
			return false;
	}
	return true;
}

/*
 * Add the columns node reads to the child's targetlist (as resjunk entries),
 * those not there yet; false if it reads a Var of another relation, or the
 * whole row (the child would form it, its values stored out of line read,
 * for every row it reads ahead).
 */
static bool
add_columns(List **tlist, Node *node, Index scanrelid)
{
	List	   *vars = pull_var_clause(node, PVC_RECURSE_AGGREGATES |
									   PVC_RECURSE_WINDOWFUNCS |
									   PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *var = lfirst(lc);

		if (var->varno != scanrelid || var->varlevelsup != 0 ||
			var->varattno == InvalidAttrNumber)
			return false;
		if (tlist_var_resno(*tlist, var) == 0)
			*tlist = lappend(*tlist,
							 makeTargetEntry((Expr *) copyObject(var),
											 list_length(*tlist) + 1, NULL, true));
	}
	return true;
}

/* Var(scanrelid) -> Var(INDEX_VAR) at its place in the child's targetlist */
static Node *
read_from_child(Node *node, List *child_tlist)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) copyObject(node);

		var->varattno = tlist_var_resno(child_tlist, var);
		Assert(var->varattno > 0);
		var->varno = INDEX_VAR;
		return (Node *) var;
	}
	return expression_tree_mutator(node, read_from_child, (void *) child_tlist);
}

/*
 * A BloomBatch node for the scan, the scan (modified) its child; or the
 * scan unchanged.  The node takes the scan's conditions, all of them in
 * their order, and its projection: the scan below only reads the columns
 * they need, so that reading ahead runs no code of the query for rows the
 * node has not reached.
 */
static Plan *
make_batch_scan(SeqScan *seqscan, int *next_id)
{
	Plan	   *scan = (Plan *) seqscan;
	Index		scanrelid = seqscan->scan.scanrelid;
	Var		   *key = NULL;
	int			filter_argno = 0;
	int			key_argno = 0;
	bool		literal = false;
	Node	   *check = NULL;
	int			checkidx = 0;
	List	   *child_tlist;
	List	   *tlist = NIL;
	AttrNumber	keyresno;
	CustomScan *cscan;
	ListCell   *lc;

	foreach(lc, scan->qual)
	{
		if (is_batch_check(lfirst(lc), scanrelid, &key, &filter_argno,
						   &key_argno, &literal))
		{
			check = lfirst(lc);
			break;
		}
		checkidx++;
	}
	if (check == NULL)
		return scan;

	/*
	 * The child's output: the scan's own when it is only columns (a
	 * physical targetlist then spares the child a projection), else the
	 * columns its expressions read; then those the conditions read.
	 */
	if (tlist_only_vars(scan->targetlist, scanrelid))
		child_tlist = list_copy_deep(scan->targetlist);
	else
	{
		child_tlist = NIL;
		if (!add_columns(&child_tlist, (Node *) scan->targetlist, scanrelid))
			return scan;
	}
	if (!add_columns(&child_tlist, (Node *) scan->qual, scanrelid))
		return scan;
	keyresno = tlist_var_resno(child_tlist, key);
	Assert(keyresno > 0);

	/* the node's output and conditions, reading the child's output */
	foreach(lc, scan->targetlist)
	{
		TargetEntry *tle = flatCopyTargetEntry(lfirst(lc));

		tle->expr = (Expr *) read_from_child((Node *) tle->expr, child_tlist);
		tlist = lappend(tlist, tle);
	}

	cscan = makeNode(CustomScan);
	/* cost, width, parallel safety and parameters as the scan's */
	memcpy(&cscan->scan.plan, scan, sizeof(Plan));
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.plan_node_id = (*next_id)++;
	cscan->scan.plan.parallel_aware = false;
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = (List *) read_from_child((Node *) scan->qual,
													 child_tlist);
	cscan->scan.plan.lefttree = NULL;
	cscan->scan.plan.righttree = NULL;
	cscan->scan.plan.extParam = bms_copy(scan->extParam);
	cscan->scan.plan.allParam = bms_copy(scan->allParam);
	cscan->scan.scanrelid = 0;

	/*
	 * No backward scan (cursors' plans get no node): a portal that says
	 * neither SCROLL nor NO SCROLL, as PL/pgSQL's FOR loop over a query,
	 * then stays forward-only, and batched.
	 */
	cscan->flags = 0;
	cscan->custom_plans = list_make1(scan);
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_make5(makeInteger(checkidx),
									   makeInteger(filter_argno),
									   makeInteger(key_argno),
									   makeInteger(literal ? 1 : 0),
									   makeInteger(keyresno));
	cscan->custom_scan_tlist = child_tlist;
	cscan->custom_relids = bms_make_singleton(scanrelid);
	cscan->methods = &batch_scan_methods;

	/* the scan's InitPlans (its filter's, often) are the node's now */
	foreach(lc, scan->initPlan)
	{
		SubPlan    *initplan = lfirst(lc);
		ListCell   *p;

		foreach(p, initplan->setParam)
			if (bms_is_member(lfirst_int(p), scan->allParam))
				scan->extParam = bms_add_member(scan->extParam, lfirst_int(p));
	}
	scan->initPlan = NIL;
	scan->qual = NIL;
	scan->targetlist = list_copy_deep(child_tlist);
	return (Plan *) cscan;
}

static void
batch_plan_list(List *plans, int *next_id)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = bf_batch_plan(lfirst(lc), next_id);
}

Plan *
bf_batch_plan(Plan *plan, int *next_id)
{
	if (plan == NULL)
		return NULL;
	switch (nodeTag(plan))
	{
		case T_SeqScan:
			return make_batch_scan((SeqScan *) plan, next_id);
		case T_CustomScan:
			/* the gates' children are read by the gates: left as they are */
			return plan;
		case T_Append:
			batch_plan_list(((Append *) plan)->appendplans, next_id);
			break;
		case T_MergeAppend:
			batch_plan_list(((MergeAppend *) plan)->mergeplans, next_id);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				bf_batch_plan(((SubqueryScan *) plan)->subplan, next_id);
			break;
		default:
			break;
	}
	plan->lefttree = bf_batch_plan(plan->lefttree, next_id);
	plan->righttree = bf_batch_plan(plan->righttree, next_id);
	return plan;
}

static int
max_id_list(List *plans)
{
	int			id = -1;
	ListCell   *lc;

	foreach(lc, plans)
		id = Max(id, bf_batch_max_node_id(lfirst(lc)));
	return id;
}

int
bf_batch_max_node_id(Plan *plan)
{
	int			id;

	if (plan == NULL)
		return -1;
	id = plan->plan_node_id;
	id = Max(id, bf_batch_max_node_id(plan->lefttree));
	id = Max(id, bf_batch_max_node_id(plan->righttree));
	switch (nodeTag(plan))
	{
		case T_Append:
			id = Max(id, max_id_list(((Append *) plan)->appendplans));
			break;
		case T_MergeAppend:
			id = Max(id, max_id_list(((MergeAppend *) plan)->mergeplans));
			break;
		case T_SubqueryScan:
			id = Max(id, bf_batch_max_node_id(((SubqueryScan *) plan)->subplan));
			break;
		case T_CustomScan:
			id = Max(id, max_id_list(((CustomScan *) plan)->custom_plans));
			break;
		case T_BitmapAnd:
			id = Max(id, max_id_list(((BitmapAnd *) plan)->bitmapplans));
			break;
		case T_BitmapOr:
			id = Max(id, max_id_list(((BitmapOr *) plan)->bitmapplans));
			break;
		default:
			break;
	}
	return id;
}

/* ---------------------------------------------------------------------
 * The executor node
 * ---------------------------------------------------------------------
 */

static Node *
batch_create_state(CustomScan *cscan)
{
	BatchScanState *b = (BatchScanState *) newNode(sizeof(BatchScanState),
												   T_CustomScanState);

	b->css.methods = &batch_exec_methods;
	return (Node *) b;
}

static void
batch_begin(CustomScanState *node, EState *estate, int eflags)
{
	BatchScanState *b = (BatchScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *ps = &node->ss.ps;
	PlanState  *child;
	Node	   *check;
	FmgrInfo   *flinfo;
	Oid			funcid;
	List	   *args;
	Oid			collation;
	bool		fixed;

	check = list_nth(cscan->scan.plan.qual, intVal(linitial(cscan->custom_private)));
	b->filter_argno = intVal(lsecond(cscan->custom_private));
	b->key_argno = intVal(lthird(cscan->custom_private));
	b->literal = intVal(lfourth(cscan->custom_private)) != 0;
	b->keyatt = (AttrNumber) intVal(list_nth(cscan->custom_private, 4));

	child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(child);

	/*
	 * The scan tuple is the child's slot when rows pass through, a virtual
	 * one when they come from a batch: ExecInitCustomScan assumed a virtual
	 * slot only, so compile the conditions and the projection again.
	 */
	ps->scanops = ExecGetResultSlotOps(child, &fixed);
	ps->scanopsfixed = fixed && ps->scanops == &TTSOpsVirtual;
	ps->scanopsset = true;
	ps->subPlan = NIL;			/* those of the first compilation */
	ps->qual = ExecInitQual(cscan->scan.plan.qual, ps);
	ExecConditionalAssignProjectionInfo(ps,
										node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										INDEX_VAR);

	if (!call_parts(check, &funcid, &args, &collation))
		elog(ERROR, "BloomBatch condition %d is not a call",
			 intVal(linitial(cscan->custom_private)));
	b->filter = ExecInitExpr(list_nth(args, b->filter_argno), ps);
	b->filter_param = -1;
	if (IsA(list_nth(args, b->filter_argno), Param) &&
		((Param *) list_nth(args, b->filter_argno))->paramkind == PARAM_EXEC)
		b->filter_param = ((Param *) list_nth(args, b->filter_argno))->paramid;

	/* a call of its own (its call site), as the check's */
	flinfo = palloc0(sizeof(FmgrInfo));
	fmgr_info(funcid, flinfo);
	fmgr_info_set_expr(check, flinfo);
	b->fcinfo = palloc0(SizeForFunctionCallInfo(2));
	InitFunctionCallInfoData(*b->fcinfo, flinfo, 2, collation, NULL, NULL);

	/* the rows of a backward scan or a recheck pass through */
	b->batching = (eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_EXPLAIN_ONLY)) == 0 &&
		estate->es_epq_active == NULL;
	b->next_pause = PAUSE_MIN_ROWS;
	b->natts = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;
	Assert(b->keyatt >= 1 && b->keyatt <= b->natts);
	b->keylen = TupleDescAttr(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
							  b->keyatt - 1)->attlen;
	if (b->batching)
	{
		b->values = palloc(sizeof(Datum) * BATCH_ROWS * b->natts);
		b->isnull = palloc(sizeof(bool) * BATCH_ROWS * b->natts);
		b->batch_cxt = AllocSetContextCreate(estate->es_query_cxt,
											 "BloomBatch rows",
											 ALLOCSET_DEFAULT_SIZES);
	}
}

/* A batch's row in the scan slot, as a virtual tuple. */
static TupleTableSlot *
batch_row(BatchScanState *b, int i)
{
	TupleTableSlot *slot = b->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, b->values + i * b->natts, sizeof(Datum) * b->natts);
	memcpy(slot->tts_isnull, b->isnull + i * b->natts, sizeof(bool) * b->natts);
	return ExecStoreVirtualTuple(slot);
}

/*
 * Prefetch the filter's lines of the batch's keys; once the filter is seen,
 * stop batching if it is NULL, empty, small or cannot be prefetched, and
 * pause after IDLE_BATCHES batches that prefetched nothing.  Keys stored out
 * of line or compressed are not prefetched (that would read them twice),
 * and a batch without a key asks nothing (a check is never called for a
 * NULL key, so its key type is not resolved for one either).
 */
static void
prefetch_batch(BatchScanState *b)
{
	ExprContext *econtext = b->css.ss.ps.ps_ExprContext;
	FunctionCallInfo fcinfo = b->fcinfo;
	MemoryContext oldcxt;
	Datum		keys[BATCH_ROWS];
	bool		skip[BATCH_ROWS];
	int			nkeys = 0;
	BfPrefetch	done;
	Size		bytes = 0;
	bool		isnull;

	for (int i = 0; i < b->nrows; i++)
	{
		int			at = i * b->natts + b->keyatt - 1;

		keys[i] = b->values[at];
		skip[i] = b->isnull[at] ||
			(b->keylen == -1 &&
			 (VARATT_IS_EXTERNAL(DatumGetPointer(keys[i])) ||
			  VARATT_IS_COMPRESSED(DatumGetPointer(keys[i]))));
		nkeys += !skip[i];
	}
	/*
	 * An InitPlan's output is computed when a check first needs it: never
	 * here (the scan's earlier conditions may reject every row).
	 */
	if (nkeys == 0 ||
		(b->filter_param >= 0 &&
		 econtext->ecxt_param_exec_vals[b->filter_param].execPlan != NULL))
		done = BF_PREFETCH_LATER;
	else
	{
		ResetExprContext(econtext);
		oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		fcinfo->args[b->filter_argno].value = ExecEvalExpr(b->filter, econtext,
														   &isnull);
		fcinfo->args[b->filter_argno].isnull = isnull;
		/* a NULL filter stays NULL until a rescan: the checks give NULL */
		done = isnull ? BF_PREFETCH_NEVER :
			bf_contains_prefetch(fcinfo, b->filter_argno, b->key_argno,
								 b->literal, keys, skip, b->nrows, 1, &bytes);
		MemoryContextSwitchTo(oldcxt);
	}

	if (done == BF_PREFETCH_DONE)
	{
		b->keys_prefetched += nkeys;
		b->idle_batches = 0;
		b->next_pause = PAUSE_MIN_ROWS;
	}
	if (done == BF_PREFETCH_NEVER ||
		(done == BF_PREFETCH_DONE && bytes < BATCH_MIN_FILTER_BYTES))
	{
		b->batching = false;
		b->pause_rows = 0;
	}
	else if (done == BF_PREFETCH_LATER && ++b->idle_batches >= IDLE_BATCHES)
	{
		b->batching = false;
		b->pause_rows = b->next_pause;
		b->next_pause = Min(b->next_pause * 2, PAUSE_MAX_ROWS);
		b->idle_batches = 0;
	}
}

/* Read the next batch of rows from the child; false if there is none. */
static bool
read_batch(BatchScanState *b)
{
	PlanState  *child = linitial(b->css.custom_ps);
	TupleDesc	desc = b->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	MemoryContext oldcxt;

	b->nrows = 0;
	b->next = 0;
	MemoryContextReset(b->batch_cxt);
	while (b->nrows < BATCH_ROWS && !b->exhausted)
	{
		TupleTableSlot *slot = ExecProcNode(child);
		Datum	   *values = b->values + b->nrows * b->natts;
		bool	   *isnull = b->isnull + b->nrows * b->natts;

		if (TupIsNull(slot))
		{
			b->exhausted = true;
			break;
		}
		slot_getallattrs(slot);
		oldcxt = MemoryContextSwitchTo(b->batch_cxt);
		for (int i = 0; i < b->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			isnull[i] = slot->tts_isnull[i];
			values[i] = isnull[i] ? (Datum) 0 :
				datumCopy(slot->tts_values[i], att->attbyval, att->attlen);
		}
		MemoryContextSwitchTo(oldcxt);
		b->nrows++;
	}
	b->rows_read += b->nrows;
	b->rows_batched += b->nrows;
	if (b->nrows == 0)
		return false;
	prefetch_batch(b);
	return true;
}

/* The next row for the conditions: a batch's, or the child's own slot. */
static TupleTableSlot *
batch_next(BatchScanState *b)
{
	TupleTableSlot *slot;

	if (b->next < b->nrows)
		return batch_row(b, b->next++);
	if (!b->batching)
	{
		/* a scan that ended (in a batch, or passing through) stays ended */
		if (b->exhausted)
			return NULL;
		slot = ExecProcNode(linitial(b->css.custom_ps));
		if (TupIsNull(slot))
		{
			b->exhausted = true;
			return NULL;
		}
		b->rows_read++;
		/* after a pause's last row, batches try again */
		if (b->pause_rows > 0 && --b->pause_rows == 0)
			b->batching = true;
		return slot;
	}
	if (!read_batch(b))
		return NULL;
	b->next = 1;
	return batch_row(b, 0);
}

/*
 * The next row passing the check, projected.  (Not ExecScan: in an
 * EvalPlanQual recheck it would not read the child.)
 */
static TupleTableSlot *
batch_exec(CustomScanState *node)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ExprState  *qual = node->ss.ps.qual;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		slot = batch_next((BatchScanState *) node);
		if (slot == NULL)
			return proj != NULL ? ExecClearTuple(proj->pi_state.resultslot) : NULL;
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (ExecQual(qual, econtext))
			return proj != NULL ? ExecProject(proj) : slot;
		InstrCountFiltered1(node, 1);
	}
}

static void
batch_end(CustomScanState *node)
{
	ExecEndNode(linitial(node->custom_ps));
}

/*
 * Rescans start batching again, unless a scan ran to its end having read so
 * few rows that copying them cannot pay (an inner scan of a nested loop over
 * a small table): then rows pass through for the rest of the execution.  (A
 * scan stopped early, by a LIMIT or a semi-join, says nothing; a nested loop
 * rescans its inner side before its first row, too.)
 */
static void
batch_rescan(CustomScanState *node)
{
	BatchScanState *b = (BatchScanState *) node;
	PlanState  *child = linitial(node->custom_ps);

	if (b->batch_cxt != NULL && b->exhausted && b->rows_read < SHORT_SCAN_ROWS)
		b->short_scans = true;
	b->nrows = 0;
	b->next = 0;
	b->rows_read = 0;
	b->idle_batches = 0;
	b->pause_rows = 0;
	b->next_pause = PAUSE_MIN_ROWS;
	b->exhausted = false;
	b->batching = b->batch_cxt != NULL && !b->short_scans;
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(child, node->ss.ps.chgParam);
	if (child->chgParam == NULL)
		ExecReScan(child);
}

/*
 * EXPLAIN ANALYZE: the rows this process copied into batches (the others
 * passed through) and the keys among them whose filter line it prefetched,
 * over all the node's loops.
 */
static void
batch_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BatchScanState *b = (BatchScanState *) node;

	if (!es->analyze)
		return;
	ExplainPropertyUInteger("Rows Batched", NULL, b->rows_batched, es);
	ExplainPropertyUInteger("Keys Prefetched", NULL, b->keys_prefetched, es);
}
