/*
 * bf_compat.h
 *		Differences between the PostgreSQL major versions the extension
 *		builds against (15 to 18), in one place.  Include it after
 *		postgres.h.  Only PostgreSQL's own headers here: every folder above
 *		the core includes it (through value/bf_value.h).
 */
#ifndef BF_COMPAT_H
#define BF_COMPAT_H

#include "postgres.h"

/*
 * PostgreSQL 16 moved the varlena macros and structs (VARDATA, VARSIZE,
 * SET_VARSIZE, VARATT_IS_*, varattrib_1b_e, struct varatt_external) out of
 * postgres.h into varatt.h.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * PostgreSQL 16 replaced the per-catalog privilege checks
 * (pg_namespace_aclcheck, ...) by object_aclcheck.
 */
#include "catalog/pg_namespace.h"
#include "utils/acl.h"
#if PG_VERSION_NUM >= 160000
#define bf_namespace_aclcheck(nspid, roleid, mode) \
	object_aclcheck(NamespaceRelationId, (nspid), (roleid), (mode))
#else
#define bf_namespace_aclcheck(nspid, roleid, mode) \
	pg_namespace_aclcheck((nspid), (roleid), (mode))
#endif

/*
 * Input errors are "soft" on PostgreSQL 16 and later (pg_input_is_valid and
 * friends: the input function's fcinfo->context collects them), hard errors
 * before.
 */
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#define BF_INPUT_ERROR(fcinfo, ...) ereturn((fcinfo)->context, (Datum) 0, __VA_ARGS__)
#else
#define BF_INPUT_ERROR(fcinfo, ...) ereport(ERROR, __VA_ARGS__)
#endif

/*
 * PostgreSQL 16 renamed a relation's physical identifier (RelFileNode
 * rd_node, field relNode) to RelFileLocator rd_locator (field relNumber).
 * Use it where utils/rel.h is included.
 */
#if PG_VERSION_NUM >= 160000
#define bf_rel_filenumber(rel) ((Oid) (rel)->rd_locator.relNumber)
#define bf_rel_dboid(rel)		((rel)->rd_locator.dbOid)
#define bf_rel_spcoid(rel)		((rel)->rd_locator.spcOid)
#else
#define bf_rel_filenumber(rel) ((rel)->rd_node.relNode)
#define bf_rel_dboid(rel)		((rel)->rd_node.dbNode)
#define bf_rel_spcoid(rel)		((rel)->rd_node.spcNode)
#endif

/*
 * PostgreSQL 18 gave vacuum_delay_point an argument (is_analyze).  Include
 * commands/vacuum.h to use it.
 */
#if PG_VERSION_NUM >= 180000
#define bf_vacuum_delay_point() vacuum_delay_point(false)
#else
#define bf_vacuum_delay_point() vacuum_delay_point()
#endif

#endif							/* BF_COMPAT_H */
