/*
 * bfp_narrow.c
 *		An IN list under a gate, narrowed to the keys its guard may hold.
 *
 * A gate on "column = ANY (keys)" answers "maybe" when any key may be in the
 * guard, and its child then searches the index for every key.  Where the
 * child is an index scan whose index condition is that clause (an Index
 * Scan, an Index Only Scan, a Bitmap Heap Scan over one Bitmap Index Scan),
 * the gate's plan wraps the condition's array in
 *     bloom_guard_elements(guard, keys)
 * which the scan evaluates as a runtime key on each (re)scan: the index is
 * searched for the keys the guard may hold, and only those.  This is done
 * on the child's finished plan by PlanCustomPath, which owns it: an index
 * path's clauses are the restriction clauses themselves, fixed before the
 * gate's path exists, and a plan is the first place where the index
 * condition and the gate meet.
 *
 * Not for a parallel-aware child: the participants of one parallel index
 * scan must search one array, and each evaluates the runtime keys itself
 * (a worker may find more keys "maybe" than the leader).
 *
 * bloom_guard_elements never raises an error the scan would not: it
 * returns the keys unchanged whenever it cannot answer (the guard gone or
 * incomplete, a caller not allowed to check it, keys it cannot hash).  A
 * key it drops is one no row visible to the scan holds, as for the gate.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "pgstat.h"
#include "optimizer/planmain.h"
#include "parser/parse_func.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "index/bf_index.h"
#include "plan/bf_plan.h"
#include "value/bf_value.h"

PG_FUNCTION_INFO_V1(bloom_guard_elements);

/*
 * bloom_guard_elements(regclass, anyarray) of the extension that owns the
 * guard's access method, or InvalidOid (an extension not yet updated).
 */
static Oid
elements_fn(Oid amoid)
{
	HeapTuple	tup = SearchSysCache1(AMOID, ObjectIdGetDatum(amoid));
	Oid			argtypes[2] = {REGCLASSOID, ANYARRAYOID};
	char	   *nspname;
	Oid			handler;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	handler = ((Form_pg_am) GETSTRUCT(tup))->amhandler;
	ReleaseSysCache(tup);
	nspname = get_namespace_name(get_func_namespace(handler));
	if (nspname == NULL)
		return InvalidOid;
	return LookupFuncName(list_make2(makeString(nspname),
									 makeString("bloom_guard_elements")),
						  2, argtypes, true);
}

/* The table column an index condition's Var (INDEX_VAR) stands for. */
static AttrNumber
index_var_column(PlannerInfo *root, RelOptInfo *rel, Oid indexid, Node *node)
{
	ListCell   *lc;

	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node == NULL || !IsA(node, Var) || ((Var *) node)->varno != INDEX_VAR)
		return InvalidAttrNumber;
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);
		int			col = ((Var *) node)->varattno;

		if (index->indexoid == indexid && col >= 1 && col <= index->ncolumns)
			return index->indexkeys[col - 1];
	}
	return InvalidAttrNumber;
}

/* The clause with its array wrapped in bloom_guard_elements(guard, array). */
static Node *
wrap_array(ScalarArrayOpExpr *sa, Oid guardoid, Oid fn)
{
	Node	   *arr;
	Const	   *guard;

	sa = copyObject(sa);
	arr = lsecond(sa->args);
	guard = makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
					  ObjectIdGetDatum(guardoid), false, true);
	lsecond(sa->args) = (Node *) makeFuncExpr(fn, exprType(arr),
											  list_make2(guard, arr),
											  InvalidOid, sa->inputcollid,
											  COERCE_EXPLICIT_CALL);
	return (Node *) sa;
}

/*
 * Wrap the array of the index condition "column = ANY (keys)" of a gate, in
 * quals and at the same place in its original form origs (the same list,
 * with table columns: what EXPLAIN shows and EvalPlanQual rechecks), if any.
 */
static bool
narrow_quals(PlannerInfo *root, RelOptInfo *rel, Oid indexid, List *quals,
			 List *origs, const BfpNarrowGate *gate, Oid fn)
{
	for (int i = 0; i < list_length(quals); i++)
	{
		ScalarArrayOpExpr *sa = list_nth(quals, i);

		if (!IsA(sa, ScalarArrayOpExpr) || !sa->useOr || sa->opno != gate->opno ||
			list_length(sa->args) != 2 ||
			!equal(lsecond(sa->args), gate->keys) ||
			index_var_column(root, rel, indexid, linitial(sa->args)) != gate->attnum)
			continue;
		list_nth_cell(quals, i)->ptr_value = wrap_array(sa, gate->guard, fn);
		if (origs != NIL && i < list_length(origs) &&
			IsA(list_nth(origs, i), ScalarArrayOpExpr))
			list_nth_cell(origs, i)->ptr_value =
				wrap_array(list_nth(origs, i), gate->guard, fn);
		return true;
	}
	return false;
}

/*
 * Narrow the index conditions of a gate's (not parallel-aware) child to the
 * keys its guards may hold; true if any was.
 */
bool
bfp_narrow_child(PlannerInfo *root, RelOptInfo *rel, Plan *child,
				 const BfpNarrowGate *gates, int ngates)
{
	Oid			fn = InvalidOid;
	bool		narrowed = false;

	if (IsA(child, BitmapHeapScan) && child->lefttree != NULL)
		child = child->lefttree;
	if (child->parallel_aware ||
		!(IsA(child, IndexScan) || IsA(child, IndexOnlyScan) ||
		  IsA(child, BitmapIndexScan)))
		return false;
	for (int i = 0; i < ngates; i++)
	{
		List	   *quals;
		List	   *origs = NIL;
		Oid			indexid;

		if (gates[i].keys == NULL)
			continue;
		if (!OidIsValid(fn))
			fn = elements_fn(gates[i].amoid);
		if (!OidIsValid(fn))
			return false;
		if (IsA(child, IndexScan))
		{
			quals = ((IndexScan *) child)->indexqual;
			origs = ((IndexScan *) child)->indexqualorig;
			indexid = ((IndexScan *) child)->indexid;
		}
		else if (IsA(child, IndexOnlyScan))
		{
			quals = ((IndexOnlyScan *) child)->indexqual;
			indexid = ((IndexOnlyScan *) child)->indexid;
		}
		else
		{
			quals = ((BitmapIndexScan *) child)->indexqual;
			origs = ((BitmapIndexScan *) child)->indexqualorig;
			indexid = ((BitmapIndexScan *) child)->indexid;
		}
		narrowed |= narrow_quals(root, rel, indexid, quals, origs, &gates[i], fn);
	}
	if (narrowed)
		record_plan_function_dependency(root, fn);
	return narrowed;
}

/* ---------------------------------------------------------------------
 * bloom_guard_elements
 * ---------------------------------------------------------------------
 */

/* A call site's resolution, valid for one guard, role and element type. */
typedef struct ElementsSite
{
	Oid			indexoid;
	Oid			userid;
	Oid			elemtype;
	bool		usable;			/* may answer (access, key rule) */
	BfKeyType	kt;
} ElementsSite;

static ElementsSite *
elements_site(FunctionCallInfo fcinfo, Relation index, Oid elemtype)
{
	ElementsSite *site = fcinfo->flinfo->fn_extra;
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), 0);
	Oid			collation = PG_GET_COLLATION();

	if (site != NULL && site->indexoid == RelationGetRelid(index) &&
		site->userid == GetUserId() && site->elemtype == elemtype)
		return site;
	if (site == NULL)
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ElementsSite));
	fcinfo->flinfo->fn_extra = site;
	site->indexoid = RelationGetRelid(index);
	site->userid = GetUserId();
	site->elemtype = elemtype;
	site->usable = false;
	if (!bfi_may_check(index) ||
		(OidIsValid(collation) && !get_collation_isdeterministic(collation)) ||
		index->rd_index->indkey.values[0] == 0)
		return site;
	switch (bf_key_gate_mode(att->atttypid, index->rd_indcollation[0], elemtype))
	{
		case BF_GATE_AS_COLUMN:
			bf_key_type_init(&site->kt, att->atttypid, index->rd_indcollation[0],
							 InvalidOid);
			break;
		case BF_GATE_AS_KEY:
			bf_key_type_init(&site->kt, elemtype, index->rd_indcollation[0],
							 InvalidOid);
			break;
		case BF_GATE_NONE:
			return site;
	}
	site->usable = true;
	return site;
}

/* The keys of arr the guard may hold (and the NULLs), as a new array. */
static ArrayType *
maybe_elements(Relation index, ElementsSite *site, ArrayType *arr)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			kept = 0;
	int			dims[1];
	int			lbs[1] = {1};

	get_typlenbyvalalign(site->elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, site->elemtype, typlen, typbyval, typalign,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		BfHash		hashes[BF_KEY_MAX_PROBES];
		int			nh;

		if (!nulls[i])
		{
			nh = bf_key_probe_hashes(&site->kt, elems[i], BF_LAYOUT_BLOCKED, hashes);
			if (!bfi_probe_key(index, site->kt.kind, hashes, nh))
				continue;
		}
		elems[kept] = elems[i];
		nulls[kept] = nulls[i];
		kept++;
	}
	pgstat_count_index_scan(index);
	if (kept == n)
		return arr;
	dims[0] = kept;
	return construct_md_array(elems, nulls, kept > 0 ? 1 : 0, dims, lbs,
							  site->elemtype, typlen, typbyval, typalign);
}

/*
 * bloom_guard_elements(guard, keys): the keys without those the guard
 * certainly does not hold (one-dimensional; NULL elements stay), or the
 * keys as they are whenever it cannot answer.
 */
Datum
bloom_guard_elements(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(1);
	Relation	index = try_relation_open(PG_GETARG_OID(0), AccessShareLock);
	ArrayType  *result = arr;
	ElementsSite *site;

	if (index == NULL)
		PG_RETURN_ARRAYTYPE_P(arr);
	if (bfi_is_guard(index) && index->rd_rel->relkind == RELKIND_INDEX &&
		index->rd_index->indisvalid && index->rd_index->indisready &&
		ARR_NDIM(arr) <= 1)
	{
		site = elements_site(fcinfo, index, ARR_ELEMTYPE(arr));
		if (site->usable)
			result = maybe_elements(index, site, arr);
	}
	relation_close(index, NoLock);
	PG_RETURN_ARRAYTYPE_P(result);
}
