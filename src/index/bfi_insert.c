/*
 * bfi_insert.c
 *		aminsert: set an inserted row's key in the guard, and grow the guard
 *		by a layer when the last one is full.
 *
 * A key that some layer already holds changes nothing (no WAL); else its
 * bits go to the last layer, on the one page its block is on, in one
 * generic WAL record with that page's key count.  When that page already
 * holds its share of the layer's capacity, the layer is full (the keys
 * spread evenly over the pages, so the share of one page tells the fill of
 * all): a new layer is appended first, with the metapage locked
 * exclusively, and the key goes there.
 *
 * While VACUUM builds the guard again (bfi_rebuild.c), every key is also set
 * in the layer the rebuild fills, read from the metapage with the layers:
 * a row whose insert read the metapage before the rebuild began was in the
 * table before the rebuild read it.
 *
 * Under SERIALIZABLE, a check predicate-locks the page of the key's block in
 * the first layer (bfi_probe.c), which every check of that key reads; an
 * insert checks for a conflict on that page whether or not it sets a bit, as
 * an insert into a B-tree leaf does.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"

#include "index/bf_index.h"

typedef enum AddResult
{
	ADD_DONE,					/* set, or already there */
	ADD_FULL					/* the layer is full: grow first */
} AddResult;

/*
 * The key type of a guard: its operator class's, not the column's.  The
 * keys of a varchar column are hashed as text (text_bloomguard_ops), so an
 * ALTER COLUMN TYPE between the two, which keeps the index, keeps the rule
 * its keys were hashed by.
 */
void
bfi_key_type(Relation index, BfKeyType *kt)
{
	bf_key_type_init(kt, bfi_hash_type(index), index->rd_indcollation[0],
					 InvalidOid);
}

/* The type a guard's keys are hashed as: its operator class's input type. */
Oid
bfi_hash_type(Relation index)
{
	return index->rd_opcintype[0];
}

/*
 * The stamp of a change of a data page made now, under its exclusive lock:
 * the WAL insert position before the change's record (bfi_export.c says why
 * that tells a copy taken at position P whether it holds the change).  0
 * where no WAL is written: such a guard's copies are always sent whole.
 */
static uint64
change_stamp(Relation index)
{
	return RelationNeedsWAL(index) ? (uint64) GetXLogInsertRecPtr() : 0;
}

/* Set a key in a layer, unless the layer is full (and may grow). */
static AddResult
add_to_layer(Relation index, const BfiLayer *layer, uint64 hash,
			 bool may_grow)
{
	uint32		b;
	BlockNumber blkno = bfi_layer_page(layer, hash, &b);
	Buffer		buf;
	Page		page;
	GenericXLogState *state;
	bool		is_new;

	buf = ReadBuffer(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	bfi_page_check(index, blkno, page, BFI_PAGE_DATA);
	is_new = PageIsNew(page);
	if (!is_new)
	{
		if (bf_block_test(BfiPageGetBits(page) + (Size) b * BF_BLOCK_BYTES,
						   (int) layer->hashes, hash))
		{
			UnlockReleaseBuffer(buf);
			return ADD_DONE;
		}
		if (may_grow && BfiPageGetOpaque(page)->added >= layer->share)
		{
			UnlockReleaseBuffer(buf);
			return ADD_FULL;
		}
	}
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buf,
									 is_new ? GENERIC_XLOG_FULL_IMAGE : 0);
	if (is_new)
		bfi_data_page_init(page);
	bf_block_add(BfiPageGetBits(page) + (Size) b * BF_BLOCK_BYTES,
				  (int) layer->hashes, hash);
	BfiPageGetStamps(page)[b / BFI_UNIT_BLOCKS] = change_stamp(index);
	BfiPageGetOpaque(page)->added++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	return ADD_DONE;
}

/*
 * Append a layer, unless another backend did since the caller read nlayers
 * layers.  False if no layer can be appended (the last layer then takes
 * every key).
 */
static bool
grow(Relation index, uint32 nlayers)
{
	Buffer		buf;
	Page		page;
	BfiMetaPageData *meta;
	BfiLayer	layer;
	const BfiLayer *last;
	GenericXLogState *state;
	bool		grown = true;

	buf = ReadBuffer(index, BFI_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	bfi_page_check(index, BFI_METAPAGE_BLKNO, page, BFI_PAGE_META);
	meta = BfiPageGetMeta(page);
	/* (not while a rebuild's layer lies where the new one would go) */
	if (meta->nlayers == nlayers && meta->next.npages == 0)
	{
		last = &meta->layers[nlayers - 1];
		if (nlayers < BFI_MAX_LAYERS &&
			bfi_layer_size(meta, nlayers, last->start + last->npages, &layer))
		{
			bfi_extend_to(index, layer.start + layer.npages);
			state = GenericXLogStart(index);
			meta = BfiPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
			meta->layers[nlayers] = layer;
			meta->nlayers++;
			GenericXLogFinish(state);
		}
		else
			grown = false;
	}
	UnlockReleaseBuffer(buf);
	return grown;
}

/* Set a key in the layer a rebuild fills (it does not grow). */
void
bfi_rebuild_add(Relation index, const BfiLayer *next, uint64 hash)
{
	add_to_layer(index, next, hash, false);
}

/* Add a hashed key to a guard. */
static void
insert_hash(Relation index, uint64 hash)
{
	BfiMetaPageData meta;
	bool		may_grow = true;
	bool		conflict_checked = false;

	for (;;)
	{
		if (!conflict_checked)
		{
			/*
			 * Under the metapage's lock, as a check takes its predicate
			 * lock: a rebuild's switch cannot come between them.
			 */
			Buffer		buf = bfi_meta_read_locked(index, &meta);
			uint32		b;

			CheckForSerializableConflictIn(index, NULL,
										   bfi_layer_page(&meta.layers[0], hash, &b));
			UnlockReleaseBuffer(buf);
			conflict_checked = true;
		}
		else
			bfi_meta_read(index, &meta);
		/*
		 * A rebuild under way: the layer it fills gets every key too, and
		 * the old layers do not grow (a new one would be placed where the
		 * rebuild's layer is).
		 */
		if (meta.next.npages > 0)
		{
			bfi_rebuild_add(index, &meta.next, hash);
			may_grow = false;
		}
		for (uint32 i = 0; i + 1 < meta.nlayers; i++)
			if (bfi_page_test(index, &meta.layers[i], hash))
				return;
		if (add_to_layer(index, &meta.layers[meta.nlayers - 1], hash,
						 may_grow) == ADD_DONE)
			return;
		if (!grow(index, meta.nlayers))
			may_grow = false;
		CHECK_FOR_INTERRUPTS();
	}
}

bool
bfi_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
		   Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
		   IndexInfo *indexInfo)
{
	BfKeyType  *kt = (BfKeyType *) indexInfo->ii_AmCache;

	if (isnull[0])
		return false;
	if (kt == NULL)
	{
		kt = MemoryContextAlloc(indexInfo->ii_Context, sizeof(BfKeyType));
		bfi_key_type(index, kt);
		indexInfo->ii_AmCache = kt;
	}
	insert_hash(index, bf_key_hash(kt, values[0], BF_LAYOUT_BLOCKED).lo);
	return false;
}
