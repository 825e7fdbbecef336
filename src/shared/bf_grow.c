/*
 * bf_grow.c
 *		Growth of a shared filter by a layer: a guard whose table outgrows its
 *		filter gets a scalable layer (core/bf_scalable.h) instead of a rebuild
 *		that rescans the table.
 *
 * A live buffer is either a single filter (its bits; the slot holds its
 * header) or a layered one: the payload of a scalable filter (layers, each
 * a 64-byte header and its bits), the slot holding the outer header.  Keys
 * go to the last layer; checks test every layer.  The first layer is the
 * filter the build made: a build sizes a guard that may grow by layers as the
 * first layer of a scalable filter of the guard's rate P (capacity c at
 * BF_SCALABLE_HEADROOM * P * (1 - r)), and every layer takes its capacity in
 * keys, so the layers' rates add up to less than P.
 *
 * A growth (src/README.md, "Growth") allocates a buffer of the live layers
 * plus a new empty one, copies the live layers into it and publishes it as
 * "next", all with the slot lock exclusive: from then on every add also
 * sets its key in next's new layer.  Then next is swapped in (registry and
 * slot locks exclusive).  No key is lost and the table is not read.
 * Nothing between publication and the swap can fail or be interrupted, so a
 * published next never outlives its growth; the launcher starts no build
 * while a next exists.
 *
 * Counting guards keep growing by a rebuild at twice the capacity (their
 * counters cannot be layered: removals would need to know the layer), and
 * so does a guard whose next layer does not fit (the 64-layer cap, the
 * pool's free space).
 */
#include "postgres.h"

#include "miscadmin.h"

#include "bf_layout.h"
#include "bf_scalable.h"
#include "bf_value.h"
#include "bf_slot.h"

/* The growth and ratio of a guard's layers (the scalable filters' defaults). */
#define GUARD_GROWTH	2
#define GUARD_RATIO		0.5

/* Can a live buffer of this header grow by a layer? */
bool
bf_grows_by_layer(const BfHeader *h)
{
	return h->family == BF_FAMILY_SCALABLE ||
		(h->family == BF_FAMILY_BLOOM &&
		 (h->layout == BF_LAYOUT_BLOCKED || h->layout == BF_LAYOUT_CLASSIC));
}

/* The header of a layer with the fields an add or a test reads. */
static inline void
layer_header(const BfHeader *outer, const uint8 *layer, BfHeader *out)
{
	memset(out, 0, sizeof(*out));
	out->family = BF_FAMILY_BLOOM;
	out->layout = outer->layout;
	out->layers = 1;
	out->hashes = (uint16) (layer[BF_LAYER_OFF_HASHES] | (layer[BF_LAYER_OFF_HASHES + 1] << 8));
	out->nbits = bf_read_u64le(layer + BF_LAYER_OFF_NBITS);
}

/*
 * The rate a build sizes a filter of this layout for: a filter that grows
 * by layers is the first layer of a scalable filter of the guard's rate
 * (its share, with the headroom scalable filters keep), so that the layers
 * it may get stay below the guard's rate together.
 */
double
bf_first_layer_fpr(int layout, double fpr)
{
	if (layout == BF_LAYOUT_BLOCKED || layout == BF_LAYOUT_CLASSIC)
		return BF_SCALABLE_HEADROOM * bf_scalable_layer_fpr(fpr, GUARD_RATIO, 0);
	return fpr;
}

/*
 * The adds past which a live buffer grows: base (the adds before its last
 * layer) plus what the last layer takes, its capacity (the add past it
 * grows the filter, so a layer may hold a few keys more while the growth
 * runs); for a counting filter, the adds until its predicted rate reaches
 * 1.5 times the target (then it is rebuilt larger).
 */
uint64
bf_live_grow_threshold(const BfHeader *h, const uint8 *buf, uint64 base)
{
	uint64		limit;

	if (h->family == BF_FAMILY_SCALABLE)
		limit = bf_read_u64le(bf_scalable_last(h, (uint8 *) buf) + BF_LAYER_OFF_CAPACITY);
	else if (bf_grows_by_layer(h))
		limit = h->capacity;
	else
		return bf_grow_threshold(h);
	return limit > PG_UINT64_MAX - base ? PG_UINT64_MAX : base + limit;
}

/* Add a hashed key to a live or next buffer (its last layer if layered). */
void
bf_buffer_add_atomic(uint8 *buf, const BfHeader *h, BfHash hash)
{
	if (h->family == BF_FAMILY_SCALABLE)
	{
		uint8	   *last = bf_scalable_last(h, buf);
		BfHeader	l;

		layer_header(h, last, &l);
		bf_bits_add_atomic(last + BF_HEADER_SIZE, &l, hash);
	}
	else
		bf_bits_add_atomic(buf, h, hash);
}

/*
 * Test a hashed key in a layered buffer read without a lock: the buffer may
 * have been given back and reused since its header was read, so every
 * layer's extent is checked against the buffer's size (bytes) before its
 * bits are read.  Returns false, *hit unset, when a layer does not fit: the
 * caller checks again under the lock.
 */
bool
bf_layers_test_unlocked(const BfHeader *h, const uint8 *buf, uint64 bytes,
						BfHash hash, bool *hit)
{
	uint64		pos = 0;
	uint64		unit = h->layout == BF_LAYOUT_CLASSIC ? BF_CLASSIC_ALIGN_BITS : BF_BLOCK_BITS;

	for (uint32 i = 0; i < h->layers; i++)
	{
		const uint8 *layer = buf + pos;
		BfHeader	l;

		if (bytes - pos < BF_HEADER_SIZE)
			return false;
		layer_header(h, layer, &l);
		if (l.hashes < 1 || l.hashes > BF_MAX_HASHES || l.nbits == 0 ||
			l.nbits % unit != 0 || l.nbits / 8 > bytes - pos - BF_HEADER_SIZE)
			return false;
		if (bf_test_hash(&l, layer + BF_HEADER_SIZE, hash))
		{
			*hit = true;
			return true;
		}
		pos += BF_HEADER_SIZE + l.nbits / 8;
	}
	*hit = false;
	return true;
}

/* The outer header of the scalable form of a live buffer. */
static void
outer_header(const BfSlot *s, BfHeader *outer)
{
	*outer = s->live_hdr;
	outer->key_kind = (uint8) s->key_kind;
	outer->added = 0;
	if (outer->family == BF_FAMILY_SCALABLE)
		return;
	outer->family = BF_FAMILY_SCALABLE;
	outer->hashes = 0;
	outer->layers = 1;
	outer->growth = GUARD_GROWTH;
	outer->ratio = GUARD_RATIO;
}

/*
 * Bytes of the live buffer's layers in the layered form (a single filter
 * gains its layer header).
 */
static uint64
layered_bytes(const BfHeader *live)
{
	if (live->family == BF_FAMILY_SCALABLE)
		return bf_value_payload_bytes(live);
	return BF_HEADER_SIZE + bf_payload_bytes(live->nbits);
}

/*
 * Step 1 (registry and slot locks held exclusively): allocate next, copy the
 * live layers into it, clear its new layer and publish it.  Adds wait for
 * the slot lock meanwhile, so the copy holds every key added so far and
 * nothing else: keys added to the live buffer once next is published also
 * go to next's new layer, never into the copied layers.  Returns false with
 * a reason if the filter cannot grow by a layer.  Releases the registry lock
 * (once next's extent is recorded, before the copy).
 */
static bool
grow_publish(BfSlot *s, uint64 *off, uint64 *bytes, char *why, size_t whylen)
{
	BfHeader	outer;
	BfHeader	layer;
	uint64		old_bytes = layered_bytes(&s->live_hdr);
	uint8	   *next;
	uint8	   *live = (uint8 *) bf_pool + s->live_off;

	outer_header(s, &outer);
	if (bf_scalable_new_layer(&outer, Min(bf_shared_max_nbits(), BF_MAX_NBITS(outer.layout)),
							  &layer, why, whylen) != BF_OK)
	{
		LWLockRelease(bf_registry_lock());
		return false;
	}
	*bytes = old_bytes + BF_HEADER_SIZE + bf_payload_bytes(layer.nbits);
	if (!bf_pool_alloc(*bytes, off))
	{
		LWLockRelease(bf_registry_lock());
		snprintf(why, whylen, "%llu kB do not fit in bloomfilter.shared_memory",
				 (unsigned long long) (*bytes / 1024));
		return false;
	}

	/*
	 * The extent is this slot's once recorded; it returns to the pool only
	 * with the slot lock held exclusively, which we hold.
	 */
	s->next_off = *off;
	s->next_bytes = *bytes;
	LWLockRelease(bf_registry_lock());
	next = (uint8 *) bf_pool + *off;

	if (s->live_hdr.family == BF_FAMILY_SCALABLE)
		memcpy(next, live, old_bytes);
	else
	{
		BfHeader	first = s->live_hdr;

		first.key_kind = (uint8) s->key_kind;
		first.target_fpr = bf_scalable_layer_fpr(outer.target_fpr, outer.ratio, 0);
		first.added = 0;
		bf_header_encode(&first, next);
		memcpy(next + BF_HEADER_SIZE, live, bf_payload_bytes(s->live_hdr.nbits));
	}
	layer.key_kind = (uint8) s->key_kind;
	bf_header_encode(&layer, next + old_bytes);
	memset(next + old_bytes + BF_HEADER_SIZE, 0, bf_payload_bytes(layer.nbits));
	outer.layers++;
	outer.nbits += layer.nbits;
	s->next_hdr = outer;
	pg_atomic_write_u64(&s->next_added, 0);
	s->has_next = true;
	return true;
}

/*
 * Step 2 (registry and slot locks held exclusively): record the keys of the
 * layer that stops taking keys, and make next live.
 */
static void
grow_swap(BfSlot *s)
{
	uint64		before = pg_atomic_read_u64(&s->added) - pg_atomic_read_u64(&s->next_added);
	uint8	   *next = (uint8 *) bf_pool + s->next_off;
	BfHeader	grown = s->next_hdr;
	uint8	   *old_last;

	/* the layer before the new one: what the live buffer's last layer took */
	grown.layers--;
	old_last = bf_scalable_last(&grown, next);
	bf_header_set_added(old_last, before - Min(before, s->layer_base));

	bf_slot_write_begin(s);
	s->live_off = s->next_off;
	s->live_bytes = s->next_bytes;
	s->live_hdr = s->next_hdr;
	bf_slot_write_end(s);
	s->has_next = false;
	s->next_bytes = 0;
	s->layer_base = before;
	s->grow_threshold = bf_live_grow_threshold(&s->live_hdr, next, before);
}

/*
 * Is a growth by a layer due (slot lock held)?  The live filter passed its
 * threshold, no growth or build is under way or due (a build's swap sets a
 * new threshold), and none failed since the last build (grow_requested: a
 * larger rebuild was asked for instead).
 */
static bool
growth_due(BfSlot *s)
{
	return s->has_live && !s->suspended && !s->has_next && s->next_bytes == 0 &&
		pg_atomic_read_u64(&s->added) > s->grow_threshold &&
		pg_atomic_read_u32(&s->grow_requested) == 0 &&
		s->request_seq == s->done_seq && s->builder_pid == 0 && !s->launching;
}

/*
 * Grow a live filter that passed its grow threshold by a layer: called by
 * every add past it, which waits here for a growth under way to publish its
 * next (so that keys do not pile up in a full layer meanwhile).  Returns
 * false if the filter cannot grow by a layer (counting, 64 layers, no room
 * in the pool): the caller then asks for a larger rebuild, once
 * (grow_requested is set).  True if it grew, or if there is nothing to do.
 */
bool
bf_grow_by_layer(const BfFilterRef *ref)
{
	BfSlot	   *s;
	uint64		off = 0;
	uint64		bytes = 0;
	char		why[256] = "";
	char		name[BF_SHARED_NAME_LEN];
	uint32		layers = 0;
	bool		ok;

	/* waits for a growth holding the slot lock (the copy) */
	s = bf_slot_acquire(ref, LW_SHARED);
	if (s == NULL)
		return true;
	ok = growth_due(s);
	bf_slot_release(s);
	if (!ok)
		return true;

	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	s = bf_slot_acquire(ref, LW_EXCLUSIVE);
	if (s == NULL || !growth_due(s))
	{
		if (s != NULL)
			bf_slot_release(s);
		LWLockRelease(bf_registry_lock());
		return true;
	}
	strlcpy(name, s->name, sizeof(name));
	if (!bf_grows_by_layer(&s->live_hdr))
	{
		pg_atomic_write_u32(&s->grow_requested, 1);
		bf_slot_release(s);
		LWLockRelease(bf_registry_lock());
		return false;
	}
	ok = grow_publish(s, &off, &bytes, why, sizeof(why));
	if (!ok)
		pg_atomic_write_u32(&s->grow_requested, 1);
	bf_slot_release(s);
	if (!ok)
	{
		ereport(LOG,
				(errmsg("shared bloom filter \"%s\" cannot grow by a layer, a larger rebuild is requested: %s",
						name, why)));
		return false;
	}

	/* nothing from the publication to the swap may fail or be interrupted */
	HOLD_INTERRUPTS();
	LWLockAcquire(bf_registry_lock(), LW_EXCLUSIVE);
	s = bf_slot_acquire(ref, LW_EXCLUSIVE);
	/* (a reset meanwhile forgot next with the rest) */
	ok = s != NULL && s->has_next && s->next_off == off;
	if (ok)
	{
		grow_swap(s);
		layers = s->live_hdr.layers;
	}
	if (s != NULL)
		bf_slot_release(s);
	LWLockRelease(bf_registry_lock());
	RESUME_INTERRUPTS();
	bf_wake_launcher();
	if (ok)
		ereport(LOG,
				(errmsg("shared bloom filter \"%s\" grew by a layer: %u layers, %llu kB",
						name, layers, (unsigned long long) (bytes / 1024))));
	return true;
}

/*
 * The snapshot's layers: the copy of a layered buffer gets the added count
 * of its last layer (the others were recorded when they stopped taking
 * keys).  value is the whole value, outer header first.
 */
void
bf_grow_snapshot_counts(const BfHeader *h, uint8 *value, uint64 added, uint64 layer_base)
{
	uint8	   *last = bf_scalable_last(h, value + BF_HEADER_SIZE);

	bf_header_set_added(last, added - Min(added, layer_base));
}
