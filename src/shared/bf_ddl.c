/*
 * bf_ddl.c
 *		The event triggers that keep guards sound through DDL.
 *
 * After every command that can touch a guarded table or its triggers
 * (ddl_command_end of ALTER TABLE, CREATE TABLE, CREATE TRIGGER and ALTER
 * TRIGGER; sql_drop of anything), each guard whose tree the command touched
 * is checked against the catalogs as the command left them:
 *
 *  - guarded table or column dropped: the guard goes with it;
 *  - the guarded table's guard trigger dropped: the guard is removed
 *    (NOTICE); checks then fail, never answer "no";
 *  - the guarded table without a guard trigger otherwise (replaced by a
 *    trigger calling another function; during a restore, the definition
 *    comes before the triggers): the guard is suspended until it has one;
 *  - a guard trigger of another shape (BEFORE, no UPDATE, WHEN, column
 *    list): refused;
 *  - a guard trigger disabled anywhere in the tree: the filter is dropped
 *    from memory and checks answer "maybe"; the build that follows finds the
 *    trigger disabled and leaves the guard suspended until it is enabled;
 *  - a guard trigger enabled other than ALWAYS (ENABLE, ENABLE REPLICA,
 *    ENABLE TRIGGER ALL, CREATE OR REPLACE): set back to ALWAYS;
 *  - an inheritance child without the guard trigger: it gets one;
 *  - the guarded column renamed, or changed to a type without a canonical
 *    form: refused;
 *  - anything else an ALTER TABLE may do to keys (type change, rewrite,
 *    ATTACH PARTITION, INHERIT): the filter is dropped from memory (checks
 *    answer "maybe") and rebuilt.
 *
 * Queries run with a fixed search_path and schema-qualified names.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/deparse_utility.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bf_shared.h"

PG_FUNCTION_INFO_V1(bloom_shared_ddl);

/* A table a command touched, and whether its keys may have changed. */
typedef struct Touched
{
	Oid			relid;
	bool		keys_changed;
	bool		triggers_changed;
	bool		trigger_dropped;
	bool		joined;			/* it became a child (CREATE TABLE, INHERIT) */
	bool		rows_changed;	/* keys changed otherwise than by ATTACH or
								 * DETACH PARTITION */
	List	   *attached;		/* tables created below it (PARTITION OF) */
	bool		trigger_created;	/* CREATE TRIGGER on it */
	bool		renamed;		/* it or its schema was renamed */
} Touched;

static Oid
trigger_table(Oid trigoid)
{
	Relation	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(trigoid));
	scan = systable_beginscan(rel, TriggerOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		relid = ((Form_pg_trigger) GETSTRUCT(tup))->tgrelid;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return relid;
}

/* Record what a command did to a table (merged with what it did before). */
static List *
touch(List *touched, Oid relid, const Touched *what)
{
	ListCell   *lc;
	Touched    *t;

	if (!OidIsValid(relid))
		return touched;
	foreach(lc, touched)
	{
		t = lfirst(lc);
		if (t->relid == relid)
		{
			t->keys_changed |= what->keys_changed;
			t->triggers_changed |= what->triggers_changed;
			t->trigger_dropped |= what->trigger_dropped;
			t->joined |= what->joined;
			t->trigger_created |= what->trigger_created;
			t->renamed |= what->renamed;
			t->rows_changed |= what->rows_changed;
			t->attached = list_concat(t->attached, what->attached);
			return touched;
		}
	}
	t = palloc(sizeof(Touched));
	*t = *what;
	t->relid = relid;
	return lappend(touched, t);
}

/* ALTER TABLE subcommands that change no key of any existing row. */
static bool
subcommand_keeps_keys(AlterTableType type, bool *trigger)
{
	switch (type)
	{
		case AT_EnableTrig:
		case AT_EnableAlwaysTrig:
		case AT_EnableReplicaTrig:
		case AT_DisableTrig:
		case AT_EnableTrigAll:
		case AT_DisableTrigAll:
		case AT_EnableTrigUser:
		case AT_DisableTrigUser:
			*trigger = true;
			return true;
		case AT_SetRelOptions:
		case AT_ResetRelOptions:
		case AT_ReplaceRelOptions:
		case AT_SetStatistics:
		case AT_SetStorage:
		case AT_SetCompression:
		case AT_ClusterOn:
		case AT_DropCluster:
		case AT_ChangeOwner:
		case AT_EnableRowSecurity:
		case AT_DisableRowSecurity:
		case AT_ForceRowSecurity:
		case AT_NoForceRowSecurity:
		case AT_ReplicaIdentity:
		case AT_AddIndex:
		case AT_ReAddIndex:
		case AT_AddIndexConstraint:
		case AT_AddConstraint:
		case AT_ReAddConstraint:
		case AT_ValidateConstraint:
		case AT_DropConstraint:
		case AT_SetNotNull:
		case AT_DropNotNull:
		case AT_ColumnDefault:
		case AT_GenericOptions:
			return true;
		default:
			return false;
	}
}

/* The names of the guard triggers on a table (no lock: a catalog scan). */
static List *
guard_trigger_names(Oid relid, Oid trigfn)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *names = NIL;

	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tup);

		if (tg->tgfoid == trigfn)
			names = lappend(names, pstrdup(NameStr(tg->tgname)));
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return names;
}

static bool
name_in(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
	{
		if (strcmp(lfirst(lc), name) == 0)
			return true;
	}
	return false;
}

/*
 * ATTACH PARTITION clones the parent's guard trigger to the partition; if
 * the table attached is guarded itself under the same trigger name, the
 * clone fails with a duplicate-trigger error: say what to do instead.
 */
static void
check_attach(RangeVar *parent, RangeVar *child, Oid trigfn)
{
	Oid			parentid = RangeVarGetRelid(parent, NoLock, true);
	Oid			childid = RangeVarGetRelid(child, NoLock, true);
	List	   *parent_names;
	List	   *members;
	ListCell   *lc;
	ListCell   *lm;

	if (!OidIsValid(parentid) || !OidIsValid(childid))
		return;
	parent_names = guard_trigger_names(parentid, trigfn);
	if (parent_names == NIL)
		return;
	members = bf_tree_members(childid, NoLock);
	foreach(lm, members)
	{
		List	   *names = guard_trigger_names(lfirst_oid(lm), trigfn);

		foreach(lc, names)
		{
			char	   *name = lfirst(lc);

			if (!name_in(parent_names, name))
				continue;
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot attach guarded table \"%s\" as a partition of guarded table \"%s\"",
							get_rel_name(childid), get_rel_name(parentid)),
					 errdetail("Guard trigger \"%s\" of \"%s\" would be cloned to \"%s\", which has a trigger of that name.",
							   name, get_rel_name(parentid), get_rel_name(lfirst_oid(lm))),
					 errhint("Remove the table's own guard with bloom_unguard() first; the guard of \"%s\" then covers it.",
							 get_rel_name(parentid))));
		}
	}
}

/* Before an ALTER TABLE runs (the ProcessUtility hook). */
void
bf_ddl_check_attach(Node *stmt)
{
	AlterTableStmt *ats;
	ListCell   *lc;
	Oid			trigfn = InvalidOid;

	if (!IsA(stmt, AlterTableStmt))
		return;
	ats = (AlterTableStmt *) stmt;
	foreach(lc, ats->cmds)
	{
		AlterTableCmd *at = lfirst(lc);
		PartitionCmd *pc = (PartitionCmd *) at->def;

		if (at->subtype != AT_AttachPartition || pc == NULL ||
			!IsA(pc, PartitionCmd) || pc->name == NULL)
			continue;
		if (!OidIsValid(trigfn))
			trigfn = bf_trigger_function(true);
		if (!OidIsValid(trigfn))
			return;
		check_attach(ats->relation, pc->name, trigfn);
	}
}

/*
 * ATTACH or DETACH PARTITION: the tree gains or loses a partition, the keys
 * of the others stay.  A table guarded per partition only adds or frees the
 * filter of that partition (and those below it).  A table attached brings no
 * filter of this guard with it, except one detached earlier in the same
 * transaction, whose filter is freed only at commit: bf_members_reconcile
 * rebuilds that one (it missed the writes made while the table was out).
 */
static bool
partition_subcommand(AlterTableCmd *at)
{
	return at->subtype == AT_AttachPartition ||
		at->subtype == AT_DetachPartition ||
		at->subtype == AT_DetachPartitionFinalize;
}

/* The tables a ddl_command_end command touched. */
static List *
commands_touched(void)
{
	List	   *touched = NIL;
	int			rc = SPI_execute("SELECT command FROM pg_catalog.pg_event_trigger_ddl_commands()",
								 true, 0);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the DDL commands: %s", SPI_result_code_string(rc));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		CollectedCommand *cmd = (CollectedCommand *)
			DatumGetPointer(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc,
										  1, &isnull));
		ListCell   *lc;

		if (isnull)
			continue;
		if (cmd->type == SCT_AlterTable)
		{
			Touched		what = {0};
			bool		keeps = true;

			if (cmd->d.alterTable.classId != RelationRelationId)
				continue;
			foreach(lc, cmd->d.alterTable.subcmds)
			{
				CollectedATSubcmd *sub = lfirst(lc);
				AlterTableCmd *at = (AlterTableCmd *) sub->parsetree;

				if (IsA(at, AlterTableCmd) && partition_subcommand(at))
					keeps = false;
				else if (!IsA(at, AlterTableCmd) ||
						 !subcommand_keeps_keys(at->subtype, &what.triggers_changed))
				{
					keeps = false;
					what.rows_changed = true;
				}
				if (IsA(at, AlterTableCmd) && at->subtype == AT_AddInherit)
					what.joined = true;
			}
			what.keys_changed = !keeps;
			touched = touch(touched, cmd->d.alterTable.objectId, &what);
		}
		else if (cmd->type == SCT_Simple)
		{
			ObjectAddress a = cmd->d.simple.address;
			Touched		what = {0};

			if (a.classId == TriggerRelationId)
			{
				what.triggers_changed = true;
				what.trigger_created = IsA(cmd->parsetree, CreateTrigStmt);
				touched = touch(touched, trigger_table(a.objectId), &what);
			}
			else if (a.classId == RelationRelationId)
			{
				what.joined = IsA(cmd->parsetree, CreateStmt) ||
					IsA(cmd->parsetree, CreateForeignTableStmt);
				if (what.joined)
					what.attached = list_make1_oid(a.objectId);
				what.renamed = IsA(cmd->parsetree, RenameStmt) &&
					((RenameStmt *) cmd->parsetree)->renameType == OBJECT_TABLE;
				touched = touch(touched, a.objectId, &what);
			}
		}
	}
	return touched;
}

/* The tables whose triggers a sql_drop removed (those that still exist). */
static List *
drops_touched(List *defs, List **removed)
{
	List	   *touched = NIL;
	int			rc = SPI_execute("SELECT classid, objid, objsubid, object_type, address_names "
								 "FROM pg_catalog.pg_event_trigger_dropped_objects()",
								 true, 0);

	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read the dropped objects: %s", SPI_result_code_string(rc));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Oid			classid = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
		Oid			objid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		int32		objsubid = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
		Datum		names = SPI_getbinval(tup, desc, 5, &isnull);
		Datum	   *elems = NULL;
		int			nelems = 0;
		ListCell   *lc;

		if (!isnull)
			deconstruct_array(DatumGetArrayTypeP(names), TEXTOID, -1, false,
							  TYPALIGN_INT, &elems, NULL, &nelems);
		if (classid == TriggerRelationId && nelems >= 2)
		{
			/* the trigger's table, if it is not being dropped too */
			Oid			nsp = get_namespace_oid(TextDatumGetCString(elems[0]), true);
			Oid			relid = OidIsValid(nsp) ?
				get_relname_relid(TextDatumGetCString(elems[1]), nsp) : InvalidOid;
			Touched		what = {0};

			what.triggers_changed = true;
			what.trigger_dropped = true;
			touched = touch(touched, relid, &what);
			continue;
		}
		if (classid != RelationRelationId)
			continue;
		foreach(lc, defs)
		{
			BfDefinition *d = lfirst(lc);
			bool		gone;

			/* a dropped partition's own filter (its OID may come back) */
			if (objsubid == 0 && bf_shared_available())
				bf_members_forget_at_commit(d->id, objid);

			if (d->relid != objid)
				continue;
			gone = objsubid == 0 ||
				(nelems >= 3 &&
				 strcmp(TextDatumGetCString(elems[2]), NameStr(d->column_name)) == 0);
			if (gone && !list_member_ptr(*removed, d))
				*removed = lappend(*removed, d);
		}
	}
	return touched;
}

/* Create the guard trigger on every inheritance child that lacks it. */
static void
add_child_triggers(const BfDefinition *def)
{
	List	   *members = bf_tree_members(def->relid, AccessShareLock);
	ListCell   *lc;

	foreach(lc, members)
	{
		Oid			relid = lfirst_oid(lc);

		if (relid != def->relid && !get_rel_relispartition(relid) &&
			bf_guard_triggers(relid, def->name) == NIL)
		{
			ereport(NOTICE,
					(errmsg("table \"%s\" now inherits from a table guarded by shared bloom filter \"%s\": its guard trigger was created",
							get_rel_name(relid), def->name)));
			bf_guard_create_trigger(relid, def);
		}
	}
}

static void
enable_always_everywhere(const BfDefinition *def)
{
	List	   *members = bf_tree_members(def->relid, AccessShareLock);
	ListCell   *lc;

	foreach(lc, members)
		bf_guard_enable_always(lfirst_oid(lc), def);
}

/* The guarded column must still be there, with a type that has keys. */
static void
check_column(const BfDefinition *def)
{
	AttrNumber	attnum = get_attnum(def->relid, NameStr(def->column_name));
	Oid			typid;
	int32		typmod;
	Oid			collid;

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rename column \"%s\" of table \"%s\": it is guarded by shared bloom filter \"%s\"",
						NameStr(def->column_name), get_rel_name(def->relid), def->name),
				 errhint("Remove the guard with bloom_unguard(), rename the column, then guard it again.")));
	get_atttypetypmodcoll(def->relid, attnum, &typid, &typmod, &collid);
	if (!bf_key_type_usable(typid, collid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of table \"%s\" is guarded by shared bloom filter \"%s\" and cannot become type %s%s",
						NameStr(def->column_name), get_rel_name(def->relid), def->name,
						format_type_be(typid),
						OidIsValid(collid) && !get_collation_isdeterministic(collid) ?
						" under a nondeterministic collation" : ""),
				 errdetail("A shared filter needs keys with a canonical form."),
				 errhint("Remove the guard with bloom_unguard(), then change the column.")));
}

/*
 * A guard on a partitioned table: each partition's filter follows the tree
 * (bf_members_reconcile); new and re-attached tables' filters are built
 * afresh; a change of keys or a guard not sound forgets them all, as for one
 * filter.
 */
static void
review_partitions(const BfDefinition *def, bool rebuild, bool triggers_changed,
				  List *attached)
{
	List	   *members;
	ListCell   *lc;

	bf_members_reconcile(def, attached);
	if (rebuild)
		bf_filter_request_build(def, InvalidTransactionId, true);
	else if (triggers_changed)
	{
		members = bf_filter_members(def);
		foreach(lc, members)
		{
			if (bf_filter_needs_build(lfirst(lc)))
				bf_filter_request_build(lfirst(lc), InvalidTransactionId, false);
		}
		list_free_deep(members);
	}
	/* call sites read the partitions (and the column) again */
	if (rebuild || attached != NIL)
		CacheInvalidateRelcacheByRelid(bf_config_table(false));
}

/*
 * Bring one guard in line with what a command did to its tree.
 * trigger_dropped: the command dropped a trigger of the guarded table;
 * joined: a table became a child of the tree (CREATE TABLE, INHERIT);
 * rows_changed: keys may have changed otherwise than by ATTACH or DETACH
 * PARTITION; attached: the tables created under the tree.
 */
static void
review_guard(const BfDefinition *def, bool keys_changed, bool triggers_changed,
			 bool trigger_dropped, bool joined, bool rows_changed, List *attached)
{
	Oid			culprit;
	BfGuardState st;

	check_column(def);
	bf_tree_check_guardable(def->relid);
	st = bf_guard_state(def->relid, def->name,
						bf_guard_follows_deletes(def->layout), &culprit);
	if (st == BF_GUARD_MISSING && trigger_dropped)
	{
		ereport(NOTICE,
				(errmsg("shared bloom filter \"%s\" was removed: table \"%s\" no longer has its guard trigger",
						def->name, get_rel_name(def->relid))));
		/*
		 * The other tables' triggers stay: they do nothing without the
		 * definition, and pg_restore --clean drops each by name.
		 */
		bf_guard_remove(def, false);
		return;
	}
	if (st == BF_GUARD_DUPLICATE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("table \"%s\" has more than one trigger calling bloom_shared_trigger('%s')",
						get_rel_name(culprit), def->name),
				 errdetail("The filter has layout %s: each trigger would remove a deleted row's key, and the filter would answer \"no\" for other rows with that key.",
						   bf_guard_layout_name(def->layout)),
				 errhint("Let bloom_guard() create the guard trigger.")));
	if (st == BF_GUARD_BAD_SHAPE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("a trigger on table \"%s\" calls bloom_shared_trigger('%s') but is not a non-deferrable AFTER INSERT OR UPDATE ... FOR EACH ROW trigger without WHEN or column list",
						get_rel_name(culprit), def->name),
				 errdetail("Such a trigger would miss rows, and the filter would answer \"no\" for them."),
				 errhint("Let bloom_guard() create the guard trigger.")));
	/*
	 * A new child gets the guard trigger.  A child that lacks it otherwise
	 * (its trigger dropped; a restore that creates the triggers one by one)
	 * leaves the guard suspended until it has one.
	 */
	if (st == BF_GUARD_CHILD_MISSING && joined)
	{
		add_child_triggers(def);
		keys_changed = true;
		st = BF_GUARD_OK;
	}
	if (st == BF_GUARD_NOT_ALWAYS)
	{
		enable_always_everywhere(def);
		st = BF_GUARD_OK;
	}
	if (st == BF_GUARD_CHILD_MISSING || st == BF_GUARD_MISSING)
		ereport(NOTICE,
				(errmsg("shared bloom filter \"%s\" is suspended: table \"%s\" has no guard trigger",
						def->name, get_rel_name(culprit)),
				 errdetail("Checks answer \"maybe\" until every table of the guarded tree has one.")));
	if (st == BF_GUARD_DISABLED)
		ereport(NOTICE,
				(errmsg("shared bloom filter \"%s\" is suspended: its trigger is disabled on table \"%s\"",
						def->name, get_rel_name(culprit)),
				 errdetail("Checks answer \"maybe\" until the trigger is enabled again; the filter is then rebuilt.")));
	if (!bf_shared_available())
		return;
	if (bf_tree_per_partition(def->relid))
	{
		review_partitions(def, st != BF_GUARD_OK || rows_changed, triggers_changed,
						  attached);
		return;
	}

	/*
	 * Not sound (disabled, or the guarded table has no trigger yet, as during
	 * a restore): forget the bits; the build that follows leaves the guard
	 * suspended until the triggers are in place.
	 */
	if (st != BF_GUARD_OK || keys_changed)
	{
		bf_filter_request_build(def, InvalidTransactionId, true);
		/* call sites resolve the column again (its type may have changed) */
		CacheInvalidateRelcacheByRelid(bf_config_table(false));
	}
	else if (triggers_changed && bf_filter_needs_build(def))
		bf_filter_request_build(def, InvalidTransactionId, false);
}

/*
 * Guard triggers of a filter on tables outside its tree: a table that left
 * it (NO INHERIT) and those below it lose them; one just created on an
 * unrelated table is refused.
 */
static void
drop_stray_triggers(const BfDefinition *def, const Touched *t)
{
	List	   *below = bf_tree_members(t->relid, AccessShareLock);
	ListCell   *lc;

	foreach(lc, below)
	{
		Oid			relid = lfirst_oid(lc);
		List	   *names;
		ListCell   *ln;

		if (bf_tree_contains(def->relid, relid))
			continue;
		names = bf_guard_triggers(relid, def->name);
		if (names != NIL && t->trigger_created && relid == t->relid)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("a trigger on table \"%s\" cannot maintain shared bloom filter \"%s\" of table \"%s\"",
							get_rel_name(relid), def->name, get_rel_name(def->relid)),
					 errdetail("A filter holds the keys of its table, its partitions and its inheritance children only."),
					 errhint("Guard this table's column with bloom_guard().")));
		foreach(ln, names)
		{
			ereport(NOTICE,
					(errmsg("trigger \"%s\" of table \"%s\" was dropped: the table is no longer part of the table guarded by shared bloom filter \"%s\"",
							(char *) lfirst(ln), get_rel_name(relid), def->name)));
			bf_own_ddl++;
			PG_TRY();
			{
				bf_spi_exec(psprintf("DROP TRIGGER %s ON %s", quote_identifier(lfirst(ln)),
									 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
																get_rel_name(relid))),
							0, NULL, NULL, SPI_OK_UTILITY);
			}
			PG_FINALLY();
			{
				bf_own_ddl--;
			}
			PG_END_TRY();
		}
	}
}

/*
 * Every trigger calling bloom_shared_trigger fires ALWAYS, whether or not its
 * definition exists yet: pg_restore --data-only --disable-triggers enables
 * a table's triggers again (ENABLE TRIGGER ALL, as ORIGIN) before it loads
 * the definitions, which come with the extension's data.
 */
static void
keep_guard_triggers_always(Oid relid)
{
	Oid			trigfn = bf_trigger_function(true);
	Relation	rel;
	TriggerDesc *td;
	List	   *names = NIL;
	ListCell   *lc;

	if (!OidIsValid(trigfn) || !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return;
	if (get_rel_relkind(relid) != RELKIND_RELATION &&
		get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return;					/* a view's or foreign table's: reviewed below */
	rel = relation_open(relid, AccessShareLock);
	td = rel->trigdesc;
	for (int k = 0; td != NULL && k < td->numtriggers; k++)
	{
		Trigger    *tg = &td->triggers[k];

		if (tg->tgfoid == trigfn && tg->tgenabled != TRIGGER_FIRES_ALWAYS &&
			tg->tgenabled != TRIGGER_DISABLED)
			names = lappend(names, pstrdup(tg->tgname));
	}
	relation_close(rel, NoLock);
	foreach(lc, names)
	{
		bf_own_ddl++;
		PG_TRY();
		{
			bf_spi_exec(psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s",
								 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
															get_rel_name(relid)),
								 quote_identifier(lfirst(lc))),
						0, NULL, NULL, SPI_OK_UTILITY);
		}
		PG_FINALLY();
		{
			bf_own_ddl--;
		}
		PG_END_TRY();
	}
}

static void
review_touched(List *defs, List *touched, List *removed)
{
	ListCell   *lc;

	foreach(lc, defs)
	{
		BfDefinition *d = lfirst(lc);
		bool		mine = false;
		bool		keys_changed = false;
		bool		triggers_changed = false;
		bool		trigger_dropped = false;
		bool		joined = false;
		bool		rows_changed = false;
		List	   *attached = NIL;
		ListCell   *lt;

		if (list_member_ptr(removed, d))
			continue;
		foreach(lt, touched)
		{
			Touched    *t = lfirst(lt);

			if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(t->relid)))
				continue;
			/*
			 * A table of the guard's tree, or one above it: ALTER TABLE on a
			 * parent recurses into its partitions and children.
			 */
			if (bf_tree_contains(d->relid, t->relid) ||
				bf_tree_contains(t->relid, d->relid))
			{
				mine = true;
				keys_changed |= t->keys_changed;
				triggers_changed |= t->triggers_changed;
				trigger_dropped |= t->trigger_dropped && t->relid == d->relid;
				joined |= t->joined && t->relid != d->relid;
				rows_changed |= t->rows_changed;
				attached = list_concat(attached, t->attached);
			}
			else
				drop_stray_triggers(d, t);
			if (t->renamed && t->relid == d->relid)
				ereport(NOTICE,
						(errmsg("shared bloom filter \"%s\" keeps guarding table \"%s\" under its new name",
								d->name, get_rel_name(d->relid)),
						 errdetail("Guards follow their table, not its name; a table created under the old name is not guarded.")));
		}
		if (mine)
			review_guard(d, keys_changed, triggers_changed, trigger_dropped, joined,
						 rows_changed, attached);
	}
}

Datum
bloom_shared_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *ev;
	List	   *defs;
	List	   *touched;
	List	   *removed = NIL;
	int			level;
	ListCell   *lc;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloom_shared_ddl() must be called as an event trigger")));
	ev = (EventTriggerData *) fcinfo->context;
	/* our own DDL, and the extension's own scripts (an update alters its table) */
	if (bf_own_ddl > 0 ||
		(creating_extension &&
		 CurrentExtensionObject == get_extension_oid("bloomfilter", true)))
		PG_RETURN_VOID();

	bf_def_invalidate();
	if (!OidIsValid(bf_config_table(true)))
	{
		/* the extension is being dropped: forget this database's filters */
		if (bf_shared_available())
			bf_filters_forget_db(MyDatabaseId, InvalidOid);
		PG_RETURN_VOID();
	}
	/* not updated yet to this library's version: nothing can be guarded */
	if (!bf_config_current())
		PG_RETURN_VOID();
	defs = bf_def_all();
	if (defs == NIL && strcmp(ev->event, "sql_drop") == 0)
		PG_RETURN_VOID();

	SPI_connect();
	level = bf_fixed_search_path();
	if (strcmp(ev->event, "sql_drop") == 0)
		touched = drops_touched(defs, &removed);
	else
	{
		touched = commands_touched();
		foreach(lc, touched)
			keep_guard_triggers_always(((Touched *) lfirst(lc))->relid);
	}
	foreach(lc, removed)
	{
		BfDefinition *d = lfirst(lc);

		bf_def_delete(d->id);
		bf_guard_drop_triggers(d);
		if (bf_shared_available())
			bf_filter_forget(d->id);
	}
	review_touched(defs, touched, removed);
	bf_restore_search_path(level);
	SPI_finish();
	PG_RETURN_VOID();
}
