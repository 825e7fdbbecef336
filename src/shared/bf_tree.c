/*
 * bf_tree.c
 *		Guarded tables: the tables a query on a guarded table reads (the table
 *		and all its partitions and inheritance children: its "tree"), and the
 *		guard triggers that keep a filter current on each of them.
 *
 * A guard trigger is recognized by what it does, never by its name: a row
 * trigger calling this extension's bloom_shared_trigger() with the filter's
 * name as first argument.  A guard is sound when every table of its tree has
 * one that fires AFTER INSERT OR UPDATE, FOR EACH ROW, with no WHEN
 * condition and no column list, enabled ALWAYS (so that writes made under
 * session_replication_role = replica, such as logical replication's, are
 * seen too).
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/namespace.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bf_shared.h"

/* The OID of <extension schema>.bloom_shared_trigger(). */
Oid
bf_trigger_function(bool missing_ok)
{
	Oid			nsp = bf_extension_schema(missing_ok);
	List	   *name;

	if (!OidIsValid(nsp))
		return InvalidOid;
	name = list_make2(makeString(get_namespace_name(nsp)),
					  makeString(BF_TRIGGER_FUNCTION));
	return LookupFuncName(name, 0, NULL, missing_ok);
}

/* The table and every table below it (partitions, inheritance children). */
List *
bf_tree_members(Oid relid, LOCKMODE lockmode)
{
	return find_all_inheritors(relid, lockmode, NULL);
}

/*
 * Does a guard on this table keep one filter per partition?  A partitioned
 * table holds no rows itself: its leaf partitions do.
 */
bool
bf_tree_per_partition(Oid relid)
{
	return get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE;
}

/* The tables of the tree that hold rows (not partitioned ones). */
List *
bf_tree_leaves(Oid relid, LOCKMODE lockmode)
{
	List	   *members = bf_tree_members(relid, lockmode);
	List	   *leaves = NIL;
	ListCell   *lc;

	foreach(lc, members)
	{
		if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_PARTITIONED_TABLE)
			leaves = lappend_oid(leaves, lfirst_oid(lc));
	}
	list_free(members);
	return leaves;
}

bool
bf_tree_contains(Oid root, Oid relid)
{
	if (root == relid)
		return true;
	if (!has_subclass(root))
		return false;
	return list_member_oid(find_all_inheritors(root, NoLock, NULL), relid);
}

static bool
is_guard_trigger(const Trigger *tg, Oid trigfn, const char *name)
{
	return tg->tgfoid == trigfn && tg->tgnargs >= 1 &&
		strcmp(tg->tgargs[0], name) == 0;
}

/*
 * A guard trigger must add every row's key by the end of the statement that
 * wrote it: a deferrable (constraint) trigger could fire at commit, after the
 * writer itself has checked the filter, or never fire in the session that
 * defers it (SET CONSTRAINTS ... DEFERRED).
 */
static bool
guard_trigger_shape_ok(const Trigger *tg)
{
	return TRIGGER_FOR_ROW(tg->tgtype) && TRIGGER_FOR_AFTER(tg->tgtype) &&
		TRIGGER_FOR_INSERT(tg->tgtype) && TRIGGER_FOR_UPDATE(tg->tgtype) &&
		!tg->tgdeferrable && !tg->tginitdeferred &&
		tg->tgqual == NULL && tg->tgnattr == 0;
}

/*
 * The state of one table's guard trigger(s) for a filter.  Every enabled
 * guard trigger queues a removal per deleted row, so a counting filter
 * allows one only: with two, deleting one of two rows holding a key would
 * take the key out while the other row is still there.
 */
static BfGuardState
member_state(Relation rel, Oid trigfn, const char *name, bool counting)
{
	TriggerDesc *td = rel->trigdesc;
	BfGuardState st = BF_GUARD_MISSING;
	int			enabled = 0;

	for (int k = 0; td != NULL && k < td->numtriggers; k++)
	{
		Trigger    *tg = &td->triggers[k];
		BfGuardState this;

		if (!is_guard_trigger(tg, trigfn, name))
			continue;
		if (!guard_trigger_shape_ok(tg))
			return BF_GUARD_BAD_SHAPE;
		if (tg->tgenabled != TRIGGER_DISABLED && counting && ++enabled > 1)
			return BF_GUARD_DUPLICATE;
		if (tg->tgenabled == TRIGGER_DISABLED)
			this = BF_GUARD_DISABLED;
		else if (tg->tgenabled != TRIGGER_FIRES_ALWAYS)
			this = BF_GUARD_NOT_ALWAYS;
		else
			this = BF_GUARD_OK;
		/* one good trigger is enough; a disabled one does no harm then */
		if (st == BF_GUARD_MISSING || this < st)
			st = this;
	}
	return st;
}

/*
 * How sound the guard of filter "name" on table root is, over its whole
 * tree; *culprit is set to the table with the worst state.  The tables are
 * locked in AccessShareLock mode (callers hold at least that already).
 */
BfGuardState
bf_guard_state(Oid root, const char *name, bool counting, Oid *culprit)
{
	Oid			trigfn = bf_trigger_function(true);
	List	   *members;
	ListCell   *lc;
	BfGuardState worst = BF_GUARD_OK;

	*culprit = root;
	if (!OidIsValid(trigfn))
		return BF_GUARD_MISSING;
	members = bf_tree_members(root, AccessShareLock);
	foreach(lc, members)
	{
		Oid			relid = lfirst_oid(lc);
		Relation	rel = relation_open(relid, NoLock);
		BfGuardState st = member_state(rel, trigfn, name, counting);

		/* a child without the trigger is added to, not a lost guard */
		if (st == BF_GUARD_MISSING && relid != root)
			st = BF_GUARD_CHILD_MISSING;
		relation_close(rel, NoLock);
		if (st > worst)
		{
			worst = st;
			*culprit = relid;
		}
	}
	list_free(members);
	return worst;
}

/* The names of the guard triggers of filter "name" on one table. */
List *
bf_guard_triggers(Oid relid, const char *name)
{
	Oid			trigfn = bf_trigger_function(true);
	Relation	rel = relation_open(relid, AccessShareLock);
	TriggerDesc *td = rel->trigdesc;
	List	   *result = NIL;

	for (int k = 0; OidIsValid(trigfn) && td != NULL && k < td->numtriggers; k++)
		if (is_guard_trigger(&td->triggers[k], trigfn, name))
			result = lappend(result, pstrdup(td->triggers[k].tgname));
	relation_close(rel, NoLock);
	return result;
}

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

/* "schema"."table"."column", each part quoted as an identifier needs. */
char *
bf_filter_name(Oid relid, const char *column)
{
	return psprintf("%s.%s",
					quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
											   get_rel_name(relid)),
					quote_identifier(column));
}

/*
 * The planner's estimate of the rows of a table and every table below it;
 * counted (if not NULL) says whether every table has statistics (VACUUM or
 * ANALYZE set its reltuples) rather than a guess from its size.
 */
double
bf_tree_estimate_rows(Oid relid, bool *counted)
{
	List	   *members = bf_tree_members(relid, AccessShareLock);
	ListCell   *lc;
	double		total = 0;

	if (counted)
		*counted = true;

	foreach(lc, members)
	{
		Relation	rel = relation_open(lfirst_oid(lc), NoLock);

		if (rel->rd_rel->relkind == RELKIND_RELATION)
		{
			BlockNumber pages;
			double		tuples;
			double		allvisfrac;

			table_relation_estimate_size(rel, NULL, &pages, &tuples, &allvisfrac);
			total += Max(tuples, 0);
			/* never vacuumed nor analyzed: the estimate is a guess */
			if (counted && rel->rd_rel->reltuples < 0)
				*counted = false;
		}
		relation_close(rel, NoLock);
	}
	list_free(members);
	return total;
}

/*
 * A shared filter can guard a table whose tree holds plain and partitioned
 * tables only, none temporary: a foreign table's rows are written elsewhere,
 * where no trigger of this server sees them, and a temporary table's cannot
 * be read by the build worker.
 */
void
bf_tree_check_guardable(Oid root)
{
	List	   *members = bf_tree_members(root, AccessShareLock);
	ListCell   *lc;

	foreach(lc, members)
	{
		char		relkind = get_rel_relkind(lfirst_oid(lc));

		if (get_rel_persistence(lfirst_oid(lc)) == RELPERSISTENCE_TEMP)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("temporary table \"%s\" cannot be part of a table guarded by a shared bloom filter",
							get_rel_name(lfirst_oid(lc))),
					 errdetail("A shared filter is built by a background worker, which cannot read another session's temporary tables.")));
		if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("table \"%s\" cannot be part of a table guarded by a shared bloom filter",
							get_rel_name(lfirst_oid(lc))),
					 errdetail("Rows of a foreign table are written where no trigger of this server sees them."),
					 errhint("Guard the columns of the other partitions one by one, or remove the guard with bloom_unguard().")));
	}
	list_free(members);
}
