/*
 * bf_guard.c
 *		Managing shared filters: bloom_guard, bloom_unguard,
 *		bloom_shared_rebuild, and the event trigger that follows DDL on
 *		guarded tables.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "bf_sizing.h"
#include "bf_shared.h"
#include "bf_text.h"

PG_FUNCTION_INFO_V1(bloom_guard);
PG_FUNCTION_INFO_V1(bloom_unguard);
PG_FUNCTION_INFO_V1(bloom_shared_rebuild);
PG_FUNCTION_INFO_V1(bloom_shared_ddl);

void
bf_check_owner(Oid relid)
{
#if PG_VERSION_NUM >= 160000
	bool		owner = object_ownercheck(RelationRelationId, relid, GetUserId());
#else
	bool		owner = pg_class_ownercheck(relid, GetUserId());
#endif

	if (!owner)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s", get_rel_name(relid)),
				 errdetail("Only the owner of a table can manage its shared bloom filters.")));
}

/* Run a statement on the configuration table as its owner. */
static int
config_exec(const char *sql, int nargs, Oid *types, Datum *values, int expect)
{
	Oid			cfgoid = bf_config_table(false);
	Oid			owner;
	Oid			save_userid;
	int			save_sec;
	int			rc;
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(cfgoid));

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", cfgoid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	rc = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
	SetUserIdAndSecContext(save_userid, save_sec);
	if (rc != expect)
		elog(ERROR, "bloomfilter: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
	CacheInvalidateRelcacheByRelid(cfgoid);
	return rc;
}

static char *
config_name(void)
{
	return psprintf("%s.%s",
					quote_identifier(get_namespace_name(bf_extension_schema(false))),
					BF_SHARED_CONFIG_TABLE);
}

/*
 * The table whose guard trigger bloom_guard is enabling ALWAYS: that ALTER
 * TABLE changes no key, so the event trigger leaves the table's other
 * filters loaded.
 */
static Oid	enabling_trigger_on = InvalidOid;

static char *
trigger_name(const char *column)
{
	char	   *n = psprintf("bloom_guard_%s", column);

	if (strlen(n) >= NAMEDATALEN)
		n[pg_mbcliplen(n, strlen(n), NAMEDATALEN - 1)] = '\0';
	return n;
}

/* The definition of a column, by its current names. */
static bool
find_def_of_column(Oid relid, const char *column, BfDefinition *out)
{
	List	   *all = bf_def_all();
	ListCell   *lc;
	char	   *nsp = get_namespace_name(get_rel_namespace(relid));
	char	   *rel = get_rel_name(relid);

	foreach(lc, all)
	{
		BfDefinition *d = lfirst(lc);

		if (strcmp(NameStr(d->schema_name), nsp) == 0 &&
			strcmp(NameStr(d->table_name), rel) == 0 &&
			strcmp(NameStr(d->column_name), column) == 0)
		{
			*out = *d;
			return true;
		}
	}
	return false;
}

Datum
bloom_guard(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *column = NameStr(*PG_GETARG_NAME(1));
	double		fpr = PG_ARGISNULL(2) ? 0.01 : PG_GETARG_FLOAT8(2);
	int64		capacity = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3);
	char		relkind;
	AttrNumber	attnum;
	Oid			atttypid;
	int32		atttypmod;
	Oid			attcoll;
	BfKeyType	kt;
	char	   *nsp;
	char	   *relname;
	char	   *name;
	BfDefinition existing;
	Oid			cfgoid;
	int64		defid;
	int			slot;
	TransactionId xid;

	bf_shared_check_enabled();
	PreventCommandDuringRecovery("bloom_guard()");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloom_guard() needs a table and a column")));

	relkind = get_rel_relkind(relid);
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
				 errmsg("column \"%s\" of table %s does not exist",
						column, get_rel_name(relid))));
	get_atttypetypmodcoll(relid, attnum, &atttypid, &atttypmod, &attcoll);
	bf_key_type_init(&kt, atttypid, attcoll, InvalidOid);
	if (!(fpr > 0.0 && fpr < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter false-positive rate must be between 0 and 1 (exclusive), not %g", fpr)));
	if (!PG_ARGISNULL(3) && capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter capacity must be positive, not " INT64_FORMAT, capacity)));
	if (capacity > 0)
	{
		BfSize		size;
		uint64		max_nbits = (bf_shared->pool_bytes / BF_BLOCK_BYTES) * BF_BLOCK_BITS;

		char		rate[32];

		/* the rate as it reads back (%g would print 0.9999999999999999 as 1) */
		bf_format_double(fpr, rate, sizeof(rate));
		if (!bf_size_for(BF_LAYOUT_BLOCKED, (uint64) capacity, fpr, max_nbits, &size))
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("a shared bloom filter of capacity " INT64_FORMAT " at false-positive rate %s does not fit in bloomfilter.shared_memory (%d MB)",
							capacity, rate, bf_shared_memory_mb),
					 errhint("Raise bloomfilter.shared_memory (needs a restart), or use a smaller capacity or a larger rate.")));
	}

	/* schema.table.column, as written in the catalogs (not quoted) */
	nsp = get_namespace_name(get_rel_namespace(relid));
	relname = get_rel_name(relid);
	name = psprintf("%s.%s.%s", nsp, relname, column);

	/* CREATE TRIGGER would take this lock anyway; take it before looking */
	LockRelationOid(relid, ShareRowExclusiveLock);

	SPI_connect();
	if (find_def_of_column(relid, column, &existing) || bf_def_lookup(name, &existing))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("column %s of table %s is already guarded by shared bloom filter \"%s\"",
						column, relname, existing.name),
				 errhint("Rebuild it with bloom_shared_rebuild('%s'), or remove it with bloom_unguard() first.",
						 existing.name)));
	{
		Oid			types[6] = {TEXTOID, NAMEOID, NAMEOID, NAMEOID, FLOAT8OID, INT8OID};
		Datum		values[6];
		NameData	n1,
					n2,
					n3;
		char	   *sql;
		bool		isnull;

		namestrcpy(&n1, nsp);
		namestrcpy(&n2, relname);
		namestrcpy(&n3, column);
		values[0] = CStringGetTextDatum(name);
		values[1] = NameGetDatum(&n1);
		values[2] = NameGetDatum(&n2);
		values[3] = NameGetDatum(&n3);
		values[4] = Float8GetDatum(fpr);
		values[5] = Int64GetDatum(capacity);
		sql = psprintf("INSERT INTO %s (name, schema_name, table_name, column_name, fpr, capacity) "
					   "VALUES ($1, $2, $3, $4, $5, NULLIF($6, 0)) RETURNING id",
					   config_name());
		config_exec(sql, 6, types, values, SPI_OK_INSERT_RETURNING);
		defid = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

		/*
		 * Not "UPDATE OF column": that would make the column depend on the
		 * trigger and block DROP COLUMN and ALTER COLUMN TYPE.  The trigger
		 * skips updates that leave the key unchanged.
		 */
		sql = psprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE ON %s.%s "
					   "FOR EACH ROW EXECUTE FUNCTION %s.bloom_shared_trigger(%s)",
					   quote_identifier(trigger_name(column)),
					   quote_identifier(nsp), quote_identifier(relname),
					   quote_identifier(get_namespace_name(bf_extension_schema(false))),
					   quote_literal_cstr(name));
		if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "bloomfilter: could not create the trigger");

		/*
		 * ALWAYS: the trigger must also fire for writes made with
		 * session_replication_role = replica, such as logical replication's
		 * apply worker, or those keys would be missing.
		 */
		sql = psprintf("ALTER TABLE %s.%s ENABLE ALWAYS TRIGGER %s",
					   quote_identifier(nsp), quote_identifier(relname),
					   quote_identifier(trigger_name(column)));
		enabling_trigger_on = relid;
		PG_TRY();
		{
			if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
				elog(ERROR, "bloomfilter: could not enable the trigger");
		}
		PG_FINALLY();
		{
			enabling_trigger_on = InvalidOid;
		}
		PG_END_TRY();
	}
	SPI_finish();

	cfgoid = bf_config_table(false);
	slot = bf_slot_find_or_create(MyDatabaseId, name, cfgoid, defid);
	pg_atomic_write_u32(&bf_shared->slots[slot].pending, 1);
	xid = GetTopTransactionId();
	if (!bf_start_worker(MyDatabaseId, BF_WORKER_BUILD, xid, slot, 0))
	{
		bf_slot_free(slot);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start a background worker to build shared bloom filter \"%s\"", name),
				 errhint("Raise max_worker_processes, or retry when fewer background workers run.")));
	}
	PG_RETURN_TEXT_P(cstring_to_text(name));
}

Datum
bloom_unguard(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *column = NameStr(*PG_GETARG_NAME(1));
	BfDefinition def;
	char	   *sql;

	bf_shared_check_enabled();
	PreventCommandDuringRecovery("bloom_unguard()");
	if (get_rel_name(relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	bf_check_owner(relid);
	SPI_connect();
	if (!find_def_of_column(relid, column, &def))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("column %s of table %s is not guarded", column, get_rel_name(relid)),
				 errhint("The view bloom_shared_filters lists the guarded columns.")));
	/* the definition first: dropping a guard's trigger is refused while it exists */
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(def.id)};

		config_exec(psprintf("DELETE FROM %s WHERE id = $1", config_name()),
					1, types, values, SPI_OK_DELETE);
	}
	sql = psprintf("DROP TRIGGER IF EXISTS %s ON %s.%s",
				   quote_identifier(trigger_name(column)),
				   quote_identifier(get_namespace_name(get_rel_namespace(relid))),
				   quote_identifier(get_rel_name(relid)));
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "bloomfilter: could not drop the trigger");
	SPI_finish();
	/* a rollback leaves the definition: it is then rebuilt on first use */
	bf_slots_purge_db(MyDatabaseId, InvalidOid, def.name);
	PG_RETURN_VOID();
}

Datum
bloom_shared_rebuild(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	BfDefinition def;
	Oid			nsp;
	Oid			relid = InvalidOid;
	int			slot;

	bf_shared_check_enabled();
	PreventCommandDuringRecovery("bloom_shared_rebuild()");
	if (!bf_def_lookup(name, &def))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("shared bloom filter \"%s\" does not exist", name),
				 errhint("Create it with bloom_guard(table, column); the view bloom_shared_filters lists the existing ones.")));
	nsp = get_namespace_oid(NameStr(def.schema_name), true);
	if (OidIsValid(nsp))
		relid = get_relname_relid(NameStr(def.table_name), nsp);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table guarded by shared bloom filter \"%s\" no longer exists", name)));
	bf_check_owner(relid);

	slot = bf_slot_find_or_create(MyDatabaseId, name, bf_config_table(false), def.id);
	if (pg_atomic_exchange_u32(&bf_shared->slots[slot].pending, 1) != 0)
	{
		ereport(NOTICE,
				(errmsg("shared bloom filter \"%s\" is already being built", name)));
		PG_RETURN_VOID();
	}
	if (!bf_start_worker(MyDatabaseId, BF_WORKER_BUILD, InvalidTransactionId, slot, 0))
	{
		pg_atomic_write_u32(&bf_shared->slots[slot].pending, 0);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start a background worker to rebuild shared bloom filter \"%s\"", name),
				 errhint("Raise max_worker_processes, or retry when fewer background workers run.")));
	}
	PG_RETURN_VOID();
}

/*
 * Event trigger (sql_drop and ddl_command_end of ALTER TABLE).
 *
 * sql_drop: definitions of dropped tables and columns are deleted and their
 * filters freed; if the extension itself is dropped, every filter of the
 * database is freed.  ALTER TABLE: a guarded column whose type changed is
 * unloaded (checks answer "maybe") and rebuilt; renamed tables, schemas and
 * columns are followed (the filter keeps its name).
 */
Datum
bloom_shared_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *ev;
	bool		shm = bf_shared_enabled && bf_shared != NULL;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "bloom_shared_ddl() must be called as an event trigger");
	ev = (EventTriggerData *) fcinfo->context;

	bf_def_invalidate();
	if (!OidIsValid(bf_config_table(true)))
	{
		/* the extension is being dropped: forget this database's filters */
		if (shm)
			bf_slots_purge_db(MyDatabaseId, InvalidOid, NULL);
		PG_RETURN_VOID();
	}

	SPI_connect();
	if (strcmp(ev->event, "sql_drop") == 0)
	{
		/*
		 * A guard's trigger dropped on its own (not with its table) would
		 * leave the filter answering "no" for every row written after:
		 * refuse.  bloom_unguard deletes the definition before it drops the
		 * trigger.
		 */
		int			trc = SPI_execute(psprintf("SELECT t.address_names[3] "
											   "FROM pg_catalog.pg_event_trigger_dropped_objects() t "
											   "JOIN %s d ON d.schema_name = t.address_names[1] "
											   " AND d.table_name = t.address_names[2] "
											   "WHERE t.object_type = 'trigger' "
											   " AND t.address_names[3] = pg_catalog.left('bloom_guard_' OPERATOR(pg_catalog.||) d.column_name, %d) "
											   " AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_event_trigger_dropped_objects() r "
											   "  WHERE r.object_type = 'table' AND r.address_names[1] = t.address_names[1] "
											   "  AND r.address_names[2] = t.address_names[2])",
											   config_name(), NAMEDATALEN - 1), false, 0);

		if (trc != SPI_OK_SELECT)
			elog(ERROR, "bloomfilter: could not read the dropped triggers");
		if (SPI_processed > 0)
			ereport(ERROR,
					(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
					 errmsg("cannot drop trigger \"%s\": it keeps a shared bloom filter current",
							SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
					 errhint("Use bloom_unguard() to remove the guard.")));
	}
	if (strcmp(ev->event, "sql_drop") == 0)
	{
		int			rc = SPI_execute("SELECT object_type, address_names FROM pg_catalog.pg_event_trigger_dropped_objects() "
									 "WHERE object_type IN ('table', 'table column')", true, 0);
		SPITupleTable *tt;
		uint64		n;

		if (rc != SPI_OK_SELECT)
			elog(ERROR, "bloomfilter: could not read the dropped objects");
		tt = SPI_tuptable;
		n = SPI_processed;
		for (uint64 r = 0; r < n; r++)
		{
			char	   *type = SPI_getvalue(tt->vals[r], tt->tupdesc, 1);
			bool		isnull;
			Datum		arr = SPI_getbinval(tt->vals[r], tt->tupdesc, 2, &isnull);
			Datum	   *elems;
			int			nelems;
			Oid			types[3] = {NAMEOID, NAMEOID, NAMEOID};
			Datum		values[3];
			NameData	names[3];
			bool		column = strcmp(type, "table column") == 0;
			char	   *sql;

			if (isnull)
				continue;
			deconstruct_array(DatumGetArrayTypeP(arr), TEXTOID, -1, false, TYPALIGN_INT,
							  &elems, NULL, &nelems);
			if (nelems < (column ? 3 : 2))
				continue;
			for (int k = 0; k < (column ? 3 : 2); k++)
			{
				namestrcpy(&names[k], TextDatumGetCString(elems[k]));
				values[k] = NameGetDatum(&names[k]);
			}
			sql = psprintf("DELETE FROM %s WHERE schema_name = $1 AND table_name = $2%s RETURNING name",
						   config_name(), column ? " AND column_name = $3" : "");
			config_exec(sql, column ? 3 : 2, types, values, SPI_OK_DELETE_RETURNING);
			if (shm)
				for (uint64 d = 0; d < SPI_processed; d++)
					bf_slots_purge_db(MyDatabaseId, InvalidOid,
									  SPI_getvalue(SPI_tuptable->vals[d], SPI_tuptable->tupdesc, 1));
			/* a dropped column: its guard's trigger would now fail */
			if (column && SPI_processed > 0)
			{
				sql = psprintf("DROP TRIGGER IF EXISTS %s ON %s.%s",
							   quote_identifier(trigger_name(NameStr(names[2]))),
							   quote_identifier(NameStr(names[0])),
							   quote_identifier(NameStr(names[1])));
				if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
					elog(ERROR, "bloomfilter: could not drop the trigger of a dropped column");
			}
		}
	}
	else
	{
		/*
		 * A guarded column must keep a key type: refuse an ALTER TABLE that
		 * changes it to a type without a canonical form (or text under a
		 * nondeterministic collation), which the guard's trigger could not
		 * hash.  Checked against the definitions, loaded or not.
		 */
		int			rc = SPI_execute(psprintf("SELECT d.column_name::text, c.oid, t.relid, "
											  "(SELECT tg.tgenabled FROM pg_catalog.pg_trigger tg "
											  " WHERE tg.tgrelid = t.relid AND tg.tgname = pg_catalog.left('bloom_guard_' OPERATOR(pg_catalog.||) d.column_name, %d))::text "
											  "FROM %s d "
											  "JOIN pg_catalog.pg_namespace n ON n.nspname = d.schema_name "
											  "JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = d.table_name "
											  "JOIN (SELECT DISTINCT objid AS relid FROM pg_catalog.pg_event_trigger_ddl_commands() "
											  "      WHERE object_type IN ('table', 'table column')) t "
											  "  ON t.relid = c.oid OR c.oid IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors(t.relid) a)",
											  NAMEDATALEN - 1, config_name()), false, 0);

		if (rc != SPI_OK_SELECT)
			elog(ERROR, "bloomfilter: could not read the guarded columns");
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tup = SPI_tuptable->vals[r];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			char	   *column = SPI_getvalue(tup, desc, 1);
			Oid			relid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
			Oid			altered = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
			char	   *tgenabled = SPI_getvalue(tup, desc, 4);
			AttrNumber	attnum = get_attnum(relid, column);
			Oid			typid;
			int32		typmod;
			Oid			collid;

			/*
			 * A dropped column's definition is gone (sql_drop ran first), so
			 * a definition naming a column that no longer exists was renamed:
			 * refuse, the guard follows column names.
			 */
			if (attnum == InvalidAttrNumber)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot rename column \"%s\" of table \"%s\": it is guarded by a shared bloom filter",
								column, get_rel_name(relid)),
						 errhint("Remove the guard first with bloom_unguard(), rename the column, then guard it again.")));

			/* rows written while the guard's trigger is off would be missing */
			if (tgenabled != NULL && strcmp(tgenabled, "A") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot disable trigger \"bloom_guard_%s\" of table \"%s\": it keeps a shared bloom filter current",
								column, get_rel_name(altered)),
						 errdetail("Rows written while it is disabled would be missing from the filter, which would then answer \"no\" for them."),
						 errhint("Remove the guard first with bloom_unguard(), or disable only other triggers (DISABLE TRIGGER name).")));

			/* the catalog as the command left it */
			get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
			if (!bf_key_type_usable(typid, collid))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("column \"%s\" of table \"%s\" is guarded by a shared bloom filter and cannot become type %s%s",
								column, get_rel_name(relid),
								format_type_be(typid),
								OidIsValid(collid) && !get_collation_isdeterministic(collid) ?
								" under a nondeterministic collation" : ""),
						 errdetail("A shared filter needs keys with a canonical form; see the key types of bloomfilter."),
						 errhint("Remove the guard first with bloom_unguard(), then change the column.")));
		}
	}
	if (strcmp(ev->event, "sql_drop") != 0 && shm)
	{
		/*
		 * The altered tables and, for partitions, every table above them:
		 * a guard on any of them is rebuilt (below).
		 */
		int			rc = SPI_execute("SELECT DISTINCT a.relid FROM pg_catalog.pg_event_trigger_ddl_commands() c, "
									 "LATERAL (SELECT c.objid AS relid UNION "
									 "         SELECT p.relid FROM pg_catalog.pg_partition_ancestors(c.objid) p) a "
									 "WHERE c.object_type IN ('table', 'table column')", false, 0);
		SPITupleTable *tt = SPI_tuptable;
		uint64		n = SPI_processed;
		Oid			cfgoid = bf_config_table(false);

		if (rc != SPI_OK_SELECT)
			elog(ERROR, "bloomfilter: could not read the DDL commands");
		for (uint64 r = 0; r < n; r++)
		{
			bool		isnull;
			Oid			relid = DatumGetObjectId(SPI_getbinval(tt->vals[r], tt->tupdesc, 1, &isnull));

			for (int i = 0; i < bf_shared->nslots; i++)
			{
				BfSharedSlot *s = &bf_shared->slots[i];
				bool		mine;
				AttrNumber	attnum;
				int64		defid;
				char	   *attname;

				LWLockAcquire(bf_slot_lock(i), LW_SHARED);
				mine = s->in_use && s->dbid == MyDatabaseId && s->cfgoid == cfgoid &&
					s->relid == relid;
				attnum = s->attnum;
				defid = s->defid;
				LWLockRelease(bf_slot_lock(i));
				if (!mine || attnum <= 0)
					continue;
				attname = get_attname(relid, attnum, true);
				if (attname == NULL)
					continue;	/* dropped: sql_drop handles it */
				{
					/* follow renames */
					Oid			types[4] = {NAMEOID, NAMEOID, NAMEOID, INT8OID};
					Datum		values[4];
					NameData	names[3];

					namestrcpy(&names[0], get_namespace_name(get_rel_namespace(relid)));
					namestrcpy(&names[1], get_rel_name(relid));
					namestrcpy(&names[2], attname);
					for (int k = 0; k < 3; k++)
						values[k] = NameGetDatum(&names[k]);
					values[3] = Int64GetDatum(defid);
					config_exec(psprintf("UPDATE %s SET schema_name = $1, table_name = $2, column_name = $3 "
										 "WHERE id = $4 AND (schema_name, table_name, column_name) IS DISTINCT FROM ($1, $2, $3)",
										 config_name()),
								4, types, values, SPI_OK_UPDATE);
				}
				/*
				 * Any ALTER TABLE of the guarded table, or of a partition
				 * below it, may have changed its keys without firing the
				 * trigger: a rewrite with USING or a new typmod or
				 * generation expression (same type OID), an ATTACH PARTITION
				 * bringing rows no trigger saw.  Answer "maybe" until rebuilt.
				 */
				if (relid != enabling_trigger_on)
				{
					bf_slot_unload(i);
					bf_request_load(MyDatabaseId);
				}
			}
		}
	}
	SPI_finish();
	PG_RETURN_VOID();
}
