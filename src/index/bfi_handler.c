/*
 * bfi_handler.c
 *		The access method's handler and the callbacks that are not about
 *		pages: options, cost (never used), operator class validation, and
 *		the scan callbacks a guard does not support.
 */
#include "postgres.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "nodes/pathnodes.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "index/bf_index.h"

PG_FUNCTION_INFO_V1(bloomguard_handler);

static relopt_kind bfi_relopt_kind;

/* Register the options (from _PG_init, before any index is opened). */
void
bfi_init(void)
{
	bfi_relopt_kind = add_reloption_kind();
	add_real_reloption(bfi_relopt_kind, "fpr",
					   "Target false-positive rate of the guard",
					   BFI_DEFAULT_FPR, 1e-12, 0.5, AccessExclusiveLock);
	add_int_reloption(bfi_relopt_kind, "capacity",
					  "Keys the guard's first layer is sized for (0: twice the table's estimated rows)",
					  0, 0, PG_INT32_MAX, AccessExclusiveLock);
}

/* Is this relation an index (or partitioned index) of this access method? */
bool
bfi_is_guard(Relation index)
{
	return (index->rd_rel->relkind == RELKIND_INDEX ||
			index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX) &&
		index->rd_indam != NULL && index->rd_indam->ambuild == bfi_build;
}

static bytea *
bfi_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fpr", RELOPT_TYPE_REAL, offsetof(BfiOptions, fpr)},
		{"capacity", RELOPT_TYPE_INT, offsetof(BfiOptions, capacity)},
	};

	return (bytea *) build_reloptions(reloptions, validate, bfi_relopt_kind,
									  sizeof(BfiOptions), tab, lengthof(tab));
}

/*
 * The planner never builds a path on a guard (no amgettuple, no
 * amgetbitmap), so this is never asked; if it were, the guard is useless
 * as a scan.  (The planner's gates know a guard's IndexOptInfo by this
 * function.)
 */
void
bfi_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				 Cost *indexStartupCost, Cost *indexTotalCost,
				 Selectivity *indexSelectivity, double *indexCorrelation,
				 double *indexPages)
{
	*indexStartupCost = 1.0e10;
	*indexTotalCost = 1.0e10;
	*indexSelectivity = 1.0;
	*indexCorrelation = 0.0;
	*indexPages = 0.0;
}

static IndexScanDesc
bfi_beginscan(Relation index, int nkeys, int norderbys)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("bloomguard index \"%s\" cannot be scanned",
					RelationGetRelationName(index)),
			 errdetail("A guard answers whether its column may hold a key; it returns no rows."),
			 errhint("Check a key with bloom_guard_contains().")));
	return NULL;				/* keep the compiler quiet */
}

static void
bfi_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
		   int norderbys)
{
	elog(ERROR, "bloomguard indexes cannot be scanned");
}

static void
bfi_endscan(IndexScanDesc scan)
{
	elog(ERROR, "bloomguard indexes cannot be scanned");
}

/*
 * An operator class of a guard has one operator, an equality of strategy
 * 1, and no support function: keys are hashed by their type's canonical
 * bytes.
 */
static bool
bfi_validate(Oid opclassoid)
{
	HeapTuple	tup;
	Form_pg_opclass form;
	Oid			opfamily;
	char	   *name;
	CatCList   *ops;
	CatCList   *procs;
	bool		ok = true;

	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	form = (Form_pg_opclass) GETSTRUCT(tup);
	opfamily = form->opcfamily;
	name = pstrdup(NameStr(form->opcname));
	ReleaseSysCache(tup);

	ops = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamily));
	for (int i = 0; i < ops->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&ops->members[i]->tuple);

		if (op->amopstrategy != 1 || op->amoppurpose != AMOP_SEARCH ||
			!check_amop_signature(op->amopopr, BOOLOID, op->amoplefttype,
								  op->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family of operator class \"%s\" of access method %s contains operator %s, which is not an equality of strategy 1",
							name, BFI_AM_NAME, format_operator(op->amopopr))));
			ok = false;
		}
	}
	ReleaseCatCacheList(ops);
	procs = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamily));
	if (procs->n_members > 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family of operator class \"%s\" of access method %s contains support functions, which it does not use",
						name, BFI_AM_NAME)));
		ok = false;
	}
	ReleaseCatCacheList(procs);
	return ok;
}

Datum
bloomguard_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	/* every field not set here is zero: false, or no callback */
	am->amstrategies = 1;
	am->amsupport = 0;
	am->amoptsprocnum = 0;
	am->amoptionalkey = true;
	am->ampredlocks = true;
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	am->ambuild = bfi_build;
	am->ambuildempty = bfi_buildempty;
	am->aminsert = bfi_insert;
	am->ambulkdelete = bfi_bulkdelete;
	am->amvacuumcleanup = bfi_vacuumcleanup;
	am->amcostestimate = bfi_costestimate;
	am->amoptions = bfi_options;
	am->amvalidate = bfi_validate;
	am->ambeginscan = bfi_beginscan;
	am->amrescan = bfi_rescan;
	am->amendscan = bfi_endscan;

	PG_RETURN_POINTER(am);
}
