/*
 * bf_gate_append.c
 *		The BloomAppend custom scan: an Append over the gated partitions of
 *		one guard, which asks their filters when the executor starts and
 *		initializes only the partitions whose filter says "maybe".
 *
 * Under an Append, a BloomGate (bf_gate_scan.c) spares a partition its
 * scan, but not its own node: a lookup by a column that is not the
 * partition key still builds and ends 64 BloomGates (an expression context,
 * two slots, a projection and a compiled gate each) when every filter says
 * "no", and that is most of the statement's cost.  After the gates are
 * placed, the planner pass replaces an Append by a CustomScan "BloomAppend"
 * holding the same children in custom_plans when
 *  - the Append runs its children one after another: not parallel-aware,
 *    no partial or asynchronous children, no run-time partition pruning;
 *  - at least two children are BloomGates whose One-Time Filter is one
 *    call bloom_shared_gate(definition_id, partition, key) (or every one
 *    bloom_shared_gate_any(definition_id, partition, keys)) with the same
 *    definition, key expression and collation (the key is a constant or an
 *    external parameter, known when the executor starts);
 *  - the first child's output can be named (EXPLAIN reads it through
 *    custom_scan_tlist).
 * BeginCustomScan evaluates the key once and asks each such child's
 * partition filter with the gate's own rule (bf_gate_partition_maybe:
 * "maybe" wherever bloom_shared_gate would be, skipped scans counted).
 * Children found "no" get no node at all; the others, and every child that
 * is not such a gate, are initialized (a gate found "maybe" is not asked
 * again) and their rows are returned as Append returns them, child after
 * child, backward too.  Where a BloomGate defers its check (EXPLAIN without
 * ANALYZE, an EvalPlanQual recheck, an open writing statement of this
 * backend, see bf_gate_scan_defers), every child is initialized and checks
 * itself, so the answers are never older than a BloomGate's.
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
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "bf_shared.h"

typedef struct AppendScanState
{
	CustomScanState css;
	PlanState **children;		/* the initialized children, in plan order */
	int			nchildren;
	int			current;		/* the child being read; -1 before the first */
	int			skipped;		/* children whose filter said "no" */
	bool		checked;		/* the filters were asked (not deferred) */
} AppendScanState;

static Node *append_scan_create_state(CustomScan *cscan);
static void append_scan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *append_scan_exec(CustomScanState *node);
static void append_scan_end(CustomScanState *node);
static void append_scan_rescan(CustomScanState *node);
static void append_scan_explain(CustomScanState *node, List *ancestors,
								ExplainState *es);

static const CustomScanMethods append_scan_methods = {
	.CustomName = "BloomAppend",
	.CreateCustomScanState = append_scan_create_state,
};

static const CustomExecMethods append_exec_methods = {
	.CustomName = "BloomAppend",
	.BeginCustomScan = append_scan_begin,
	.ExecCustomScan = append_scan_exec,
	.EndCustomScan = append_scan_end,
	.ReScanCustomScan = append_scan_rescan,
	.ExplainCustomScan = append_scan_explain,
};

/*
 * custom_private: the partition each child's gate asks for (InvalidOid: the
 * child is initialized as it is), the definition_id Const, a one-element
 * list of the gates' collation, 1 if the gates are bloom_shared_gate_any
 * (the key is an array of keys), and 1 if parallel workers may run the node
 * (below a Gather); custom_exprs: the key.
 */
#define PRIVATE_PARTITIONS(cscan)	((List *) linitial((cscan)->custom_private))
#define PRIVATE_ANY(cscan)			(intVal(lfourth((cscan)->custom_private)) != 0)
#define PRIVATE_PARALLEL(cscan)		(intVal(list_nth((cscan)->custom_private, 4)) != 0)

/* ---------------------------------------------------------------------
 * The planner pass
 * ---------------------------------------------------------------------
 */

/* Does the Append run its children one after another, all of them? */
static bool
runs_every_child(Append *append)
{
	if (append->plan.parallel_aware || append->plan.qual != NIL ||
		append->nasyncplans > 0 ||
		append->first_partial_plan < list_length(append->appendplans))
		return false;
#if PG_VERSION_NUM >= 180000
	return append->part_prune_index < 0;
#else
	return append->part_prune_info == NULL;
#endif
}

/* Do two gate calls ask one definition about one key (or array of keys)? */
static bool
same_question(FuncExpr *a, FuncExpr *b)
{
	return a->funcid == b->funcid && a->inputcollid == b->inputcollid &&
		equal(linitial(a->args), linitial(b->args)) &&
		equal(lthird(a->args), lthird(b->args));
}

/*
 * The partition each child's gate asks for, InvalidOid for a child that is
 * not such a gate; *first the first gate; *ngates how many are.
 */
static List *
gated_partitions(List *children, FuncExpr **first, int *ngates)
{
	List	   *partitions = NIL;
	ListCell   *lc;

	*first = NULL;
	*ngates = 0;
	foreach(lc, children)
	{
		FuncExpr   *gate = bf_gate_scan_partition_gate(lfirst(lc));
		Oid			partition = InvalidOid;

		if (gate != NULL && *first == NULL)
			*first = gate;
		if (gate != NULL && same_question(*first, gate))
		{
			partition = DatumGetObjectId(((Const *) lsecond(gate->args))->constvalue);
			(*ngates)++;
		}
		partitions = lappend_oid(partitions, partition);
	}
	return partitions;
}

/*
 * The node's scan tuple and targetlist for an Append's: the scan tuple is
 * output, the first child's output named by its table's columns (as EXPLAIN
 * names an Append's output); the targetlist reads it unchanged, so the
 * children's slots are returned as they come.
 */
static void
append_tlists(Append *append, List *output, List **scan_tlist, List **tlist)
{
	ListCell   *lc;

	*scan_tlist = NIL;
	*tlist = NIL;
	foreach(lc, output)
	{
		TargetEntry *tle = lfirst(lc);
		TargetEntry *own = list_nth(append->plan.targetlist,
									foreach_current_index(lc));
		Var		   *var = makeVar(INDEX_VAR, own->resno,
								  exprType((Node *) own->expr),
								  exprTypmod((Node *) own->expr),
								  exprCollation((Node *) own->expr), 0);

		*scan_tlist = lappend(*scan_tlist,
							  makeTargetEntry(tle->expr, own->resno, own->resname,
											  own->resjunk));
		*tlist = lappend(*tlist,
						 makeTargetEntry((Expr *) var, own->resno, own->resname,
										 own->resjunk));
	}
}

/* Can every child be scanned backward (as Append decides)? */
static bool
children_scan_backward(List *children)
{
	ListCell   *lc;

	foreach(lc, children)
		if (!ExecSupportsBackwardScan(lfirst(lc)))
			return false;
	return true;
}

/*
 * The Append itself, or the BloomAppend that replaces it (see the head of
 * the file); parallel: parallel workers may run it (below a Gather).
 */
Plan *
bf_gate_append(Append *append, bool parallel)
{
	CustomScan *cscan;
	FuncExpr   *first;
	List	   *partitions;
	List	   *output;
	int			ngates;
	bool		failed;
	bool		any;
	Index		first_relid;

	if (!runs_every_child(append))
		return (Plan *) append;
	partitions = gated_partitions(append->appendplans, &first, &ngates);
	if (ngates < 2)
		return (Plan *) append;
	output = bf_gate_scan_output(linitial(append->appendplans), &first_relid, &failed);
	if (failed || list_length(output) != list_length(append->plan.targetlist))
		return (Plan *) append;

	cscan = makeNode(CustomScan);
	/* cost, width, node id, initPlans and params as the Append's */
	memcpy(&cscan->scan.plan, &append->plan, sizeof(Plan));
	cscan->scan.plan.type = T_CustomScan;
	append_tlists(append, output, &cscan->custom_scan_tlist,
				  &cscan->scan.plan.targetlist);
	cscan->scan.scanrelid = 0;
	cscan->flags = children_scan_backward(append->appendplans) ?
		CUSTOMPATH_SUPPORT_BACKWARD_SCAN : 0;
	cscan->custom_plans = append->appendplans;
	cscan->custom_exprs = list_make1(lthird(first->args));
	(void) bf_planner_is_partition_gate(first->funcid, &any);
	cscan->custom_private = list_make5(partitions,
									   copyObject(linitial(first->args)),
									   list_make1_oid(first->inputcollid),
									   makeInteger(any ? 1 : 0),
									   makeInteger(parallel ? 1 : 0));
	/* EXPLAIN names the tables of custom_relids: the output's too */
	cscan->custom_relids = bms_add_member(bms_copy(append->apprelids), first_relid);
	cscan->methods = &append_scan_methods;
	return (Plan *) cscan;
}

/* ---------------------------------------------------------------------
 * The executor node
 * ---------------------------------------------------------------------
 */

static Node *
append_scan_create_state(CustomScan *cscan)
{
	AppendScanState *a = (AppendScanState *) newNode(sizeof(AppendScanState),
													  T_CustomScanState);

	a->css.methods = &append_exec_methods;
	return (Node *) a;
}

/*
 * Which children may hold the key?  false for a child whose partition's
 * filter said "no"; true for every child if the gates cannot answer here
 * (as bloom_shared_gate and bloom_shared_gate_any answer "maybe" for a NULL
 * key, an array holding a NULL, a nondeterministic collation).
 */
static bool *
ask_filters(AppendScanState *a, CustomScan *cscan, int nplans)
{
	bool	   *maybe = palloc(sizeof(bool) * nplans);
	Expr	   *key = linitial(cscan->custom_exprs);
	int64		defid = DatumGetInt64(((Const *) lsecond(cscan->custom_private))->constvalue);
	Oid			collation = linitial_oid((List *) lthird(cscan->custom_private));
	Oid			argtype = exprType((Node *) key);
	ExprContext *econtext = a->css.ss.ps.ps_ExprContext;
	Datum		value;
	bool		isnull;
	Datum	   *keys = &value;
	int			nkeys = 1;
	ListCell   *lc;

	for (int i = 0; i < nplans; i++)
		maybe[i] = true;
	if (!bf_gates_can_answer() || !OidIsValid(argtype) ||
		(OidIsValid(collation) && !get_collation_isdeterministic(collation)))
		return maybe;
	value = ExecEvalExpr(ExecInitExpr(key, &a->css.ss.ps), econtext, &isnull);
	if (isnull)
		return maybe;
	if (PRIVATE_ANY(cscan))
	{
		ArrayType  *arr = DatumGetArrayTypeP(value);
		BfGateKeys	elements;

		if (array_contains_nulls(arr))
			return maybe;
		bf_gate_keys(arr, &elements);
		argtype = elements.elemtype;
		keys = elements.elems;
		nkeys = elements.n;
	}
	foreach(lc, PRIVATE_PARTITIONS(cscan))
	{
		Oid			partition = lfirst_oid(lc);

		if (OidIsValid(partition) &&
			!bf_gate_partition_maybe(defid, partition, argtype, keys, nkeys))
			maybe[foreach_current_index(lc)] = false;
	}
	return maybe;
}

static void
append_scan_begin(CustomScanState *node, EState *estate, int eflags)
{
	AppendScanState *a = (AppendScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	int			nplans = list_length(cscan->custom_plans);
	bool	   *maybe = NULL;
	ListCell   *lc;

	a->checked = !bf_gate_scan_defers(estate, eflags, PRIVATE_PARALLEL(cscan));
	if (a->checked)
		maybe = ask_filters(a, cscan, nplans);
	a->children = palloc(sizeof(PlanState *) * nplans);
	a->nchildren = 0;
	a->skipped = 0;
	a->current = -1;
	foreach(lc, cscan->custom_plans)
	{
		int			i = foreach_current_index(lc);
		PlanState  *child;

		/* a "maybe" child's BloomGate asks again: a filter only gains keys */
		if (maybe != NULL && OidIsValid(list_nth_oid(PRIVATE_PARTITIONS(cscan), i)) &&
			!maybe[i])
		{
			a->skipped++;
			continue;
		}
		child = ExecInitNode(lfirst(lc), estate, eflags);
		a->children[a->nchildren++] = child;
		node->custom_ps = lappend(node->custom_ps, child);
	}
	/* the children's own slots are returned, of whatever kind they are */
	node->ss.ps.resultopsset = true;
	node->ss.ps.resultopsfixed = false;
}

/* The next row, child after child in the scan's direction (as Append). */
static TupleTableSlot *
append_scan_exec(CustomScanState *node)
{
	AppendScanState *a = (AppendScanState *) node;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);

	if (a->nchildren == 0)
		return NULL;
	if (a->current < 0)
		a->current = forward ? 0 : a->nchildren - 1;
	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		slot = ExecProcNode(a->children[a->current]);
		if (!TupIsNull(slot))
			return slot;
		if (forward ? a->current + 1 >= a->nchildren : a->current == 0)
			return NULL;
		a->current += forward ? 1 : -1;
	}
}

static void
append_scan_end(CustomScanState *node)
{
	AppendScanState *a = (AppendScanState *) node;

	for (int i = 0; i < a->nchildren; i++)
		ExecEndNode(a->children[i]);
}

/* The filters' answers stand for the statement, as a BloomGate's do. */
static void
append_scan_rescan(CustomScanState *node)
{
	AppendScanState *a = (AppendScanState *) node;

	for (int i = 0; i < a->nchildren; i++)
	{
		PlanState  *child = a->children[i];

		if (node->ss.ps.chgParam != NULL)
			UpdateChangedParamSet(child, node->ss.ps.chgParam);
		if (child->chgParam == NULL)
			ExecReScan(child);
	}
	a->current = -1;
}

static void
append_scan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	AppendScanState *a = (AppendScanState *) node;

	if (es->analyze && a->checked)
		ExplainPropertyInteger("Partitions Skipped", NULL, a->skipped, es);
}

/* From bf_gate_scan_init, during shared_preload_libraries. */
void
bf_gate_append_init(void)
{
	RegisterCustomScanMethods(&append_scan_methods);
}
