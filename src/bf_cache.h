/*
 * bf_cache.h
 *		Per-call-site state: the key argument's type, and the stored filter
 *		last read at this call site.
 *
 * A check inside a query runs once per row with the same filter.  Detoasting
 * a stored filter on every call would cost milliseconds per row for a large
 * one, so each call site (FmgrInfo) keeps a detoasted copy in fn_mcxt, keyed
 * by the identity of the TOAST pointer.  A TOAST value is never modified in
 * place: a changed filter gets a new pointer, so the cache never returns the
 * bits of another filter.  The copy's bit array is aligned to a cache line,
 * so a blocked check touches exactly one line.
 *
 * A single check of a large stored filter need not read all of it: the first
 * checks at a call site read the header and the one block (or the k bytes of
 * a classic filter) they need with pg_detoast_datum_slice.  Once the slices
 * read there would have cost as much as reading the whole value, the call
 * site switches to the cached full copy (a rent-or-buy rule: never more than
 * twice the cost of the better choice in hindsight).
 */
#ifndef BF_CACHE_H
#define BF_CACHE_H

#include "postgres.h"

#include "fmgr.h"

#include "bf_keys.h"
#include "bf_value.h"

typedef struct BfCallSite
{
	BfKeyType	key;			/* key argument's type (key.typid 0: unset) */

	/* the stored (TOASTed) value last seen here */
	bool		have_toast;
	struct varatt_external toast;	/* its identity */
	uint64		sliced_bytes;	/* bytes read from it by slicing so far */
	bool		have_header;	/* its header, read by slicing */
	BfHeader	header;
	bool		have_value;		/* its full copy, below */
	BfValue		value;
	void	   *buffer;			/* the allocation holding value.raw */

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
	BfCallSite *site;
	BfValue		own;			/* the opened value when not cached */
} BfProbe;

/*
 * The key type of argument key_argno, resolved on the first call: the type
 * and collation of an argument are fixed for a call site.
 */
#define bf_call_site_arg_key(fcinfo, site, key_argno, filter_argno) \
	((site)->key.typid != InvalidOid ? (const BfKeyType *) &(site)->key : \
	 bf_call_site_key((fcinfo), (site), \
					  get_fn_expr_argtype((fcinfo)->flinfo, (key_argno)), \
					  (filter_argno)))

/* The call site's state, created on first use. */
extern BfCallSite *bf_call_site(FunctionCallInfo fcinfo);

/*
 * The key type keytype at this call site, resolved once per call site and
 * type; filter_argno is the argument holding the filter (for messages).
 */
extern const BfKeyType *bf_call_site_key(FunctionCallInfo fcinfo,
										 BfCallSite *site, Oid keytype,
										 int filter_argno);

/*
 * Open the filter in argument argno for reading all of it, through the call
 * site's cache.  The result must not be modified.
 */
extern void bf_call_site_value(FunctionCallInfo fcinfo, BfCallSite *site,
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
