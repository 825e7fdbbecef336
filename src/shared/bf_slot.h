/*
 * bf_slot.h
 *		The registry's slots: one per loaded shared filter.  Private to the
 *		registry (bf_registry.c), the filter operations (bf_filter.c,
 *		bf_grow.c), the launcher (bf_launcher.c) and builds (bf_build.c); the
 *		guard, DDL and trigger code see only bf_shared.h.
 *
 * The concurrency protocol is described in src/README.md ("Shared tier:
 * concurrency"); in short:
 *
 * - The registry lock protects slot identity (in_use, dbid, cfgoid, defid)
 *   and the pool's extents.  A slot's own lock protects everything checks
 *   and adds read.  Whoever takes both takes the registry lock first.
 * - generation is bumped whenever a slot forgets its bits (reset) or is
 *   freed.  A BfFilterRef remembers the generation it saw; acquiring it
 *   fails once the generation moved on, so no one keeps using bits of a
 *   filter that was forgotten.
 * - Bits go only from 0 to 1 in a published buffer (atomic OR of 32-bit
 *   words).  The counters of a counting buffer change by compare-and-swap
 *   of 32-bit words; they go down only for removals proven safe
 *   (bf_removals.c).
 * - Checks take no lock: they read what they need between two reads of
 *   check_seq (a sequence lock).  Whoever changes a field a check reads
 *   (in_use, generation, has_live, suspended, key_kind, live_off, live_hdr,
 *   overflowed; and a cuckoo table's slots) or gives the live buffer back to
 *   the pool does so between
 *   bf_slot_write_begin() and bf_slot_write_end(), with the slot lock held
 *   exclusively; a check that saw check_seq odd or changed falls back to the
 *   slot lock.  A counter a check reads may be decremented meanwhile, but
 *   never below the count of the keys still present.
 * - Builds are requested by bumping request_seq; a build serves the
 *   request_seq it read when it started and records it in done_seq when it
 *   publishes.  A request made during a build leaves request_seq ahead, so
 *   another build follows.
 */
#ifndef BF_SLOT_H
#define BF_SLOT_H

#include "bf_shared.h"
#include "bf_cuckoo.h"
#include "bf_layout.h"

#define BF_SLOT_ERROR_LEN	256

typedef struct BfSlot
{
	/* odd while a writer changes what checks read (see above) */
	pg_atomic_uint32 check_seq;

	/* identity: written with the registry lock and the slot lock exclusive */
	bool		in_use;
	uint32		generation;
	Oid			dbid;
	Oid			cfgoid;			/* the definitions table (extension instance) */
	int64		defid;			/* the definition row's id */
	Oid			member;			/* its partition, or InvalidOid: the tree */
	char		name[BF_SHARED_NAME_LEN];	/* for the view and messages */
	Oid			relid;			/* the guarded table and column: who may */
	NameData	column;			/* see the filter in the view */

	/* extents in the pool: registry lock (bytes 0: none) */
	uint64		live_off;
	uint64		live_bytes;
	uint64		next_off;
	uint64		next_bytes;

	/* what checks and adds read: slot lock */
	bool		has_live;
	bool		has_next;
	BfHeader	live_hdr;
	BfHeader	next_hdr;
	int			key_kind;
	uint64		grow_threshold; /* live adds past which a grow is requested */
	uint64		layer_base;		/* live adds before its last layer (bf_grow.c) */
	TimestampTz last_build;

	/* builds: slot lock */
	uint32		request_seq;	/* bumped by each build request */
	uint32		done_seq;		/* the request served by the last build */
	TransactionId wait_xid;		/* a build first waits for this transaction */
	int64		request_capacity;	/* at least this capacity (grow) */
	pid_t		builder_pid;	/* the worker building it, or 0 */
	bool		launching;		/* the launcher started a worker for it */
	bool		suspended;		/* a guard trigger is disabled */
	int			failures;		/* consecutive failed builds */
	TimestampTz next_try;		/* no build before this (backoff) */
	char		last_error[BF_SLOT_ERROR_LEN];

	pg_atomic_uint64 added;		/* keys added to live */
	pg_atomic_uint64 next_added;	/* keys added to next */
	pg_atomic_uint64 checks;	/* flushed now and then by each backend */
	pg_atomic_uint64 negatives;
	pg_atomic_uint32 grow_requested;	/* past grow_threshold, a larger rebuild was
										 * asked for (no growth by a layer) */

	/* counting filters (bf_removals.c) */
	uint32		live_epoch;		/* bumped by each swap: slot lock */
	pg_atomic_uint64 removed;	/* removals applied to live */
	pg_atomic_uint64 removals_dropped;	/* removals not applied: keys stay */

	/*
	 * cuckoo filters (bf_cuckoo_slot.c): an add could not be placed, so the
	 * buffer lacks a key.  overflowed (live) is read by checks: it changes
	 * in a write section; next_overflowed: slot lock.
	 */
	bool		overflowed;
	bool		next_overflowed;
} BfSlot;

typedef struct BfSharedState
{
	int			nslots;
	uint64		pool_bytes;
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	/* databases whose definitions should be loaded (registry lock) */
	int			nload;
	Oid			load_dbid[BF_MAX_LOAD_REQUESTS];
	BfSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} BfSharedState;

extern BfSharedState *bf_shared;
extern char *bf_pool;

extern LWLock *bf_registry_lock(void);
extern LWLock *bf_slot_lock(int i);

/*
 * The slot a reference names, with its lock held in the given mode, or NULL
 * (lock not held) if the slot was reset or freed since the reference was
 * made.
 */
extern BfSlot *bf_slot_acquire(const BfFilterRef *ref, LWLockMode mode);
extern void bf_slot_release(BfSlot *s);

/*
 * Open and close a change of what lock-free checks read; the slot lock is
 * held exclusively (so writers never overlap), and sections do not nest.
 * The atomic increments are full barriers: a check that read any of the
 * change, or bits of a buffer reused after it, sees check_seq moved.
 */
static inline void
bf_slot_write_begin(BfSlot *s)
{
	pg_atomic_fetch_add_u32(&s->check_seq, 1);
}

static inline void
bf_slot_write_end(BfSlot *s)
{
	pg_atomic_fetch_add_u32(&s->check_seq, 1);
}
extern int	bf_slot_index(const BfSlot *s);

/* Forget the bits (new generation); the caller holds no lock. */
extern void bf_slot_reset(int i);

/* pool: the registry lock is held exclusively */
extern bool bf_pool_alloc(uint64 bytes, uint64 *off);
extern uint64 bf_pool_used(void);

/* hot path helpers (bf_filter.c) */
extern void bf_bits_add_atomic(uint8 *bits, const BfHeader *h, BfHash hash);
extern uint64 bf_grow_threshold(const BfHeader *h);
extern void bf_counters_add_atomic(uint8 *bits, const BfHeader *h, uint64 hash);

/* growth by a layer (bf_grow.c) */
extern bool bf_grows_by_layer(const BfHeader *h);
extern uint64 bf_live_grow_threshold(const BfHeader *h, const uint8 *buf, uint64 base);
extern void bf_buffer_add_atomic(uint8 *buf, const BfHeader *h, BfHash hash);
extern bool bf_layers_test_unlocked(const BfHeader *h, const uint8 *buf, uint64 bytes,
									BfHash hash, bool *hit);
extern bool bf_grow_by_layer(const BfFilterRef *ref);
extern void bf_grow_snapshot_counts(const BfHeader *h, uint8 *value, uint64 added,
									uint64 layer_base);

/*
 * Cuckoo guards (bf_cuckoo_slot.c).  A slot's buffer is then the payload of
 * a cuckoofilter value (core/bf_cuckoo.h) and its BfHeader says so with
 * family BF_FAMILY_CUCKOO, layout 0 (no Bloom layout), hashes the
 * fingerprint bits and nbits the bucket count; the other fields keep their
 * meaning.  Every mutation of a cuckoo buffer holds the slot lock
 * exclusively, and one of the live buffer is a write section: it moves
 * fingerprints, which a lock-free check must not see half done.
 */
static inline bool
bf_hdr_is_cuckoo(const BfHeader *h)
{
	return h->family == BF_FAMILY_CUCKOO;
}

extern bool bf_cuckoo_slot_size(uint64 capacity, double fpr, uint64 max_bytes,
								BfHeader *out, uint64 *bytes, int *why);
extern bool bf_cuckoo_slot_test(const BfHeader *h, const uint8 *slots, uint64 hash);
extern double bf_cuckoo_slot_fpr(const BfHeader *h, uint64 count);
extern uint64 bf_cuckoo_slot_bits(const BfHeader *h);
extern BfCheckResult bf_cuckoo_slot_add(const BfFilterRef *ref, BfHash h, int kind,
										int *filter_kind);
extern bool bf_cuckoo_slot_add_batch(const BfFilterRef *ref, uint64 off,
									 const BfHeader *h, const BfHash *hashes, int n);
extern void bf_cuckoo_slot_overflowed(BfSlot *s);
extern void bf_cuckoo_slot_remove(const BfFilterRef *ref, uint32 epoch, uint64 hash);

/* A test of a hashed key in a buffer of any layout a slot holds. */
static inline bool
bf_slot_test_hash(const BfHeader *h, const uint8 *bits, BfHash hash)
{
	if (bf_hdr_is_cuckoo(h))
		return bf_cuckoo_slot_test(h, bits, hash.lo);
	return bf_test_hash(h, bits, hash);
}

/* the removal queue (bf_removals.c) */
extern int	bf_removal_queue_size;
extern void bf_removals_define_guc(void);
extern void bf_removals_request_shmem(void);
extern void bf_removals_shmem_init(void);
extern int	bf_removals_apply(void);
extern int64 *bf_removals_pending(void);


#endif							/* BF_SLOT_H */
