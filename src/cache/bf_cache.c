/*
 * bf_cache.c
 *		The backend cache of stored filters read whole: its entries, their
 *		lifetime and validity, its memory (bloomfilter.cache_size), its
 *		views.  Call sites (bf_site.c) find and pin entries; bf_toast_id.c
 *		tells whether a kept entry is still the value a pointer is to.
 *
 * The cache
 * ---------
 * An entry holds the whole of one stored (TOASTed, on-disk) filter, read
 * once, its bit array aligned to a cache line, in a memory context of its
 * own.  Entries are found by their TOAST pointer (struct varatt_external:
 * toast relation, value id, raw and external sizes) in a hash table.  Call
 * sites reference entries (BfSiteRef: the entry and its serial number, which
 * changes whenever the slot is reused, so a stale reference is recognized
 * without reading freed memory: entry slots are never freed, only reused).
 * A call site pins the entry it uses now; a pinned entry is never freed, so
 * the bits a running function reads cannot vanish under it, even when the
 * entry is invalidated meanwhile (it is then marked dead, out of the hash
 * table, and freed when the last pin goes).  Entries no call site pins are
 * kept, least recently used first out, within bloomfilter.cache_size.
 *
 * Why the key is safe
 * -------------------
 * A TOAST value id is unique within its toast relation only while the value
 * exists: after the row is deleted and VACUUM (or pruning) removes the
 * value's chunks, the same id may be given to a new value (the OID counter
 * wraps around).  An entry found by the id of a value that no longer exists
 * would answer for another filter: false negatives.  So an entry must never
 * outlive the value it copied, and a pointer must never be answered from
 * the entry of another value.  A call site reads a pointer from a row
 * visible to a snapshot the backend holds (the rule that makes detoasting
 * safe at all): so the value pointed to exists while that snapshot is held.
 * When an entry is read, or checked again, it registers a copy of the
 * active snapshot S and notes whether the value's chunk 0 is visible to S.
 * If it is, the transaction that will delete the value is not visible to
 * S, so it is not older than S's xmin, and VACUUM and pruning, which remove
 * only tuples deleted by transactions older than every registered
 * snapshot's xmin, leave the value's chunks while S is registered: no other
 * value can get the id meanwhile, so any pointer with that id, read under
 * any snapshot while the entry is live, is to the very value copied (the
 * entry is "covered", and answers without a check).  If it is not (the
 * pointer was read under an older snapshot, to which the value is still
 * visible, and a statement under a newer one checks it: a VOLATILE
 * function's), S does not keep the value: the entry answers only for the
 * call that checked it and is checked again (below) before each later
 * use.  The registration is released when the entry stops being live:
 * under READ COMMITTED at the end
 * of the portal that used it (the statement, or the cursor; for a procedure
 * or DO block, when it ends or commits), under REPEATABLE READ and
 * SERIALIZABLE at the end of the transaction (whose snapshot holds the xmin
 * anyway).  So the cache never holds back VACUUM longer than the statement
 * or transaction using it: an idle session holds nothing.
 *
 * Besides that, entries are dropped when nothing guarantees that reasoning:
 *	- at the end of the transaction, those a call site still pins (the others
 *	  are kept, see below);
 *	- when a subtransaction aborts, those read in it (it may have inserted
 *	  the value, whose chunks are then dead at once, whatever the xmin);
 *	- when the toast relation's relcache entry is invalidated (TRUNCATE,
 *	  VACUUM FULL, CLUSTER or DROP give it new storage or remove it
 *	  without regard to snapshots);
 *	- under old_snapshot_threshold (which lets VACUUM remove tuples that
 *	  snapshots still see), as soon as no call site pins them.
 *
 * Kept entries
 * ------------
 * Then the entry is not dropped but kept (ENTRY_KEPT): still in the hash
 * table, holding back nothing, and checked before a later statement or
 * transaction uses it (as a live entry that is not covered is before each
 * use).  When the value is read, the entry records its
 * chunk 0's tuple (found through the toast index): its place (TID), raw
 * xmin, whether that is frozen, and the toast relation's relfilenode; and
 * the xids then in play (the next xid, this backend's xmin).  A kept entry
 * becomes live again only if chunk 0 of the value now pointed to is that
 * same tuple (bf_chunk_same() in bf_toast_id.c: one index probe, a few
 * microseconds), else it is dropped and the value read again.  Entries a call site still pins at
 * the end of a transaction are dropped, as are those read in an aborted
 * subtransaction; kept entries count against bloomfilter.cache_size.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "funcapi.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "tcop/pquery.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "cache/bf_cache_int.h"
#include "value/bf_value.h"

/*
 * A stored value is read whole in slices of this size (an interrupt is
 * served between two), each chunk copied by the table AM straight into the
 * cache's buffer: no second full-size copy (a detoasted value and its
 * aligned copy would take twice the memory of a 1 GB filter), and no slice
 * buffer either.
 */
#define LOAD_SLICE_BYTES		(4 * 1024 * 1024)

#define CACHE_LINE				64

/* GUC bloomfilter.cache_size, MB */
int			bf_cache_size_mb = 8;

typedef struct BfCacheKey
{
	struct varatt_external toast;
} BfCacheKey;

typedef struct BfCacheHashEntry
{
	BfCacheKey	key;
	BfCacheEntry *entry;
} BfCacheHashEntry;

/* An entry's end with its portal (READ COMMITTED). */
typedef struct BfPortalScope
{
	MemoryContextCallback cb;
	BfCacheEntry *entry;
	uint64		serial;
	Portal		portal;
} BfPortalScope;

static MemoryContext cache_cxt = NULL;
static HTAB *cache_hash = NULL;
static dlist_head live_lru = DLIST_STATIC_INIT(live_lru);	/* most recent first */
static dlist_head dead_slots = DLIST_STATIC_INIT(dead_slots);
static dlist_head free_slots = DLIST_STATIC_INIT(free_slots);
static Size cache_bytes = 0;	/* memory of all copies, live and dead */
static uint64 cache_reads = 0;	/* stored values read whole */
static uint64 cache_shared_hits = 0;	/* found in the cache by a call site */

PG_FUNCTION_INFO_V1(bloom_cache_stats);
PG_FUNCTION_INFO_V1(bloom_cache_entries);

static Size
cache_limit(void)
{
	return (Size) bf_cache_size_mb * 1024 * 1024;
}

static void
cache_setup(void)
{
	HASHCTL		ctl;

	if (cache_hash != NULL)
		return;
	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext,
										  "bloomfilter cache",
										  ALLOCSET_SMALL_SIZES);
	ctl.keysize = sizeof(BfCacheKey);
	ctl.entrysize = sizeof(BfCacheHashEntry);
	ctl.hcxt = cache_cxt;
	cache_hash = hash_create("bloomfilter cache", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* Let go of a live entry's snapshot. */
static void
entry_release_snapshot(BfCacheEntry *e)
{
	if (e->snap != NULL)
	{
		UnregisterSnapshotFromOwner(e->snap, TopTransactionResourceOwner);
		e->snap = NULL;
	}
}

/* Free an entry's copy, if it still has one. */
static void
entry_free_copy(BfCacheEntry *e)
{
	if (e->cxt == NULL)
		return;
	MemoryContextDelete(e->cxt);
	cache_bytes -= e->bytes;
	e->cxt = NULL;
}

/* Free an entry's copy and its slot (no call site pins it). */
static void
entry_free(BfCacheEntry *e)
{
	Assert(e->pins == 0 && e->state != ENTRY_FREE);
	Assert(e->snap == NULL);
	entry_free_copy(e);
	dlist_delete(&e->node);
	e->state = ENTRY_FREE;
	e->serial++;
	dlist_push_head(&free_slots, &e->node);
}

/*
 * Invalidate a live entry: no lookup finds it any more, and it stops
 * holding back the xmin.  Freed now if no call site pins it, else when the
 * last one lets go.
 */
static void
entry_kill(BfCacheEntry *e)
{
	BfCacheKey	key;

	if (e->state != ENTRY_LIVE && e->state != ENTRY_KEPT)
		return;
	key.toast = e->toast;
	hash_search(cache_hash, &key, HASH_REMOVE, NULL);
	entry_release_snapshot(e);
	e->covered = false;
	dlist_delete(&e->node);
	e->state = ENTRY_DEAD;
	dlist_push_head(&dead_slots, &e->node);
	if (e->pins == 0)
		entry_free(e);
}

/*
 * A live entry no statement needs any more: kept, to be checked before its
 * next use (no longer holding back the xmin), or invalidated if it cannot be
 * checked.
 */
static void
entry_demote(BfCacheEntry *e)
{
	if (e->state != ENTRY_LIVE)
		return;
	if (!e->keepable || e->transient)
	{
		entry_kill(e);
		return;
	}
	entry_release_snapshot(e);
	e->covered = false;
	e->state = ENTRY_KEPT;
}

/* Evict unpinned entries, least recently used first, to fit `extra` more. */
static void
cache_shrink(Size extra)
{
	dlist_node *n;

	if (cache_hash == NULL)
		return;
	n = live_lru.head.prev;
	while (n != &live_lru.head && cache_bytes + extra > cache_limit())
	{
		dlist_node *prev = n->prev;
		BfCacheEntry *e = dlist_container(BfCacheEntry, node, n);

		if (e->pins == 0)
			entry_kill(e);
		n = prev;
	}
}

/*
 * bloomfilter.cache_size's assign hook: kept entries past the new size go
 * at once (only kept ones: they hold no snapshot, so this is safe outside
 * a transaction too; the others follow at their next use or release).
 */
static void
cache_size_assign(int newval, void *extra)
{
	Size		limit = (Size) newval * 1024 * 1024;
	dlist_node *n;

	if (cache_hash == NULL)
		return;
	n = live_lru.head.prev;
	while (n != &live_lru.head && cache_bytes > limit)
	{
		dlist_node *prev = n->prev;
		BfCacheEntry *e = dlist_container(BfCacheEntry, node, n);

		if (e->pins == 0 && e->state == ENTRY_KEPT)
			entry_kill(e);
		n = prev;
	}
}

/* Kill every live entry matching (toastrelid; InvalidOid: all). */
static void
cache_kill_all(Oid toastrelid, SubTransactionId min_subid)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &live_lru)
	{
		BfCacheEntry *e = dlist_container(BfCacheEntry, node, it.cur);

		if ((toastrelid == InvalidOid || e->toast.va_toastrelid == toastrelid) &&
			e->subid >= min_subid)
			entry_kill(e);
	}
}

static void
cache_xact_callback(XactEvent event, void *arg)
{
	dlist_mutable_iter it;

	if (cache_hash == NULL)
		return;

	/*
	 * The xmin holds go first (before the resource owner is released).  No
	 * query runs past this point: entries no call site pins are kept for
	 * later transactions (checked before their next use, whether this one
	 * commits or aborts); the copies still pinned by call sites in
	 * long-lived memory go (they find the slot dead), so that the cache
	 * stays within its size between transactions.
	 */
	dlist_foreach_modify(it, &live_lru)
	{
		BfCacheEntry *e = dlist_container(BfCacheEntry, node, it.cur);

		if (e->pins > 0)
			entry_kill(e);
		else
		{
			entry_demote(e);
			if (e->state == ENTRY_KEPT)
				e->subid = InvalidSubTransactionId;
		}
	}
	dlist_foreach_modify(it, &dead_slots)
	{
		BfCacheEntry *e = dlist_container(BfCacheEntry, node, it.cur);

		entry_free_copy(e);
	}
}

static void
cache_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && cache_hash != NULL)
		cache_kill_all(InvalidOid, mySubid);
}

static void
cache_relcache_callback(Datum arg, Oid relid)
{
	if (cache_hash != NULL)
		cache_kill_all(relid, InvalidSubTransactionId);
}

/* The end of the portal that read or checked an entry (READ COMMITTED). */
static void
portal_scope_end(void *arg)
{
	BfPortalScope *scope = (BfPortalScope *) arg;
	BfCacheEntry *e = scope->entry;

	if (e->serial != scope->serial)
		return;
	if (e->scope_portal == scope->portal)
		e->scope_portal = NULL;
	entry_demote(e);
}

/*
 * DISCARD ALL: forget every stored filter read (an entry still pinned goes
 * when its call site lets go).
 */
void
bf_cache_discard(void)
{
	if (cache_hash != NULL)
		cache_kill_all(InvalidOid, InvalidSubTransactionId);
}

void
bf_cache_init(void)
{
	DefineCustomIntVariable("bloomfilter.cache_size",
							"Memory for stored filters kept between uses in each backend.",
							"A stored filter read whole is kept in a backend-local cache and shared by every call site; filters no running query uses are evicted, least recently used first, past this size.  Each backend has its own: the memory multiplies by connections.",
							&bf_cache_size_mb,
							8, 0, 1024 * 1024,
							PGC_USERSET, GUC_UNIT_MB,
							NULL, cache_size_assign, NULL);
	RegisterXactCallback(cache_xact_callback, NULL);
	RegisterSubXactCallback(cache_subxact_callback, NULL);
	CacheRegisterRelcacheCallback(cache_relcache_callback, (Datum) 0);
}

/*
 * A copy of the active snapshot, registered on the transaction's resource
 * owner, or NULL if there is none to hold: it keeps the horizon of VACUUM
 * and pruning at most at its xmin while the entry it guards is live (see
 * "Why the key is safe" above).  A copy, not the active snapshot itself:
 * the active one may be changed in place (its command id), which a
 * registered snapshot must never be.
 */
static Snapshot
hold_snapshot(void)
{
	Snapshot	snap;

	if (!ActiveSnapshotSet() || TopTransactionResourceOwner == NULL)
		return NULL;
#if PG_VERSION_NUM < 170000
	/* VACUUM may remove tuples that snapshots still see */
	if (old_snapshot_threshold >= 0)
		return NULL;
#endif
	PushCopiedSnapshot(GetActiveSnapshot());
	snap = RegisterSnapshotOnOwner(GetActiveSnapshot(), TopTransactionResourceOwner);
	PopActiveSnapshot();
	return snap;
}

/*
 * Make an entry live, holding a copy of the active snapshot: under READ
 * COMMITTED until the end of the current portal at the latest (then the
 * entry is kept), else until the end of the transaction.  visible: the
 * value's chunk 0 is visible to that snapshot, which then keeps the value
 * (the entry is covered).  An entry that cannot hold a snapshot is
 * transient.  A portal gets one callback per entry, however often the
 * entry is checked again in it.
 */
static void
entry_hold(BfCacheEntry *e, bool visible)
{
	Assert(e->snap == NULL);
	e->snap = hold_snapshot();
	if (e->snap == NULL)
	{
		e->transient = true;
		return;
	}
	e->covered = visible;
	if (IsolationUsesXactSnapshot() || ActivePortal == NULL ||
		ActivePortal->portalContext == NULL || e->scope_portal == ActivePortal)
		return;					/* until the end of the transaction */
	{
		BfPortalScope *scope;

		scope = MemoryContextAlloc(ActivePortal->portalContext,
								   sizeof(BfPortalScope));
		scope->entry = e;
		scope->serial = e->serial;
		scope->portal = ActivePortal;
		scope->cb.func = portal_scope_end;
		scope->cb.arg = scope;
		MemoryContextRegisterResetCallback(ActivePortal->portalContext,
										   &scope->cb);
		e->scope_portal = ActivePortal;
	}
}

/*
 * Read a stored value whole into a new memory context (a child of the
 * current one until complete, so an error frees it), its bit array aligned
 * to a cache line.
 */
static MemoryContext
read_stored(struct varlena *ptr, const struct varatt_external *toast,
			BfValue *v, Size *bytes)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	struct varlena *raw;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomfilter cache entry",
								ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);
	if (VARATT_EXTERNAL_IS_COMPRESSED(*toast))
	{
		/* not the default storage: decompressed as it comes */
		raw = detoast_attr(ptr);
		*bytes = VARSIZE(raw);
	}
	else
	{
		Size		size = (Size) toast->va_rawsize;
		Size		datalen = size - VARHDRSZ;
		Size		done = 0;
		Relation	toastrel;

		if (size < VARHDRSZ + BF_HEADER_SIZE ||
			datalen > BF_HEADER_SIZE + BF_MAX_PAYLOAD_BYTES ||
			VARATT_EXTERNAL_GET_EXTSIZE(*toast) != datalen)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("bloomfilter value is corrupted"),
					 errdetail("A stored value of %zu bytes is not the size of a bloomfilter value.",
							   size)));
		raw = bf_value_buffer(cxt, size, bytes);
		SET_VARSIZE(raw, size);
		toastrel = table_open(toast->va_toastrelid, AccessShareLock);
		while (done < datalen)
		{
			int32		len = (int32) Min((Size) LOAD_SLICE_BYTES, datalen - done);

			CHECK_FOR_INTERRUPTS();

			/*
			 * The table AM copies the chunks' bytes to VARDATA(result) on,
			 * counted from the slice's offset: given result this far into the
			 * buffer, they land in place (the "header" it is given is data
			 * read before, which it does not touch).  It checks each chunk's
			 * number and size, as a detoast does.
			 */
			table_relation_fetch_toast_slice(toastrel, toast->va_valueid,
											 (int32) datalen, (int32) done, len,
											 (struct varlena *) ((char *) raw + done));
			done += len;
		}
		table_close(toastrel, AccessShareLock);
	}
	MemoryContextSwitchTo(oldcxt);
	bf_value_open(raw, v);
	return cxt;
}

/* The live entry of a stored value, or NULL. */
BfCacheEntry *
bf_cache_lookup(const struct varatt_external *toast)
{
	BfCacheKey	key;
	BfCacheHashEntry *h;
	BfCacheEntry *e;

	if (cache_hash == NULL)
		return NULL;
	key.toast = *toast;
	h = hash_search(cache_hash, &key, HASH_FIND, NULL);
	if (h == NULL)
		return NULL;
	e = h->entry;
	Assert(e->state == ENTRY_LIVE || e->state == ENTRY_KEPT);

	/*
	 * Live, but its snapshot does not keep its value (see "Why the key is
	 * safe"): checked again before each use, as a kept entry is.
	 */
	if (e->state == ENTRY_LIVE && !bf_cache_entry_answers(e))
	{
		entry_demote(e);
		if (e->state != ENTRY_KEPT)
			return NULL;
	}
	if (e->state == ENTRY_KEPT)
	{
		uint64		serial = e->serial;
		bool		same;
		bool		visible;

		/* a smaller bloomfilter.cache_size applies to kept entries too */
		cache_shrink(0);
		if (e->serial != serial || e->state != ENTRY_KEPT)
			return NULL;
		same = bf_chunk_same(toast, &e->chunk, &visible);
		/* opening the toast relation may have invalidated the entry */
		if (e->serial != serial || e->state != ENTRY_KEPT)
			return NULL;
		if (!same)
		{
			entry_kill(e);
			return NULL;
		}
		e->state = ENTRY_LIVE;
		entry_hold(e, visible);
	}
	cache_shared_hits++;
	/* most recently used first */
	dlist_move_head(&live_lru, &e->node);
	return e;
}

/* Read a stored value into a new entry of the cache. */
BfCacheEntry *
bf_cache_load(struct varlena *ptr, const struct varatt_external *toast)
{
	BfValue		v;
	Size		bytes;
	MemoryContext cxt;
	BfCacheEntry *e;
	BfCacheKey	key;
	BfCacheHashEntry *h;
	bool		found;
	bool		keepable;
	BfChunkId	chunk;

	cache_setup();
	/* make room first: the unpinned copies go before the new one comes */
	cache_shrink((Size) toast->va_rawsize + CACHE_LINE);

	/* get a slot and a hash entry before reading: no failure after it */
	if (dlist_is_empty(&free_slots))
	{
		e = MemoryContextAllocZero(cache_cxt, sizeof(BfCacheEntry));
		e->state = ENTRY_FREE;
		dlist_push_head(&free_slots, &e->node);
	}
	key.toast = *toast;
	(void) hash_search(cache_hash, &key, HASH_ENTER, &found);
	Assert(!found);
	hash_search(cache_hash, &key, HASH_REMOVE, NULL);	/* room is made */

	cxt = read_stored(ptr, toast, &v, &bytes);
	cache_reads++;
	keepable = bf_chunk_identify(toast, &chunk);

	/* nothing below fails (the hash table had room for this key) */
	e = dlist_container(BfCacheEntry, node, dlist_pop_head_node(&free_slots));
	e->state = ENTRY_LIVE;
	e->toast = *toast;
	e->pins = 0;
	MemoryContextSetParent(cxt, cache_cxt);
	e->cxt = cxt;
	e->value = v;
	e->bytes = bytes;
	e->subid = GetCurrentSubTransactionId();
	e->snap = NULL;
	e->scope_portal = NULL;
	e->transient = false;
	e->covered = false;
	e->keepable = keepable;
	e->chunk = chunk;
	cache_bytes += bytes;
	h = hash_search(cache_hash, &key, HASH_ENTER, &found);
	h->entry = e;
	dlist_push_head(&live_lru, &e->node);
	entry_hold(e, keepable && chunk.visible);
	return e;
}

/* A call site uses an entry again: most recently used first. */
void
bf_cache_touch(BfCacheEntry *e)
{
	dlist_move_head(&live_lru, &e->node);
}

void
bf_cache_pin(BfCacheEntry *e)
{
	e->pins++;
}

void
bf_cache_unpin(BfCacheEntry *e)
{
	Assert(e->pins > 0);
	if (--e->pins > 0)
		return;
	if (e->state == ENTRY_DEAD)
		entry_free(e);
	else if (e->state == ENTRY_LIVE || e->state == ENTRY_KEPT)
	{
		if (e->transient)
			entry_kill(e);
		else
			cache_shrink(0);
	}
}

/*
 * bloom_cache_stats(): entries, bytes, pinned entries now; stored values
 * read whole and found in the cache since the backend started.
 */
Datum
bloom_cache_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	int64		entries = 0;
	int64		pinned = 0;
	dlist_iter	it;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	dlist_foreach(it, &live_lru)
	{
		BfCacheEntry *e = dlist_container(BfCacheEntry, node, it.cur);

		entries++;
		if (e->pins > 0)
			pinned++;
	}
	values[0] = Int64GetDatum(entries);
	values[1] = Int64GetDatum((int64) cache_bytes);
	values[2] = Int64GetDatum(pinned);
	values[3] = Int64GetDatum((int64) cache_reads);
	values[4] = Int64GetDatum((int64) cache_shared_hits);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * bloom_cache_entries(): one row per stored filter in this backend's cache:
 * its toast relation and value id, the bytes of its copy, whether a call
 * site uses it now, and whether it is kept (checked again before its next
 * use).
 */
Datum
bloom_cache_entries(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	dlist_iter	it;

	InitMaterializedSRF(fcinfo, 0);
	dlist_foreach(it, &live_lru)
	{
		BfCacheEntry *e = dlist_container(BfCacheEntry, node, it.cur);
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = ObjectIdGetDatum(e->toast.va_toastrelid);
		values[1] = ObjectIdGetDatum(e->toast.va_valueid);
		values[2] = Int64GetDatum((int64) e->bytes);
		values[3] = BoolGetDatum(e->pins > 0);
		values[4] = BoolGetDatum(e->state == ENTRY_KEPT);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
