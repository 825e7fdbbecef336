/*
 * bfi_build.c
 *		Building a guard index: ambuild (the table's keys into the first
 *		layer, and more layers if the table outgrows it) and ambuildempty
 *		(the init fork of an unlogged table's guard).
 *
 * A build sets its layers in memory, as page images, and writes them at the
 * end through the buffer manager, WAL-logged as whole pages
 * (log_newpage_range), as GiST's and SP-GiST's builds do.
 *
 * Without a capacity (WITH (capacity = ...)), the first layer is sized for
 * twice the rows the planner estimates the table holds, at least
 * BFI_MIN_CAPACITY: a guard grows by a layer when its table outgrows that,
 * and every layer is another page a check reads.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "index/bf_index.h"

#define BFI_MIN_CAPACITY	1000

typedef struct BuildState
{
	BfKeyType	kt;
	BfiMetaPageData meta;
	char	   *pages[BFI_MAX_LAYERS];	/* each layer's page images */
	uint64		added[BFI_MAX_LAYERS];	/* keys set in each layer */
	double		indtuples;
	MemoryContext cxt;			/* the build's: the layers */
	MemoryContext tmpcxt;		/* reset after every row */
} BuildState;

/* The options of an index, or the defaults. */
static void
index_options(Relation index, double *fpr, int *capacity)
{
	BfiOptions *opts = (BfiOptions *) index->rd_options;

	*fpr = opts ? opts->fpr : BFI_DEFAULT_FPR;
	*capacity = opts ? opts->capacity : 0;
}

/*
 * The first layer's capacity for a table of that many rows: the option,
 * else twice the rows, at least BFI_MIN_CAPACITY.
 */
uint64
bfi_first_capacity(Relation index, double tuples)
{
	double		fpr;
	int			capacity;

	index_options(index, &fpr, &capacity);
	if (capacity > 0)
		return (uint64) capacity;
	if (!(tuples > 0))
		return BFI_MIN_CAPACITY;
	return (uint64) Max(BFI_MIN_CAPACITY, Min(2.0 * tuples, (double) PG_INT64_MAX / 4));
}

/* The first layer's capacity of a build: for the rows the planner estimates. */
static uint64
first_capacity(Relation heap, Relation index)
{
	BlockNumber pages = 0;
	double		tuples = 0;
	double		allvisfrac;

	if (heap != NULL && heap->rd_tableam->relation_estimate_size != NULL)
		table_relation_estimate_size(heap, NULL, &pages, &tuples, &allvisfrac);
	return bfi_first_capacity(index, tuples);
}

static void
layer_too_large(Relation index, uint32 i)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("layer %u of bloomguard index \"%s\" would be too large",
					i, RelationGetRelationName(index)),
			 errhint("Choose a smaller capacity or a higher false-positive rate (WITH (capacity = ..., fpr = ...)).")));
}

/* Append a layer in memory: its pages, initialized. */
static void
build_add_layer(Relation index, BuildState *bs)
{
	uint32		i = bs->meta.nlayers;
	BlockNumber start;
	BfiLayer   *layer = &bs->meta.layers[i];
	Size		bytes;

	start = i == 0 ? BFI_METAPAGE_BLKNO + 1 :
		bs->meta.layers[i - 1].start + bs->meta.layers[i - 1].npages;
	if (!bfi_layer_size(&bs->meta, i, start, layer))
		layer_too_large(index, i);
	bytes = (Size) layer->npages * BLCKSZ;
	bs->pages[i] = MemoryContextAllocHuge(bs->cxt, bytes);
	for (uint32 p = 0; p < layer->npages; p++)
		bfi_data_page_init((Page) (bs->pages[i] + (Size) p * BLCKSZ));
	bs->added[i] = 0;
	bs->meta.nlayers++;
}

/* The page image of a layer that a hash maps to, and its block there. */
static Page
build_page(BuildState *bs, uint32 i, uint64 hash, uint8 **block)
{
	BfiLayer   *layer = &bs->meta.layers[i];
	uint32		b;
	BlockNumber blkno = bfi_layer_page(layer, hash, &b);
	Page		page = (Page) (bs->pages[i] + (Size) (blkno - layer->start) * BLCKSZ);

	*block = BfiPageGetBits(page) + (Size) b * BF_BLOCK_BYTES;
	return page;
}

/* Add a hashed key: nothing if a layer holds it, else to the last layer. */
static void
build_add_hash(Relation index, BuildState *bs, uint64 hash)
{
	uint32		last;
	uint8	   *block;
	Page		page;

	for (uint32 i = 0; i < bs->meta.nlayers; i++)
	{
		build_page(bs, i, hash, &block);
		if (bf_block_test(block, (int) bs->meta.layers[i].hashes, hash))
			return;
	}
	last = bs->meta.nlayers - 1;
	if (bs->added[last] >= bs->meta.layers[last].capacity &&
		bs->meta.nlayers < BFI_MAX_LAYERS)
	{
		build_add_layer(index, bs);
		last++;
	}
	page = build_page(bs, last, hash, &block);
	bf_block_add(block, (int) bs->meta.layers[last].hashes, hash);
	BfiPageGetOpaque(page)->added++;
	bs->added[last]++;
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *bs = (BuildState *) state;
	MemoryContext old;

	if (isnull[0])
		return;
	old = MemoryContextSwitchTo(bs->tmpcxt);
	build_add_hash(index, bs, bf_key_hash(&bs->kt, values[0], BF_LAYOUT_BLOCKED).lo);
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpcxt);
	bs->indtuples += 1;
}

/* Write a page image at the end of the main fork (at blkno). */
static void
write_page(Relation index, BlockNumber blkno, Page image)
{
	Buffer		buf = bfi_new_buffer(index, MAIN_FORKNUM);

	if (BufferGetBlockNumber(buf) != blkno)
		elog(ERROR, "index \"%s\" got block %u, expected %u",
			 RelationGetRelationName(index), BufferGetBlockNumber(buf), blkno);
	memcpy(BufferGetPage(buf), image, BLCKSZ);
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
}

/* Write the metapage and every layer's pages. */
static void
build_write(Relation index, BuildState *bs)
{
	PGAlignedBlock metabuf;
	BlockNumber blkno = BFI_METAPAGE_BLKNO;
	BfiMetaPageData *meta;

	bfi_meta_init((Page) metabuf.data, (int) bs->meta.key_kind,
				  bs->meta.capacity, bs->meta.fpr);
	meta = BfiPageGetMeta((Page) metabuf.data);
	meta->nlayers = bs->meta.nlayers;
	memcpy(meta->layers, bs->meta.layers, sizeof(meta->layers));
	write_page(index, blkno++, (Page) metabuf.data);
	for (uint32 i = 0; i < bs->meta.nlayers; i++)
	{
		for (uint32 p = 0; p < bs->meta.layers[i].npages; p++)
		{
			CHECK_FOR_INTERRUPTS();
			write_page(index, blkno++, (Page) (bs->pages[i] + (Size) p * BLCKSZ));
		}
		pfree(bs->pages[i]);
	}
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, blkno, true);
}

/*
 * A guard of a plain column answers for "WHERE column = key", compared under
 * the column's collation: that collation must be deterministic too, whatever
 * the index's own (a COLLATE in CREATE INDEX).
 */
static void
check_column_collation(Relation heap, Relation index)
{
	AttrNumber	attnum = index->rd_index->indkey.values[0];
	Form_pg_attribute att;

	if (attnum <= 0)
		return;
	att = TupleDescAttr(RelationGetDescr(heap), attnum - 1);
	if (OidIsValid(att->attcollation) &&
		!get_collation_isdeterministic(att->attcollation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of a bloomguard index has the nondeterministic collation \"%s\"",
						NameStr(att->attname), get_collation_name(att->attcollation)),
				 errdetail("Strings equal under a nondeterministic collation can differ in their bytes, so the guard could answer \"no\" for a key \"=\" finds."),
				 errhint("Guard an expression that normalizes the key, such as lower(column), instead.")));
}

IndexBuildResult *
bfi_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BuildState	bs;
	double		fpr;
	int			capacity;
	double		reltuples;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	if (indexInfo->ii_Predicate != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloomguard index \"%s\" cannot be partial",
						RelationGetRelationName(index)),
				 errdetail("A guard answers whether any row of its table holds a key."),
				 errhint("Guard an expression instead, or drop the WHERE clause.")));
	check_column_collation(heap, index);
	memset(&bs, 0, sizeof(bs));
	bfi_key_type(index, &bs.kt);
	index_options(index, &fpr, &capacity);
	bs.meta.key_kind = (uint32) bs.kt.kind;
	bs.meta.capacity = first_capacity(heap, index);
	bs.meta.fpr = fpr;
	bs.cxt = CurrentMemoryContext;
	build_add_layer(index, &bs);
	bs.tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
									  "bloomguard build row",
									  ALLOCSET_DEFAULT_SIZES);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, &bs, NULL);
	MemoryContextDelete(bs.tmpcxt);
	build_write(index, &bs);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * The init fork of an unlogged table's guard (also what its main fork is
 * reset to after a crash): the metapage and an empty first layer, each page
 * WAL-logged as init forks always are.
 */
void
bfi_buildempty(Relation index)
{
	BfiMetaPageData meta;
	double		fpr;
	int			capacity;
	BfKeyType	kt;
	Buffer		buf;

	bfi_key_type(index, &kt);
	index_options(index, &fpr, &capacity);
	memset(&meta, 0, sizeof(meta));
	meta.capacity = first_capacity(NULL, index);
	meta.fpr = fpr;
	if (!bfi_layer_size(&meta, 0, BFI_METAPAGE_BLKNO + 1, &meta.layers[0]))
		layer_too_large(index, 0);

	buf = bfi_new_buffer(index, INIT_FORKNUM);
	START_CRIT_SECTION();
	bfi_meta_init(BufferGetPage(buf), kt.kind, meta.capacity, fpr);
	BfiPageGetMeta(BufferGetPage(buf))->nlayers = 1;
	BfiPageGetMeta(BufferGetPage(buf))->layers[0] = meta.layers[0];
	MarkBufferDirty(buf);
	log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);

	for (uint32 p = 0; p < meta.layers[0].npages; p++)
	{
		buf = bfi_new_buffer(index, INIT_FORKNUM);
		START_CRIT_SECTION();
		bfi_data_page_init(BufferGetPage(buf));
		MarkBufferDirty(buf);
		log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
	}
}
