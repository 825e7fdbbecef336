/*
 * bf_batch_scan.h
 *		BloomBatch: a sequential scan's check of a large filter, with the
 *		filter's lines of a batch of rows loaded before their checks.
 */
#ifndef BF_BATCH_SCAN_H
#define BF_BATCH_SCAN_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/plannodes.h"

/* GUC bloomfilter.batch_checks */
extern bool bf_batch_checks;

/* Register the node's methods and the GUC (from _PG_init). */
extern void bf_batch_scan_init(void);

/*
 * The plan tree with each sequential scan one of whose conditions is a check
 * of a filter known before the scan (bf @> column, column <@ bf) split into a
 * BloomBatch node above the scan: the node evaluates the scan's conditions
 * and projection, the scan only reads.  *next_id: the plan node id for the
 * next new node.
 */
extern Plan *bf_batch_plan(Plan *plan, int *next_id);

/* The largest plan_node_id in a plan tree, -1 for none. */
extern int	bf_batch_max_node_id(Plan *plan);

typedef enum BfPrefetch
{
	BF_PREFETCH_DONE,			/* the lines are on their way */
	BF_PREFETCH_LATER,			/* not now: a stored value not read yet */
	BF_PREFETCH_NEVER			/* not for this filter and key type (an
								 * empty filter: nothing to read) */
} BfPrefetch;

/*
 * bf_ops.c: prefetch the filter lines that checks of keys[0],
 * keys[stride], ... (NULL ones skipped) through this call (its filter
 * argument set) will read; *filter_bytes: the size of the filter's bits.
 * Reads no stored value, and raises no error that the first of these
 * checks would not.
 */
extern BfPrefetch bf_contains_prefetch(FunctionCallInfo fcinfo,
									   int filter_argno, int key_argno,
									   bool literal, const Datum *keys,
									   const bool *isnull, int nkeys,
									   int stride, Size *filter_bytes);

#endif							/* BF_BATCH_SCAN_H */
