/*
 * bf_scalable.c
 *		Scalable Bloom filters: checks, adds and growth of the layers (see
 *		bf_scalable.h), and the checks and estimates of a value of any
 *		family, a single bit array (bf_layout.c) or layers.
 *
 * Every function here trusts a value that passed bf_header_decode, which
 * validates the layers (bf_scalable_check_layers, bf_format.c).
 *
 * Above bf_format.c, bf_sizing.c and bf_layout.c in the core.  Free of
 * PostgreSQL.
 */
#include "core/bf_scalable.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/bf_layout.h"
#include "core/bf_sizing.h"

void
bf_scalable_layer_header(const uint8_t *layer, BfHeader *out)
{
	/* a validated layer: decoding cannot fail */
	(void) bf_header_decode_prefix(layer, BF_HEADER_SIZE,
								   BF_HEADER_SIZE + bf_read_u64le(layer + BF_LAYER_OFF_NBITS) / 8,
								   out, NULL, 0);
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
		sum += bf_bits_estimate_cardinality(&l, p + BF_HEADER_SIZE);
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
		none *= 1.0 - bf_bits_estimate_fpr(&l, p + BF_HEADER_SIZE);
		p = bf_scalable_next(p);
	}
	return 1.0 - none;
}

/* Any family: the layers' sums, or the estimates of the one bit array. */
double
bf_estimate_cardinality(const BfHeader *h, const uint8_t *bits)
{
	if (h->family == BF_FAMILY_SCALABLE)
		return bf_scalable_estimate_cardinality(h, bits);
	return bf_bits_estimate_cardinality(h, bits);
}

double
bf_estimate_fpr(const BfHeader *h, const uint8_t *bits)
{
	if (h->family == BF_FAMILY_SCALABLE)
		return bf_scalable_estimate_fpr(h, bits);
	return bf_bits_estimate_fpr(h, bits);
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
