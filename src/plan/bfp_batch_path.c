/*
 * bfp_batch_path.c
 *		BloomBatch paths: a sequential scan that checks a large filter,
 *		wrapped in a path whose node batches the checks.
 *
 * A check of a filter larger than the CPU's caches is one cache miss, and in
 * a scan nothing overlaps it: the next row's key is not known until the
 * check has answered.  So where one of a sequential scan's conditions is
 *     filter @> column    or    column <@ filter
 * with a filter known before the scan (a constant, a parameter, the result
 * of an InitPlan, or an outer relation's column that a nested loop passes
 * in), each such sequential scan path of the relation becomes a CustomPath
 * with the scan as its only child, costed as the scan (the answers are the
 * same; the node only overlaps their misses).  A join's check of a filter
 * column of another relation gets a sequential scan path parameterized by
 * that relation to wrap (add_join_check_paths).  Its plan, a CustomScan
 * "BloomBatch" (bfp_batch_scan.c), takes the scan's conditions, all of them
 * in their order, and its projection: the scan below only reads the columns
 * they need, so reading ahead runs no code of the query.
 *
 * The paths are wrapped where they are, as the gates' are (bfp_path.c), and
 * before them: a gate then wraps the BloomBatch path.  No node for a
 * cursor's plan (bfp_hook.c: fetched a few rows at a time, and a SCROLL
 * cursor's would be read through a Material node), for a relation whose output or
 * conditions need the whole row (the scan would form it for every row read
 * ahead), and where a condition is pseudo-constant (the scan's plan would
 * be a gating Result, not a scan).
 */
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/restrictinfo.h"

#include "plan/bf_plan.h"
#include "value/bf_value.h"

static Plan *plan_batch(PlannerInfo *root, RelOptInfo *rel,
						CustomPath *best_path, List *tlist, List *clauses,
						List *custom_plans);

static const CustomPathMethods batch_path_methods = {
	.CustomName = BFP_BATCH_NODE_NAME,
	.PlanCustomPath = plan_batch,
};

/*
 * A call's function, arguments and input collation; false if the
 * expression is not a call.
 */
bool
bfp_call_parts(Node *expr, Oid *funcid, List **args, Oid *collation)
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
 * A filter argument known before the scan: a constant, a parameter, or
 * (outer not NULL: a path's clause) a column of a relation in outer, which
 * the nested loop above passes in as a parameter.
 */
static bool
filter_known(Node *node, Relids outer)
{
	if (IsA(node, Const))
		return !((Const *) node)->constisnull;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind == PARAM_EXTERN ||
			((Param *) node)->paramkind == PARAM_EXEC;
	return IsA(node, Var) && ((Var *) node)->varlevelsup == 0 &&
		bms_is_member(((Var *) node)->varno, outer);
}

/* The column a check's key argument reads: a Var, possibly relabeled. */
static Var *
key_column(Node *arg, Index rti)
{
	Var		   *var;

	if (IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	if (!IsA(arg, Var))
		return NULL;
	var = (Var *) arg;
	if (var->varno != rti || var->varlevelsup != 0 || var->varattno <= 0)
		return NULL;
	return var;
}

/*
 * Is the condition a check of one key, bloom_contains or bloom_contained
 * (operators @> and <@, their anyelement or bloom_literal forms), of a
 * known filter against a column of the relation?  If so, the key's column
 * and the check's shape.
 */
static bool
is_batch_check(Node *clause, Index rti, Relids outer, Var **key,
			   BfpBatchCheck *check)
{
	Oid			funcid;
	List	   *args;
	Oid			collation;
	BfCheckFn	fn;

	if (!bfp_call_parts(clause, &funcid, &args, &collation) ||
		list_length(args) != 2)
		return false;
	fn = bf_check_fn(funcid);
	switch (fn)
	{
		case BF_CHECK_FN_CONTAINS:
		case BF_CHECK_FN_CONTAINS_LITERAL:
			check->filter_argno = 0;
			check->key_argno = 1;
			break;
		case BF_CHECK_FN_CONTAINED:
		case BF_CHECK_FN_CONTAINED_LITERAL:
			check->filter_argno = 1;
			check->key_argno = 0;
			break;
		default:
			return false;
	}
	check->literal = fn == BF_CHECK_FN_CONTAINS_LITERAL ||
		fn == BF_CHECK_FN_CONTAINED_LITERAL;
	if (!filter_known(list_nth(args, check->filter_argno), outer))
		return false;
	/* a key the check refuses: its error is the check's to raise, or not */
	if (!bf_key_type_usable(exprType(list_nth(args, check->key_argno)),
							collation))
		return false;
	*key = key_column(list_nth(args, check->key_argno), rti);
	return *key != NULL;
}

/*
 * The columns the expression reads: does it read the whole row of rti, or
 * (other_rels) a column of another relation?
 */
static bool
reads_whole_row(Node *node, Index rti, bool other_rels)
{
	List	   *vars = pull_var_clause(node, PVC_RECURSE_AGGREGATES |
									   PVC_RECURSE_WINDOWFUNCS |
									   PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *var = lfirst(lc);

		if (var->varno == rti ? var->varattno == InvalidAttrNumber : other_rels)
			return true;
	}
	return false;
}

/*
 * May this path be batched: a plain sequential scan, one of whose clauses
 * (the relation's and, for a parameterized path, the join clauses it
 * enforces) is a batch check, none pseudo-constant, no whole row read?
 */
static bool
path_batchable(RelOptInfo *rel, Path *path)
{
	List	   *clauses = rel->baserestrictinfo;
	Relids		outer = PATH_REQ_OUTER(path);
	bool		found = false;
	ListCell   *lc;

	if (path->pathtype != T_SeqScan || !IsA(path, Path))
		return false;
	if (path->param_info)
		clauses = list_concat_copy(clauses, path->param_info->ppi_clauses);
	if (reads_whole_row((Node *) path->pathtarget->exprs, rel->relid, true))
		return false;
	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst(lc);
		Var		   *key;
		BfpBatchCheck check;

		if (rinfo->pseudoconstant ||
			reads_whole_row((Node *) rinfo->clause, rel->relid, false))
			return false;
		if (!found)
			found = is_batch_check((Node *) rinfo->clause, rel->relid, outer,
								   &key, &check);
	}
	return found;
}

static Path *
batch_path(RelOptInfo *rel, Path *sub)
{
	/* costed as the scan: the answers are the same, their misses overlap */
	CustomPath *cp = bfp_wrapper_path(rel, sub, 0, &batch_path_methods);

	cp->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	return (Path *) cp;
}

static void
wrap_paths(List *paths, RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, paths)
	{
		if (path_batchable(rel, lfirst(lc)))
			lfirst(lc) = batch_path(rel, lfirst(lc));
	}
}

/*
 * The base relation whose column the join clause's check takes its filter
 * from, or 0: a check of a filter column of one other base relation against
 * a column of rel, which the clause may be moved into a scan of rel to test.
 */
static Index
join_check_outer_rel(PlannerInfo *root, RelOptInfo *rel, RestrictInfo *rinfo)
{
	Node	   *clause = (Node *) rinfo->clause;
	Oid			funcid;
	List	   *args;
	Oid			collation;
	Var		   *filter;
	Var		   *key;
	BfpBatchCheck check;

	if (rinfo->pseudoconstant || !join_clause_is_movable_to(rinfo, rel) ||
		!bfp_call_parts(clause, &funcid, &args, &collation) ||
		list_length(args) != 2)
		return 0;
	filter = (Var *) linitial(args);
	if (!IsA(filter, Var))
		filter = (Var *) lsecond(args);
	if (!IsA(filter, Var) || filter->varlevelsup != 0 ||
		filter->varno == rel->relid || filter->varno >= root->simple_rel_array_size ||
		root->simple_rel_array[filter->varno] == NULL ||
		root->simple_rel_array[filter->varno]->reloptkind != RELOPT_BASEREL)
		return 0;
	if (!is_batch_check(clause, rel->relid, bms_make_singleton(filter->varno),
						&key, &check) ||
		list_nth(args, check.filter_argno) != (void *) filter)
		return 0;
	return filter->varno;
}

/*
 * A join's check, "f.bf @> r.k" with f's row the outer side of a nested
 * loop: the core evaluates it in the join, pair by pair, and makes no
 * sequential scan of r parameterized by f (it does so only for LATERAL
 * references).  Add one, with the check moved into it as a parameterized
 * path moves an index's join clause, wrapped in a BloomBatch path: the
 * nested loop then passes f's filter in, and the checks of each of its
 * rescans are batched.  The path is costed as that scan, which is the join's
 * cost of the check; the planner compares it with the join's other forms.
 */
static void
add_join_check_paths(PlannerInfo *root, RelOptInfo *rel)
{
	Relids		done = NULL;
	ListCell   *lc;

	foreach(lc, rel->joininfo)
	{
		RestrictInfo *rinfo = lfirst(lc);
		Index		outer_rel = join_check_outer_rel(root, rel, rinfo);
		Relids		required_outer;
		Path	   *path;

		if (outer_rel == 0 || bms_is_member(outer_rel, done))
			continue;
		done = bms_add_member(done, outer_rel);
		required_outer = bms_add_member(bms_copy(rel->lateral_relids),
										outer_rel);
		path = create_seqscan_path(root, rel, required_outer, 0);
		if (path->param_info != NULL &&
			list_member_ptr(path->param_info->ppi_clauses, rinfo) &&
			path_batchable(rel, path))
			add_path(rel, batch_path(rel, path));
	}
}

void
bfp_batch_paths(PlannerInfo *root, RelOptInfo *rel, Index rti,
				RangeTblEntry *rte)
{
	if (!bfp_batch_checks || rte->rtekind != RTE_RELATION ||
		rte->tablesample != NULL ||
		(rel->reloptkind != RELOPT_BASEREL &&
		 rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		IS_DUMMY_REL(rel))
		return;
	if (rel->baserestrictinfo != NIL)
	{
		wrap_paths(rel->pathlist, rel);
		wrap_paths(rel->partial_pathlist, rel);
	}
	if (rel->joininfo != NIL)
		add_join_check_paths(root, rel);
}

/* The resno of a Var in a targetlist, or 0. */
static AttrNumber
tlist_var_resno(List *tlist, Var *var)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *v = (Var *) tle->expr;

		if (IsA(v, Var) && v->varno == var->varno &&
			v->varattno == var->varattno)
			return tle->resno;
	}
	return 0;
}

/* Is every entry of the targetlist a column (not the whole row)? */
static bool
tlist_only_columns(List *tlist)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		Var		   *v = (Var *) ((TargetEntry *) lfirst(lc))->expr;

		if (!IsA(v, Var) || v->varattno == InvalidAttrNumber)
			return false;
	}
	return true;
}

/* Add the columns the expression reads that the targetlist lacks. */
static List *
add_columns(List *tlist, Node *node)
{
	List	   *vars = pull_var_clause(node, PVC_RECURSE_AGGREGATES |
									   PVC_RECURSE_WINDOWFUNCS |
									   PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *var = lfirst(lc);

		if (tlist_var_resno(tlist, var) == 0)
			tlist = lappend(tlist,
							makeTargetEntry((Expr *) copyObject(var),
											list_length(tlist) + 1, NULL,
											false));
	}
	return tlist;
}

/*
 * The plan: the scan's plan (its conditions already in their order, outer
 * columns replaced by the nested loop's parameters) as the child, reading
 * only; the node takes its conditions and outputs tlist (the node projects:
 * tlist is NIL when the caller puts its own there).  The child's output,
 * the node's scan tuple: tlist itself when it is only columns (a physical
 * targetlist spares the scan a projection), else the columns of the path's
 * target, which any projection asked of the node reads; then those the
 * conditions read.  setrefs.c makes the node's expressions read the scan
 * tuple.
 */
static Plan *
plan_batch(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		   List *tlist, List *clauses, List *custom_plans)
{
	Plan	   *scan = linitial(custom_plans);
	List	   *scan_tlist;
	BfpBatchCheck check = {0};
	Var		   *key = NULL;
	ListCell   *lc;

	if (IsA(scan, SeqScan))
	{
		foreach(lc, scan->qual)
		{
			if (is_batch_check(lfirst(lc), rel->relid, NULL, &key, &check))
				break;
			check.qualno++;
		}
	}

	/*
	 * Not the scan the path was made for (another extension's hook added a
	 * pseudo-constant clause after ours ran, and the scan's plan is a gating
	 * Result): the child keeps its conditions and output, which the node's
	 * is (the path's target, a superset of any projection asked of the
	 * node), and rows pass through.
	 */
	if (key == NULL)
	{
		check.qualno = -1;
		return bfp_make_batch_scan(copyObject(scan->targetlist), NIL, &check,
								   copyObject(scan->targetlist), scan,
								   rel->relids);
	}

	if (tlist != NIL && tlist_only_columns(tlist))
		scan_tlist = list_copy_deep(tlist);
	else
		scan_tlist = add_columns(NIL, (Node *) best_path->path.pathtarget->exprs);
	scan_tlist = add_columns(scan_tlist, (Node *) scan->qual);
	check.keyresno = tlist_var_resno(scan_tlist, key);
	Assert(check.keyresno > 0);

	return bfp_make_batch_scan(tlist, scan->qual, &check, scan_tlist, scan,
							   rel->relids);
}
