/*
 * bf_security.c
 *		Running SQL and user-reachable code safely.
 *
 * The shared tier runs SQL on its own behalf: writes to the definitions
 * table (as that table's owner), DDL on guarded tables (as the caller), and
 * catalog queries in event triggers.  Each runs with search_path fixed to
 * "pg_catalog, pg_temp" and names every object by schema, so that no
 * function or operator of a schema the caller controls is ever resolved.
 * Builds run no SQL at all: they read the table directly, as its owner,
 * under SECURITY_RESTRICTED_OPERATION (see bf_build.c).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "executor/spi.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "bf_compat.h"
#include "bf_shared.h"

/*
 * Fix search_path until bf_restore_search_path(level); an error in between
 * restores it with the (sub)transaction's abort.
 */
int
bf_fixed_search_path(void)
{
	int			level = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return level;
}

void
bf_restore_search_path(int level)
{
	AtEOXact_GUC(true, level);
}

Oid
bf_rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Run a statement (fully schema-qualified) as the current user with a fixed
 * search_path.  SPI is connected.
 */
void
bf_spi_exec(const char *sql, int nargs, Oid *types, Datum *values, int expect)
{
	int			level = bf_fixed_search_path();
	int			rc;

	rc = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
	bf_restore_search_path(level);
	if (rc != expect)
		elog(ERROR, "could not run \"%s\": %s", sql, SPI_result_code_string(rc));
}

/*
 * May the role learn which keys a column holds?  What reading it would take:
 * USAGE on its schema, SELECT on the table or the column, and no row-level
 * security policy applying to the role there.
 */
BfReadAccess
bf_read_access(Oid relid, AttrNumber attnum, Oid userid)
{
	if (bf_namespace_aclcheck(get_rel_namespace(relid), userid, ACL_USAGE) != ACLCHECK_OK)
		return BF_READ_NO_USAGE;
	if (pg_class_aclcheck(relid, userid, ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT) != ACLCHECK_OK)
		return BF_READ_NO_SELECT;
	if (check_enable_rls(relid, userid, true) == RLS_ENABLED)
		return BF_READ_ROW_SECURITY;
	return BF_READ_OK;
}
