/*
 * bf_io.c
 *		Text and binary I/O of bloomfilter values, and the bytea casts.
 *
 * send/recv and the bytea casts carry the portable byte format unchanged,
 * always in memory of their own: a copy, never the argument.  Text is a
 * readable header and the bits in base64 (see bf_text.h).  Text input, recv
 * and the cast from bytea are untrusted: no field or length read from them
 * sizes an allocation before it is validated.
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"

#include "core/bf_core.h"
#include "value/bf_datum.h"
#include "value/bf_value_mem.h"

PG_FUNCTION_INFO_V1(bloomfilter_in);
PG_FUNCTION_INFO_V1(bloomfilter_out);
PG_FUNCTION_INFO_V1(bloomfilter_recv);
PG_FUNCTION_INFO_V1(bloomfilter_send);
PG_FUNCTION_INFO_V1(bloom_to_bytea);
PG_FUNCTION_INFO_V1(bloom_from_bytea);

/* Input errors: BF_INPUT_ERROR (bf_compat.h), soft on PostgreSQL 16+. */
#define INPUT_ERROR BF_INPUT_ERROR

/* A new value holding the given buffer (format bytes), validated. */
static struct varlena *
value_from_bytes(const char *data, size_t len, char *msg, size_t msglen,
				 BfStatus *status)
{
	BfHeader	h;
	struct varlena *raw;

	*status = bf_header_decode((const uint8_t *) data, len, &h, msg, msglen);
	if (*status != BF_OK)
		return NULL;
	raw = (struct varlena *) palloc(VARHDRSZ + len);
	SET_VARSIZE(raw, VARHDRSZ + len);
	memcpy(VARDATA(raw), data, len);
	return raw;
}

Datum
bloomfilter_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	char		msg[256];
	BfStatus	st;
	BfHeader	h;
	const char *data;
	size_t		datalen;
	struct varlena *raw;
	Size		total;

	st = bf_text_parse_header(str, &h, &data, &datalen, msg, sizeof(msg));
	/* A header describing more than a value can hold: say so, whatever data follows. */
	if ((st == BF_OK || st == BF_ERR_LENGTH) &&
		bf_value_payload_bytes(&h) > BF_MAX_PAYLOAD_BYTES)
		INPUT_ERROR(fcinfo,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("bloomfilter of " UINT64_FORMAT " bits is too large", h.nbits),
					 errdetail("A bloomfilter value is at most 1 GB.")));
	if (st != BF_OK)
		INPUT_ERROR(fcinfo,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for type bloomfilter"),
					 errdetail("%s.", bf_sentence(msg)),
					 errhint("The text form is what bloomfilter output produces: \"version=2 layout=... data=<base64>\".")));

	total = VARHDRSZ + BF_HEADER_SIZE + (Size) bf_value_payload_bytes(&h);

	raw = (struct varlena *) palloc(total);
	SET_VARSIZE(raw, total);
	bf_header_encode(&h, (uint8_t *) VARDATA(raw));
	if (bf_text_decode_payload(data, datalen,
							   (uint8_t *) VARDATA(raw) + BF_HEADER_SIZE,
							   bf_value_payload_bytes(&h), msg, sizeof(msg)) != BF_OK ||
		(h.family == BF_FAMILY_SCALABLE &&
		 bf_header_decode((const uint8_t *) VARDATA(raw), total - VARHDRSZ,
						  NULL, msg, sizeof(msg)) != BF_OK))
		INPUT_ERROR(fcinfo,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for type bloomfilter"),
					 errdetail("%s.", bf_sentence(msg))));
	PG_RETURN_POINTER(raw);
}

Datum
bloomfilter_out(PG_FUNCTION_ARGS)
{
	BfValue		v;
	size_t		len;
	char	   *out;

	bf_value_from_datum(PG_GETARG_DATUM(0), false, &v);
	len = bf_text_length(&v.hdr);
	if (len >= MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloomfilter of " UINT64_FORMAT " bits is too large for text output",
						v.hdr.nbits),
				 errhint("Use binary output (COPY ... WITH (FORMAT binary)) or the cast to bytea.")));
	out = palloc(len + 1);
	bf_text_render(&v.hdr, v.bits, out);
	PG_RETURN_CSTRING(out);
}

Datum
bloomfilter_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	size_t		len = buf->len - buf->cursor;
	char		msg[256];
	BfStatus	status;
	struct varlena *raw;

	raw = value_from_bytes(buf->data + buf->cursor, len, msg, sizeof(msg), &status);
	if (raw == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary bloomfilter value"),
				 errdetail("%s.", bf_sentence(msg))));
	buf->cursor = buf->len;
	PG_RETURN_POINTER(raw);
}

/*
 * send and the cast to bytea: the format bytes, in a new bytea with a 4-byte
 * header.  Never the argument itself: callers free what a send function
 * returns (array_send, record_send, pgoutput in binary mode), and an inline
 * value lies inside their array or tuple.  PG_DETOAST_DATUM_COPY copies once
 * in every case: detoasting (or flattening an expanded value, or widening a
 * 1-byte header) already yields new memory, else the value is copied.
 */
Datum
bloomfilter_send(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P((bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}

Datum
bloom_to_bytea(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P((bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}

/* the cast from bytea: a validated copy, as the cast to bytea gives one */
Datum
bloom_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_P_COPY(0);
	char		msg[256];
	BfHeader	h;

	if (bf_header_decode((const uint8_t *) VARDATA(b), VARSIZE(b) - VARHDRSZ,
						 &h, msg, sizeof(msg)) != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("bytea is not a valid bloomfilter value"),
				 errdetail("%s.", bf_sentence(msg)),
				 errhint("The bytes must be the portable format, as produced by the cast of a bloomfilter to bytea.")));
	PG_RETURN_POINTER(b);
}
