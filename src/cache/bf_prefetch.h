/*
 * bf_prefetch.h
 *		Prefetching the filter lines that checks of a batch of keys will
 *		read (bf_ops.c), for the BloomBatch node (src/plan/bfp_batch_scan.c).
 */
#ifndef BF_PREFETCH_H
#define BF_PREFETCH_H

#include "postgres.h"

#include "fmgr.h"

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

/*
 * bf_ops.c: the size of a bloomfilter value's data, from its header or TOAST
 * pointer alone (an expanded value: its flat form's): reads nothing, and is
 * the same in every process that is given the value.
 */
extern Size bf_filter_datum_bytes(Datum d);

#endif							/* BF_PREFETCH_H */
