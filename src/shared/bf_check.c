/*
 * bf_check.c
 *		The SQL functions that use a shared filter: bloom_shared_contains,
 *		bloom_shared_add, bloom_shared_get and bloom_shared_wait.
 *
 * Each call site (FmgrInfo) caches what it resolved: the definition, the
 * guarded column's key type, how an argument of another type becomes a key
 * of the column's type, and where the filter lives.  Access is checked again
 * in every transaction.
 *
 * Agreeing with "WHERE column = value": a check must answer "maybe" whenever
 * that condition would find a row.  So a key is converted the way
 * PostgreSQL's "=" would treat it:
 *  - a string given to the text overloads is read by the column type's input
 *    function (without typmod, as a literal in WHERE is): char(n) ignores
 *    trailing blanks, name clips to 63 bytes, oid accepts "-1";
 *  - a value of another type: pg_catalog's "=" for (column type, value
 *    type) is looked up.  If it compares as the column's type, the value is
 *    cast to it (implicit casts only); if it is a cross-type operator of the
 *    same key kind (int8 = int4), the value is hashed as it is; if it would
 *    convert the column instead (a varchar column against a char(n) value),
 *    the check is refused with an error naming the cast to use.
 *
 * A table guarded per partition (bf_members.c) answers "no" only when every
 * leaf partition's filter does; a key added by hand goes to each of them.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "nodes/value.h"
#include "parser/parse_coerce.h"
#include "parser/parse_oper.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "bf_keyconv.h"
#include "bf_shared.h"

PG_FUNCTION_INFO_V1(bloom_shared_contains);
PG_FUNCTION_INFO_V1(bloom_shared_contains_text);
PG_FUNCTION_INFO_V1(bloom_shared_add);
PG_FUNCTION_INFO_V1(bloom_shared_add_text);
PG_FUNCTION_INFO_V1(bloom_shared_get);
PG_FUNCTION_INFO_V1(bloom_shared_wait);

#if PG_VERSION_NUM >= 170000
#define BF_LXID		(MyProc->vxid.lxid)
#else
#define BF_LXID		(MyProc->lxid)
#endif

typedef enum SiteMode
{
	SITE_READ,					/* SELECT on the column, no row security */
	SITE_WRITE					/* ownership of the table */
} SiteMode;

typedef struct BfSharedSite
{
	/* valid while these match */
	uint64		epoch;
	Oid			userid;
	char		name[BF_SHARED_NAME_LEN];
	Size		name_len;
	LocalTransactionId checked_lxid;	/* access checked in this transaction */

	BfDefinition def;
	AttrNumber	attnum;
	BfKeyConv	kc;				/* how a key becomes the column's */
	BfFilterRef ref;
	bool		load_requested;
	bool		per_partition;	/* a filter per partition (bf_members.c) */
	BfMemberSet members;
} BfSharedSite;

static void
check_read_access(BfSharedSite *site, Oid userid)
{
	Oid			relid = site->def.relid;

	switch (bf_read_access(relid, site->attnum, userid))
	{
		case BF_READ_OK:
			return;
		case BF_READ_NO_USAGE:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for schema %s",
							get_namespace_name(get_rel_namespace(relid))),
					 errdetail("Checking shared bloom filter \"%s\" reveals whether the column holds a value.",
							   site->name)));
			break;
		case BF_READ_NO_SELECT:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for column %s of table %s",
							quote_identifier(NameStr(site->def.column_name)),
							get_rel_name(relid)),
					 errdetail("Checking shared bloom filter \"%s\" reveals whether the column holds a value.",
							   site->name),
					 errhint("Grant SELECT on the column (or the table) to the role.")));
			break;
		case BF_READ_ROW_SECURITY:
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("shared bloom filter \"%s\" cannot be used under row-level security of table %s",
							site->name, get_rel_name(relid)),
					 errdetail("The filter holds the keys of every row, including rows the policies hide from this role."),
					 errhint("Use it from a role that bypasses row-level security on the table, such as its owner.")));
			break;
	}
}

static void
check_access(BfSharedSite *site, SiteMode mode)
{
	if (site->checked_lxid == BF_LXID)
		return;
	if (mode == SITE_READ)
		check_read_access(site, GetUserId());
	else
		bf_check_owner(site->def.relid);
	site->checked_lxid = BF_LXID;
}

/* Resolve a call site: definition, column, access, key conversion. */
static BfSharedSite *
site_setup(FunctionCallInfo fcinfo, SiteMode mode, bool text_arg)
{
	BfSharedSite *site = fcinfo->flinfo->fn_extra;
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
	text	   *name_t = PG_GETARG_TEXT_PP(0);
	char	   *name;
	char	   *what;
	Oid			userid = GetUserId();
	Oid			argtype;
	Oid			atttypid;
	int32		atttypmod;
	Oid			attcoll;

	/*
	 * The same filter as on the last row: no copy of the name per row (the
	 * argument's type is the call site's, resolved once).
	 */
	if (site && site->epoch == bf_def_epoch && site->userid == userid &&
		VARSIZE_ANY_EXHDR(name_t) == site->name_len &&
		memcmp(VARDATA_ANY(name_t), site->name, site->name_len) == 0)
	{
		check_access(site, mode);
		return site;
	}
	argtype = text_arg ? TEXTOID : get_fn_expr_argtype(fcinfo->flinfo, 1);
	name = text_to_cstring(name_t);
	if (site == NULL)
		site = MemoryContextAllocZero(mcxt, sizeof(BfSharedSite));
	else
		memset(site, 0, sizeof(BfSharedSite));
	fcinfo->flinfo->fn_extra = site;

	if (!bf_def_by_name(name, &site->def))
		bf_def_undefined(name);
	what = psprintf("shared bloom filter \"%s\"", name);
	if (text_arg)
		bf_keyconv_check_text_arg(fcinfo, 1, InvalidOid, what);
	bf_keyconv_check_collation(PG_GET_COLLATION(), what);
	strlcpy(site->name, name, sizeof(site->name));
	site->name_len = strlen(site->name);
	site->attnum = get_attnum(site->def.relid, NameStr(site->def.column_name));
	if (site->attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("the column guarded by shared bloom filter \"%s\" no longer exists",
						name)));
	check_access(site, mode);

	get_atttypetypmodcoll(site->def.relid, site->attnum, &atttypid, &atttypmod, &attcoll);
	bf_keyconv_init(&site->kc, mcxt, atttypid, attcoll, argtype, what);
	site->ref = BF_FILTER_REF_NONE;
	site->per_partition = bf_tree_per_partition(site->def.relid);
	site->userid = userid;
	site->epoch = bf_def_epoch;
	pfree(name);
	pfree(what);
	return site;
}

static BfHash
site_hash(BfSharedSite *site, Datum key)
{
	return bf_keyconv_hash(&site->kc, key);
}

/* The key kind a call site hashes with. */
static int
site_kind(BfSharedSite *site)
{
	return bf_keyconv_kind(&site->kc);
}

/*
 * Make sure the site's reference points at the filter's slot, if it has
 * one; without one, ask (once per call site) for the database's filters to
 * be loaded.
 */
static void
site_refresh(BfSharedSite *site)
{
	if (bf_filter_lookup(&site->def, false, &site->ref))
		return;
	if (!site->load_requested && !RecoveryInProgress())
	{
		site->load_requested = true;
		bf_request_load(MyDatabaseId);
	}
}

/*
 * The site's reference no longer reaches a filter (reset by DDL, not loaded):
 * take in what other sessions committed meanwhile; if the definitions or the
 * guarded column changed (the DDL review invalidates the definitions table
 * when keys may have changed), resolve the site and hash the key again, then
 * find the filter's slot.
 */
static BfSharedSite *
site_revalidate(FunctionCallInfo fcinfo, BfSharedSite *site, SiteMode mode,
				bool text_arg, BfHash *h)
{
	AcceptInvalidationMessages();
	if (site->epoch != bf_def_epoch)
	{
		site = site_setup(fcinfo, mode, text_arg);
		*h = site_hash(site, PG_GETARG_DATUM(1));
	}
	site_refresh(site);
	return site;
}

/* The filter was built for a column of another type: re-resolve next time. */
static void
wrong_kind(BfSharedSite *site, int filter_kind)
{
	BfKeyType	kt = site->kc.conv == BF_CONV_NONE ? site->kc.argkt : site->kc.colkt;

	bf_key_check_kind(filter_kind, &kt);
	site->epoch = 0;
}

/*
 * A key hashed as it is (a cross-type "=") may equal a column's key whose
 * canonical bytes differ: varchar = name compares every byte, while the
 * varchar column's keys are hashed without trailing blanks.  Test the key's
 * other forms (bf_key_probe_hashes), as checks of bloomfilter values do.
 */
static BfCheckResult
check_other_forms(BfSharedSite *site, Datum key)
{
	BfHash		hashes[BF_KEY_MAX_PROBES];
	int			n = bf_keyconv_other_hashes(&site->kc, key, hashes);
	int			filter_kind = BF_KEY_NONE;

	for (int i = 0; i < n; i++)
	{
		BfCheckResult r = bf_filter_check(&site->ref, hashes[i], site_kind(site),
										  &filter_kind);

		if (r != BF_CHECK_NO)
			return r;
	}
	return BF_CHECK_NO;
}

/*
 * A table guarded per partition: "maybe" unless every partition's filter
 * says "no" for every form of the key.
 */
static bool
members_contain(FunctionCallInfo fcinfo, BfSharedSite *site, BfHash h)
{
	BfHash		hashes[1 + BF_KEY_MAX_PROBES];
	int			n = 1;
	int			filter_kind = BF_KEY_NONE;
	BfCheckResult r;

	hashes[0] = h;
	n += bf_keyconv_other_hashes(&site->kc, PG_GETARG_DATUM(1), hashes + 1);
	r = bf_members_check(&site->members, &site->def, fcinfo->flinfo->fn_mcxt,
						 hashes, n, site_kind(site), &filter_kind);
	if (r == BF_CHECK_WRONG_KIND)
		wrong_kind(site, filter_kind);
	return r != BF_CHECK_NO;
}

static Datum
contains_common(FunctionCallInfo fcinfo, bool text_arg)
{
	BfSharedSite *site;
	BfHash		h;
	BfCheckResult r;
	int			filter_kind = BF_KEY_NONE;

	bf_shared_check_enabled();
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	site = site_setup(fcinfo, SITE_READ, text_arg);
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	h = site_hash(site, PG_GETARG_DATUM(1));

	/*
	 * "Maybe" on a standby, and while a statement of this backend may have
	 * written rows that this call can see but whose guard triggers (AFTER
	 * ROW, fired at the statement's end) have not added yet: e.g. a BEFORE
	 * trigger of the second row of a multi-row INSERT.
	 */
	if (RecoveryInProgress() || bf_unfired_writes())
		PG_RETURN_BOOL(true);
	if (site->per_partition)
		PG_RETURN_BOOL(members_contain(fcinfo, site, h));
	r = bf_filter_check(&site->ref, h, site_kind(site), &filter_kind);
	if (r == BF_CHECK_UNKNOWN)
	{
		site = site_revalidate(fcinfo, site, SITE_READ, text_arg, &h);
		r = bf_filter_check(&site->ref, h, site_kind(site), &filter_kind);
	}
	if (r == BF_CHECK_WRONG_KIND)
		wrong_kind(site, filter_kind);
	if (r == BF_CHECK_NO && site->kc.conv == BF_CONV_NONE)
		r = check_other_forms(site, PG_GETARG_DATUM(1));
	PG_RETURN_BOOL(r != BF_CHECK_NO);
}

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

/* A table guarded per partition: the key goes to every partition's filter. */
static BfCheckResult
members_add(BfSharedSite *site, BfHash h)
{
	List	   *members = bf_filter_members(&site->def);
	ListCell   *lc;
	BfCheckResult result = BF_CHECK_MAYBE;

	foreach(lc, members)
	{
		BfFilterRef ref;
		int			filter_kind = BF_KEY_NONE;
		BfCheckResult r = BF_CHECK_UNKNOWN;

		if (bf_filter_lookup(lfirst(lc), false, &ref))
			r = bf_filter_add(&ref, h, site_kind(site), &filter_kind);
		if (r == BF_CHECK_WRONG_KIND)
			wrong_kind(site, filter_kind);
		if (r != BF_CHECK_MAYBE)
			result = r;
	}
	list_free_deep(members);
	return result;
}

static Datum
add_common(FunctionCallInfo fcinfo, bool text_arg)
{
	BfSharedSite *site;
	BfHash		h;
	BfCheckResult r;
	int			filter_kind = BF_KEY_NONE;

	bf_shared_check_enabled();
	PreventCommandDuringRecovery("bloom_shared_add()");
	if (PG_ARGISNULL(0))
		PG_RETURN_VOID();
	site = site_setup(fcinfo, SITE_WRITE, text_arg);
	if (PG_ARGISNULL(1))
		PG_RETURN_VOID();
	h = site_hash(site, PG_GETARG_DATUM(1));
	if (site->per_partition)
		r = members_add(site, h);
	else
		r = bf_filter_add(&site->ref, h, site_kind(site), &filter_kind);
	if (r == BF_CHECK_UNKNOWN && !site->per_partition)
	{
		site = site_revalidate(fcinfo, site, SITE_WRITE, text_arg, &h);
		r = bf_filter_add(&site->ref, h, site_kind(site), &filter_kind);
	}
	if (r == BF_CHECK_WRONG_KIND)
		wrong_kind(site, filter_kind);
	if (r != BF_CHECK_MAYBE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared bloom filter \"%s\" is not loaded", site->name),
				 errdetail("A key added now would be lost when the filter is built from its table."),
				 errhint("Wait for it with bloom_shared_wait('%s').", site->name)));
	PG_RETURN_VOID();
}

Datum
bloom_shared_add(PG_FUNCTION_ARGS)
{
	return add_common(fcinfo, false);
}

Datum
bloom_shared_add_text(PG_FUNCTION_ARGS)
{
	return add_common(fcinfo, true);
}

Datum
bloom_shared_get(PG_FUNCTION_ARGS)
{
	BfSharedSite *site;
	struct varlena *result = NULL;

	bf_shared_check_enabled();
	site = site_setup(fcinfo, SITE_READ, true);
	if (site->per_partition)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("shared bloom filter \"%s\" has one filter per partition", site->name),
				 errdetail("bloom_shared_get() returns one filter; the partitions' filters differ in size."),
				 errhint("Check keys with bloom_shared_contains('%s', key).", site->name)));
	if (!RecoveryInProgress())
	{
		result = bf_filter_snapshot(&site->ref);
		if (result == NULL)
		{
			site_refresh(site);
			result = bf_filter_snapshot(&site->ref);
		}
	}
	if (result == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shared bloom filter \"%s\" is not ready", site->name),
				 errhint("Wait for it with bloom_shared_wait('%s'); the view bloom_shared_filters shows its state.",
						 site->name)));
	PG_RETURN_POINTER(result);
}

/* Waiting tells the filter's state: the rule of checks, or ownership. */
static void
check_wait_access(const BfDefinition *def)
{
	AttrNumber	attnum = get_attnum(def->relid, NameStr(def->column_name));

	if (attnum != InvalidAttrNumber &&
		bf_read_access(def->relid, attnum, GetUserId()) == BF_READ_OK)
		return;
	bf_check_owner(def->relid);
}

/*
 * Is every filter of the definition (one, or one per partition) ready?
 * Asks once for the database's filters to be loaded if one has no slot.
 */
static bool
members_ready(List *members, bool *requested)
{
	ListCell   *lc;

	foreach(lc, members)
	{
		BfFilterRef ref;

		if (bf_filter_lookup(lfirst(lc), false, &ref))
		{
			if (!bf_filter_is_ready(&ref))
				return false;
		}
		else
		{
			if (!*requested)
				bf_request_load(MyDatabaseId);
			*requested = true;
			return false;
		}
	}
	return true;
}

Datum
bloom_shared_wait(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		timeout_ms = PG_GETARG_INT32(1);
	BfDefinition def;
	BfFilterRef ref = BF_FILTER_REF_NONE;
	TimestampTz deadline;
	bool		requested = false;
	List	   *members;

	bf_shared_check_enabled();
	if (!bf_def_by_name(name, &def))
		bf_def_undefined(name);
	check_wait_access(&def);
	if (RecoveryInProgress())
		PG_RETURN_BOOL(false);
	members = bf_filter_members(&def);
	if (TransactionIdIsValid(GetTopTransactionIdIfAny()) && members != NIL &&
		bf_filter_lookup(linitial(members), false, &ref) &&
		bf_filter_waits_for(&ref, GetTopTransactionIdIfAny()))
	{
		ereport(NOTICE,
				(errmsg("shared bloom filter \"%s\" is built after this transaction ends",
						name),
				 errhint("Call bloom_shared_wait() after COMMIT.")));
		PG_RETURN_BOOL(false);
	}
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), Max(timeout_ms, 0));
	for (;;)
	{
		if (members_ready(members, &requested))
			PG_RETURN_BOOL(true);
		if (GetCurrentTimestamp() >= deadline)
			PG_RETURN_BOOL(false);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}
