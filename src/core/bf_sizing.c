/*
 * bf_sizing.c
 *		Predicted false-positive rates, and the choice of (bits, hashes) for
 *		a capacity and a target false-positive rate.
 *
 * classic: the textbook approximation (1 - e^(-kn/m))^k.
 *
 * blocked: a key sets k bits (drawn with replacement) in one 512-bit block
 * chosen uniformly.  After n keys the load of a block is Binomial(n, 512 / m),
 * which for any useful filter is Poisson with mean lambda = 512 n / m; a
 * block holding i keys has each bit set with probability
 * 1 - (1 - 1/512)^(k i), so a random absent key that lands there tests
 * positive with probability (1 - (1 - 1/512)^(k i))^k.  Hence
 *
 *		FPR = sum_i Pois(i; lambda) (1 - (1 - 1/512)^(k i))^k
 *
 * counting: the same with 128 counters per 64-byte block, 1/128 in place of
 * 1/512; lambda is still 512 n / m for m payload bits (128 n / (m / 4)).
 *
 * The unevenness of the block loads is what makes a blocked filter need
 * more bits than a classic one at the same rate; the classic formula applied
 * to a blocked filter underestimates its rate by roughly 30% at 1%.
 *
 * Sizing looks for the fewest bits whose predicted rate at capacity is at
 * most the target, over every k in 1..BF_MAX_HASHES.  For a fixed k the
 * predicted rate decreases as bits are added, so for each k the smallest
 * admissible size is found by a galloping binary search started from the
 * closed-form classic size; every k after the first needs only one
 * evaluation unless it beats the best size found so far.  Sizing a filter
 * takes well under a millisecond.
 *
 * Free of PostgreSQL.
 */
#include "core/bf_sizing.h"

#include <math.h>

#include "core/bf_counting.h"
#include "core/bf_format.h"

/* x^k for a small positive integer k, by repeated squaring. */
static double
ipow(double x, int k)
{
	double		r = 1.0;

	while (k > 0)
	{
		if (k & 1)
			r *= x;
		x *= x;
		k >>= 1;
	}
	return r;
}

/*
 * The blocked formula for a mean block load lambda.
 *
 * The Poisson weights are computed in log space (lgamma) at the first term
 * and carried by the recurrence Pois(i + 1) = Pois(i) lambda / (i + 1),
 * which neither overflows nor loses precision; the sum is normalised by the
 * weights' total (see below).  We sum i over
 * [lambda - 14 sqrt(lambda) - 40, lambda + 14 sqrt(lambda) + 40]: outside
 * that window the Poisson mass is below 1e-40, and on the lower side the
 * conditional rate is also smaller, so the omitted terms are negligible even
 * against a target of 1e-15.
 *
 * The window stays short: when the least loaded block in it is saturated to
 * double precision (1 - (1 - 1/512)^(k i) rounds to 1, which happens for
 * k i above about 19000) every term is Pois(i) and the rate is 1.  So a sum
 * that is actually computed has lambda below about 21000 and at most about
 * 4100 terms, whatever n and m the caller passes.
 */
/*
 * The probability that a key testing a block whose positions are each set
 * with probability q tests positive.  Blocked: q^k (the k positions almost
 * never repeat in 512).  Counting: the k counters of a key are drawn with
 * replacement from only 128, so a key often has fewer than k distinct ones
 * (at k = 8, one key in five), and a key with d distinct counters tests
 * positive with probability q^d: the rate is sum_d P(D = d) q^d, where
 * dist[d] = P(D = d) (see distinct_dist).
 */
static inline double
probe_positive(double q, int k, const double *dist, int dmin)
{
	double		r = 0.0;
	double		qd;

	if (dist == NULL)
		return ipow(q, k);
	qd = ipow(q, dmin);
	for (int d = dmin; d <= k; d++)
	{
		r += dist[d] * qd;
		qd *= q;
	}
	return r;
}

/*
 * dist[d] = P(D = d), D the number of distinct values among k uniform draws
 * from slots values: after j + 1 draws, D stays at d with probability
 * d / slots and grows from d - 1 with probability (slots - d + 1) / slots.
 * Returns the smallest d whose probability is not negligible (the terms
 * below it change no rate by more than 1e-30).
 */
static int
distinct_dist(int k, int slots, double *dist)
{
	int			dmin = 1;

	for (int d = 0; d <= k; d++)
		dist[d] = 0.0;
	dist[1] = 1.0;
	for (int j = 1; j < k; j++)
	{
		for (int d = j + 1; d >= 1; d--)
			dist[d] = dist[d] * d / slots + dist[d - 1] * (slots - d + 1) / slots;
	}
	/* the fewest distinct counters worth counting: below 1e-30, nothing */
	while (dmin < k && dist[dmin] < 1e-30)
		dmin++;
	return dmin;
}

static double
blocked_fpr(double lambda, int k, int slots)
{
	double		distbuf[BF_MAX_HASHES + 1];
	const double *dist = NULL;
	int			dmin = 1;
	double		lnq = log1p(-1.0 / slots);
	double		klnq = (double) k * lnq;
	double		sigma;
	double		lo_d;
	double		hi_d;
	double		lnlambda;
	double		i;
	double		p;
	double		mass = 0.0;
	double		sum = 0.0;

	if (!(lambda > 0.0))
		return 0.0;
	if (!isfinite(lambda))
		return 1.0;

	sigma = sqrt(lambda);
	lo_d = floor(lambda - 14.0 * sigma - 40.0);
	if (lo_d < 0.0)
		lo_d = 0.0;
	hi_d = ceil(lambda + 14.0 * sigma + 40.0);

	/*
	 * If even the least loaded block in the window is saturated to double
	 * precision, every term is Pois(i) * 1.
	 */
	if (lo_d > 0.0 && ipow(-expm1(lo_d * klnq), k) >= 1.0)
		return 1.0;
	if (slots == BF_COUNTING_SLOTS)
	{
		dmin = distinct_dist(k, slots, distbuf);
		dist = distbuf;
	}

	lnlambda = log(lambda);
	p = exp(-lambda + lo_d * lnlambda - lgamma(lo_d + 1.0));
	for (i = lo_d; i <= hi_d; i += 1.0)
	{
		/* p is Pois(i); an empty block (i = 0) never tests positive */
		mass += p;
		if (i > 0.0)
			sum += p * probe_positive(-expm1(i * klnq), k, dist, dmin);
		p *= lambda / (i + 1.0);
	}

	/*
	 * The window holds all but 1e-40 of the mass, so dividing by the mass
	 * summed changes nothing in exact arithmetic; in floating point it
	 * cancels the rounding error of the first weight (lgamma of a large
	 * argument), common to all terms, which would otherwise show as noise
	 * of about 1e-12 in rates near 1 and break monotonicity there.
	 */
	if (!(mass > 0.0))
		return 1.0;
	sum /= mass;
	if (sum > 1.0)
		sum = 1.0;
	return sum;
}

double
bf_predict_fpr(int layout, uint64_t nbits, int hashes, double n)
{
	double		m = (double) nbits;

	if (nbits == 0 || hashes < 1)
		return 1.0;
	if (isnan(n))
		return 1.0;
	if (!(n > 0.0))
		return 0.0;

	if (layout == BF_LAYOUT_CLASSIC)
		return ipow(-expm1(-(double) hashes * n / m), hashes);
	return blocked_fpr((double) BF_BLOCK_BITS * n / m, hashes,
					   layout == BF_LAYOUT_COUNTING ? BF_COUNTING_SLOTS : BF_BLOCK_BITS);
}

/* Search state of one sizing problem. */
typedef struct SizeProblem
{
	int			layout;
	uint64_t	unit;			/* bits per unit: 512 blocked, 64 classic */
	double		n;
	double		fpr;
} SizeProblem;

static bool
size_ok(const SizeProblem *sp, uint64_t units, int k)
{
	return bf_predict_fpr(sp->layout, units * sp->unit, k, sp->n) <= sp->fpr;
}

/*
 * The smallest number of units in [1, max] whose rate with k hashes meets
 * the target, or 0 if even max does not.  hint is a guess: we gallop from
 * it to bracket the answer, then bisect.  All arithmetic stays within
 * [0, max], so nothing overflows whatever max is.
 */
static uint64_t
smallest_units(const SizeProblem *sp, int k, uint64_t hint, uint64_t max)
{
	uint64_t	bad;			/* largest value known to fail, or 0 */
	uint64_t	good;			/* smallest value known to pass */
	uint64_t	step;

	if (max == 0)
		return 0;
	if (hint < 1)
		hint = 1;
	if (hint > max)
		hint = max;

	if (size_ok(sp, hint, k))
	{
		good = hint;
		bad = 0;
		step = 1;
		for (;;)
		{
			uint64_t	c;

			if (good - 1 < step)
				break;			/* bad = 0: 1 .. good - 1 unexplored */
			c = good - step;
			if (!size_ok(sp, c, k))
			{
				bad = c;
				break;
			}
			good = c;
			if (step > (UINT64_MAX >> 1))
				break;
			step <<= 1;
		}
	}
	else
	{
		if (hint == max)
			return 0;
		bad = hint;
		step = 1;
		for (;;)
		{
			uint64_t	c = (step > max - bad) ? max : bad + step;

			if (size_ok(sp, c, k))
			{
				good = c;
				break;
			}
			if (c == max)
				return 0;
			bad = c;
			if (step <= (UINT64_MAX >> 1))
				step <<= 1;
		}
	}

	while (good - bad > 1)
	{
		uint64_t	mid = bad + (good - bad) / 2;

		if (size_ok(sp, mid, k))
			good = mid;
		else
			bad = mid;
	}
	return good;
}

/*
 * Units (of sp->unit bits) that the classic formula needs with k hashes:
 * m >= k n / -ln(1 - p^(1/k)).  Only a starting point for the search; 0 if
 * not finite or beyond max.
 */
static uint64_t
classic_guess(const SizeProblem *sp, int k, uint64_t max)
{
	double		one_minus = -expm1(log(sp->fpr) / (double) k);	/* 1 - p^(1/k) */
	double		m = (double) k * sp->n / -log(one_minus);
	double		units = ceil(m / (double) sp->unit);

	if (!isfinite(units) || units >= (double) max)
		return max;
	if (units < 1.0)
		return 1;
	return (uint64_t) units;
}

/*
 * The hash count to try first: near the classic optimum -log2(p), which is
 * at or slightly above the blocked optimum.
 */
static int
first_k(double fpr)
{
	double		k = floor(-log2(fpr) + 0.5);

	if (k < 1.0)
		return 1;
	if (k > BF_MAX_HASHES)
		return BF_MAX_HASHES;
	return (int) k;
}

bool
bf_size_for(int layout, uint64_t capacity, double fpr,
			uint64_t max_nbits, BfSize *out)
{
	SizeProblem sp;
	uint64_t	max_units;
	uint64_t	best = 0;
	int			best_k = 0;
	int			k0;
	int			j;

	if (layout < 1 || layout > BF_LAYOUT_MAX)
		return false;
	if (capacity < 1 || !isfinite(fpr) || !(fpr > 0.0) || !(fpr < 1.0))
		return false;

	sp.layout = layout;
	sp.unit = (layout == BF_LAYOUT_CLASSIC) ? BF_CLASSIC_ALIGN_BITS : BF_BLOCK_BITS;
	sp.n = (double) capacity;
	sp.fpr = fpr;
	max_units = max_nbits / sp.unit;
	if (max_units == 0)
		return false;

	/*
	 * Try k0 first, then every other k in 1..BF_MAX_HASHES.  Once a size is
	 * known, another k only matters if it meets the target with one unit
	 * less (then search below that).
	 */
	k0 = first_k(fpr);
	for (j = 0; j <= BF_MAX_HASHES; j++)
	{
		int			k = (j == 0) ? k0 : j;
		uint64_t	u;

		if (j == k0)
			continue;			/* already tried */

		if (best == 0)
		{
			uint64_t	hint = classic_guess(&sp, k, max_units);

			/* blocked needs a few percent more than classic */
			if (layout == BF_LAYOUT_BLOCKED && hint < max_units)
				hint += hint / 16;
			/* counting: four bits per counter, and smaller blocks */
			if (layout == BF_LAYOUT_COUNTING)
				hint = (hint > max_units / 5) ? max_units : hint * 5;
			u = smallest_units(&sp, k, hint, max_units);
			if (u != 0)
			{
				best = u;
				best_k = k;
			}
		}
		else if (best > 1 && size_ok(&sp, best - 1, k))
		{
			u = smallest_units(&sp, k, best - 1, best - 1);
			best = u;
			best_k = k;
		}
	}

	if (best == 0)
		return false;

	/*
	 * Among the hash counts that fit in the chosen size, take the one with
	 * the lowest predicted rate: the extra accuracy costs no memory.  (It
	 * matters for small filters, where one unit holds the capacity at many
	 * k; for large ones the k found above is already the best.)
	 */
	{
		double		best_pred = bf_predict_fpr(layout, best * sp.unit, best_k, sp.n);

		for (int k = 1; k <= BF_MAX_HASHES; k++)
		{
			double		pred = bf_predict_fpr(layout, best * sp.unit, k, sp.n);

			if (pred < best_pred)
			{
				best_pred = pred;
				best_k = k;
			}
		}
	}

	if (out != NULL)
	{
		out->nbits = best * sp.unit;
		out->hashes = best_k;
		out->predicted_fpr = bf_predict_fpr(layout, out->nbits, best_k, sp.n);
	}
	return true;
}

/*
 * The largest capacity bf_size_for accepts.  bf_size_for(c) succeeds exactly
 * when some k meets the target with the largest admissible bit count M, and
 * the rate increases with n, so the answer is the largest n over k with
 * predict(M, k, n) <= fpr: the same predicate bf_size_for uses, so the two
 * agree at the boundary.
 */
uint64_t
bf_max_capacity(int layout, double fpr, uint64_t max_nbits)
{
	uint64_t	unit;
	uint64_t	m;
	uint64_t	best = 0;
	const uint64_t limit = UINT64_C(1) << 62;
	int			k;

	if (layout < 1 || layout > BF_LAYOUT_MAX)
		return 0;
	if (!isfinite(fpr) || !(fpr > 0.0) || !(fpr < 1.0))
		return 0;
	unit = (layout == BF_LAYOUT_CLASSIC) ? BF_CLASSIC_ALIGN_BITS : BF_BLOCK_BITS;
	m = (max_nbits / unit) * unit;
	if (m == 0)
		return 0;

	for (k = 1; k <= BF_MAX_HASHES; k++)
	{
		uint64_t	good;
		uint64_t	bad;

		/* Only a k that holds more than the best so far matters. */
		good = (best == 0) ? 1 : best + 1;
		if (good > limit ||
			!(bf_predict_fpr(layout, m, k, (double) good) <= fpr))
			continue;

		/* Gallop up to a failing capacity (or the limit), then bisect. */
		bad = 0;
		while (good < limit)
		{
			uint64_t	c = (good >= limit / 2) ? limit : good * 2;

			if (!(bf_predict_fpr(layout, m, k, (double) c) <= fpr))
			{
				bad = c;
				break;
			}
			good = c;
		}
		if (bad != 0)
		{
			while (bad - good > 1)
			{
				uint64_t	mid = good + (bad - good) / 2;

				if (bf_predict_fpr(layout, m, k, (double) mid) <= fpr)
					good = mid;
				else
					bad = mid;
			}
		}
		best = good;
	}
	return best;
}

double
bf_optimal_bits_per_key(int layout, double fpr)
{
	const uint64_t n = 10000000;
	BfSize		sz;

	if (!isfinite(fpr) || !(fpr > 0.0) || !(fpr < 1.0))
		return NAN;
	if (layout == BF_LAYOUT_CLASSIC)
		return -log(fpr) / (log(2.0) * log(2.0));
	if (!bf_size_for(layout, n, fpr, UINT64_MAX, &sz))
		return NAN;
	return (double) sz.nbits / (double) n;
}
