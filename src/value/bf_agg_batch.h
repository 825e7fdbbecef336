/*
 * bf_agg_batch.h
 *		The state of the sized aggregates (bloom_agg(key, capacity, fpr
 *		[, layout])) within a plain aggregation: a bloomfilter value with a
 *		batch of key hashes not yet set in its bits.
 */
#ifndef BF_AGG_BATCH_H
#define BF_AGG_BATCH_H

#include "postgres.h"

#include "core/bf_core.h"

struct BfValue;

/*
 * Filters of at least this many bytes of bits are batched; smaller ones stay
 * in the CPU's caches between rows.
 */
#define BF_AGG_BATCH_MIN_BYTES	(512 * 1024)

typedef struct BfAggBatch BfAggBatch;

/*
 * A new empty filter as an expanded object whose memory context is a child
 * of aggcontext (nodeAgg then keeps it without copying it).
 */
extern BfAggBatch *bf_agg_batch_create(int64 capacity, double fpr, int layout,
									   MemoryContext aggcontext);

/*
 * The object a read/write pointer d points to, if it is one of these and a
 * child of aggcontext (the state the aggregate owns); else NULL.
 */
extern BfAggBatch *bf_agg_batch_owned(Datum d, MemoryContext aggcontext);

/* The object's read/write pointer. */
extern Datum bf_agg_batch_datum(BfAggBatch *b);

/*
 * The object's header: current (added count and key kind included) while
 * hashes are pending.  Not to be modified.
 */
extern const struct BfValue *bf_agg_batch_peek(BfAggBatch *b);

/*
 * Add one key of that kind, given its n hashes (kept pending, set a batch at
 * a time), and count it (as bf_value_note_added).
 */
extern void bf_agg_batch_add_key(BfAggBatch *b, const BfHash *hashes, int n,
								 int kind);

/* Set the pending hashes; the object's value then has all its bits. */
extern void bf_agg_batch_settle(BfAggBatch *b);

/*
 * If d points (read/write or read-only) to one of these, settle it, fill v
 * with its value (to read only, while the object lives) and return true;
 * else return false.
 */
extern bool bf_agg_batch_open(Datum d, struct BfValue *v);

#endif							/* BF_AGG_BATCH_H */
