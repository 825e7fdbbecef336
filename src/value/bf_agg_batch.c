/*
 * bf_agg_batch.c
 *		The state of the sized aggregates within a plain aggregation: a
 *		bloomfilter value with a batch of key hashes not yet set.
 *
 * Adding a key to a filter larger than the CPU's caches costs a cache miss
 * (the key's block is nowhere near the last one's), and a row of
 * bloom_agg(key, capacity, fpr) is otherwise a few dozen nanoseconds.  So
 * the transition function keeps the hashes of the last rows pending, up to
 * BATCH_HASHES of them, and sets them together, prefetching the line of
 * each key PREFETCH_AHEAD keys before setting its bits: the misses overlap
 * instead of following one another.  The bit array starts on a cache line,
 * so a blocked key's bits are in one line.
 *
 * Pending hashes must never be lost, and nothing may read the bits without
 * them.  The state is an expanded object (utils/expandeddatum.h) in a child
 * context of the aggregate's: nodeAgg keeps it without copying, and passes
 * it back to the transition function as a read/write pointer.  Everything
 * else reaches the value through the object, which sets the pending hashes
 * first: flattening (a partial aggregate's state sent to the leader, a
 * stored result, Citus's transfer of a state in its text form, a copy), and
 * this extension's readers (bf_value_from_datum and the call sites' opening
 * of a value, which read it in place).  Setting bits in another order
 * gives the same bits (they are ORed, or counted, one key at a time), so the
 * value is byte for byte the one the unbatched adds give.
 *
 * Only filters of at least BF_AGG_BATCH_MIN_BYTES are batched, and only in
 * a plain or sorted aggregation, as bf_agg.c decides: a smaller filter stays
 * in the caches, and its state is the plain value, as in a window aggregate.
 */
#include "postgres.h"

#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "core/bf_core.h"
#include "value/bf_agg_batch.h"
#include "value/bf_value_mem.h"

/* Hashes kept pending; their lines fit in a level 1 data cache. */
#define BATCH_HASHES	128

/* Lines in flight: about what a core can have outstanding. */
#define PREFETCH_AHEAD	16

struct BfAggBatch
{
	ExpandedObjectHeader eoh;	/* standard header: must be first */
	BfValue		v;				/* hdr current; the header in raw is written
								 * when the object is settled */
	int			npending;
	BfHash		pending[BATCH_HASHES];
};

static Size batch_get_flat_size(ExpandedObjectHeader *eohptr);
static void batch_flatten_into(ExpandedObjectHeader *eohptr,
							   void *result, Size allocated_size);

static const ExpandedObjectMethods batch_methods =
{
	batch_get_flat_size,
	batch_flatten_into
};

static Size
batch_get_flat_size(ExpandedObjectHeader *eohptr)
{
	return VARSIZE(((BfAggBatch *) eohptr)->v.raw);
}

static void
batch_flatten_into(ExpandedObjectHeader *eohptr, void *result,
				   Size allocated_size)
{
	BfAggBatch *b = (BfAggBatch *) eohptr;

	Assert(allocated_size == VARSIZE(b->v.raw));
	bf_agg_batch_settle(b);
	memcpy(result, b->v.raw, allocated_size);
}

/* A new object without a value, in a new child context of aggcontext. */
static BfAggBatch *
batch_new(MemoryContext aggcontext)
{
	MemoryContext cxt;
	BfAggBatch *b;

	cxt = AllocSetContextCreate(aggcontext, "bloom_agg state",
								ALLOCSET_SMALL_SIZES);
	b = (BfAggBatch *) MemoryContextAllocZero(cxt, sizeof(BfAggBatch));
	EOH_init_header(&b->eoh, &batch_methods, cxt);
	return b;
}

BfAggBatch *
bf_agg_batch_create(int64 capacity, double fpr, int layout,
					MemoryContext aggcontext)
{
	BfAggBatch *b = batch_new(aggcontext);
	MemoryContext oldcxt = MemoryContextSwitchTo(b->eoh.eoh_context);

	bf_value_create_aligned(capacity, fpr, layout, &b->v);
	MemoryContextSwitchTo(oldcxt);
	return b;
}

/* The object d points to, or NULL if it is not one of these. */
static BfAggBatch *
batch_from_datum(Datum d)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
		return NULL;
	eoh = DatumGetEOHP(d);
	if (eoh->eoh_methods != &batch_methods)
		return NULL;
	return (BfAggBatch *) eoh;
}

BfAggBatch *
bf_agg_batch_owned(Datum d, MemoryContext aggcontext)
{
	BfAggBatch *b;

	if (!VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)))
		return NULL;
	b = batch_from_datum(d);
	if (b == NULL || MemoryContextGetParent(b->eoh.eoh_context) != aggcontext)
		return NULL;
	return b;
}

Datum
bf_agg_batch_datum(BfAggBatch *b)
{
	return EOHPGetRWDatum(&b->eoh);
}

const BfValue *
bf_agg_batch_peek(BfAggBatch *b)
{
	return &b->v;
}

/* Set the pending hashes' bits, prefetching PREFETCH_AHEAD keys ahead. */
static void
batch_apply(BfAggBatch *b)
{
	const BfHeader *h = &b->v.hdr;
	uint8	   *bits = b->v.bits;

	int			n = b->npending;
	int			ahead = Min(n, PREFETCH_AHEAD);

	for (int i = 0; i < ahead; i++)
		bf_prefetch_hash(h, bits, b->pending[i]);
	for (int i = 0; i < n; i++)
	{
		if (i + ahead < n)
			bf_prefetch_hash(h, bits, b->pending[i + ahead]);
		bf_add_hash(h, bits, b->pending[i]);
	}
	b->npending = 0;
}

void
bf_agg_batch_add_key(BfAggBatch *b, const BfHash *hashes, int n, int kind)
{
	BfHeader   *h = &b->v.hdr;

	for (int i = 0; i < n; i++)
	{
		if (b->npending == BATCH_HASHES)
			batch_apply(b);
		b->pending[b->npending++] = hashes[i];
	}
	if (h->key_kind != kind)
	{
		Assert(h->key_kind == BF_KEY_NONE);
		h->key_kind = (uint8) kind;
	}
	/* saturate: the count is informational */
	if (h->added < PG_UINT64_MAX)
		h->added++;
}

void
bf_agg_batch_settle(BfAggBatch *b)
{
	uint8_t    *buf = (uint8_t *) VARDATA(b->v.raw);

	batch_apply(b);
	bf_header_set_key_kind(buf, b->v.hdr.key_kind);
	bf_header_set_added(buf, b->v.hdr.added);
}

bool
bf_agg_batch_open(Datum d, BfValue *v)
{
	BfAggBatch *b = batch_from_datum(d);

	if (b == NULL)
		return false;
	bf_agg_batch_settle(b);
	*v = b->v;
	return true;
}
