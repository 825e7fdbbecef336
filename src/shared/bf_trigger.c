/*
 * bf_trigger.c
 *		bloom_shared_trigger(): keeps a shared filter current.
 *
 * Used by the trigger bloom_guard() creates (AFTER INSERT OR UPDATE
 * FOR EACH ROW, argument: the filter name), and usable in user-written
 * triggers: bloom_shared_trigger('<filter>' [, '<column>']) — the column
 * argument is needed when the trigger is on another table than the guarded
 * one.  An AFTER ROW trigger sees the row as stored: a BEFORE trigger could
 * still be followed by one that changes the key, so BEFORE is refused.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bf_shared.h"

PG_FUNCTION_INFO_V1(bloom_shared_trigger);

typedef struct TriggerSite
{
	uint64		epoch;
	Oid			trigrelid;
	char		name[BF_SHARED_NAME_LEN];
	BfDefinition def;
	Oid			cfgoid;
	AttrNumber	attnum;
	BfKeyType	kt;
	int			slot;
	uint32		generation;
} TriggerSite;

/* The guarded table itself, or one of its partitions (cloned triggers). */
static bool
is_guarded_relation(Relation rel, const BfDefinition *def)
{
	Oid			nsp = get_namespace_oid(NameStr(def->schema_name), true);
	Oid			guarded = OidIsValid(nsp) ?
		get_relname_relid(NameStr(def->table_name), nsp) : InvalidOid;

	if (!OidIsValid(guarded))
		return false;
	if (guarded == RelationGetRelid(rel))
		return true;
	if (rel->rd_rel->relispartition)
		return list_member_oid(get_partition_ancestors(RelationGetRelid(rel)), guarded);
	return false;
}

static TriggerSite *
trigger_site(FunctionCallInfo fcinfo, TriggerData *td)
{
	TriggerSite *site = fcinfo->flinfo->fn_extra;
	Trigger    *tg = td->tg_trigger;
	Relation	rel = td->tg_relation;
	const char *name = tg->tgargs[0];
	const char *colname;
	Form_pg_attribute att;

	if (site && site->epoch == bf_def_epoch &&
		site->trigrelid == RelationGetRelid(rel) && strcmp(site->name, name) == 0)
		return site;
	if (site == NULL)
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(TriggerSite));
	else
		memset(site, 0, sizeof(TriggerSite));
	fcinfo->flinfo->fn_extra = site;

	if (!bf_def_lookup(name, &site->def))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("shared bloom filter \"%s\" of trigger \"%s\" does not exist",
						name, tg->tgname),
				 errhint("Create it with bloom_guard(table, column), or drop the trigger.")));
	site->cfgoid = bf_config_table(false);
	/*
	 * Only on the guarded table (or a partition of it): a rebuild reads that
	 * table alone, so keys added from another table would be lost by the
	 * next rebuild, and the filter would then answer "no" for them.
	 */
	if (!is_guarded_relation(rel, &site->def))
		ereport(ERROR,
				(errcode(ERRCODE_TRIGGERED_ACTION_EXCEPTION),
				 errmsg("trigger \"%s\" on table \"%s\" cannot maintain shared bloom filter \"%s\", which guards table \"%s.%s\"",
						tg->tgname, RelationGetRelationName(rel), name,
						NameStr(site->def.schema_name), NameStr(site->def.table_name)),
				 errdetail("A rebuild reads only the guarded table: keys added from another table would be lost."),
				 errhint("Guard each table's column with bloom_guard().")));
	colname = NameStr(site->def.column_name);
	site->attnum = SPI_fnumber(RelationGetDescr(rel), colname);
	if (site->attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of trigger \"%s\" does not exist in table \"%s\"",
						colname, tg->tgname, RelationGetRelationName(rel))));
	att = TupleDescAttr(RelationGetDescr(rel), site->attnum - 1);
	bf_key_type_init(&site->kt, att->atttypid, att->attcollation, InvalidOid);
	strlcpy(site->name, name, sizeof(site->name));
	site->trigrelid = RelationGetRelid(rel);
	site->slot = -1;
	site->epoch = bf_def_epoch;
	return site;
}

Datum
bloom_shared_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	TriggerSite *site;
	HeapTuple	tuple;
	Datum		value;
	bool		isnull;
	BfHash		h;
	int			i;
	bool		wake = false;
	bool		stale = false;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloom_shared_trigger() must be called as a trigger")));
	td = (TriggerData *) fcinfo->context;
	if (!TRIGGER_FIRED_AFTER(td->tg_event) || !TRIGGER_FIRED_FOR_ROW(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloom_shared_trigger() must be fired AFTER ... FOR EACH ROW"),
				 errhint("A BEFORE trigger could be followed by another that changes the key.")));
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		tuple = td->tg_newtuple;
	else if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		tuple = td->tg_trigtuple;
	else
		return PointerGetDatum(NULL);	/* DELETE: bits stay */
	if (td->tg_trigger->tgnargs < 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloom_shared_trigger() needs the filter name as its argument")));

	/* without shared memory there is nothing to keep current */
	if (!bf_shared_enabled || bf_shared == NULL)
		return PointerGetDatum(NULL);

	site = trigger_site(fcinfo, td);
	value = heap_getattr(tuple, site->attnum, RelationGetDescr(td->tg_relation), &isnull);
	if (isnull)
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		bool		oldnull;
		Datum		oldvalue = heap_getattr(td->tg_trigtuple, site->attnum,
											RelationGetDescr(td->tg_relation), &oldnull);
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(td->tg_relation),
											  site->attnum - 1);

		/* the key did not change: it is in the filter already */
		if (!oldnull && datumIsEqual(oldvalue, value, att->attbyval, att->attlen))
			return PointerGetDatum(NULL);
	}
	h = bf_key_hash(&site->kt, value, BF_LAYOUT_BLOCKED);

	i = site->slot;
	if (i >= 0)
	{
		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		if (!bf_shared->slots[i].in_use || bf_shared->slots[i].generation != site->generation)
		{
			LWLockRelease(bf_slot_lock(i));
			i = -1;
		}
	}
	if (i < 0)
	{
		/* not loaded: a build scans the table after this transaction ends */
		i = bf_slot_find(MyDatabaseId, site->name, site->cfgoid, site->def.id);
		if (i < 0)
			return PointerGetDatum(NULL);
		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		site->slot = i;
		site->generation = bf_shared->slots[i].generation;
		if (!bf_shared->slots[i].in_use)
		{
			LWLockRelease(bf_slot_lock(i));
			site->slot = -1;
			return PointerGetDatum(NULL);
		}
	}
	{
		BfSharedSlot *s = &bf_shared->slots[i];

		if ((s->has_live || s->has_next) && s->key_kind != (int) site->kt.kind)
			stale = true;		/* built for another column type */
		else
			wake = bf_slot_add_locked(s, h);
	}
	LWLockRelease(bf_slot_lock(i));
	if (stale)
	{
		/* never keep a filter that cannot take this key: unload and rebuild */
		bf_slot_unload(i);
		bf_request_load(MyDatabaseId);
	}
	if (wake)
		bf_wake_launcher();
	return PointerGetDatum(NULL);
}
