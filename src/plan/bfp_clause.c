/*
 * bfp_clause.c
 *		Which restriction and join clauses a gate can answer for, and with
 *		what key.
 *
 * A scan's clause
 *     column = value          (pg_catalog's "=")
 *     column = ANY (array)
 * can be gated by a filter of the column when
 *  - the value is known before the scan runs and cannot fail to evaluate
 *    (bfp_cannot_fail): a gate evaluates it even where the scan would never
 *    evaluate its condition (an empty table, LIMIT 0, an empty outer side);
 *    its statement parameters are checked again when the plan runs
 *    (bfp_params_safe: PL/pgSQL computes some when read, and may fail);
 *    or, in a join clause of a parameterized path, it is a column of an
 *    outer relation, which the nested loop passes in for each rescan;
 *  - the operator compares as the filter's keys are hashed
 *    (bfp_operator_agrees, bf_key_gate_mode);
 *  - the comparison's collation is deterministic (or the type has none).
 * Then a "no" of the filter for every key means the clause is false for
 * every row the scan could return.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "plan/bf_plan.h"
#include "value/bf_value.h"

/* The guarded column of the relation, under binary-compatible relabels? */
static bool
is_column(Node *node, Index rti, AttrNumber attnum)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node && IsA(node, Var) &&
		((Var *) node)->varno == rti &&
		((Var *) node)->varlevelsup == 0 &&
		((Var *) node)->varattno == attnum;
}

/*
 * Is the Param one an outer query level supplies to this one (an outer
 * query's column in a correlated subquery, or in a LATERAL subquery that
 * was not pulled up)?  Such Params are listed in the plan_params of the
 * level that supplies them while this level is planned; their values are
 * computed before this level runs.
 */
static bool
is_outer_param(PlannerInfo *root, Param *param)
{
	if (param->paramkind != PARAM_EXEC)
		return false;
	for (PlannerInfo *outer = root->parent_root; outer != NULL;
		 outer = outer->parent_root)
	{
		ListCell   *lc;

		foreach(lc, outer->plan_params)
		{
			if (((PlannerParamItem *) lfirst(lc))->paramId == param->paramid)
				return true;
		}
	}
	return false;
}

static bool
all_cannot_fail(PlannerInfo *root, List *args)
{
	ListCell   *lc;

	foreach(lc, args)
	{
		if (!bfp_cannot_fail(root, lfirst(lc)))
			return false;
	}
	return true;
}

/*
 * A call of a function that raises no error that depends on its arguments
 * (leakproof: the property PostgreSQL's security barriers rely on, e.g.
 * int4 to int8) and has one value for the statement (not volatile: a gate
 * evaluates it once, a sequential scan's filter per row), with a collation
 * if it takes strings.
 */
static bool
is_safe_call(PlannerInfo *root, Oid funcid, Oid inputcollid, List *args)
{
	ListCell   *lc;

	if (!get_func_leakproof(funcid) ||
		func_volatile(funcid) == PROVOLATILE_VOLATILE ||
		!all_cannot_fail(root, args))
		return false;

	/*
	 * A leakproof comparison of strings (text_larger) still fails when its
	 * inputs' implicit collations conflict and leave it none.
	 */
	if (!OidIsValid(inputcollid))
	{
		foreach(lc, args)
		{
			if (type_is_collatable(exprType(lfirst(lc))))
				return false;
		}
	}
	return true;
}

/*
 * Is the value known before the scan, and can it be had without an error?
 * A gate evaluates it where the scan may never evaluate its condition (an
 * empty table, LIMIT 0, an empty outer side), so only what cannot fail is
 * gated on: constants, the statement's parameters, outer query levels'
 * values, relabelings and leakproof functions of these, and
 * one-dimensional ARRAY[...] of them.  Not a cast that can fail ($1::int4
 * of a text parameter), arithmetic that can overflow or divide by zero,
 * nor an InitPlan's output (evaluating it runs the subquery, which the
 * scan of an empty table never does).
 */
bool
bfp_cannot_fail(PlannerInfo *root, Node *node)
{
	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_Const:
			return true;
		case T_Param:
			return ((Param *) node)->paramkind == PARAM_EXTERN ||
				is_outer_param(root, (Param *) node);
		case T_RelabelType:
			return bfp_cannot_fail(root, (Node *) ((RelabelType *) node)->arg);
		case T_FuncExpr:
			return !((FuncExpr *) node)->funcretset &&
				is_safe_call(root, ((FuncExpr *) node)->funcid,
							 ((FuncExpr *) node)->inputcollid,
							 ((FuncExpr *) node)->args);
		case T_OpExpr:
			set_opfuncid((OpExpr *) node);
			return !((OpExpr *) node)->opretset &&
				is_safe_call(root, ((OpExpr *) node)->opfuncid,
							 ((OpExpr *) node)->inputcollid,
							 ((OpExpr *) node)->args);
		case T_ArrayExpr:
			/* array parameters of different dimensions make no array */
			return !((ArrayExpr *) node)->multidims &&
				all_cannot_fail(root, ((ArrayExpr *) node)->elements);
		default:
			return false;
	}
}

/*
 * Does operator opno, with the column as its input colside (0 left, 1
 * right) and a value of type valtype as the other, compare as the filter's
 * keys do?
 */
bool
bfp_operator_agrees(Oid opno, int colside, Oid coltype, Oid colcoll, Oid valtype)
{
	HeapTuple	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	Form_pg_operator form;
	Oid			colin,
				valin;
	bool		ok;

	if (!HeapTupleIsValid(tup))
		return false;
	form = (Form_pg_operator) GETSTRUCT(tup);
	colin = colside == 0 ? form->oprleft : form->oprright;
	valin = colside == 0 ? form->oprright : form->oprleft;
	ok = form->oprnamespace == PG_CATALOG_NAMESPACE &&
		strcmp(NameStr(form->oprname), "=") == 0 &&
		bf_key_compares_as(getBaseType(coltype), colin);
	ReleaseSysCache(tup);
	if (!ok)
		return false;
	switch (bf_key_gate_mode(coltype, colcoll, valtype))
	{
		case BF_GATE_AS_COLUMN:
			/* a same-type "=": the value is read as the column */
			return valin == colin;
		case BF_GATE_AS_KEY:
			/* a cross-type "=" between types of the same key kind */
			return valin == getBaseType(valtype) && valin != colin;
		case BF_GATE_NONE:
			break;
	}
	return false;
}

/*
 * Does a comparison of a value of type typid under collation compare as the
 * filter's keys do?  A collatable type compared without a collation (its
 * inputs' implicit collations conflict) is an error when "=" is evaluated,
 * which a gate's "no" must not hide: no gate then.
 */
static bool
collation_agrees(Oid collation, Oid typid)
{
	if (!OidIsValid(collation))
		return !type_is_collatable(typid);
	return get_collation_isdeterministic(collation);
}

/*
 * Is the value a column of a relation in outer, which the nested loop above
 * a parameterized scan passes in (a PARAM_EXEC once planned), set before
 * each rescan?  Reading it cannot fail.
 */
static bool
is_outer_column(Node *node, Relids outer)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node && IsA(node, Var) &&
		((Var *) node)->varlevelsup == 0 &&
		bms_is_member(((Var *) node)->varno, outer);
}

/*
 * The key of a clause a filter of column attnum of relation rti (type
 * coltype, collation colcoll) can answer for, or NULL; *any: the key is an
 * array of keys (column = ANY (array)); *collation and *opno: the
 * comparison's.  outer: for a join clause that a parameterized path
 * enforces, the relations it is parameterized by, whose columns may be the
 * key of "column = key" (NULL for a restriction clause).
 */
Node *
bfp_clause_key(PlannerInfo *root, Expr *clause, Index rti, AttrNumber attnum,
			   Oid coltype, Oid colcoll, Relids outer, bool *any,
			   Oid *collation, Oid *opno)
{
	if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;

		for (int side = 0; side < 2; side++)
		{
			Node	   *col = list_nth(op->args, side);
			Node	   *val = list_nth(op->args, 1 - side);

			if (is_column(col, rti, attnum) &&
				(bfp_cannot_fail(root, val) || is_outer_column(val, outer)) &&
				collation_agrees(op->inputcollid, exprType(val)) &&
				bfp_operator_agrees(op->opno, side, coltype, colcoll, exprType(val)))
			{
				*any = false;
				*collation = op->inputcollid;
				*opno = op->opno;
				return val;
			}
		}
	}
	else if (IsA(clause, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *) clause)->useOr)
	{
		ScalarArrayOpExpr *sa = (ScalarArrayOpExpr *) clause;
		Node	   *col = linitial(sa->args);
		Node	   *arr = lsecond(sa->args);
		Oid			elemtype = get_element_type(exprType(arr));

		if (OidIsValid(elemtype) &&
			is_column(col, rti, attnum) && bfp_cannot_fail(root, arr) &&
			collation_agrees(sa->inputcollid, elemtype) &&
			bfp_operator_agrees(sa->opno, 0, coltype, colcoll, elemtype))
		{
			*any = true;
			*collation = sa->inputcollid;
			*opno = sa->opno;
			return arr;
		}
	}
	return NULL;
}

/*
 * Can every statement parameter (PARAM_EXTERN) of expr be read without an
 * error, with this execution's parameters?  A parameter list of values
 * (PREPARE, a protocol Bind, SQL functions) holds them already computed; a
 * dynamic one computes them when read (PL/pgSQL: a record's field fails
 * when the record is unassigned, has no such field or changed its type),
 * and is asked speculatively, as the planner asks it: a hook declines what
 * it could not fetch without risk.  A value of another type than the plan
 * expects would fail too.
 */
static bool
param_safe_walker(Node *node, ParamListInfo params)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN)
	{
		Param	   *p = (Param *) node;
		ParamExternData workspace;
		ParamExternData *prm;

		if (params == NULL || p->paramid <= 0 || p->paramid > params->numParams)
			return true;
		if (params->paramFetch != NULL)
			prm = params->paramFetch(params, p->paramid, true, &workspace);
		else
			prm = &params->params[p->paramid - 1];
		return prm == NULL || !OidIsValid(prm->ptype) || prm->ptype != p->paramtype;
	}
	return expression_tree_walker(node, param_safe_walker, params);
}

bool
bfp_params_safe(Node *expr, ParamListInfo params)
{
	return !param_safe_walker(expr, params);
}
