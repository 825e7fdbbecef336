/*
 * bf_cache.h
 *		Per-call-site state: the key argument's type, and the last stored
 *		filter detoasted at this call site.
 *
 * A check inside a query runs once per row with the same filter.  Detoasting
 * a stored filter on every call would cost milliseconds per row for a large
 * one, so each call site (FmgrInfo) keeps the detoasted copy in fn_mcxt,
 * keyed by the identity of the TOAST pointer.  A TOAST value is never
 * modified in place: a changed filter gets a new pointer, so the cache never
 * returns the bits of another filter.
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
	bool		have_value;		/* value below is valid */
	struct varatt_external toast;	/* identity of the cached value */
	BfValue		value;			/* the detoasted copy, in fn_mcxt */
} BfCallSite;

/* The call site's state, created on first use. */
extern BfCallSite *bf_call_site(FunctionCallInfo fcinfo);

/*
 * The key type of argument argno (of the element type if the argument is an
 * array), resolved once per call site and type.
 */
extern const BfKeyType *bf_call_site_key(FunctionCallInfo fcinfo,
										 BfCallSite *site, Oid keytype,
										 int filter_argno);

/*
 * Open the filter in argument argno for reading, through the call site's
 * cache.  The result must not be modified.
 */
extern void bf_call_site_value(FunctionCallInfo fcinfo, BfCallSite *site,
							   int argno, BfValue *v);

#endif							/* BF_CACHE_H */
