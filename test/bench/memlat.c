/*
 * test/bench/memlat.c — the machine's cost of one random cache-line read in
 * a buffer of a given size, for the benchmark's context rows: a check of a
 * filter that does not fit in the caches costs at least this much per row.
 *
 *     memlat BYTES...     prints one line per size: BYTES NANOSECONDS
 *
 * A dependent chain (each read gives the address of the next, through a
 * random cyclic permutation of the buffer's cache lines), so that reads do
 * not overlap: the latency a query pays when its rows are checked one after
 * the other with much other work in between.  Ordinary 4 kB pages (malloc),
 * as a backend's palloc'd copy of a filter has.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int
main(int argc, char **argv)
{
	for (int a = 1; a < argc; a++)
	{
		size_t		bytes = strtoull(argv[a], NULL, 10);
		size_t		n = bytes / 64;
		size_t	   *perm;
		uint64_t   *buf;
		uint64_t	p = 0;
		long		iters = 2000000;
		double		t0;
		double		best = 1e30;

		if (n < 2)
		{
			fprintf(stderr, "memlat: size too small: %s\n", argv[a]);
			return 1;
		}
		buf = malloc(n * 64);
		perm = malloc(n * sizeof(size_t));
		if (buf == NULL || perm == NULL)
		{
			fprintf(stderr, "memlat: out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			perm[i] = i;
		for (size_t i = n - 1; i > 0; i--)
		{
			size_t		j = next_rand() % (i + 1);
			size_t		t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (size_t i = 0; i < n; i++)
			buf[perm[i] * 8] = perm[(i + 1) % n] * 8;
		free(perm);

		for (long i = 0; i < iters / 4; i++)	/* warm-up */
			p = buf[p];
		for (int r = 0; r < 3; r++)
		{
			double		t;

			t0 = now();
			for (long i = 0; i < iters; i++)
				p = buf[p];
			t = (now() - t0) / iters * 1e9;
			if (t < best)
				best = t;
		}
		printf("%zu %.1f %llu\n", bytes, best, (unsigned long long) (p & 1));
		free(buf);
	}
	return 0;
}
