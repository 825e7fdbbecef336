/*
 * bf_members.c
 *		The filters of a guard on a partitioned table: one per leaf partition.
 *
 * A guard on a partitioned table keeps no filter for the whole tree: each
 * leaf partition (a plain table of the tree, also below sub-partitions) has
 * its own, sized from its own rows, built from its own rows and kept by its
 * own clone of the guard trigger.  Such a filter is a slot of the registry
 * named by the definition and the partition (BfDefinition.member).  A scan
 * of one partition consults that partition's filter; a check of the guarded
 * table answers "maybe" if any partition's filter does.
 *
 * Which partitions have a filter follows the catalogs: the DDL review
 * (bf_ddl.c) calls bf_members_reconcile after a command touched the tree,
 * which frees the filters of tables that left it and asks for the build of
 * new ones.  A check of the guarded table reads the partitions from the
 * catalogs, never from the registry: a partition without a filter answers
 * "maybe".
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "bf_shared.h"

/* A copy of the definition naming one partition's filter. */
BfDefinition *
bf_member_def(const BfDefinition *def, Oid member)
{
	BfDefinition *m = palloc(sizeof(BfDefinition));

	memcpy(m, def, sizeof(BfDefinition));
	m->member = member;
	return m;
}

/*
 * The filters a check of the definition's table consults: one per leaf
 * partition of a partitioned table, else the definition's own.
 */
List *
bf_filter_members(const BfDefinition *def)
{
	List	   *result = NIL;
	List	   *leaves;
	ListCell   *lc;

	if (OidIsValid(def->member) || !bf_tree_per_partition(def->relid))
		return list_make1(bf_member_def(def, def->member));
	leaves = bf_tree_leaves(def->relid, NoLock);
	foreach(lc, leaves)
		result = lappend(result, bf_member_def(def, lfirst_oid(lc)));
	list_free(leaves);
	return result;
}

/*
 * Ask for the build of one partition's filter.  Without a free slot the
 * partition stays without one, with a WARNING: checks and scans of it answer
 * "maybe", and DDL on the tree does not fail for want of a slot.
 */
static void
member_request_build(const BfDefinition *m, TransactionId wait_xid, bool forget)
{
	BfFilterRef ref;

	if (!bf_filter_lookup(m, false, &ref) && !bf_filter_slot_free())
	{
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("partition \"%s\" of the table guarded by shared bloom filter \"%s\" gets no filter: all %d shared bloom filter slots are in use",
						get_rel_name(m->member), m->name, bf_max_shared_filters),
				 errdetail("Checks and scans of the partition answer \"maybe\"."),
				 errhint("Increase bloomfilter.max_shared_filters (needs a restart), or remove guards with bloom_unguard().")));
		return;
	}
	bf_filter_request_build(m, wait_xid, forget);
}

/* Ask for the build of every partition's filter of a guard. */
void
bf_members_request_build(const BfDefinition *def, TransactionId wait_xid, bool forget)
{
	List	   *members = bf_filter_members(def);
	ListCell   *lc;

	foreach(lc, members)
		member_request_build(lfirst(lc), wait_xid, forget);
	list_free_deep(members);
}

/* ---------------------------------------------------------------------
 * Filters of tables that left the tree, freed when the transaction commits
 * ---------------------------------------------------------------------
 */

typedef struct LeftTree
{
	Oid			cfgoid;
	int64		defid;
	Oid			member;
	int			nestlevel;		/* of the subtransaction that let it go */
} LeftTree;

/* in TopMemoryContext; empty outside a transaction that detached or dropped */
static List *left_tree = NIL;
static bool left_tree_callbacks = false;

static void
left_tree_clear(void)
{
	list_free_deep(left_tree);
	left_tree = NIL;
}

/*
 * At commit, free the filters; at abort, keep them: the tables are leaves
 * again.  A prepared transaction frees them at PREPARE (COMMIT PREPARED may
 * run in another session): if it is rolled back, its partitions answer
 * "maybe" until the next DDL on the tree or bloom_shared_rebuild.
 */
static void
left_tree_xact(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (left_tree == NIL)
		return;
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PREPARE)
	{
		foreach(lc, left_tree)
		{
			LeftTree   *e = lfirst(lc);

			bf_filter_forget_member_of(e->cfgoid, e->defid, e->member);
		}
		left_tree_clear();
	}
	else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		left_tree_clear();
}

/*
 * A subtransaction rolled back keeps its tables' filters; one committed
 * hands them to its parent.
 */
static void
left_tree_subxact(SubXactEvent event, SubTransactionId mySubid,
				  SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	foreach(lc, left_tree)
	{
		LeftTree   *e = lfirst(lc);

		if (e->nestlevel < level)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			e->nestlevel = level - 1;
		else if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			left_tree = foreach_delete_current(left_tree, lc);
			pfree(e);
		}
	}
}

/*
 * A table that is a leaf again: if it left the tree earlier in this
 * transaction, its filter is no longer to be freed at commit, and the caller
 * must rebuild it (returns true): its trigger was gone meanwhile.
 */
static bool
left_tree_keep(int64 defid, Oid member)
{
	ListCell   *lc;
	bool		was_left = false;

	foreach(lc, left_tree)
	{
		LeftTree   *e = lfirst(lc);

		if (e->defid == defid && e->member == member)
		{
			left_tree = foreach_delete_current(left_tree, lc);
			pfree(e);
			was_left = true;
		}
	}
	return was_left;
}

/*
 * Free the filter of a partition that left the tree (DETACH, DROP) when the
 * transaction commits: if it rolls back, the table is a leaf again and its
 * filter, kept current by its trigger meanwhile, still holds its keys.
 */
void
bf_members_forget_at_commit(int64 defid, Oid member)
{
	Oid			cfgoid = bf_config_table(true);
	MemoryContext oldcontext;
	LeftTree   *e;

	if (!OidIsValid(cfgoid))
		return;
	if (!left_tree_callbacks)
	{
		RegisterXactCallback(left_tree_xact, NULL);
		RegisterSubXactCallback(left_tree_subxact, NULL);
		left_tree_callbacks = true;
	}
	oldcontext = MemoryContextSwitchTo(TopMemoryContext);
	e = palloc(sizeof(LeftTree));
	e->cfgoid = cfgoid;
	e->defid = defid;
	e->member = member;
	e->nestlevel = GetCurrentTransactionNestLevel();
	left_tree = lappend(left_tree, e);
	MemoryContextSwitchTo(oldcontext);
}

/*
 * Bring the partitions' filters of a guard on a partitioned table in line
 * with its tree: free those of tables no longer in it (at commit), ask for
 * the build of the leaves without one, and forget and rebuild those in reset
 * and those that left the tree earlier in this transaction and are back
 * (their filters missed the writes made while they were out).
 */
void
bf_members_reconcile(const BfDefinition *def, List *reset)
{
	List	   *leaves = bf_tree_leaves(def->relid, NoLock);
	List	   *slots = bf_filter_slot_members(def->id);
	ListCell   *lc;

	foreach(lc, slots)
	{
		if (!list_member_oid(leaves, lfirst_oid(lc)))
			bf_members_forget_at_commit(def->id, lfirst_oid(lc));
	}
	foreach(lc, leaves)
	{
		Oid			leaf = lfirst_oid(lc);
		BfDefinition *m = bf_member_def(def, leaf);

		if (left_tree_keep(def->id, leaf) || list_member_oid(reset, leaf))
			member_request_build(m, InvalidTransactionId, true);
		else if (!list_member_oid(slots, leaf))
			member_request_build(m, InvalidTransactionId, false);
		pfree(m);
	}
	list_free(slots);
	list_free(leaves);
}

/* ---------------------------------------------------------------------
 * Checks of a table guarded per partition (bloom_shared_contains)
 * ---------------------------------------------------------------------
 */

/* bumped by every relcache invalidation: partitions may have come or gone */
static uint64 tree_inval = 1;
static bool tree_callback_registered = false;

static void
tree_relcache_callback(Datum arg, Oid relid)
{
	tree_inval++;
}

/* Read the partitions again if the catalogs may have changed. */
static void
member_set_refresh(BfMemberSet *set, const BfDefinition *def, MemoryContext mcxt)
{
	List	   *leaves;
	ListCell   *lc;
	int			i = 0;

	if (!tree_callback_registered)
	{
		CacheRegisterRelcacheCallback(tree_relcache_callback, (Datum) 0);
		tree_callback_registered = true;
	}
	AcceptInvalidationMessages();
	if (set->relids != NULL && set->inval == tree_inval && set->defid == def->id)
		return;
	set->inval = tree_inval;
	set->defid = def->id;
	if (set->relids)
		pfree(set->relids);
	if (set->refs)
		pfree(set->refs);
	leaves = bf_tree_leaves(def->relid, NoLock);
	set->n = list_length(leaves);
	set->relids = MemoryContextAlloc(mcxt, sizeof(Oid) * Max(set->n, 1));
	set->refs = MemoryContextAlloc(mcxt, sizeof(BfFilterRef) * Max(set->n, 1));
	foreach(lc, leaves)
	{
		set->relids[i] = lfirst_oid(lc);
		set->refs[i] = BF_FILTER_REF_NONE;
		i++;
	}
	list_free(leaves);
}

/* One partition's answer for one key (its forms: hashes). */
static BfCheckResult
member_check(BfMemberSet *set, int i, const BfDefinition *def,
			 const BfHash *hashes, int nhashes, int kind, int *filter_kind)
{
	for (int h = 0; h < nhashes; h++)
	{
		BfCheckResult r = bf_filter_check(&set->refs[i], hashes[h], kind, filter_kind);

		if (r == BF_CHECK_UNKNOWN)
		{
			BfDefinition *m = bf_member_def(def, set->relids[i]);
			bool		found = bf_filter_lookup(m, false, &set->refs[i]);

			pfree(m);
			if (found)
				r = bf_filter_check(&set->refs[i], hashes[h], kind, filter_kind);
			else if (!set->load_requested)
			{
				set->load_requested = true;
				bf_request_load(MyDatabaseId);
			}
		}
		if (r != BF_CHECK_NO)
			return r;
	}
	return BF_CHECK_NO;
}

/*
 * The answer of a table guarded per partition: "no" only when every leaf
 * partition's filter says "no" for every form of the key; otherwise the
 * first other answer (unknown, maybe, wrong kind).
 */
BfCheckResult
bf_members_check(BfMemberSet *set, const BfDefinition *def, MemoryContext mcxt,
				 const BfHash *hashes, int nhashes, int kind, int *filter_kind)
{
	member_set_refresh(set, def, mcxt);
	for (int i = 0; i < set->n; i++)
	{
		BfCheckResult r = member_check(set, i, def, hashes, nhashes, kind,
									   filter_kind);

		if (r != BF_CHECK_NO)
			return r;
	}
	return BF_CHECK_NO;
}
