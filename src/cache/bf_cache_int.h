/*
 * bf_cache_int.h
 *		What the files of cache/ share among themselves (not a public API:
 *		other folders include cache/bf_cache.h): the entries of the
 *		stored-filter cache (bf_cache.c), the identity of a stored value's
 *		TOAST chunks (bf_toast_id.c), for the call sites (bf_site.c).
 */
#ifndef BF_CACHE_INT_H
#define BF_CACHE_INT_H

#include "postgres.h"

#include "access/transam.h"
#include "lib/ilist.h"
#include "storage/itemptr.h"
#include "utils/portal.h"
#include "utils/snapmgr.h"

#include "cache/bf_cache.h"

typedef enum BfEntryState
{
	ENTRY_FREE,					/* in free_slots */
	ENTRY_LIVE,					/* in the hash table and live_lru */
	ENTRY_KEPT,					/* likewise, but to be checked before use */
	ENTRY_DEAD					/* invalidated, still pinned: in dead_slots */
} BfEntryState;

/*
 * What identifies the stored value an entry copied, beyond its TOAST
 * pointer: where its chunk 0 was and who inserted it (see bf_chunk_same()).
 */
typedef struct BfChunkId
{
	Oid			relfilenode;	/* the toast relation's storage */
	ItemPointerData tid;		/* chunk 0's tuple */
	TransactionId xmin;			/* its raw xmin */
	bool		frozen;			/* frozen when the value was read */
	FullTransactionId fxmin;	/* xmin as a full xid (if not frozen) */
	FullTransactionId horizon;	/* oldest xid then possibly running */
	bool		visible;		/* visible to the active snapshot when read */
} BfChunkId;

typedef struct BfCacheEntry
{
	uint64		serial;			/* changes whenever the slot is freed */
	BfEntryState state;
	struct varatt_external toast;	/* the stored value (the hash key) */
	int			pins;			/* call sites using it now */
	MemoryContext cxt;			/* holds the copy; NULL once freed */
	BfValue		value;			/* the copy, opened */
	Size		bytes;			/* its allocation */
	Snapshot	snap;			/* a copy of the snapshot active when it was
								 * read or checked, registered while live */
	Portal		scope_portal;	/* under READ COMMITTED: it ends with this portal */
	SubTransactionId subid;		/* the subtransaction that read it */
	bool		transient;		/* free it as soon as no call site pins it */
	bool		covered;		/* its chunk 0 is visible to snap: snap alone
								 * keeps the value while registered */
	bool		keepable;		/* chunk is valid: may become ENTRY_KEPT */
	BfChunkId	chunk;
	dlist_node	node;			/* in live_lru, dead_slots or free_slots */
} BfCacheEntry;

/* The active snapshot, or NULL. */
static inline Snapshot
current_snapshot(void)
{
	return ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;
}

/*
 * Whether a live entry may answer for its value without a check: its
 * registered snapshot keeps the value (see "Why the key is safe",
 * bf_cache.c), or it is transient (used only while pinned).
 */
static inline bool
bf_cache_entry_answers(const BfCacheEntry *e)
{
	return e->state == ENTRY_LIVE && (e->covered || e->transient);
}

/* bf_cache.c: the entries */
extern BfCacheEntry *bf_cache_lookup(const struct varatt_external *toast);
extern BfCacheEntry *bf_cache_load(struct varlena *ptr,
								   const struct varatt_external *toast);
extern void bf_cache_touch(BfCacheEntry *e);
extern void bf_cache_pin(BfCacheEntry *e);
extern void bf_cache_unpin(BfCacheEntry *e);

/* bf_toast_id.c: which value a TOAST pointer is to */
extern bool bf_chunk_identify(const struct varatt_external *toast, BfChunkId *id);
extern bool bf_chunk_same(const struct varatt_external *toast, const BfChunkId *was,
						  bool *visible);

#endif							/* BF_CACHE_INT_H */
