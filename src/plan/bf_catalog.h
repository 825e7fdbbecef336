/*
 * bf_catalog.h
 *		The extension's own catalog objects: its schema, and its check
 *		functions found by OID.
 */
#ifndef BF_CATALOG_H
#define BF_CATALOG_H

#include "postgres.h"

/* The functions of a check of one key against a filter. */
typedef enum BfCheckFn
{
	BF_CHECK_FN_NONE = -1,
	BF_CHECK_FN_CONTAINS,		/* bloom_contains(bloomfilter, anyelement): @> */
	BF_CHECK_FN_CONTAINED,		/* bloom_contained(anyelement, bloomfilter): <@ */
	BF_CHECK_FN_CONTAINS_LITERAL,	/* bloom_contains(bloomfilter, bloom_literal) */
	BF_CHECK_FN_CONTAINED_LITERAL,	/* bloom_contained(bloom_literal, bloomfilter) */
	BF_NUM_CHECK_FNS
} BfCheckFn;

extern Oid	bf_extension_schema(bool missing_ok);
extern BfCheckFn bf_check_fn(Oid funcid);

#endif							/* BF_CATALOG_H */
