/*
 * bf_cuckoo.h
 *		Cuckoo filters (Fan et al., 2014): buckets of 4 slots holding f-bit
 *		fingerprints, partial-key cuckoo hashing.
 *
 * A value has the 64-byte header of the bloomfilter format (bf_format.h)
 * with family 3 and these fields:
 *
 *	offset	size	field
 *	0		4		magic "BLMF"
 *	4		1		format version (1 or 2, see bf_format.h)
 *	5		1		family (3 = cuckoo)
 *	6		1		layout (1 = buckets of 4 slots)
 *	7		1		key kind (BfKeyKind)
 *	8		2		fingerprint bits f, 4 .. 32
 *	10		2		flags, zero
 *	12		4		layers, 1
 *	16		8		bucket count nb, 1 .. BF_CUCKOO_MAX_BUCKETS
 *	24		8		capacity the filter was sized for
 *	32		8		target false-positive rate, IEEE-754 binary64
 *	40		8		fingerprints stored (adds less removals)
 *	48		16		reserved, zero
 *	64		ceil(nb * 4 * f / 8)	the slots
 *
 * Slot j (bucket j / 4, slot j % 4) holds the f bits j*f .. j*f + f - 1 of
 * the payload, bit x being bit (x % 8) of byte (x / 8), the fingerprint's
 * least significant bit first; 0 is an empty slot.  The bits after the
 * last slot are zero.
 *
 * A key with XXH3-64 hash h has fingerprint fp = h & (2^f - 1), or 1 when
 * that is 0, and buckets i1 = ((h >> 32) * nb) >> 32 and
 * i2 = alt(i1, fp) = (g(fp) + nb - i1) mod nb, where
 * g(fp) = (((fp * 0x9E3779B97F4A7C15 mod 2^64) >> 32) * nb) >> 32.
 * alt is an involution: alt(alt(i, fp), fp) = i, so a fingerprint can move
 * between its two buckets knowing only where it is.
 *
 * Free of PostgreSQL.
 */
#ifndef BF_CUCKOO_H
#define BF_CUCKOO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bf_format.h"

#define BF_FAMILY_CUCKOO		3
#define BF_CUCKOO_LAYOUT		1
#define BF_CUCKOO_SLOTS			4
#define BF_CUCKOO_MIN_FP_BITS	4
#define BF_CUCKOO_MAX_FP_BITS	32
#define BF_CUCKOO_MAX_BUCKETS	(UINT64_C(1) << 32)
#define BF_CUCKOO_LOAD			0.95	/* sizing load at capacity */
#define BF_CUCKOO_MAX_KICKS		500

/* A cuckoo header, decoded (the fields of BfHeader, named for cuckoo). */
typedef struct BfCuckooHeader
{
	uint8_t		version;		/* format version (bf_format.h) */
	uint8_t		key_kind;
	uint16_t	fp_bits;
	uint64_t	nbuckets;
	uint64_t	capacity;
	double		target_fpr;
	uint64_t	count;
} BfCuckooHeader;

/* Payload bytes of nb buckets of f-bit slots (no overflow for valid ones). */
static inline uint64_t
bf_cuckoo_payload_bytes(uint64_t nbuckets, int fp_bits)
{
	return (nbuckets * BF_CUCKOO_SLOTS * (uint64_t) fp_bits + 7) / 8;
}

/* Decode and validate a whole value; msg as bf_header_decode. */
extern BfStatus bf_cuckoo_decode(const uint8_t *buf, size_t len,
								 BfCuckooHeader *out, char *msg, size_t msglen);

/* Validate the fields of a header (no length check). */
extern BfStatus bf_cuckoo_check(const BfCuckooHeader *h, char *msg, size_t msglen);

/* Write the 64 header bytes. */
extern void bf_cuckoo_encode(const BfCuckooHeader *h, uint8_t *buf);

/*
 * Size a filter: the fingerprint bits whose rate at full load (95%) is at
 * most fpr, and the buckets that hold capacity at 95% load.  Returns false
 * if fpr needs more than 32 bits or the filter would exceed max_bytes of
 * payload (1: the rate, 2: the size; see *why).
 */
extern bool bf_cuckoo_size(uint64_t capacity, double fpr, uint64_t max_bytes,
						   BfCuckooHeader *out, int *why);

/* Predicted false-positive rate with n fingerprints stored. */
extern double bf_cuckoo_predict_fpr(const BfCuckooHeader *h, double n);

/* Where a key goes. */
typedef struct BfCuckooKey
{
	uint32_t	fp;
	uint64_t	i1;
	uint64_t	i2;
} BfCuckooKey;

extern BfCuckooKey bf_cuckoo_key(const BfCuckooHeader *h, uint64_t hash);
extern uint64_t bf_cuckoo_alt(const BfCuckooHeader *h, uint64_t i, uint32_t fp);

/* Slot access. */
extern uint32_t bf_cuckoo_get(const uint8_t *slots, int fp_bits, uint64_t j);
extern void bf_cuckoo_set(uint8_t *slots, int fp_bits, uint64_t j, uint32_t v);

/*
 * Insert: true if placed (perhaps after moving up to BF_CUCKOO_MAX_KICKS
 * fingerprints); false if the filter is full, and then the slots are
 * exactly as before.  The count field is not touched.
 */
extern bool bf_cuckoo_insert(const BfCuckooHeader *h, uint8_t *slots, uint64_t hash);

extern bool bf_cuckoo_contains(const BfCuckooHeader *h, const uint8_t *slots,
							   uint64_t hash);

/* Copies of the key's fingerprint in its two buckets. */
extern int	bf_cuckoo_count(const BfCuckooHeader *h, const uint8_t *slots,
							uint64_t hash);

/* Remove one copy: false (nothing changed) if there is none. */
extern bool bf_cuckoo_remove(const BfCuckooHeader *h, uint8_t *slots, uint64_t hash);

/* Occupied slots. */
extern uint64_t bf_cuckoo_occupied(const BfCuckooHeader *h, const uint8_t *slots);

/*
 * The text form (bf_cuckoo_text.c).  Parse checks every field and the
 * payload's length (on BF_ERR_LENGTH *h holds the valid header all the same);
 * the caller decodes data (base64) into the slots and checks them with
 * bf_cuckoo_decode.
 */
extern size_t bf_cuckoo_text_length(const BfCuckooHeader *h);
extern void bf_cuckoo_text_render(const BfCuckooHeader *h, const uint8_t *slots, char *out);
extern BfStatus bf_cuckoo_text_parse(const char *s, BfCuckooHeader *h, const char **data,
									 size_t *datalen, char *msg, size_t msglen);

#endif							/* BF_CUCKOO_H */
