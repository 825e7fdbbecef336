/*
 * bf_removals.c
 *		Counting guards: the queue of removals in shared memory, and the
 *		filter's 4-bit counters changed with atomic operations.
 *
 * A guard of layout counting keeps a counter where a Bloom filter keeps a
 * bit.  Its trigger increments the counters of a row's key at once, as a
 * plain guard sets bits, but a removal (DELETE, or an UPDATE that changes
 * the key) cannot be applied then: the deleting transaction may abort, and
 * until it commits and every snapshot that could see the old row is gone,
 * a check of that key must still answer "maybe".  So the trigger queues
 * the removal: the filter's slot and generation, its live epoch (which
 * build made the live buffer), the key's hash and the deleting (sub)
 * transaction's id.  The launcher applies the queue (bf_removals_apply):
 * an entry whose transaction precedes the xmin horizon (no snapshot can see
 * the old row any more) is applied if that transaction committed and the
 * live buffer is still the one the trigger saw, and dropped otherwise.
 *
 * Losing a removal is always safe: the key stays, a stale "maybe".  So a
 * full queue drops the entry (the writer never waits for room), a restart
 * or crash loses the queue, and a rebuild or reset between the trigger and
 * the application drops it.  Why a removal is applied only to the buffer
 * live when it was queued is argued in src/README.md ("Shared tier:
 * removals").
 *
 * Counters: counter c of a 64-byte block is the low nibble of byte c / 2
 * when c is even, the high nibble when odd (core/bf_counting.h).  Adds and
 * removals change one nibble of a 32-bit word with a compare-and-swap;
 * a counter at 15 is saturated and never changes again.
 */
#include "postgres.h"

#include <limits.h>

#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "bf_compat.h"
#include "bf_counting.h"
#include "bf_slot.h"

#define BF_REMOVALS_TRANCHE "bloomfilter removals"

typedef struct BfRemoval
{
	uint64		hash;			/* the key's XXH3-64 */
	TransactionId xid;			/* the deleting (sub)transaction */
	int32		slot;
	uint32		generation;		/* of the slot when queued */
	uint32		epoch;			/* live_epoch of the slot when queued */
} BfRemoval;

typedef struct BfRemovalQueue
{
	int			size;			/* room for entries */
	int			count;			/* entries in use: entries[0 .. count - 1] */
	BfRemoval	entries[FLEXIBLE_ARRAY_MEMBER];
} BfRemovalQueue;

int			bf_removal_queue_size = 65536;
static BfRemovalQueue *queue = NULL;
static LWLock *queue_lock = NULL;
static BfRemoval *due = NULL;	/* the launcher's work array */

static Size
queue_bytes(void)
{
	return add_size(offsetof(BfRemovalQueue, entries),
					mul_size(bf_removal_queue_size, sizeof(BfRemoval)));
}

void
bf_removals_define_guc(void)
{
	DefineCustomIntVariable("bloomfilter.removal_queue_size",
							"Removals of keys waiting to be applied to counting shared Bloom filters.",
							"A removal that finds the queue full is dropped: its key stays in the filter.",
							&bf_removal_queue_size,
							65536, 16, INT_MAX / (int) sizeof(BfRemoval) / 2,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

void
bf_removals_request_shmem(void)
{
	RequestAddinShmemSpace(queue_bytes());
	RequestNamedLWLockTranche(BF_REMOVALS_TRANCHE, 1);
}

/* From the shmem startup hook, AddinShmemInitLock held. */
void
bf_removals_shmem_init(void)
{
	bool		found;

	queue = ShmemInitStruct("bloomfilter removals", queue_bytes(), &found);
	queue_lock = &GetNamedLWLockTranche(BF_REMOVALS_TRANCHE)[0].lock;
	if (!found)
	{
		queue->size = bf_removal_queue_size;
		queue->count = 0;
	}
}

/*
 * Where counter c of the block at byte offset "block" lives: the 32-bit
 * word and the shift of its nibble in the native word.
 */
static inline pg_atomic_uint32 *
counter_word(uint8 *bits, uint64 block, unsigned c, int *shift)
{
	unsigned	byte = c >> 1;

#ifdef WORDS_BIGENDIAN
	*shift = (int) ((3 - (byte & 3)) * 8 + (c & 1) * 4);
#else
	*shift = (int) ((byte & 3) * 8 + (c & 1) * 4);
#endif
	return (pg_atomic_uint32 *) (bits + block + (byte & ~3u));
}

static inline void
counter_increment(pg_atomic_uint32 *w, int shift)
{
	uint32		old = pg_atomic_read_u32(w);

	for (;;)
	{
		if (((old >> shift) & 0x0F) == BF_COUNTER_MAX)
			return;				/* saturated: stays */
		if (pg_atomic_compare_exchange_u32(w, &old, old + ((uint32) 1 << shift)))
			return;
	}
}

/* False, changing nothing, if the counter is zero. */
static inline bool
counter_decrement(pg_atomic_uint32 *w, int shift)
{
	uint32		old = pg_atomic_read_u32(w);

	for (;;)
	{
		unsigned	v = (old >> shift) & 0x0F;

		if (v == BF_COUNTER_MAX)
			return true;		/* saturated: never decremented */
		if (v == 0)
			return false;
		if (pg_atomic_compare_exchange_u32(w, &old, old - ((uint32) 1 << shift)))
			return true;
	}
}

static inline uint64
key_block(const BfHeader *h, uint64 hash)
{
	return (((hash >> 32) * (h->nbits / BF_BLOCK_BITS)) >> 32) * BF_BLOCK_BYTES;
}

/* Increment a key's k counters in a published counting buffer. */
void
bf_counters_add_atomic(uint8 *bits, const BfHeader *h, uint64 hash)
{
	uint64		block = key_block(h, hash);
	uint32		s = ((uint32) hash) | 1u;

	for (int i = 0; i < h->hashes; i++)
	{
		int			shift;
		pg_atomic_uint32 *w = counter_word(bits, block, bf_counting_next(&s), &shift);

		counter_increment(w, shift);
	}
}

/*
 * Decrement a key's k counters (saturated ones stay).  If one of them is
 * zero, the key was not counted: the counters already decremented are
 * incremented again and the result is false.  The caller makes sure that
 * the buffer counted the key (see src/README.md); this is a last defence.
 */
static bool
counters_remove_atomic(uint8 *bits, const BfHeader *h, uint64 hash)
{
	uint64		block = key_block(h, hash);
	uint32		s = ((uint32) hash) | 1u;
	int			done;

	if (!bf_counting_test(bits, h->nbits, h->hashes, hash))
		return false;
	for (done = 0; done < h->hashes; done++)
	{
		int			shift;
		pg_atomic_uint32 *w = counter_word(bits, block, bf_counting_next(&s), &shift);

		if (!counter_decrement(w, shift))
			break;
	}
	if (done == h->hashes)
		return true;
	s = ((uint32) hash) | 1u;
	for (int i = 0; i < done; i++)
	{
		int			shift;
		pg_atomic_uint32 *w = counter_word(bits, block, bf_counting_next(&s), &shift);

		counter_increment(w, shift);
	}
	return false;
}

/* One more removal dropped for the filter a reference names. */
static void
count_dropped(const BfFilterRef *ref)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_SHARED);

	if (s == NULL)
		return;
	pg_atomic_fetch_add_u64(&s->removals_dropped, 1);
	bf_slot_release(s);
}

/*
 * Queue the removal of a row's key (from a guard trigger, after the row was
 * deleted or its key changed by this transaction).  Returns
 * BF_CHECK_UNKNOWN if the reference is stale (look the filter up again),
 * else BF_CHECK_MAYBE.  Nothing is queued unless the live filter is a
 * counting or cuckoo one for keys of this kind, lacking no key: a filter
 * being built for the first time may not have counted the row.
 */
BfCheckResult
bf_filter_remove(const BfFilterRef *ref, BfHash h, int kind)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_SHARED);
	BfRemoval	e;
	bool		queued = false;
	bool		was_empty = false;

	if (s == NULL)
		return BF_CHECK_UNKNOWN;
	if (!s->has_live || s->suspended || s->overflowed ||
		(s->live_hdr.layout != BF_LAYOUT_COUNTING && !bf_hdr_is_cuckoo(&s->live_hdr)) ||
		s->key_kind != kind || queue == NULL)
	{
		/* a full cuckoo table applies none: the removal is dropped */
		if (s->has_live && s->overflowed && s->key_kind == kind)
			pg_atomic_fetch_add_u64(&s->removals_dropped, 1);
		bf_slot_release(s);
		return BF_CHECK_MAYBE;
	}
	e.hash = h.lo;
	e.slot = ref->slot;
	e.generation = ref->generation;
	e.epoch = s->live_epoch;
	bf_slot_release(s);
	/* the subtransaction that deleted the row: it has an xid already */
	e.xid = GetCurrentTransactionId();

	LWLockAcquire(queue_lock, LW_EXCLUSIVE);
	if (queue->count < queue->size)
	{
		was_empty = queue->count == 0;
		queue->entries[queue->count++] = e;
		queued = true;
	}
	LWLockRelease(queue_lock);
	if (!queued)
		count_dropped(ref);
	else if (was_empty)
		bf_wake_launcher();
	return BF_CHECK_MAYBE;
}

/* Apply one removal whose transaction ended before the horizon. */
static void
apply_one(const BfRemoval *e, bool committed)
{
	BfFilterRef ref = {e->slot, e->generation};
	BfSlot	   *s = bf_slot_acquire(&ref, LW_SHARED);

	if (s == NULL)
		return;					/* forgotten since: nothing to remove from */
	if (bf_hdr_is_cuckoo(&s->live_hdr))
	{
		/* its writers take the slot lock exclusively */
		bf_slot_release(s);
		if (committed)
			bf_cuckoo_slot_remove(&ref, e->epoch, e->hash);
		return;
	}

	/* rolled back: the row is still there, and so is its key */
	if (committed)
	{
		/* rebuilt since (or not counting): the new buffer may lack the row */
		bool		same = s->has_live && !s->suspended && s->live_epoch == e->epoch &&
			s->live_hdr.layout == BF_LAYOUT_COUNTING;

		if (same && counters_remove_atomic((uint8 *) bf_pool + s->live_off,
										   &s->live_hdr, e->hash))
		{
			pg_atomic_fetch_add_u64(&s->removed, 1);
			pg_atomic_fetch_sub_u64(&s->added, 1);
		}
		else
			pg_atomic_fetch_add_u64(&s->removals_dropped, 1);
	}
	bf_slot_release(s);
}

/*
 * Apply the removals that are due (called by the launcher).  An entry is
 * due when its transaction precedes the xmin horizon of the whole server:
 * that transaction has ended, and if it committed, no snapshot can still see
 * the row it deleted.  Due entries leave the queue before they are applied,
 * so an error loses them (their keys stay) and none is applied twice.
 * Returns the number of entries left waiting.
 */
int
bf_removals_apply(void)
{
	static TransactionId last_horizon = InvalidTransactionId;
	static int	last_kept = 0;
	TransactionId horizon;
	int			ndue = 0;
	int			kept = 0;

	if (queue == NULL || queue->count == 0)
		return 0;
	if (due == NULL)
		due = MemoryContextAllocHuge(TopMemoryContext,
									 sizeof(BfRemoval) * (Size) queue->size);

	/* the oldest xid any snapshot of any database may still see as running */
	horizon = GetOldestNonRemovableTransactionId(NULL);

	/*
	 * Nothing can be due if the horizon did not move and no entry came since
	 * the last pass (new entries come from transactions at or after it): a
	 * long transaction holding the horizon costs no pass over the queue.
	 * (An unlocked read of the count: a change is seen at the next pass.)
	 */
	if (TransactionIdEquals(horizon, last_horizon) && queue->count == last_kept)
		return last_kept;
	last_horizon = horizon;

	LWLockAcquire(queue_lock, LW_EXCLUSIVE);
	for (int i = 0; i < queue->count; i++)
	{
		if (TransactionIdPrecedes(queue->entries[i].xid, horizon))
			due[ndue++] = queue->entries[i];
		else
			queue->entries[kept++] = queue->entries[i];
	}
	queue->count = kept;
	LWLockRelease(queue_lock);
	last_kept = kept;

	/* keep the commit log from being truncated while we read it */
	LWLockAcquire(XactTruncationLock, LW_SHARED);
	for (int i = 0; i < ndue; i++)
	{
		/* too old to know its outcome: keep the key */
		bool		known = !TransactionIdPrecedes(due[i].xid,
												   bf_transam_variables->oldestClogXid);

		apply_one(&due[i], known && TransactionIdDidCommit(due[i].xid));
	}
	LWLockRelease(XactTruncationLock);
	return kept;
}

/*
 * The removals waiting in the queue for each slot's current generation:
 * an array of bf_shared->nslots counts (for the view).
 */
int64 *
bf_removals_pending(void)
{
	int64	   *counts = palloc0(sizeof(int64) * bf_shared->nslots);
	uint32	   *generations = palloc(sizeof(uint32) * bf_shared->nslots);

	if (queue == NULL)
		return counts;
	for (int i = 0; i < bf_shared->nslots; i++)
	{
		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		generations[i] = bf_shared->slots[i].generation;
		LWLockRelease(bf_slot_lock(i));
	}
	LWLockAcquire(queue_lock, LW_SHARED);
	for (int i = 0; i < queue->count; i++)
	{
		const BfRemoval *e = &queue->entries[i];

		if (e->slot >= 0 && e->slot < bf_shared->nslots &&
			e->generation == generations[e->slot])
			counts[e->slot]++;
	}
	LWLockRelease(queue_lock);
	pfree(generations);
	return counts;
}
