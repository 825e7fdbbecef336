/*
 * bf_scalable.c
 *		Scalable Bloom filters: validation, checks, adds and growth of the
 *		layers (see bf_scalable.h).
 *
 * bf_scalable_check_layers is the only function here that reads a value it
 * has not validated: it walks the layers of untrusted bytes, checking every
 * length against what remains before it moves on.  The others trust a
 * value that passed it.
 *
 * Free of PostgreSQL.
 */
#include "bf_scalable.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bf_layout.h"
#include "bf_sizing.h"
#include "bf_text.h"

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

void
bf_scalable_layer_header(const uint8_t *layer, BfHeader *out)
{
	/* a validated layer: decoding cannot fail */
	(void) bf_header_decode_prefix(layer, BF_HEADER_SIZE,
								   BF_HEADER_SIZE + bf_read_u64le(layer + BF_LAYER_OFF_NBITS) / 8,
								   out, NULL, 0);
}

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

uint8_t *
bf_scalable_last(const BfHeader *h, uint8_t *payload)
{
	uint8_t    *p = payload;

	for (uint32_t i = 1; i < h->layers; i++)
		p = (uint8_t *) bf_scalable_next(p);
	return p;
}

/* Test or set a key in one layer (header at layer). */
static inline bool
layer_test(const BfHeader *h, const uint8_t *layer, BfHash hash)
{
	uint64_t	nbits = bf_read_u64le(layer + BF_LAYER_OFF_NBITS);
	int			k = layer[BF_LAYER_OFF_HASHES] | (layer[BF_LAYER_OFF_HASHES + 1] << 8);
	const uint8_t *bits = layer + BF_HEADER_SIZE;

	if (h->layout == BF_LAYOUT_CLASSIC)
		return bf_classic_test(bits, nbits, k, hash);
	return bf_blocked_test(bits, nbits, k, hash.lo);
}

bool
bf_scalable_test(const BfHeader *h, const uint8_t *payload, BfHash hash)
{
	const uint8_t *p = payload;

	/* the last, largest layer holds most keys: it is as good a start */
	for (uint32_t i = 0; i < h->layers; i++)
	{
		if (layer_test(h, p, hash))
			return true;
		p = bf_scalable_next(p);
	}
	return false;
}

BfScalableAdd
bf_scalable_add(const BfHeader *h, uint8_t *payload, BfHash hash)
{
	uint8_t    *last;
	uint64_t	added;
	uint64_t	nbits;
	int			k;

	if (bf_scalable_test(h, payload, hash))
		return BF_SCALABLE_PRESENT;
	last = bf_scalable_last(h, payload);
	added = bf_read_u64le(last + BF_LAYER_OFF_ADDED);
	if (added >= bf_read_u64le(last + BF_LAYER_OFF_CAPACITY))
		return BF_SCALABLE_FULL;
	nbits = bf_read_u64le(last + BF_LAYER_OFF_NBITS);
	k = last[BF_LAYER_OFF_HASHES] | (last[BF_LAYER_OFF_HASHES + 1] << 8);
	if (h->layout == BF_LAYOUT_CLASSIC)
		bf_classic_add(last + BF_HEADER_SIZE, nbits, k, hash);
	else
		bf_blocked_add(last + BF_HEADER_SIZE, nbits, k, hash.lo);
	bf_header_set_added(last, added + 1);
	return BF_SCALABLE_SET;
}

BfStatus
bf_scalable_new_layer(const BfHeader *h, uint64_t max_nbits, BfHeader *layer,
					  char *msg, size_t msglen)
{
	uint32_t	i = h->layers;
	uint64_t	capacity;
	double		fpr;
	BfSize		size;
	char		rate[40];

	if (i >= BF_MAX_LAYERS)
	{
		if (msg)
			snprintf(msg, msglen, "the filter has the most layers a scalable filter can have, %d",
					 BF_MAX_LAYERS);
		return BF_ERR_LAYERS;
	}
	if (!bf_scalable_layer_capacity(h->capacity, h->growth, i, &capacity))
	{
		if (msg)
			snprintf(msg, msglen, "the capacity of layer %lu does not fit in 64 bits",
					 (unsigned long) i);
		return BF_ERR_CAPACITY;
	}
	fpr = bf_scalable_layer_fpr(h->target_fpr, h->ratio, i);
	bf_format_double(fpr, rate, sizeof(rate));
	if (!(fpr > 0.0) ||
		bf_max_capacity(h->layout, BF_SCALABLE_HEADROOM * fpr, max_nbits) == 0)
	{
		if (msg)
			snprintf(msg, msglen,
					 "the false-positive rate of layer %lu, %s, is too small for a filter that fits",
					 (unsigned long) i, rate);
		return BF_ERR_FPR;
	}
	if (!bf_size_for(h->layout, capacity, BF_SCALABLE_HEADROOM * fpr, max_nbits, &size))
	{
		if (msg)
			snprintf(msg, msglen,
					 "layer %lu, of capacity %llu at false-positive rate %s, does not fit in what remains of 1 GB",
					 (unsigned long) i, (unsigned long long) capacity, rate);
		return BF_ERR_NBITS;
	}
	memset(layer, 0, sizeof(*layer));
	layer->version = BF_FORMAT_VERSION;
	layer->family = BF_FAMILY_BLOOM;
	layer->layout = h->layout;
	layer->key_kind = h->key_kind;
	layer->hashes = (uint16_t) size.hashes;
	layer->layers = 1;
	layer->nbits = size.nbits;
	layer->capacity = capacity;
	layer->target_fpr = fpr;
	return BF_OK;
}

void
bf_scalable_append(BfHeader *h, uint8_t *value, const BfHeader *layer)
{
	uint8_t    *end = value + BF_HEADER_SIZE + bf_value_payload_bytes(h);

	bf_header_encode(layer, end);
	memset(end + BF_HEADER_SIZE, 0, bf_payload_bytes(layer->nbits));
	h->layers++;
	h->nbits += layer->nbits;
	bf_header_set_layers(value, h->layers, h->nbits);
}

void
bf_scalable_set_key_kind(const BfHeader *h, uint8_t *value, uint8_t kind)
{
	uint8_t    *p = value + BF_HEADER_SIZE;

	bf_header_set_key_kind(value, kind);
	for (uint32_t i = 0; i < h->layers; i++)
	{
		bf_header_set_key_kind(p, kind);
		p = (uint8_t *) bf_scalable_next(p);
	}
}

double
bf_scalable_estimate_cardinality(const BfHeader *h, const uint8_t *payload)
{
	const uint8_t *p = payload;
	double		sum = 0.0;

	for (uint32_t i = 0; i < h->layers; i++)
	{
		BfHeader	l;

		bf_scalable_layer_header(p, &l);
		sum += bf_estimate_cardinality(&l, p + BF_HEADER_SIZE);
		p = bf_scalable_next(p);
	}
	return sum;
}

/* 1 - prod(1 - p_i): a random absent key tests positive in some layer. */
double
bf_scalable_estimate_fpr(const BfHeader *h, const uint8_t *payload)
{
	const uint8_t *p = payload;
	double		none = 1.0;

	for (uint32_t i = 0; i < h->layers; i++)
	{
		BfHeader	l;

		bf_scalable_layer_header(p, &l);
		none *= 1.0 - bf_estimate_fpr(&l, p + BF_HEADER_SIZE);
		p = bf_scalable_next(p);
	}
	return 1.0 - none;
}

double
bf_scalable_predict_fpr(const BfHeader *h, const uint8_t *payload)
{
	const uint8_t *p = payload;
	double		none = 1.0;

	for (uint32_t i = 0; i < h->layers; i++)
	{
		BfHeader	l;

		bf_scalable_layer_header(p, &l);
		if (l.added > 0)
			none *= 1.0 - bf_predict_fpr(l.layout, l.nbits, l.hashes, (double) l.added);
		p = bf_scalable_next(p);
	}
	return 1.0 - none;
}
