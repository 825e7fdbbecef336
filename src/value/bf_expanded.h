/*
 * bf_expanded.h
 *		Expanded bloomfilter objects: in-place adds to PL/pgSQL variables.
 *
 * "f := bloom_add(f, k)" in a PL/pgSQL loop must not copy the filter per
 * add.  An expanded bloomfilter (utils/expandeddatum.h) keeps the value as
 * one flat varlena, the same bytes as on disk, in a buffer that several
 * objects may share, plus a short list of key hashes not yet set in that
 * buffer ("pending").  See bf_expanded.c for why the sharing is needed on
 * PostgreSQL 13-17, where PL/pgSQL only ever passes our functions a
 * read-only pointer.
 */
#ifndef BF_EXPANDED_H
#define BF_EXPANDED_H

#include "postgres.h"

#include "fmgr.h"

#include "core/bf_core.h"
#include "value/bf_value_mem.h"

struct BfExpanded;

/*
 * Expand a bloomfilter datum (plain, toasted or expanded) into a new
 * expanded object, a child of parentcontext; returns its read/write pointer.
 */
extern Datum bf_expanded_make(Datum d, MemoryContext parentcontext);

/* Is d a pointer (read/write or read-only) to an expanded bloomfilter? */
extern bool bf_expanded_is(Datum d);

/*
 * If d points to an expanded bloomfilter, fill v with its current value and
 * return true; else return false.  v points into the object: the caller may
 * only read it (unless it holds the read/write pointer), and only until the
 * object is next modified or freed.
 */
extern bool bf_expanded_open(Datum d, BfValue *v);

/*
 * Adding keys to the filter in argument argno of a function that returns
 * the filter with the keys added (bloom_add, ||, bloom_add_all):
 *
 *		bf_add_begin(fcinfo, 0, &a);
 *		... check key kinds against a.v.hdr, hash with a.v.hdr.layout ...
 *		bf_add_key(&a, hash);				(any number of times)
 *		bf_add_note_added(&a, kind, n);
 *		PG_RETURN_DATUM(bf_add_end(&a));
 *
 * The input is never modified where its caller can still see it, except
 * when it is a read/write expanded pointer, which is modified in place and
 * returned.  The result is an expanded object when the input was one or is
 * a parameter (a PL/pgSQL variable), so that the next add to the variable
 * is cheap; else a plain value, as before.  The filter argument must not be
 * NULL.
 */
typedef struct BfAdd
{
	BfValue		v;				/* working value: hdr is always valid; raw and
								 * bits are writable, or NULL while added keys
								 * are kept pending */
	Datum		result;			/* what bf_add_end returns */
	struct BfExpanded *obj;		/* the expanded object built, or NULL */
} BfAdd;

extern void bf_add_begin(FunctionCallInfo fcinfo, int argno, BfAdd *a);
extern void bf_add_pending(BfAdd *a, BfHash hash);
extern void bf_add_scalable(BfAdd *a, BfHash hash);
extern void bf_add_note_added(BfAdd *a, int kind, uint64 nkeys);
extern Datum bf_add_end(BfAdd *a);

static inline void
bf_add_key(BfAdd *a, BfHash hash)
{
	if (a->v.hdr.family == BF_FAMILY_SCALABLE)
		bf_add_scalable(a, hash);
	else if (a->v.bits != NULL)
		bf_add_hash(&a->v.hdr, a->v.bits, hash);
	else
		bf_add_pending(a, hash);
}

#endif							/* BF_EXPANDED_H */
