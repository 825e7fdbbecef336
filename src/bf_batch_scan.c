/*
 * bf_batch_scan.c
 *		BloomBatch: a sequential scan's check of a large filter, with the
 *		filter's lines of a batch of rows loaded before their checks.
 *
 * A check of a filter larger than the CPU's caches is one cache miss, and in
 * a scan nothing overlaps it: the next row's key is not known until the
 * check has answered.  So where a sequential scan's last condition is
 *     filter @> column    or    column <@ filter
 * with a filter known before the scan (a constant, a parameter, the result
 * of an InitPlan), the planner pass (bf_batch_plan, run by the shared tier's
 * planner hook after standard_planner) moves that condition into a
 * BloomBatch node above the scan.  The node reads BATCH_ROWS rows from the
 * scan, copies them, prefetches the filter line each key's check will read
 * (bf_contains_prefetch: the filter's cached copy, hashes as the check
 * computes them), and then returns the rows one by one through its
 * condition, the unchanged check, and projection: the answers are the
 * check's own, and the lines it reads have arrived meanwhile.
 *
 * Nothing else changes: the scan evaluates its other conditions first, as
 * it did before the check (which was last); the node is not used when they
 * contain volatile functions (reading ahead evaluates them for up to
 * BATCH_ROWS - 1 rows that a LIMIT would not have read).  The prefetch reads
 * no stored value and raises no error.  For a filter smaller than
 * BATCH_MIN_FILTER_BYTES (in the caches anyway), for a backward scan (the
 * node supports one only in a plan made for a SCROLL cursor) and in an
 * EvalPlanQual recheck, rows pass through one at a time without a copy.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "bf_batch_scan.h"

bool		bf_batch_checks = true;

/* Rows read ahead: their lines in flight at once, and a level 1 cache's. */
#define BATCH_ROWS				32

/* Smaller filters stay in the caches: rows pass through. */
#define BATCH_MIN_FILTER_BYTES	((Size) 2 * 1024 * 1024)

typedef struct BatchScanState
{
	CustomScanState css;
	ExprState  *filter;			/* the filter argument */
	FunctionCallInfo fcinfo;	/* the check's call, for the prefetches */
	int			filter_argno;
	int			key_argno;
	bool		literal;		/* the key is a bloom_literal */
	AttrNumber	keyatt;			/* the key's attribute in the scan tuple */
	bool		batching;		/* false: rows pass through */
	bool		exhausted;		/* the scan returned its last row */
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
	FmgrInfo	finfo;

	if (IsA(qual, OpExpr))
	{
		funcid = ((OpExpr *) qual)->opfuncid;
		args = ((OpExpr *) qual)->args;
	}
	else if (IsA(qual, FuncExpr))
	{
		funcid = ((FuncExpr *) qual)->funcid;
		args = ((FuncExpr *) qual)->args;
	}
	else
		return false;
	if (funcid < FirstNormalObjectId || list_length(args) != 2)
		return false;
	fmgr_info(funcid, &finfo);
	if (!bf_contains_fn(finfo.fn_addr, filter_argno, key_argno, literal) ||
		!filter_known(list_nth(args, *filter_argno)))
		return false;
	*key = key_column(list_nth(args, *key_argno), scanrelid);
	return *key != NULL;
}

/* The resno of a plain Var in a targetlist, or 0. */
static AttrNumber
tlist_var_resno(List *tlist, Var *var)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst(lc);

		if (IsA(tle->expr, Var) &&
			((Var *) tle->expr)->varno == var->varno &&
			((Var *) tle->expr)->varattno == var->varattno &&
			((Var *) tle->expr)->varlevelsup == 0)
			return tle->resno;
	}
	return 0;
}

/*
 * A BloomBatch node for the scan, the scan (modified) its child; or the
 * scan unchanged.
 */
static Plan *
make_batch_scan(SeqScan *seqscan, bool scroll, int *next_id)
{
	Plan	   *scan = (Plan *) seqscan;
	Index		scanrelid = seqscan->scan.scanrelid;
	Node	   *check;
	Var		   *key;
	int			filter_argno;
	int			key_argno;
	bool		literal;
	List	   *rest;
	List	   *child_tlist;
	List	   *tlist = NIL;
	AttrNumber	keyresno;
	Var		   *keyref;
	ListCell   *keyarg;
	CustomScan *cscan;
	ListCell   *lc;

	if (scan->qual == NIL)
		return scan;
	check = llast(scan->qual);
	if (!is_batch_check(check, scanrelid, &key, &filter_argno, &key_argno,
						&literal))
		return scan;
	rest = list_copy(scan->qual);
	rest = list_delete_last(rest);
	if (contain_volatile_functions((Node *) rest))
		return scan;

	/* the scan's output, and the key if the output lacks it */
	child_tlist = list_copy(scan->targetlist);
	keyresno = tlist_var_resno(child_tlist, key);
	if (keyresno == 0)
	{
		keyresno = list_length(child_tlist) + 1;
		child_tlist = lappend(child_tlist,
							  makeTargetEntry((Expr *) copyObject(key), keyresno,
											  NULL, true));
	}

	/* the node's output: the scan's former output, read from its new one */
	foreach(lc, scan->targetlist)
	{
		TargetEntry *tle = lfirst(lc);
		TargetEntry *ref;

		ref = flatCopyTargetEntry(tle);
		ref->expr = (Expr *) makeVarFromTargetEntry(INDEX_VAR, tle);
		tlist = lappend(tlist, ref);
	}
	/* the check, its key read from the scan tuple */
	check = copyObject(check);
	keyref = makeVar(INDEX_VAR, keyresno, key->vartype, key->vartypmod,
					 key->varcollid, 0);
	keyarg = list_nth_cell(IsA(check, OpExpr) ? ((OpExpr *) check)->args :
						   ((FuncExpr *) check)->args, key_argno);
	if (IsA(lfirst(keyarg), RelabelType))
		((RelabelType *) lfirst(keyarg))->arg = (Expr *) keyref;
	else
		lfirst(keyarg) = keyref;

	cscan = makeNode(CustomScan);
	/* cost, width, parallel safety and parameters as the scan's */
	memcpy(&cscan->scan.plan, scan, sizeof(Plan));
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.plan_node_id = (*next_id)++;
	cscan->scan.plan.parallel_aware = false;
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = list_make1(check);
	cscan->scan.plan.lefttree = NULL;
	cscan->scan.plan.righttree = NULL;
	cscan->scan.scanrelid = 0;
	/*
	 * Backward only where the plan was asked to scroll: a cursor with
	 * neither SCROLL nor NO SCROLL then stays forward-only, and batched.
	 */
	cscan->flags = scroll ? CUSTOMPATH_SUPPORT_BACKWARD_SCAN : 0;
	cscan->custom_plans = list_make1(scan);
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_make4(makeInteger(filter_argno),
									   makeInteger(key_argno),
									   makeInteger(literal ? 1 : 0),
									   makeInteger(keyresno));
	cscan->custom_scan_tlist = child_tlist;
	cscan->custom_relids = bms_make_singleton(scanrelid);
	cscan->methods = &batch_scan_methods;

	/* the scan's InitPlans (its filter's, often) are the node's now */
	cscan->scan.plan.extParam = bms_copy(scan->extParam);
	cscan->scan.plan.allParam = bms_copy(scan->allParam);
	foreach(lc, scan->initPlan)
	{
		SubPlan    *initplan = lfirst(lc);
		ListCell   *p;

		foreach(p, initplan->setParam)
			if (bms_is_member(lfirst_int(p), scan->allParam))
				scan->extParam = bms_add_member(scan->extParam, lfirst_int(p));
	}
	scan->initPlan = NIL;
	scan->qual = rest;
	scan->targetlist = child_tlist;
	return (Plan *) cscan;
}

static void
batch_plan_list(List *plans, bool scroll, int *next_id)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = bf_batch_plan(lfirst(lc), scroll, next_id);
}

Plan *
bf_batch_plan(Plan *plan, bool scroll, int *next_id)
{
	if (plan == NULL)
		return NULL;
	switch (nodeTag(plan))
	{
		case T_SeqScan:
			return make_batch_scan((SeqScan *) plan, scroll, next_id);
		case T_CustomScan:
			/* the gates' children are read by the gates: left as they are */
			return plan;
		case T_Append:
			batch_plan_list(((Append *) plan)->appendplans, scroll, next_id);
			break;
		case T_MergeAppend:
			batch_plan_list(((MergeAppend *) plan)->mergeplans, scroll, next_id);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan =
				bf_batch_plan(((SubqueryScan *) plan)->subplan, scroll, next_id);
			break;
		default:
			break;
	}
	plan->lefttree = bf_batch_plan(plan->lefttree, scroll, next_id);
	plan->righttree = bf_batch_plan(plan->righttree, scroll, next_id);
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
	Node	   *check = linitial(cscan->scan.plan.qual);
	FmgrInfo   *flinfo;
	Oid			funcid;
	List	   *args;
	Oid			collation;

	node->custom_ps = list_make1(ExecInitNode(linitial(cscan->custom_plans),
											  estate, eflags));
	b->filter_argno = intVal(linitial(cscan->custom_private));
	b->key_argno = intVal(lsecond(cscan->custom_private));
	b->literal = intVal(lthird(cscan->custom_private)) != 0;
	b->keyatt = (AttrNumber) intVal(lfourth(cscan->custom_private));

	if (IsA(check, OpExpr))
	{
		funcid = ((OpExpr *) check)->opfuncid;
		args = ((OpExpr *) check)->args;
		collation = ((OpExpr *) check)->inputcollid;
	}
	else
	{
		funcid = ((FuncExpr *) check)->funcid;
		args = ((FuncExpr *) check)->args;
		collation = ((FuncExpr *) check)->inputcollid;
	}
	b->filter = ExecInitExpr(list_nth(args, b->filter_argno), &node->ss.ps);

	/* a call of its own (its call site), as the check's */
	flinfo = palloc0(sizeof(FmgrInfo));
	fmgr_info(funcid, flinfo);
	fmgr_info_set_expr(check, flinfo);
	b->fcinfo = palloc0(SizeForFunctionCallInfo(2));
	InitFunctionCallInfoData(*b->fcinfo, flinfo, 2, collation, NULL, NULL);

	/* the rows of a backward scan or a recheck pass through */
	b->batching = (eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_EXPLAIN_ONLY)) == 0 &&
		estate->es_epq_active == NULL;
	b->natts = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;
	Assert(b->keyatt >= 1 && b->keyatt <= b->natts);
	if (b->batching)
	{
		b->values = palloc(sizeof(Datum) * BATCH_ROWS * b->natts);
		b->isnull = palloc(sizeof(bool) * BATCH_ROWS * b->natts);
		b->batch_cxt = AllocSetContextCreate(estate->es_query_cxt,
											 "BloomBatch rows",
											 ALLOCSET_DEFAULT_SIZES);
	}
}

/* Store a row's values in the scan slot, as a virtual tuple. */
static TupleTableSlot *
store_row(BatchScanState *b, const Datum *values, const bool *isnull)
{
	TupleTableSlot *slot = b->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * b->natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * b->natts);
	return ExecStoreVirtualTuple(slot);
}

/* The child's next row as the scan tuple, or NULL. */
static TupleTableSlot *
pass_through(BatchScanState *b)
{
	TupleTableSlot *child = ExecProcNode(linitial(b->css.custom_ps));

	if (TupIsNull(child))
		return NULL;
	slot_getallattrs(child);
	return store_row(b, child->tts_values, child->tts_isnull);
}

/*
 * Prefetch the filter's lines of the batch's keys; once the filter is seen,
 * stop batching if it is small or cannot be prefetched.
 */
static void
prefetch_batch(BatchScanState *b)
{
	ExprContext *econtext = b->css.ss.ps.ps_ExprContext;
	FunctionCallInfo fcinfo = b->fcinfo;
	MemoryContext oldcxt;
	BfPrefetch	done;
	Size		bytes = 0;
	bool		isnull;

	ResetExprContext(econtext);
	oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	fcinfo->args[b->filter_argno].value = ExecEvalExpr(b->filter, econtext,
													   &isnull);
	fcinfo->args[b->filter_argno].isnull = isnull;
	done = isnull ? BF_PREFETCH_LATER :
		bf_contains_prefetch(fcinfo, b->filter_argno, b->key_argno,
							 b->literal, b->values + (b->keyatt - 1),
							 b->isnull + (b->keyatt - 1), b->nrows, b->natts,
							 &bytes);
	MemoryContextSwitchTo(oldcxt);
	if (done == BF_PREFETCH_NEVER ||
		(done == BF_PREFETCH_DONE && bytes < BATCH_MIN_FILTER_BYTES))
		b->batching = false;
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
	if (b->nrows == 0)
		return false;
	prefetch_batch(b);
	return true;
}

static TupleTableSlot *
batch_next(ScanState *ss)
{
	BatchScanState *b = (BatchScanState *) ss;

	if (b->next < b->nrows)
	{
		int			i = b->next++;

		return store_row(b, b->values + i * b->natts, b->isnull + i * b->natts);
	}
	if (!b->batching)
		return pass_through(b);
	if (!read_batch(b))
		return NULL;
	b->next = 1;
	return store_row(b, b->values, b->isnull);
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
		slot = batch_next(&node->ss);
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

static void
batch_rescan(CustomScanState *node)
{
	BatchScanState *b = (BatchScanState *) node;
	PlanState  *child = linitial(node->custom_ps);

	b->nrows = 0;
	b->next = 0;
	b->exhausted = false;
	b->batching = b->batch_cxt != NULL;
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(child, node->ss.ps.chgParam);
	if (child->chgParam == NULL)
		ExecReScan(child);
}
