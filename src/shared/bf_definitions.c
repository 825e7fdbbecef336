/*
 * bf_definitions.c
 *		The configuration table bloom_shared_definitions: reading definitions
 *		(with a per-backend cache by name) and writing them.
 *
 * Columns are found by name, not position: a table updated from 1.0 has
 * them in another order than a new one.
 *
 * Only positive entries are cached: a name not in the cache re-reads the
 * table.  Writes send a relcache invalidation for the table, which every
 * backend receives at commit and which flushes its cache (and bumps
 * bf_def_epoch, which call sites compare to know when to look again).  A
 * definition deleted behind a call site's back leaves it with a slot that is
 * gone, so it answers "maybe" until it looks again — never "no".
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/indexing.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bf_shared.h"

#if PG_VERSION_NUM >= 140000
#define BF_HASH_STRINGS HASH_STRINGS
#else
#define BF_HASH_STRINGS 0
#endif

uint64		bf_def_epoch = 1;
static HTAB *def_cache = NULL;
static Oid	cached_cfgoid = InvalidOid;
static int	cached_current = -1;	/* -1 unknown, 0 an older layout, 1 current */
static bool callback_registered = false;

static void
def_relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == cached_cfgoid)
		bf_def_invalidate();
}

void
bf_def_invalidate(void)
{
	bf_def_epoch++;
	cached_cfgoid = InvalidOid;
	cached_current = -1;
	if (def_cache)
	{
		hash_destroy(def_cache);
		def_cache = NULL;
	}
}

Oid
bf_config_table(bool missing_ok)
{
	Oid			nsp;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(def_relcache_callback, (Datum) 0);
		callback_registered = true;
	}
	if (OidIsValid(cached_cfgoid))
		return cached_cfgoid;
	nsp = bf_extension_schema(missing_ok);
	if (OidIsValid(nsp))
		cached_cfgoid = get_relname_relid(BF_SHARED_CONFIG_TABLE, nsp);
	if (!OidIsValid(cached_cfgoid) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("bloomfilter configuration table \"%s\" is missing",
						BF_SHARED_CONFIG_TABLE)));
	return cached_cfgoid;
}

/*
 * Is the configuration table of this library's layout?  After the library
 * is replaced by a newer one, a database keeps the older layout until
 * ALTER EXTENSION bloomfilter UPDATE: triggers and event triggers then do
 * nothing (no filter can be built, so none can miss a key) and checks fail
 * with a hint.
 */
bool
bf_config_current(void)
{
	Oid			cfgoid = bf_config_table(true);

	if (!OidIsValid(cfgoid))
		return false;
	/*
	 * "layout" is the column the update to 1.1 adds last: while the update
	 * script runs, the table is not of this layout yet (the planner hook and
	 * the event triggers, which run during the script, leave it alone).
	 */
	if (cached_current < 0)
		cached_current = get_attnum(cfgoid, "layout") != InvalidAttrNumber;
	return cached_current == 1;
}

static void
check_config_current(void)
{
	if (!bf_config_current())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"bloomfilter\" must be updated in this database to use shared bloom filters"),
				 errdetail("The library loaded is newer than the extension's objects."),
				 errhint("Run ALTER EXTENSION bloomfilter UPDATE.")));
}

/* The configuration table's columns, by name. */
typedef struct DefColumns
{
	AttrNumber	id,
				name,
				rel,
				column_name,
				fpr,
				capacity,
				layout;
} DefColumns;

static AttrNumber
def_column(TupleDesc desc, const char *name, Oid type)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
		{
			if (att->atttypid != type)
				break;
			return att->attnum;
		}
	}
	elog(ERROR, "bloomfilter configuration table has no column \"%s\" of type %u",
		 name, type);
	return InvalidAttrNumber;	/* keep compiler quiet */
}

static void
def_columns(TupleDesc desc, DefColumns *c)
{
	c->id = def_column(desc, "id", INT8OID);
	c->name = def_column(desc, "name", TEXTOID);
	c->rel = def_column(desc, "rel", REGCLASSOID);
	c->column_name = def_column(desc, "column_name", NAMEOID);
	c->fpr = def_column(desc, "fpr", FLOAT8OID);
	c->capacity = def_column(desc, "capacity", INT8OID);
	c->layout = def_column(desc, "layout", TEXTOID);
}

static bool
def_from_tuple(HeapTuple tup, TupleDesc desc, const DefColumns *c, BfDefinition *d)
{
	bool		isnull;
	Datum		v;
	char	   *name;

	memset(d, 0, sizeof(BfDefinition));
	v = heap_getattr(tup, c->id, desc, &isnull);
	if (isnull)
		return false;
	d->id = DatumGetInt64(v);
	v = heap_getattr(tup, c->name, desc, &isnull);
	if (isnull)
		return false;
	name = TextDatumGetCString(v);
	strlcpy(d->name, name, sizeof(d->name));
	pfree(name);
	v = heap_getattr(tup, c->rel, desc, &isnull);
	if (isnull)
		return false;
	d->relid = DatumGetObjectId(v);
	v = heap_getattr(tup, c->column_name, desc, &isnull);
	if (isnull)
		return false;
	d->column_name = *DatumGetName(v);
	v = heap_getattr(tup, c->fpr, desc, &isnull);
	if (isnull)
		return false;
	d->fpr = DatumGetFloat8(v);
	v = heap_getattr(tup, c->capacity, desc, &isnull);
	d->capacity = isnull ? 0 : DatumGetInt64(v);
	v = heap_getattr(tup, c->layout, desc, &isnull);
	if (isnull)
		return false;
	name = TextDatumGetCString(v);
	d->layout = bf_guard_layout_from_name(name);
	pfree(name);
	/* the table's CHECK allows no other */
	return d->layout == BF_LAYOUT_BLOCKED || bf_guard_follows_deletes(d->layout);
}

/* Every definition, read with a fresh catalog snapshot. */
List *
bf_def_all(void)
{
	Oid			cfgoid = bf_config_table(false);
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	Snapshot	snap;
	List	   *result = NIL;
	DefColumns	cols;

	check_config_current();
	rel = table_open(cfgoid, AccessShareLock);
	def_columns(RelationGetDescr(rel), &cols);

	/*
	 * The latest definitions, read as catalogs are: with a fresh catalog
	 * snapshot.  GetLatestSnapshot() is refused in parallel mode, where a
	 * parallel query's check or gate may be the first to read them; the
	 * definitions are the extension's configuration, not the query's data,
	 * so they need not be read with the query's snapshot.
	 */
	InvalidateCatalogSnapshot();
	snap = RegisterSnapshot(GetCatalogSnapshot(cfgoid));
	scan = table_beginscan(rel, snap, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		BfDefinition *d = palloc(sizeof(BfDefinition));

		if (def_from_tuple(tup, RelationGetDescr(rel), &cols, d))
			result = lappend(result, d);
		else
			pfree(d);
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);
	return result;
}

bool
bf_def_by_id(int64 id, BfDefinition *def)
{
	List	   *all = bf_def_all();
	ListCell   *lc;
	bool		found = false;

	foreach(lc, all)
	{
		BfDefinition *d = lfirst(lc);

		if (d->id == id)
		{
			*def = *d;
			found = true;
			break;
		}
	}
	list_free_deep(all);
	return found;
}

bool
bf_def_by_name(const char *name, BfDefinition *def)
{
	BfDefinition *e;
	bool		found;
	char		key[BF_SHARED_NAME_LEN];

	if (strlen(name) >= BF_SHARED_NAME_LEN)
		return false;
	memset(key, 0, sizeof(key));
	strlcpy(key, name, sizeof(key));
	(void) bf_config_table(false);
	if (def_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = BF_SHARED_NAME_LEN;
		ctl.entrysize = sizeof(BfDefinition);
		ctl.hcxt = TopMemoryContext;
		def_cache = hash_create("bloomfilter definitions", 64, &ctl,
								HASH_ELEM | BF_HASH_STRINGS | HASH_CONTEXT);
	}
	e = hash_search(def_cache, key, HASH_FIND, &found);
	if (!found)
	{
		List	   *all = bf_def_all();
		ListCell   *lc;

		/* the read may have processed invalidations: start again if so */
		if (def_cache == NULL)
		{
			list_free_deep(all);
			return bf_def_by_name(name, def);
		}
		foreach(lc, all)
		{
			BfDefinition *d = lfirst(lc);
			BfDefinition *n = hash_search(def_cache, d->name, HASH_ENTER, NULL);

			memcpy(n, d, sizeof(BfDefinition));
		}
		list_free_deep(all);
		e = hash_search(def_cache, key, HASH_FIND, &found);
		if (!found)
			return false;
	}
	memcpy(def, e, sizeof(BfDefinition));
	return true;
}

/* The error for a filter name that no definition has. */
void
bf_def_undefined(const char *name)
{
	/* a name longer than any filter's is not echoed whole */
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("shared bloom filter \"%.*s%s\" does not exist",
					BF_SHARED_NAME_LEN, name,
					strlen(name) > BF_SHARED_NAME_LEN ? "..." : ""),
			 errhint("Create it with bloom_guard(table, column); the view bloom_shared_filters lists the existing ones.")));
}

/*
 * Run a statement on the configuration table as its owner, under
 * SECURITY_RESTRICTED_OPERATION and a fixed search_path, and tell every
 * backend to re-read the definitions at commit.  SPI is connected.
 */
static void
config_exec(const char *sql, int nargs, Oid *types, Datum *values,
			const char *nulls, int expect)
{
	Oid			cfgoid = bf_config_table(false);
	Oid			save_userid;
	int			save_sec;
	int			rc;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(bf_rel_owner(cfgoid),
						   save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		int			nest = bf_fixed_search_path();

		rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);
		bf_restore_search_path(nest);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec);
	}
	PG_END_TRY();
	if (rc != expect)
		elog(ERROR, "could not run \"%s\": %s", sql, SPI_result_code_string(rc));
	CacheInvalidateRelcacheByRelid(cfgoid);
	bf_def_invalidate();
}

static char *
config_name(void)
{
	return quote_qualified_identifier(get_namespace_name(bf_extension_schema(false)),
									  BF_SHARED_CONFIG_TABLE);
}

/* Insert a definition; returns its id. */
int64
bf_def_insert(const BfDefinition *def)
{
	Oid			types[6] = {TEXTOID, REGCLASSOID, NAMEOID, FLOAT8OID, INT8OID, TEXTOID};
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', def->capacity > 0 ? ' ' : 'n', ' '};
	bool		isnull;
	int64		id;

	values[0] = CStringGetTextDatum(def->name);
	values[1] = ObjectIdGetDatum(def->relid);
	values[2] = NameGetDatum(&def->column_name);
	values[3] = Float8GetDatum(def->fpr);
	values[4] = Int64GetDatum(def->capacity);
	values[5] = CStringGetTextDatum(bf_guard_layout_name(def->layout));
	SPI_connect();
	config_exec(psprintf("INSERT INTO %s (name, rel, column_name, fpr, capacity, layout) "
						 "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id", config_name()),
				6, types, values, nulls, SPI_OK_INSERT_RETURNING);
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									 1, &isnull));
	SPI_finish();
	return id;
}

void
bf_def_delete(int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	SPI_connect();
	config_exec(psprintf("DELETE FROM %s WHERE id OPERATOR(pg_catalog.=) $1",
						 config_name()),
				1, types, values, NULL, SPI_OK_DELETE);
	SPI_finish();
}
