/*
 * bfp_path.c
 *		BloomGuard paths: each path of a relation wrapped in a path that
 *		checks the relation's guard indexes first.
 *
 * For a base relation (a table, a partition, an inheritance child) with a
 * guard index on a column that a restriction clause compares with a value
 * known before the scan (bfp_clause.c), every path, parameterized or not,
 * partial or not, is gated; so is a parameterized path (a nested loop's
 * inner side) whose join clauses compare the column with an outer
 * relation's column, the key the nested loop sets for each rescan.  Each
 * gated path becomes a CustomPath with that path as its only child and
 * the clause's value as its key.  Its plan, a CustomScan "BloomGuard"
 * (bfp_scan.c), checks the guard once per (re)scan and runs the child only
 * when the guard answers "maybe".  When it answers "no" for every key, the
 * clause is false for every row of the relation that the scan's snapshot
 * can see (every such row had its key set in the guard before it
 * committed), so the scan would return no row.
 *
 * The paths are wrapped where they are, not added beside: the planner
 * cannot know how often a key is absent (its estimate of a lookup's rows is
 * at least one), so a gated path is costed as its child plus the check, and
 * the choice among the relation's paths is the planner's as without gates.
 *
 * No gate: where the relation has row-level security (a "no" may not
 * depend on rows the caller cannot see), TABLESAMPLE (its arguments are
 * checked when the scan starts, on any table), and in a plan made while
 * the library was being loaded (bfp_hook.c).  Which guard indexes the planner sees is PostgreSQL's
 * rule: valid ones, and not one whose indcheckxmin is too new for the
 * plan's transaction.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "index/bf_index.h"
#include "plan/bf_plan.h"
#include "value/bf_value.h"

/* What a check of a guard costs, as a read of a cached page does. */
#define BFP_CHECK_COST	(25 * cpu_operator_cost)

static Plan *plan_gate(PlannerInfo *root, RelOptInfo *rel,
					   CustomPath *best_path, List *tlist, List *clauses,
					   List *custom_plans);

static const CustomPathMethods gate_path_methods = {
	.CustomName = BFP_NODE_NAME,
	.PlanCustomPath = plan_gate,
};

/* Is this index a guard on a plain column? */
static bool
is_guard(const IndexOptInfo *index)
{
	return index->amcostestimate == bfi_costestimate &&
		index->ncolumns == 1 && index->indexkeys[0] > 0;
}

/* Has the relation a guard index the planner may use? */
bool
bfp_rel_has_guard(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->indexlist)
	{
		if (is_guard(lfirst(lc)))
			return true;
	}
	return false;
}

static bool
has_row_security(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		rls;

	if (!HeapTupleIsValid(tup))
		return true;
	rls = ((Form_pg_class) GETSTRUCT(tup))->relrowsecurity;
	ReleaseSysCache(tup);
	return rls;
}

/*
 * The gates made so far for a relation: keys, the lists of the plan's
 * custom_private, and what narrowing needs (the clauses' operators, the
 * guarded columns, the guards' access method).
 */
typedef struct Gates
{
	List	   *keys;
	List	   *indexes;
	List	   *hashtypes;
	List	   *collations;
	List	   *any;
	List	   *opnos;
	List	   *attnums;
	Oid			amoid;
} Gates;

/*
 * Add the gates one guard index can answer for among the clauses
 * (RestrictInfos): restriction clauses, or (outer not NULL) the join clauses
 * a path parameterized by outer enforces.
 */
static void
gates_of_index(PlannerInfo *root, List *clauses, Relids outer, Index rti,
			   Oid relid, IndexOptInfo *index, Gates *gates)
{
	AttrNumber	attnum = index->indexkeys[0];
	Oid			coltype;
	int32		coltypmod;
	Oid			colcoll;
	ListCell   *lc;

	get_atttypetypmodcoll(relid, attnum, &coltype, &coltypmod, &colcoll);
	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst(lc);
		bool		any;
		Oid			collation;
		Oid			opno;
		Oid			valtype;
		Node	   *key;

		if (rinfo->pseudoconstant)
			continue;
		key = bfp_clause_key(root, rinfo->clause, rti, attnum, coltype, colcoll,
							 outer, &any, &collation, &opno);
		if (key == NULL)
			continue;
		valtype = any ? get_element_type(exprType(key)) : exprType(key);
		switch (bf_key_gate_mode(coltype, colcoll, valtype))
		{
			case BF_GATE_AS_COLUMN:
				gates->hashtypes = lappend_oid(gates->hashtypes, coltype);
				break;
			case BF_GATE_AS_KEY:
				gates->hashtypes = lappend_oid(gates->hashtypes, valtype);
				break;
			case BF_GATE_NONE:
				continue;
		}
		gates->keys = lappend(gates->keys, key);
		gates->indexes = lappend_oid(gates->indexes, index->indexoid);
		gates->collations = lappend_oid(gates->collations, colcoll);
		gates->any = lappend_int(gates->any, any ? 1 : 0);
		gates->opnos = lappend_oid(gates->opnos, opno);
		gates->attnums = lappend_int(gates->attnums, attnum);
		gates->amoid = index->relam;
	}
}

/*
 * A CustomPath with sub as its only child, in its place: the same target,
 * parameterization, rows, pathkeys and parallel safety (never parallel-aware
 * itself), costing sub's plus extra.  Shared by the gates and BloomBatch.
 */
CustomPath *
bfp_wrapper_path(RelOptInfo *rel, Path *sub, Cost extra,
				 const CustomPathMethods *methods)
{
	CustomPath *cp = makeNode(CustomPath);

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = rel;
	cp->path.pathtarget = sub->pathtarget;
	cp->path.param_info = sub->param_info;
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = sub->parallel_safe;
	cp->path.parallel_workers = sub->parallel_workers;
	cp->path.rows = sub->rows;
#if PG_VERSION_NUM >= 180000
	cp->path.disabled_nodes = sub->disabled_nodes;
#endif
	cp->path.startup_cost = sub->startup_cost + extra;
	cp->path.total_cost = sub->total_cost + extra;
	cp->path.pathkeys = sub->pathkeys;
	cp->custom_paths = list_make1(sub);
	cp->methods = methods;
	return cp;
}

/* The gate path over one path of the relation. */
static Path *
gate_path(RelOptInfo *rel, Path *sub, const Gates *gates, bool partial)
{
	CustomPath *cp = bfp_wrapper_path(rel, sub,
									  BFP_CHECK_COST * list_length(gates->keys),
									  &gate_path_methods);
	List	   *priv = NIL;

	if (ExecSupportsMarkRestore(sub))
		cp->flags |= CUSTOMPATH_SUPPORT_MARK_RESTORE;
	priv = list_make5(gates->indexes, gates->hashtypes, gates->collations,
					  gates->any,
					  makeInteger(partial ? BFP_FLAG_PARALLEL_CHILD : 0));
	cp->custom_private = list_make3(gates->keys, priv,
									list_make3(gates->opnos, gates->attnums,
											   list_make1_oid(gates->amoid)));
	return (Path *) cp;
}

static bool
is_gate_path(Path *path)
{
	return IsA(path, CustomPath) &&
		((CustomPath *) path)->methods == &gate_path_methods;
}

/* The relation's gates, for every guard index. */
static void
gates_of_rel(PlannerInfo *root, RelOptInfo *rel, List *clauses, Relids outer,
			 Index rti, Oid relid, Gates *gates)
{
	ListCell   *lc;

	foreach(lc, rel->indexlist)
	{
		if (is_guard(lfirst(lc)))
			gates_of_index(root, clauses, outer, rti, relid, lfirst(lc), gates);
	}
}

/*
 * The gates of one path: the relation's, and for a parameterized path those
 * of the join clauses it enforces ("column = outer column", its key set by
 * the nested loop for each rescan).
 */
static Gates
gates_of_path(PlannerInfo *root, RelOptInfo *rel, Path *path, Index rti,
			  Oid relid, const Gates *base)
{
	Gates		gates = *base;

	if (path->param_info == NULL || path->param_info->ppi_clauses == NIL)
		return gates;
	gates.keys = list_copy(base->keys);
	gates.indexes = list_copy(base->indexes);
	gates.hashtypes = list_copy(base->hashtypes);
	gates.collations = list_copy(base->collations);
	gates.any = list_copy(base->any);
	gates.opnos = list_copy(base->opnos);
	gates.attnums = list_copy(base->attnums);
	gates_of_rel(root, rel, path->param_info->ppi_clauses, PATH_REQ_OUTER(path),
				 rti, relid, &gates);
	return gates;
}

/* Every path of the list with a gate, wrapped (the list's order stays). */
static void
wrap_paths(PlannerInfo *root, List *paths, RelOptInfo *rel, Index rti,
		   Oid relid, const Gates *base, bool partial)
{
	ListCell   *lc;

	foreach(lc, paths)
	{
		Gates		gates;

		if (is_gate_path(lfirst(lc)))
			continue;
		gates = gates_of_path(root, rel, lfirst(lc), rti, relid, base);
		if (gates.keys != NIL)
			lfirst(lc) = gate_path(rel, lfirst(lc), &gates, partial);
	}
}

void
bfp_gate_paths(PlannerInfo *root, RelOptInfo *rel, Index rti,
			   RangeTblEntry *rte)
{
	Gates		gates = {0};

	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION ||
		rte->inh || rte->tablesample != NULL || IsBinaryUpgrade ||
		(rel->reloptkind != RELOPT_BASEREL &&
		 rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		IS_DUMMY_REL(rel) ||
		!bfp_rel_has_guard(rel) || has_row_security(rte->relid))
		return;
	gates_of_rel(root, rel, rel->baserestrictinfo, NULL, rti, rte->relid,
				 &gates);
	wrap_paths(root, rel->pathlist, rel, rti, rte->relid, &gates, false);
	wrap_paths(root, rel->partial_pathlist, rel, rti, rte->relid, &gates,
			   true);
}

/*
 * Narrow the child's index conditions "column = ANY (keys)" of the array
 * gates (bfp_narrow.c), unless the child is parallel-aware.
 */
static void
narrow_child(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			 Plan *child)
{
	List	   *keys = linitial(best_path->custom_private);
	List	   *priv = lsecond(best_path->custom_private);
	List	   *extra = lthird(best_path->custom_private);
	int			n = list_length(keys);
	BfpNarrowGate *gates;
	int			flags = intVal(list_nth(priv, BFP_PRIV_FLAGS));

	if (flags & BFP_FLAG_PARALLEL_CHILD)
		return;
	gates = palloc0(sizeof(BfpNarrowGate) * n);
	for (int i = 0; i < n; i++)
	{
		if (list_nth_int(list_nth(priv, BFP_PRIV_ANY), i) == 0)
			continue;
		gates[i].guard = list_nth_oid(list_nth(priv, BFP_PRIV_INDEXES), i);
		gates[i].amoid = linitial_oid(lthird(extra));
		gates[i].opno = list_nth_oid(linitial(extra), i);
		gates[i].attnum = (AttrNumber) list_nth_int(lsecond(extra), i);
		gates[i].keys = list_nth(keys, i);
	}
	(void) bfp_narrow_child(root, rel, child, gates, n);
	pfree(gates);
}

/*
 * The plan: the child's, under a BloomGuard that outputs the child's
 * targetlist (a physical tlist offered here would name columns the child
 * does not output; whatever projection is asked of this node later reads
 * the child's columns).  The child applies the relation's clauses, its
 * index conditions narrowed to the keys the guards may hold.
 */
static Plan *
plan_gate(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		  List *tlist, List *clauses, List *custom_plans)
{
	Plan	   *child = linitial(custom_plans);

	narrow_child(root, rel, best_path, child);
	return bfp_make_scan(copyObject(child->targetlist),
						 copyObject(linitial(best_path->custom_private)),
						 copyObject(lsecond(best_path->custom_private)),
						 child, rel->relids, ExecSupportsBackwardScan(child),
						 (best_path->flags & CUSTOMPATH_SUPPORT_MARK_RESTORE) != 0);
}
