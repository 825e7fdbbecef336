/*
 * bfi_compat.c
 *		1.1's guard functions in 2.0: thin wrappers over guard indexes.
 *
 * bloom_guard(table, column, ...) creates a guard index on the column (on
 * every table of an inheritance tree; a partitioned table's index covers
 * its partitions) and returns the index's name; bloom_unguard drops the
 * column's guard indexes.  bloom_shared_contains, bloom_shared_get,
 * bloom_shared_wait and bloom_shared_rebuild take a guard's name, resolved
 * at each call: an index's name, or 1.1's "schema"."table"."column" (the
 * guard index of that column, and for a table with inheritance children
 * also theirs).  Indexes are made and dropped by CREATE INDEX, DROP INDEX
 * and REINDEX run as the caller, with their rights, locks and event
 * triggers, under a fixed search_path.
 *
 * The C symbols of the 1.1 functions that 2.0 drops stay, as stubs, since
 * the install and update scripts of 1.0 and 1.1 name them: in a database
 * not yet updated, the guard trigger and the event trigger do nothing
 * (writes go on; ALTER EXTENSION UPDATE builds the indexes from the tables)
 * and the other functions raise an error saying to update.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "index/bf_index.h"

PG_FUNCTION_INFO_V1(bloom_guard);
PG_FUNCTION_INFO_V1(bloom_unguard);
PG_FUNCTION_INFO_V1(bloom_shared_contains);
PG_FUNCTION_INFO_V1(bloom_shared_contains_text);
PG_FUNCTION_INFO_V1(bloom_shared_get);
PG_FUNCTION_INFO_V1(bloom_shared_wait);
PG_FUNCTION_INFO_V1(bloom_shared_rebuild);
PG_FUNCTION_INFO_V1(bloom_shared_trigger);
PG_FUNCTION_INFO_V1(bloom_shared_ddl);
PG_FUNCTION_INFO_V1(bloom_shared_add);
PG_FUNCTION_INFO_V1(bloom_shared_add_text);
PG_FUNCTION_INFO_V1(bloom_shared_filters_info);
PG_FUNCTION_INFO_V1(bloom_shared_gate);
PG_FUNCTION_INFO_V1(bloom_shared_gate_any);
PG_FUNCTION_INFO_V1(bloom_shared_gate_elements);
PG_FUNCTION_INFO_V1(bloom_shared_skipped_scans);

/* The access method, or an error if this database's extension predates it. */
static Oid
guard_am(void)
{
	Oid			amoid = get_index_am_oid(BFI_AM_NAME, true);

	if (!OidIsValid(amoid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"bloomfilter\" must be updated to use its library"),
				 errhint("Run ALTER EXTENSION bloomfilter UPDATE: since 2.0, guards are indexes USING %s.",
						 BFI_AM_NAME)));
	return amoid;
}

/* Is indexoid a guard index on the column attnum alone? */
static bool
is_column_guard(Oid indexoid, Oid amoid, AttrNumber attnum)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index idx;
	bool		result;

	if (!HeapTupleIsValid(tup))
		return false;
	idx = (Form_pg_index) GETSTRUCT(tup);
	result = idx->indnatts == 1 && idx->indkey.values[0] == attnum;
	ReleaseSysCache(tup);
	if (!result)
		return false;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tup))
		return false;
	result = ((Form_pg_class) GETSTRUCT(tup))->relam == amoid;
	ReleaseSysCache(tup);
	return result;
}

/* The guard indexes on the column of a table (locked AccessShareLock). */
static List *
column_guards(Oid relid, const char *column)
{
	Oid			amoid = guard_am();
	AttrNumber	attnum = get_attnum(relid, column);
	Relation	rel;
	List	   *indexes;
	List	   *result = NIL;
	ListCell   *lc;

	if (attnum == InvalidAttrNumber)
		return NIL;
	rel = table_open(relid, AccessShareLock);
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		if (is_column_guard(lfirst_oid(lc), amoid, attnum))
			result = lappend_oid(result, lfirst_oid(lc));
	}
	table_close(rel, NoLock);
	return result;
}

/*
 * The tables whose rows a query of relid reads: a partitioned table's
 * index covers its partitions; an inheritance parent's children need their
 * own guards.
 */
static List *
tree_tables(Oid relid)
{
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		return list_make1_oid(relid);
	return find_all_inheritors(relid, AccessShareLock, NULL);
}

static void
undefined_guard(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("guard \"%s\" does not exist", name),
			 errhint("Name a guard index, or a guarded column as schema.table.column; since 2.0, guards are indexes USING %s.",
					 BFI_AM_NAME)));
}

/*
 * The guard indexes a name stands for: one index (its name, qualified or
 * not), or for "schema"."table"."column" the column's guard on every table
 * of the tree, NIL if one has none (every key "maybe").
 */
static List *
resolve_guards(text *name_text)
{
	char	   *name = text_to_cstring(name_text);
	List	   *names = textToQualifiedNameList(name_text);
	List	   *result = NIL;
	char	   *column;
	Oid			relid;
	ListCell   *lc;

	if (list_length(names) != 3)
	{
		relid = RangeVarGetRelid(makeRangeVarFromNameList(names),
								 AccessShareLock, true);
		if (!OidIsValid(relid) || get_rel_relkind(relid) == RELKIND_RELATION ||
			get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
			undefined_guard(name);
		return list_make1_oid(relid);
	}
	column = strVal(llast(names));
	relid = RangeVarGetRelid(makeRangeVar(strVal(linitial(names)),
										  strVal(lsecond(names)), -1),
							 AccessShareLock, true);
	if (!OidIsValid(relid) || column_guards(relid, column) == NIL)
		undefined_guard(name);
	foreach(lc, tree_tables(relid))
	{
		List	   *guards = column_guards(lfirst_oid(lc), column);

		/* the table's own guard first; InvalidOid: a child without one */
		result = lappend_oid(result, guards == NIL ? InvalidOid : linitial_oid(guards));
	}
	return result;
}

static List *
resolve_one_or_more(FunctionCallInfo fcinfo)
{
	guard_am();
	return resolve_guards(PG_GETARG_TEXT_PP(0));
}

static Datum
contains_common(FunctionCallInfo fcinfo, bool text_arg)
{
	List	   *guards = resolve_one_or_more(fcinfo);
	ListCell   *lc;

	/*
	 * The caller's access is checked on the named table's guard, as a query
	 * through the parent checks the parent only; a child without a guard
	 * makes every answer "maybe".
	 */
	if (bfi_guard_contains(fcinfo, linitial_oid(guards), text_arg, true) ||
		list_member_oid(guards, InvalidOid))
		PG_RETURN_BOOL(true);
	for_each_from(lc, guards, 1)
	{
		if (bfi_guard_contains(fcinfo, lfirst_oid(lc), text_arg, false))
			PG_RETURN_BOOL(true);
	}
	PG_RETURN_BOOL(false);
}

/* bloom_shared_contains(name, key): bloom_guard_contains by name. */
Datum
bloom_shared_contains(PG_FUNCTION_ARGS)
{
	return contains_common(fcinfo, false);
}

Datum
bloom_shared_contains_text(PG_FUNCTION_ARGS)
{
	return contains_common(fcinfo, true);
}

/* bloom_shared_get(name): bloom_guard_filter by name. */
Datum
bloom_shared_get(PG_FUNCTION_ARGS)
{
	List	   *guards = resolve_one_or_more(fcinfo);

	if (list_length(guards) != 1 || !OidIsValid(linitial_oid(guards)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("guard \"%s\" is not one index",
						text_to_cstring(PG_GETARG_TEXT_PP(0))),
				 errhint("Get each table's filter with bloom_guard_filter(index).")));
	return DirectFunctionCall1(bloom_guard_filter,
							   ObjectIdGetDatum(linitial_oid(guards)));
}

/* Is every guard valid (its build done)? */
static bool
guards_valid(List *guards)
{
	ListCell   *lc;

	AcceptInvalidationMessages();
	foreach(lc, guards)
	{
		HeapTuple	tup = SearchSysCache1(INDEXRELID,
										  ObjectIdGetDatum(lfirst_oid(lc)));
		bool		valid = HeapTupleIsValid(tup) &&
			((Form_pg_index) GETSTRUCT(tup))->indisvalid;

		if (HeapTupleIsValid(tup))
			ReleaseSysCache(tup);
		if (!valid)
			return false;
	}
	return true;
}

/*
 * bloom_shared_wait(name, timeout_ms): a guard index is complete once its
 * CREATE INDEX committed; one being built CONCURRENTLY becomes valid when
 * that ends.  True once every guard of the name is valid.
 */
Datum
bloom_shared_wait(PG_FUNCTION_ARGS)
{
	List	   *guards = resolve_one_or_more(fcinfo);
	int			timeout_ms = PG_GETARG_INT32(1);
	int			waited = 0;

	if (list_member_oid(guards, InvalidOid))
		PG_RETURN_BOOL(false);	/* a child without a guard: never complete */
	while (!guards_valid(guards))
	{
		if (waited >= timeout_ms)
			PG_RETURN_BOOL(false);
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
		waited += 10;
	}
	PG_RETURN_BOOL(true);
}

/*
 * Run a utility command as the caller, with search_path = pg_catalog,
 * pg_temp meanwhile (its names are qualified, and so is anything the
 * command looks up by name).
 */
static void
run_command(const char *sql)
{
	int			save_nestlevel = NewGUCNestLevel();
	int			rc;

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	SPI_connect();
	rc = SPI_execute(sql, false, 0);
	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute of \"%s\" returned %d", sql, rc);
	SPI_finish();
	AtEOXact_GUC(true, save_nestlevel);
}

static char *
qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* bloom_shared_rebuild(name): REINDEX of its guards. */
Datum
bloom_shared_rebuild(PG_FUNCTION_ARGS)
{
	ListCell   *lc;

	foreach(lc, resolve_one_or_more(fcinfo))
	{
		if (OidIsValid(lfirst_oid(lc)))
			run_command(psprintf("REINDEX INDEX %s", qualified_name(lfirst_oid(lc))));
	}
	PG_RETURN_VOID();
}

/* 1.1's layouts: counting and cuckoo guards are plain guards now. */
static void
check_layout(FunctionCallInfo fcinfo)
{
	char	   *layout;

	if (PG_NARGS() < 5 || PG_ARGISNULL(4))
		return;
	layout = text_to_cstring(PG_GETARG_TEXT_PP(4));
	if (strcmp(layout, "counting") == 0 || strcmp(layout, "cuckoo") == 0)
		ereport(NOTICE,
				(errmsg("guard indexes have one layout: layout \"%s\" makes a plain guard", layout),
				 errdetail("The keys of deleted rows are forgotten when the guard is rebuilt (REINDEX).")));
	else if (strcmp(layout, "blocked") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized guard layout \"%s\"", layout),
				 errhint("Valid layouts are \"blocked\", \"counting\" and \"cuckoo\".")));
}

/* CREATE INDEX of a guard on the column of one table; its OID. */
static Oid
create_guard(Oid relid, const char *column, const char *options)
{
	List	   *before = column_guards(relid, column);
	List	   *after;
	ListCell   *lc;

	run_command(psprintf("CREATE INDEX ON %s USING %s (%s)%s",
						 qualified_name(relid), BFI_AM_NAME,
						 quote_identifier(column), options));
	CommandCounterIncrement();
	after = column_guards(relid, column);
	foreach(lc, after)
	{
		if (!list_member_oid(before, lfirst_oid(lc)))
			return lfirst_oid(lc);
	}
	elog(ERROR, "guard index of column \"%s\" not found after CREATE INDEX", column);
	return InvalidOid;			/* keep the compiler quiet */
}

/*
 * bloom_guard(table, column, fpr, capacity, layout): a guard index on the
 * column (as CREATE INDEX ... USING bloomguard (column) WITH (fpr, capacity)
 * would make it), and on the column of every inheritance child; its name.
 */
Datum
bloom_guard(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *column;
	StringInfoData options;
	Oid			guard = InvalidOid;
	ListCell   *lc;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_guard() needs a table and a column")));
	guard_am();
	relid = PG_GETARG_OID(0);
	column = NameStr(*PG_GETARG_NAME(1));
	check_layout(fcinfo);
	if (get_rel_name(relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (column_guards(relid, column) != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("column \"%s\" of table \"%s\" is already guarded by index \"%s\"",
						column, get_rel_name(relid),
						get_rel_name(linitial_oid(column_guards(relid, column)))),
				 errhint("Rebuild it with REINDEX, or remove it with bloom_unguard() first.")));

	if (!PG_ARGISNULL(3) && (PG_GETARG_INT64(3) <= 0 || PG_GETARG_INT64(3) > PG_INT32_MAX))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be between 1 and %d, not " INT64_FORMAT,
						PG_INT32_MAX, PG_GETARG_INT64(3)),
				 errhint("Leave it NULL to size the guard from the table.")));
	initStringInfo(&options);
	appendStringInfo(&options, " WITH (fpr = %s",
					 PG_ARGISNULL(2) ? "0.01" :
					 float8out_internal(PG_GETARG_FLOAT8(2)));
	if (!PG_ARGISNULL(3))
		appendStringInfo(&options, ", capacity = " INT64_FORMAT, PG_GETARG_INT64(3));
	appendStringInfoChar(&options, ')');
	foreach(lc, tree_tables(relid))
	{
		/* a child guarded already keeps its guard */
		if (lfirst_oid(lc) != relid && column_guards(lfirst_oid(lc), column) != NIL)
			continue;
		if (lfirst_oid(lc) == relid)
			guard = create_guard(relid, column, options.data);
		else
			(void) create_guard(lfirst_oid(lc), column, options.data);
	}
	PG_RETURN_TEXT_P(cstring_to_text(qualified_name(guard)));
}

/* bloom_unguard(table, column): DROP INDEX of the column's guards (tree). */
Datum
bloom_unguard(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *column = NameStr(*PG_GETARG_NAME(1));
	ListCell   *lc;
	ListCell   *lc2;

	if (get_rel_name(relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (column_guards(relid, column) == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("column \"%s\" of table \"%s\" is not guarded",
						column, get_rel_name(relid))));
	foreach(lc, tree_tables(relid))
	{
		foreach(lc2, column_guards(lfirst_oid(lc), column))
		{
			/* a partition's index attached to its parent's goes with it */
			if (get_rel_relispartition(lfirst_oid(lc2)))
			{
				if (lfirst_oid(lc) == relid)
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("the guard of column \"%s\" of partition \"%s\" belongs to the partitioned table's guard",
									column, get_rel_name(relid)),
							 errhint("Unguard the partitioned table, or detach the partition.")));
				continue;
			}
			run_command(psprintf("DROP INDEX %s", qualified_name(lfirst_oid(lc2))));
		}
	}
	PG_RETURN_VOID();
}

/* ---------------------------------------------------------------------
 * Stubs: symbols of 1.1 functions that 2.0 drops
 * ---------------------------------------------------------------------
 */

static void
dropped_function(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("%s() was removed in bloomfilter 2.0", name),
			 errhint("Run ALTER EXTENSION bloomfilter UPDATE: since 2.0, guards are indexes USING %s.",
					 BFI_AM_NAME)));
}

/* 1.1's guard trigger: nothing to do (the update builds the indexes). */
Datum
bloom_shared_trigger(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		dropped_function("bloom_shared_trigger");
	return PointerGetDatum(NULL);
}

/* 1.1's event trigger: nothing to do. */
Datum
bloom_shared_ddl(PG_FUNCTION_ARGS)
{
	PG_RETURN_VOID();
}

#define DROPPED(fn) \
Datum \
fn(PG_FUNCTION_ARGS) \
{ \
	dropped_function(#fn); \
	PG_RETURN_NULL(); \
}

DROPPED(bloom_shared_add)
DROPPED(bloom_shared_add_text)
DROPPED(bloom_shared_filters_info)
DROPPED(bloom_shared_gate)
DROPPED(bloom_shared_gate_any)
DROPPED(bloom_shared_gate_elements)
DROPPED(bloom_shared_skipped_scans)
