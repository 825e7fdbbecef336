/*
 * bf_format.c
 *		Encode, decode and validate the bloomfilter byte format.
 *
 * The layout is documented in bf_format.h.  bf_header_decode is the single
 * entry point for untrusted binary input (recv, the bytea cast, fuzzers): it
 * checks every field and the total length before anything else looks at the
 * payload, and it never reads past len.  For a scalable value (family 4)
 * that includes its layers (bf_scalable_check_layers): their format is
 * checked here, below the filter built on them (bf_scalable.c).  Here too is
 * the shortest form of a double (bf_format_double) its messages, the text
 * form and bloom_info write.
 *
 * The lowest file of the core: it calls no other.  Free of PostgreSQL.
 */
#include "core/bf_format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Offsets of the header fields (see bf_format.h). */
#define OFF_MAGIC		0
#define OFF_VERSION		4
#define OFF_FAMILY		5
#define OFF_LAYOUT		6
#define OFF_KEY_KIND	7
#define OFF_HASHES		8
#define OFF_FLAGS		10
#define OFF_LAYERS		12
#define OFF_NBITS		16
#define OFF_CAPACITY	24
#define OFF_FPR			32
#define OFF_ADDED		40
#define OFF_RESERVED	48
#define OFF_GROWTH		48		/* scalable only */
#define OFF_ZERO		52		/* scalable only: zero */
#define OFF_RATIO		56		/* scalable only */

static const char *const layout_names[] = {
	NULL,						/* 0: not a layout */
	"blocked",					/* BF_LAYOUT_BLOCKED */
	"classic",					/* BF_LAYOUT_CLASSIC */
	"counting"					/* BF_LAYOUT_COUNTING */
};

static const char *const key_kind_names[] = {
	"none",						/* BF_KEY_NONE */
	"integer",					/* BF_KEY_INTEGER */
	"text",						/* BF_KEY_TEXT */
	"bytea",					/* BF_KEY_BYTEA */
	"uuid",						/* BF_KEY_UUID */
	"boolean",					/* BF_KEY_BOOLEAN */
	"float",					/* BF_KEY_FLOAT */
	"numeric",					/* BF_KEY_NUMERIC */
	"date",						/* BF_KEY_DATE */
	"timestamp",				/* BF_KEY_TIMESTAMP */
	"timestamptz"				/* BF_KEY_TIMESTAMPTZ */
};

/* Guard against someone appending to the enums without naming the value. */
typedef char bf_layout_names_check[(sizeof(layout_names) / sizeof(layout_names[0]) == BF_LAYOUT_MAX + 1) ? 1 : -1];
typedef char bf_key_kind_names_check[(sizeof(key_kind_names) / sizeof(key_kind_names[0]) == BF_KEY_KIND_MAX + 1) ? 1 : -1];

/* Little-endian readers and writers for the narrower fields. */
static uint16_t
read_u16le(const uint8_t *p)
{
	return (uint16_t) (p[0] | (p[1] << 8));
}

static uint32_t
read_u32le(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

static void
write_u16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static void
write_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

/* The IEEE-754 bits of a double go through a uint64 (both little-endian). */
static double
read_f64le(const uint8_t *p)
{
	uint64_t	u = bf_read_u64le(p);
	double		d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

static void
write_f64le(uint8_t *p, double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	bf_write_u64le(p, u);
}

/* Shortest "%.*g" form that reads back as d (bf_format.h). */
int
bf_format_double(double d, char *buf, size_t buflen)
{
	char		tmp[64];
	int			p;

	if (isnan(d))
		snprintf(tmp, sizeof(tmp), "nan");
	else if (isinf(d))
		snprintf(tmp, sizeof(tmp), d < 0 ? "-inf" : "inf");
	else
	{
		for (p = 1; p <= 17; p++)
		{
			snprintf(tmp, sizeof(tmp), "%.*g", p, d);
			if (strtod(tmp, NULL) == d)
				break;
		}
		/* p = 17 always round-trips a binary64; the loop ends there */
	}
	if (buf != NULL && buflen > 0)
		snprintf(buf, buflen, "%s", tmp);
	return (int) strlen(tmp);
}

const char *
bf_layout_name(int layout)
{
	if (layout < 1 || layout > BF_LAYOUT_MAX)
		return NULL;
	return layout_names[layout];
}

int
bf_layout_from_name(const char *name)
{
	int			i;

	if (name == NULL)
		return -1;
	for (i = 1; i <= BF_LAYOUT_MAX; i++)
	{
		if (strcmp(name, layout_names[i]) == 0)
			return i;
	}
	return -1;
}

const char *
bf_key_kind_name(int key_kind)
{
	if (key_kind < 0 || key_kind > BF_KEY_KIND_MAX)
		return NULL;
	return key_kind_names[key_kind];
}

int
bf_key_kind_from_name(const char *name)
{
	int			i;

	if (name == NULL)
		return -1;
	for (i = 0; i <= BF_KEY_KIND_MAX; i++)
	{
		if (strcmp(name, key_kind_names[i]) == 0)
			return i;
	}
	return -1;
}

/*
 * Family 4: the growth and ratio fields of the outer header, and the
 * layers' capacities and rates (bf_format.h).
 */
BfStatus
bf_scalable_check_growth(uint32_t growth, double ratio, char *msg, size_t msglen)
{
	char		num[40];

	if (growth < BF_MIN_GROWTH || growth > BF_MAX_GROWTH)
	{
		if (msg)
			snprintf(msg, msglen, "growth %lu is out of range %d..%d",
					 (unsigned long) growth, BF_MIN_GROWTH, BF_MAX_GROWTH);
		return BF_ERR_GROWTH;
	}
	if (!isfinite(ratio) || !(ratio > 0.0) || !(ratio < 1.0))
	{
		if (msg)
		{
			if (isfinite(ratio))
				bf_format_double(ratio, num, sizeof(num));
			else
				snprintf(num, sizeof(num), "%g", ratio);
			snprintf(msg, msglen, "ratio %s is out of range (0, 1)", num);
		}
		return BF_ERR_RATIO;
	}
	return BF_OK;
}

double
bf_scalable_layer_fpr(double fpr, double ratio, uint32_t i)
{
	double		t = fpr * (1.0 - ratio);

	while (i-- > 0)
		t *= ratio;
	return t;
}

bool
bf_scalable_layer_capacity(uint64_t capacity, uint32_t growth, uint32_t i,
						   uint64_t *out)
{
	uint64_t	c = capacity;

	while (i-- > 0)
	{
		if (c > UINT64_MAX / growth)
			return false;
		c *= growth;
	}
	*out = c;
	return true;
}

/*
 * Validate the fields of a decoded (or parsed) header.  The checks run in
 * the order of the fields in the byte format, so the first bad field is the
 * one reported.
 */
BfStatus
bf_header_check(const BfHeader *h, char *msg, size_t msglen)
{
	char		numbuf[40];

	if (msg != NULL && msglen > 0)
		msg[0] = '\0';

	if (!bf_format_version_known(h->version))
	{
		if (msg)
			snprintf(msg, msglen,
					 "unrecognized format version %u (this build reads versions %d to %d)",
					 (unsigned) h->version, BF_FORMAT_VERSION_MIN, BF_FORMAT_VERSION);
		return BF_ERR_VERSION;
	}
	if (h->family != BF_FAMILY_BLOOM && h->family != BF_FAMILY_COUNTING &&
		h->family != BF_FAMILY_SCALABLE)
	{
		if (msg)
			snprintf(msg, msglen,
					 "unsupported filter family %u (this build reads families %d, bloom, %d, counting, and %d, scalable)",
					 (unsigned) h->family, BF_FAMILY_BLOOM, BF_FAMILY_COUNTING,
					 BF_FAMILY_SCALABLE);
		return BF_ERR_FAMILY;
	}

	if (h->layout < 1 || h->layout > BF_LAYOUT_MAX)
	{
		if (msg)
			snprintf(msg, msglen,
					 "unrecognized layout %u (expected 1 for blocked, 2 for classic or 3 for counting)",
					 (unsigned) h->layout);
		return BF_ERR_LAYOUT;
	}
	if (h->family == BF_FAMILY_SCALABLE && h->layout == BF_LAYOUT_COUNTING)
	{
		if (msg)
			snprintf(msg, msglen,
					 "layout counting does not belong to family 4 (the layers of a scalable filter are blocked or classic)");
		return BF_ERR_LAYOUT;
	}
	if (h->family != BF_FAMILY_SCALABLE && bf_layout_family(h->layout) != h->family)
	{
		if (msg)
			snprintf(msg, msglen,
					 "layout %s does not belong to family %u (counting is family 2, the others family 1)",
					 bf_layout_name(h->layout), (unsigned) h->family);
		return BF_ERR_LAYOUT;
	}
	if (h->key_kind > BF_KEY_KIND_MAX)
	{
		if (msg)
			snprintf(msg, msglen,
					 "unrecognized key kind %u (this build knows 0..%d)",
					 (unsigned) h->key_kind, BF_KEY_KIND_MAX);
		return BF_ERR_KEY_KIND;
	}
	if (h->family == BF_FAMILY_SCALABLE)
	{
		if (h->hashes != 0)
		{
			if (msg)
				snprintf(msg, msglen,
						 "hash count %u of a scalable filter is not 0 (each layer has its own)",
						 (unsigned) h->hashes);
			return BF_ERR_HASHES;
		}
	}
	else if (h->hashes < 1 || h->hashes > BF_MAX_HASHES)
	{
		if (msg)
			snprintf(msg, msglen, "hash count %u is out of range 1..%d",
					 (unsigned) h->hashes, BF_MAX_HASHES);
		return BF_ERR_HASHES;
	}
	if (h->flags != 0)
	{
		if (msg)
			snprintf(msg, msglen,
					 "unrecognized flags 0x%04x (no format version defines flags)",
					 (unsigned) h->flags);
		return BF_ERR_FLAGS;
	}
	if (h->family == BF_FAMILY_SCALABLE)
	{
		if (h->layers < 1 || h->layers > BF_MAX_LAYERS)
		{
			if (msg)
				snprintf(msg, msglen,
						 "layer count %lu is out of range 1..%d",
						 (unsigned long) h->layers, BF_MAX_LAYERS);
			return BF_ERR_LAYERS;
		}
	}
	else if (h->layers != 1)
	{
		if (msg)
			snprintf(msg, msglen,
					 "layer count %lu is not supported (a filter of family %u has exactly 1 layer)",
					 (unsigned long) h->layers, (unsigned) h->family);
		return BF_ERR_LAYERS;
	}
	if (h->nbits == 0)
	{
		if (msg)
			snprintf(msg, msglen, "bit count 0 is not positive");
		return BF_ERR_NBITS;
	}
	{
		uint64_t	align = (h->layout == BF_LAYOUT_CLASSIC) ?
			BF_CLASSIC_ALIGN_BITS : BF_BLOCK_BITS;

		if (h->nbits % align != 0)
		{
			if (msg)
				snprintf(msg, msglen,
						 "bit count %llu is not a multiple of %llu for layout %s",
						 (unsigned long long) h->nbits,
						 (unsigned long long) align,
						 bf_layout_name(h->layout));
			return BF_ERR_NBITS;
		}
	}
	if (h->capacity < 1)
	{
		if (msg)
			snprintf(msg, msglen, "capacity 0 is out of range (must be at least 1)");
		return BF_ERR_CAPACITY;
	}
	if (!isfinite(h->target_fpr) || !(h->target_fpr > 0.0) ||
		!(h->target_fpr < 1.0))
	{
		if (msg)
		{
			bf_format_double(h->target_fpr, numbuf, sizeof(numbuf));
			snprintf(msg, msglen,
					 "target false-positive rate %s is out of range (0, 1)",
					 numbuf);
		}
		return BF_ERR_FPR;
	}
	if (h->family == BF_FAMILY_SCALABLE)
		return bf_scalable_check_growth(h->growth, h->ratio, msg, msglen);
	return BF_OK;
}

/*
 * Family 4: its layers, walked in untrusted bytes, every length checked
 * against what remains before it is used.
 */
BfStatus
bf_scalable_check_layers(const BfHeader *h, const uint8_t *payload,
						 uint64_t len, char *msg, size_t msglen)
{
	const uint8_t *p = payload;
	uint64_t	left = len;
	uint64_t	nbits = 0;
	char		expected[40];
	char		found[40];

	for (uint32_t i = 0; i < h->layers; i++)
	{
		BfHeader	l;
		BfStatus	st;
		uint64_t	size;
		uint64_t	capacity;
		double		fpr;
		char		inner[200];

		if (left < BF_HEADER_SIZE)
		{
			if (msg)
				snprintf(msg, msglen,
						 "layer %lu of %lu is truncated",
						 (unsigned long) i, (unsigned long) h->layers);
			return BF_ERR_TRUNCATED;
		}
		/* its own length: what it says it holds, if that much remains */
		size = BF_HEADER_SIZE + bf_read_u64le(p + BF_LAYER_OFF_NBITS) / 8;
		if (bf_read_u64le(p + BF_LAYER_OFF_NBITS) / 8 > left - BF_HEADER_SIZE)
			size = left + 1;	/* refused below as a length mismatch */
		st = bf_header_decode_prefix(p, BF_HEADER_SIZE,
									 size <= left ? size : left, &l,
									 inner, sizeof(inner));
		if (st != BF_OK)
		{
			if (msg)
				snprintf(msg, msglen, "layer %lu: %s", (unsigned long) i, inner);
			return st;
		}
		if (l.family != BF_FAMILY_BLOOM || l.layout != h->layout ||
			l.key_kind != h->key_kind)
		{
			if (msg)
				snprintf(msg, msglen,
						 "layer %lu has family %u, layout %u and key kind %u, expected family 1, layout %u and key kind %u",
						 (unsigned long) i, (unsigned) l.family, (unsigned) l.layout,
						 (unsigned) l.key_kind, (unsigned) h->layout,
						 (unsigned) h->key_kind);
			return BF_ERR_LAYER;
		}
		if (!bf_scalable_layer_capacity(h->capacity, h->growth, i, &capacity))
		{
			if (msg)
				snprintf(msg, msglen,
						 "the capacity of layer %lu does not fit in 64 bits",
						 (unsigned long) i);
			return BF_ERR_LAYER;
		}
		if (l.capacity != capacity)
		{
			if (msg)
				snprintf(msg, msglen,
						 "layer %lu has capacity %llu, expected %llu (the capacity times the growth to the power %lu)",
						 (unsigned long) i, (unsigned long long) l.capacity,
						 (unsigned long long) capacity, (unsigned long) i);
			return BF_ERR_LAYER;
		}
		fpr = bf_scalable_layer_fpr(h->target_fpr, h->ratio, i);
		if (memcmp(&fpr, &l.target_fpr, sizeof(double)) != 0)
		{
			if (msg)
			{
				bf_format_double(fpr, expected, sizeof(expected));
				bf_format_double(l.target_fpr, found, sizeof(found));
				snprintf(msg, msglen,
						 "layer %lu has target false-positive rate %s, expected %s",
						 (unsigned long) i, found, expected);
			}
			return BF_ERR_LAYER;
		}
		nbits += l.nbits;		/* no overflow: each is below 2^64 / 8 of len */
		p += size;
		left -= size;
	}
	if (left != 0 || nbits != h->nbits)
	{
		if (msg)
			snprintf(msg, msglen,
					 "the layers hold %llu bits in %llu bytes, not the %llu bits the header gives",
					 (unsigned long long) nbits,
					 (unsigned long long) (len - left),
					 (unsigned long long) h->nbits);
		return BF_ERR_LENGTH;
	}
	return BF_OK;
}

/*
 * Decode and validate a whole value.  Everything is checked against len
 * before it is used: the caller may then trust out->nbits to describe the
 * bytes that follow the header.
 */
BfStatus
bf_header_decode(const uint8_t *buf, size_t len, BfHeader *out,
				 char *msg, size_t msglen)
{
	BfHeader	h;
	BfStatus	st;

	st = bf_header_decode_prefix(buf, len, len, &h, msg, msglen);
	if (st != BF_OK)
		return st;
	/* a scalable value's layers, now that the length is known to fit */
	if (h.family == BF_FAMILY_SCALABLE &&
		(st = bf_scalable_check_layers(&h, buf + BF_HEADER_SIZE,
									   len - BF_HEADER_SIZE, msg, msglen)) != BF_OK)
		return st;
	if (out != NULL)
		*out = h;
	return BF_OK;
}

BfStatus
bf_header_decode_prefix(const uint8_t *buf, size_t avail, uint64_t len,
						BfHeader *out, char *msg, size_t msglen)
{
	BfHeader	h;
	BfStatus	st;
	int			i;

	if (msg != NULL && msglen > 0)
		msg[0] = '\0';

	if (buf == NULL || avail < BF_HEADER_SIZE || len < BF_HEADER_SIZE)
	{
		if (msg)
			snprintf(msg, msglen,
					 "value is %llu bytes, shorter than the %d-byte header",
					 (unsigned long long) (buf == NULL ? 0 : len), BF_HEADER_SIZE);
		return BF_ERR_TRUNCATED;
	}
	if (buf[0] != BF_MAGIC_0 || buf[1] != BF_MAGIC_1 ||
		buf[2] != BF_MAGIC_2 || buf[3] != BF_MAGIC_3)
	{
		if (msg)
			snprintf(msg, msglen,
					 "bad magic bytes %02x %02x %02x %02x (expected \"BLMF\")",
					 buf[0], buf[1], buf[2], buf[3]);
		return BF_ERR_MAGIC;
	}

	memset(&h, 0, sizeof(h));
	h.version = buf[OFF_VERSION];
	h.family = buf[OFF_FAMILY];
	h.layout = buf[OFF_LAYOUT];
	h.key_kind = buf[OFF_KEY_KIND];
	h.hashes = read_u16le(buf + OFF_HASHES);
	h.flags = read_u16le(buf + OFF_FLAGS);
	h.layers = read_u32le(buf + OFF_LAYERS);
	h.nbits = bf_read_u64le(buf + OFF_NBITS);
	h.capacity = bf_read_u64le(buf + OFF_CAPACITY);
	h.target_fpr = read_f64le(buf + OFF_FPR);
	h.added = bf_read_u64le(buf + OFF_ADDED);
	if (h.family == BF_FAMILY_SCALABLE)
	{
		h.growth = read_u32le(buf + OFF_GROWTH);
		h.ratio = read_f64le(buf + OFF_RATIO);
	}

	/*
	 * The version comes first: a later version may move every other field,
	 * so nothing else is worth reporting about it.
	 */
	st = bf_header_check(&h, msg, msglen);
	if (st != BF_OK)
		return st;

	for (i = OFF_RESERVED; i < BF_HEADER_SIZE; i++)
	{
		if (h.family == BF_FAMILY_SCALABLE && (i < OFF_ZERO || i >= OFF_RATIO))
			continue;			/* growth and ratio */
		if (buf[i] != 0)
		{
			if (msg)
				snprintf(msg, msglen, "reserved header bytes are not zero");
			return BF_ERR_RESERVED;
		}
	}

	/*
	 * len - 64 cannot underflow (checked above) and nbits / 8 cannot
	 * overflow, so compare those rather than computing 64 + nbits / 8, which
	 * might not fit in a size_t.
	 */
	if (len - BF_HEADER_SIZE != bf_value_payload_bytes(&h))
	{
		if (msg)
		{
			uint64_t	payload = bf_value_payload_bytes(&h);

			if (payload <= UINT64_MAX - BF_HEADER_SIZE)
				snprintf(msg, msglen,
						 "length %llu does not match bit count %llu (expected %llu bytes)",
						 (unsigned long long) len,
						 (unsigned long long) h.nbits,
						 (unsigned long long) (payload + BF_HEADER_SIZE));
			else
				snprintf(msg, msglen,
						 "length %llu does not match bit count %llu",
						 (unsigned long long) len,
						 (unsigned long long) h.nbits);
		}
		return BF_ERR_LENGTH;
	}

	if (out != NULL)
		*out = h;
	return BF_OK;
}

void
bf_header_encode(const BfHeader *h, uint8_t *buf)
{
	memset(buf, 0, BF_HEADER_SIZE);
	buf[0] = BF_MAGIC_0;
	buf[1] = BF_MAGIC_1;
	buf[2] = BF_MAGIC_2;
	buf[3] = BF_MAGIC_3;
	buf[OFF_VERSION] = h->version;
	buf[OFF_FAMILY] = h->family;
	buf[OFF_LAYOUT] = h->layout;
	buf[OFF_KEY_KIND] = h->key_kind;
	write_u16le(buf + OFF_HASHES, h->hashes);
	write_u16le(buf + OFF_FLAGS, h->flags);
	write_u32le(buf + OFF_LAYERS, h->layers);
	bf_write_u64le(buf + OFF_NBITS, h->nbits);
	bf_write_u64le(buf + OFF_CAPACITY, h->capacity);
	write_f64le(buf + OFF_FPR, h->target_fpr);
	bf_write_u64le(buf + OFF_ADDED, h->added);
	if (h->family == BF_FAMILY_SCALABLE)
	{
		write_u32le(buf + OFF_GROWTH, h->growth);
		write_f64le(buf + OFF_RATIO, h->ratio);
	}
	/* other families: bytes 48..63 stay zero */
}

void
bf_header_set_key_kind(uint8_t *buf, uint8_t key_kind)
{
	buf[OFF_KEY_KIND] = key_kind;
}

void
bf_header_set_added(uint8_t *buf, uint64_t added)
{
	buf[OFF_VERSION] = BF_FORMAT_VERSION;
	bf_write_u64le(buf + OFF_ADDED, added);
}

void
bf_header_set_layers(uint8_t *buf, uint32_t layers, uint64_t nbits)
{
	buf[OFF_VERSION] = BF_FORMAT_VERSION;
	write_u32le(buf + OFF_LAYERS, layers);
	bf_write_u64le(buf + OFF_NBITS, nbits);
}

uint64_t
bf_header_get_added(const uint8_t *buf)
{
	return bf_read_u64le(buf + OFF_ADDED);
}
