/*
 * replay.c
 *		A main() for the harnesses without libFuzzer: runs
 *		LLVMFuzzerTestOneInput once on each file named on the command line.
 *		Built with the system compiler and ASan/UBSan, it replays the seed
 *		corpus and test/fuzz/regressions where clang's libFuzzer is missing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
	int			i;

	for (i = 1; i < argc; i++)
	{
		FILE	   *f = fopen(argv[i], "rb");
		uint8_t    *buf;
		long		n;

		if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
			fseek(f, 0, SEEK_SET) != 0)
		{
			perror(argv[i]);
			return 2;
		}
		/* exactly n bytes (at least 1 for malloc), so ASan sees overreads */
		buf = malloc(n > 0 ? (size_t) n : 1);
		if (buf == NULL || (n > 0 && fread(buf, 1, (size_t) n, f) != (size_t) n))
		{
			perror(argv[i]);
			return 2;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t) n);
		free(buf);
	}
	printf("replayed %d input(s)\n", argc - 1);
	return 0;
}
