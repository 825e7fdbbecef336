/*
 * bf_expanded.c
 *		Expanded bloomfilter objects: in-place adds to PL/pgSQL variables.
 *
 * PL/pgSQL keeps a variable's value as an expanded object when a function
 * returns a read/write (R/W) pointer to one: it takes the object over (by
 * reparenting its memory context) instead of copying it.  It passes a
 * variable to a function as a R/W pointer, letting the function modify the
 * object in place, only for "x := f(x, ...)" with f trusted not to leave the
 * object corrupt on error.  On PostgreSQL 13 to 17 that trust is hard-wired
 * to array_append and array_prepend (and, from 14, array element
 * assignment): any other function, ours included, gets a read-only (R/O)
 * pointer, and the variable it must not modify may well be used again.
 * PostgreSQL 18 lets a planner support function grant the trust
 * (SupportRequestModifyInPlace).
 *
 * So with a R/O input, bloom_add cannot set bits in the input's buffer, yet
 * must not copy it.  It returns a new object that shares the input's buffer
 * and keeps the new key's hash pending.  For "f := bloom_add(f, k)",
 * PL/pgSQL then frees the old object; the new one is left the only user of
 * the buffer, and the next operation on it sets its pending bits in place
 * before doing its own work.  One add costs a small object (a memory context
 * from the free list) and k bit sets, never a copy of the bits.
 *
 * The rules, for an object x over buffer b with pending hashes p:
 *	- x's value is b's value with p added (and x's own header: key kind and
 *	  added count);
 *	- b is shared by b->refcount objects; p may be moved into b only when x
 *	  is its only user, which does not change any object's value;
 *	- a shared buffer is never written: an object that must change it, or
 *	  be read while it has pending hashes, first takes a private copy
 *	  (copy-on-write: one copy, after "g := bloom_add(f, k)" with f still in
 *	  use, for instance);
 *	- at most one operation's hashes are pending, and at most
 *	  pending_limit() of them; past that, the object takes a private copy.
 *
 * Buffers live in their own memory contexts, children of TopMemoryContext
 * while shared, and are freed when the last object using them is: every
 * object registers a reset callback on its own context that releases its
 * buffer.  A buffer is built as a child of its object's context and
 * reparented only once complete, so an error while building it leaks
 * nothing.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "nodes/primnodes.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "value/bf_datum.h"
#include "value/bf_expanded.h"

/* A flat value that one or more objects share. */
typedef struct BfBuffer
{
	MemoryContext cxt;			/* holds this struct and raw */
	int			refcount;		/* objects using it */
	struct varlena *raw;		/* the flat value, 4-byte header; its header
								 * fields may lag behind an object's */
} BfBuffer;

/* An expanded bloomfilter. */
typedef struct BfExpanded
{
	ExpandedObjectHeader eoh;	/* standard header: must be first */
	BfBuffer   *buf;			/* the bits (NULL only while being built) */
	BfHeader	hdr;			/* this object's header */
	int			npending;		/* hashes in buf's layout not yet set in buf */
	int			maxpending;		/* allocated length of pending */
	BfHash	   *pending;
	MemoryContextCallback release;	/* releases buf with eoh_context */
} BfExpanded;

static Size bfx_get_flat_size(ExpandedObjectHeader *eohptr);
static void bfx_flatten_into(ExpandedObjectHeader *eohptr,
							 void *result, Size allocated_size);

static const ExpandedObjectMethods bf_expanded_methods =
{
	bfx_get_flat_size,
	bfx_flatten_into
};

/* The object d points to, or NULL if d is not an expanded bloomfilter. */
static BfExpanded *
bfx_from_datum(Datum d)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
		return NULL;
	eoh = DatumGetEOHP(d);
	if (eoh->eoh_methods != &bf_expanded_methods)
		return NULL;
	return (BfExpanded *) eoh;
}

static void
buffer_release(BfBuffer *b)
{
	Assert(b->refcount > 0);
	if (--b->refcount == 0)
		MemoryContextDelete(b->cxt);
}

/* Reset callback of an object's context: let go of its buffer. */
static void
bfx_release(void *arg)
{
	BfExpanded *x = (BfExpanded *) arg;

	if (x->buf != NULL)
	{
		BfBuffer   *b = x->buf;

		x->buf = NULL;
		buffer_release(b);
	}
}

/* A new object without a buffer, in a new child context of parent. */
static BfExpanded *
bfx_create(MemoryContext parent)
{
	MemoryContext cxt;
	BfExpanded *x;

	cxt = AllocSetContextCreate(parent, "expanded bloomfilter",
								ALLOCSET_SMALL_SIZES);
	x = (BfExpanded *) MemoryContextAllocZero(cxt, sizeof(BfExpanded));
	EOH_init_header(&x->eoh, &bf_expanded_methods, cxt);
	x->release.func = bfx_release;
	x->release.arg = x;
	MemoryContextRegisterResetCallback(cxt, &x->release);
	return x;
}

/*
 * A new, empty buffer for object x, in a context that is a child of x's
 * until buffer_attach moves it.
 */
static BfBuffer *
buffer_create(BfExpanded *x)
{
	MemoryContext cxt;
	BfBuffer   *b;

	cxt = AllocSetContextCreate(x->eoh.eoh_context, "bloomfilter bits",
								ALLOCSET_SMALL_SIZES);
	b = (BfBuffer *) MemoryContextAllocZero(cxt, sizeof(BfBuffer));
	b->cxt = cxt;
	return b;
}

/*
 * Make a complete buffer from buffer_create x's own, releasing the one x
 * had.  Nothing here can fail.
 */
static void
buffer_attach(BfExpanded *x, BfBuffer *b)
{
	BfBuffer   *old = x->buf;

	MemoryContextSetParent(b->cxt, TopMemoryContext);
	b->refcount = 1;
	x->buf = b;
	x->npending = 0;
	if (old != NULL)
		buffer_release(old);
}

static inline uint8 *
raw_bits(struct varlena *raw)
{
	return (uint8 *) VARDATA(raw) + BF_HEADER_SIZE;
}

/*
 * Room in b for a flat value of size bytes whose bit array starts on a cache
 * line, as in the call-site cache: a blocked check touches one line.
 */
static struct varlena *
buffer_alloc(BfBuffer *b, Size size)
{
	char	   *p;
	uintptr_t	bits;

	p = MemoryContextAllocExtended(b->cxt, size + BF_BLOCK_BYTES,
								   MCXT_ALLOC_HUGE);
	bits = TYPEALIGN(BF_BLOCK_BYTES, (uintptr_t) p + VARHDRSZ + BF_HEADER_SIZE);
	return (struct varlena *) (bits - VARHDRSZ - BF_HEADER_SIZE);
}

/*
 * Write x's pending hashes and header fields into a copy of its value.  A
 * scalable filter's pending keys never need a new layer (bf_add_scalable
 * keeps no more pending than its last layer has room for).
 */
static void
apply_pending(BfExpanded *x, struct varlena *raw)
{
	uint8	   *bits = raw_bits(raw);

	if (x->hdr.family == BF_FAMILY_SCALABLE)
	{
		for (int i = 0; i < x->npending; i++)
		{
			if (bf_scalable_add(&x->hdr, bits, x->pending[i]) == BF_SCALABLE_FULL)
				elog(ERROR, "expanded scalable bloomfilter: a pending key needs a new layer");
		}
		bf_scalable_set_key_kind(&x->hdr, (uint8_t *) VARDATA(raw), x->hdr.key_kind);
	}
	else
	{
		for (int i = 0; i < x->npending; i++)
			bf_add_hash(&x->hdr, bits, x->pending[i]);
		bf_header_set_key_kind((uint8_t *) VARDATA(raw), x->hdr.key_kind);
	}
	bf_header_set_added((uint8_t *) VARDATA(raw), x->hdr.added);
}

static Size
bfx_get_flat_size(ExpandedObjectHeader *eohptr)
{
	BfExpanded *x = (BfExpanded *) eohptr;

	Assert(x->buf != NULL);
	return VARSIZE(x->buf->raw);
}

static void
bfx_flatten_into(ExpandedObjectHeader *eohptr, void *result,
				 Size allocated_size)
{
	BfExpanded *x = (BfExpanded *) eohptr;
	Size		size = VARSIZE(x->buf->raw);

	Assert(allocated_size == size);
	memcpy(result, x->buf->raw, size);
	if (x->npending > 0)
		apply_pending(x, (struct varlena *) result);
}

/* Give x a private copy of its value (its pending hashes set). */
static void
bfx_make_private(BfExpanded *x)
{
	Size		size = VARSIZE(x->buf->raw);
	BfBuffer   *b = buffer_create(x);

	b->raw = buffer_alloc(b, size);
	bfx_flatten_into(&x->eoh, b->raw, size);
	buffer_attach(x, b);
}

/*
 * Set x's pending hashes in its buffer: in place when x is the buffer's only
 * user (its value does not change), else in a private copy.
 */
static void
bfx_settle(BfExpanded *x)
{
	if (x->npending == 0)
		return;
	if (x->buf->refcount > 1)
		bfx_make_private(x);
	else
	{
		apply_pending(x, x->buf->raw);
		x->npending = 0;
	}
}

/* x's value, settled; writable only by x's owner, and only if private. */
static void
bfx_get_value(BfExpanded *x, BfValue *v)
{
	bfx_settle(x);
	v->hdr = x->hdr;
	v->raw = x->buf->raw;
	v->bits = raw_bits(x->buf->raw);
}

/* A new object in parent holding a private copy of d, which is not ours. */
static BfExpanded *
bfx_make_from_flat(Datum d, MemoryContext parent)
{
	struct varlena *flat = PG_DETOAST_DATUM(d);
	BfExpanded *x;
	BfBuffer   *b;
	BfValue		v;

	bf_value_open(flat, &v);	/* validates */
	x = bfx_create(parent);
	b = buffer_create(x);
	b->raw = buffer_alloc(b, VARSIZE(flat));
	memcpy(b->raw, flat, VARSIZE(flat));
	if ((Pointer) flat != DatumGetPointer(d))
		pfree(flat);
	x->hdr = v.hdr;
	buffer_attach(x, b);
	return x;
}

/* A new object in parent with the value of src and a buffer of its own. */
static BfExpanded *
bfx_make_copy(BfExpanded *src, MemoryContext parent)
{
	BfExpanded *x = bfx_create(parent);
	Size		size = VARSIZE(src->buf->raw);
	BfBuffer   *b = buffer_create(x);

	b->raw = buffer_alloc(b, size);
	bfx_flatten_into(&src->eoh, b->raw, size);
	x->hdr = src->hdr;
	buffer_attach(x, b);
	return x;
}

/* A new object in parent sharing src's buffer; src has nothing pending. */
static BfExpanded *
bfx_make_shared(BfExpanded *src, MemoryContext parent)
{
	BfExpanded *x = bfx_create(parent);

	Assert(src->npending == 0);
	x->hdr = src->hdr;
	x->buf = src->buf;
	src->buf->refcount++;
	return x;
}

Datum
bf_expanded_make(Datum d, MemoryContext parentcontext)
{
	BfExpanded *src = bfx_from_datum(d);
	BfExpanded *x;

	if (src != NULL)
		x = bfx_make_copy(src, parentcontext);
	else
		x = bfx_make_from_flat(d, parentcontext);
	return EOHPGetRWDatum(&x->eoh);
}

bool
bf_expanded_is(Datum d)
{
	return bfx_from_datum(d) != NULL;
}

bool
bf_expanded_open(Datum d, BfValue *v)
{
	BfExpanded *x = bfx_from_datum(d);

	if (x == NULL)
		return false;
	bfx_get_value(x, v);
	return true;
}

/*
 * The most hashes an object keeps pending: a quarter of the size of its
 * bits (setting them later costs less than copying the bits now), and at
 * least a few.
 */
static int
pending_limit(const BfHeader *h)
{
	uint64		n = bf_payload_bytes(h->nbits) / (4 * sizeof(BfHash));

	return (int) Max(Min(n, (uint64) (MaxAllocSize / sizeof(BfHash))), 16);
}

/*
 * Is argument argno of the call a parameter?  PL/pgSQL passes variables as
 * PARAM_EXTERN Params; a plain SQL call passes columns, constants or other
 * expressions, whose result gains nothing from being expanded.
 */
static bool
arg_is_param(FunctionCallInfo fcinfo, int argno)
{
	Node	   *expr = fcinfo->flinfo ? fcinfo->flinfo->fn_expr : NULL;
	List	   *args;
	Node	   *arg;

	if (expr == NULL)
		return false;
	if (IsA(expr, FuncExpr))
		args = ((FuncExpr *) expr)->args;
	else if (IsA(expr, OpExpr))
		args = ((OpExpr *) expr)->args;
	else
		return false;
	if (argno >= list_length(args))
		return false;
	arg = (Node *) list_nth(args, argno);
	return IsA(arg, Param) && ((Param *) arg)->paramkind == PARAM_EXTERN;
}

void
bf_add_begin(FunctionCallInfo fcinfo, int argno, BfAdd *a)
{
	Datum		d = PG_GETARG_DATUM(argno);
	BfExpanded *src = bfx_from_datum(d);

	Assert(!PG_ARGISNULL(argno));
	a->obj = NULL;
	if (src != NULL && VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d)))
	{
		/* Ours to modify: in place, after a copy if the bits are shared. */
		if (src->buf->refcount > 1)
			bfx_make_private(src);
		bfx_get_value(src, &a->v);
		a->obj = src;
	}
	else if (src != NULL)
	{
		/*
		 * Read-only: a new object.  It shares src's bits, the new keys
		 * pending, unless src has pending keys that cannot be set in place.
		 */
		if (src->buf->refcount == 1)
			bfx_settle(src);
		if (src->npending == 0)
		{
			a->obj = bfx_make_shared(src, CurrentMemoryContext);
			a->v.hdr = a->obj->hdr;
			a->v.raw = NULL;
			a->v.bits = NULL;
		}
		else
		{
			a->obj = bfx_make_copy(src, CurrentMemoryContext);
			bfx_get_value(a->obj, &a->v);
		}
	}
	else if (arg_is_param(fcinfo, argno))
	{
		/* A variable not yet expanded: the result will be. */
		a->obj = bfx_make_from_flat(d, CurrentMemoryContext);
		bfx_get_value(a->obj, &a->v);
	}
	else
	{
		/* Plain SQL: a plain copy. */
		bf_value_from_datum(d, true, &a->v);
		a->result = PointerGetDatum(a->v.raw);
		return;
	}
	a->result = EOHPGetRWDatum(&a->obj->eoh);
}

void
bf_add_pending(BfAdd *a, BfHash hash)
{
	BfExpanded *x = a->obj;

	Assert(x != NULL && a->v.bits == NULL);
	if (x->npending >= x->maxpending)
	{
		int			limit = pending_limit(&x->hdr);

		if (x->npending >= limit)
		{
			/* Too many: take a private copy and set bits directly. */
			bfx_make_private(x);
			a->v.raw = x->buf->raw;
			a->v.bits = raw_bits(x->buf->raw);
			if (a->v.hdr.family == BF_FAMILY_SCALABLE)
				bf_add_scalable(a, hash);
			else
				bf_add_hash(&a->v.hdr, a->v.bits, hash);
			return;
		}
		if (x->pending == NULL)
		{
			x->maxpending = Min(8, limit);
			x->pending = (BfHash *) MemoryContextAlloc(x->eoh.eoh_context,
													   x->maxpending * sizeof(BfHash));
		}
		else
		{
			x->maxpending = Min(x->maxpending * 2, limit);
			x->pending = (BfHash *) repalloc(x->pending,
											 x->maxpending * sizeof(BfHash));
		}
	}
	x->pending[x->npending++] = hash;
}

/*
 * Can x keep one more key of a scalable filter pending?  Only while its
 * pending keys could never fill the last layer: then setting them later
 * needs no new layer, and the object's size stays that of its buffer.
 */
static bool
scalable_pending_fits(BfExpanded *x)
{
	const uint8 *last = bf_scalable_last(&x->hdr, raw_bits(x->buf->raw));
	uint64		added = bf_header_get_added(last);
	uint64		capacity = bf_read_u64le(last + BF_LAYER_OFF_CAPACITY);

	return added < capacity && (uint64) x->npending < capacity - added;
}

/*
 * Add a key to a scalable filter: pending while that is safe (as other
 * filters), else set, after a new layer if the last one is full.  A new
 * layer means a new, larger buffer (for an expanded object) or value.
 */
void
bf_add_scalable(BfAdd *a, BfHash hash)
{
	BfHeader	layer;
	Size		size;

	if (a->v.bits == NULL)
	{
		BfExpanded *x = a->obj;

		if (scalable_pending_fits(x))
		{
			bf_add_pending(a, hash);
			return;
		}
		/* set what is pending in a private copy, then add directly */
		bfx_make_private(x);
		a->v.raw = x->buf->raw;
		a->v.bits = raw_bits(x->buf->raw);
	}
	if (a->obj == NULL)
	{
		bf_value_scalable_add(&a->v, hash);
		a->result = PointerGetDatum(a->v.raw);
		return;
	}
	if (bf_scalable_add(&a->v.hdr, a->v.bits, hash) != BF_SCALABLE_FULL)
		return;

	/* a new buffer with one more layer */
	{
		BfExpanded *x = a->obj;
		BfBuffer   *b;

		Assert(x->npending == 0 && x->buf->raw == a->v.raw);
		size = bf_value_next_layer(&a->v, &layer);
		b = buffer_create(x);
		b->raw = buffer_alloc(b, size);
		bf_value_grow_into(&a->v, &layer, b->raw);
		buffer_attach(x, b);
		x->hdr = a->v.hdr;
	}
	if (bf_scalable_add(&a->v.hdr, a->v.bits, hash) != BF_SCALABLE_SET)
		elog(ERROR, "scalable bloomfilter: a new layer did not take a key");
}

void
bf_add_note_added(BfAdd *a, int kind, uint64 nkeys)
{
	BfHeader   *h = &a->v.hdr;

	if (nkeys == 0)
		return;
	if (a->v.raw != NULL)
	{
		bf_value_note_added(&a->v, kind, nkeys);
		return;
	}
	/* keys pending: the header only (as bf_value_note_added) */
	if (h->key_kind != kind)
	{
		Assert(h->key_kind == BF_KEY_NONE);
		h->key_kind = (uint8) kind;
	}
	h->added = (h->added > PG_UINT64_MAX - nkeys) ?
		PG_UINT64_MAX : h->added + nkeys;
}

Datum
bf_add_end(BfAdd *a)
{
	if (a->obj != NULL)
	{
		/*
		 * With bits set directly, the buffer's header fields are already
		 * written (bf_value_note_added); else they are written when the
		 * pending hashes are.
		 */
		a->obj->hdr = a->v.hdr;
	}
	return a->result;
}
