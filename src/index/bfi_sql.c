/*
 * bfi_sql.c
 *		The SQL functions of guard indexes: bloom_guard_contains (a check by
 *		index), bloom_guard_filter and bloom_guard_changes (the filter as a
 *		bloomfilter value, whole or its changes: bfi_export.c) and
 *		bloom_guard_info.
 *
 * The index is named by regclass, so a rename of it, its table or its
 * schema changes nothing.  A check reveals whether the column holds a
 * value, so it needs what "SELECT ... WHERE column = key" needs: USAGE on
 * the schema and SELECT on the table or on every column the index reads,
 * and no row-level security applying to the role (the filter holds the
 * keys of rows the policies would hide).  The index and its table are
 * locked AccessShareLock, the table first, until the end of the
 * transaction, as a query locks them.
 *
 * A partitioned index answers "no" only when every leaf partition's index
 * does.  A guard that may lack some row's key (not valid yet, or a
 * partition without a guard) answers "maybe".
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "core/bf_core.h"
#include "index/bf_index.h"
#include "value/bf_value.h"

PG_FUNCTION_INFO_V1(bloom_guard_contains);
PG_FUNCTION_INFO_V1(bloom_guard_contains_text);
PG_FUNCTION_INFO_V1(bloom_guard_filter);
PG_FUNCTION_INFO_V1(bloom_guard_changes);
PG_FUNCTION_INFO_V1(bloom_guard_info);

#if PG_VERSION_NUM >= 170000
#define BFI_LXID		(MyProc->vxid.lxid)
#else
#define BFI_LXID		(MyProc->lxid)
#endif

/* What a call site of bloom_guard_contains resolved (valid in lxid). */
typedef struct GuardSite
{
	Oid			indexoid;
	Oid			userid;
	LocalTransactionId lxid;
	Oid			argtype;
	Oid			hashtype;		/* what its keys are hashed as */
	bool		access_checked; /* the caller's read access to it */
	BfKeyConv	kc;
} GuardSite;

static const char *
guard_what(Relation index)
{
	return psprintf("index \"%s\"", RelationGetRelationName(index));
}

/* The columns of the table that an index reads (keys, expressions, predicate). */
static Bitmapset *
index_columns(Relation index)
{
	Bitmapset  *cols = NULL;
	List	   *exprs;

	for (int i = 0; i < index->rd_index->indnatts; i++)
		if (index->rd_index->indkey.values[i] != 0)
			cols = bms_add_member(cols, index->rd_index->indkey.values[i] -
								  FirstLowInvalidHeapAttributeNumber);
	exprs = RelationGetIndexExpressions(index);
	pull_varattnos((Node *) exprs, 1, &cols);
	exprs = RelationGetIndexPredicate(index);
	pull_varattnos((Node *) exprs, 1, &cols);
	return cols;
}

/* Why the current user may not learn whether the table holds a key. */
typedef enum ReadDenied
{
	READ_OK,
	READ_NO_USAGE,				/* on the table's schema */
	READ_NO_SELECT,				/* on a column the index reads */
	READ_ROW_SECURITY			/* the policies hide rows whose keys it holds */
} ReadDenied;

static ReadDenied
read_denied(Relation index, Oid relid, AttrNumber *denied_attnum)
{
	Oid			userid = GetUserId();
	Bitmapset  *cols;
	int			col = -1;

	if (bf_namespace_aclcheck(get_rel_namespace(relid), userid, ACL_USAGE) != ACLCHECK_OK)
		return READ_NO_USAGE;
	if (pg_class_aclcheck(relid, userid, ACL_SELECT) != ACLCHECK_OK)
	{
		cols = index_columns(index);
		while ((col = bms_next_member(cols, col)) >= 0)
		{
			AttrNumber	attnum = col + FirstLowInvalidHeapAttributeNumber;

			if (pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT) != ACLCHECK_OK)
			{
				*denied_attnum = attnum;
				return READ_NO_SELECT;
			}
		}
	}
	if (check_enable_rls(relid, userid, true) == RLS_ENABLED)
		return READ_ROW_SECURITY;
	return READ_OK;
}

/* May the current user learn whether the guard's table holds a key? */
bool
bfi_may_check(Relation index)
{
	AttrNumber	attnum;

	return read_denied(index, index->rd_index->indrelid, &attnum) == READ_OK;
}

/* The same, as an error when not. */
static void
check_read_access(Relation index, Oid relid)
{
	AttrNumber	attnum = InvalidAttrNumber;

	switch (read_denied(index, relid, &attnum))
	{
		case READ_OK:
			break;
		case READ_NO_USAGE:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for schema %s",
							get_namespace_name(get_rel_namespace(relid))),
					 errdetail("Checking index \"%s\" reveals whether table %s holds a value.",
							   RelationGetRelationName(index), get_rel_name(relid))));
			break;
		case READ_NO_SELECT:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for column %s of table %s",
							quote_identifier(get_attname(relid, attnum, false)),
							get_rel_name(relid)),
					 errdetail("Checking index \"%s\" reveals whether the column holds a value.",
							   RelationGetRelationName(index)),
					 errhint("Grant SELECT on the column (or the table) to the role.")));
			break;
		case READ_ROW_SECURITY:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("index \"%s\" cannot be checked under row-level security of table %s",
							RelationGetRelationName(index), get_rel_name(relid)),
					 errdetail("The guard holds the keys of every row, including rows the policies hide from this role."),
					 errhint("Check it from a role that bypasses row-level security on the table, such as its owner.")));
			break;
	}
}

/*
 * Open a guard by OID: its table first, then the index, both
 * AccessShareLock; the index must be a bloomguard index.
 */
static Relation
guard_open(Oid indexoid, bool check_access)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	index;

	if (!OidIsValid(heapoid) && get_rel_name(indexoid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", get_rel_name(indexoid)),
				 errhint("Name a bloomguard index (CREATE INDEX ... USING %s).",
						 BFI_AM_NAME)));
	LockRelationOid(heapoid, AccessShareLock);
	index = try_relation_open(indexoid, AccessShareLock);
	if (index == NULL || IndexGetRelation(indexoid, true) != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("index with OID %u was dropped", indexoid)));
	if (!bfi_is_guard(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not a bloomguard index",
						RelationGetRelationName(index)),
				 errhint("Name a bloomguard index (CREATE INDEX ... USING %s).",
						 BFI_AM_NAME)));
	if (check_access)
		check_read_access(index, heapoid);
	if (index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
		RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check index \"%s\" of an unlogged table during recovery",
						RelationGetRelationName(index))));
	return index;
}

/* Close a guard; its locks and its table's are kept, as a query keeps them. */
static void
guard_close(Relation index)
{
	relation_close(index, NoLock);
}

/*
 * Is a leaf guard complete: built, maintained by every writer, and holding
 * every row this transaction's snapshots may see?  A guard built while a
 * HOT chain had a recently dead member (indcheckxmin) lacks that member's
 * key, which an older snapshot sees: the planner ignores such an index
 * until its pg_index row is older than TransactionXmin, and so do checks.
 */
static bool
leaf_ready(Oid indexoid)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index form;
	bool		ready;

	if (!HeapTupleIsValid(tup))
		return false;
	form = (Form_pg_index) GETSTRUCT(tup);
	ready = form->indisvalid && form->indisready && form->indislive;
	if (ready && form->indcheckxmin &&
		!TransactionIdPrecedes(HeapTupleHeaderGetXmin(tup->t_data), TransactionXmin))
		ready = false;
	ReleaseSysCache(tup);
	return ready;
}

/*
 * The leaf guards that answer for a guard's table, or NIL if some row of the
 * table may have no key in them: a guard that is not valid (a CREATE INDEX
 * CONCURRENTLY under way or failed, a partitioned guard not attached
 * everywhere), or a leaf partition without a guard (a foreign table, which
 * PostgreSQL builds no index on).
 */
static List *
guard_leaves(Relation index)
{
	List	   *leaves = NIL;
	List	   *tables;
	List	   *covered = NIL;
	ListCell   *lc;

	if (index->rd_rel->relkind == RELKIND_INDEX)
		return leaf_ready(RelationGetRelid(index)) ?
			list_make1_oid(RelationGetRelid(index)) : NIL;
	if (!index->rd_index->indisvalid)
		return NIL;
	foreach(lc, find_all_inheritors(RelationGetRelid(index), AccessShareLock, NULL))
	{
		Oid			leaf = lfirst_oid(lc);

		if (get_rel_relkind(leaf) != RELKIND_INDEX)
			continue;
		if (!leaf_ready(leaf))
			return NIL;
		leaves = lappend_oid(leaves, leaf);
		covered = lappend_oid(covered, IndexGetRelation(leaf, false));
	}
	tables = find_all_inheritors(index->rd_index->indrelid, AccessShareLock, NULL);
	foreach(lc, tables)
	{
		Oid			table = lfirst_oid(lc);

		if (get_rel_relkind(table) != RELKIND_PARTITIONED_TABLE &&
			!list_member_oid(covered, table))
			return NIL;
	}
	return leaves;
}

/*
 * The call site, resolved for this index, user, key type and transaction:
 * access is checked once per transaction.
 */
static GuardSite *
site_get(FunctionCallInfo fcinfo, Relation index, bool text_arg,
		 bool check_access)
{
	GuardSite  *site = fcinfo->flinfo->fn_extra;
	Oid			argtype = text_arg ? TEXTOID : get_fn_expr_argtype(fcinfo->flinfo, 1);
	Oid			hashtype = bfi_hash_type(index);

	if (site != NULL && site->indexoid == RelationGetRelid(index) &&
		site->userid == GetUserId() && site->lxid == BFI_LXID &&
		site->argtype == argtype && site->hashtype == hashtype &&
		(site->access_checked || !check_access))
		return site;
	if (site == NULL)
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(GuardSite));
	site->indexoid = InvalidOid;
	if (check_access)
		check_read_access(index, index->rd_index->indrelid);
	if (text_arg)
		bf_keyconv_check_text_arg(fcinfo, 1, getBaseType(hashtype),
								  guard_what(index));
	bf_keyconv_check_collation(PG_GET_COLLATION(), guard_what(index));
	bf_keyconv_init(&site->kc, fcinfo->flinfo->fn_mcxt, hashtype,
					index->rd_indcollation[0], argtype, guard_what(index));
	site->indexoid = RelationGetRelid(index);
	site->userid = GetUserId();
	site->lxid = BFI_LXID;
	site->argtype = argtype;
	site->hashtype = hashtype;
	site->access_checked = check_access;
	fcinfo->flinfo->fn_extra = site;
	return site;
}

/* Does one leaf guard hold the key in any of its forms? */
static bool
leaf_contains(Relation leaf, const BfHash *hashes, int n)
{
	for (int i = 0; i < n; i++)
		if (bfi_probe(leaf, hashes[i].lo))
			return true;
	return false;
}

/*
 * The check of the guard indexoid for the key in argument 1 of the call
 * (text_arg: a string read as the column's type reads it); also 1.1's
 * bloom_shared_contains, by name (bfi_compat.c), which checks the access of
 * an inheritance child's guard through its parent's (check_access false).
 */
bool
bfi_guard_contains(FunctionCallInfo fcinfo, Oid indexoid, bool text_arg,
				   bool check_access)
{
	Relation	index = guard_open(indexoid, false);
	GuardSite  *site = site_get(fcinfo, index, text_arg, check_access);
	BfHash		hashes[1 + BF_KEY_MAX_PROBES];
	int			n = 1;
	List	   *leaves;
	ListCell   *lc;
	bool		found = false;

	hashes[0] = bf_keyconv_hash(&site->kc, PG_GETARG_DATUM(1));
	n += bf_keyconv_other_hashes(&site->kc, PG_GETARG_DATUM(1), hashes + 1);
	/* no complete guard: "maybe", as the planner ignores an invalid index */
	leaves = guard_leaves(index);
	if (leaves == NIL)
		found = true;
	foreach(lc, leaves)
	{
		Relation	leaf;

		if (lfirst_oid(lc) == RelationGetRelid(index))
			found = leaf_contains(index, hashes, n);
		else
		{
			leaf = index_open(lfirst_oid(lc), AccessShareLock);
			found = leaf_contains(leaf, hashes, n);
			index_close(leaf, NoLock);
		}
		if (found)
			break;
	}
	guard_close(index);
	return found;
}

Datum
bloom_guard_contains(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bfi_guard_contains(fcinfo, PG_GETARG_OID(0), false, true));
}

/* A string key (a literal): read as the column's type would read it. */
Datum
bloom_guard_contains_text(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bfi_guard_contains(fcinfo, PG_GETARG_OID(0), true, true));
}

static Relation
guard_open_leaf(Oid indexoid)
{
	Relation	index = guard_open(indexoid, true);

	if (index->rd_rel->relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" is partitioned", RelationGetRelationName(index)),
				 errdetail("Each partition's guard is a filter of its own."),
				 errhint("Name the index of a partition.")));
	if (!leaf_ready(RelationGetRelid(index)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not valid", RelationGetRelationName(index)),
				 errdetail("Its build has not finished, or failed: it may lack the keys of some rows."),
				 errhint("Wait for CREATE INDEX CONCURRENTLY to finish, or REINDEX INDEX %s.",
						 RelationGetRelationName(index))));
	return index;
}

/*
 * The guard's filter as a bloomfilter value: a scalable filter (family 4)
 * whose layers are the guard's, their bits as the pages hold them.
 */
Datum
bloom_guard_filter(PG_FUNCTION_ARGS)
{
	Relation	index = guard_open_leaf(PG_GETARG_OID(0));
	struct varlena *v = bfi_export_value(index);

	guard_close(index);
	PG_RETURN_POINTER(v);
}

/*
 * bloom_guard_changes(guard, since): the filter whole, or what changed since
 * the copy of version since (bfi_export.c).
 */
Datum
bloom_guard_changes(PG_FUNCTION_ARGS)
{
	Relation	index;

	if (PG_ARGISNULL(0))
	{
		InitMaterializedSRF(fcinfo, 0);		/* no rows */
		PG_RETURN_NULL();
	}
	index = guard_open_leaf(PG_GETARG_OID(0));
	bfi_export_changes(fcinfo, index,
					   PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1)));
	guard_close(index);
	PG_RETURN_NULL();
}

/* layers, capacity, added, bytes, target_fpr, estimated_fpr */
Datum
bloom_guard_info(PG_FUNCTION_ARGS)
{
	Relation	index = guard_open_leaf(PG_GETARG_OID(0));
	BfiSummary *sum = palloc(sizeof(BfiSummary));
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {0};
	uint64		added = 0;
	double		pass = 1.0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	bfi_meta_read(index, &sum->meta);
	bfi_summarize(index, sum, NULL);
	for (uint32 i = 0; i < sum->meta.nlayers; i++)
	{
		const BfiLayer *layer = &sum->meta.layers[i];
		uint64		nbits = (uint64) layer->npages * BFI_BLOCKS_PER_PAGE * BF_BLOCK_BITS;

		added += sum->added[i];
		pass *= 1.0 - bf_predict_fpr(BF_LAYOUT_BLOCKED, nbits, (int) layer->hashes,
									 (double) sum->added[i]);
	}
	values[0] = Int32GetDatum((int32) sum->meta.nlayers);
	values[1] = Int64GetDatum((int64) sum->meta.capacity);
	values[2] = Int64GetDatum((int64) added);
	values[3] = Int64GetDatum((int64) RelationGetNumberOfBlocks(index) * BLCKSZ);
	values[4] = Float8GetDatum(sum->meta.fpr);
	values[5] = Float8GetDatum(1.0 - pass);
	guard_close(index);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
