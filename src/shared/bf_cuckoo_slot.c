/*
 * bf_cuckoo_slot.c
 *		Cuckoo guards (bloom_guard(..., layout => 'cuckoo')): a slot whose
 *		buffer is a cuckoo table (core/bf_cuckoo.h) instead of Bloom bits.
 *
 * A cuckoo insertion or removal moves or clears fingerprints: unlike a
 * Bloom add, which only sets bits, it passes through states in which a key
 * that is present is found in neither of its buckets.  So:
 *
 * - every mutation of a cuckoo buffer (the live one, the one being built)
 *   holds the slot lock exclusively: writers never overlap;
 * - every mutation of the live buffer is also a write section
 *   (bf_slot_write_begin/_end): a lock-free check that overlapped it sees
 *   check_seq move and checks again under the slot lock in shared mode,
 *   which waits for the writer (src/README.md, "Shared tier: cuckoo
 *   guards").
 *
 * An insertion that cannot be placed leaves the table as it was
 * (bf_cuckoo_insert), so the buffer lacks that key: the slot is marked
 * overflowed (checks answer "maybe", removals are dropped) and a rebuild
 * at twice the capacity is requested, unless the table is less than half
 * full, which means a key is held by more rows than its two buckets can
 * count, or the table still holds keys of rows that are gone (rolled back,
 * truncated): growing would not help, and the guard stays "full"
 * (answering "maybe") while rebuilds of the same size are retried with the
 * failure backoff until one finds fewer.  The trigger never fails the
 * user's write.
 *
 * Removals come from the queue of bf_removals.c under the same rule as a
 * counting guard's: one copy of the key's fingerprint is cleared, from one
 * of its two buckets, only in the buffer that was live when the removal
 * was queued, so that buffer holds a copy for the deleted row.
 */
#include "postgres.h"

#include "bf_slot.h"
#include "bf_worker.h"

static void
to_cuckoo(const BfHeader *h, BfCuckooHeader *c)
{
	memset(c, 0, sizeof(*c));
	c->key_kind = h->key_kind;
	c->fp_bits = h->hashes;
	c->nbuckets = h->nbits;
	c->capacity = h->capacity;
	c->target_fpr = h->target_fpr;
}

/*
 * The header and payload bytes of a cuckoo buffer for capacity keys at
 * rate fpr; false if it cannot be made (*why: 1 the rate, 2 the size).
 */
bool
bf_cuckoo_slot_size(uint64 capacity, double fpr, uint64 max_bytes,
					BfHeader *out, uint64 *bytes, int *why)
{
	BfCuckooHeader c;

	if (!bf_cuckoo_size(capacity, fpr, max_bytes, &c, why))
		return false;
	memset(out, 0, sizeof(*out));
	out->version = BF_FORMAT_VERSION;
	out->family = BF_FAMILY_CUCKOO;
	out->layout = 0;
	out->hashes = c.fp_bits;
	out->layers = 1;
	out->nbits = c.nbuckets;
	out->capacity = capacity;
	out->target_fpr = fpr;
	*bytes = bf_cuckoo_payload_bytes(c.nbuckets, c.fp_bits);
	return true;
}

bool
bf_cuckoo_slot_test(const BfHeader *h, const uint8 *slots, uint64 hash)
{
	BfCuckooHeader c;

	to_cuckoo(h, &c);
	return bf_cuckoo_contains(&c, slots, hash);
}

/* The predicted false-positive rate with count fingerprints stored. */
double
bf_cuckoo_slot_fpr(const BfHeader *h, uint64 count)
{
	BfCuckooHeader c;

	to_cuckoo(h, &c);
	return bf_cuckoo_predict_fpr(&c, (double) count);
}

/* The bits of the table (for the view's "bits"). */
uint64
bf_cuckoo_slot_bits(const BfHeader *h)
{
	return h->nbits * BF_CUCKOO_SLOTS * h->hashes;
}

/*
 * Ask for a rebuild of at least this capacity, unless a build is pending
 * or under way (its swap looks at the overflow again).  Slot lock
 * exclusive.
 */
static bool
request_larger(BfSlot *s, uint64 capacity)
{
	if (s->request_seq != s->done_seq)
		return false;
	s->request_capacity = (int64) Min(capacity, (uint64) PG_INT64_MAX);
	s->request_seq++;
	return true;
}

/*
 * The live buffer lacks a key (overflowed is set): grow, or say why not.
 * Slot lock exclusive; the caller wakes the launcher.
 */
void
bf_cuckoo_slot_overflowed(BfSlot *s)
{
	uint64		slots = s->live_hdr.nbits * BF_CUCKOO_SLOTS;
	uint64		keys = pg_atomic_read_u64(&s->added);

	Assert(s->overflowed);
	if (keys >= slots / 2)
		request_larger(s, 2 * Max(keys, s->live_hdr.capacity));
	else if (request_larger(s, Max(keys, s->live_hdr.capacity)))
	{
		/*
		 * Growing would not help: a key is held by more rows than its two
		 * buckets count, or the table holds keys of rows that are gone
		 * (rolled back, truncated, dead versions a build still saw).  A
		 * rebuild of the same size drops the latter; try one after the
		 * failure backoff (1 s doubling to 5 min).
		 */
		bf_slot_record_failure(s,
							   "a key is held by more rows (or row versions not yet vacuumed) than its cuckoo buckets can count; the filter answers \"maybe\" until a rebuild finds fewer");
	}
}

/* Insert into the live buffer; true if the launcher should be woken. */
static bool
add_live(BfSlot *s, uint64 hash)
{
	BfCuckooHeader c;
	bool		placed;
	uint64		n;

	to_cuckoo(&s->live_hdr, &c);
	bf_slot_write_begin(s);
	placed = bf_cuckoo_insert(&c, (uint8 *) bf_pool + s->live_off, hash);
	if (!placed)
		s->overflowed = true;
	bf_slot_write_end(s);
	/* (a key not placed counts: the keys the table should hold) */
	n = pg_atomic_add_fetch_u64(&s->added, 1);
	if (!placed)
	{
		bf_cuckoo_slot_overflowed(s);
		return true;
	}
	if (n > s->grow_threshold && !s->has_next &&
		pg_atomic_read_u32(&s->grow_requested) == 0)
	{
		pg_atomic_write_u32(&s->grow_requested, 1);
		return request_larger(s, 2 * Max(n, s->live_hdr.capacity));
	}
	return false;
}

/* Insert into the buffer being built (no check reads it). */
static void
add_next(BfSlot *s, uint64 hash)
{
	BfCuckooHeader c;

	to_cuckoo(&s->next_hdr, &c);
	if (!s->next_overflowed &&
		!bf_cuckoo_insert(&c, (uint8 *) bf_pool + s->next_off, hash))
		s->next_overflowed = true;
	/* the keys it should hold, placed or not: the size of the next build */
	pg_atomic_fetch_add_u64(&s->next_added, 1);
}

/*
 * bf_filter_add for a cuckoo slot: the same results, with the slot lock
 * held exclusively.
 */
BfCheckResult
bf_cuckoo_slot_add(const BfFilterRef *ref, BfHash h, int kind, int *filter_kind)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_EXCLUSIVE);
	BfCheckResult result = BF_CHECK_MAYBE;
	bool		wake = false;

	if (s == NULL)
		return BF_CHECK_UNKNOWN;
	*filter_kind = s->key_kind;
	if (!s->has_live && !s->has_next)
		result = BF_CHECK_UNKNOWN;
	else if (s->key_kind != kind)
		result = BF_CHECK_WRONG_KIND;
	else
	{
		/* an overflowed buffer answers nothing: it is being replaced */
		if (s->has_live && !s->overflowed && bf_hdr_is_cuckoo(&s->live_hdr))
			wake = add_live(s, h.lo);
		else if (s->has_live && bf_hdr_is_cuckoo(&s->live_hdr))
			pg_atomic_fetch_add_u64(&s->added, 1); /* it should hold the key */
		if (s->has_next && bf_hdr_is_cuckoo(&s->next_hdr))
			add_next(s, h.lo);
	}
	bf_slot_release(s);
	if (wake)
		bf_wake_launcher();
	return result;
}

/*
 * A build's batch of keys into its buffer at off; false if the slot was
 * reset (the build is superseded).  A key that cannot be placed marks the
 * buffer overflowed: the swap publishes it so and asks for one sized for
 * every key the scan found.
 */
bool
bf_cuckoo_slot_add_batch(const BfFilterRef *ref, uint64 off, const BfHeader *h,
						 const BfHash *hashes, int n)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_EXCLUSIVE);
	BfCuckooHeader c;

	if (s == NULL)
		return false;
	to_cuckoo(h, &c);
	for (int i = 0; i < n && !s->next_overflowed; i++)
	{
		if (!bf_cuckoo_insert(&c, (uint8 *) bf_pool + off, hashes[i].lo))
			s->next_overflowed = true;
	}
	/* the keys it should hold, placed or not: the size of the next build */
	pg_atomic_fetch_add_u64(&s->next_added, n);
	bf_slot_release(s);
	return true;
}

/*
 * Apply a removal whose deleting transaction committed before the horizon:
 * clear one copy of the key's fingerprint in the live buffer if it is the
 * one live when the removal was queued (epoch) and lacks no key.
 */
void
bf_cuckoo_slot_remove(const BfFilterRef *ref, uint32 epoch, uint64 hash)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_EXCLUSIVE);
	bool		removed = false;

	if (s == NULL)
		return;
	if (s->has_live && !s->suspended && !s->overflowed &&
		s->live_epoch == epoch && bf_hdr_is_cuckoo(&s->live_hdr))
	{
		BfCuckooHeader c;

		to_cuckoo(&s->live_hdr, &c);
		bf_slot_write_begin(s);
		removed = bf_cuckoo_remove(&c, (uint8 *) bf_pool + s->live_off, hash);
		bf_slot_write_end(s);
	}
	if (removed)
	{
		pg_atomic_fetch_add_u64(&s->removed, 1);
		pg_atomic_fetch_sub_u64(&s->added, 1);
	}
	else
		pg_atomic_fetch_add_u64(&s->removals_dropped, 1);
	bf_slot_release(s);
}
