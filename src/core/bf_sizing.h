/*
 * bf_sizing.h
 *		Choose (bits, hashes) for a capacity n and a target FPR p: the fewest
 *		bits whose predicted FPR at n keys is <= p.
 *
 * blocked: FPR = sum_i Pois(i; 512 n / m) (1 - (1 - 1/512)^(k i))^k
 * classic: FPR = (1 - exp(-k n / m))^k
 *
 * Free of PostgreSQL.
 */
#ifndef BF_SIZING_H
#define BF_SIZING_H

#include <stdbool.h>
#include <stdint.h>

typedef struct BfSize
{
	uint64_t	nbits;
	int			hashes;
	double		predicted_fpr;
} BfSize;

/* Predicted FPR of a layout with nbits, hashes, after n distinct keys. */
extern double bf_predict_fpr(int layout, uint64_t nbits, int hashes, double n);

/*
 * Size a filter.  Returns false if no filter of at most max_nbits bits meets
 * the target (then see bf_max_capacity).  capacity >= 1, 0 < fpr < 1.
 */
extern bool bf_size_for(int layout, uint64_t capacity, double fpr,
						uint64_t max_nbits, BfSize *out);

/* The largest capacity that bf_size_for accepts at this fpr; 0 if none. */
extern uint64_t bf_max_capacity(int layout, double fpr, uint64_t max_nbits);

/* The theoretical optimum bits per key of a layout at fpr (large n). */
extern double bf_optimal_bits_per_key(int layout, double fpr);

#endif							/* BF_SIZING_H */
