/*
 * bf_cuckoo.c
 *		Cuckoo filters: the byte format, sizing, and the table operations.
 *
 * See bf_cuckoo.h for the format and the hashing.  Insertion moves
 * fingerprints between their two buckets (a random walk, its choices drawn
 * from a generator seeded by the key's hash, so the same inputs always give
 * the same value) and records every slot it overwrites, so that a failed
 * insertion restores them all: a full filter is left exactly as it was.
 *
 * Free of PostgreSQL.
 */
#include "core/bf_cuckoo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GOLDEN64	UINT64_C(0x9E3779B97F4A7C15)

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

BfStatus
bf_cuckoo_check(const BfCuckooHeader *h, char *msg, size_t msglen)
{
	char		num[40];

	if (h->key_kind > BF_KEY_KIND_MAX)
	{
		if (msg)
			snprintf(msg, msglen, "unrecognized key kind %u (this build knows 0..%d)",
					 (unsigned) h->key_kind, BF_KEY_KIND_MAX);
		return BF_ERR_KEY_KIND;
	}
	if (h->fp_bits < BF_CUCKOO_MIN_FP_BITS || h->fp_bits > BF_CUCKOO_MAX_FP_BITS)
	{
		if (msg)
			snprintf(msg, msglen, "fingerprint bits %u are out of range %d..%d",
					 (unsigned) h->fp_bits, BF_CUCKOO_MIN_FP_BITS, BF_CUCKOO_MAX_FP_BITS);
		return BF_ERR_HASHES;
	}
	if (h->nbuckets < 1 || h->nbuckets > BF_CUCKOO_MAX_BUCKETS)
	{
		if (msg)
			snprintf(msg, msglen, "bucket count %llu is out of range 1..%llu",
					 (unsigned long long) h->nbuckets,
					 (unsigned long long) BF_CUCKOO_MAX_BUCKETS);
		return BF_ERR_NBITS;
	}
	if (h->capacity < 1)
	{
		if (msg)
			snprintf(msg, msglen, "capacity 0 is out of range (must be at least 1)");
		return BF_ERR_CAPACITY;
	}
	if (!isfinite(h->target_fpr) || !(h->target_fpr > 0.0) || !(h->target_fpr < 1.0))
	{
		if (msg)
		{
			bf_format_double(h->target_fpr, num, sizeof(num));
			snprintf(msg, msglen, "target false-positive rate %s is out of range (0, 1)", num);
		}
		return BF_ERR_FPR;
	}
	if (h->count > h->nbuckets * BF_CUCKOO_SLOTS)
	{
		if (msg)
			snprintf(msg, msglen, "count %llu exceeds the %llu slots",
					 (unsigned long long) h->count,
					 (unsigned long long) (h->nbuckets * BF_CUCKOO_SLOTS));
		return BF_ERR_CAPACITY;
	}
	if (h->count > 0 && h->key_kind == BF_KEY_NONE)
	{
		if (msg)
			snprintf(msg, msglen, "count %llu with key kind none (no key was added)",
					 (unsigned long long) h->count);
		return BF_ERR_KEY_KIND;
	}
	return BF_OK;
}

/* The fixed fields of a cuckoo header: magic, version, family, layout, ... */
static BfStatus
check_fixed(const uint8_t *buf, char *msg, size_t msglen)
{
	if (buf[0] != BF_MAGIC_0 || buf[1] != BF_MAGIC_1 ||
		buf[2] != BF_MAGIC_2 || buf[3] != BF_MAGIC_3)
	{
		if (msg)
			snprintf(msg, msglen, "bad magic bytes %02x %02x %02x %02x (expected \"BLMF\")",
					 buf[0], buf[1], buf[2], buf[3]);
		return BF_ERR_MAGIC;
	}
	if (!bf_format_version_known(buf[4]))
	{
		if (msg)
			snprintf(msg, msglen, "unrecognized format version %u (this build reads versions %d to %d)",
					 (unsigned) buf[4], BF_FORMAT_VERSION_MIN, BF_FORMAT_VERSION);
		return BF_ERR_VERSION;
	}
	if (buf[5] != BF_FAMILY_CUCKOO)
	{
		if (msg)
			snprintf(msg, msglen, "filter family %u is not a cuckoo filter (family %d)",
					 (unsigned) buf[5], BF_FAMILY_CUCKOO);
		return BF_ERR_FAMILY;
	}
	if (buf[6] != BF_CUCKOO_LAYOUT)
	{
		if (msg)
			snprintf(msg, msglen, "unrecognized cuckoo layout %u (expected 1, buckets of 4 slots)",
					 (unsigned) buf[6]);
		return BF_ERR_LAYOUT;
	}
	if (read_u16le(buf + 10) != 0)
	{
		if (msg)
			snprintf(msg, msglen, "unrecognized flags 0x%04x (no format version defines flags)",
					 (unsigned) read_u16le(buf + 10));
		return BF_ERR_FLAGS;
	}
	if (read_u32le(buf + 12) != 1)
	{
		if (msg)
			snprintf(msg, msglen, "layer count %lu is not supported (a cuckoo filter has 1)",
					 (unsigned long) read_u32le(buf + 12));
		return BF_ERR_LAYERS;
	}
	return BF_OK;
}

/* The bits after the last slot must be zero (one canonical value). */
static bool
padding_is_zero(const uint8_t *payload, const BfCuckooHeader *h, uint64_t nbytes)
{
	uint64_t	used = h->nbuckets * BF_CUCKOO_SLOTS * h->fp_bits;

	if (used % 8 == 0)
		return true;
	return (payload[nbytes - 1] >> (used % 8)) == 0;
}

BfStatus
bf_cuckoo_decode(const uint8_t *buf, size_t len, BfCuckooHeader *out,
				 char *msg, size_t msglen)
{
	BfCuckooHeader h;
	BfStatus	st;
	uint64_t	nbytes;
	uint64_t	fpr_bits;

	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	if (buf == NULL || len < BF_HEADER_SIZE)
	{
		if (msg)
			snprintf(msg, msglen, "value is %llu bytes, shorter than the %d-byte header",
					 (unsigned long long) (buf == NULL ? 0 : len), BF_HEADER_SIZE);
		return BF_ERR_TRUNCATED;
	}
	if ((st = check_fixed(buf, msg, msglen)) != BF_OK)
		return st;
	h.version = buf[4];
	h.key_kind = buf[7];
	h.fp_bits = read_u16le(buf + 8);
	h.nbuckets = bf_read_u64le(buf + 16);
	h.capacity = bf_read_u64le(buf + 24);
	fpr_bits = bf_read_u64le(buf + 32);
	memcpy(&h.target_fpr, &fpr_bits, sizeof(double));
	h.count = bf_read_u64le(buf + 40);
	if ((st = bf_cuckoo_check(&h, msg, msglen)) != BF_OK)
		return st;
	for (int i = 48; i < BF_HEADER_SIZE; i++)
	{
		if (buf[i] != 0)
		{
			if (msg)
				snprintf(msg, msglen, "reserved header bytes are not zero");
			return BF_ERR_RESERVED;
		}
	}
	nbytes = bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits);
	if (len - BF_HEADER_SIZE != nbytes)
	{
		if (msg)
			snprintf(msg, msglen, "length %llu does not match %llu buckets of %u-bit slots (expected %llu bytes)",
					 (unsigned long long) len, (unsigned long long) h.nbuckets,
					 (unsigned) h.fp_bits, (unsigned long long) (nbytes + BF_HEADER_SIZE));
		return BF_ERR_LENGTH;
	}
	if (!padding_is_zero(buf + BF_HEADER_SIZE, &h, nbytes))
	{
		if (msg)
			snprintf(msg, msglen, "the bits after the last slot are not zero");
		return BF_ERR_LENGTH;
	}
	if (out != NULL)
		*out = h;
	return BF_OK;
}

void
bf_cuckoo_encode(const BfCuckooHeader *h, uint8_t *buf)
{
	uint64_t	fpr_bits;

	memset(buf, 0, BF_HEADER_SIZE);
	buf[0] = BF_MAGIC_0;
	buf[1] = BF_MAGIC_1;
	buf[2] = BF_MAGIC_2;
	buf[3] = BF_MAGIC_3;
	buf[4] = h->version;
	buf[5] = BF_FAMILY_CUCKOO;
	buf[6] = BF_CUCKOO_LAYOUT;
	buf[7] = h->key_kind;
	buf[8] = (uint8_t) h->fp_bits;
	buf[9] = (uint8_t) (h->fp_bits >> 8);
	buf[12] = 1;
	bf_write_u64le(buf + 16, h->nbuckets);
	bf_write_u64le(buf + 24, h->capacity);
	memcpy(&fpr_bits, &h->target_fpr, sizeof(double));
	bf_write_u64le(buf + 32, fpr_bits);
	bf_write_u64le(buf + 40, h->count);
}

double
bf_cuckoo_predict_fpr(const BfCuckooHeader *h, double n)
{
	double		load = n / ((double) h->nbuckets * BF_CUCKOO_SLOTS);
	double		per = 1.0 / (ldexp(1.0, h->fp_bits) - 1.0);

	if (!(n > 0.0))
		return 0.0;
	if (load > 1.0)
		load = 1.0;
	/* an absent key compares with the 2 * 4 * load stored fingerprints */
	return -expm1(2.0 * BF_CUCKOO_SLOTS * load * log1p(-per));
}

bool
bf_cuckoo_size(uint64_t capacity, double fpr, uint64_t max_bytes,
			   BfCuckooHeader *out, int *why)
{
	BfCuckooHeader h;
	double		nb;

	memset(&h, 0, sizeof(h));
	h.version = BF_FORMAT_VERSION;
	h.capacity = capacity;
	h.target_fpr = fpr;
	h.nbuckets = 1;
	for (h.fp_bits = BF_CUCKOO_MIN_FP_BITS; h.fp_bits <= BF_CUCKOO_MAX_FP_BITS; h.fp_bits++)
	{
		/* the rate at full load (95%) of any number of buckets */
		h.nbuckets = 1000;
		if (bf_cuckoo_predict_fpr(&h, BF_CUCKOO_LOAD * 1000 * BF_CUCKOO_SLOTS) <= fpr)
			break;
	}
	if (h.fp_bits > BF_CUCKOO_MAX_FP_BITS)
	{
		*why = 1;
		return false;
	}
	nb = ceil((double) capacity / (BF_CUCKOO_SLOTS * BF_CUCKOO_LOAD));
	if (nb > (double) BF_CUCKOO_MAX_BUCKETS ||
		(double) bf_cuckoo_payload_bytes((uint64_t) nb, h.fp_bits) > (double) max_bytes)
	{
		*why = 2;
		return false;
	}
	h.nbuckets = (uint64_t) nb;
	*out = h;
	return true;
}

uint64_t
bf_cuckoo_alt(const BfCuckooHeader *h, uint64_t i, uint32_t fp)
{
	uint64_t	g = ((((uint64_t) fp * GOLDEN64) >> 32) * h->nbuckets) >> 32;

	return (g + h->nbuckets - i) % h->nbuckets;
}

BfCuckooKey
bf_cuckoo_key(const BfCuckooHeader *h, uint64_t hash)
{
	BfCuckooKey k;
	uint32_t	mask = (h->fp_bits >= 32) ? UINT32_MAX : ((UINT32_C(1) << h->fp_bits) - 1);

	k.fp = (uint32_t) hash & mask;
	if (k.fp == 0)
		k.fp = 1;
	k.i1 = ((hash >> 32) * h->nbuckets) >> 32;
	k.i2 = bf_cuckoo_alt(h, k.i1, k.fp);
	return k;
}

/* Slot j spans at most 5 bytes from byte (j * f) / 8. */
uint32_t
bf_cuckoo_get(const uint8_t *slots, int fp_bits, uint64_t j)
{
	uint64_t	x = j * (uint64_t) fp_bits;
	uint64_t	first = x / 8;
	int			shift = (int) (x % 8);
	int			nbytes = (shift + fp_bits + 7) / 8;
	uint64_t	w = 0;

	for (int b = 0; b < nbytes; b++)
		w |= (uint64_t) slots[first + b] << (8 * b);
	return (uint32_t) ((w >> shift) & ((UINT64_C(1) << fp_bits) - 1));
}

void
bf_cuckoo_set(uint8_t *slots, int fp_bits, uint64_t j, uint32_t v)
{
	uint64_t	x = j * (uint64_t) fp_bits;
	uint64_t	first = x / 8;
	int			shift = (int) (x % 8);
	int			nbytes = (shift + fp_bits + 7) / 8;
	uint64_t	mask = ((UINT64_C(1) << fp_bits) - 1) << shift;
	uint64_t	w = 0;

	for (int b = 0; b < nbytes; b++)
		w |= (uint64_t) slots[first + b] << (8 * b);
	w = (w & ~mask) | (((uint64_t) v << shift) & mask);
	for (int b = 0; b < nbytes; b++)
		slots[first + b] = (uint8_t) (w >> (8 * b));
}

/* Put fp in a free slot of bucket i; false if there is none. */
static bool
put_free(const BfCuckooHeader *h, uint8_t *slots, uint64_t i, uint32_t fp)
{
	for (int s = 0; s < BF_CUCKOO_SLOTS; s++)
	{
		uint64_t	j = i * BF_CUCKOO_SLOTS + s;

		if (bf_cuckoo_get(slots, h->fp_bits, j) == 0)
		{
			bf_cuckoo_set(slots, h->fp_bits, j, fp);
			return true;
		}
	}
	return false;
}

static uint64_t
next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * UINT64_C(2685821657736338717);
}

bool
bf_cuckoo_insert(const BfCuckooHeader *h, uint8_t *slots, uint64_t hash)
{
	BfCuckooKey k = bf_cuckoo_key(h, hash);
	uint64_t	rng = hash ^ GOLDEN64;
	uint64_t	undo_slot[BF_CUCKOO_MAX_KICKS];
	uint32_t	undo_fp[BF_CUCKOO_MAX_KICKS];
	uint32_t	fp = k.fp;
	uint64_t	i;
	int			n;

	if (rng == 0)
		rng = 1;
	if (put_free(h, slots, k.i1, fp) || put_free(h, slots, k.i2, fp))
		return true;
	i = (next_random(&rng) & 1) ? k.i2 : k.i1;
	for (n = 0; n < BF_CUCKOO_MAX_KICKS; n++)
	{
		uint64_t	j = i * BF_CUCKOO_SLOTS + next_random(&rng) % BF_CUCKOO_SLOTS;
		uint32_t	victim = bf_cuckoo_get(slots, h->fp_bits, j);

		undo_slot[n] = j;
		undo_fp[n] = victim;
		bf_cuckoo_set(slots, h->fp_bits, j, fp);
		fp = victim;
		i = bf_cuckoo_alt(h, i, fp);
		if (put_free(h, slots, i, fp))
			return true;
	}
	/* full: put every moved fingerprint back, last move first */
	while (n-- > 0)
		bf_cuckoo_set(slots, h->fp_bits, undo_slot[n], undo_fp[n]);
	return false;
}

static int
count_in(const BfCuckooHeader *h, const uint8_t *slots, uint64_t i, uint32_t fp)
{
	int			c = 0;

	for (int s = 0; s < BF_CUCKOO_SLOTS; s++)
		c += bf_cuckoo_get(slots, h->fp_bits, i * BF_CUCKOO_SLOTS + s) == fp;
	return c;
}

int
bf_cuckoo_count(const BfCuckooHeader *h, const uint8_t *slots, uint64_t hash)
{
	BfCuckooKey k = bf_cuckoo_key(h, hash);
	int			c = count_in(h, slots, k.i1, k.fp);

	if (k.i2 != k.i1)
		c += count_in(h, slots, k.i2, k.fp);
	return c;
}

bool
bf_cuckoo_contains(const BfCuckooHeader *h, const uint8_t *slots, uint64_t hash)
{
	return bf_cuckoo_count(h, slots, hash) > 0;
}

bool
bf_cuckoo_remove(const BfCuckooHeader *h, uint8_t *slots, uint64_t hash)
{
	BfCuckooKey k = bf_cuckoo_key(h, hash);
	uint64_t	buckets[2] = {k.i1, k.i2};

	for (int b = 0; b < 2; b++)
	{
		for (int s = 0; s < BF_CUCKOO_SLOTS; s++)
		{
			uint64_t	j = buckets[b] * BF_CUCKOO_SLOTS + s;

			if (bf_cuckoo_get(slots, h->fp_bits, j) == k.fp)
			{
				bf_cuckoo_set(slots, h->fp_bits, j, 0);
				return true;
			}
		}
	}
	return false;
}

uint64_t
bf_cuckoo_occupied(const BfCuckooHeader *h, const uint8_t *slots)
{
	uint64_t	n = 0;

	for (uint64_t j = 0; j < h->nbuckets * BF_CUCKOO_SLOTS; j++)
		n += bf_cuckoo_get(slots, h->fp_bits, j) != 0;
	return n;
}
