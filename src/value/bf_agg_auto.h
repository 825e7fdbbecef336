/*
 * bf_agg_auto.h
 *		The state of bloom_agg(key) and bloom_agg(key, capacity_or_fpr), and
 *		its steps (bf_agg_auto.c), shared by the internal-state forms and the
 *		bloom_agg_state forms (bf_agg_state.c).
 */
#ifndef BF_AGG_AUTO_H
#define BF_AGG_AUTO_H

#include "postgres.h"

#include "fmgr.h"

#include "value/bf_value_mem.h"

typedef enum AutoMode
{
	AUTO_SIZED = 1,				/* capacity given: a filter built in place */
	AUTO_HASHES = 2				/* self-sizing: collect hashes */
} AutoMode;

typedef struct AutoState
{
	AutoMode	mode;
	double		param;			/* the second argument as given */
	/* AUTO_HASHES */
	double		fpr;
	uint64		cap;			/* most distinct hashes accepted */
	uint8		key_kind;
	Size		nsorted;		/* hashes[0 .. nsorted) sorted, unique */
	uint64		nrows;			/* non-NULL keys added */
	uint64	   *hashes;
	Size		nhashes;
	Size		nslots;
	/* AUTO_SIZED */
	BfValue		filter;
} AutoState;

/*
 * One row (arguments 1 and 2 of fcinfo) into st, or into a new state created
 * in cxt if st is NULL; returns the state, or NULL while every key was NULL.
 * The state's memory stays where it is (growing the hash array reallocates
 * it in its own context).
 */
extern AutoState *bf_auto_transition(FunctionCallInfo fcinfo, AutoState *st,
									 MemoryContext cxt);

/* The filter of a state (a new value); may compact the hashes in place. */
extern Datum bf_auto_result(FunctionCallInfo fcinfo, AutoState *st);

/* A copy of a state, in the current memory context. */
extern AutoState *bf_auto_copy(const AutoState *src);

/* Merge b into a; a's new memory is allocated in cxt, which must be a's. */
extern void bf_auto_merge(AutoState *a, AutoState *b, MemoryContext cxt);

/*
 * The serialized form: its length (compacting the hashes first), the bytes,
 * and the state they give (in the current memory context; NULL, or the
 * reason the bytes are not a state, as a DETAIL sentence).
 */
extern Size bf_auto_serial_size(AutoState *st);
extern void bf_auto_serialize(const AutoState *st, uint8 *p);
extern const char *bf_auto_deserialize(const uint8 *p, Size len, AutoState *st);

#endif							/* BF_AGG_AUTO_H */
