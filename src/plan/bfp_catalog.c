/*
 * bfp_catalog.c
 *		The extension's own catalog objects: the schema it is installed in,
 *		and the OIDs of its check functions, so that the planner recognizes
 *		a check by the function's identity rather than by its C symbol.
 *
 * The OIDs are looked up once and kept until pg_proc changes (a syscache
 * invalidation: CREATE, ALTER or DROP EXTENSION, or any other function
 * created or dropped); when the extension is not installed in this database
 * every OID is InvalidOid, which no function has.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "plan/bf_plan.h"

static Oid	check_fns[BF_NUM_CHECK_FNS];
static bool check_fns_valid = false;
static bool callback_registered = false;

static void
check_fns_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	check_fns_valid = false;
}

/* The schema of the extension bloomfilter in this database. */
Oid
bf_extension_schema(bool missing_ok)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("bloomfilter"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(nsp) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"bloomfilter\" is not installed in this database")));
	return nsp;
}

/* schema.name(arg0, arg1), or InvalidOid */
static Oid
lookup_fn(Oid nsp, const char *name, Oid arg0, Oid arg1)
{
	Oid			args[2] = {arg0, arg1};
	char	   *nspname = get_namespace_name(nsp);

	/* the schema may have been dropped meanwhile */
	if (!OidIsValid(arg0) || !OidIsValid(arg1) || nspname == NULL)
		return InvalidOid;
	return LookupFuncName(list_make2(makeString(nspname),
									 makeString(pstrdup(name))),
						  2, args, true);
}

static void
lookup_check_fns(void)
{
	Oid			nsp;
	Oid			filter = InvalidOid;
	Oid			literal = InvalidOid;

	if (!callback_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, check_fns_invalidate, (Datum) 0);
		callback_registered = true;
	}
	for (int i = 0; i < BF_NUM_CHECK_FNS; i++)
		check_fns[i] = InvalidOid;
	/* valid from here: an invalidation during the lookups makes it look again */
	check_fns_valid = true;
	nsp = bf_extension_schema(true);
	if (!OidIsValid(nsp))
		return;
	filter = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
							 CStringGetDatum("bloomfilter"), ObjectIdGetDatum(nsp));
	literal = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
							  CStringGetDatum("bloom_literal"), ObjectIdGetDatum(nsp));
	check_fns[BF_CHECK_FN_CONTAINS] =
		lookup_fn(nsp, "bloom_contains", filter, ANYELEMENTOID);
	check_fns[BF_CHECK_FN_CONTAINED] =
		lookup_fn(nsp, "bloom_contained", ANYELEMENTOID, filter);
	check_fns[BF_CHECK_FN_CONTAINS_LITERAL] =
		lookup_fn(nsp, "bloom_contains", filter, literal);
	check_fns[BF_CHECK_FN_CONTAINED_LITERAL] =
		lookup_fn(nsp, "bloom_contained", literal, filter);
}

/* Which check of one key funcid is, or BF_CHECK_FN_NONE. */
BfCheckFn
bf_check_fn(Oid funcid)
{
	if (!OidIsValid(funcid))
		return BF_CHECK_FN_NONE;
	if (!check_fns_valid)
		lookup_check_fns();
	for (int i = 0; i < BF_NUM_CHECK_FNS; i++)
	{
		if (check_fns[i] == funcid)
			return (BfCheckFn) i;
	}
	return BF_CHECK_FN_NONE;
}
