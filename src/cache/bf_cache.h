/*
 * bf_cache.h
 *		Per-call-site state (the key argument's type, the stored filters
 *		this call site reads), and the backend's cache of stored filters.
 *
 * A check inside a query runs once per row with the same filter, and a
 * query may check the same stored filter at many call sites.  Detoasting a
 * stored filter on every call would cost milliseconds per row for a large
 * one, and a copy per call site would multiply its memory, so a stored
 * (TOASTed) filter read whole goes into a backend-local cache (bf_cache.c)
 * shared by every call site: one copy per backend, however many call sites
 * and statements read it, bounded by bloomfilter.cache_size for the copies
 * no call site is using.  Each call site keeps references to the last few
 * stored filters it read (a join against a table of per-partition filters
 * switches between them without a new read); the current one is pinned, so
 * it is never freed while the call site can use it.  The copy's bit array
 * is aligned to a cache line, so a blocked check touches exactly one line.
 *
 * An entry is keyed by the TOAST pointer (toast relation, value id, sizes).
 * A value id identifies one value only while that value exists: once it is
 * vacuumed away, the id may be given to a new value.  So an entry answers
 * only under the snapshot that was active when it was read or last checked
 * (registered while the entry is live, so that no tuple that snapshot sees
 * is removed meanwhile); under another snapshot, and after the statement
 * (or transaction), when the entry is kept holding nothing back, it is
 * checked before its next use: its value's first TOAST chunk must still be
 * the very tuple it was (bf_toast_id.c).  See bf_cache.c.
 *
 * A single check of a large stored filter need not read all of it: the first
 * checks at a call site read the header and the one block (or the k bytes of
 * a classic filter) they need with pg_detoast_datum_slice.  Once the slices
 * read there would have cost as much as reading the whole value, the call
 * site reads it into the cache (a rent-or-buy rule: never more than twice
 * the cost of the better choice in hindsight).  A filter already in the
 * cache is never sliced.
 *
 * The public header of src/cache/: call sites (bf_site.c) and the cache
 * (bf_cache.c, bf_toast_id.c; bf_cache_int.h is what they share),
 * and the SQL functions that read their filters and keep their state
 * through call sites (bf_ops.c, bf_agg.c), above the value type
 * (value/bf_value.h); bf_prefetch.h is bf_ops.c's prefetching for the
 * BloomBatch node (src/plan/).
 */
#ifndef BF_CACHE_H
#define BF_CACHE_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/palloc.h"

#include "cache/bf_prefetch.h"
#include "value/bf_value.h"

struct BfCacheEntry;

/* A call site's reference to an entry of the backend cache. */
typedef struct BfSiteRef
{
	struct BfCacheEntry *entry;
	uint64		serial;			/* the entry's serial when referenced */
} BfSiteRef;

/* References a call site keeps (the current one first, pinned). */
#define BF_SITE_REFS	4

/* A stored value read by slicing at a call site. */
typedef struct BfSliceState
{
	struct varatt_external toast;	/* its identity */
	uint64		sliced_bytes;	/* cost of the slices read so far */
	bool		have_header;	/* its header, read by slicing */
	BfHeader	header;
} BfSliceState;

typedef struct BfCallSite
{
	BfKeyType	key;			/* key argument's type (key.typid 0: unset) */

	/* stored values read whole here, most recently used first */
	int			nrefs;
	bool		pinned;			/* refs[0] is pinned by this call site */
	BfSiteRef	refs[BF_SITE_REFS];
	bool		release_set;	/* release below is registered on fn_mcxt */
	MemoryContextCallback release;

	/* the stored values being read by slicing here, most recent first */
	int			nslices;
	BfSliceState slices[BF_SITE_REFS];

	/*
	 * The header of the last in-memory (not TOASTed) value seen here, as
	 * bytes and decoded: a value with the same header bytes and size needs no
	 * new validation.
	 */
	bool		have_inline;
	uint32		inline_size;
	uint8		inline_bytes[BF_HEADER_SIZE];
	BfHeader	inline_hdr;

	/* bloom_agg: the sizing arguments last found valid for a NULL key */
	bool		sizing_checked;
	int64		sizing_capacity;
	double		sizing_fpr;
	int			sizing_layout;

	/*
	 * bloom_agg: the batched state last created here (bf_agg.c); a row whose
	 * state is it takes the short path
	 */
	struct BfAggBatch *agg_batch;
	Datum		agg_batch_datum;	/* its read/write pointer */

	/* bloom_agg, bloom_union_agg: warning a filter is over capacity */
	bool		crowded_warned;	/* once per call site */
	uint64		crowded_nbits;	/* the filter crowded_at was found for */
	double		crowded_fpr;
	uint64		crowded_at;		/* keys past which its rate is over 2x target */
	uint64		crowded_next;	/* "added" at which to look again */
} BfCallSite;

/*
 * A filter opened for checks: the whole value (bits != NULL), or only the
 * header of a large stored value, whose bits are then read by slicing.
 */
typedef struct BfProbe
{
	const BfHeader *hdr;
	const uint8 *bits;			/* NULL: read what a check needs by slicing */
	struct varlena *stored;		/* the TOAST pointer, when slicing */
	BfSliceState *slice;		/* its slicing state, when slicing */
	BfValue		own;			/* the opened value when not cached */
} BfProbe;

/*
 * The key type of argument key_argno, resolved on the first call: the type
 * and collation of an argument are fixed for a call site.  Without a call
 * expression (Citus), the declared type of the argument is used.
 */
#define bf_call_site_arg_key(fcinfo, site, key_argno, filter_argno) \
	((site)->key.typid != InvalidOid ? (const BfKeyType *) &(site)->key : \
	 bf_call_site_key((fcinfo), (site), \
					  bf_key_arg_type((fcinfo), (key_argno)), \
					  (filter_argno)))

/* GUC bloomfilter.cache_size (MB) and the cache's callbacks (from _PG_init) */
extern int	bf_cache_size_mb;
extern void bf_cache_init(void);
extern void bf_cache_discard(void);

/* The call site's state, created on first use (bf_call_site_setup). */
extern BfCallSite *bf_call_site_setup(FunctionCallInfo fcinfo);

static inline BfCallSite *
bf_call_site(FunctionCallInfo fcinfo)
{
	BfCallSite *site = (BfCallSite *) fcinfo->flinfo->fn_extra;

	if (likely(site != NULL && site->release_set))
		return site;
	return bf_call_site_setup(fcinfo);
}

/*
 * The key type keytype at this call site, resolved once per call site and
 * type; filter_argno is the argument holding the filter (for messages).
 */
extern const BfKeyType *bf_call_site_key(FunctionCallInfo fcinfo,
										 BfCallSite *site, Oid keytype,
										 int filter_argno);

/*
 * Open the filter in argument argno for reading all of it, through the
 * backend cache.  The result must not be modified, and is valid until the
 * next call at this call site.
 */
extern void bf_call_site_value(FunctionCallInfo fcinfo, BfCallSite *site,
							   int argno, BfValue *v);

/*
 * As bf_call_site_value, without reading a stored value: false if the
 * argument is a stored value not in the cache.
 */
extern bool bf_call_site_peek(FunctionCallInfo fcinfo, BfCallSite *site,
							  int argno, BfValue *v);

/*
 * Open the filter in argument argno for up to nchecks checks: slicing while
 * that is the cheaper way, else as bf_call_site_value.
 */
extern void bf_call_site_probe(FunctionCallInfo fcinfo, BfCallSite *site,
							   int argno, int nchecks, BfProbe *p);

/* Check a hashed key against an opened filter. */
extern bool bf_probe_test(BfProbe *p, BfHash hash);

#endif							/* BF_CACHE_H */
