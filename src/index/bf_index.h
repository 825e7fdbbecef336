/*
 * bf_index.h
 *		The guard access method "bloomguard": an index that is a Bloom filter
 *		of its column, maintained by PostgreSQL's index machinery.
 *
 * The index never returns tuples (no amgettuple, no amgetbitmap): the
 * planner never scans it.  What reads it are the checks of this folder
 * (bfi_probe.c), called by the SQL functions (bfi_sql.c) and the planner's
 * gates.
 *
 * Layout on disk (BFI_FORMAT_VERSION 3; see doc/design.md, "Guard indexes"):
 *
 *	block 0		the metapage: format version, key kind, the guard's target
 *				rate and first capacity, and the layers (BfiMetaPageData)
 *	blocks 1..	data pages, layer after layer: each holds
 *				BFI_BLOCKS_PER_PAGE 64-byte filter blocks from offset
 *				BFI_DATA_OFFSET, then a change stamp per unit of
 *				BFI_UNIT_BLOCKS blocks (the WAL insert position read before
 *				the unit's last change, for bfi_export.c), and in its
 *				special space the keys set on it
 *
 * A layer is a blocked Bloom filter (core/bf_layout.h) of npages *
 * BFI_BLOCKS_PER_PAGE blocks: a key's block is bf_blocked_block(hash,
 * nblocks), so its k bits are on one page.  The layers are those of a
 * scalable filter (core/bf_scalable.h) of the guard's rate: layer i has
 * capacity c * 2^i and target rate bf_scalable_layer_fpr(P, 0.5, i).  Keys
 * go to the last layer; a check tests every layer.  A layer is full when the
 * page a key goes to holds its share of the layer's capacity; then a new
 * layer is appended (bfi_insert.c).  Layers are only ever appended, and the
 * pages of a new layer are all zero until a key is set on them: a page that
 * is new (all zero) holds no key.
 *
 * A VACUUM that finds the guard holding at least twice as many keys as the
 * table has rows (deleted rows' keys) builds it again (bfi_rebuild.c): a
 * new first layer ("next") is appended, every insert sets its keys there
 * too, the table is read into it, and the metapage then makes it the only
 * layer (base: its first page).
 *
 * Every change is WAL-logged as generic WAL (access/generic_xlog.h), which
 * needs nothing loaded for redo.
 */
#ifndef BF_INDEX_H
#define BF_INDEX_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "common/relpath.h"
#include "fmgr.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "utils/relcache.h"

#include "core/bf_core.h"
#include "value/bf_value.h"

/* The access method's name, as the install script creates it. */
#define BFI_AM_NAME			"bloomguard"

#define BFI_MAGIC			0x47464C42	/* "BLFG", little-endian */
#define BFI_FORMAT_VERSION	3

#define BFI_METAPAGE_BLKNO	0
#define BFI_MAX_LAYERS		BF_MAX_LAYERS
#define BFI_GROWTH			2
#define BFI_RATIO			0.5

/* page kinds, in the special space's page_kind */
#define BFI_PAGE_META		1
#define BFI_PAGE_DATA		2
#define BFI_PAGE_ID			0xFB42	/* identifies this AM's pages */

/* The special space of every page. */
typedef struct BfiPageOpaqueData
{
	uint32		added;			/* data page: keys set on it */
	uint16		page_kind;		/* BFI_PAGE_META or BFI_PAGE_DATA */
	uint16		page_id;		/* BFI_PAGE_ID */
} BfiPageOpaqueData;

typedef BfiPageOpaqueData *BfiPageOpaque;

#define BfiPageGetOpaque(page) ((BfiPageOpaque) PageGetSpecialPointer(page))

/*
 * Filter blocks on a data page, from a 64-byte boundary, then the change
 * stamps (one uint64 per unit of BFI_UNIT_BLOCKS blocks), then the special
 * space.  A unit is what bloom_guard_changes sends for a change (256 bytes).
 */
#define BFI_DATA_OFFSET		64
#define BFI_UNIT_BLOCKS		4
#define BFI_PAGE_ROOM \
	(BLCKSZ - BFI_DATA_OFFSET - MAXALIGN(sizeof(BfiPageOpaqueData)))
#define BFI_BLOCKS_PER_PAGE \
	((BFI_PAGE_ROOM * BFI_UNIT_BLOCKS) / (BFI_UNIT_BLOCKS * BF_BLOCK_BYTES + sizeof(uint64)))
#define BFI_UNITS_PER_PAGE \
	((BFI_BLOCKS_PER_PAGE + BFI_UNIT_BLOCKS - 1) / BFI_UNIT_BLOCKS)
#define BfiPageGetBits(page)	((uint8 *) (page) + BFI_DATA_OFFSET)
#define BfiPageGetStamps(page) \
	((uint64 *) (BfiPageGetBits(page) + BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES))

StaticAssertDecl(BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES + BFI_UNITS_PER_PAGE * sizeof(uint64) <=
				 BFI_PAGE_ROOM, "the blocks and stamps of a data page do not fit");

/* One layer, as the metapage describes it. */
typedef struct BfiLayer
{
	BlockNumber start;			/* its first data page */
	uint32		npages;			/* its data pages */
	uint32		hashes;			/* k */
	uint32		share;			/* keys on a page that make the layer full */
	uint64		capacity;		/* c * 2^i */
	double		fpr;			/* its target rate, bf_scalable_layer_fpr */
} BfiLayer;

/* The metapage's contents, from BFI_DATA_OFFSET. */
typedef struct BfiMetaPageData
{
	uint32		magic;			/* BFI_MAGIC */
	uint32		version;		/* BFI_FORMAT_VERSION */
	uint32		key_kind;		/* BfKeyKind of the indexed column */
	uint32		nlayers;		/* 1 .. BFI_MAX_LAYERS */
	uint64		capacity;		/* the first layer's capacity, c */
	double		fpr;			/* the guard's target rate, P */
	BfiLayer	layers[BFI_MAX_LAYERS];
	BlockNumber base;			/* where layer 0 starts; 0: block 1 */
	BfiLayer	next;			/* npages > 0: the layer a rebuild at VACUUM
								 * fills, which every insert also sets */
} BfiMetaPageData;

#define BfiPageGetMeta(page) \
	((BfiMetaPageData *) ((char *) (page) + BFI_DATA_OFFSET))

StaticAssertDecl(BFI_DATA_OFFSET + sizeof(BfiMetaPageData) +
				 MAXALIGN(sizeof(BfiPageOpaqueData)) <= BLCKSZ,
				 "the metapage does not fit in a page");

/* The index's options (WITH (...)), from amoptions. */
typedef struct BfiOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	double		fpr;			/* target false-positive rate */
	int			capacity;		/* keys the first layer is sized for; 0: from
								 * the table */
} BfiOptions;

#define BFI_DEFAULT_FPR		0.01

/* bfi_handler.c */
extern void bfi_init(void);
extern bool bfi_is_guard(Relation index);
struct PlannerInfo;
struct IndexPath;
extern void bfi_costestimate(struct PlannerInfo *root, struct IndexPath *path,
							 double loop_count, Cost *indexStartupCost,
							 Cost *indexTotalCost, Selectivity *indexSelectivity,
							 double *indexCorrelation, double *indexPages);

/* bfi_page.c: the metapage and the layers */
extern void bfi_meta_init(Page page, int key_kind, uint64 capacity, double fpr);
extern void bfi_data_page_init(Page page);
extern bool bfi_layer_size(const BfiMetaPageData *meta, uint32 i,
						   BlockNumber start, BfiLayer *out);
extern void bfi_meta_read(Relation index, BfiMetaPageData *meta);
extern Buffer bfi_meta_read_locked(Relation index, BfiMetaPageData *meta);
extern void bfi_page_check(Relation index, BlockNumber blkno, Page page,
						   uint16 kind);

/* The data page and the block on it that a hash maps to in a layer. */
static inline BlockNumber
bfi_layer_page(const BfiLayer *layer, uint64 hash, uint32 *block)
{
	uint64		nblocks = (uint64) layer->npages * BFI_BLOCKS_PER_PAGE;
	uint64		b = bf_blocked_block(hash, nblocks);

	*block = (uint32) (b % BFI_BLOCKS_PER_PAGE);
	return layer->start + (BlockNumber) (b / BFI_BLOCKS_PER_PAGE);
}

/* bfi_extend.c: new pages */
extern Buffer bfi_new_buffer(Relation index, ForkNumber fork);
extern void bfi_extend_to(Relation index, BlockNumber nblocks);

/* bfi_build.c */
extern IndexBuildResult *bfi_build(Relation heap, Relation index,
								   struct IndexInfo *indexInfo);
extern void bfi_buildempty(Relation index);
extern uint64 bfi_first_capacity(Relation index, double tuples);

/* bfi_rebuild.c: a guard built again by VACUUM, forgetting deleted keys */
extern uint64 bfi_rebuild_if_needed(IndexVacuumInfo *info, uint64 added);

/* bfi_insert.c */
extern bool bfi_insert(Relation index, Datum *values, bool *isnull,
					   ItemPointer ht_ctid, Relation heapRel,
					   IndexUniqueCheck checkUnique, bool indexUnchanged,
					   struct IndexInfo *indexInfo);
extern void bfi_key_type(Relation index, BfKeyType *kt);
extern Oid	bfi_hash_type(Relation index);
extern void bfi_rebuild_add(Relation index, const BfiLayer *next, uint64 hash);

/* bfi_vacuum.c */
extern IndexBulkDeleteResult *bfi_bulkdelete(IndexVacuumInfo *info,
											 IndexBulkDeleteResult *stats,
											 IndexBulkDeleteCallback callback,
											 void *callback_state);
extern IndexBulkDeleteResult *bfi_vacuumcleanup(IndexVacuumInfo *info,
												IndexBulkDeleteResult *stats);

/* bfi_probe.c: checks */
extern bool bfi_page_test(Relation index, const BfiLayer *layer, uint64 hash);
extern bool bfi_probe(Relation index, uint64 hash);
extern bool bfi_probe_key(Relation index, int kind, const BfHash *hashes, int n);

/* The state of a guard, for bloom_guard_info and the filter's export. */
typedef struct BfiSummary
{
	BfiMetaPageData meta;
	uint64		added[BFI_MAX_LAYERS];	/* keys set per layer */
	uint64		set_bits[BFI_MAX_LAYERS];	/* bits set per layer */
} BfiSummary;

extern void bfi_summarize(Relation index, BfiSummary *sum, uint8 *bits);

/* bfi_export.c: the filter as a bloomfilter value, whole or its changes */
extern struct varlena *bfi_export_value(Relation index);
extern void bfi_export_changes(FunctionCallInfo fcinfo, Relation index,
							   const char *since);

/* bfi_sql.c: may the current user check the guard (SELECT on its column)? */
extern bool bfi_may_check(Relation index);
/* and a check of the key in argument 1 of a call */
extern bool bfi_guard_contains(FunctionCallInfo fcinfo, Oid indexoid,
							   bool text_arg, bool check_access);
extern Datum bloom_guard_filter(PG_FUNCTION_ARGS);

#endif							/* BF_INDEX_H */
