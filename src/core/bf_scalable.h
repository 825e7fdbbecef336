/*
 * bf_scalable.h
 *		Scalable Bloom filters (Almeida, Baquero, Preguiça and Hutchison,
 *		2007): a sequence of layers, each a plain Bloom filter.
 *
 * A value of family 4 is the 64-byte outer header (bf_format.h) followed by
 * its layers, each a complete family 1 value: a 64-byte header and its bits.
 * Layer i (from 0) has
 *
 *	capacity	c * g^i				(c: the outer capacity, g: the growth)
 *	target_fpr	t_i, t_0 = P * (1 - r), t_i = t_(i-1) * r
 *				(P: the outer target, r: the ratio; binary64 products in
 *				this order)
 *	bits, k		as bf_size_for gives for that capacity at
 *				BF_SCALABLE_HEADROOM * t_i
 *	added		the keys set in it
 *
 * so that the rate of the whole, 1 - prod(1 - t_i) <= sum t_i < P, stays
 * below the target however many layers there are.  Every layer has the
 * outer layout and key kind.  A key is in the filter ("maybe") when it tests
 * positive in any layer.  An add of a key that already tests positive
 * changes nothing; else its bits go to the last layer, after a new layer
 * was appended if the last one's added count had reached its capacity.
 *
 * Free of PostgreSQL.
 */
#ifndef BF_SCALABLE_H
#define BF_SCALABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bf_format.h"
#include "core/bf_hash.h"
#include "core/bf_layout.h"

/*
 * Layers are sized for this fraction of their rate: a small layer (the
 * first ones hold a few thousand keys in a few dozen blocks) has a realized
 * rate that strays 20-30% from the prediction, one way or the other, and
 * the rates add up, so without headroom the whole lands above its target
 * about as often as below.
 */
#define BF_SCALABLE_HEADROOM	0.8

/*
 * The layers' format (BF_LAYER_OFF_*, bf_scalable_layer_fpr,
 * bf_scalable_layer_capacity, and their validation by bf_header_decode) is
 * in bf_format.h.
 */

/* The header of the layer after the one at layer (validated values only). */
static inline const uint8_t *
bf_scalable_next(const uint8_t *layer)
{
	return layer + BF_HEADER_SIZE + bf_read_u64le(layer + BF_LAYER_OFF_NBITS) / 8;
}

/* The last layer of a validated value. */
extern uint8_t *bf_scalable_last(const BfHeader *h, uint8_t *payload);

/* Does a hashed key test positive in any layer? */
extern bool bf_scalable_test(const BfHeader *h, const uint8_t *payload, BfHash hash);

/* Outcome of bf_scalable_add. */
typedef enum BfScalableAdd
{
	BF_SCALABLE_PRESENT,		/* it tests positive already: nothing done */
	BF_SCALABLE_SET,			/* set in the last layer */
	BF_SCALABLE_FULL			/* absent, and the last layer is full: grow */
} BfScalableAdd;

/* Add a hashed key unless it tests positive or a new layer is needed. */
extern BfScalableAdd bf_scalable_add(const BfHeader *h, uint8_t *payload, BfHash hash);

/*
 * The header of the layer to append to h (layer h->layers), sized with at
 * most max_nbits bits; an error (BF_ERR_LAYERS: no more layers,
 * BF_ERR_CAPACITY: its capacity overflows, BF_ERR_FPR: its rate is too
 * small, BF_ERR_NBITS: it does not fit) with a message otherwise.
 */
extern BfStatus bf_scalable_new_layer(const BfHeader *h, uint64_t max_nbits,
									  BfHeader *layer, char *msg, size_t msglen);

/*
 * Append an empty layer: value is the whole value (outer header first) with
 * room for the layer's header and bits after its current end; h is updated.
 */
extern void bf_scalable_append(BfHeader *h, uint8_t *value, const BfHeader *layer);

/* Write the key kind into the outer header and every layer's. */
extern void bf_scalable_set_key_kind(const BfHeader *h, uint8_t *value, uint8_t kind);

/* Sums over the layers: estimated distinct keys; rate of "any layer". */
extern double bf_scalable_estimate_cardinality(const BfHeader *h, const uint8_t *payload);
extern double bf_scalable_estimate_fpr(const BfHeader *h, const uint8_t *payload);

/*
 * A value of any family: bits is what follows the header (the layers, for a
 * scalable filter).  Does a hashed key test positive; the estimates of
 * bf_layout.h, or the layers' sums.
 */
static inline bool
bf_test_hash(const BfHeader *h, const uint8_t *bits, BfHash hash)
{
	if (h->family == BF_FAMILY_SCALABLE)
		return bf_scalable_test(h, bits, hash);
	if (h->layout == BF_LAYOUT_CLASSIC)
		return bf_classic_test(bits, h->nbits, h->hashes, hash);
	if (h->layout == BF_LAYOUT_COUNTING)
		return bf_counting_test(bits, h->nbits, h->hashes, hash.lo);
	return bf_blocked_test(bits, h->nbits, h->hashes, hash.lo);
}

extern double bf_estimate_cardinality(const BfHeader *h, const uint8_t *bits);
extern double bf_estimate_fpr(const BfHeader *h, const uint8_t *bits);

/* The rate the design predicts from the layers' added counts. */
extern double bf_scalable_predict_fpr(const BfHeader *h, const uint8_t *payload);

/* Decode layer i's header (validated values only). */
extern void bf_scalable_layer_header(const uint8_t *layer, BfHeader *out);

#endif							/* BF_SCALABLE_H */
