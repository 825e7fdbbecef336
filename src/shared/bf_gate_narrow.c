/*
 * bf_gate_narrow.c
 *		Narrowing "column = ANY (keys)" index conditions under a planner gate
 *		to the keys the filter may hold.
 *
 * A gate bloom_shared_gate_any(definition, [partition,] keys) skips the scan
 * when the filter holds none of the keys; when it holds some, the index is
 * still searched for every key.  Below such a gate (a gating Result, before
 * bf_gate_scan.c turns it into a BloomGate), an index condition
 *     column = ANY (keys)
 * on the guarded column, with the same keys and collation, becomes
 *     column = ANY (bloom_shared_gate_elements(definition, [partition,] keys))
 * which the index scan evaluates once per (re)scan, as it evaluates any
 * array that is not a constant.  This is valid wherever the condition
 * appears: a key the filter rules out is the key of no row version any
 * snapshot may see, so no row of this table satisfies "column = key" for
 * it, and dropping it from the array changes no row's result.  Only index
 * conditions are narrowed: the recheck of a lossy result and EvalPlanQual
 * use the original condition (indexqualorig, bitmapqualorig), and a
 * filter's condition would evaluate the function on every row.
 *
 * The function answers with the keys unchanged whenever the gate could not
 * answer "no" (see bf_gate.c), so a narrowed plan finds what the plain one
 * finds in every case the gate does.
 *
 * A parallel-aware scan is never narrowed: its participants share one scan
 * of one list of keys (a Parallel Index Scan steps through the array keys
 * in shared memory), but a gate answers "maybe" in a parallel worker, so
 * the leader and the workers would search different arrays.
 */
#include "postgres.h"

#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "bf_plan.h"
#include "bf_shared.h"

/* One gate_any call of a One-Time Filter, as narrowing needs it. */
typedef struct ArrayGate
{
	FuncExpr   *call;			/* the gate; its last argument is the keys */
	Oid			elements_fn;	/* narrows them, same arguments */
	int64		defid;
} ArrayGate;

/* The table column that index column indexcol (1-based) holds, or 0. */
static AttrNumber
index_column_attnum(Oid indexid, AttrNumber indexcol)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexid));
	Form_pg_index form;
	AttrNumber	attnum = InvalidAttrNumber;

	if (!HeapTupleIsValid(tup))
		return InvalidAttrNumber;
	form = (Form_pg_index) GETSTRUCT(tup);
	if (indexcol >= 1 && indexcol <= form->indnkeyatts)
		attnum = form->indkey.values[indexcol - 1];
	ReleaseSysCache(tup);
	return attnum;
}

/* The index column a condition's operand reads, or 0. */
static AttrNumber
operand_index_column(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node == NULL || !IsA(node, Var) || ((Var *) node)->varlevelsup != 0)
		return InvalidAttrNumber;
	return ((Var *) node)->varattno;
}

/*
 * Is clause, an index condition of index indexid on table relid, the
 * gate's "guarded column = ANY (keys)"?
 */
static bool
is_gated_condition(Node *clause, const ArrayGate *gate, Oid relid, Oid indexid)
{
	ScalarArrayOpExpr *sa;
	Node	   *keys = llast(gate->call->args);
	AttrNumber	attnum;
	Oid			coltype;
	int32		coltypmod;
	Oid			colcoll;

	if (!IsA(clause, ScalarArrayOpExpr))
		return false;
	sa = (ScalarArrayOpExpr *) clause;
	if (!sa->useOr || list_length(sa->args) != 2 ||
		sa->inputcollid != gate->call->inputcollid ||
		!equal(lsecond(sa->args), keys))
		return false;
	attnum = bf_gate_guarded_attnum(gate->defid, relid);
	if (attnum == InvalidAttrNumber ||
		index_column_attnum(indexid, operand_index_column(linitial(sa->args))) != attnum)
		return false;
	get_atttypetypmodcoll(relid, attnum, &coltype, &coltypmod, &colcoll);
	return bfp_operator_agrees(sa->opno, 0, coltype, colcoll,
										  get_element_type(exprType(keys)));
}

/* The condition with its keys narrowed by the gate's function. */
static Node *
narrowed_condition(ScalarArrayOpExpr *sa, const ArrayGate *gate)
{
	ScalarArrayOpExpr *copy = copyObject(sa);
	Node	   *keys = lsecond(copy->args);
	FuncExpr   *fn;

	fn = makeFuncExpr(gate->elements_fn, exprType(keys),
					  list_copy_deep(gate->call->args),
					  InvalidOid, gate->call->inputcollid, COERCE_EXPLICIT_CALL);
	lsecond(copy->args) = fn;
	return (Node *) copy;
}

/* Narrow the gated conditions of one index scan's condition list. */
static bool
narrow_conditions(List *conditions, List *gates, Oid relid, Oid indexid)
{
	ListCell   *lc;
	bool		narrowed = false;

	foreach(lc, conditions)
	{
		ListCell   *g;

		foreach(g, gates)
		{
			ArrayGate  *gate = lfirst(g);

			if (is_gated_condition(lfirst(lc), gate, relid, indexid))
			{
				lfirst(lc) = narrowed_condition(lfirst(lc), gate);
				narrowed = true;
				break;
			}
		}
	}
	return narrowed;
}

/* The bitmap index scans of a BitmapHeapScan's tree. */
static bool
narrow_bitmap(Plan *plan, List *gates, Oid relid)
{
	ListCell   *lc;
	bool		narrowed = false;

	if (plan == NULL)
		return false;
	switch (nodeTag(plan))
	{
		case T_BitmapIndexScan:
			return narrow_conditions(((BitmapIndexScan *) plan)->indexqual, gates,
									 relid, ((BitmapIndexScan *) plan)->indexid);
		case T_BitmapAnd:
			foreach(lc, ((BitmapAnd *) plan)->bitmapplans)
				narrowed |= narrow_bitmap(lfirst(lc), gates, relid);
			break;
		case T_BitmapOr:
			foreach(lc, ((BitmapOr *) plan)->bitmapplans)
				narrowed |= narrow_bitmap(lfirst(lc), gates, relid);
			break;
		default:
			break;
	}
	return narrowed;
}

/* The gate_any calls of a One-Time Filter that have a narrowing function. */
static List *
array_gates(List *gates)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, gates)
	{
		FuncExpr   *fn = lfirst(lc);
		Const	   *id;
		ArrayGate  *gate;

		if (!IsA(fn, FuncExpr) || list_length(fn->args) < 2)
			continue;
		id = linitial(fn->args);
		if (!IsA(id, Const) || id->constisnull || id->consttype != INT8OID)
			continue;
		gate = palloc(sizeof(ArrayGate));
		gate->call = fn;
		gate->defid = DatumGetInt64(id->constvalue);
		gate->elements_fn = bf_planner_elements_fn(fn->funcid);
		if (OidIsValid(gate->elements_fn))
			result = lappend(result, gate);
		else
			pfree(gate);
	}
	return result;
}

/*
 * Narrow the "column = ANY (keys)" index conditions of child, the scan
 * below a One-Time Filter of gate calls; rtable is the plan's.  True if
 * a condition was narrowed.
 */
bool
bf_gate_narrow(List *gates, Plan *child, List *rtable)
{
	List	   *agates;
	Oid			relid;
	bool		narrowed = false;

	if (child == NULL || child->parallel_aware ||
		!(IsA(child, IndexScan) || IsA(child, IndexOnlyScan) ||
		  IsA(child, BitmapHeapScan)))
		return false;
	agates = array_gates(gates);
	if (agates == NIL)
		return false;
	relid = rt_fetch(((Scan *) child)->scanrelid, rtable)->relid;
	switch (nodeTag(child))
	{
		case T_IndexScan:
			narrowed = narrow_conditions(((IndexScan *) child)->indexqual, agates,
										 relid, ((IndexScan *) child)->indexid);
			break;
		case T_IndexOnlyScan:
			narrowed = narrow_conditions(((IndexOnlyScan *) child)->indexqual, agates,
										 relid, ((IndexOnlyScan *) child)->indexid);
			break;
		case T_BitmapHeapScan:
			narrowed = narrow_bitmap(child->lefttree, agates, relid);
			break;
		default:
			break;
	}
	list_free_deep(agates);
	return narrowed;
}
