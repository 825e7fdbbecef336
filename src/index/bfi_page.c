/*
 * bfi_page.c
 *		The guard index's pages: the metapage, the data pages, and the
 *		geometry of a layer.
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "core/bf_core.h"
#include "index/bf_index.h"

/* Initialize the metapage of an empty guard: no layer yet. */
void
bfi_meta_init(Page page, int key_kind, uint64 capacity, double fpr)
{
	BfiMetaPageData *meta;
	BfiPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(BfiPageOpaqueData));
	opaque = BfiPageGetOpaque(page);
	opaque->page_kind = BFI_PAGE_META;
	opaque->page_id = BFI_PAGE_ID;
	meta = BfiPageGetMeta(page);
	memset(meta, 0, sizeof(BfiMetaPageData));
	meta->magic = BFI_MAGIC;
	meta->version = BFI_FORMAT_VERSION;
	meta->key_kind = (uint32) key_kind;
	meta->capacity = capacity;
	meta->fpr = fpr;
	/* the metadata lies below pd_lower, so that WAL keeps it */
	((PageHeader) page)->pd_lower = BFI_DATA_OFFSET + sizeof(BfiMetaPageData);
}

/* Initialize a data page: no key set. */
void
bfi_data_page_init(Page page)
{
	BfiPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(BfiPageOpaqueData));
	opaque = BfiPageGetOpaque(page);
	opaque->page_kind = BFI_PAGE_DATA;
	opaque->page_id = BFI_PAGE_ID;
	opaque->added = 0;
	memset(BfiPageGetBits(page), 0, BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES +
		   BFI_UNITS_PER_PAGE * sizeof(uint64));
	((PageHeader) page)->pd_lower = BFI_DATA_OFFSET + BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES +
		BFI_UNITS_PER_PAGE * sizeof(uint64);
}

/* The largest layer: 1 GB (a build holds its layers in memory). */
#define BFI_MAX_LAYER_BITS	(UINT64_C(1) << 33)

/*
 * The geometry of layer i of a guard, its pages from start: capacity c * 2^i
 * at the layer's share of the rate (with the headroom scalable filters keep),
 * rounded up to whole pages.  False if it does not fit (too many bits or
 * pages).
 */
bool
bfi_layer_size(const BfiMetaPageData *meta, uint32 i, BlockNumber start,
			   BfiLayer *out)
{
	uint64		capacity;
	double		fpr;
	BfSize		size;
	uint64		nblocks;
	uint64		npages;

	if (i >= BFI_MAX_LAYERS ||
		!bf_scalable_layer_capacity(meta->capacity, BFI_GROWTH, i, &capacity))
		return false;
	fpr = bf_scalable_layer_fpr(meta->fpr, BFI_RATIO, i);
	if (!bf_size_for(BF_LAYOUT_BLOCKED, capacity, BF_SCALABLE_HEADROOM * fpr,
					 BFI_MAX_LAYER_BITS, &size))
		return false;
	nblocks = size.nbits / BF_BLOCK_BITS;
	npages = (nblocks + BFI_BLOCKS_PER_PAGE - 1) / BFI_BLOCKS_PER_PAGE;
	if (npages >= (uint64) (MaxBlockNumber - start))
		return false;
	out->start = start;
	out->npages = (uint32) npages;
	out->hashes = (uint32) size.hashes;
	out->capacity = capacity;
	out->share = (uint32) Max(1, (capacity + npages - 1) / npages);
	out->fpr = fpr;
	return true;
}

/*
 * Check that a page read from a guard is what its place says it is (a page
 * that was never written is new: all zero).
 */
void
bfi_page_check(Relation index, BlockNumber blkno, Page page, uint16 kind)
{
	BfiPageOpaque opaque;

	if (PageIsNew(page) && kind == BFI_PAGE_DATA)
		return;
	opaque = BfiPageGetOpaque(page);
	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(BfiPageOpaqueData)) ||
		opaque->page_id != BFI_PAGE_ID || opaque->page_kind != kind)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains an unexpected page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
}

static void
meta_corrupted(Relation index, const char *what, uint32 i)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("bloomguard index \"%s\" has a corrupted metapage: %s (layer %u)",
					RelationGetRelationName(index), what, i),
			 errhint("Please REINDEX it.")));
}

/*
 * Check a layer of a metapage: its geometry is a function of the guard's
 * rate and capacity and of where the layer before it ends.
 */
static void
layer_check(Relation index, const BfiMetaPageData *m, uint32 i)
{
	BfiLayer	expect;
	const BfiLayer *layer = &m->layers[i];
	BlockNumber start = i > 0 ? m->layers[i - 1].start + m->layers[i - 1].npages :
		m->base > 0 ? m->base : BFI_METAPAGE_BLKNO + 1;

	if (!bfi_layer_size(m, i, start, &expect))
		meta_corrupted(index, "a layer of no possible size", i);
	if (layer->start != expect.start || layer->npages != expect.npages ||
		layer->hashes != expect.hashes || layer->share != expect.share ||
		layer->capacity != expect.capacity ||
		memcmp(&layer->fpr, &expect.fpr, sizeof(double)) != 0)
		meta_corrupted(index, "a layer's geometry disagrees with its rate and capacity", i);
}

/* The layer a rebuild fills: a first layer of its own capacity. */
static void
next_check(Relation index, const BfiMetaPageData *m)
{
	BfiMetaPageData as_first = *m;
	BfiLayer	expect;

	as_first.capacity = m->next.capacity;
	if (!bfi_layer_size(&as_first, 0, m->next.start, &expect) ||
		m->next.start <= BFI_METAPAGE_BLKNO ||
		m->next.npages != expect.npages || m->next.hashes != expect.hashes ||
		m->next.share != expect.share ||
		memcmp(&m->next.fpr, &expect.fpr, sizeof(double)) != 0)
		meta_corrupted(index, "the rebuild's layer disagrees with its rate and capacity", 0);
}

/*
 * Check the fields of a metapage.  Layers already checked (those of the
 * copy in rd_amcache, unchanged) are not sized again: only layers a growth
 * appended since.
 */
static void
meta_check(Relation index, const BfiMetaPageData *m)
{
	BfiMetaPageData *cached = (BfiMetaPageData *) index->rd_amcache;
	uint32		first = 0;

	if (m->magic != BFI_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a bloomguard index",
						RelationGetRelationName(index))));
	if (m->version != BFI_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("bloomguard index \"%s\" has format version %u, this library reads version %d",
						RelationGetRelationName(index), m->version,
						BFI_FORMAT_VERSION),
				 errhint("REINDEX it, or install the version of the extension that wrote it.")));
	if (m->nlayers < 1 || m->nlayers > BFI_MAX_LAYERS)
		meta_corrupted(index, "a layer count out of range", m->nlayers);
	if (cached != NULL && cached->nlayers <= m->nlayers &&
		cached->base == m->base &&
		memcmp(cached, m, offsetof(BfiMetaPageData, layers) +
			   cached->nlayers * sizeof(BfiLayer)) == 0)
		first = cached->nlayers;
	else if (m->key_kind < 1 || m->key_kind > BF_KEY_KIND_MAX ||
			 m->capacity < 1 || !(m->fpr > 0.0 && m->fpr <= 0.5))
		meta_corrupted(index, "a key kind, capacity or rate out of range", 0);
	for (uint32 i = first; i < m->nlayers; i++)
		layer_check(index, m, i);
	if (m->next.npages > 0 &&
		(cached == NULL || memcmp(&cached->next, &m->next, sizeof(BfiLayer)) != 0))
		next_check(index, m);
	if (first < m->nlayers || cached == NULL ||
		memcmp(&cached->next, &m->next, sizeof(BfiLayer)) != 0)
	{
		if (cached == NULL)
			index->rd_amcache = cached =
				MemoryContextAlloc(index->rd_indexcxt, sizeof(BfiMetaPageData));
		memcpy(cached, m, sizeof(BfiMetaPageData));
	}
}

/*
 * Read a guard's metapage into *meta (checked), and return its buffer still
 * share-locked: what the caller does before releasing it cannot be
 * separated from the read by a change of the layers (bfi_rebuild.c).
 */
Buffer
bfi_meta_read_locked(Relation index, BfiMetaPageData *meta)
{
	Buffer		buf;
	Page		page;

	buf = ReadBuffer(index, BFI_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	bfi_page_check(index, BFI_METAPAGE_BLKNO, page, BFI_PAGE_META);
	memcpy(meta, BfiPageGetMeta(page), sizeof(BfiMetaPageData));
	meta_check(index, meta);
	return buf;
}

/* Read a guard's metapage into *meta (checked). */
void
bfi_meta_read(Relation index, BfiMetaPageData *meta)
{
	UnlockReleaseBuffer(bfi_meta_read_locked(index, meta));
}
