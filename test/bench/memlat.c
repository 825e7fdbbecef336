/*
 * test/bench/memlat.c — the machine's cost of one random cache-line read in
 * a buffer of a given size, for the benchmark's context rows: a check of a
 * filter that does not fit in the caches costs at least this much per row.
 *
 *     memlat BYTES...     prints one line per size:
 *                         BYTES NS_4K_PAGES NS_HUGE_PAGES
 *
 * A dependent chain (each read gives the address of the next, through a
 * random cyclic permutation of the buffer's cache lines), so that reads do
 * not overlap: the latency a query pays when its rows are checked one after
 * the other with much other work in between.  Twice: in ordinary 4 kB pages
 * (malloc), and in a 2 MB-aligned mapping advised to use transparent huge
 * pages, as the extension's cached copy of a filter of 4 MB or more is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>

static uint64_t sink;
static char *mapped_base;

static double
now(void)
{
	struct timespec t;

	/* time on a CPU: on a busy machine, waiting for one is left out */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
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

/*
 * A buffer of n cache lines: ordinary 4 kB pages, or a 2 MB-aligned mapping
 * advised to use transparent huge pages (as the extension's cached copy of
 * a filter of 4 MB or more).
 */
static uint64_t *
alloc_lines(size_t n, int huge, size_t *maplen)
{
	size_t		bytes = n * 64;
	size_t		two_mb = (size_t) 2 << 20;
	char	   *m;
	char	   *aligned;

	if (!huge)
	{
		*maplen = 0;
		return malloc(bytes);
	}
	*maplen = bytes + 2 * two_mb;
	m = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	aligned = (char *) (((uintptr_t) m + two_mb - 1) & ~(uintptr_t) (two_mb - 1));
#ifdef MADV_HUGEPAGE
	(void) madvise(aligned, (bytes + two_mb - 1) & ~(two_mb - 1), MADV_HUGEPAGE);
#endif
	mapped_base = m;
	return (uint64_t *) aligned;
}

/* Nanoseconds per dependent random read in a buffer of bytes. */
static double
latency(size_t bytes, int huge)
{
	size_t		n = bytes / 64;
	size_t	   *perm;
	uint64_t   *buf;
	uint64_t	p = 0;
	long		iters = 2000000;
	double		t0;
	double		best = 1e30;
	size_t		maplen;

	buf = alloc_lines(n, huge, &maplen);
	perm = malloc(n * sizeof(size_t));
	if (buf == NULL || perm == NULL)
	{
		fprintf(stderr, "memlat: out of memory\n");
		exit(1);
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
	sink += p;
	if (huge)
		munmap(mapped_base, maplen);
	else
		free(buf);
	return best;
}

int
main(int argc, char **argv)
{
	for (int a = 1; a < argc; a++)
	{
		size_t		bytes = strtoull(argv[a], NULL, 10);

		if (bytes / 64 < 2)
		{
			fprintf(stderr, "memlat: size too small: %s\n", argv[a]);
			return 1;
		}
		printf("%zu %.1f %.1f\n", bytes, latency(bytes, 0), latency(bytes, 1));
	}
	return sink == 42 ? 2 : 0;
}
