/*
 * bf_site.c
 *		Call sites: the state a function keeps in fn_extra (the key's type,
 *		the stored values it references in the cache, the ones it reads by
 *		slicing), and how a check finds the filter it reads: in memory, in
 *		the cache, or a slice of the stored value.
 *
 * A call site references entries of the cache (BfSiteRef: the entry and its
 * serial number, so that a reused slot is recognized) and pins the one it
 * uses now.  A large stored value not in the cache is first read by
 * slicing (the header and the block a check needs) until the slices would
 * have cost as much as the whole value, then read whole into the cache.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "fmgr.h"
#include "utils/memutils.h"

#include "cache/bf_cache_int.h"
#include "value/bf_value.h"

/* A stored value at most this large is read whole at once. */
#define SLICE_MIN_VALUE_BYTES	(64 * 1024)

/*
 * What one slice read costs, in bytes of a full read.  A slice fetches the
 * TOAST chunks holding the bytes through the TOAST index: about 10 us here,
 * while a full read of a 62 MB value takes about 50 ms (0.8 us per kB).
 */
#define SLICE_COST_BYTES		(12 * 1024)

/* fn_mcxt of a call site is going away: let go of its pin. */
static void
site_release(void *arg)
{
	BfCallSite *site = (BfCallSite *) arg;

	if (site->pinned)
	{
		site->pinned = false;
		bf_cache_unpin(site->refs[0].entry);
	}
	site->nrefs = 0;
}

BfCallSite *
bf_call_site_setup(FunctionCallInfo fcinfo)
{
	BfCallSite *site = (BfCallSite *) fcinfo->flinfo->fn_extra;

	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfCallSite));
		fcinfo->flinfo->fn_extra = site;
	}
	if (!site->release_set)
	{
		site->release.func = site_release;
		site->release.arg = site;
		MemoryContextRegisterResetCallback(fcinfo->flinfo->fn_mcxt, &site->release);
		site->release_set = true;
	}
	return site;
}

const BfKeyType *
bf_call_site_key(FunctionCallInfo fcinfo, BfCallSite *site, Oid keytype,
				 int filter_argno)
{
	Oid			collation = PG_GET_COLLATION();

	/*
	 * The last key type resolved for a caller without call expressions: that
	 * caller (Citus) gives us a new FmgrInfo, so a new call site, per row.
	 */
	static BfKeyType bare_last;

	if (site->key.typid != keytype || site->key.collation != collation)
	{
		Oid			filter_typid = get_fn_expr_argtype(fcinfo->flinfo, filter_argno);
		bool		bare = fcinfo->flinfo->fn_expr == NULL;

		if (bare && bare_last.typid == keytype && bare_last.collation == collation &&
			OidIsValid(keytype))
		{
			site->key = bare_last;
			return &site->key;
		}
		/* reset first: a failed init must not leave a half-set entry */
		site->key.typid = InvalidOid;
		bf_key_type_init(&site->key, keytype, collation, filter_typid);
		if (bare)
			bare_last = site->key;
	}
	return &site->key;
}

/*
 * Whether a call site's reference is to the live entry of this stored value,
 * one that may answer without a check.
 */
static inline bool
ref_matches(const BfSiteRef *r, const void *toast)
{
	const BfCacheEntry *e = r->entry;

	return e->serial == r->serial && bf_cache_entry_answers(e) &&
		memcmp(&e->toast, toast, sizeof(struct varatt_external)) == 0;
}

/*
 * Make e the call site's current stored value (refs[0], pinned); the
 * previous one stays referenced, unpinned, while there is room.
 */
static void
site_adopt(BfCallSite *site, BfCacheEntry *e)
{
	BfSiteRef	ref;
	int			i;

	ref.entry = e;
	ref.serial = e->serial;
	bf_cache_pin(e);				/* before the unpin: e may be the same */
	if (site->pinned)
	{
		site->pinned = false;
		bf_cache_unpin(site->refs[0].entry);
	}
	/* drop e's older reference, if any, and the stale ones */
	for (i = 0; i < site->nrefs;)
	{
		BfSiteRef  *r = &site->refs[i];

		if (r->entry == e || r->entry->serial != r->serial ||
			r->entry->state != ENTRY_LIVE)
		{
			memmove(r, r + 1, (site->nrefs - i - 1) * sizeof(BfSiteRef));
			site->nrefs--;
		}
		else
			i++;
	}
	if (site->nrefs == BF_SITE_REFS)
		site->nrefs--;
	memmove(&site->refs[1], &site->refs[0], site->nrefs * sizeof(BfSiteRef));
	site->refs[0] = ref;
	site->nrefs++;
	site->pinned = true;
}

/* The entry of a stored value for this call site: referenced, cached or read. */
static BfCacheEntry *
site_entry(BfCallSite *site, struct varlena *ptr,
		   const struct varatt_external *toast, bool read)
{
	BfCacheEntry *e;

	if (site->nrefs > 0 && ref_matches(&site->refs[0], toast))
		return site->refs[0].entry;
	for (int i = 1; i < site->nrefs; i++)
	{
		if (ref_matches(&site->refs[i], toast))
		{
			e = site->refs[i].entry;
			bf_cache_touch(e);
			site_adopt(site, e);
			return e;
		}
	}
	e = bf_cache_lookup(toast);
	if (e == NULL)
	{
		if (!read)
			return NULL;
		e = bf_cache_load(ptr, toast);
	}
	site_adopt(site, e);
	return e;
}

/*
 * Open a value in memory (not stored on disk); its header is validated
 * again only when it differs from the last one seen here (a scalable
 * filter's layers, whose headers follow it, always are: a few dozen at most).
 */
static void
open_in_memory(BfCallSite *site, Datum d, BfValue *v)
{
	struct varlena *raw = PG_DETOAST_DATUM(d);

	if (site->have_inline && VARSIZE(raw) == site->inline_size &&
		site->inline_hdr.family != BF_FAMILY_SCALABLE &&
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
}

/*
 * Open the filter in argument argno for reading all of it; a stored value
 * not in the cache is read only if read is true (else false is returned).
 */
static bool
site_value(FunctionCallInfo fcinfo, BfCallSite *site, int argno, BfValue *v,
		   bool read)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *ptr = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast;
	BfCacheEntry *e;

	/*
	 * An expanded value (a PL/pgSQL variable, a sized aggregate's result) is
	 * read where it is.
	 */
	if (bf_expanded_open(d, v) || bf_agg_batch_open(d, v))
		return true;

	/* A value in memory or inline in its row costs nothing to open. */
	if (!VARATT_IS_EXTERNAL_ONDISK(ptr))
	{
		open_in_memory(site, d, v);
		return true;
	}

	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	e = site_entry(site, ptr, &toast, read);
	if (e == NULL)
		return false;
	*v = e->value;
	return true;
}

void
bf_call_site_value(FunctionCallInfo fcinfo, BfCallSite *site, int argno,
				   BfValue *v)
{
	(void) site_value(fcinfo, site, argno, v, true);
}

bool
bf_call_site_peek(FunctionCallInfo fcinfo, BfCallSite *site, int argno,
				  BfValue *v)
{
	return site_value(fcinfo, site, argno, v, false);
}

/* Read len bytes at offset of a stored value's data. */
static void
read_slice(BfSliceState *st, struct varlena *ptr, uint64 offset, int32 len,
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
	st->sliced_bytes += SLICE_COST_BYTES;
}

/*
 * The slicing state of a stored value at this call site, made the most
 * recent; a new one replaces the least recently used.
 */
static BfSliceState *
site_slice_state(BfCallSite *site, const struct varatt_external *toast)
{
	BfSliceState st;
	int			i;

	for (i = 0; i < site->nslices; i++)
	{
		if (memcmp(&site->slices[i].toast, toast, sizeof(*toast)) == 0)
			break;
	}
	if (i < site->nslices)
		st = site->slices[i];
	else
	{
		memset(&st, 0, sizeof(st));
		st.toast = *toast;
		if (site->nslices < BF_SITE_REFS)
			site->nslices++;
		i = site->nslices - 1;
	}
	memmove(&site->slices[1], &site->slices[0], i * sizeof(BfSliceState));
	site->slices[0] = st;
	return &site->slices[0];
}

/* Forget the slicing state of a stored value now read whole. */
static void
site_slice_forget(BfCallSite *site, const struct varatt_external *toast)
{
	for (int i = 0; i < site->nslices; i++)
	{
		if (memcmp(&site->slices[i].toast, toast, sizeof(*toast)) == 0)
		{
			memmove(&site->slices[i], &site->slices[i + 1],
					(site->nslices - i - 1) * sizeof(BfSliceState));
			site->nslices--;
			return;
		}
	}
}


void
bf_call_site_probe(FunctionCallInfo fcinfo, BfCallSite *site, int argno,
				   int nchecks, BfProbe *p)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *ptr = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast;
	BfCacheEntry *e;
	uint64		size;
	uint64		planned;

	p->slice = NULL;
	p->stored = NULL;

	if (!VARATT_IS_EXTERNAL_ONDISK(ptr))
	{
		bf_call_site_value(fcinfo, site, argno, &p->own);
		p->hdr = &p->own.hdr;
		p->bits = p->own.bits;
		return;
	}

	/* the common case first: the call site's current value, once per row */
	if (site->nrefs > 0 && ref_matches(&site->refs[0], VARDATA_EXTERNAL(ptr)))
	{
		e = site->refs[0].entry;
		p->hdr = &e->value.hdr;
		p->bits = e->value.bits;
		return;
	}

	/* referenced here or cached by another call site: no read */
	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	e = site_entry(site, ptr, &toast, false);
	if (e == NULL)
	{
		size = (uint64) toast.va_rawsize - VARHDRSZ;

		/*
		 * Slice a large uncompressed value while the slices read so far and
		 * those this call plans cost less than reading it whole.
		 */
		planned = (uint64) nchecks * SLICE_COST_BYTES;
		if (size > SLICE_MIN_VALUE_BYTES &&
			!VARATT_EXTERNAL_IS_COMPRESSED(toast))
		{
			BfSliceState *st = site_slice_state(site, &toast);

			if (st->sliced_bytes + planned < size)
			{
				if (!st->have_header)
				{
					uint8		buf[BF_HEADER_SIZE];
					char		msg[256];

					read_slice(st, ptr, 0, BF_HEADER_SIZE, buf);
					if (bf_header_decode_prefix(buf, sizeof(buf), size,
												&st->header, msg, sizeof(msg)) != BF_OK)
						ereport(ERROR,
								(errcode(ERRCODE_DATA_CORRUPTED),
								 errmsg("bloomfilter value is corrupted"),
								 errdetail("%s.", bf_sentence(msg))));
					st->have_header = true;
				}
				p->hdr = &st->header;
				p->bits = NULL;
				p->stored = ptr;
				p->slice = st;
				return;
			}
		}
		e = site_entry(site, ptr, &toast, true);
		site_slice_forget(site, &toast);
	}
	p->hdr = &e->value.hdr;
	p->bits = e->value.bits;
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

			read_slice(p->slice, p->stored, BF_HEADER_SIZE + (x >> 3), 1, &byte);
			if (!(byte & (1u << (x & 7))))
				return false;
		}
		return true;
	}
	else
	{
		uint8		block[BF_BLOCK_BYTES];
		uint64		b = bf_blocked_block(hash.lo, p->hdr->nbits / BF_BLOCK_BITS);

		read_slice(p->slice, p->stored, BF_HEADER_SIZE + b * BF_BLOCK_BYTES,
				   BF_BLOCK_BYTES, block);
		/* the positions within a block depend only on the hash */
		return bf_blocked_test(block, BF_BLOCK_BITS, p->hdr->hashes, hash.lo);
	}
}
