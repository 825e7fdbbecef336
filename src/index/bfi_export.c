/*
 * bfi_export.c
 *		A guard's filter as a bloomfilter value, whole or as the parts that
 *		changed since a client's copy (bloom_guard_filter,
 *		bloom_guard_changes).
 *
 * The value is a scalable filter (family 4) whose layers are the guard's:
 * layer i's bits are the bit areas of its data pages, one after the other.
 * So a data page is one contiguous range of the value, and a client that
 * holds a copy can be brought up to date with the pages that changed.
 *
 * What changed is told by the pages' LSNs, which PostgreSQL keeps for every
 * WAL-logged page, and within a page by its change stamps.  A copy is
 * described by a token, taken before its pages were read: the system
 * identifier, the timeline, the guard's storage (database, tablespace and
 * relfilenumber: a database cloned from another keeps both the numbers and
 * the page LSNs of its files) and a WAL position P
 * (the flush position, or on a standby the replay position).  A change of
 * a page whose WAL record ends at or before P was made, under the page's
 * exclusive lock, before the copy read that page under its share lock: the
 * copy holds it.  So the copy misses only changes of pages whose LSN is past
 * P.  Within such a page, an insert stamps the unit of 4 blocks it changes
 * with the WAL insert position S it reads under the exclusive lock, before
 * its record: S < P (P is at most the insert position when it was read)
 * means the change began, and so (the lock being held until the LSN is
 * set) was visible to any reader, before P was read; the copy holds it.  So a later call sends the units stamped at or past P.  The
 * rules that make this safe:
 *	- a row's key is set in the guard before its transaction commits, so a
 *	  copy whose token was taken after a commit holds the keys of that row;
 *	- another system, timeline (a promotion, a restore) or file (REINDEX,
 *	  TRUNCATE, VACUUM FULL) is another history: the whole value is sent;
 *	- a guard whose changes are not WAL-logged (unlogged or temporary, or
 *	  created in the current transaction under wal_level = minimal) has no
 *	  LSNs to compare: its token has position 0, and a token of position 0
 *	  always gets the whole value;
 *	- a metapage changed since the token (a layer appended, a rebuild
 *	  started or finished) changes the value's shape: the whole value;
 *	- when the changed units are more than half the value, the whole value
 *	  is sent instead (one row);
 *	- a standby replays a change after its stamp was read on the primary,
 *	  so a standby's position says nothing of stamps: where the copy's
 *	  token or the server is a standby, whole pages are sent (every page
 *	  whose LSN is past the position: replay sets it after the change);
 *	- units a build or a rebuild wrote have stamp 0: a build makes a new
 *	  file, and a rebuild ends by changing the metapage, so no copy taken
 *	  before them is ever sent changes.
 * Every header (the outer one and each layer's, which hold the counts of
 * keys) is sent with the changes: they are 64 bytes each.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecovery.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"

#include "index/bf_index.h"
#include "value/bf_value.h"

/* What a copy of a guard's filter was taken at. */
typedef struct BfiToken
{
	uint64		sysid;
	TimeLineID	tli;
	Oid			db;				/* the guard's storage: database, */
	Oid			spc;			/* tablespace and relfilenumber (a
								 * database cloned from another keeps the
								 * same files and page LSNs) */
	Oid			file;
	XLogRecPtr	lsn;			/* InvalidXLogRecPtr: no WAL, no changes */
	bool		standby;		/* lsn is a standby's replay position */
} BfiToken;

/* Bytes of the bit area of one data page. */
#define PAGE_BITS_BYTES		((Size) BFI_BLOCKS_PER_PAGE * BF_BLOCK_BYTES)

static uint64
layer_nbits(const BfiLayer *layer)
{
	return (uint64) layer->npages * BFI_BLOCKS_PER_PAGE * BF_BLOCK_BITS;
}

/* Fill the header of layer i of the export. */
static void
layer_header(const BfiSummary *sum, uint32 i, BfHeader *h)
{
	const BfiLayer *layer = &sum->meta.layers[i];

	memset(h, 0, sizeof(*h));
	h->version = BF_FORMAT_VERSION;
	h->family = BF_FAMILY_BLOOM;
	h->layout = BF_LAYOUT_BLOCKED;
	h->key_kind = (uint8) sum->meta.key_kind;
	h->hashes = (uint16) layer->hashes;
	h->layers = 1;
	h->nbits = layer_nbits(layer);
	h->capacity = layer->capacity;
	h->target_fpr = layer->fpr;
	h->added = sum->added[i];
}

/* The outer header of the export, and the value's length in bytes. */
static uint64
outer_header(Relation index, const BfiSummary *sum, BfHeader *outer)
{
	uint64		bytes = BF_HEADER_SIZE;

	memset(outer, 0, sizeof(*outer));
	outer->version = BF_FORMAT_VERSION;
	outer->family = BF_FAMILY_SCALABLE;
	outer->layout = BF_LAYOUT_BLOCKED;
	outer->key_kind = (uint8) sum->meta.key_kind;
	outer->layers = sum->meta.nlayers;
	outer->capacity = sum->meta.capacity;
	outer->target_fpr = sum->meta.fpr;
	outer->growth = BFI_GROWTH;
	outer->ratio = BFI_RATIO;
	for (uint32 i = 0; i < sum->meta.nlayers; i++)
	{
		outer->nbits += layer_nbits(&sum->meta.layers[i]);
		outer->added += sum->added[i];
		bytes += BF_HEADER_SIZE + layer_nbits(&sum->meta.layers[i]) / 8;
	}
	if (bytes > BF_MAX_NEW_VALUE_BYTES - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the filter of index \"%s\" is too large for a bloomfilter value",
						RelationGetRelationName(index)),
				 errdetail("It takes %llu bytes; a value holds at most %zu.",
						   (unsigned long long) bytes, BF_MAX_NEW_VALUE_BYTES - VARHDRSZ)));
	return bytes;
}

/*
 * The value of the layers of sum->meta, their bits as the pages hold them
 * now; fills sum's counts.
 */
static struct varlena *
export_value(Relation index, BfiSummary *sum)
{
	BfHeader	outer;
	uint64		bytes;
	struct varlena *v;
	uint8	   *p;
	uint8	   *bits;
	uint64		nbits = 0;
	char		msg[256];

	for (uint32 i = 0; i < sum->meta.nlayers; i++)
		nbits += layer_nbits(&sum->meta.layers[i]);
	bits = palloc_extended(nbits / 8, MCXT_ALLOC_HUGE);
	bfi_summarize(index, sum, bits);
	bytes = outer_header(index, sum, &outer);

	v = palloc_extended(VARHDRSZ + bytes, MCXT_ALLOC_HUGE);
	SET_VARSIZE(v, VARHDRSZ + bytes);
	bf_header_encode(&outer, (uint8 *) VARDATA(v));
	p = (uint8 *) VARDATA(v) + BF_HEADER_SIZE;
	for (uint32 i = 0, off = 0; i < sum->meta.nlayers; i++)
	{
		BfHeader	h;

		layer_header(sum, i, &h);
		bf_header_encode(&h, p);
		memcpy(p + BF_HEADER_SIZE, bits + (Size) off * BF_BLOCK_BYTES, h.nbits / 8);
		p += BF_HEADER_SIZE + h.nbits / 8;
		off += h.nbits / BF_BLOCK_BITS;
	}
	pfree(bits);
	if (bf_header_decode((uint8 *) VARDATA(v), bytes, &outer, msg, sizeof(msg)) != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("the filter of index \"%s\" is not a valid value: %s",
						RelationGetRelationName(index), msg),
				 errhint("Please REINDEX it.")));
	return v;
}

struct varlena *
bfi_export_value(Relation index)
{
	BfiSummary *sum = palloc(sizeof(BfiSummary));
	struct varlena *v;

	bfi_meta_read(index, &sum->meta);
	v = export_value(index, sum);
	pfree(sum);
	return v;
}

/* ---------------------------------------------------------------- tokens */

/*
 * The end of the WAL inserted so far.  GetXLogInsertRecPtr() is where the
 * next record will start: when the last record filled its page, that is past
 * the next page's header, a position no flush can reach until a record is
 * written there (XLogFlush would fail "xlog flush request ... is not
 * satisfied").  The inserted WAL then ends at the page's start.
 */
static XLogRecPtr
inserted_wal_end(void)
{
	XLogRecPtr	pos = GetXLogInsertRecPtr();

	if (XLogSegmentOffset(pos, wal_segment_size) == SizeOfXLogLongPHD)
		return pos - SizeOfXLogLongPHD;
	if (pos % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		return pos - SizeOfXLogShortPHD;
	return pos;
}

/* The token of a copy whose pages are read from now on. */
static void
token_now(Relation index, BfiToken *t)
{
	t->sysid = GetSystemIdentifier();
	t->db = bf_rel_dboid(index);
	t->spc = bf_rel_spcoid(index);
	t->file = bf_rel_filenumber(index);
	t->standby = RecoveryInProgress();
	if (t->standby)
		t->lsn = GetXLogReplayRecPtr(&t->tli);
	else
	{
		/*
		 * The flush position, not the insert position: WAL past it may be
		 * lost in a crash, and its positions then given to other records,
		 * which a copy at such a position would never be sent.  Positions
		 * up to the flush position are never reused.  Flushed first (as a
		 * commit does), so that changes made before the call count as held.
		 */
		XLogFlush(inserted_wal_end());
		t->lsn = GetFlushRecPtr(&t->tli);
	}
	if (!RelationNeedsWAL(index))
		t->lsn = InvalidXLogRecPtr;
}

static text *
token_text(const BfiToken *t)
{
	return cstring_to_text(psprintf(UINT64_FORMAT "/%u/%u/%u/%u/%X/%X/%c", t->sysid, t->tli,
									t->db, t->spc, t->file, LSN_FORMAT_ARGS(t->lsn),
									t->standby ? 's' : 'p'));
}

#define TOKEN_FIELDS	8

/*
 * Field i of a token, [s, e): decimal without sign or leading zeros up to
 * max (hex false), or upper-case hexadecimal of at most 8 digits (hex true).
 */
static bool
token_field(const char *s, const char *e, bool hex, uint64 max, uint64 *out)
{
	uint64		v = 0;

	if (e == s || (*s == '0' && e - s > 1) || (hex && e - s > 8))
		return false;
	for (const char *p = s; p < e; p++)
	{
		int			d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (hex && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return false;
		if (v > (max - d) / (hex ? 16 : 10))
			return false;
		v = v * (hex ? 16 : 10) + d;
	}
	*out = v;
	return true;
}

/*
 * Parse a token, as token_text writes it and nothing else; false for text
 * that is not one.
 */
static bool
token_read(const char *s, BfiToken *t)
{
	static const uint64 max[TOKEN_FIELDS - 1] = {
		PG_UINT64_MAX, PG_UINT32_MAX, PG_UINT32_MAX, PG_UINT32_MAX, PG_UINT32_MAX,
		PG_UINT32_MAX, PG_UINT32_MAX
	};
	uint64		v[TOKEN_FIELDS - 1];
	const char *p = s;

	for (int i = 0; i < TOKEN_FIELDS - 1; i++)
	{
		const char *e = strchr(p, '/');

		if (e == NULL || !token_field(p, e, i >= 5, max[i], &v[i]))
			return false;
		p = e + 1;
	}
	if ((p[0] != 'p' && p[0] != 's') || p[1] != '\0')
		return false;
	t->sysid = v[0];
	t->tli = (TimeLineID) v[1];
	t->db = (Oid) v[2];
	t->spc = (Oid) v[3];
	t->file = (Oid) v[4];
	t->lsn = (v[5] << 32) | v[6];
	t->standby = p[0] == 's';
	return true;
}

/* Parse a token; an error for text that is not one. */
static void
token_parse(const char *s, BfiToken *t)
{
	if (!token_read(s, t))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid guard filter version \"%s\"", s),
				 errdetail("A version is what bloom_guard_changes returned, for example \"7301234567890123456/1/5/1663/16384/0/1A2B3C4/p\"."),
				 errhint("Pass NULL to get the whole filter.")));
}

/* ---------------------------------------------------------------- changes */

/* One changed range of the value, to send. */
typedef struct BfiPart
{
	uint64		offset;
	bytea	   *bytes;
} BfiPart;

static bytea *
bytes_of(const void *p, Size len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), p, len);
	return b;
}

/*
 * Append to parts the range [offset, offset + len) of a page's bits, joined
 * to the last part when it ends there.
 */
static void
add_range(List **parts, uint64 offset, const uint8 *bits, Size len)
{
	BfiPart    *last = *parts ? (BfiPart *) llast(*parts) : NULL;
	Size		had;

	if (last != NULL && last->offset + (VARSIZE(last->bytes) - VARHDRSZ) == offset)
	{
		had = VARSIZE(last->bytes) - VARHDRSZ;
		last->bytes = repalloc(last->bytes, VARHDRSZ + had + len);
		SET_VARSIZE(last->bytes, VARHDRSZ + had + len);
		memcpy(VARDATA(last->bytes) + had, bits, len);
		return;
	}
	last = palloc(sizeof(BfiPart));
	last->offset = offset;
	last->bytes = bytes_of(bits, len);
	*parts = lappend(*parts, last);
}

/*
 * The units of layer i changed since a copy taken at position lsn, appended
 * to parts (their offsets from the layer's bits at offset base): on each
 * page whose LSN is past lsn, the units whose stamp is at or past it.  (A
 * unit stamped before lsn was changed, under the page's exclusive lock,
 * before the copy's position was read, so before the copy read the page.)
 * Without by_unit, every unit of such a page.  Counts the layer's keys in
 * sum and adds the bytes to *sent.
 */
static void
layer_changes(Relation index, BfiSummary *sum, uint32 i, uint64 base,
			  XLogRecPtr lsn, bool by_unit, List **parts, uint64 *sent)
{
	const BfiLayer *layer = &sum->meta.layers[i];

	sum->added[i] = 0;
	for (uint32 p = 0; p < layer->npages; p++)
	{
		BlockNumber blkno = layer->start + p;
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		bfi_page_check(index, blkno, page, BFI_PAGE_DATA);
		if (!PageIsNew(page))
		{
			sum->added[i] += BfiPageGetOpaque(page)->added;
			if (PageGetLSN(page) > lsn)
			{
				const uint64 *stamps = BfiPageGetStamps(page);

				for (uint32 u = 0; u < BFI_UNITS_PER_PAGE; u++)
				{
					uint32		first = u * BFI_UNIT_BLOCKS;
					uint32		n = Min(BFI_UNIT_BLOCKS, BFI_BLOCKS_PER_PAGE - first);

					if (by_unit && stamps[u] < lsn)
						continue;
					add_range(parts, base + (uint64) p * PAGE_BITS_BYTES + (uint64) first * BF_BLOCK_BYTES,
							  BfiPageGetBits(page) + (Size) first * BF_BLOCK_BYTES,
							  (Size) n * BF_BLOCK_BYTES);
					*sent += (uint64) n * BF_BLOCK_BYTES;
				}
			}
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The changes since lsn, as parts: the outer header, then per layer its
 * header and its changed pages.  NIL when they would be more than half the
 * value's bytes (the caller sends the whole value).
 */
static List *
changes_since(Relation index, BfiSummary *sum, XLogRecPtr lsn, bool by_unit)
{
	List	   *pages = NIL;
	List	   *parts = NIL;
	uint64		sent = 0;
	uint64		offset = BF_HEADER_SIZE;
	uint64		bytes;
	BfHeader	h;
	uint8		hdr[BF_HEADER_SIZE];
	BfiPart    *part;

	for (uint32 i = 0; i < sum->meta.nlayers; i++)
	{
		layer_changes(index, sum, i, offset + BF_HEADER_SIZE, lsn, by_unit, &pages, &sent);
		offset += BF_HEADER_SIZE + layer_nbits(&sum->meta.layers[i]) / 8;
	}
	bytes = outer_header(index, sum, &h);
	if (sent > bytes / 2)
		return NIL;

	bf_header_encode(&h, hdr);
	part = palloc(sizeof(BfiPart));
	part->offset = 0;
	part->bytes = bytes_of(hdr, BF_HEADER_SIZE);
	parts = lappend(parts, part);
	offset = BF_HEADER_SIZE;
	for (uint32 i = 0; i < sum->meta.nlayers; i++)
	{
		layer_header(sum, i, &h);
		bf_header_encode(&h, hdr);
		part = palloc(sizeof(BfiPart));
		part->offset = offset;
		part->bytes = bytes_of(hdr, BF_HEADER_SIZE);
		parts = lappend(parts, part);
		offset += BF_HEADER_SIZE + h.nbits / 8;
	}
	return list_concat(parts, pages);
}

/* May a copy of token since be brought up to date from the pages? */
static bool
token_current(const BfiToken *since, const BfiToken *now, XLogRecPtr meta_lsn)
{
	return since->sysid == now->sysid && since->tli == now->tli &&
		since->db == now->db && since->spc == now->spc && since->file == now->file && !XLogRecPtrIsInvalid(since->lsn) &&
		!XLogRecPtrIsInvalid(now->lsn) && since->lsn <= now->lsn &&
		meta_lsn <= since->lsn;
}

static void
put_row(ReturnSetInfo *rsinfo, text *version, bool whole, uint64 offset,
		bytea *bytes)
{
	Datum		values[4];
	bool		nulls[4] = {0};

	values[0] = PointerGetDatum(version);
	values[1] = BoolGetDatum(whole);
	values[2] = Int64GetDatum((int64) offset);
	values[3] = PointerGetDatum(bytes);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

void
bfi_export_changes(FunctionCallInfo fcinfo, Relation index, const char *since)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BfiSummary *sum = palloc(sizeof(BfiSummary));
	BfiToken	now;
	BfiToken	then;
	Buffer		metabuf;
	XLogRecPtr	meta_lsn;
	List	   *parts = NIL;
	ListCell   *lc;
	text	   *version;

	memset(&then, 0, sizeof(then));
	if (since != NULL)
		token_parse(since, &then);
	InitMaterializedSRF(fcinfo, 0);

	/* the token first, then the metapage and the pages */
	token_now(index, &now);
	metabuf = bfi_meta_read_locked(index, &sum->meta);
	meta_lsn = PageGetLSN(BufferGetPage(metabuf));
	UnlockReleaseBuffer(metabuf);
	version = token_text(&now);

	if (since != NULL && token_current(&then, &now, meta_lsn))
		parts = changes_since(index, sum, then.lsn, !then.standby && !now.standby);
	if (parts == NIL)
	{
		put_row(rsinfo, version, true, 0, (bytea *) export_value(index, sum));
		return;
	}
	foreach(lc, parts)
	{
		BfiPart    *part = (BfiPart *) lfirst(lc);

		put_row(rsinfo, version, false, part->offset, part->bytes);
	}
}
