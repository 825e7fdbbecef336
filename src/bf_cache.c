/*
 * bf_cache.c
 *		Per-call-site state: key type, detoasted-filter cache, slicing.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "utils/memutils.h"

#include "bf_cache.h"
#include "bf_expanded.h"

/* A stored value at most this large is read whole at once. */
#define SLICE_MIN_VALUE_BYTES	(64 * 1024)

/*
 * What one slice read costs, in bytes of a full read.  A slice fetches the
 * TOAST chunks holding the bytes through the TOAST index: about 10 us here,
 * while a full read of a 62 MB value takes about 50 ms (0.8 us per kB).
 */
#define SLICE_COST_BYTES		(12 * 1024)

#define CACHE_LINE				64

BfCallSite *
bf_call_site(FunctionCallInfo fcinfo)
{
	BfCallSite *site = (BfCallSite *) fcinfo->flinfo->fn_extra;

	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfCallSite));
		fcinfo->flinfo->fn_extra = site;
	}
	return site;
}

const BfKeyType *
bf_call_site_key(FunctionCallInfo fcinfo, BfCallSite *site, Oid keytype,
				 int filter_argno)
{
	Oid			collation = PG_GET_COLLATION();

	if (site->key.typid != keytype || site->key.collation != collation)
	{
		Oid			filter_typid = get_fn_expr_argtype(fcinfo->flinfo, filter_argno);

		/* reset first: a failed init must not leave a half-set entry */
		site->key.typid = InvalidOid;
		bf_key_type_init(&site->key, keytype, collation, filter_typid);
	}
	return &site->key;
}

/* Forget the stored value of the call site, if it is not this one. */
static void
track_stored(BfCallSite *site, const struct varatt_external *toast)
{
	if (site->have_toast && memcmp(toast, &site->toast, sizeof(*toast)) == 0)
		return;
	if (site->have_value)
		pfree(site->buffer);
	site->have_value = false;
	site->have_header = false;
	site->sliced_bytes = 0;
	site->toast = *toast;
	site->have_toast = true;
}

/*
 * Read the whole stored value into fn_mcxt, placed so that its bit array
 * starts on a cache line.
 */
static void
load_stored(FunctionCallInfo fcinfo, BfCallSite *site, struct varlena *ptr)
{
	struct varlena *flat = detoast_attr(ptr);
	Size		size = VARSIZE(flat);
	char	   *buffer;
	char	   *bits;
	struct varlena *raw;

	buffer = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, size + CACHE_LINE);
	bits = (char *) TYPEALIGN(CACHE_LINE, buffer + VARHDRSZ + BF_HEADER_SIZE);
	raw = (struct varlena *) (bits - BF_HEADER_SIZE - VARHDRSZ);
	memcpy(raw, flat, size);
	pfree(flat);

	bf_value_open(raw, &site->value);
	site->buffer = buffer;
	site->have_value = true;
}

void
bf_call_site_value(FunctionCallInfo fcinfo, BfCallSite *site, int argno,
				   BfValue *v)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *ptr = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast;

	/* An expanded value (a PL/pgSQL variable) is read where it is. */
	if (bf_expanded_open(d, v))
		return;

	/*
	 * A value in memory or inline in its row costs nothing to open; its
	 * header is validated again only when it differs from the last one.
	 */
	if (!VARATT_IS_EXTERNAL_ONDISK(ptr))
	{
		struct varlena *raw = PG_DETOAST_DATUM(d);

		if (site->have_inline && VARSIZE(raw) == site->inline_size &&
			VARSIZE(raw) >= VARHDRSZ + BF_HEADER_SIZE &&
			memcmp(VARDATA(raw), site->inline_bytes, BF_HEADER_SIZE) == 0)
		{
			v->hdr = site->inline_hdr;
			v->raw = raw;
			v->bits = (uint8 *) VARDATA(raw) + BF_HEADER_SIZE;
			return;
		}
		bf_value_open(raw, v);
		memcpy(site->inline_bytes, VARDATA(raw), BF_HEADER_SIZE);
		site->inline_size = VARSIZE(raw);
		site->inline_hdr = v->hdr;
		site->have_inline = true;
		return;
	}

	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	track_stored(site, &toast);
	if (!site->have_value)
		load_stored(fcinfo, site, ptr);
	*v = site->value;
}

/* Read len bytes at offset of a stored value's data. */
static void
read_slice(BfCallSite *site, struct varlena *ptr, uint64 offset, int32 len,
		   uint8 *dst)
{
	struct varlena *slice = pg_detoast_datum_slice(ptr, (int32) offset, len);

	if (VARSIZE_ANY_EXHDR(slice) != len)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("bloomfilter value is corrupted"),
				 errdetail("A slice of %d bytes at offset " UINT64_FORMAT " returned %zu bytes.",
						   len, offset, (size_t) VARSIZE_ANY_EXHDR(slice))));
	memcpy(dst, VARDATA_ANY(slice), len);
	pfree(slice);
	site->sliced_bytes += SLICE_COST_BYTES;
}

void
bf_call_site_probe(FunctionCallInfo fcinfo, BfCallSite *site, int argno,
				   int nchecks, BfProbe *p)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *ptr = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast;
	uint64		size;
	uint64		planned;

	p->site = site;
	p->stored = NULL;

	/* the common case first: the stored value cached here, once per row */
	if (VARATT_IS_EXTERNAL_ONDISK(ptr) && site->have_value &&
		memcmp(VARDATA_EXTERNAL(ptr), &site->toast, sizeof(site->toast)) == 0)
	{
		p->hdr = &site->value.hdr;
		p->bits = site->value.bits;
		return;
	}

	if (VARATT_IS_EXTERNAL_ONDISK(ptr))
	{
		VARATT_EXTERNAL_GET_POINTER(toast, ptr);
		track_stored(site, &toast);
		size = (uint64) toast_raw_datum_size(d) - VARHDRSZ;

		/*
		 * Slice a large uncompressed value while the slices read so far and
		 * those this call plans cost less than reading it whole.
		 */
		planned = (uint64) nchecks * SLICE_COST_BYTES;
		if (!site->have_value && size > SLICE_MIN_VALUE_BYTES &&
			!VARATT_EXTERNAL_IS_COMPRESSED(toast) &&
			site->sliced_bytes + planned < size)
		{
			if (!site->have_header)
			{
				uint8		buf[BF_HEADER_SIZE];
				char		msg[256];

				read_slice(site, ptr, 0, BF_HEADER_SIZE, buf);
				if (bf_header_decode_prefix(buf, sizeof(buf), size,
											&site->header, msg, sizeof(msg)) != BF_OK)
					ereport(ERROR,
							(errcode(ERRCODE_DATA_CORRUPTED),
							 errmsg("bloomfilter value is corrupted"),
							 errdetail("%s.", msg)));
				site->have_header = true;
			}
			p->hdr = &site->header;
			p->bits = NULL;
			p->stored = ptr;
			return;
		}
	}

	bf_call_site_value(fcinfo, site, argno, &p->own);
	p->hdr = &p->own.hdr;
	p->bits = p->own.bits;
}

bool
bf_probe_test(BfProbe *p, BfHash hash)
{
	if (p->bits != NULL)
		return bf_test_hash(p->hdr, p->bits, hash);

	if (p->hdr->layout == BF_LAYOUT_CLASSIC)
	{
		BfClassicIter it;

		bf_classic_iter_init(&it, p->hdr->nbits, hash);
		for (int i = 0; i < p->hdr->hashes; i++)
		{
			uint64		x = bf_classic_iter_next(&it);
			uint8		byte;

			read_slice(p->site, p->stored, BF_HEADER_SIZE + (x >> 3), 1, &byte);
			if (!(byte & (1u << (x & 7))))
				return false;
		}
		return true;
	}
	else
	{
		uint8		block[BF_BLOCK_BYTES];
		uint64		b = bf_blocked_block(hash.lo, p->hdr->nbits / BF_BLOCK_BITS);

		read_slice(p->site, p->stored, BF_HEADER_SIZE + b * BF_BLOCK_BYTES,
				   BF_BLOCK_BYTES, block);
		/* the positions within a block depend only on the hash */
		return bf_blocked_test(block, BF_BLOCK_BITS, p->hdr->hashes, hash.lo);
	}
}
