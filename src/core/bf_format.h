/*
 * bf_format.h
 *		The bloomfilter byte format: one versioned, little-endian layout shared
 *		by the on-disk value, send/recv and the bytea cast.
 *
 * This file is free of PostgreSQL: it compiles on its own so that fuzzers,
 * unit tests and client readers can link it without a server.
 *
 * Layout of a value (all integers little-endian):
 *
 *	offset	size	field
 *	0		4		magic "BLMF"
 *	4		1		format version (1 or 2; see below)
 *	5		1		family (1 = bloom, 2 = counting, 4 = scalable; 3 is the
 *					cuckoofilter type, see bf_cuckoo.h)
 *	6		1		layout (1 = blocked, 2 = classic, 3 = counting)
 *	7		1		key kind (0 = none yet, see BfKeyKind)
 *	8		2		hashes per key (k), 1 .. BF_MAX_HASHES
 *	10		2		flags, zero (no version defines one)
 *	12		4		layers, 1 (family 4: its layers)
 *	16		8		bit count m of the payload (blocked, counting: multiple
 *					of 512; classic: of 64)
 *	24		8		capacity the filter was sized for
 *	32		8		target false-positive rate, IEEE-754 binary64
 *	40		8		keys added (add operations; an upper bound after a union)
 *	48		16		reserved, zero (family 4: growth and ratio)
 *	64		m/8		the bit array: bit j is bit (j % 8) of byte (j / 8);
 *					counting: m/4 4-bit counters, counter c in the low
 *					nibble of byte c/2 when c is even, the high one when odd
 *
 * Family and layout go together: family 2 (counting) has layout 3 and only
 * it; family 1 (bloom) has layout 1 or 2.
 *
 * Format versions differ in the rules that turn keys into hashes, not in
 * the bytes: version 1 is what releases 1.0 and 1.1 wrote (1.0's keys have
 * one form each; 1.1 added varchar keys without trailing blanks and a text
 * key in up to three forms, and checked more forms, without changing the
 * number), version 2 what is written since: 1.1's rules, under a number
 * that tells a reader of 1.0's rules to refuse the value.  Every value this
 * build writes (a new one, or a change: an add, a removal, a union) is
 * version 2; one read unchanged keeps its version.  A check tests the same
 * forms under both (they include 1.0's), so version 1 values of either
 * release are read exactly; see bf_keys.c for the forms.
 *
 * Family 4 (scalable, see bf_scalable.h) uses the same 64 bytes with other
 * meanings for some fields: layout is that of every layer (1 or 2), hashes
 * is 0, layers counts the layers (1 .. BF_MAX_LAYERS), nbits is the sum of
 * the layers' bit counts, capacity that of the first layer, target_fpr the
 * rate of the whole filter, and bytes 48..51 hold the growth factor (uint32),
 * 52..55 are zero and 56..63 the ratio (binary64).  The layers follow, each
 * a complete family 1 value (its own 64-byte header and bits).
 */
#ifndef BF_FORMAT_H
#define BF_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BF_MAGIC_0			'B'
#define BF_MAGIC_1			'L'
#define BF_MAGIC_2			'M'
#define BF_MAGIC_3			'F'
#define BF_FORMAT_VERSION	2	/* the version written */
#define BF_FORMAT_VERSION_MIN 1 /* the oldest read */
#define BF_FAMILY_BLOOM		1
#define BF_FAMILY_COUNTING	2
#define BF_FAMILY_SCALABLE	4
#define BF_MAX_LAYERS		64
#define BF_MIN_GROWTH		2
#define BF_MAX_GROWTH		100
#define BF_HEADER_SIZE		64
#define BF_MAX_HASHES		64
#define BF_BLOCK_BITS		512
#define BF_BLOCK_BYTES		(BF_BLOCK_BITS / 8)
#define BF_CLASSIC_ALIGN_BITS 64

/* Does this build read values of format version v? */
static inline bool
bf_format_version_known(unsigned v)
{
	return v >= BF_FORMAT_VERSION_MIN && v <= BF_FORMAT_VERSION;
}

typedef enum BfLayout
{
	BF_LAYOUT_BLOCKED = 1,
	BF_LAYOUT_CLASSIC = 2,
	BF_LAYOUT_COUNTING = 3
} BfLayout;

#define BF_LAYOUT_MAX BF_LAYOUT_COUNTING

/* The family a layout belongs to. */
static inline int
bf_layout_family(int layout)
{
	return layout == BF_LAYOUT_COUNTING ? BF_FAMILY_COUNTING : BF_FAMILY_BLOOM;
}

/*
 * The kind of keys a filter holds.  Values are part of the format: never
 * renumber, only append.
 */
typedef enum BfKeyKind
{
	BF_KEY_NONE = 0,			/* no key added yet */
	BF_KEY_INTEGER = 1,			/* int2, int4, int8, oid: int64 LE */
	BF_KEY_TEXT = 2,			/* text, varchar, bpchar, name: bytes */
	BF_KEY_BYTEA = 3,			/* bytea: bytes */
	BF_KEY_UUID = 4,			/* uuid: 16 bytes */
	BF_KEY_BOOLEAN = 5,			/* bool: one byte, 0 or 1 */
	BF_KEY_FLOAT = 6,			/* float4, float8: binary64 LE, -0 -> 0, one NaN */
	BF_KEY_NUMERIC = 7,			/* numeric: decimal text, no trailing zeros */
	BF_KEY_DATE = 8,			/* date: days since 2000-01-01 as int64 LE */
	BF_KEY_TIMESTAMP = 9,		/* timestamp: microseconds since 2000-01-01, int64 LE */
	BF_KEY_TIMESTAMPTZ = 10		/* timestamptz: microseconds since 2000-01-01 UTC, int64 LE */
} BfKeyKind;

#define BF_KEY_KIND_MAX BF_KEY_TIMESTAMPTZ

/* The decoded header of a value. */
typedef struct BfHeader
{
	uint8_t		version;
	uint8_t		family;
	uint8_t		layout;
	uint8_t		key_kind;
	uint16_t	hashes;
	uint16_t	flags;
	uint32_t	layers;
	uint64_t	nbits;
	uint64_t	capacity;
	double		target_fpr;
	uint64_t	added;
	/* family 4 (scalable) only; zero otherwise */
	uint32_t	growth;
	double		ratio;
} BfHeader;

/* Outcome of decoding or parsing; BF_OK is zero. */
typedef enum BfStatus
{
	BF_OK = 0,
	BF_ERR_TRUNCATED,			/* shorter than the header or its payload */
	BF_ERR_MAGIC,
	BF_ERR_VERSION,
	BF_ERR_FAMILY,
	BF_ERR_LAYOUT,
	BF_ERR_KEY_KIND,
	BF_ERR_HASHES,
	BF_ERR_FLAGS,
	BF_ERR_LAYERS,
	BF_ERR_NBITS,
	BF_ERR_LENGTH,				/* total length disagrees with the bit count */
	BF_ERR_CAPACITY,
	BF_ERR_FPR,
	BF_ERR_RESERVED,
	BF_ERR_GROWTH,				/* scalable: growth factor */
	BF_ERR_RATIO,				/* scalable: ratio */
	BF_ERR_LAYER,				/* scalable: a layer disagrees with the rest */
	BF_ERR_SYNTAX				/* text form only */
} BfStatus;

/* Size of the payload for a bit count (no overflow for valid bit counts). */
static inline uint64_t
bf_payload_bytes(uint64_t nbits)
{
	return nbits / 8;
}

/*
 * Bytes after the 64-byte header of a value: the bit array, or for a
 * scalable filter its layers (a header each, and their bits).
 */
static inline uint64_t
bf_value_payload_bytes(const BfHeader *h)
{
	if (h->family == BF_FAMILY_SCALABLE)
		return (uint64_t) h->layers * 64 + h->nbits / 8;
	return h->nbits / 8;
}

/*
 * Decode and validate a whole value (header and payload length).  On failure
 * returns the status and writes a one-line description to msg (if not NULL),
 * e.g. "bit count 1000 is not a multiple of 512 for layout blocked".
 */
extern BfStatus bf_header_decode(const uint8_t *buf, size_t len, BfHeader *out,
								 char *msg, size_t msglen);

/*
 * The same for a value of which only a prefix is at hand (a slice of a large
 * stored value): buf holds avail >= 64 bytes, len is the whole value's length.
 */
extern BfStatus bf_header_decode_prefix(const uint8_t *buf, size_t avail,
										uint64_t len, BfHeader *out,
										char *msg, size_t msglen);

/* Validate the fields of a header (no length check); same messages. */
extern BfStatus bf_header_check(const BfHeader *h, char *msg, size_t msglen);

/* Write the 64 header bytes of h (fills magic, zero reserved bytes). */
extern void bf_header_encode(const BfHeader *h, uint8_t *buf);

/* Update only the key kind / added fields of an encoded header in place. */
extern void bf_header_set_key_kind(uint8_t *buf, uint8_t key_kind);
extern void bf_header_set_added(uint8_t *buf, uint64_t added);
extern uint64_t bf_header_get_added(const uint8_t *buf);
/* Scalable: the layer count and total bit count of an encoded header. */
extern void bf_header_set_layers(uint8_t *buf, uint32_t layers, uint64_t nbits);

/* Names used in text form, bloom_info and messages; NULL if unknown. */
extern const char *bf_layout_name(int layout);
extern int	bf_layout_from_name(const char *name);	/* -1 if unknown */
extern const char *bf_key_kind_name(int key_kind);
extern int	bf_key_kind_from_name(const char *name);	/* -1 if unknown */

/* Shortest "%.*g" form of d that reads back as d; returns its length. */
extern int	bf_format_double(double d, char *buf, size_t buflen);

/*
 * Family 4 (scalable, bf_scalable.h): the format of the outer header's
 * growth and ratio and of the layers, which bf_header_decode validates.
 */

/* Offsets of the fields a layer's own 64-byte header holds. */
#define BF_LAYER_OFF_HASHES		8
#define BF_LAYER_OFF_NBITS		16
#define BF_LAYER_OFF_CAPACITY	24
#define BF_LAYER_OFF_FPR		32
#define BF_LAYER_OFF_ADDED		40

/* Validate growth (BF_MIN_GROWTH .. BF_MAX_GROWTH) and ratio (0, 1). */
extern BfStatus bf_scalable_check_growth(uint32_t growth, double ratio,
										 char *msg, size_t msglen);

/* The target rate of layer i of a filter of target fpr and ratio r. */
extern double bf_scalable_layer_fpr(double fpr, double ratio, uint32_t i);

/* The capacity of layer i; false if it does not fit in 64 bits. */
extern bool bf_scalable_layer_capacity(uint64_t capacity, uint32_t growth,
									   uint32_t i, uint64_t *out);

/*
 * Validate the layers of a value whose outer header h passed
 * bf_header_check and whose payload (len bytes after the outer header) has
 * the length h implies.
 */
extern BfStatus bf_scalable_check_layers(const BfHeader *h, const uint8_t *payload,
										 uint64_t len, char *msg, size_t msglen);

/* Little-endian helpers. */
static inline uint64_t
bf_read_u64le(const uint8_t *p)
{
	return (uint64_t) p[0] | ((uint64_t) p[1] << 8) | ((uint64_t) p[2] << 16) |
		((uint64_t) p[3] << 24) | ((uint64_t) p[4] << 32) |
		((uint64_t) p[5] << 40) | ((uint64_t) p[6] << 48) |
		((uint64_t) p[7] << 56);
}

static inline void
bf_write_u64le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

#endif							/* BF_FORMAT_H */
