/*
 * bf_value_mem.h
 *		bloomfilter values in memory: open (validate and decode), create
 *		(sizing), and merge (bf_value.c).
 */
#ifndef BF_VALUE_MEM_H
#define BF_VALUE_MEM_H

#include "postgres.h"

#include "value/bf_compat.h"

#include "fmgr.h"
#include "utils/memutils.h"

#include "core/bf_core.h"

/* A value opened for reading (or writing, if it is a private copy). */
typedef struct BfValue
{
	BfHeader	hdr;
	struct varlena *raw;		/* the whole value, detoasted, 4-byte header */
	uint8	   *bits;			/* its bit array, bf_payload_bytes(hdr.nbits) */
} BfValue;

/*
 * Size limits.  A value is read and validated up to MaxAllocSize (just under
 * 1 GB, the varlena and format headers included): BF_MAX_PAYLOAD_BYTES.  A
 * new value is made at most BF_ROW_ROOM smaller: PostgreSQL forms the whole
 * row in one allocation before it toasts it, so a value of nearly
 * MaxAllocSize could be returned but not stored (an internal allocation
 * error, whatever its other columns hold).  BF_MAX_NBITS(layout) is the
 * largest bit array of a new value.
 */
#define BF_ROW_ROOM				((Size) (1024 * 1024))
#define BF_MAX_NEW_VALUE_BYTES	((Size) (MaxAllocSize - BF_ROW_ROOM))
#define BF_MAX_PAYLOAD_BYTES	((uint64) (MaxAllocSize - VARHDRSZ - BF_HEADER_SIZE))
#define BF_MAX_NEW_PAYLOAD_BYTES \
	((uint64) (BF_MAX_NEW_VALUE_BYTES - VARHDRSZ - BF_HEADER_SIZE))
#define BF_MAX_NBITS(layout) \
	((layout) == BF_LAYOUT_CLASSIC ? \
	 (BF_MAX_NEW_PAYLOAD_BYTES / (BF_CLASSIC_ALIGN_BITS / 8)) * BF_CLASSIC_ALIGN_BITS : \
	 (BF_MAX_NEW_PAYLOAD_BYTES / BF_BLOCK_BYTES) * BF_BLOCK_BITS)

/*
 * Open a detoasted value (4-byte header); raises data_corrupted if invalid.
 * A datum: bf_value_from_datum (bf_datum.h).
 */
extern void bf_value_open(struct varlena *raw, BfValue *v);

/* Parse a layout name given by a user; raises an error for an unknown one. */
extern int	bf_layout_parse(const char *name);

/* A core message (lower case, no period) as the start of a DETAIL sentence. */
extern char *bf_sentence(char *msg);

/*
 * Check the sizing arguments of a filter as bf_value_create does (the same
 * errors) and give its size, without allocating it.
 */
extern void bf_value_check_sizing(int64 capacity, double fpr, int layout,
								  BfSize *size);

/*
 * A new empty value sized for capacity keys at target rate fpr, allocated in
 * CurrentMemoryContext.  Raises an error for parameters out of range or a
 * capacity that does not fit in one value.
 */
extern void bf_value_create(int64 capacity, double fpr, int layout, BfValue *v);

/*
 * The same in a bf_value_buffer of CurrentMemoryContext: freed with the
 * context, never by pfree.
 */
extern void bf_value_create_aligned(int64 capacity, double fpr, int layout,
									BfValue *v);

/*
 * Memory owned by cxt for a value of size bytes (its contents undefined),
 * whose bit array (after the varlena and format headers) starts on a cache
 * line: a blocked key's bits are then in one line.  A buffer of 4 MB or
 * more is a mapping of its own, its bits on a 2 MB boundary and advised to
 * use transparent huge pages, unmapped when cxt is reset or deleted (or, if
 * the mapping fails, an ordinary allocation); the context's statistics do
 * not count it.  *bytes: the memory it takes (of a mapping, what becomes
 * resident).  Freed with cxt only, never by pfree.
 */
extern struct varlena *bf_value_buffer(MemoryContext cxt, Size size,
									   Size *bytes);

/*
 * A new empty scalable filter (family 4) of one layer; layout blocked or
 * classic.  Raises an error for parameters out of range.
 */
extern void bf_value_create_scalable(int64 capacity, double fpr, int32 growth,
									 double ratio, int layout, BfValue *v);

/*
 * The header of the layer a scalable filter grows by, and the size of the
 * value with it; raises program_limit_exceeded if it cannot grow.
 */
extern Size bf_value_next_layer(const BfValue *v, BfHeader *layer);

/*
 * Copy v into dst (bf_value_next_layer's size) with the new layer appended;
 * v then describes dst.
 */
extern void bf_value_grow_into(BfValue *v, const BfHeader *layer,
							   struct varlena *dst);

/*
 * Add a hashed key to a scalable filter that is a private, palloc'd copy:
 * v->raw is replaced (and the old one freed) if a layer must be added.
 */
extern void bf_value_scalable_add(BfValue *v, BfHash hash);

/* Record that a key of kind `kind` was added (header fields only). */
extern void bf_value_note_added(BfValue *v, int kind, uint64 nkeys);

/* The fewest keys at which the predicted rate exceeds factor x the target. */
extern uint64 bf_value_keys_over_rate(const BfHeader *h, double factor);
extern bool bf_value_notice_if_crowded(const BfValue *v, bool final);
/* Record that a key was removed (counting layout; header field only). */
extern void bf_value_note_removed(BfValue *v);

typedef enum BfMergeOp
{
	BF_MERGE_UNION,
	BF_MERGE_INTERSECT
} BfMergeOp;

/*
 * Merge src into dst (a writable value): bitwise OR or AND (counting:
 * saturating sum or minimum of the counters).  Both must have
 * the same layout, bits, hashes, capacity and fpr, and compatible key kinds.
 * Scalable filters unite layer by layer (same layout, capacity, fpr, growth
 * and ratio); dst->raw is then replaced by a new value in
 * CurrentMemoryContext when src has more layers.  They do not intersect.
 */
extern void bf_value_merge(BfValue *dst, const BfValue *src, BfMergeOp op);

#endif							/* BF_VALUE_MEM_H */
