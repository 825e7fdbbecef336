/*
 * bf_trigger.c
 *		bloom_shared_trigger(): keeps a shared filter current.
 *
 * bloom_guard() creates it as AFTER INSERT OR UPDATE ... FOR EACH ROW
 * EXECUTE FUNCTION bloom_shared_trigger('<filter>') on the guarded table
 * (partitions get PostgreSQL's clones) and on each inheritance child, with
 * OR DELETE for a counting filter.  It adds the row's key as stored (a
 * BEFORE trigger could still be followed by another that changes the key,
 * so BEFORE is refused), and for a counting filter queues the removal of the
 * key a DELETE or an UPDATE took away (applied once no snapshot can see the
 * old row: bf_removals.c).  It maintains only
 * tables of the guarded table's tree (the DDL review drops it from tables
 * that leave the tree, and refuses it on others); on any other table it does
 * nothing.
 */
#include "postgres.h"

#include "access/htup_details.h"
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
	bool		defined;		/* false: no such filter (any more) */
	BfDefinition def;
	AttrNumber	attnum;
	BfKeyType	kt;
	BfFilterRef ref;
} TriggerSite;

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
	strlcpy(site->name, name, sizeof(site->name));
	site->trigrelid = RelationGetRelid(rel);
	site->ref = BF_FILTER_REF_NONE;
	site->epoch = bf_def_epoch;

	/* no such filter: there is nothing to keep current */
	site->defined = bf_def_by_name(name, &site->def);
	if (!site->defined)
		return site;
	/*
	 * A table outside the guarded tree (it left it with NO INHERIT, say): a
	 * build never reads it and a query on the guarded table never sees its
	 * rows, so its keys do not belong in the filter.
	 */
	if (!bf_tree_contains(site->def.relid, RelationGetRelid(rel)))
	{
		site->defined = false;
		return site;
	}
	/* a guard on a partitioned table keeps each partition's keys apart */
	if (bf_tree_per_partition(site->def.relid))
		site->def.member = RelationGetRelid(rel);
	colname = NameStr(site->def.column_name);
	site->attnum = SPI_fnumber(RelationGetDescr(rel), colname);
	if (site->attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of trigger \"%s\" does not exist in table \"%s\"",
						colname, tg->tgname, RelationGetRelationName(rel))));
	att = TupleDescAttr(RelationGetDescr(rel), site->attnum - 1);
	bf_key_type_init(&site->kt, att->atttypid, att->attcollation, InvalidOid);
	return site;
}

/* The row whose key to add, or NULL if there is nothing to add. */
static HeapTuple
row_to_add(TriggerData *td)
{
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		return td->tg_trigtuple;
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		return td->tg_newtuple;
	return NULL;				/* DELETE */
}

/* The row whose key went away (DELETE, UPDATE), or NULL. */
static HeapTuple
row_to_remove(TriggerData *td)
{
	if (TRIGGER_FIRED_BY_DELETE(td->tg_event) || TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		return td->tg_trigtuple;
	return NULL;
}

/*
 * An UPDATE that left the key as it was (both NULL, or the same bytes): it
 * is in the filter already, and nothing is removed.
 */
static bool
key_unchanged(TriggerData *td, AttrNumber attnum)
{
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	Form_pg_attribute att = TupleDescAttr(desc, attnum - 1);
	bool		oldnull;
	bool		newnull;
	Datum		oldvalue;
	Datum		newvalue;

	if (!TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		return false;
	oldvalue = heap_getattr(td->tg_trigtuple, attnum, desc, &oldnull);
	newvalue = heap_getattr(td->tg_newtuple, attnum, desc, &newnull);
	if (oldnull || newnull)
		return oldnull && newnull;
	return datumIsEqual(oldvalue, newvalue, att->attbyval, att->attlen);
}

/* Add the key of a row (not NULL) to the filter. */
static void
add_key(TriggerSite *site, Datum value)
{
	BfHash		h = bf_key_hash(&site->kt, value, BF_LAYOUT_BLOCKED);
	BfCheckResult r;
	int			filter_kind;

	r = bf_filter_add(&site->ref, h, site->kt.kind, &filter_kind);
	if (r == BF_CHECK_UNKNOWN && bf_filter_lookup(&site->def, false, &site->ref))
		r = bf_filter_add(&site->ref, h, site->kt.kind, &filter_kind);
	/* not loaded: the next build reads the row from the table */
	if (r == BF_CHECK_WRONG_KIND)
	{
		/* built for another column type: never keep it, rebuild */
		bf_filter_request_build(&site->def, InvalidTransactionId, true);
		site->epoch = 0;
	}
}

/* Queue the removal of the key of a row this transaction deleted. */
static void
remove_key(TriggerSite *site, Datum value)
{
	BfHash		h = bf_key_hash(&site->kt, value, BF_LAYOUT_BLOCKED);

	if (bf_filter_remove(&site->ref, h, site->kt.kind) == BF_CHECK_UNKNOWN &&
		bf_filter_lookup(&site->def, false, &site->ref))
		(void) bf_filter_remove(&site->ref, h, site->kt.kind);
}

Datum
bloom_shared_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	TriggerSite *site;
	HeapTuple	added;
	HeapTuple	removed;
	TupleDesc	desc;
	Datum		value;
	bool		isnull;

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
	if (td->tg_trigger->tgnargs < 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloom_shared_trigger() needs the filter name as its argument")));
	/*
	 * Without shared memory there is nothing to keep current; with an
	 * extension not yet updated to this library, no filter can be built.
	 */
	if (!bf_shared_available() || !bf_config_current())
		return PointerGetDatum(NULL);

	site = trigger_site(fcinfo, td);
	if (!site->defined || key_unchanged(td, site->attnum))
		return PointerGetDatum(NULL);
	desc = RelationGetDescr(td->tg_relation);
	added = row_to_add(td);
	removed = bf_guard_follows_deletes(site->def.layout) ? row_to_remove(td) : NULL;

	/* a DELETE leaves a blocked filter's bits as they are */
	if (removed != NULL)
	{
		value = heap_getattr(removed, site->attnum, desc, &isnull);
		if (!isnull)
			remove_key(site, value);
	}
	if (added != NULL)
	{
		value = heap_getattr(added, site->attnum, desc, &isnull);
		if (!isnull)
			add_key(site, value);
	}
	return PointerGetDatum(NULL);
}
