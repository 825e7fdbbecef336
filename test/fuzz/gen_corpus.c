/*
 * gen_corpus.c
 *		Write the seed corpora of the fuzzers: valid filters of the three layouts,
 *		several key kinds, sizes and target rates, built with the core code
 *		the extension uses (sizing, hashing, layouts), in binary form into
 *		corpus-binary/ and in text form into corpus-text/; and sizing
 *		problems (the 26-byte inputs of fuzz_sizing) into corpus-sizing/.
 *
 *	gen_corpus <binary-dir> <text-dir> <sizing-dir>
 *
 * Deterministic: the same files every run, so regenerating them leaves the
 * committed seeds unchanged.  Keys use the canonical bytes of their kind
 * (doc/keys.md), so the seeds are what the server would produce.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf_cuckoo.h"
#include "core/bf_format.h"
#include "core/bf_hash.h"
#include "core/bf_layout.h"
#include "core/bf_scalable.h"
#include "core/bf_sizing.h"
#include "core/bf_text.h"
#include "fuzz_common.h"

typedef struct Seed
{
	const char *name;
	int			key_kind;
	uint64_t	capacity;
	double		fpr;
	int			nkeys;			/* keys added */
	uint64_t	added;			/* 0: nkeys; else the counter (as after a union) */
	int			saturate;		/* every bit set */
} Seed;

static const Seed seeds[] = {
	{"empty-n1-p0.5", BF_KEY_NONE, 1, 0.5, 0, 0, 0},
	{"integer-n10-p0.1", BF_KEY_INTEGER, 10, 0.1, 3, 0, 0},
	{"text-n100-p0.01", BF_KEY_TEXT, 100, 0.01, 50, 0, 0},
	{"bytea-n100-p0.333", BF_KEY_BYTEA, 100, 1.0 / 3, 100, 0, 0},
	{"uuid-n300-p0.001", BF_KEY_UUID, 300, 0.001, 200, 0, 0},
	{"float-n50-p1e-09", BF_KEY_FLOAT, 50, 1e-9, 20, 0, 0},
	{"timestamptz-n20-p0.05-overfull", BF_KEY_TIMESTAMPTZ, 20, 0.05, 60, 0, 0},
	{"boolean-n2-p0.01-union", BF_KEY_BOOLEAN, 2, 0.01, 2, UINT64_C(18446744073709551615), 0},
	{"numeric-n5-p0.2-saturated", BF_KEY_NUMERIC, 5, 0.2, 0, 12345, 1},
};

/* The canonical bytes of key number i of a kind; returns their length. */
static size_t
key_bytes(int kind, int i, uint8_t *buf)
{
	switch (kind)
	{
		case BF_KEY_TEXT:
		case BF_KEY_NUMERIC:
			return (size_t) sprintf((char *) buf, kind == BF_KEY_TEXT ? "key %d" : "%d.5", i);
		case BF_KEY_BYTEA:
			for (int j = 0; j < i % 7; j++)
				buf[j] = (uint8_t) (i * 31 + j);
			return (size_t) (i % 7);
		case BF_KEY_UUID:
			for (int j = 0; j < 16; j++)
				buf[j] = (uint8_t) (i * 131 + j * 7);
			return 16;
		case BF_KEY_BOOLEAN:
			buf[0] = (uint8_t) (i & 1);
			return 1;
		case BF_KEY_FLOAT:
			{
				double		d = i * 0.25;
				uint64_t	u;

				memcpy(&u, &d, 8);
				bf_write_u64le(buf, u);
				return 8;
			}
		default:				/* integer, date, timestamp[tz]: int64 LE */
			bf_write_u64le(buf, (uint64_t) (int64_t) (i * 1000003 - 500));
			return 8;
	}
}

static void
write_file(const char *dir, const char *name, const char *ext,
		   const void *data, size_t len)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0)
	{
		fprintf(stderr, "gen_corpus: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/*
 * Sizing problems as fuzz_sizing reads them: byte 0 the layout (bit 1 set:
 * counting, else bit 0 set: classic), byte 1 the mode (4: the rate as raw double bits; 0x10: the limit
 * from bytes 18..25; 0x20: also check bf_max_capacity), the capacity at 2,
 * the rate at 10, the limit at 18 (all little-endian).
 */
typedef struct SizingSeed
{
	uint64_t	capacity;
	double		fpr;
	uint64_t	limit;			/* 0: the extension's 1 GB limit */
} SizingSeed;

static const SizingSeed sizing_seeds[] = {
	{1000, 0.01, 0},
	{1000000, 1e-6, 0},
	{867181822, 0.01, 0},		/* about the largest at 1%, blocked */
	{INT64_MAX, 0.5, 0},
	{1, 0.999, 0},
	{10, 1e-300, 0},
	{100, 0.01, 4096},
	{3, 1.0 / 3, UINT64_MAX},
};

static int
write_sizing_seeds(const char *dir, size_t *total)
{
	int			n = 0;

	for (int layout = BF_LAYOUT_BLOCKED; layout <= BF_LAYOUT_COUNTING; layout++)
	{
		for (size_t i = 0; i < sizeof(sizing_seeds) / sizeof(sizing_seeds[0]); i++)
		{
			const SizingSeed *sd = &sizing_seeds[i];
			uint8_t		in[26] = {0};
			uint64_t	u;
			char		name[64];

			in[0] = (layout == BF_LAYOUT_CLASSIC) ? 1 : (layout == BF_LAYOUT_COUNTING) ? 2 : 0;
			in[1] = 4 | 0x20 | (sd->limit ? 0x10 : 0);
			bf_write_u64le(in + 2, sd->capacity);
			memcpy(&u, &sd->fpr, 8);
			bf_write_u64le(in + 10, u);
			bf_write_u64le(in + 18, sd->limit);
			snprintf(name, sizeof(name), "%s-%zu", bf_layout_name(layout), i);
			write_file(dir, name, "bin", in, sizeof(in));
			*total += sizeof(in);
			n++;
		}
	}
	return n;
}

/* Cuckoo filters: empty, a few keys, full, in binary and text form. */
static int
write_cuckoo_seeds(const char *bindir, const char *textdir, size_t *total)
{
	static const struct
	{
		const char *name;
		uint64_t	capacity;
		double		fpr;
		int			nkeys;
	}			cs[] = {
		{"cuckoo-empty-n1-p0.5", 1, 0.5, 0},
		{"cuckoo-text-n100-p0.01", 100, 0.01, 60},
		{"cuckoo-full-n20-p1e-05", 20, 1e-5, 1000},
		{"cuckoo-n7-p0.3", 7, 0.3, 7},
	};
	int			n = 0;

	for (size_t c = 0; c < sizeof(cs) / sizeof(cs[0]); c++)
	{
		BfCuckooHeader h;
		int			why;
		uint64_t	nbytes;
		uint8_t    *value;
		char	   *text;
		char		key[32];

		FUZZ_CHECK(bf_cuckoo_size(cs[c].capacity, cs[c].fpr, UINT64_C(1) << 30, &h, &why),
				   "cannot size %s", cs[c].name);
		nbytes = bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits);
		value = calloc(1, BF_HEADER_SIZE + nbytes);
		FUZZ_CHECK(value != NULL, "calloc");
		for (int i = 0; i < cs[c].nkeys; i++)
		{
			int			kl = snprintf(key, sizeof(key), "k%d", i);

			if (bf_cuckoo_insert(&h, value + BF_HEADER_SIZE, XXH3_64bits(key, (size_t) kl)))
				h.count++;
		}
		h.key_kind = h.count > 0 ? BF_KEY_TEXT : BF_KEY_NONE;
		bf_cuckoo_encode(&h, value);
		text = malloc(bf_cuckoo_text_length(&h) + 1);
		FUZZ_CHECK(text != NULL, "malloc");
		bf_cuckoo_text_render(&h, value + BF_HEADER_SIZE, text);
		write_file(bindir, cs[c].name, "bin", value, BF_HEADER_SIZE + nbytes);
		write_file(textdir, cs[c].name, "txt", text, strlen(text));
		*total += BF_HEADER_SIZE + nbytes + strlen(text);
		n += 2;
		free(text);
		free(value);
	}
	return n;
}

/*
 * Scalable filters: one layer, and grown to several (blocked and classic),
 * in binary and text form.
 */
static int
write_scalable_seeds(const char *bindir, const char *textdir, size_t *total)
{
	static const struct
	{
		const char *name;
		int			layout;
		uint64_t	capacity;
		double		fpr;
		uint32_t	growth;
		double		ratio;
		int			nkeys;
	}			cs[] = {
		{"scalable-empty-n10-p0.1", BF_LAYOUT_BLOCKED, 10, 0.1, 2, 0.5, 0},
		{"scalable-blocked-n4-p0.01-grown", BF_LAYOUT_BLOCKED, 4, 0.01, 2, 0.5, 40},
		{"scalable-classic-n3-p0.05-g3-r0.25", BF_LAYOUT_CLASSIC, 3, 0.05, 3, 0.25, 30},
		{"scalable-blocked-n2-p0.3-g100-r0.9", BF_LAYOUT_BLOCKED, 2, 0.3, 100, 0.9, 3},
	};
	int			n = 0;

	for (size_t c = 0; c < sizeof(cs) / sizeof(cs[0]); c++)
	{
		BfHeader	h;
		BfHeader	layer;
		size_t		size = BF_HEADER_SIZE;
		uint8_t    *value = calloc(1, size);
		char	   *text;
		char		key[32];

		FUZZ_CHECK(value != NULL, "calloc");
		memset(&h, 0, sizeof(h));
		h.version = BF_FORMAT_VERSION;
		h.family = BF_FAMILY_SCALABLE;
		h.layout = (uint8_t) cs[c].layout;
		h.capacity = cs[c].capacity;
		h.target_fpr = cs[c].fpr;
		h.growth = cs[c].growth;
		h.ratio = cs[c].ratio;
		bf_header_encode(&h, value);
		for (int i = -1; i < cs[c].nkeys; i++)
		{
			BfHash		kh;
			int			kl = snprintf(key, sizeof(key), "k%d", i);

			if (i >= 0)
			{
				kh = bf_hash_bytes(h.layout, key, (size_t) kl);
				if (bf_scalable_add(&h, value + BF_HEADER_SIZE, kh) != BF_SCALABLE_FULL)
					continue;
			}
			/* the first layer, or the next one */
			FUZZ_CHECK(bf_scalable_new_layer(&h, UINT64_C(1) << 30, &layer, NULL, 0) == BF_OK,
					   "cannot grow %s", cs[c].name);
			value = realloc(value, size + BF_HEADER_SIZE + bf_payload_bytes(layer.nbits));
			FUZZ_CHECK(value != NULL, "realloc");
			if (h.layers == 0)
				h.nbits = 0;
			bf_scalable_append(&h, value, &layer);
			size += BF_HEADER_SIZE + bf_payload_bytes(layer.nbits);
			if (i >= 0)
				FUZZ_CHECK(bf_scalable_add(&h, value + BF_HEADER_SIZE, kh) == BF_SCALABLE_SET,
						   "a new layer did not take a key");
		}
		if (cs[c].nkeys > 0)
		{
			h.added = (uint64_t) cs[c].nkeys;
			bf_header_set_added(value, h.added);
			bf_scalable_set_key_kind(&h, value, BF_KEY_TEXT);
			h.key_kind = BF_KEY_TEXT;
		}
		FUZZ_CHECK(bf_header_decode(value, size, NULL, NULL, 0) == BF_OK,
				   "seed %s does not decode", cs[c].name);
		text = malloc(bf_text_length(&h) + 1);
		FUZZ_CHECK(text != NULL, "malloc");
		bf_text_render(&h, value + BF_HEADER_SIZE, text);
		write_file(bindir, cs[c].name, "bin", value, size);
		write_file(textdir, cs[c].name, "txt", text, strlen(text));
		*total += size + strlen(text);
		n += 2;
		free(text);
		free(value);
	}
	return n;
}

int
main(int argc, char **argv)
{
	size_t		total = 0;
	int			nfiles = 0;

	if (argc != 4)
	{
		fprintf(stderr, "usage: %s <binary-dir> <text-dir> <sizing-dir>\n", argv[0]);
		return 2;
	}
	for (int layout = BF_LAYOUT_BLOCKED; layout <= BF_LAYOUT_COUNTING; layout++)
	{
		for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		{
			const Seed *sd = &seeds[s];
			BfSize		size;
			BfHeader	h;
			uint64_t	nbytes;
			uint8_t    *value;
			char	   *text;
			char		name[256];
			char		msg[256];

			FUZZ_CHECK(bf_size_for(layout, sd->capacity, sd->fpr, UINT64_C(1) << 30, &size),
					   "cannot size %s", sd->name);
			memset(&h, 0, sizeof(h));
			h.version = BF_FORMAT_VERSION;
			h.family = (uint8_t) bf_layout_family(layout);
			h.layout = (uint8_t) layout;
			h.key_kind = (uint8_t) sd->key_kind;
			h.hashes = (uint16_t) size.hashes;
			h.layers = 1;
			h.nbits = size.nbits;
			h.capacity = sd->capacity;
			h.target_fpr = sd->fpr;
			h.added = sd->added ? sd->added : (uint64_t) sd->nkeys;

			nbytes = bf_payload_bytes(h.nbits);
			value = calloc(1, BF_HEADER_SIZE + nbytes);
			FUZZ_CHECK(value != NULL, "calloc");
			bf_header_encode(&h, value);
			if (sd->saturate)
				memset(value + BF_HEADER_SIZE, 0xFF, nbytes);
			for (int i = 0; i < sd->nkeys; i++)
			{
				uint8_t		kb[64];
				size_t		kl = key_bytes(sd->key_kind, i, kb);

				bf_add_hash(&h, value + BF_HEADER_SIZE, bf_hash_bytes(layout, kb, kl));
			}
			FUZZ_CHECK(bf_header_decode(value, BF_HEADER_SIZE + nbytes, NULL, msg, sizeof(msg)) == BF_OK,
					   "seed %s is invalid: %s", sd->name, msg);

			text = malloc(bf_text_length(&h) + 1);
			FUZZ_CHECK(text != NULL, "malloc");
			bf_text_render(&h, value + BF_HEADER_SIZE, text);

			snprintf(name, sizeof(name), "%s-%s", bf_layout_name(layout), sd->name);
			write_file(argv[1], name, "bin", value, BF_HEADER_SIZE + nbytes);
			write_file(argv[2], name, "txt", text, strlen(text));
			total += BF_HEADER_SIZE + nbytes + strlen(text);
			nfiles += 2;
			free(text);
			free(value);
		}
	}
	nfiles += write_cuckoo_seeds(argv[1], argv[2], &total);
	nfiles += write_scalable_seeds(argv[1], argv[2], &total);
	nfiles += write_sizing_seeds(argv[3], &total);
	printf("gen_corpus: %d seed files, %zu bytes, in %s, %s and %s\n",
		   nfiles, total, argv[1], argv[2], argv[3]);
	return 0;
}
