/*
 * bfp_scan.c
 *		The BloomGuard custom scan: checks a relation's guard indexes for the
 *		keys of its clauses, and runs its child (the relation's scan) only if
 *		every guard answers "maybe".
 *
 * The keys (custom_exprs) are values known before the scan that cannot fail
 * to evaluate (bfp_clause.c); a key whose statement parameter could fail
 * with this execution's parameters (a PL/pgSQL record's field) is not
 * checked (bfp_params_safe).  Those known when the executor starts
 * (constants and the statement's parameters) are checked there, and on
 * "no" the child is never initialized: a lookup over many partitions opens
 * only the scans of those that may hold the key.  The node checks on the
 * first row of each (re)scan instead when
 *  - a key is a PARAM_EXEC value (an outer query level's), set later;
 *  - the child is parallel-aware: the leader must initialize it for the
 *    workers' shared state, which a worker's child looks up;
 *  - the plan is instrumented and parallel-safe: a worker whose guard
 *    answers "maybe" reports its child's instrumentation into slots the
 *    leader made only for the nodes it initialized;
 *  - EXPLAIN without ANALYZE (nothing is checked), or an EvalPlanQual
 *    recheck (the rows rechecked are the child's to produce: "maybe").
 *
 * A guard holds the key of every row version that any snapshot may see,
 * so a "no" is exact for this statement's snapshot, in the leader and in
 * every worker (which use the leader's snapshot): a worker may answer
 * "maybe" where the leader answered "no" (a key set since), never the
 * converse for a row the snapshot sees.  Under SERIALIZABLE the check
 * takes a predicate lock on the page it read (bfi_probe.c), which an
 * insert of the key conflicts with, as the skipped scan's lock would have.
 *
 * For WHERE CURRENT OF, the node scans its relation (ss_currentRelation),
 * and its scan slot holds the TID of the row it returned last, as a row of
 * NULLs: the row's values are the child's (bfp_position.c).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "index/bf_index.h"
#include "plan/bf_plan.h"
#include "value/bf_value.h"

typedef enum GuardAnswer
{
	GUARD_UNCHECKED,			/* not checked yet this (re)scan */
	GUARD_NO,					/* no row: the child is not run */
	GUARD_MAYBE					/* rows come from the child */
} GuardAnswer;

/* One guard and the key checked against it. */
typedef struct GuardCheck
{
	Relation	index;			/* NULL: gone or not complete ("maybe") */
	bool		unsafe;			/* a parameter of the key could fail to
								 * evaluate: not checked ("maybe") */
	ExprState  *key;
	bool		any;			/* the key is an array of keys */
	BfKeyType	kt;				/* how a key is hashed */
} GuardCheck;

typedef struct GuardScanState
{
	CustomScanState css;
	int			nchecks;
	GuardCheck *checks;
	PlanState  *child;			/* NULL while not initialized */
	ScanState  *position;		/* the scan whose current row is ours, or
								 * NULL (bfp_position.c) */
	bool		deferred;		/* check on the first row of each (re)scan */
	GuardAnswer answer;
	uint64		nchecked;		/* for EXPLAIN ANALYZE */
	uint64		nskipped;
} GuardScanState;

static Node *guard_create_state(CustomScan *cscan);
static void guard_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *guard_exec(CustomScanState *node);
static void guard_end(CustomScanState *node);
static void guard_rescan(CustomScanState *node);
static void guard_mark(CustomScanState *node);
static void guard_restore(CustomScanState *node);
static void guard_explain(CustomScanState *node, List *ancestors,
						  ExplainState *es);

static const CustomScanMethods guard_scan_methods = {
	.CustomName = BFP_NODE_NAME,
	.CreateCustomScanState = guard_create_state,
};

static const CustomExecMethods guard_exec_methods = {
	.CustomName = BFP_NODE_NAME,
	.BeginCustomScan = guard_begin,
	.ExecCustomScan = guard_exec,
	.EndCustomScan = guard_end,
	.ReScanCustomScan = guard_rescan,
	.MarkPosCustomScan = guard_mark,
	.RestrPosCustomScan = guard_restore,
	.ExplainCustomScan = guard_explain,
};

/* The BloomGuard plan over child (see bfp_path.c). */
Plan *
bfp_make_scan(List *tlist, List *keys, List *priv, Plan *child,
			  Bitmapset *relids, bool backward, bool mark)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	if (backward)
		cscan->flags |= CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
	if (mark)
		cscan->flags |= CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_plans = list_make1(child);
	cscan->custom_exprs = keys;
	cscan->custom_private = priv;
	cscan->custom_scan_tlist = copyObject(tlist);
	cscan->custom_relids = bms_copy(relids);
	cscan->methods = &guard_scan_methods;
	return (Plan *) cscan;
}

static Node *
guard_create_state(CustomScan *cscan)
{
	GuardScanState *g = (GuardScanState *) newNode(sizeof(GuardScanState),
												   T_CustomScanState);

	g->css.methods = &guard_exec_methods;
	return (Node *) g;
}

/* Does the expression use a PARAM_EXEC value (set after the start)? */
static bool
uses_exec_param(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind != PARAM_EXTERN;
	return expression_tree_walker(node, uses_exec_param, context);
}

static bool
must_defer(GuardScanState *g, EState *estate, int eflags)
{
	CustomScan *cscan = (CustomScan *) g->css.ss.ps.plan;
	int			flags = intVal(list_nth(cscan->custom_private, BFP_PRIV_FLAGS));

	return (eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 ||
		estate->es_epq_active != NULL ||
		(flags & BFP_FLAG_PARALLEL_CHILD) != 0 ||
		(estate->es_instrument != 0 && cscan->scan.plan.parallel_safe) ||
		uses_exec_param((Node *) cscan->custom_exprs, NULL);
}

/*
 * Open a guard, as an index scan opens its index.  A plan is made again when
 * a guard it uses is dropped or stops being valid (both invalidate the
 * table's plans), and DROP INDEX CONCURRENTLY waits for the transactions
 * that may use the guard before it stops maintaining it; should a guard
 * still be gone or incomplete here, its gate answers "maybe" (NULL).
 */
static Relation
open_guard(Oid indexoid)
{
	Relation	index = try_relation_open(indexoid, AccessShareLock);

	if (index == NULL)
		return NULL;
	if (!bfi_is_guard(index) || index->rd_index == NULL ||
		!index->rd_index->indisvalid || !index->rd_index->indisready ||
		!index->rd_index->indislive)
	{
		relation_close(index, NoLock);
		return NULL;
	}
	return index;
}

/* Open the guards and compile the keys. */
static void
init_checks(GuardScanState *g)
{
	CustomScan *cscan = (CustomScan *) g->css.ss.ps.plan;
	List	   *indexes = list_nth(cscan->custom_private, BFP_PRIV_INDEXES);
	List	   *hashtypes = list_nth(cscan->custom_private, BFP_PRIV_HASHTYPES);
	List	   *collations = list_nth(cscan->custom_private, BFP_PRIV_COLLATIONS);
	List	   *any = list_nth(cscan->custom_private, BFP_PRIV_ANY);
	int			i = 0;
	ListCell   *lc;

	g->nchecks = list_length(cscan->custom_exprs);
	g->checks = palloc0(sizeof(GuardCheck) * g->nchecks);
	foreach(lc, cscan->custom_exprs)
	{
		GuardCheck *c = &g->checks[i];

		c->index = open_guard(list_nth_oid(indexes, i));
		c->unsafe = !bfp_params_safe(lfirst(lc),
									 g->css.ss.ps.state->es_param_list_info);
		c->key = ExecInitExpr(lfirst(lc), &g->css.ss.ps);
		c->any = list_nth_int(any, i) != 0;
		bf_key_type_init(&c->kt, list_nth_oid(hashtypes, i),
						 list_nth_oid(collations, i), InvalidOid);
		i++;
	}
}

/* May the guard hold this (non-NULL) key? */
static bool
key_maybe(GuardCheck *c, Datum key)
{
	BfHash		hashes[BF_KEY_MAX_PROBES];
	int			n;

	if (c->index == NULL)
		return true;
	n = bf_key_probe_hashes(&c->kt, key, BF_LAYOUT_BLOCKED, hashes);
	return bfi_probe_key(c->index, c->kt.kind, hashes, n);
}

/*
 * May the guard hold a key of the array?  A NULL element matches no row
 * ("=" is not true for it); a NULL array: "maybe", as for a NULL key.
 */
static bool
array_maybe(GuardCheck *c, Datum value)
{
	ArrayType  *arr = DatumGetArrayTypeP(value);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		if (!nulls[i] && key_maybe(c, elems[i]))
			return true;
	}
	return false;
}

/* The answer of every guard: "maybe" unless one answers "no". */
static GuardAnswer
check_guards(GuardScanState *g)
{
	ExprContext *econtext = g->css.ss.ps.ps_ExprContext;
	GuardAnswer answer = GUARD_MAYBE;

	ResetExprContext(econtext);
	for (int i = 0; i < g->nchecks && answer == GUARD_MAYBE; i++)
	{
		GuardCheck *c = &g->checks[i];
		bool		isnull;
		Datum		value;
		MemoryContext old;

		if (c->unsafe)
			continue;
		value = ExecEvalExprSwitchContext(c->key, econtext, &isnull);
		if (isnull)
			continue;
		if (c->index != NULL)
			pgstat_count_index_scan(c->index);
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		if (!(c->any ? array_maybe(c, value) : key_maybe(c, value)))
			answer = GUARD_NO;
		MemoryContextSwitchTo(old);
	}
	ResetExprContext(econtext);
	g->nchecked++;
	if (answer == GUARD_NO)
		g->nskipped++;
	return answer;
}

/*
 * Initialize the child and read its rows as the scan tuple: the projection
 * built by ExecInitCustomScan assumed a virtual scan slot, and the nodes
 * above read this node's rows in the child's slots.
 */
static void
init_child(GuardScanState *g, EState *estate, int eflags)
{
	CustomScan *cscan = (CustomScan *) g->css.ss.ps.plan;
	PlanState  *ps = &g->css.ss.ps;

	g->child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	g->css.custom_ps = list_make1(g->child);
	if (g->css.ss.ss_currentRelation != NULL)
		g->position = bfp_position_scan(g->child);
	ps->scanops = ExecGetResultSlotOps(g->child, &ps->scanopsfixed);
	ps->scanopsset = true;
	ExecConditionalAssignProjectionInfo(ps,
										g->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										INDEX_VAR);
}

/*
 * The relation scanned, for WHERE CURRENT OF, if the child's rows have
 * positions; the scan slot's values are NULL.
 */
static void
init_position(GuardScanState *g, EState *estate, int eflags)
{
	CustomScan *cscan = (CustomScan *) g->css.ss.ps.plan;
	TupleTableSlot *slot = g->css.ss.ss_ScanTupleSlot;
	int			rti;

	if (!bfp_plan_has_position(linitial(cscan->custom_plans)) ||
		!bms_get_singleton_member(cscan->custom_relids, &rti))
		return;
	g->css.ss.ss_currentRelation = ExecOpenScanRelation(estate, rti, eflags);
	slot->tts_tableOid = RelationGetRelid(g->css.ss.ss_currentRelation);
	for (int i = 0; i < slot->tts_tupleDescriptor->natts; i++)
		slot->tts_isnull[i] = true;
}

/* Our current row is the child's (NULL: none). */
static void
set_position(GuardScanState *g, TupleTableSlot *row)
{
	TupleTableSlot *slot = g->css.ss.ss_ScanTupleSlot;
	ItemPointerData tid;

	ExecClearTuple(slot);
	if (row == NULL || !bfp_position_tid(g->position, &tid))
		return;
	ExecStoreVirtualTuple(slot);
	slot->tts_tid = tid;
}

static void
guard_begin(CustomScanState *node, EState *estate, int eflags)
{
	GuardScanState *g = (GuardScanState *) node;

	init_position(g, estate, eflags);
	init_checks(g);
	g->answer = GUARD_UNCHECKED;
	g->deferred = must_defer(g, estate, eflags);
	if (!g->deferred)
		g->answer = check_guards(g);
	if (g->answer != GUARD_NO)
		init_child(g, estate, eflags);
}

static TupleTableSlot *
guard_exec(CustomScanState *node)
{
	GuardScanState *g = (GuardScanState *) node;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;
	TupleTableSlot *slot;

	CHECK_FOR_INTERRUPTS();
	if (g->answer == GUARD_UNCHECKED)
		g->answer = check_guards(g);
	if (g->answer == GUARD_NO)
		return NULL;
	slot = ExecProcNode(g->child);
	if (g->position != NULL)
		set_position(g, TupIsNull(slot) ? NULL : slot);
	if (TupIsNull(slot) || proj == NULL)
		return slot;
	ResetExprContext(proj->pi_exprContext);
	proj->pi_exprContext->ecxt_scantuple = slot;
	return ExecProject(proj);
}

static void
guard_end(CustomScanState *node)
{
	GuardScanState *g = (GuardScanState *) node;

	if (g->child != NULL)
		ExecEndNode(g->child);
	for (int i = 0; i < g->nchecks; i++)
	{
		if (g->checks[i].index != NULL)
			relation_close(g->checks[i].index, NoLock);
	}
}

static void
guard_rescan(CustomScanState *node)
{
	GuardScanState *g = (GuardScanState *) node;

	if (g->deferred)
		g->answer = GUARD_UNCHECKED;
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	if (g->child == NULL)
		return;
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(g->child, node->ss.ps.chgParam);
	if (g->child->chgParam == NULL)
		ExecReScan(g->child);
}

static void
guard_mark(CustomScanState *node)
{
	GuardScanState *g = (GuardScanState *) node;

	if (g->child != NULL)
		ExecMarkPos(g->child);
}

static void
guard_restore(CustomScanState *node)
{
	GuardScanState *g = (GuardScanState *) node;

	if (g->child != NULL)
		ExecRestrPos(g->child);
}

/* The guards checked, by name, in the order of the keys. */
static char *
guard_names(GuardScanState *g)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < g->nchecks; i++)
	{
		Relation	index = g->checks[i].index;

		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "",
						 index ? RelationGetRelationName(index) : "(gone)");
	}
	return buf.data;
}

static void
guard_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GuardScanState *g = (GuardScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	char	   *keys;

	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan,
									   ancestors);
	keys = deparse_expression((Node *) cscan->custom_exprs, context,
							  es->verbose, false);
	ExplainPropertyText("Guard", guard_names(g), es);
	ExplainPropertyText("Guard Keys", keys, es);
	if (es->analyze)
	{
		ExplainPropertyUInteger("Guard Checks", NULL, g->nchecked, es);
		ExplainPropertyUInteger("Scans Skipped", NULL, g->nskipped, es);
	}
}

void
bfp_scan_init(void)
{
	RegisterCustomScanMethods(&guard_scan_methods);
}
