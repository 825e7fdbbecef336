/*
 * bf_value.h
 *		The value type: the one header the folders above it include.
 *
 * The folder's files, each calling only those before it (and the core,
 * core/bf_core.h):
 *
 *	bf_keys.c		key types: canonical bytes and hashes of a key (bf_keys.h)
 *	bf_keyconv.c	keys of one type checked as another, for the guard index
 *					and the planner (bf_keyconv.h)
 *	bf_value.c		values in memory: open, create, grow, merge
 *					(bf_value_mem.h)
 *	bf_agg_batch.c	the sized aggregates' batched state (bf_agg_batch.h)
 *	bf_datum.c		a datum of the type in any of its forms (bf_datum.h)
 *	bf_expanded.c	expanded objects: in-place adds (bf_expanded.h)
 *	bf_io.c			the type's input, output, send, receive and casts
 *	bf_agg_auto.c	bloom_agg without a capacity, and bf_agg_state.c its
 *					bloom_agg_state forms (bf_agg_auto.h, this folder only)
 *	bf_cuckoo.c		the cuckoofilter type's SQL functions
 *
 * and bf_compat.h, the differences between PostgreSQL versions, for every
 * folder above the core.  The SQL functions that read their filters through
 * call sites (bf_ops.c, bf_agg.c) are in src/cache/, above this folder.
 */
#ifndef BF_VALUE_H
#define BF_VALUE_H

#include "postgres.h"

#include "value/bf_compat.h"

#include "core/bf_core.h"
#include "value/bf_keys.h"
#include "value/bf_keyconv.h"
#include "value/bf_value_mem.h"
#include "value/bf_agg_batch.h"
#include "value/bf_datum.h"
#include "value/bf_expanded.h"

/* bf_agg_auto.c: GUC bloomfilter.agg_max_distinct (defined in _PG_init) */
extern int	bf_agg_max_distinct;

#endif							/* BF_VALUE_H */
