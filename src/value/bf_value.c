/*
 * bf_value.c
 *		bloomfilter values in memory: open, create, merge.
 *
 * A detoasted value; a datum of any form is opened by bf_datum.c.
 */
#include "postgres.h"

#include <math.h>
#include <sys/mman.h>

#include "lib/stringinfo.h"

#include "core/bf_core.h"
#include "value/bf_value_mem.h"

void
bf_value_open(struct varlena *raw, BfValue *v)
{
	char		msg[256];

	Assert(!VARATT_IS_EXTENDED(raw));
	if (bf_header_decode((const uint8_t *) VARDATA(raw), VARSIZE(raw) - VARHDRSZ,
						 &v->hdr, msg, sizeof(msg)) != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("bloomfilter value is corrupted"),
				 errdetail("%s.", bf_sentence(msg))));
	v->raw = raw;
	v->bits = (uint8 *) VARDATA(raw) + BF_HEADER_SIZE;
}

int
bf_layout_parse(const char *name)
{
	int			layout = bf_layout_from_name(name);

	if (layout < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized bloomfilter layout \"%s\"", name),
				 errhint("Use 'blocked' (the default), 'classic' or 'counting'.")));
	return layout;
}

/*
 * A message of the core (lower case, no period) as a DETAIL sentence: its
 * first letter capitalized.  Use as errdetail("%s.", bf_sentence(msg)).
 */
char *
bf_sentence(char *msg)
{
	if (msg[0] >= 'a' && msg[0] <= 'z')
		msg[0] = msg[0] - 'a' + 'A';
	return msg;
}

/* The capacity and rate of a new filter; rate gets fpr's text form. */
static void
check_capacity_fpr(int64 capacity, double fpr, char *rate, size_t ratelen)
{

	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter capacity must be positive, not " INT64_FORMAT,
						capacity),
				 errhint("Give the number of distinct keys the filter should hold.")));
	/* shortest round trip: %g would print 0.9999999999999999 as 1 */
	if (isfinite(fpr))
		bf_format_double(fpr, rate, ratelen);
	else
		snprintf(rate, ratelen, "%g", fpr);
	if (!(fpr > 0.0 && fpr < 1.0))	/* also rejects NaN */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter false-positive rate must be between 0 and 1 (exclusive), not %s",
						rate),
				 errhint("For example 0.01 for 1%%.")));
}

void
bf_value_check_sizing(int64 capacity, double fpr, int layout, BfSize *size)
{
	uint64		max_nbits = BF_MAX_NBITS(layout);
	char		rate[32];		/* fpr, shortest round-trip form */

	check_capacity_fpr(capacity, fpr, rate, sizeof(rate));

	if (!bf_size_for(layout, (uint64) capacity, fpr, max_nbits, size))
	{
		uint64		largest = bf_max_capacity(layout, fpr, max_nbits);

		if (largest == 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("bloomfilter false-positive rate %s is too small for a %s filter",
							rate, bf_layout_name(layout)),
					 errdetail("A bloomfilter value is at most 1 GB."),
					 errhint("Use a larger false-positive rate.")));
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloomfilter capacity " INT64_FORMAT " is too large at false-positive rate %s",
						capacity, rate),
				 errdetail("A bloomfilter value is at most 1 GB: the largest capacity of a %s filter at this rate is " UINT64_FORMAT ".",
						   bf_layout_name(layout), largest),
				 errhint("Use a larger false-positive rate, or split the keys over several filters.")));
	}
}

/*
 * A buffer at least this large gets a mapping of its own, its bits on a 2 MB
 * boundary and advised to use transparent huge pages: with 4 kB pages an
 * access to a filter of many MB pays a page walk (a TLB miss) on top of the
 * cache miss.  A mapping of its own, not malloc's memory: freed, its pages
 * go back to the system at once (malloc keeps blocks of up to 32 MB in its
 * heap once it has seen them freed, resident in an idle backend), and the
 * huge-page advice stays on it alone.  It is unmapped when its memory
 * context is reset or deleted; its size is reported by the caller (the
 * cache's bloom_cache view), not by the context's statistics.
 */
#define HUGE_PAGE_BYTES			((Size) 2 * 1024 * 1024)
#define HUGE_BUFFER_MIN_BYTES	((Size) 4 * 1024 * 1024)

/* A buffer's own mapping: unmapped when its memory context goes. */
typedef struct BfMapping
{
	MemoryContextCallback cb;
	void	   *addr;
	Size		len;
} BfMapping;

static void
unmap_buffer(void *arg)
{
	BfMapping  *m = (BfMapping *) arg;

	if (munmap(m->addr, m->len) != 0)
		elog(WARNING, "could not unmap a bloom filter's memory: %m");
}

/* A mapping of its own for a buffer of size bytes, or NULL. */
static char *
map_buffer(MemoryContext cxt, Size size, Size *bytes)
{
	BfMapping  *m = MemoryContextAlloc(cxt, sizeof(BfMapping));
	void	   *addr;

	m->len = TYPEALIGN(HUGE_PAGE_BYTES, size) + HUGE_PAGE_BYTES;	/* room to align */
	addr = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED)
	{
		pfree(m);
		return NULL;
	}
	m->addr = addr;
	m->cb.func = unmap_buffer;
	m->cb.arg = m;
	MemoryContextRegisterResetCallback(cxt, &m->cb);
	/* what becomes resident: the alignment's pages are never touched */
	*bytes = size;
	return (char *) addr;
}

struct varlena *
bf_value_buffer(MemoryContext cxt, Size size, Size *bytes)
{
	Size		head = VARHDRSZ + BF_HEADER_SIZE;
	char	   *buffer = NULL;
	char	   *bits;

	if (size >= HUGE_BUFFER_MIN_BYTES)
		buffer = map_buffer(cxt, size, bytes);
	if (buffer != NULL)
	{
		bits = (char *) TYPEALIGN(HUGE_PAGE_BYTES, buffer + head);
#ifdef MADV_HUGEPAGE
		/* a hint: without huge pages the buffer works as well, slower */
		(void) madvise(bits, TYPEALIGN_DOWN(HUGE_PAGE_BYTES, size - head), MADV_HUGEPAGE);
#endif
	}
	else
	{
		*bytes = size + BF_BLOCK_BYTES;
		buffer = MemoryContextAllocHuge(cxt, *bytes);
		bits = (char *) TYPEALIGN(BF_BLOCK_BYTES, buffer + head);
	}
	return (struct varlena *) (bits - head);
}

static void
value_create(int64 capacity, double fpr, int layout, bool aligned, BfValue *v)
{
	BfSize		size;
	Size		total;

	bf_value_check_sizing(capacity, fpr, layout, &size);

	memset(&v->hdr, 0, sizeof(v->hdr));
	v->hdr.version = BF_FORMAT_VERSION;
	v->hdr.family = (uint8) bf_layout_family(layout);
	v->hdr.layout = (uint8) layout;
	v->hdr.key_kind = BF_KEY_NONE;
	v->hdr.hashes = (uint16) size.hashes;
	v->hdr.flags = 0;
	v->hdr.layers = 1;
	v->hdr.nbits = size.nbits;
	v->hdr.capacity = (uint64) capacity;
	v->hdr.target_fpr = fpr;
	v->hdr.added = 0;

	total = VARHDRSZ + BF_HEADER_SIZE + (Size) bf_payload_bytes(size.nbits);
	Assert(total <= MaxAllocSize);
	if (aligned)
	{
		Size		bytes;

		v->raw = bf_value_buffer(CurrentMemoryContext, total, &bytes);
		memset(v->raw, 0, total);
	}
	else
		v->raw = (struct varlena *) palloc0(total);
	SET_VARSIZE(v->raw, total);
	bf_header_encode(&v->hdr, (uint8_t *) VARDATA(v->raw));
	v->bits = (uint8 *) VARDATA(v->raw) + BF_HEADER_SIZE;
}

void
bf_value_create(int64 capacity, double fpr, int layout, BfValue *v)
{
	value_create(capacity, fpr, layout, false, v);
}

void
bf_value_create_aligned(int64 capacity, double fpr, int layout, BfValue *v)
{
	value_create(capacity, fpr, layout, true, v);
}

void
bf_value_create_scalable(int64 capacity, double fpr, int32 growth,
						 double ratio, int layout, BfValue *v)
{
	char		rate[32];
	char		num[32];
	BfSize		size;
	BfHeader	layer;
	double		first;
	Size		total;

	check_capacity_fpr(capacity, fpr, rate, sizeof(rate));
	if (growth < BF_MIN_GROWTH || growth > BF_MAX_GROWTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("scalable bloomfilter growth must be between %d and %d, not %d",
						BF_MIN_GROWTH, BF_MAX_GROWTH, growth),
				 errhint("Each new layer holds growth times the keys of the one before; 2 is usual.")));
	if (isfinite(ratio))
		bf_format_double(ratio, num, sizeof(num));
	else
		snprintf(num, sizeof(num), "%g", ratio);
	if (!(ratio > 0.0 && ratio < 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("scalable bloomfilter ratio must be between 0 and 1 (exclusive), not %s",
						num),
				 errhint("Each new layer has ratio times the false-positive rate of the one before; 0.5 is usual.")));
	if (layout == BF_LAYOUT_COUNTING)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a scalable bloomfilter cannot have layout counting"),
				 errhint("Use 'blocked' (the default) or 'classic'.")));

	first = bf_scalable_layer_fpr(fpr, ratio, 0);
	if (!(first > 0.0) ||
		!bf_size_for(layout, (uint64) capacity, BF_SCALABLE_HEADROOM * first,
					 BF_MAX_NBITS(layout) - BF_BLOCK_BITS, &size))
	{
		bf_format_double(first, num, sizeof(num));
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("scalable bloomfilter of initial capacity " INT64_FORMAT " at false-positive rate %s does not fit",
						capacity, rate),
				 errdetail("Its first layer needs false-positive rate %s, fpr times (1 - ratio), and a bloomfilter value is at most 1 GB.",
						   num),
				 errhint("Use a smaller initial capacity or a larger false-positive rate.")));
	}

	memset(&v->hdr, 0, sizeof(v->hdr));
	v->hdr.version = BF_FORMAT_VERSION;
	v->hdr.family = BF_FAMILY_SCALABLE;
	v->hdr.layout = (uint8) layout;
	v->hdr.key_kind = BF_KEY_NONE;
	v->hdr.hashes = 0;
	v->hdr.layers = 0;
	v->hdr.nbits = 0;
	v->hdr.capacity = (uint64) capacity;
	v->hdr.target_fpr = fpr;
	v->hdr.growth = (uint32) growth;
	v->hdr.ratio = ratio;

	memset(&layer, 0, sizeof(layer));
	layer.version = BF_FORMAT_VERSION;
	layer.family = BF_FAMILY_BLOOM;
	layer.layout = (uint8) layout;
	layer.key_kind = BF_KEY_NONE;
	layer.hashes = (uint16) size.hashes;
	layer.layers = 1;
	layer.nbits = size.nbits;
	layer.capacity = (uint64) capacity;
	layer.target_fpr = first;

	total = VARHDRSZ + 2 * BF_HEADER_SIZE + (Size) bf_payload_bytes(size.nbits);
	Assert(total <= MaxAllocSize);
	v->raw = (struct varlena *) palloc0(total);
	SET_VARSIZE(v->raw, total);
	bf_header_encode(&v->hdr, (uint8_t *) VARDATA(v->raw));
	bf_scalable_append(&v->hdr, (uint8_t *) VARDATA(v->raw), &layer);
	v->bits = (uint8 *) VARDATA(v->raw) + BF_HEADER_SIZE;
}

Size
bf_value_next_layer(const BfValue *v, BfHeader *layer)
{
	Size		size = VARSIZE(v->raw);
	uint64		room;
	uint64		max_nbits;
	char		msg[256];
	BfStatus	st;

	Assert(v->hdr.family == BF_FAMILY_SCALABLE);
	/* what a new layer's bits may take within a new value's limit */
	room = (size + BF_HEADER_SIZE < BF_MAX_NEW_VALUE_BYTES) ?
		BF_MAX_NEW_VALUE_BYTES - size - BF_HEADER_SIZE : 0;
	if (v->hdr.layout == BF_LAYOUT_CLASSIC)
		max_nbits = (room / (BF_CLASSIC_ALIGN_BITS / 8)) * BF_CLASSIC_ALIGN_BITS;
	else
		max_nbits = (room / BF_BLOCK_BYTES) * BF_BLOCK_BITS;
	st = max_nbits == 0 ? BF_ERR_NBITS :
		bf_scalable_new_layer(&v->hdr, max_nbits, layer, msg, sizeof(msg));
	if (st != BF_OK)
	{
		if (max_nbits == 0)
			snprintf(msg, sizeof(msg), "a bloomfilter value is at most 1 GB");
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot add layer %u to a scalable bloomfilter",
						v->hdr.layers),
				 errdetail("%s.", bf_sentence(msg)),
				 st == BF_ERR_FPR ?
				 errhint("Create the filter with a ratio closer to 1, or a larger initial capacity.") :
				 errhint("Create the filter with a larger initial capacity, or split the keys over several filters.")));
	}
	return size + BF_HEADER_SIZE + (Size) bf_payload_bytes(layer->nbits);
}

void
bf_value_grow_into(BfValue *v, const BfHeader *layer, struct varlena *dst)
{
	Size		size = VARSIZE(v->raw) + BF_HEADER_SIZE + (Size) bf_payload_bytes(layer->nbits);

	memcpy(dst, v->raw, VARSIZE(v->raw));
	SET_VARSIZE(dst, size);
	bf_scalable_append(&v->hdr, (uint8_t *) VARDATA(dst), layer);
	v->raw = dst;
	v->bits = (uint8 *) VARDATA(dst) + BF_HEADER_SIZE;
}

void
bf_value_scalable_add(BfValue *v, BfHash hash)
{
	BfHeader	layer;
	struct varlena *old;
	struct varlena *grown;

	if (bf_scalable_add(&v->hdr, v->bits, hash) != BF_SCALABLE_FULL)
		return;
	old = v->raw;
	grown = (struct varlena *) palloc(bf_value_next_layer(v, &layer));
	bf_value_grow_into(v, &layer, grown);
	pfree(old);
	if (bf_scalable_add(&v->hdr, v->bits, hash) != BF_SCALABLE_SET)
		elog(ERROR, "scalable bloomfilter: a new layer did not take a key");
}

void
bf_value_note_added(BfValue *v, int kind, uint64 nkeys)
{
	uint8_t    *buf = (uint8_t *) VARDATA(v->raw);

	if (v->hdr.key_kind != kind)
	{
		Assert(v->hdr.key_kind == BF_KEY_NONE);
		v->hdr.key_kind = (uint8) kind;
		if (v->hdr.family == BF_FAMILY_SCALABLE)
			bf_scalable_set_key_kind(&v->hdr, buf, (uint8_t) kind);
		else
			bf_header_set_key_kind(buf, (uint8_t) kind);
	}
	/* saturate: the count is informational */
	v->hdr.added = (v->hdr.added > PG_UINT64_MAX - nkeys) ?
		PG_UINT64_MAX : v->hdr.added + nkeys;
	v->hdr.version = BF_FORMAT_VERSION; /* a changed value is written so */
	bf_header_set_added(buf, v->hdr.added);
}

static void
describe_scalable(StringInfo buf, const BfHeader *h)
{
	char		fpr[32];
	char		ratio[32];

	bf_format_double(h->target_fpr, fpr, sizeof(fpr));
	bf_format_double(h->ratio, ratio, sizeof(ratio));
	appendStringInfo(buf, "scalable, layout %s, capacity " UINT64_FORMAT ", fpr %s, growth %u, ratio %s",
					 bf_layout_name(h->layout), h->capacity, fpr, h->growth,
					 ratio);
}

static void
describe(StringInfo buf, const BfHeader *h)
{
	if (h->family == BF_FAMILY_SCALABLE)
	{
		describe_scalable(buf, h);
		return;
	}
	{
	char		fpr[32];

	bf_format_double(h->target_fpr, fpr, sizeof(fpr));
	appendStringInfo(buf, "layout %s, " UINT64_FORMAT " bits, %u hashes, capacity " UINT64_FORMAT ", fpr %s",
					 bf_layout_name(h->layout), h->nbits, h->hashes,
					 h->capacity, fpr);
	}
}

/*
 * Union of scalable filters: layer i of the result is the union of the
 * layers i of both (the same size: the same parameters give the same
 * layers), with the sum of their counts; a layer only one has is copied.
 */
static void
merge_scalable(BfValue *dst, const BfValue *src, BfMergeOp op)
{
	const BfHeader *a = &dst->hdr;
	const BfHeader *b = &src->hdr;
	uint32		common = Min(a->layers, b->layers);
	uint8	   *pa;
	const uint8 *pb;

	if (op == BF_MERGE_INTERSECT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot intersect scalable bloom filters"),
				 errdetail("A key may be in different layers of the two filters, so their layers have no common key to keep."),
				 errhint("Test a key against both filters instead.")));
	if (a->family != b->family || a->layout != b->layout ||
		a->capacity != b->capacity || a->target_fpr != b->target_fpr ||
		a->growth != b->growth || a->ratio != b->ratio)
	{
		StringInfoData left,
					right;

		initStringInfo(&left);
		initStringInfo(&right);
		describe(&left, a);
		describe(&right, b);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot unite bloom filters with different parameters"),
				 errdetail("Left: %s; right: %s.", left.data, right.data),
				 errhint("A scalable filter unites only with one created with the same initial capacity, fpr, growth, ratio and layout.")));
	}
	if (a->key_kind != BF_KEY_NONE && b->key_kind != BF_KEY_NONE &&
		a->key_kind != b->key_kind)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot unite a bloom filter of key kind %s with one of key kind %s",
						bf_key_kind_name(a->key_kind), bf_key_kind_name(b->key_kind)),
				 errhint("Both filters must be built from keys of the same kind.")));

	/* the same layers first (another client may have sized them otherwise) */
	pa = dst->bits;
	pb = src->bits;
	for (uint32 i = 0; i < common; i++)
	{
		BfHeader	la,
					lb;

		bf_scalable_layer_header(pa, &la);
		bf_scalable_layer_header(pb, &lb);
		if (la.nbits != lb.nbits || la.hashes != lb.hashes)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot unite scalable bloom filters whose layers differ"),
					 errdetail("Layer %u has " UINT64_FORMAT " bits and %u hashes on the left, " UINT64_FORMAT " bits and %u hashes on the right.",
							   i, la.nbits, la.hashes, lb.nbits, lb.hashes)));
		pa = (uint8 *) bf_scalable_next(pa);
		pb = bf_scalable_next(pb);
	}

	/* src's extra layers: dst grows to hold them */
	if (b->layers > a->layers)
	{
		Size		extra = VARSIZE(src->raw) - VARHDRSZ -
			(Size) (pb - (const uint8 *) VARDATA(src->raw));
		Size		size = VARSIZE(dst->raw) + extra;
		struct varlena *grown;

		if (size > BF_MAX_NEW_VALUE_BYTES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("union of scalable bloom filters would exceed 1 GB")));
		grown = (struct varlena *) palloc(size);
		memcpy(grown, dst->raw, VARSIZE(dst->raw));
		memcpy((char *) grown + VARSIZE(dst->raw), pb, extra);
		SET_VARSIZE(grown, size);
		dst->hdr.layers = b->layers;
		dst->hdr.nbits = b->nbits;
		bf_header_set_layers((uint8_t *) VARDATA(grown), b->layers, b->nbits);
		dst->raw = grown;
		dst->bits = (uint8 *) VARDATA(grown) + BF_HEADER_SIZE;
	}

	/* OR the common layers, summing their counts */
	pa = dst->bits;
	pb = src->bits;
	for (uint32 i = 0; i < common; i++)
	{
		uint64		nbits = bf_read_u64le(pa + BF_LAYER_OFF_NBITS);
		uint64		na = bf_header_get_added(pa);
		uint64		nb = bf_header_get_added(pb);

		bf_bits_or(pa + BF_HEADER_SIZE, pb + BF_HEADER_SIZE, bf_payload_bytes(nbits));
		bf_header_set_added(pa, na > PG_UINT64_MAX - nb ? PG_UINT64_MAX : na + nb);
		pa = (uint8 *) bf_scalable_next(pa);
		pb = bf_scalable_next(pb);
	}
	if (a->key_kind == BF_KEY_NONE && b->key_kind != BF_KEY_NONE)
		bf_value_note_added(dst, b->key_kind, 0);
	else if (a->key_kind != BF_KEY_NONE && b->key_kind == BF_KEY_NONE)
	{
		/* layers copied from src have its key kind, none: make them dst's */
		bf_scalable_set_key_kind(&dst->hdr, (uint8_t *) VARDATA(dst->raw),
								 dst->hdr.key_kind);
	}
	bf_value_note_added(dst, dst->hdr.key_kind, b->added);
}

void
bf_value_merge(BfValue *dst, const BfValue *src, BfMergeOp op)
{
	const BfHeader *a = &dst->hdr;
	const BfHeader *b = &src->hdr;

	if (a->family == BF_FAMILY_SCALABLE || b->family == BF_FAMILY_SCALABLE)
	{
		merge_scalable(dst, src, op);
		return;
	}
	if (a->layout != b->layout || a->nbits != b->nbits ||
		a->hashes != b->hashes || a->capacity != b->capacity ||
		a->target_fpr != b->target_fpr)
	{
		StringInfoData left,
					right;

		initStringInfo(&left);
		initStringInfo(&right);
		describe(&left, a);
		describe(&right, b);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 op == BF_MERGE_UNION ?
				 errmsg("cannot unite bloom filters with different parameters") :
				 errmsg("cannot intersect bloom filters with different parameters"),
				 errdetail("Left: %s; right: %s.", left.data, right.data),
				 errhint("Build both filters with the same capacity, fpr and layout.")));
	}
	if (a->key_kind != BF_KEY_NONE && b->key_kind != BF_KEY_NONE &&
		a->key_kind != b->key_kind)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 op == BF_MERGE_UNION ?
				 errmsg("cannot unite a bloom filter of key kind %s with one of key kind %s",
						bf_key_kind_name(a->key_kind), bf_key_kind_name(b->key_kind)) :
				 errmsg("cannot intersect a bloom filter of key kind %s with one of key kind %s",
						bf_key_kind_name(a->key_kind), bf_key_kind_name(b->key_kind)),
				 errhint("Both filters must be built from keys of the same kind.")));

	if (op == BF_MERGE_UNION)
	{
		if (a->layout == BF_LAYOUT_COUNTING)
			bf_counting_sum(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		else
			bf_bits_or(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		if (a->key_kind == BF_KEY_NONE)
			bf_value_note_added(dst, b->key_kind, 0);
		bf_value_note_added(dst, dst->hdr.key_kind, b->added);
	}
	else
	{
		if (a->layout == BF_LAYOUT_COUNTING)
			bf_counting_min(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		else
			bf_bits_and(dst->bits, src->bits, bf_payload_bytes(a->nbits));
		if (a->key_kind == BF_KEY_NONE)
			bf_value_note_added(dst, b->key_kind, 0);
		if (b->added < dst->hdr.added)
			dst->hdr.added = b->added;
		/* written in this build's version, as every changed value */
		dst->hdr.version = BF_FORMAT_VERSION;
		bf_header_set_added((uint8_t *) VARDATA(dst->raw), dst->hdr.added);
	}
}

/*
 * The fewest keys at which a filter's predicted false-positive rate is more
 * than factor times its target (PG_UINT64_MAX if no count gets there).
 */
uint64
bf_value_keys_over_rate(const BfHeader *h, double factor)
{
	double		limit = factor * h->target_fpr;
	uint64		lo = Max(h->capacity, 1);
	uint64		hi = lo;

	if (h->family == BF_FAMILY_SCALABLE)
		return PG_UINT64_MAX;	/* it grows: never crowded */

#define OVER(n) (bf_predict_fpr(h->layout, h->nbits, h->hashes, (double) (n)) > limit)
	if (OVER(lo))
	{
		/* below the capacity already (a small filter): search from 1 */
		hi = lo;
		lo = 0;
	}
	else
	{
		while (!OVER(hi))
		{
			lo = hi;
			if (hi > PG_UINT64_MAX / 4)
				return PG_UINT64_MAX;
			hi *= 2;
		}
	}
	while (hi - lo > 1)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (OVER(mid))
			hi = mid;
		else
			lo = mid;
	}
#undef OVER
	return hi;
}

/*
 * A NOTICE if the filter holds so many distinct keys (estimated from its
 * bits) that its predicted false-positive rate is over twice the target;
 * true if it gave one.  final: the filter is complete (the count is what it
 * holds, not a lower bound).
 */
bool
bf_value_notice_if_crowded(const BfValue *v, bool final)
{
	double		distinct;
	double		predicted;
	char		rate[32];
	char		target[32];

	if (v->hdr.family == BF_FAMILY_SCALABLE)
		return false;			/* it grows: never crowded */
	distinct = bf_estimate_cardinality(&v->hdr, v->bits);
	predicted = bf_predict_fpr(v->hdr.layout, v->hdr.nbits, v->hdr.hashes, distinct);
	if (!(predicted > 2 * v->hdr.target_fpr))
		return false;
	bf_format_double(predicted, rate, sizeof(rate));
	bf_format_double(v->hdr.target_fpr, target, sizeof(target));
	ereport(NOTICE,
			(errmsg("bloom filter of capacity " UINT64_FORMAT " holds %s %.0f distinct keys",
					v->hdr.capacity, final ? "about" : "at least", distinct),
			 errdetail("Its predicted false-positive rate is %s, more than twice the target %s.",
					   rate, target),
			 final ?
			 errhint("Build it with a capacity of at least %.0f, or with bloom_agg(key) to size it from the keys.",
					 distinct) :
			 errhint("Build it with a capacity of at least the number of distinct keys, or with bloom_agg(key) to size it from them.")));
	return true;
}

void
bf_value_note_removed(BfValue *v)
{
	/* a saturated count stays saturated, like a counter */
	if (v->hdr.added > 0 && v->hdr.added < PG_UINT64_MAX)
		v->hdr.added--;
	v->hdr.version = BF_FORMAT_VERSION; /* a changed value is written so */
	bf_header_set_added((uint8_t *) VARDATA(v->raw), v->hdr.added);
}
