/*
 * bf_filter.c
 *		Operations on a loaded shared filter: check, add, snapshot, readiness,
 *		and the information behind the view bloom_shared_filters.
 *
 * An add takes the slot lock in shared mode through bf_slot_acquire(),
 * which also verifies that the slot still holds the filter the caller's
 * reference was made for (its generation).  Bits are set with atomic ORs,
 * so adds never block one another or checks.
 *
 * A check takes no lock and writes no shared memory: it reads the slot
 * between two reads of its check_seq (a sequence lock, see bf_slot.h) and
 * tests the bits, then reads check_seq a third time; if a writer was at work
 * meanwhile, it checks again under the slot lock.  Its counts go to
 * backend-local counters, added to the slot's now and then.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "catalog/pg_class.h"
#include "storage/ipc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "bf_layout.h"
#include "bf_scalable.h"
#include "bf_sizing.h"
#include "bf_value.h"
#include "bf_slot.h"

PG_FUNCTION_INFO_V1(bloom_shared_filters_info);

StaticAssertDecl(sizeof(pg_atomic_uint32) == sizeof(uint32),
				 "atomic words must overlay the bit array");

/*
 * Bit j of the format is bit j % 8 of byte j / 8.  In a native 32-bit word
 * holding bytes 4w .. 4w+3 that is bit j % 32 on little-endian machines; on
 * big-endian ones byte 0 is the most significant.
 */
#ifdef WORDS_BIGENDIAN
#define BF_WORD_BIT(p)	((uint32) 1 << (((3 - (((p) >> 3) & 3)) << 3) | ((p) & 7)))
#else
#define BF_WORD_BIT(p)	((uint32) 1 << ((p) & 31))
#endif

static inline void
atomic_or_word(uint8 *bits, uint64 word, uint32 mask)
{
	pg_atomic_uint32 *w = (pg_atomic_uint32 *) (bits + word * 4);

	/* skip the locked instruction when the bits are already set */
	if ((w->value & mask) != mask)
		pg_atomic_fetch_or_u32(w, mask);
}

/* Add a hashed key to a published buffer with atomic ORs. */
void
bf_bits_add_atomic(uint8 *bits, const BfHeader *h, BfHash hash)
{
	if (h->layout == BF_LAYOUT_COUNTING)
		bf_counters_add_atomic(bits, h, hash.lo);
	else if (h->layout == BF_LAYOUT_CLASSIC)
	{
		BfClassicIter it;

		bf_classic_iter_init(&it, h->nbits, hash);
		for (int i = 0; i < h->hashes; i++)
		{
			uint64		x = bf_classic_iter_next(&it);

			atomic_or_word(bits, x >> 5, BF_WORD_BIT(x & 31));
		}
	}
	else
	{
		uint64		block = bf_blocked_block(hash.lo, h->nbits / BF_BLOCK_BITS);
		uint32		masks[BF_BLOCK_BITS / 32] = {0};
		uint32		s = bf_blocked_seed(hash.lo);

		for (int i = 0; i < h->hashes; i++)
		{
			uint32		p = bf_blocked_next(&s);

			masks[p >> 5] |= BF_WORD_BIT(p);
		}
		for (int w = 0; w < BF_BLOCK_BITS / 32; w++)
			if (masks[w])
				atomic_or_word(bits, block * (BF_BLOCK_BITS / 32) + w, masks[w]);
	}
}

/*
 * The number of keys past which the predicted FPR exceeds 1.5 times the
 * target: adds ask for a larger rebuild there, well before the FPR reaches
 * twice the target.
 */
uint64
bf_grow_threshold(const BfHeader *h)
{
	uint64		over;

	/* a cuckoo table is sized for its capacity at 95% load */
	if (bf_hdr_is_cuckoo(h))
		return h->capacity;
	over = bf_value_keys_over_rate(h, 1.5);

	return over == PG_UINT64_MAX ? over : over - 1;
}

/*
 * Counts of checks not yet added to the slots' counters, for the few filters
 * this backend checked last.  They are added every COUNT_FLUSH_EVERY checks,
 * when the table is full, at the end of each transaction, at exit and before
 * this backend reads the view.
 */
#define COUNT_FILTERS		8
#define COUNT_FLUSH_EVERY	4096

typedef struct PendingCount
{
	BfFilterRef ref;
	uint64		checks;
	uint64		negatives;
} PendingCount;

static PendingCount pending[COUNT_FILTERS];
static int	npending = 0;
static uint32 pending_checks = 0;
static bool count_callbacks_set = false;

/* Add the pending counts to the slots (those not reset meanwhile). */
static void
flush_counts(void)
{
	for (int i = 0; i < npending; i++)
	{
		BfSlot	   *s = bf_slot_acquire(&pending[i].ref, LW_SHARED);

		if (s == NULL)
			continue;
		pg_atomic_fetch_add_u64(&s->checks, pending[i].checks);
		pg_atomic_fetch_add_u64(&s->negatives, pending[i].negatives);
		bf_slot_release(s);
	}
	npending = 0;
	pending_checks = 0;
}

static void
count_xact_end(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			if (npending > 0)
				flush_counts();
			break;
		default:
			break;
	}
}

static void
count_exit(int code, Datum arg)
{
	if (npending > 0)
		flush_counts();
}

static void
count_check(const BfFilterRef *ref, bool negative)
{
	PendingCount *p = NULL;

	if (npending > 0 && pending[0].ref.slot == ref->slot &&
		pending[0].ref.generation == ref->generation)
		p = &pending[0];
	else
	{
		if (!count_callbacks_set)
		{
			RegisterXactCallback(count_xact_end, NULL);
			before_shmem_exit(count_exit, (Datum) 0);
			count_callbacks_set = true;
		}
		for (int i = 1; i < npending && p == NULL; i++)
			if (pending[i].ref.slot == ref->slot &&
				pending[i].ref.generation == ref->generation)
				p = &pending[i];
		if (p == NULL)
		{
			if (npending == COUNT_FILTERS)
				flush_counts();
			p = &pending[npending++];
			p->ref = *ref;
			p->checks = p->negatives = 0;
		}
		/* the last one used first */
		if (p != &pending[0])
		{
			PendingCount tmp = *p;

			*p = pending[0];
			pending[0] = tmp;
			p = &pending[0];
		}
	}
	p->checks++;
	p->negatives += negative;
	if (++pending_checks >= COUNT_FLUSH_EVERY)
		flush_counts();
}

/*
 * The check under the slot lock: the way when a writer is at work.  *reached:
 * the reference still names the slot (the check counts).
 */
static BfCheckResult
check_locked(const BfFilterRef *ref, BfHash h, int kind, int *filter_kind,
			 bool *reached)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_SHARED);
	BfCheckResult result = BF_CHECK_UNKNOWN;

	*reached = s != NULL;
	if (s == NULL)
		return BF_CHECK_UNKNOWN;
	if (s->has_live && !s->suspended && !s->overflowed)
	{
		*filter_kind = s->key_kind;
		if (s->key_kind != kind)
			result = BF_CHECK_WRONG_KIND;
		else if (bf_slot_test_hash(&s->live_hdr, (const uint8 *) bf_pool + s->live_off, h))
			result = BF_CHECK_MAYBE;
		else
			result = BF_CHECK_NO;
	}
	bf_slot_release(s);
	return result;
}

/*
 * The check without a lock (src/README.md, "Checks without a lock").
 * Returns false if a writer was at work: the caller checks under the lock.
 *
 * The fields are read (through a volatile pointer, the header copied whole)
 * between two reads of check_seq that agree and are even: no write section overlapped, so they
 * are one consistent state, and the bits' offset and size lie inside the
 * pool.  The bits are read, then check_seq a third time: if it still agrees,
 * no swap, reset or free happened since the fields were read, so the
 * buffer was still the live one (bits only go from 0 to 1 in it; a counting
 * buffer's counters go down only for keys no snapshot can see any more, never
 * below the count of the keys still present; a cuckoo table changes only in
 * write sections, which the third read sees) and was not given back to the
 * pool and reused.
 */
static bool
check_unlocked(const BfFilterRef *ref, BfHash h, int kind, int *filter_kind,
			   BfCheckResult *result)
{
	BfSlot	   *s;
	volatile BfSlot *vs;
	uint32		seq;
	bool		valid;
	bool		live;
	int			slot_kind;
	uint64		off;
	uint64		bytes;
	BfHeader	hdr;
	bool		hit;

	if (ref->slot < 0 || ref->slot >= bf_shared->nslots)
		return false;
	s = &bf_shared->slots[ref->slot];
	vs = s;
	seq = pg_atomic_read_u32(&s->check_seq);
	if (seq & 1)
		return false;
	pg_read_barrier();
	valid = vs->in_use && vs->generation == ref->generation;
	live = vs->has_live && !vs->suspended && !vs->overflowed;
	slot_kind = vs->key_kind;
	off = vs->live_off;
	bytes = vs->live_bytes;
	/* the whole header: the test reads more than the layout and sizes */
	hdr = s->live_hdr;
	pg_read_barrier();
	if (pg_atomic_read_u32(&s->check_seq) != seq)
		return false;
	if (!valid)
		return false;			/* the locked path says so */
	if (!live)
	{
		*result = BF_CHECK_UNKNOWN;
		return true;
	}
	*filter_kind = slot_kind;
	if (slot_kind != kind)
	{
		*result = BF_CHECK_WRONG_KIND;
		return true;
	}
	/* a layered buffer's layer headers are read from the pool: bounded */
	if (hdr.family == BF_FAMILY_SCALABLE)
	{
		if (!bf_layers_test_unlocked(&hdr, (const uint8 *) bf_pool + off, bytes, h, &hit))
			return false;
	}
	else
		hit = bf_slot_test_hash(&hdr, (const uint8 *) bf_pool + off, h);
	pg_read_barrier();
	if (pg_atomic_read_u32(&s->check_seq) != seq)
		return false;
	*result = hit ? BF_CHECK_MAYBE : BF_CHECK_NO;
	return true;
}

BfCheckResult
bf_filter_check(const BfFilterRef *ref, BfHash h, int kind, int *filter_kind)
{
	BfCheckResult result;
	bool		reached = true;

	if (!check_unlocked(ref, h, kind, filter_kind, &result))
		result = check_locked(ref, h, kind, filter_kind, &reached);
	if (reached)
		count_check(ref, result == BF_CHECK_NO);
	return result;
}

/* Ask for a larger rebuild of a filter that passed its grow threshold. */
static void
request_grow(const BfFilterRef *ref)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_EXCLUSIVE);

	if (s == NULL)
		return;
	if (s->has_live && s->request_seq == s->done_seq)
	{
		s->request_capacity = (int64) Max(2 * pg_atomic_read_u64(&s->added),
										  2 * s->live_hdr.capacity);
		s->request_seq++;
	}
	bf_slot_release(s);
	bf_wake_launcher();
}

/*
 * Add a hashed key to the live buffer and to the one being built.  Returns
 * BF_CHECK_UNKNOWN if there is neither (not loaded: the next build reads the
 * key from the table), BF_CHECK_WRONG_KIND if the filter holds keys of
 * another kind, else BF_CHECK_MAYBE.
 */
BfCheckResult
bf_filter_add(const BfFilterRef *ref, BfHash h, int kind, int *filter_kind)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_SHARED);
	BfCheckResult result = BF_CHECK_MAYBE;
	bool		grow = false;

	if (s == NULL)
		return BF_CHECK_UNKNOWN;
	if (bf_hdr_is_cuckoo(s->has_live ? &s->live_hdr : &s->next_hdr))
	{
		/* its writers take the slot lock exclusively */
		bf_slot_release(s);
		return bf_cuckoo_slot_add(ref, h, kind, filter_kind);
	}
	*filter_kind = s->key_kind;
	if (!s->has_live && !s->has_next)
		result = BF_CHECK_UNKNOWN;
	else if (s->key_kind != kind)
		result = BF_CHECK_WRONG_KIND;
	else
	{
		if (s->has_live)
		{
			uint64		n;

			bf_buffer_add_atomic((uint8 *) bf_pool + s->live_off, &s->live_hdr, h);
			n = pg_atomic_add_fetch_u64(&s->added, 1);
			/* past it, every add helps or waits for the growth */
			if (n > s->grow_threshold && !s->has_next &&
				pg_atomic_read_u32(&s->grow_requested) == 0)
				grow = true;
		}
		if (s->has_next)
		{
			bf_buffer_add_atomic((uint8 *) bf_pool + s->next_off, &s->next_hdr, h);
			pg_atomic_fetch_add_u64(&s->next_added, 1);
		}
	}
	bf_slot_release(s);
	if (grow && !bf_grow_by_layer(ref))
		request_grow(ref);
	return result;
}

/* A copy of the live filter as a bloomfilter value, or NULL if none. */
struct varlena *
bf_filter_snapshot(const BfFilterRef *ref)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_SHARED);
	struct varlena *result;
	BfHeader	hdr;
	Size		payload;
	Size		total;

	if (s == NULL)
		return NULL;
	if (!s->has_live || s->suspended)
	{
		bf_slot_release(s);
		return NULL;
	}
	if (bf_hdr_is_cuckoo(&s->live_hdr))
	{
		char		name[BF_SHARED_NAME_LEN];

		strlcpy(name, s->name, sizeof(name));
		bf_slot_release(s);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("shared filter \"%s\" is a cuckoo filter", name),
				 errdetail("bloom_shared_get() returns a bloomfilter value.")));
	}
	hdr = s->live_hdr;
	payload = bf_value_payload_bytes(&hdr);
	total = VARHDRSZ + BF_HEADER_SIZE + payload;
	if (total > MaxAllocSize)
	{
		char		name[BF_SHARED_NAME_LEN];

		strlcpy(name, s->name, sizeof(name));
		bf_slot_release(s);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("shared bloom filter \"%s\" is too large to be returned as a value",
						name),
				 errdetail("A bloomfilter value is at most 1 GB.")));
	}
	hdr.key_kind = (uint8) s->key_kind;
	hdr.added = pg_atomic_read_u64(&s->added);
	result = (struct varlena *) palloc(total);
	SET_VARSIZE(result, total);
	bf_header_encode(&hdr, (uint8_t *) VARDATA(result));
	memcpy((char *) VARDATA(result) + BF_HEADER_SIZE, bf_pool + s->live_off, payload);
	if (hdr.family == BF_FAMILY_SCALABLE)
		bf_grow_snapshot_counts(&hdr, (uint8 *) VARDATA(result), hdr.added, s->layer_base);
	bf_slot_release(s);
	return result;
}

/* Live and answering, with no build pending or running. */
bool
bf_filter_is_ready(const BfFilterRef *ref)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_SHARED);
	bool		ready;

	if (s == NULL)
		return false;
	ready = s->has_live && !s->suspended && !s->overflowed && !s->has_next &&
		s->request_seq == s->done_seq && s->builder_pid == 0;
	bf_slot_release(s);
	return ready;
}

/* Will the filter's next build wait for this transaction? */
bool
bf_filter_waits_for(const BfFilterRef *ref, TransactionId xid)
{
	BfSlot	   *s = bf_slot_acquire(ref, LW_SHARED);
	bool		waits;

	if (s == NULL)
		return false;
	waits = s->request_seq != s->done_seq && TransactionIdEquals(s->wait_xid, xid);
	bf_slot_release(s);
	return waits;
}

/*
 * Should a change of a definition's triggers bring a build?  Unless the
 * filter is live with no build under way: a build running now may have
 * looked at the triggers before the change.
 */
bool
bf_filter_needs_build(const BfDefinition *def)
{
	BfFilterRef ref;
	BfSlot	   *s;
	bool		needs;

	if (!bf_filter_lookup(def, false, &ref) || (s = bf_slot_acquire(&ref, LW_SHARED)) == NULL)
		return true;
	needs = s->suspended || !s->has_live || s->request_seq != s->done_seq ||
		s->builder_pid != 0 || s->launching;
	bf_slot_release(s);
	return needs;
}

/* The state of a slot, its lock held. */
static const char *
slot_state(BfSlot *s)
{
	bool		pending = s->request_seq != s->done_seq || s->builder_pid != 0 ||
		s->has_next;

	if (s->suspended)
		return "suspended";
	if (s->has_live && s->overflowed)
		return "full";			/* a cuckoo table lacks a key: "maybe" */
	/* checks use the current filter while its rebuild is retried */
	if (s->has_live && pending && s->failures > 0)
		return "rebuild failed";
	if (s->has_live)
		return pending ? "rebuilding" : "ready";
	if (s->failures > 0)
		return "failed";
	return pending ? "building" : "not loaded";
}

#define INFO_COLUMNS 19

/* May the current role see a filter's row: read access to its column, or ownership. */
static bool
may_see(Oid relid, const char *column)
{
	AttrNumber	attnum;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return false;
	attnum = get_attnum(relid, column);
	if (attnum != InvalidAttrNumber &&
		bf_read_access(relid, attnum, GetUserId()) == BF_READ_OK)
		return true;
#if PG_VERSION_NUM >= 160000
	return object_ownercheck(RelationRelationId, relid, GetUserId());
#else
	return pg_class_ownercheck(relid, GetUserId());
#endif
}

/* One row of the view from a slot; its lock is held. */
static void
slot_info(BfSlot *s, bool standby, int64 pending, Datum *values, bool *nulls)
{
	memset(nulls, 0, sizeof(bool) * INFO_COLUMNS);
	values[0] = CStringGetTextDatum(s->name);
	values[1] = Int64GetDatum(s->defid);
	values[2] = CStringGetTextDatum(standby ? "standby" : slot_state(s));
	if (s->has_live)
	{
		const BfHeader *h = &s->live_hdr;
		uint64		capacity = h->capacity;
		int			hashes = h->hashes;

		/* layered: the layers' capacities, the hashes of the one taking keys */
		if (h->family == BF_FAMILY_SCALABLE)
		{
			const uint8 *p = (const uint8 *) bf_pool + s->live_off;

			capacity = 0;
			for (uint32 i = 0; i < h->layers; i++)
			{
				capacity += bf_read_u64le(p + BF_LAYER_OFF_CAPACITY);
				hashes = p[BF_LAYER_OFF_HASHES] | (p[BF_LAYER_OFF_HASHES + 1] << 8);
				p = bf_scalable_next(p);
			}
		}
		values[3] = Int64GetDatum((int64) capacity);
		values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&s->added));
		if (bf_hdr_is_cuckoo(h))
		{
			/* bits of the table; no hash count; the rate at its load */
			values[4] = Int64GetDatum((int64) bf_cuckoo_slot_bits(h));
			nulls[5] = true;
			/* a full table answers "maybe" to every key */
			values[7] = Float8GetDatum(s->overflowed ? 1.0 :
									   bf_cuckoo_slot_fpr(h, pg_atomic_read_u64(&s->added)));
		}
		else
		{
			values[4] = Int64GetDatum((int64) h->nbits);
			values[5] = Int32GetDatum(hashes);
			values[7] = Float8GetDatum(bf_estimate_fpr(h, (const uint8 *) bf_pool + s->live_off));
		}
	}
	else
		nulls[3] = nulls[4] = nulls[5] = nulls[6] = nulls[7] = nulls[17] = true;
	values[8] = Int64GetDatum((int64) (s->live_bytes + s->next_bytes));
	values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&s->checks));
	values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&s->negatives));
	values[11] = TimestampTzGetDatum(s->last_build);
	nulls[11] = s->last_build == 0;
	values[12] = CStringGetTextDatum(s->last_error);
	nulls[12] = s->last_error[0] == '\0';
	values[13] = TimestampTzGetDatum(s->next_try);
	nulls[13] = s->next_try == 0 || s->failures == 0;
	values[14] = Int64GetDatum((int64) pg_atomic_read_u64(&s->removed));
	values[15] = Int64GetDatum(pending);
	values[16] = Int64GetDatum((int64) pg_atomic_read_u64(&s->removals_dropped));
	if (s->has_live)
		values[17] = Int32GetDatum((int32) s->live_hdr.layers);
	values[18] = ObjectIdGetDatum(s->member);
	nulls[18] = !OidIsValid(s->member);
}

/*
 * One row per slot of this database: name, definition_id, state, capacity,
 * bits, hashes, keys_added, estimated_fpr, memory_bytes, checks, negatives,
 * last_build, last_error, next_try, keys_removed, removals_pending,
 * removals_dropped, layers, partition.
 */
Datum
bloom_shared_filters_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			cfgoid;
	bool		standby;
	int64	   *pending;

	InitMaterializedSRF(fcinfo, 0);
	/* without the preload, the view shows the definitions, none loaded */
	if (!bf_shared_available())
		return (Datum) 0;
	/* this backend's own checks so far */
	if (npending > 0)
		flush_counts();
	cfgoid = bf_config_table(true);
	standby = RecoveryInProgress();
	pending = bf_removals_pending();

	for (int i = 0; i < bf_shared->nslots; i++)
	{
		BfSlot	   *s = &bf_shared->slots[i];
		Datum		values[INFO_COLUMNS];
		bool		nulls[INFO_COLUMNS];
		bool		mine;

		Oid			relid;
		NameData	column;

		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		mine = s->in_use && s->dbid == MyDatabaseId && s->cfgoid == cfgoid;
		relid = s->relid;
		column = s->column;
		LWLockRelease(bf_slot_lock(i));
		if (!mine)
			continue;
		/* its counters tell about the keys: only for roles that may read them */
		if (!may_see(relid, NameStr(column)))
		{
			LWLockAcquire(bf_slot_lock(i), LW_SHARED);
			slot_info(s, standby, pending[i], values, nulls);
			LWLockRelease(bf_slot_lock(i));
			values[2] = CStringGetTextDatum("hidden");
			for (int c = 3; c < INFO_COLUMNS - 1; c++)
				nulls[c] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			continue;
		}
		LWLockAcquire(bf_slot_lock(i), LW_SHARED);
		mine = s->in_use && s->dbid == MyDatabaseId && s->cfgoid == cfgoid &&
			s->relid == relid;
		if (mine)
			slot_info(s, standby, pending[i], values, nulls);
		LWLockRelease(bf_slot_lock(i));
		if (mine)
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
