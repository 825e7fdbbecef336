/*
 * bf_guard.c
 *		Managing shared filters: bloom_guard, bloom_unguard and
 *		bloom_shared_rebuild, and the guard triggers they create and drop.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bf_cuckoo.h"
#include "bf_sizing.h"
#include "bf_value.h"
#include "bf_shared.h"
#include "bf_text.h"

PG_FUNCTION_INFO_V1(bloom_guard);
PG_FUNCTION_INFO_V1(bloom_unguard);
PG_FUNCTION_INFO_V1(bloom_shared_rebuild);

/* > 0 while this backend runs DDL of its own: the event trigger skips it */
int			bf_own_ddl = 0;

static bool
trigger_name_taken(Oid relid, const char *name)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	TriggerDesc *td = rel->trigdesc;
	bool		taken = false;

	for (int k = 0; td != NULL && k < td->numtriggers; k++)
		if (strcmp(td->triggers[k].tgname, name) == 0)
			taken = true;
	relation_close(rel, NoLock);
	return taken;
}

/* bloom_guard_<column>, made unique on the table. */
static char *
guard_trigger_name(Oid relid, const char *column)
{
	for (int n = 1;; n++)
	{
		char	   *suffix = n == 1 ? pstrdup("") : psprintf("_%d", n);
		char	   *base = psprintf("bloom_guard_%s", column);
		int			room = NAMEDATALEN - 1 - (int) strlen(suffix);
		char	   *name;

		if ((int) strlen(base) > room)
			base[pg_mbcliplen(base, strlen(base), room)] = '\0';
		name = psprintf("%s%s", base, suffix);
		if (!trigger_name_taken(relid, name))
			return name;
	}
}

static char *
qualified_table(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* Run a DDL statement of our own (SPI connected). */
static void
own_ddl(const char *sql)
{
	bf_own_ddl++;
	PG_TRY();
	{
		bf_spi_exec(sql, 0, NULL, NULL, SPI_OK_UTILITY);
	}
	PG_FINALLY();
	{
		bf_own_ddl--;
	}
	PG_END_TRY();
}

/*
 * Create the guard trigger of a filter on one table, enabled ALWAYS: it
 * must also fire for writes made with session_replication_role = replica,
 * such as logical replication's.  SPI is connected.
 */
void
bf_guard_create_trigger(Oid relid, const BfDefinition *def)
{
	const char *trigger = quote_identifier(guard_trigger_name(relid,
															  NameStr(def->column_name)));
	char	   *table = qualified_table(relid);

	/* counting and cuckoo filters also hear of deleted rows and changed keys */
	own_ddl(psprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE%s ON %s "
					 "FOR EACH ROW EXECUTE FUNCTION %s.%s(%s)",
					 trigger, bf_guard_follows_deletes(def->layout) ? " OR DELETE" : "",
					 table,
					 quote_identifier(get_namespace_name(bf_extension_schema(false))),
					 BF_TRIGGER_FUNCTION, quote_literal_cstr(def->name)));
	own_ddl(psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s", table, trigger));
}

/* Enable a filter's guard triggers on one table ALWAYS.  SPI is connected. */
void
bf_guard_enable_always(Oid relid, const BfDefinition *def)
{
	List	   *names = bf_guard_triggers(relid, def->name);
	ListCell   *lc;

	foreach(lc, names)
		own_ddl(psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s",
						 qualified_table(relid), quote_identifier(lfirst(lc))));
}

/*
 * Drop a filter's guard triggers from every table of its tree that still
 * exists (partitions lose their clones with their parent's).  SPI is
 * connected.
 */
void
bf_guard_drop_triggers(const BfDefinition *def)
{
	List	   *members;
	ListCell   *lc;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(def->relid)))
		return;
	members = bf_tree_members(def->relid, ShareRowExclusiveLock);
	foreach(lc, members)
	{
		Oid			relid = lfirst_oid(lc);
		List	   *names;
		ListCell   *lc2;

		if (get_rel_relispartition(relid))
			continue;
		names = bf_guard_triggers(relid, def->name);
		foreach(lc2, names)
			own_ddl(psprintf("DROP TRIGGER %s ON %s",
							 quote_identifier(lfirst(lc2)), qualified_table(relid)));
	}
}

/*
 * Remove a guard: its definition and its filter, and its triggers if asked
 * (without a definition they do nothing).
 */
void
bf_guard_remove(const BfDefinition *def, bool drop_triggers)
{
	bf_def_delete(def->id);
	if (drop_triggers)
	{
		SPI_connect();
		bf_guard_drop_triggers(def);
		SPI_finish();
	}
	/* a rollback keeps the definition: it is loaded again on first use */
	if (bf_shared_available())
		bf_filter_forget(def->id);
}

static bool
def_of_column(Oid relid, const char *column, BfDefinition *out)
{
	List	   *all = bf_def_all();
	ListCell   *lc;

	foreach(lc, all)
	{
		BfDefinition *d = lfirst(lc);

		if (d->relid == relid && strcmp(NameStr(d->column_name), column) == 0)
		{
			*out = *d;
			return true;
		}
	}
	return false;
}

/*
 * The name of a new filter: "schema"."table"."column", followed by #2, #3 ...
 * if a filter of a table renamed since has that name (a quoted identifier
 * never ends a name that way: "k#2" would be quoted).
 */
static void
unique_filter_name(Oid relid, const char *column, char *name)
{
	char	   *base = bf_filter_name(relid, column);
	BfDefinition other;

	strlcpy(name, base, BF_SHARED_NAME_LEN);
	for (int n = 2; bf_def_by_name(name, &other); n++)
		snprintf(name, BF_SHARED_NAME_LEN, "%s#%d", base, n);
}

static void
check_table_exists(Oid relid)
{
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
}

/* A cuckoo guard's table: its rate, and its size in the pool. */
static void
check_sizing_cuckoo(const char *rate, double fpr, int64 need)
{
	BfCuckooHeader h;
	int			why;

	if (!bf_cuckoo_size(1, fpr, PG_UINT64_MAX, &h, &why))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false-positive rate %s is too small for a cuckoo filter", rate),
				 errdetail("Its fingerprints have at most %d bits.", BF_CUCKOO_MAX_FP_BITS),
				 errhint("Use a rate of at least 2e-9, or layout counting.")));
	if (!bf_cuckoo_size((uint64) need, fpr, bf_shared_max_nbits() / 8, &h, &why) ||
		bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits) > bf_pool_free_bytes())
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("a shared cuckoo filter of capacity " INT64_FORMAT " at false-positive rate %s does not fit in bloomfilter.shared_memory (%d MB, %llu kB free)",
						need, rate, bf_shared_memory_mb,
						(unsigned long long) (bf_pool_free_bytes() / 1024)),
				 errhint("Raise bloomfilter.shared_memory (needs a restart), use a smaller capacity or a larger rate, or remove other guards.")));
}

/* The rate and capacity of a new guard, checked before anything is done. */
static void
check_sizing(Oid relid, int layout, double fpr, int64 capacity, bool capacity_given)
{
	BfSize		size;
	uint64		max_nbits;
	double		build_fpr = bf_first_layer_fpr(layout, fpr);
	int64		need;

	char		rate[32];

	/* the rate as it reads back (%g would print 0.9999999999999999 as 1) */
	bf_format_double(fpr, rate, sizeof(rate));
	if (!(fpr > 0.0 && fpr < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false-positive rate must be between 0 and 1 (exclusive), not %s", rate)));
	if (capacity_given && capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be positive, not " INT64_FORMAT, capacity)));
	need = capacity_given ? capacity : (int64) Max(1000, 2 * bf_tree_estimate_rows(relid, NULL));
	if (layout == BF_GUARD_CUCKOO)
	{
		check_sizing_cuckoo(rate, fpr, need);
		return;
	}
	max_nbits = Min(bf_shared_max_nbits(), BF_MAX_NBITS(layout));
	/* as the build sizes it */
	if (!bf_size_for(layout, 1, build_fpr, BF_MAX_NBITS(layout), &size))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false-positive rate %s is too small for a bloom filter", rate),
				 errhint("Use a rate of at least 1e-15.")));
	if (!bf_size_for(layout, (uint64) need, build_fpr, max_nbits, &size) ||
		bf_payload_bytes(size.nbits) > bf_pool_free_bytes())
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("a shared bloom filter of capacity " INT64_FORMAT " at false-positive rate %s does not fit in bloomfilter.shared_memory (%d MB, %llu kB free)",
						need, rate, bf_shared_memory_mb,
						(unsigned long long) (bf_pool_free_bytes() / 1024)),
				 errhint("Raise bloomfilter.shared_memory (needs a restart), use a smaller capacity or a larger rate, or remove other guards.")));
}

/* The layout of a new guard: blocked, or counting or cuckoo (follow deletes). */
static int
guard_layout(const char *name)
{
	int			layout = bf_guard_layout_from_name(name);

	if (layout == BF_LAYOUT_CLASSIC)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a shared bloom filter cannot use layout classic"),
				 errhint("Use 'blocked' (the default), 'counting' or 'cuckoo'.")));
	if (layout != BF_LAYOUT_BLOCKED && !bf_guard_follows_deletes(layout))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized bloomfilter layout \"%s\"", name),
				 errhint("Use 'blocked' (the default), 'counting' or 'cuckoo'.")));
	return layout;
}

/* The guarded table and column as bloom_guard accepts them. */
static void
check_guardable(Oid relid, const char *column)
{
	char		relkind = get_rel_relkind(relid);
	AttrNumber	attnum;
	Oid			atttypid;
	int32		atttypmod;
	Oid			attcoll;
	BfKeyType	kt;

	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", get_rel_name(relid)),
				 errhint("Shared bloom filters guard columns of tables.")));
	bf_check_owner(relid);
	if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard temporary table \"%s\"", get_rel_name(relid)),
				 errdetail("A shared filter is built by a background worker, which cannot read another session's temporary tables."),
				 errhint("Use a filter value instead: bloom_agg() over the table.")));
	attnum = get_attnum(relid, column);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist",
						column, get_rel_name(relid))));
	get_atttypetypmodcoll(relid, attnum, &atttypid, &atttypmod, &attcoll);
	bf_key_type_init(&kt, atttypid, attcoll, InvalidOid);
	bf_tree_check_guardable(relid);
}

Datum
bloom_guard(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *column;
	BfDefinition def;
	BfDefinition existing;
	List	   *members;
	ListCell   *lc;

	bf_shared_check_enabled();
	PreventCommandDuringRecovery("bloom_guard()");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_guard() needs a table and a column")));
	relid = PG_GETARG_OID(0);
	column = NameStr(*PG_GETARG_NAME(1));
	check_table_exists(relid);
	/* before waiting for the lock: a stranger must not queue writers behind it */
	bf_check_owner(relid);
	/* CREATE TRIGGER takes this lock anyway: take it before looking */
	LockRelationOid(relid, ShareRowExclusiveLock);
	check_table_exists(relid);
	check_guardable(relid, column);

	memset(&def, 0, sizeof(def));
	def.relid = relid;
	namestrcpy(&def.column_name, column);
	def.fpr = PG_ARGISNULL(2) ? 0.01 : PG_GETARG_FLOAT8(2);
	def.capacity = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3);
	/* (1.0's bloom_guard has no layout argument) */
	def.layout = PG_NARGS() < 5 || PG_ARGISNULL(4) ? BF_LAYOUT_BLOCKED :
		guard_layout(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	check_sizing(relid, def.layout, def.fpr, def.capacity, !PG_ARGISNULL(3));
	if (def_of_column(relid, column, &existing))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("column \"%s\" of table \"%s\" is already guarded by shared bloom filter \"%s\"",
						column, get_rel_name(relid), existing.name),
				 errhint("Rebuild it with bloom_shared_rebuild('%s'), or remove it with bloom_unguard() first.",
						 existing.name)));
	unique_filter_name(relid, column, def.name);

	def.id = bf_def_insert(&def);
	members = bf_tree_members(relid, ShareRowExclusiveLock);
	SPI_connect();
	foreach(lc, members)
	{
		/* partitions get PostgreSQL's clones of the parent's trigger */
		if (lfirst_oid(lc) == relid || !get_rel_relispartition(lfirst_oid(lc)))
			bf_guard_create_trigger(lfirst_oid(lc), &def);
	}
	SPI_finish();

	/* built once this transaction commits (the definition is invisible before) */
	bf_filter_request_build(&def, GetTopTransactionId(), false);
	PG_RETURN_TEXT_P(cstring_to_text(def.name));
}

Datum
bloom_unguard(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *column = NameStr(*PG_GETARG_NAME(1));
	BfDefinition def;

	bf_shared_check_enabled();
	PreventCommandDuringRecovery("bloom_unguard()");
	check_table_exists(relid);
	bf_check_owner(relid);
	if (!def_of_column(relid, column, &def))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("column \"%s\" of table \"%s\" is not guarded",
						column, get_rel_name(relid)),
				 errhint("The view bloom_shared_filters lists the guarded columns.")));
	bf_guard_remove(&def, true);
	PG_RETURN_VOID();
}

Datum
bloom_shared_rebuild(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	BfDefinition def;

	bf_shared_check_enabled();
	PreventCommandDuringRecovery("bloom_shared_rebuild()");
	if (!bf_def_by_name(name, &def))
		bf_def_undefined(name);
	check_table_exists(def.relid);
	bf_check_owner(def.relid);
	/* checks keep answering from the current filter until the new one is live */
	bf_filter_request_build(&def, InvalidTransactionId, false);
	PG_RETURN_VOID();
}
