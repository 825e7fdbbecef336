/*
 * bfi_probe.c
 *		Checks: does a guard hold a key?  And its state, read page by page
 *		(bloom_guard_info, the filter's export).
 *
 * A check reads the metapage, then in every layer the one page of the key's
 * block, each under a share lock.  Every row visible to the caller's
 * snapshot had its key set before its transaction committed, so before the
 * snapshot was taken and before this metapage was read: its layer is among
 * those read, and a "no" is exact for that snapshot.  On a standby the same
 * holds: a row's bits are replayed before its commit record.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "index/bf_index.h"

/* Does a layer hold a hashed key (its page share-locked meanwhile)? */
bool
bfi_page_test(Relation index, const BfiLayer *layer, uint64 hash)
{
	uint32		b;
	BlockNumber blkno = bfi_layer_page(layer, hash, &b);
	Buffer		buf;
	Page		page;
	bool		found;

	buf = ReadBuffer(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	bfi_page_check(index, blkno, page, BFI_PAGE_DATA);
	found = !PageIsNew(page) &&
		bf_block_test(BfiPageGetBits(page) + (Size) b * BF_BLOCK_BYTES,
					   (int) layer->hashes, hash);
	UnlockReleaseBuffer(buf);
	return found;
}

/* Does a guard whose metapage reads meta hold the key of this hash? */
static bool
probe_layers(Relation index, const BfiMetaPageData *meta, uint64 hash)
{
	for (uint32 i = 0; i < meta->nlayers; i++)
		if (bfi_page_test(index, &meta->layers[i], hash))
			return true;
	return false;
}

/*
 * Read the metapage and, under SERIALIZABLE, predicate-lock the first
 * layer's page of each hash (bfi_insert.c checks it for conflicts), under
 * the metapage's lock: a rebuild's switch, which moves the guard's predicate
 * locks to the table, cannot come between the read and the locks.
 */
static void
read_meta(Relation index, BfiMetaPageData *meta, const BfHash *hashes, int n)
{
	Buffer		buf = bfi_meta_read_locked(index, meta);
	Snapshot	snapshot = ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot();
	uint32		b;

	for (int i = 0; i < n; i++)
		PredicateLockPage(index, bfi_layer_page(&meta->layers[0], hashes[i].lo, &b),
						  snapshot);
	UnlockReleaseBuffer(buf);
}

/* Does the guard hold the key of this hash ("maybe")? */
bool
bfi_probe(Relation index, uint64 hash)
{
	BfiMetaPageData meta;
	BfHash		h = {.lo = hash};

	read_meta(index, &meta, &h, 1);
	return probe_layers(index, &meta, hash);
}

/*
 * Does the guard hold a key of this kind, given as the hashes of its forms
 * (bf_key_probe_hashes)?  A guard of another key kind answers "maybe" (it
 * cannot answer for such keys).  The caller counts its checks as scans of
 * the index (pgstat_count_index_scan).
 */
bool
bfi_probe_key(Relation index, int kind, const BfHash *hashes, int n)
{
	BfiMetaPageData meta;

	read_meta(index, &meta, hashes, n);
	if ((int) meta.key_kind != kind)
		return true;
	for (int i = 0; i < n; i++)
		if (probe_layers(index, &meta, hashes[i].lo))
			return true;
	return false;
}

/* Keys and set bits of a layer, its pages read one by one. */
static void
summarize_layer(Relation index, const BfiLayer *layer, uint64 *added,
				uint64 *set_bits, uint8 *bits)
{
	for (uint32 p = 0; p < layer->npages; p++)
	{
		BlockNumber blkno = layer->start + p;
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;
		Size		len = BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		bfi_page_check(index, blkno, page, BFI_PAGE_DATA);
		if (!PageIsNew(page))
		{
			*added += BfiPageGetOpaque(page)->added;
			*set_bits += pg_popcount((const char *) BfiPageGetBits(page), len);
			if (bits)
				memcpy(bits + (Size) p * len, BfiPageGetBits(page), len);
		}
		else if (bits)
			memset(bits + (Size) p * len, 0, len);
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The state of the layers of sum->meta (a metapage the caller read): per
 * layer the keys set and the bits set; with bits, also the layers' bits, one
 * after the other.  Layers appended since are not read.
 */
void
bfi_summarize(Relation index, BfiSummary *sum, uint8 *bits)
{
	for (uint32 i = 0; i < sum->meta.nlayers; i++)
	{
		const BfiLayer *layer = &sum->meta.layers[i];

		sum->added[i] = 0;
		sum->set_bits[i] = 0;
		summarize_layer(index, layer, &sum->added[i], &sum->set_bits[i], bits);
		if (bits)
			bits += (Size) layer->npages * BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES;
	}
}
