/*
 * bfi_rebuild.c
 *		A guard built again by VACUUM: the keys of deleted rows forgotten.
 *
 * A Bloom filter cannot remove a key, so the keys of deleted rows stay set:
 * checks of them answer "maybe", and a table whose rows come and go grows
 * its guard by layer after layer.  When VACUUM's cleanup finds the guard
 * holding at least REBUILD_RATIO times as many keys as the table has rows
 * (and REBUILD_MIN_KEYS), it builds the guard again from the table, while
 * writers go on:
 *
 *  1. a new first layer ("next") is sized for the rows and appended to the
 *     index, and the metapage names it, WAL-logged;
 *  2. from then on every insert also sets its key there (bfi_insert.c),
 *     having read the metapage under its lock;
 *  3. the table is read with SnapshotAny, every row version still in it
 *     but the dead ones (live, recently dead, being inserted or deleted, as
 *     an index build takes them), and each key set in
 *     an image of the layer in memory; the images are then ORed into the
 *     layer's pages, each WAL-logged whole;
 *  4. the metapage makes the new layer the guard's only layer (base: its
 *     first page), WAL-logged, and the predicate locks on the guard's pages
 *     become one on the table (as a REINDEX's do): a SERIALIZABLE check
 *     that locked a page of the old layers still conflicts with an insert.
 *
 * While a rebuild is under way the old layers do not grow (a new layer
 * would be placed where the rebuild's is): keys go to the last one even
 * when it is full, until the switch.
 *
 * Why no key is lost: a row inserted before step 1 had its heap tuple in
 * the table before the scan of step 3 began, and SnapshotAny sees it; a row
 * whose insert read the metapage after step 1 set its key in the new layer
 * itself.  A check reads the old layers until step 4 and the new one after;
 * a check whose snapshot sees a row's commit read the metapage after that
 * commit, and so after the key was set where the metapage then pointed.
 * On a standby, the records replay in that order.  Should VACUUM fail
 * between steps 1 and 4, the new layer stays named and filled by inserts
 * (bits of real keys only), the old layers cannot grow meanwhile, and the
 * next VACUUM rebuilds whatever the guard's fill, with a new layer sized
 * for the rows then.  A check takes its predicate lock, and an insert checks
 * for conflicts, under the metapage's share lock, which the switch waits
 * for.
 *
 * The old layers' pages are not reused: a check (also on a standby, where
 * nothing holds back the replay of a page's new contents) may still read
 * them after step 4, having read the metapage before.  They stay in the
 * file, never read again, until a REINDEX writes a new file; each rebuild
 * appends a layer sized for the live rows.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "index/bf_index.h"
#include "value/bf_value.h"

/* Rebuild when the guard holds this many times the table's rows... */
#define REBUILD_RATIO		2.0
/* ...and at least this many keys. */
#define REBUILD_MIN_KEYS	10000
/* The least capacity of the rebuilt layer. */
#define BFI_REBUILD_MIN_CAPACITY	1000
/* Log when the file is this many times what the rebuilt guard needs. */
#define WASTE_RATIO			8

/* The new layer's image in memory, and the keys set on each page. */
typedef struct RebuildImage
{
	BfiLayer	layer;
	uint8	   *bits;			/* npages * BFI_BLOCKS_PER_PAGE blocks */
	uint32	   *added;			/* per page */
	uint64		keys;			/* row versions read */
} RebuildImage;

/*
 * Step 1: name a new first layer for that capacity in the metapage, false if
 * none can be sized.  One a failed rebuild named is replaced (sized for
 * rows since gone or come): its pages are left, as the old layers' are.
 */
static bool
begin_rebuild(Relation index, uint64 capacity, BfiLayer *next)
{
	Buffer		buf;
	GenericXLogState *state;
	BfiMetaPageData *m;
	BfiMetaPageData sized;
	bool		sized_ok;

	/* under the metapage's lock, as a growth appends its layer */
	buf = ReadBuffer(index, BFI_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	bfi_page_check(index, BFI_METAPAGE_BLKNO, BufferGetPage(buf), BFI_PAGE_META);
	m = BfiPageGetMeta(BufferGetPage(buf));
	sized = *m;
	sized.capacity = capacity;
	sized_ok = bfi_layer_size(&sized, 0, RelationGetNumberOfBlocks(index), next);
	if (sized_ok)
	{
		bfi_extend_to(index, next->start + next->npages);
		state = GenericXLogStart(index);
		m = BfiPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
		m->next = *next;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(buf);
	return sized_ok;
}

/*
 * Is the row version dead to every transaction (an aborted insert, a delete
 * older than every snapshot)?  Its key is not needed, and an index
 * expression must not be evaluated on it (it may fail: the insert that
 * failed on it did), as an index build skips it.  Heap tables only; a row
 * of another table access method is kept.
 */
static bool
row_is_dead(TupleTableSlot *slot, TransactionId oldest_xmin)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) slot;
	HTSV_Result r;

	if (!TTS_IS_BUFFERTUPLE(slot) || !BufferIsValid(bslot->buffer))
		return false;
	LockBuffer(bslot->buffer, BUFFER_LOCK_SHARE);
	r = HeapTupleSatisfiesVacuum(bslot->base.tuple, oldest_xmin, bslot->buffer);
	LockBuffer(bslot->buffer, BUFFER_LOCK_UNLOCK);
	return r == HEAPTUPLE_DEAD;
}

/* Step 3: every live row version's key into the image. */
static void
scan_table(Relation heap, Relation index, RebuildImage *img)
{
	IndexInfo  *indexInfo = BuildIndexInfo(index);
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	TableScanDesc scan = table_beginscan(heap, SnapshotAny, 0, NULL);
	BfKeyType	kt;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	TransactionId oldest_xmin = GetOldestNonRemovableTransactionId(heap);

	bfi_key_type(index, &kt);
	econtext->ecxt_scantuple = slot;
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		uint64		hash;
		uint32		b;
		BlockNumber page;

		bf_vacuum_delay_point();
		if (row_is_dead(slot, oldest_xmin))
			continue;
		ResetPerTupleExprContext(estate);
		FormIndexDatum(indexInfo, slot, estate, values, isnull);
		if (isnull[0])
			continue;
		hash = bf_key_hash(&kt, values[0], BF_LAYOUT_BLOCKED).lo;
		page = bfi_layer_page(&img->layer, hash, &b) - img->layer.start;
		bf_block_add(img->bits + ((Size) page * BFI_BLOCKS_PER_PAGE + b) * BF_BLOCK_BYTES,
					 (int) img->layer.hashes, hash);
		img->added[page]++;
		img->keys++;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
}

/* The image ORed into the layer's pages (which inserts set bits on too). */
static void
write_image(Relation index, const RebuildImage *img, BufferAccessStrategy strategy)
{
	for (uint32 i = 0; i < img->layer.npages; i++)
	{
		BlockNumber blkno = img->layer.start + i;
		const uint64 *from = (const uint64 *)
			(img->bits + (Size) i * BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES);
		Buffer		buf;
		Page		page;
		GenericXLogState *state;
		uint64	   *to;

		bf_vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		bfi_page_check(index, blkno, BufferGetPage(buf), BFI_PAGE_DATA);
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
		if (PageIsNew(page))
			bfi_data_page_init(page);
		to = (uint64 *) BfiPageGetBits(page);
		for (Size w = 0; w < BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES / sizeof(uint64); w++)
			to[w] |= from[w];
		/* the keys inserts set meanwhile are among the scan's too */
		BfiPageGetOpaque(page)->added = Max(BfiPageGetOpaque(page)->added,
											img->added[i]);
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buf);
	}
}

/* Step 4: the new layer becomes the guard's only one. */
static void
switch_layers(Relation index, const BfiLayer *next)
{
	Buffer		buf;
	GenericXLogState *state;
	BfiMetaPageData *m;

	buf = ReadBuffer(index, BFI_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	bfi_page_check(index, BFI_METAPAGE_BLKNO, BufferGetPage(buf), BFI_PAGE_META);
	state = GenericXLogStart(index);
	m = BfiPageGetMeta(GenericXLogRegisterBuffer(state, buf, 0));
	if (memcmp(&m->next, next, sizeof(BfiLayer)) != 0)
		elog(ERROR, "the rebuild's layer of index \"%s\" changed under it",
			 RelationGetRelationName(index));
	m->capacity = next->capacity;
	m->nlayers = 1;
	memset(m->layers, 0, sizeof(m->layers));
	m->layers[0] = *next;
	m->base = next->start;
	memset(&m->next, 0, sizeof(BfiLayer));
	GenericXLogFinish(state);

	/*
	 * Before an insert can read the new metapage (it waits for the buffer
	 * lock): checks that locked a page of the old layers conflict with it.
	 */
	TransferPredicateLocksToHeapRelation(index);
	UnlockReleaseBuffer(buf);
}

/*
 * From amvacuumcleanup: build the guard again if it holds (added keys) at
 * least REBUILD_RATIO times the table's rows, as VACUUM counted them; the
 * keys it holds then.
 */
uint64
bfi_rebuild_if_needed(IndexVacuumInfo *info, uint64 added)
{
	Relation	index = info->index;
	double		rows = info->num_heap_tuples;
	RebuildImage img;
	Relation	heap;
	Size		bytes;
	BfiMetaPageData meta;

	if (info->analyze_only || index->rd_rel->relkind != RELKIND_INDEX)
		return added;
	/* a rebuild a failed VACUUM began goes on (the guard cannot grow meanwhile) */
	bfi_meta_read(index, &meta);
	if (meta.next.npages == 0 &&
		(added < REBUILD_MIN_KEYS || (double) added < REBUILD_RATIO * rows))
		return added;
	/*
	 * For twice the rows, at the guard's rate as built: the options, which
	 * ALTER INDEX may have changed since, take effect at a REINDEX.
	 */
	if (!begin_rebuild(index, (uint64) Max(BFI_REBUILD_MIN_CAPACITY,
										   Min(2.0 * rows, (double) PG_INT64_MAX / 4)),
					   &img.layer))
		return added;

	bytes = (Size) img.layer.npages * BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES;
	img.bits = palloc_extended(bytes, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	img.added = palloc0(sizeof(uint32) * img.layer.npages);
	img.keys = 0;
	/* VACUUM holds the table's ShareUpdateExclusiveLock */
	heap = table_open(index->rd_index->indrelid, NoLock);
	scan_table(heap, index, &img);
	table_close(heap, NoLock);
	write_image(index, &img, info->strategy);
	switch_layers(index, &img.layer);
	ereport(LOG,
			(errmsg("guard index \"%s\" rebuilt: %llu keys set before, %llu row versions now, %u pages",
					RelationGetRelationName(index), (unsigned long long) added,
					(unsigned long long) img.keys, img.layer.npages)));
	/* the pages earlier layers leave: say when they dominate the file */
	if (RelationGetNumberOfBlocks(index) > WASTE_RATIO * (img.layer.npages + 1))
		ereport(LOG,
				(errmsg("guard index \"%s\" uses %u of its %u pages",
						RelationGetRelationName(index), img.layer.npages + 1,
						RelationGetNumberOfBlocks(index)),
				 errdetail("Each rebuild by VACUUM appends the guard's new layer; the old layers' pages are not reused."),
				 errhint("REINDEX INDEX CONCURRENTLY writes the guard into a file of its own size.")));
	pfree(img.bits);
	pfree(img.added);
	return img.keys;
}
