/*
 * bf_planner.c
 *		Planner guards: where a scan's condition compares a guarded column
 *		with a value known before the scan runs, the plan checks the shared
 *		filter once first and skips the scan when it answers "no".
 *
 * The set_rel_pathlist hook looks at every base relation (every partition
 * and inheritance child of an expanded parent too) that is a table guarded
 * itself or through an ancestor.  For each restriction clause
 *     column = value          (pg_catalog's "=")
 *     column = ANY (array)
 * where value is known before the scan and cannot fail to evaluate (a
 * constant, a parameter, an outer query level's value; see cannot_fail: a
 * gate evaluates it even where the scan would never evaluate its
 * condition), it adds a pseudo-constant
 * clause bloom_shared_gate(definition id, value) (bloom_shared_gate_any for
 * an array); createplan.c turns it into a gating Result node above the scan:
 * EXPLAIN shows it as a One-Time Filter, evaluated once per (re)scan.  When
 * it is false the scan returns no rows, which is what the scan would have
 * returned: the clause it came from is one of the scan's own, and the
 * filter holds the key of every row version any snapshot may see.
 *
 * A gate is added only when the filter's keys agree with the operator: the
 * operator is pg_catalog's "=", it compares the column as the column's keys
 * are hashed, the value's type is one bloom_shared_gate hashes (see
 * bf_key_gate_mode), and the comparison's collation is deterministic.
 * Tables with row-level security get no gate.  A plan with gates depends
 * on the configuration table, so that changes of the guards (which write
 * it) make it again; other plans depend on their tables only, whose guard
 * triggers bloom_guard and bloom_unguard create and drop.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "bf_keyconv.h"
#include "bf_plan.h"
#include "bf_shared.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* the gate functions of the installed extension, while bf_def_epoch stays */
static uint64 gate_fn_epoch = 0;
static Oid	gate_fn = InvalidOid;
static Oid	gate_any_fn = InvalidOid;
static Oid	gate_part_fn = InvalidOid;	/* (definition, partition, key) */
static Oid	gate_part_any_fn = InvalidOid;
/* the narrowing of "column = ANY (keys)" (bf_gate_narrow.c), if installed */
static Oid	elements_fn = InvalidOid;
static Oid	elements_part_fn = InvalidOid;

#if PG_VERSION_NUM >= 160000
#define bf_make_gate_rinfo(root, clause, relids) \
	make_restrictinfo((root), (clause), true, false, false, true, 0, \
					  (relids), NULL, NULL)
#else
#define bf_make_gate_rinfo(root, clause, relids) \
	make_restrictinfo((root), (clause), true, false, true, 0, \
					  (relids), NULL, NULL)
#endif

static Oid
lookup_gate_fn(Oid nsp, const char *name, Oid argtype, bool partition)
{
	Oid			argtypes[3] = {INT8OID, argtype, InvalidOid};
	char	   *nspname = get_namespace_name(nsp);

	if (partition)
	{
		argtypes[1] = REGCLASSOID;
		argtypes[2] = argtype;
	}

	if (nspname == NULL)
		return InvalidOid;		/* the schema was dropped meanwhile */
	return LookupFuncName(list_make2(makeString(nspname),
									 makeString(pstrdup(name))),
						  partition ? 3 : 2, argtypes, true);
}

/* Are the gate functions there?  (An extension updated to 1.1 has them.) */
static bool
gate_functions(void)
{
	if (gate_fn_epoch != bf_def_epoch)
	{
		Oid			nsp = bf_extension_schema(true);

		gate_fn = InvalidOid;
		gate_any_fn = InvalidOid;
		gate_part_fn = InvalidOid;
		gate_part_any_fn = InvalidOid;
		elements_fn = InvalidOid;
		elements_part_fn = InvalidOid;
		if (OidIsValid(nsp))
		{
			gate_fn = lookup_gate_fn(nsp, "bloom_shared_gate", ANYELEMENTOID, false);
			gate_any_fn = lookup_gate_fn(nsp, "bloom_shared_gate_any", ANYARRAYOID, false);
			gate_part_fn = lookup_gate_fn(nsp, "bloom_shared_gate", ANYELEMENTOID, true);
			gate_part_any_fn = lookup_gate_fn(nsp, "bloom_shared_gate_any", ANYARRAYOID, true);
			elements_fn = lookup_gate_fn(nsp, "bloom_shared_gate_elements", ANYARRAYOID, false);
			elements_part_fn = lookup_gate_fn(nsp, "bloom_shared_gate_elements", ANYARRAYOID, true);
		}
		/* not found (CREATE EXTENSION under way): look again next time */
		if (OidIsValid(gate_fn) && OidIsValid(gate_any_fn) &&
			OidIsValid(gate_part_fn) && OidIsValid(gate_part_any_fn))
			gate_fn_epoch = bf_def_epoch;
	}
	return OidIsValid(gate_fn) && OidIsValid(gate_any_fn) &&
		OidIsValid(gate_part_fn) && OidIsValid(gate_part_any_fn);
}

/* Is funcid one of the installed extension's gate functions? */
bool
bf_planner_is_gate(Oid funcid)
{
	return OidIsValid(funcid) && gate_functions() &&
		(funcid == gate_fn || funcid == gate_any_fn ||
		 funcid == gate_part_fn || funcid == gate_part_any_fn);
}

/*
 * Is funcid bloom_shared_gate(definition_id, partition, key) or (*any)
 * bloom_shared_gate_any(definition_id, partition, keys)?
 */
bool
bf_planner_is_partition_gate(Oid funcid, bool *any)
{
	if (!OidIsValid(funcid) || !gate_functions())
		return false;
	*any = funcid == gate_part_any_fn;
	return funcid == gate_part_fn || funcid == gate_part_any_fn;
}

/*
 * The function that narrows the keys of a gate_any call funcid to the
 * "maybe" ones (same arguments), or InvalidOid.
 */
Oid
bf_planner_elements_fn(Oid funcid)
{
	if (!OidIsValid(funcid) || !gate_functions())
		return InvalidOid;
	if (funcid == gate_any_fn)
		return elements_fn;
	if (funcid == gate_part_any_fn)
		return elements_part_fn;
	return InvalidOid;
}

/*
 * The table and the tables whose guards cover it: the parents through
 * which the planner reached it, and, for a partition, its ancestors.
 */
static List *
guarding_tables(PlannerInfo *root, Index rti, Oid relid)
{
	List	   *result = list_make1_oid(relid);
	Oid			top = relid;
	Index		cur = rti;

	while (root->append_rel_array != NULL && root->append_rel_array[cur] != NULL)
	{
		RangeTblEntry *parent;

		cur = root->append_rel_array[cur]->parent_relid;
		parent = planner_rt_fetch(cur, root);
		if (parent->rtekind != RTE_RELATION)
			break;
		result = lappend_oid(result, parent->relid);
		top = parent->relid;
	}
	if (get_rel_relispartition(top))
		result = list_concat(result, get_partition_ancestors(top));
	return result;
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
 * bloom_shared_gate[_any](definition, value), or, for a partition of a
 * table guarded per partition, bloom_shared_gate[_any](definition,
 * partition, value).
 */
static Expr *
make_gate(bool any, int64 defid, Oid member, Node *value, Oid collation)
{
	Const	   *id = makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
							   Int64GetDatum(defid), false, FLOAT8PASSBYVAL);
	List	   *args = list_make1(id);
	Oid			fn;

	if (OidIsValid(member))
	{
		args = lappend(args, makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
									   ObjectIdGetDatum(member), false, true));
		fn = any ? gate_part_any_fn : gate_part_fn;
	}
	else
		fn = any ? gate_any_fn : gate_fn;
	args = lappend(args, copyObject(value));
	return (Expr *) makeFuncExpr(fn, BOOLOID, args, InvalidOid, collation,
								 COERCE_EXPLICIT_CALL);
}

/* The gate for one restriction clause, or NULL. */
static Expr *
gate_for_clause(PlannerInfo *root, Expr *clause, Index rti, AttrNumber attnum,
				Oid coltype, Oid colcoll, int64 defid, Oid member)
{
	bool		any;
	Oid			collation;
	Oid			opno;
	Node	   *key = bfp_clause_key(root, clause, rti, attnum, coltype, colcoll,
									 NULL, &any, &collation, &opno);

	return key ? make_gate(any, defid, member, key, collation) : NULL;
}

/* Add a pseudo-constant clause to the relation's restrictions. */
static void
add_gate(PlannerInfo *root, RelOptInfo *rel, Expr *gate)
{
	RestrictInfo *rinfo = bf_make_gate_rinfo(root, gate, rel->relids);
	List	   *before = rel->baserestrictinfo;
	ListCell   *lc;

	/* an index scan's clauses are its index's copy of the list */
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);

		if (index->indrestrictinfo != before)
			index->indrestrictinfo = lappend(index->indrestrictinfo, rinfo);
	}
	rel->baserestrictinfo = lappend(rel->baserestrictinfo, rinfo);
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);

		if (index->indrestrictinfo == before)
			index->indrestrictinfo = rel->baserestrictinfo;
	}
	root->hasPseudoConstantQuals = true;
}

/* Add the gates of a definition to the relation; true if there are any. */
static bool
add_gates_of(PlannerInfo *root, RelOptInfo *rel, Index rti, Oid relid,
			 const BfDefinition *def)
{
	AttrNumber	attnum = get_attnum(relid, NameStr(def->column_name));
	Oid			coltype;
	int32		coltypmod;
	Oid			colcoll;
	List	   *gates = NIL;
	ListCell   *lc;
	/* a guard on a partitioned table: this partition's own filter */
	Oid			member = bf_tree_per_partition(def->relid) ? relid : InvalidOid;

	if (attnum == InvalidAttrNumber)
		return false;
	get_atttypetypmodcoll(relid, attnum, &coltype, &coltypmod, &colcoll);
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst(lc);
		Expr	   *gate;

		if (rinfo->pseudoconstant)
			continue;
		gate = gate_for_clause(root, rinfo->clause, rti, attnum, coltype,
							   colcoll, def->id, member);
		if (gate)
			gates = lappend(gates, gate);
	}
	foreach(lc, gates)
		add_gate(root, rel, lfirst(lc));
	return gates != NIL;
}

static void
bf_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					RangeTblEntry *rte)
{
	List	   *defs;
	List	   *guarding;
	Oid			cfgoid;
	bool		gated = false;
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	if (!bfp_planner_guards || !bf_shared_available() || IsBinaryUpgrade ||
		rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION || rte->inh ||
		(rel->reloptkind != RELOPT_BASEREL &&
		 rel->reloptkind != RELOPT_OTHER_MEMBER_REL))
		return;
	/*
	 * A sample scan checks its TABLESAMPLE arguments when it starts, on any
	 * table, even an empty one: skipping it would hide their errors.
	 */
	if (rel->baserestrictinfo == NIL || rte->tablesample != NULL)
		return;
	/* a guard index supersedes a 1.1 guard of the table (src/plan/) */
	if (bfp_rel_has_guard(rel))
		return;
	defs = bf_gate_definitions(&cfgoid);
	if (defs == NIL || !gate_functions() || has_row_security(rte->relid))
		return;
	guarding = guarding_tables(root, rti, rte->relid);
	foreach(lc, defs)
	{
		BfDefinition *def = lfirst(lc);

		if (list_member_oid(guarding, def->relid))
			gated |= add_gates_of(root, rel, rti, rte->relid, def);
	}
	list_free(guarding);
	list_free_deep(defs);

	/*
	 * A gated plan is made again when the guards change (a gate of a guard
	 * that is gone answers "maybe", but its scan should not pay for it).
	 * A plan without gates needs no such dependency: it is correct as it
	 * is, and guarding or unguarding a table creates or drops the table's
	 * guard triggers, which invalidates the plans that scan it.
	 */
	if (gated && !list_member_oid(root->glob->relationOids, cfgoid))
		root->glob->relationOids = lappend_oid(root->glob->relationOids, cfgoid);
}

static void
bf_planner_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(bf_gate_shmem_size());
}

static void
bf_planner_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bf_gate_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/* From bf_shared_init, during shared_preload_libraries. */
void
bf_planner_init(void)
{
	bf_writers_init();
	bf_gate_scan_init();
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = bf_set_rel_pathlist;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bf_planner_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bf_planner_shmem_startup;
}
