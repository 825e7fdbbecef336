/*
 * test_core.c
 *		Unit tests of the PostgreSQL-free core (src/core): byte format, text
 *		form and base64, sizing, whole-array operations and estimates, and a
 *		simulation of both layouts against their target false-positive rate.
 *
 * Run with "make -C test/core".  Exits non-zero on any failure.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/bf_cuckoo.h"
#include "core/bf_format.h"
#include "core/bf_hash.h"
#include "core/bf_layout.h"
#include "core/bf_scalable.h"
#include "core/bf_sizing.h"
#include "core/bf_text.h"

/* ----------------------------------------------------------------
 * A tiny harness
 * ----------------------------------------------------------------
 */
static int	n_checks = 0;
static int	n_failures = 0;

static void
check_at(const char *file, int line, int ok, const char *fmt, ...)
{
	va_list		ap;

	n_checks++;
	if (ok)
		return;
	n_failures++;
	fprintf(stderr, "%s:%d: FAILED: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(cond) check_at(__FILE__, __LINE__, (cond) ? 1 : 0, "%s", #cond)
#define CHECKF(cond, ...) check_at(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)

/* xorshift64*: reproducible pseudo-random numbers for tests */
static uint64_t rng_state = UINT64_C(0x9E3779B97F4A7C15);

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

/* A message must be one non-empty line starting with a lowercase letter. */
static int
good_message(const char *msg)
{
	return msg[0] >= 'a' && msg[0] <= 'z' && strchr(msg, '\n') == NULL;
}

static double
elapsed_ms(clock_t t0)
{
	return (double) (clock() - t0) * 1000.0 / CLOCKS_PER_SEC;
}

/* ----------------------------------------------------------------
 * Byte format
 * ----------------------------------------------------------------
 */

static BfHeader
make_header(int layout, uint64_t nbits)
{
	BfHeader	h;

	memset(&h, 0, sizeof(h));
	h.version = BF_FORMAT_VERSION;
	h.family = (uint8_t) bf_layout_family(layout);
	h.layout = (uint8_t) layout;
	h.key_kind = BF_KEY_TEXT;
	h.hashes = 7;
	h.flags = 0;
	h.layers = 1;
	h.nbits = nbits;
	h.capacity = 100;
	h.target_fpr = 0.01;
	h.added = 3;
	return h;
}

static int
headers_equal(const BfHeader *a, const BfHeader *b)
{
	return a->version == b->version && a->family == b->family &&
		a->layout == b->layout && a->key_kind == b->key_kind &&
		a->hashes == b->hashes && a->flags == b->flags &&
		a->layers == b->layers && a->nbits == b->nbits &&
		a->capacity == b->capacity &&
		memcmp(&a->target_fpr, &b->target_fpr, sizeof(double)) == 0 &&
		a->added == b->added;
}

static void
test_format_round_trip(void)
{
	static const uint8_t expect_1024[64] = {
		'B', 'L', 'M', 'F', 2, 1, 1, 2, 7, 0, 0, 0, 1, 0, 0, 0,
		0x00, 0x04, 0, 0, 0, 0, 0, 0,	/* nbits 1024 */
		100, 0, 0, 0, 0, 0, 0, 0,	/* capacity */
		0x7b, 0x14, 0xae, 0x47, 0xe1, 0x7a, 0x84, 0x3f,	/* 0.01 */
		3, 0, 0, 0, 0, 0, 0, 0,	/* added */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
	};
	uint8_t		buf[64 + 128];
	BfHeader	h = make_header(BF_LAYOUT_BLOCKED, 1024);
	BfHeader	g;
	char		msg[256];
	int			layout;

	bf_header_encode(&h, buf);
	CHECK(memcmp(buf, expect_1024, 64) == 0);
	memset(buf + 64, 0xA5, 128);
	CHECK(bf_header_decode(buf, sizeof(buf), &g, msg, sizeof(msg)) == BF_OK);
	CHECK(msg[0] == '\0');
	CHECK(headers_equal(&h, &g));

	bf_header_set_key_kind(buf, BF_KEY_UUID);
	bf_header_set_added(buf, UINT64_C(0x0102030405060708));
	CHECK(bf_header_decode(buf, sizeof(buf), &g, NULL, 0) == BF_OK);
	CHECK(g.key_kind == BF_KEY_UUID);
	CHECK(g.added == UINT64_C(0x0102030405060708));
	CHECK(buf[40] == 0x08 && buf[47] == 0x01);

	/*
	 * Format versions: 1 is read and keeps its number until the value
	 * changes (a change writes 2); 3 is refused, with a message that names
	 * what is read.
	 */
	buf[4] = 1;
	CHECK(bf_header_decode(buf, sizeof(buf), &g, NULL, 0) == BF_OK);
	CHECK(g.version == 1);
	bf_header_encode(&g, buf);
	CHECK(buf[4] == 1);
	bf_header_set_added(buf, 4);
	CHECK(buf[4] == BF_FORMAT_VERSION && BF_FORMAT_VERSION == 2);
	buf[4] = 1;
	bf_header_set_layers(buf, 1, 1024);
	CHECK(buf[4] == 2);
	buf[4] = 3;
	CHECK(bf_header_decode(buf, sizeof(buf), &g, msg, sizeof(msg)) == BF_ERR_VERSION);
	CHECK(strcmp(msg, "unrecognized format version 3 (this build reads versions 1 to 2)") == 0);
	CHECK(!bf_format_version_known(0) && bf_format_version_known(1) &&
		  bf_format_version_known(2) && !bf_format_version_known(3));
	buf[4] = 2;

	/* both layouts, extreme field values */
	for (layout = 1; layout <= BF_LAYOUT_MAX; layout++)
	{
		uint8_t		b2[64 + 64];

		h = make_header(layout, 512);
		h.hashes = BF_MAX_HASHES;
		h.key_kind = BF_KEY_KIND_MAX;
		h.capacity = UINT64_MAX;
		h.added = UINT64_MAX;
		h.target_fpr = 0.3333333333333333;
		bf_header_encode(&h, b2);
		memset(b2 + 64, 0xFF, 64);
		CHECK(bf_header_decode(b2, sizeof(b2), &g, msg, sizeof(msg)) == BF_OK);
		CHECK(headers_equal(&h, &g));
	}

	/* a classic bit count that is a multiple of 64 but not of 512 */
	h = make_header(BF_LAYOUT_CLASSIC, 64);
	bf_header_encode(&h, buf);
	CHECK(bf_header_decode(buf, 64 + 8, &g, msg, sizeof(msg)) == BF_OK);
}

/* One mutation of a valid value and the outcome it must produce. */
typedef struct FormatCase
{
	const char *what;
	void		(*mutate) (uint8_t *buf, size_t *len);
	BfStatus	status;
	const char *message;
} FormatCase;

static void m_short(uint8_t *b, size_t *len) { (void) b; *len = 63; }
static void m_empty(uint8_t *b, size_t *len) { (void) b; *len = 0; }
static void m_magic(uint8_t *b, size_t *len) { (void) len; b[3] = 'G'; }
static void m_version(uint8_t *b, size_t *len) { (void) len; b[4] = 7; }
static void m_version0(uint8_t *b, size_t *len) { (void) len; b[4] = 0; }
static void m_family(uint8_t *b, size_t *len) { (void) len; b[5] = 2; }
static void m_layout0(uint8_t *b, size_t *len) { (void) len; b[6] = 0; }
static void m_layout3(uint8_t *b, size_t *len) { (void) len; b[6] = 3; }
static void m_layout4(uint8_t *b, size_t *len) { (void) len; b[6] = 4; }
static void m_family3(uint8_t *b, size_t *len) { (void) len; b[5] = 3; }
static void m_kind(uint8_t *b, size_t *len) { (void) len; b[7] = BF_KEY_KIND_MAX + 1; }
static void m_hashes0(uint8_t *b, size_t *len) { (void) len; b[8] = 0; b[9] = 0; }
static void m_hashes65(uint8_t *b, size_t *len) { (void) len; b[8] = 65; b[9] = 0; }
static void m_hashes_big(uint8_t *b, size_t *len) { (void) len; b[8] = 7; b[9] = 1; }
static void m_flags(uint8_t *b, size_t *len) { (void) len; b[11] = 0x80; }
static void m_layers0(uint8_t *b, size_t *len) { (void) len; b[12] = 0; }
static void m_layers2(uint8_t *b, size_t *len) { (void) len; b[12] = 2; }
static void m_nbits0(uint8_t *b, size_t *len) { (void) len; bf_write_u64le(b + 16, 0); }
static void m_nbits1000(uint8_t *b, size_t *len) { (void) len; bf_write_u64le(b + 16, 1000); }
static void m_nbits_classic(uint8_t *b, size_t *len) { (void) len; b[6] = 2; bf_write_u64le(b + 16, 1000); }
static void m_nbits_huge(uint8_t *b, size_t *len) { (void) len; bf_write_u64le(b + 16, UINT64_MAX - 511); }
static void m_nbits_max(uint8_t *b, size_t *len) { (void) len; b[6] = 2; bf_write_u64le(b + 16, UINT64_MAX - 63); }
static void m_len_short(uint8_t *b, size_t *len) { (void) b; *len = 100; }
static void m_len_long(uint8_t *b, size_t *len) { (void) b; *len = 64 + 128 + 1; }
static void m_capacity(uint8_t *b, size_t *len) { (void) len; bf_write_u64le(b + 24, 0); }
static void m_fpr_value(uint8_t *b, size_t *len, double d) { (void) len; uint64_t u; memcpy(&u, &d, 8); bf_write_u64le(b + 32, u); }
static void m_fpr0(uint8_t *b, size_t *len) { m_fpr_value(b, len, 0.0); }
static void m_fpr1(uint8_t *b, size_t *len) { m_fpr_value(b, len, 1.0); }
static void m_fprneg(uint8_t *b, size_t *len) { m_fpr_value(b, len, -0.5); }
static void m_fprnan(uint8_t *b, size_t *len) { m_fpr_value(b, len, NAN); }
static void m_fprinf(uint8_t *b, size_t *len) { m_fpr_value(b, len, INFINITY); }
static void m_reserved48(uint8_t *b, size_t *len) { (void) len; b[48] = 1; }
static void m_reserved63(uint8_t *b, size_t *len) { (void) len; b[63] = 0x80; }

static const FormatCase format_cases[] = {
	{"short", m_short, BF_ERR_TRUNCATED, "value is 63 bytes, shorter than the 64-byte header"},
	{"empty", m_empty, BF_ERR_TRUNCATED, "value is 0 bytes, shorter than the 64-byte header"},
	{"magic", m_magic, BF_ERR_MAGIC, "bad magic bytes 42 4c 4d 47 (expected \"BLMF\")"},
	{"version", m_version, BF_ERR_VERSION, "unrecognized format version 7 (this build reads versions 1 to 2)"},
	{"version0", m_version0, BF_ERR_VERSION, "unrecognized format version 0 (this build reads versions 1 to 2)"},
	{"family", m_family, BF_ERR_LAYOUT, "layout blocked does not belong to family 2 (counting is family 2, the others family 1)"},
	{"family 3", m_family3, BF_ERR_FAMILY, "unsupported filter family 3 (this build reads families 1, bloom, 2, counting, and 4, scalable)"},
	{"layout0", m_layout0, BF_ERR_LAYOUT, "unrecognized layout 0 (expected 1 for blocked, 2 for classic or 3 for counting)"},
	{"layout3", m_layout3, BF_ERR_LAYOUT, "layout counting does not belong to family 1 (counting is family 2, the others family 1)"},
	{"layout4", m_layout4, BF_ERR_LAYOUT, "unrecognized layout 4 (expected 1 for blocked, 2 for classic or 3 for counting)"},
	{"key kind", m_kind, BF_ERR_KEY_KIND, "unrecognized key kind 11 (this build knows 0..10)"},
	{"hashes 0", m_hashes0, BF_ERR_HASHES, "hash count 0 is out of range 1..64"},
	{"hashes 65", m_hashes65, BF_ERR_HASHES, "hash count 65 is out of range 1..64"},
	{"hashes 263", m_hashes_big, BF_ERR_HASHES, "hash count 263 is out of range 1..64"},
	{"flags", m_flags, BF_ERR_FLAGS, "unrecognized flags 0x8000 (no format version defines flags)"},
	{"layers 0", m_layers0, BF_ERR_LAYERS, "layer count 0 is not supported (a filter of family 1 has exactly 1 layer)"},
	{"layers 2", m_layers2, BF_ERR_LAYERS, "layer count 2 is not supported (a filter of family 1 has exactly 1 layer)"},
	{"nbits 0", m_nbits0, BF_ERR_NBITS, "bit count 0 is not positive"},
	{"nbits 1000", m_nbits1000, BF_ERR_NBITS, "bit count 1000 is not a multiple of 512 for layout blocked"},
	{"nbits classic", m_nbits_classic, BF_ERR_NBITS, "bit count 1000 is not a multiple of 64 for layout classic"},
	{"nbits huge", m_nbits_huge, BF_ERR_LENGTH, "length 192 does not match bit count 18446744073709551104 (expected 2305843009213693952 bytes)"},
	{"nbits max", m_nbits_max, BF_ERR_LENGTH, "length 192 does not match bit count 18446744073709551552 (expected 2305843009213694008 bytes)"},
	{"length short", m_len_short, BF_ERR_LENGTH, "length 100 does not match bit count 1024 (expected 192 bytes)"},
	{"length long", m_len_long, BF_ERR_LENGTH, "length 193 does not match bit count 1024 (expected 192 bytes)"},
	{"capacity", m_capacity, BF_ERR_CAPACITY, "capacity 0 is out of range (must be at least 1)"},
	{"fpr 0", m_fpr0, BF_ERR_FPR, "target false-positive rate 0 is out of range (0, 1)"},
	{"fpr 1", m_fpr1, BF_ERR_FPR, "target false-positive rate 1 is out of range (0, 1)"},
	{"fpr neg", m_fprneg, BF_ERR_FPR, "target false-positive rate -0.5 is out of range (0, 1)"},
	{"fpr nan", m_fprnan, BF_ERR_FPR, "target false-positive rate nan is out of range (0, 1)"},
	{"fpr inf", m_fprinf, BF_ERR_FPR, "target false-positive rate inf is out of range (0, 1)"},
	{"reserved 48", m_reserved48, BF_ERR_RESERVED, "reserved header bytes are not zero"},
	{"reserved 63", m_reserved63, BF_ERR_RESERVED, "reserved header bytes are not zero"},
};

static void
test_format_errors(void)
{
	size_t		i;

	for (i = 0; i < sizeof(format_cases) / sizeof(format_cases[0]); i++)
	{
		const FormatCase *fc = &format_cases[i];
		uint8_t		buf[64 + 128 + 1];
		BfHeader	h = make_header(BF_LAYOUT_BLOCKED, 1024);
		BfHeader	out;
		size_t		len = 64 + 128;
		char		msg[256];
		BfStatus	st;

		bf_header_encode(&h, buf);
		memset(buf + 64, 0, sizeof(buf) - 64);
		fc->mutate(buf, &len);
		memset(&out, 0x5A, sizeof(out));
		st = bf_header_decode(buf, len, &out, msg, sizeof(msg));
		CHECKF(st == fc->status, "%s: status %d, expected %d (%s)",
			   fc->what, (int) st, (int) fc->status, msg);
		CHECKF(strcmp(msg, fc->message) == 0, "%s: message \"%s\", expected \"%s\"",
			   fc->what, msg, fc->message);
		CHECKF(out.version == 0x5A, "%s: output written on failure", fc->what);
		/* the same without a message buffer, and with a tiny one */
		CHECK(bf_header_decode(buf, len, NULL, NULL, 0) == fc->status);
		CHECK(bf_header_decode(buf, len, NULL, msg, 5) == fc->status);
		CHECK(strlen(msg) == 4);
	}
	CHECK(bf_header_decode(NULL, 0, NULL, NULL, 0) == BF_ERR_TRUNCATED);
}

/*
 * Random corruption of a valid value: decoding either fails with a proper
 * message or succeeds, and then the header re-encodes to the same bytes.
 */
static void
test_format_fuzz(void)
{
	int			iter;
	int			accepted = 0;

	for (iter = 0; iter < 200000; iter++)
	{
		uint8_t		buf[64 + 64];
		uint8_t		again[64];
		BfHeader	h = make_header((int) (rng() % 2) + 1, 512);
		BfHeader	out;
		char		msg[256];
		size_t		len = sizeof(buf);
		int			nflip = (int) (rng() % 3) + 1;
		int			j;
		BfStatus	st;

		bf_header_encode(&h, buf);
		memset(buf + 64, 0, 64);
		for (j = 0; j < nflip; j++)
			buf[rng() % 64] ^= (uint8_t) (1u << (rng() % 8));
		if (rng() % 8 == 0)
			len = (size_t) (rng() % sizeof(buf));
		st = bf_header_decode(buf, len, &out, msg, sizeof(msg));
		if (st == BF_OK)
		{
			accepted++;
			bf_header_encode(&out, again);
			CHECK(memcmp(again, buf, 64) == 0);
			CHECK(len == 64 + out.nbits / 8);
		}
		else
			CHECKF(good_message(msg), "bad message \"%s\"", msg);
	}
	CHECK(accepted > 0);
}

static void
test_names(void)
{
	static const char *const kinds[] = {
		"none", "integer", "text", "bytea", "uuid", "boolean", "float",
		"numeric", "date", "timestamp", "timestamptz"
	};
	int			i;

	CHECK(strcmp(bf_layout_name(BF_LAYOUT_BLOCKED), "blocked") == 0);
	CHECK(strcmp(bf_layout_name(BF_LAYOUT_CLASSIC), "classic") == 0);
	CHECK(bf_layout_name(0) == NULL && bf_layout_name(4) == NULL && bf_layout_name(-1) == NULL);
	CHECK(bf_layout_from_name("blocked") == BF_LAYOUT_BLOCKED);
	CHECK(bf_layout_from_name("classic") == BF_LAYOUT_CLASSIC);
	CHECK(strcmp(bf_layout_name(BF_LAYOUT_COUNTING), "counting") == 0);
	CHECK(bf_layout_from_name("counting") == BF_LAYOUT_COUNTING);
	CHECK(bf_layout_from_name("Blocked") == -1 && bf_layout_from_name("") == -1 &&
		  bf_layout_from_name(NULL) == -1);
	CHECK(sizeof(kinds) / sizeof(kinds[0]) == BF_KEY_KIND_MAX + 1);
	for (i = 0; i <= BF_KEY_KIND_MAX; i++)
	{
		CHECK(strcmp(bf_key_kind_name(i), kinds[i]) == 0);
		CHECK(bf_key_kind_from_name(kinds[i]) == i);
	}
	CHECK(bf_key_kind_name(BF_KEY_KIND_MAX + 1) == NULL && bf_key_kind_name(-1) == NULL);
	CHECK(bf_key_kind_from_name("int") == -1 && bf_key_kind_from_name(NULL) == -1);
}

/* ----------------------------------------------------------------
 * base64 and numbers
 * ----------------------------------------------------------------
 */

static void
test_base64(void)
{
	/* RFC 4648, section 10 */
	static const char *const vec[][2] = {
		{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
		{"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}
	};
	/* refused encodings of 1 or 2 bytes */
	static const struct
	{
		const char *s;
		size_t		len;
		size_t		nbytes;
	}			bad[] = {
		{"Zh==", 4, 1}, {"Zg=", 3, 1}, {"Zg", 2, 1}, {"Zg===", 5, 1},
		{"Z===", 4, 1}, {"Zg=A", 4, 1}, {"ZgA=", 4, 1}, {"Z g=", 4, 1},
		{"Zg==\n", 5, 1}, {"Zg-=", 4, 1}, {"Zg_=", 4, 1}, {"====", 4, 1},
		{"Zg\0=", 4, 1}, {" Zg=", 4, 1},
		{"Zm9=", 4, 2}, {"Zm8", 3, 2}, {"Zm==", 4, 2}, {"Zm8 ", 4, 2},
		{"=m8=", 4, 2}, {"Zm8=", 4, 1}, {"Zg==", 4, 2}
	};
	char		enc[64];
	uint8_t		dec[64];
	size_t		i;
	int			n;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++)
	{
		size_t		len = strlen(vec[i][0]);

		CHECK(bf_base64_encoded_length(len) == strlen(vec[i][1]));
		bf_base64_encode((const uint8_t *) vec[i][0], len, enc);
		CHECKF(strcmp(enc, vec[i][1]) == 0, "encode \"%s\" gave \"%s\"", vec[i][0], enc);
		memset(dec, 0, sizeof(dec));
		CHECK(bf_base64_decode(vec[i][1], strlen(vec[i][1]), dec, len));
		CHECK(memcmp(dec, vec[i][0], len) == 0);
		/* wrong expected length */
		CHECK(!bf_base64_decode(vec[i][1], strlen(vec[i][1]), dec, len + 1));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECKF(!bf_base64_decode(bad[i].s, bad[i].len, dec, bad[i].nbytes),
			   "accepted bad base64 case %zu", i);

	/* every byte value and every tail length round-trips */
	for (n = 0; n <= 40; n++)
	{
		uint8_t		src[40];
		int			j;

		for (j = 0; j < n; j++)
			src[j] = (uint8_t) rng();
		bf_base64_encode(src, (size_t) n, enc);
		CHECK(strlen(enc) == bf_base64_encoded_length((size_t) n));
		CHECK(bf_base64_decode(enc, strlen(enc), dec, (size_t) n));
		CHECK(memcmp(src, dec, (size_t) n) == 0);
	}

	/*
	 * Canonical only: changing any one character of a valid encoding to any
	 * other byte must be refused or decode to different bytes.
	 */
	{
		const uint8_t src[5] = {0x00, 0xFF, 0x10, 0x80, 0x7F};

		bf_base64_encode(src, 5, enc);
		for (i = 0; i < 8; i++)
		{
			int			c;

			for (c = 0; c < 256; c++)
			{
				char		mut[9];

				if (c == (unsigned char) enc[i])
					continue;
				memcpy(mut, enc, 9);
				mut[i] = (char) c;
				if (bf_base64_decode(mut, 8, dec, 5))
					CHECKF(memcmp(dec, src, 5) != 0, "two encodings of one value at %zu", i);
			}
		}
	}
}

static void
test_payload_messages(void)
{
	uint8_t		bits[4];
	char		msg[256];
	const struct
	{
		const char *data;
		uint64_t	nbytes;
		BfStatus	status;
		const char *message;
	}			cases[] = {
		{"AAAAAA==", 4, BF_OK, ""},
		{"AAAAAA=", 4, BF_ERR_LENGTH, "data has 7 base64 characters, expected 8 for 4 bytes"},
		{"AAAA#A==", 4, BF_ERR_SYNTAX, "invalid base64 character '#' at offset 4"},
		{"AAAA A==", 4, BF_ERR_SYNTAX, "invalid base64 character 0x20 at offset 4"},
		{"AA=AAA==", 4, BF_ERR_SYNTAX, "unexpected base64 padding '=' at offset 2"},
		{"AAAAAAA=", 4, BF_ERR_SYNTAX, "expected base64 padding '=' at offset 6, found 'A'"},
		{"AAAAAA=\x01", 4, BF_ERR_SYNTAX, "invalid base64 character 0x01 at offset 7"},
		{"AAAAAB==", 4, BF_ERR_SYNTAX, "non-canonical base64 at offset 5: the unused low bits of the last character are not zero"},
		{"AAAAAAB=", 5, BF_ERR_SYNTAX, "non-canonical base64 at offset 6: the unused low bits of the last character are not zero"},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		uint8_t		big[8];
		BfStatus	st = bf_text_decode_payload(cases[i].data, strlen(cases[i].data),
											   cases[i].nbytes <= 4 ? bits : big,
											   cases[i].nbytes, msg, sizeof(msg));

		CHECKF(st == cases[i].status, "payload %zu: status %d (%s)", i, (int) st, msg);
		CHECKF(strcmp(msg, cases[i].message) == 0, "payload %zu: \"%s\"", i, msg);
	}
}

static void
test_format_double(void)
{
	const struct
	{
		double		d;
		const char *s;
	}			cases[] = {
		{0.01, "0.01"}, {0.001, "0.001"}, {1e-7, "1e-07"}, {0.5, "0.5"},
		{0.3333333333333333, "0.3333333333333333"}, {0.1 + 0.2, "0.30000000000000004"},
		{1e-15, "1e-15"}, {0.999, "0.999"}, {5e-324, "5e-324"}, {0.0, "0"},
		{1.0, "1"}, {123456789.0, "123456789"}
	};
	char		buf[64];
	size_t		i;
	int			j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int			n = bf_format_double(cases[i].d, buf, sizeof(buf));

		CHECKF(strcmp(buf, cases[i].s) == 0, "format_double gave \"%s\", expected \"%s\"",
			   buf, cases[i].s);
		CHECK(n == (int) strlen(cases[i].s));
	}
	/* shortest round trip for random doubles in (0, 1) */
	for (j = 0; j < 20000; j++)
	{
		double		d = (double) (rng() >> 11) / 9007199254740992.0;
		char		shorter[400];
		int			p = 0;
		const char *c;

		bf_format_double(d, buf, sizeof(buf));
		CHECK(strtod(buf, NULL) == d);

		/* count the significant digits: skip "0." and leading zeros */
		for (c = buf; *c == '0' || *c == '.'; c++)
			;
		for (; *c && *c != 'e'; c++)
			if (*c >= '0' && *c <= '9')
				p++;
		/* one significant digit less does not round-trip */
		if (p > 1)
		{
			snprintf(shorter, sizeof(shorter), "%.*g", p - 1, d);
			CHECKF(strtod(shorter, NULL) != d, "%s is not shortest", buf);
		}
	}
}

/* ----------------------------------------------------------------
 * Text form
 * ----------------------------------------------------------------
 */

/* Render h with random bits, parse it back, compare; returns the text. */
static char *
text_round_trip(const BfHeader *h)
{
	uint64_t	nbytes = bf_payload_bytes(h->nbits);
	uint8_t    *bits = malloc(nbytes);
	uint8_t    *back = malloc(nbytes);
	size_t		len = bf_text_length(h);
	char	   *text = malloc(len + 1);
	char	   *again = malloc(len + 1);
	BfHeader	g;
	const char *data;
	size_t		datalen;
	char		msg[256];
	uint64_t	i;
	BfStatus	st;

	for (i = 0; i < nbytes; i++)
		bits[i] = (uint8_t) rng();
	text[len] = 'X';
	bf_text_render(h, bits, text);
	CHECK(text[len] == '\0' && strlen(text) == len);

	st = bf_text_parse_header(text, &g, &data, &datalen, msg, sizeof(msg));
	CHECKF(st == BF_OK, "parse of own output failed: %s", msg);
	if (st == BF_OK)
	{
		CHECK(headers_equal(h, &g));
		CHECK(datalen == bf_base64_encoded_length(nbytes));
		CHECK(data + datalen == text + len);
		st = bf_text_decode_payload(data, datalen, back, nbytes, msg, sizeof(msg));
		CHECKF(st == BF_OK, "payload: %s", msg);
		CHECK(memcmp(bits, back, nbytes) == 0);
		bf_text_render(&g, back, again);
		CHECK(strcmp(text, again) == 0);
	}
	free(bits);
	free(back);
	free(again);
	return text;
}

static void
test_text_round_trip(void)
{
	const double fprs[] = {0.01, 0.001, 1e-7, 0.3333333333333333, 0.5, 1e-15, 0.999};
	const uint64_t sizes[] = {512, 1024, 1536, 4096, 65536};
	char	   *text;
	BfHeader	h;
	size_t		i;
	int			layout;
	int			kind;

	/* the documented example */
	h = make_header(BF_LAYOUT_BLOCKED, 1024);
	text = text_round_trip(&h);
	{
		const char *expect = "version=2 layout=blocked hashes=7 key_kind=text bits=1024 "
		"capacity=100 target_fpr=0.01 added=3 data=";

		CHECK(strncmp(text, expect, strlen(expect)) == 0);
		CHECK(strlen(text) == strlen(expect) + 172);
	}
	free(text);

	for (layout = 1; layout <= BF_LAYOUT_MAX; layout++)
	{
		for (kind = 0; kind <= BF_KEY_KIND_MAX; kind++)
		{
			for (i = 0; i < sizeof(fprs) / sizeof(fprs[0]); i++)
			{
				h = make_header(layout, sizes[(size_t) kind % 5]);
				h.key_kind = (uint8_t) kind;
				h.target_fpr = fprs[i];
				h.hashes = (uint16_t) (1 + (rng() % BF_MAX_HASHES));
				h.capacity = 1 + rng() % 1000000;
				h.added = (kind % 3 == 0) ? 0 : rng();
				free(text_round_trip(&h));
			}
		}
		/* classic sizes that are not multiples of 512; all three tails */
		for (i = 1; i <= 9; i++)
		{
			h = make_header(layout, layout == BF_LAYOUT_CLASSIC ? 64 * i : 512 * i);
			h.capacity = UINT64_MAX;
			h.added = UINT64_MAX;
			free(text_round_trip(&h));
		}
	}
}

static const char *const good_text =
"version=1 layout=blocked hashes=7 key_kind=text bits=512 capacity=100 "
"target_fpr=0.01 added=3 data="
"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==";

typedef struct TextCase
{
	const char *text;
	BfStatus	status;
	const char *message;
} TextCase;

#define T_HDR "version=1 layout=blocked hashes=7 key_kind=text bits=512 capacity=100 "
#define T_DATA "data=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="

static const TextCase text_cases[] = {
	{"", BF_ERR_SYNTAX, "unexpected end of input at position 0, expected \"version=\""},
	{" version=1", BF_ERR_SYNTAX, "expected \"version=\" at position 0"},
	{"Version=1", BF_ERR_SYNTAX, "expected \"version=\" at position 0"},
	{"version", BF_ERR_SYNTAX, "unexpected end of input at position 7, expected \"version=\""},
	{"version=", BF_ERR_SYNTAX, "version is empty at position 8"},
	{"version=7 layout=blocked", BF_ERR_VERSION, "unrecognized format version 7 (this build reads versions 1 to 2)"},
	{"version=0", BF_ERR_VERSION, "unrecognized format version 0 (this build reads versions 1 to 2)"},
	{"version=01", BF_ERR_SYNTAX, "version \"01\" has a leading zero"},
	{"version=+1", BF_ERR_SYNTAX, "version \"+1\" is not an unsigned decimal integer"},
	{"version=99999999999999999999", BF_ERR_VERSION, "version \"99999999999999999999\" is out of range"},
	{"version=1", BF_ERR_SYNTAX, "unexpected end of input at position 9, expected \" layout=\""},
	{"version=1  layout=blocked", BF_ERR_SYNTAX, "expected \"layout=\" at position 10"},
	{"version=1\tlayout=blocked", BF_ERR_SYNTAX, "version \"1\\x09layout=blocked\" is not an unsigned decimal integer"},
	{"version=1 layout=bloom hashes=7", BF_ERR_LAYOUT, "unrecognized layout \"bloom\" (expected blocked, classic or counting)"},
	{"version=1 layout= hashes=7", BF_ERR_LAYOUT, "unrecognized layout \"\" (expected blocked, classic or counting)"},
	{"version=1 layout=blocked hashes=", BF_ERR_SYNTAX, "hashes is empty at position 32"},
	{"version=1 layout=blocked hash=7", BF_ERR_SYNTAX, "expected \"hashes=\" at position 25"},
	{"version=1 layout=blocked hashes=70000 key_kind=text", BF_ERR_HASHES, "hash count 70000 is out of range 1..64"},
	{"version=1 layout=blocked hashes=7 key_kind=int", BF_ERR_KEY_KIND, "unrecognized key kind \"int\""},
	{"version=1 layout=blocked hashes=7 key_kind=te\xc3\xa9xt", BF_ERR_KEY_KIND, "unrecognized key kind \"te\\xc3\\xa9xt\""},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=-512", BF_ERR_SYNTAX, "bits \"-512\" is not an unsigned decimal integer"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=18446744073709551616", BF_ERR_NBITS, "bits \"18446744073709551616\" is out of range"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=512 capacity=01", BF_ERR_SYNTAX, "capacity \"01\" has a leading zero"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=512 capacity=1e3", BF_ERR_SYNTAX, "capacity \"1e3\" is not an unsigned decimal integer"},
	{T_HDR "target_fpr=0.010 added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr \"0.010\" is not in canonical form (expected \"0.01\")"},
	{T_HDR "target_fpr=1e-7 added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr \"1e-7\" is not in canonical form (expected \"1e-07\")"},
	{T_HDR "target_fpr=.01 added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr \".01\" is not in canonical form (expected \"0.01\")"},
	{T_HDR "target_fpr=nan added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr \"nan\" is not a decimal number"},
	{T_HDR "target_fpr=0x1p-7 added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr \"0x1p-7\" is not a decimal number"},
	{T_HDR "target_fpr=0.0.1 added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr \"0.0.1\" is not a decimal number"},
	{T_HDR "target_fpr= added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr is empty at position 81"},
	{T_HDR "target_fpr=1 added=3 " T_DATA, BF_ERR_FPR, "target false-positive rate 1 is out of range (0, 1)"},
	{T_HDR "target_fpr=0 added=3 " T_DATA, BF_ERR_FPR, "target false-positive rate 0 is out of range (0, 1)"},
	{T_HDR "target_fpr=-0.5 added=3 " T_DATA, BF_ERR_FPR, "target false-positive rate -0.5 is out of range (0, 1)"},
	{T_HDR "target_fpr=1e-400 added=3 " T_DATA, BF_ERR_SYNTAX, "target_fpr \"1e-400\" is not in canonical form (expected \"0\")"},
	{T_HDR "target_fpr=0.01 added=-1 " T_DATA, BF_ERR_SYNTAX, "added \"-1\" is not an unsigned decimal integer"},
	{T_HDR "target_fpr=0.01 added=3", BF_ERR_SYNTAX, "unexpected end of input at position 93, expected \" data=\""},
	{T_HDR "target_fpr=0.01 added=3 data", BF_ERR_SYNTAX, "unexpected end of input at position 98, expected \"data=\""},
	{T_HDR "target_fpr=0.01 added=3 data=", BF_ERR_LENGTH, "data has 0 base64 characters, expected 88 for 64 bytes"},
	{T_HDR "target_fpr=0.01 added=3 data=AAAAAAAAAAAA", BF_ERR_LENGTH, "data has 12 base64 characters, expected 88 for 64 bytes"},
	{T_HDR "target_fpr=0.01 added=3 " T_DATA " ", BF_ERR_LENGTH, "data has 89 base64 characters, expected 88 for 64 bytes"},
	{T_HDR "target_fpr=0.01 added=3 " T_DATA "\n", BF_ERR_LENGTH, "data has 89 base64 characters, expected 88 for 64 bytes"},
	{"version=1 layout=blocked hashes=0 key_kind=text bits=512 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_ERR_HASHES, "hash count 0 is out of range 1..64"},
	{"version=1 layout=blocked hashes=65 key_kind=text bits=512 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_ERR_HASHES, "hash count 65 is out of range 1..64"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=0 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_ERR_NBITS, "bit count 0 is not positive"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=1000 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_ERR_NBITS, "bit count 1000 is not a multiple of 512 for layout blocked"},
	{"version=1 layout=classic hashes=7 key_kind=text bits=1000 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_ERR_NBITS, "bit count 1000 is not a multiple of 64 for layout classic"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=1024 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_ERR_LENGTH, "data has 88 base64 characters, expected 172 for 128 bytes"},
	{"version=1 layout=classic hashes=7 key_kind=text bits=18446744073709551552 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_ERR_LENGTH, "data has 88 base64 characters, expected 3074457345618258592 for 2305843009213693944 bytes"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=512 capacity=0 target_fpr=0.01 added=3 " T_DATA, BF_ERR_CAPACITY, "capacity 0 is out of range (must be at least 1)"},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=512 capacity=100 target_fpr=0.01 added=0 " T_DATA, BF_OK, ""},
	{"version=1 layout=blocked hashes=7 key_kind=text bits=512 capacity=100 target_fpr=0.01 added=3 " T_DATA, BF_OK, ""},
};

static void
test_text_errors(void)
{
	size_t		i;

	for (i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++)
	{
		const TextCase *tc = &text_cases[i];
		BfHeader	h;
		const char *data = NULL;
		size_t		datalen = 0;
		char		msg[256];
		BfStatus	st;

		st = bf_text_parse_header(tc->text, &h, &data, &datalen, msg, sizeof(msg));
		CHECKF(st == tc->status, "text case %zu: status %d, expected %d (%s)",
			   i, (int) st, (int) tc->status, msg);
		CHECKF(strcmp(msg, tc->message) == 0,
			   "text case %zu: message \"%s\", expected \"%s\"", i, msg, tc->message);
		CHECK(bf_text_parse_header(tc->text, NULL, NULL, NULL, NULL, 0) == tc->status);
	}

	/* the payload of a parsed header with a bad character */
	{
		char	   *t = malloc(strlen(good_text) + 1);
		BfHeader	h;
		const char *data;
		size_t		datalen;
		uint8_t		bits[64];
		char		msg[256];

		strcpy(t, good_text);
		t[strlen(t) - 10] = '#';
		CHECK(bf_text_parse_header(t, &h, &data, &datalen, msg, sizeof(msg)) == BF_OK);
		CHECK(bf_text_decode_payload(data, datalen, bits, 64, msg, sizeof(msg)) == BF_ERR_SYNTAX);
		CHECKF(strcmp(msg, "invalid base64 character '#' at offset 78") == 0, "%s", msg);
		free(t);
	}
}

/*
 * Hostile text: every prefix of a valid text, and random corruptions.  The
 * parser must either refuse with a proper message, or accept, and then the
 * accepted text must be exactly what rendering the parsed value gives.
 */
static void
test_text_fuzz(void)
{
	size_t		full = strlen(good_text);
	size_t		cut;
	int			iter;
	int			accepted = 0;
	static const char alphabet[] = "0123456789abcdefklnoprstuvxyz =_.-+eAZ/\x01\xff";

	for (cut = 0; cut < full; cut++)
	{
		char	   *t = malloc(cut + 1);
		char		msg[256];

		memcpy(t, good_text, cut);
		t[cut] = '\0';
		CHECK(bf_text_parse_header(t, NULL, NULL, NULL, msg, sizeof(msg)) != BF_OK);
		CHECKF(good_message(msg), "prefix %zu: bad message \"%s\"", cut, msg);
		free(t);
	}

	for (iter = 0; iter < 100000; iter++)
	{
		char		t[512];
		size_t		len = full;
		int			nmut = 1 + (int) (rng() % 3);
		int			j;
		BfHeader	h;
		const char *data;
		size_t		datalen;
		char		msg[256];
		BfStatus	st;

		memcpy(t, good_text, full + 1);
		for (j = 0; j < nmut; j++)
		{
			size_t		pos = (size_t) (rng() % len);
			int			op = (int) (rng() % 3);
			char		c = alphabet[rng() % (sizeof(alphabet) - 1)];

			if (op == 0)
				t[pos] = c;
			else if (op == 1 && len + 1 < sizeof(t))
			{
				memmove(t + pos + 1, t + pos, len - pos + 1);
				t[pos] = c;
				len++;
			}
			else if (len > 1)
			{
				memmove(t + pos, t + pos + 1, len - pos);
				len--;
			}
		}
		t[len] = '\0';
		st = bf_text_parse_header(t, &h, &data, &datalen, msg, sizeof(msg));
		if (st == BF_OK)
		{
			uint8_t    *bits = malloc(bf_payload_bytes(h.nbits));

			st = bf_text_decode_payload(data, datalen, bits, bf_payload_bytes(h.nbits),
										msg, sizeof(msg));
			if (st == BF_OK)
			{
				char	   *again = malloc(bf_text_length(&h) + 1);

				accepted++;
				bf_text_render(&h, bits, again);
				CHECKF(strcmp(again, t) == 0, "accepted \"%s\" renders as \"%s\"", t, again);
				free(again);
			}
			free(bits);
		}
		if (st != BF_OK)
			CHECKF(good_message(msg), "bad message \"%s\" for \"%s\"", msg, t);
	}
	CHECK(accepted > 0);
}

/* ----------------------------------------------------------------
 * Whole-array operations and estimates
 * ----------------------------------------------------------------
 */

static void
test_bit_ops(void)
{
	uint8_t		a[300];
	uint8_t		b[300];
	uint8_t		r[300];
	int			n;

	for (n = 0; n <= 300; n += (n < 40 ? 1 : 37))
	{
		int			off;

		/* unaligned starts too */
		for (off = 0; off < 3 && off + n <= 300; off++)
		{
			uint64_t	pc = 0;
			int			i;

			for (i = 0; i < 300; i++)
			{
				a[i] = (uint8_t) rng();
				b[i] = (uint8_t) rng();
			}
			for (i = off; i < off + n; i++)
			{
				int			j;

				for (j = 0; j < 8; j++)
					pc += (a[i] >> j) & 1;
			}
			CHECK(bf_bits_popcount(a + off, (uint64_t) n) == pc);

			memcpy(r, a, 300);
			bf_bits_or(r + off, b + off, (uint64_t) n);
			for (i = 0; i < 300; i++)
				CHECK(r[i] == ((i >= off && i < off + n) ? (uint8_t) (a[i] | b[i]) : a[i]));
			memcpy(r, a, 300);
			bf_bits_and(r + off, b + off, (uint64_t) n);
			for (i = 0; i < 300; i++)
				CHECK(r[i] == ((i >= off && i < off + n) ? (uint8_t) (a[i] & b[i]) : a[i]));
		}
	}
}

static void
test_estimates(void)
{
	int			layout;

	for (layout = 1; layout <= BF_LAYOUT_MAX; layout++)
	{
		BfHeader	h = make_header(layout, 1 << 16);
		uint8_t    *bits = calloc(1 << 13, 1);
		int			i;
		double		est;

		CHECK(bf_estimate_cardinality(&h, bits) == 0.0);
		CHECK(bf_estimate_fpr(&h, bits) == 0.0);
		for (i = 0; i < 4000; i++)
			bf_add_hash(&h, bits, bf_hash_int64(layout, i));
		est = bf_estimate_cardinality(&h, bits);
		CHECKF(fabs(est - 4000) < 4000 * 0.05, "layout %d cardinality %.1f", layout, est);
		est = bf_estimate_fpr(&h, bits);
		CHECKF(est > 0 && est < bf_predict_fpr(layout, h.nbits, h.hashes, 4000) * 1.5,
			   "layout %d fpr %g", layout, est);

		/* saturated: finite, and an estimate of 1 */
		memset(bits, 0xFF, 1 << 13);
		est = bf_estimate_cardinality(&h, bits);
		CHECK(isfinite(est) && est > 4000);
		CHECK(bf_estimate_fpr(&h, bits) == 1.0);
		free(bits);
	}
}

/* ----------------------------------------------------------------
 * Sizing
 * ----------------------------------------------------------------
 */

#define MAX_NBITS ((UINT64_C(1) << 33) - 8 * 1024)	/* about a 1 GB value */

static void
test_sizing(void)
{
	const double fprs[] = {1e-15, 1e-9, 1e-4, 0.001, 0.01, 0.05, 0.3333333333333333, 0.5, 0.9, 0.999};
	const uint64_t caps[] = {1, 2, 3, 10, 100, 1000, 12345, 100000, 1000000, 10000000,
	100000000, UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000)};
	size_t		fi;
	size_t		ci;
	int			layout;
	clock_t		t0;
	double		worst = 0.0;

	for (layout = 1; layout <= BF_LAYOUT_MAX; layout++)
	{
		uint64_t	unit = layout == BF_LAYOUT_CLASSIC ? 64 : 512;

		for (fi = 0; fi < sizeof(fprs) / sizeof(fprs[0]); fi++)
		{
			uint64_t	prev = 0;
			uint64_t	maxcap;

			for (ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++)
			{
				BfSize		sz;
				BfSize		smaller;
				double		ms;
				bool		ok;

				t0 = clock();
				ok = bf_size_for(layout, caps[ci], fprs[fi], UINT64_MAX, &sz);
				ms = elapsed_ms(t0);
				if (ms > worst)
					worst = ms;
				CHECKF(ok, "layout %d cap %llu fpr %g", layout,
					   (unsigned long long) caps[ci], fprs[fi]);
				if (!ok)
					continue;
				CHECK(sz.nbits % unit == 0 && sz.nbits >= unit);
				CHECK(sz.hashes >= 1 && sz.hashes <= BF_MAX_HASHES);
				CHECKF(sz.predicted_fpr <= fprs[fi], "predicted %g > %g", sz.predicted_fpr, fprs[fi]);
				CHECK(sz.predicted_fpr == bf_predict_fpr(layout, sz.nbits, sz.hashes, (double) caps[ci]));
				/* monotone in capacity */
				CHECK(sz.nbits >= prev);
				prev = sz.nbits;
				/* minimal: one unit less fails for every k */
				if (sz.nbits > unit)
				{
					int			k;

					for (k = 1; k <= BF_MAX_HASHES; k++)
						CHECKF(bf_predict_fpr(layout, sz.nbits - unit, k, (double) caps[ci]) > fprs[fi],
							   "layout %d cap %llu fpr %g: %llu bits with k=%d would do",
							   layout, (unsigned long long) caps[ci], fprs[fi],
							   (unsigned long long) (sz.nbits - unit), k);
				}
				/* a max_nbits just below the answer fails */
				CHECK(!bf_size_for(layout, caps[ci], fprs[fi], sz.nbits - 1, &smaller));
				CHECK(bf_size_for(layout, caps[ci], fprs[fi], sz.nbits, &smaller) &&
					  smaller.nbits == sz.nbits);
			}

			/* largest capacity: accepted, and one more is not */
			t0 = clock();
			maxcap = bf_max_capacity(layout, fprs[fi], MAX_NBITS);
			/* a figure, not a check: timings depend on the machine's load */
			printf("sizing: bf_max_capacity took %.1f ms\n", elapsed_ms(t0));
			CHECK(maxcap > 0);
			CHECK(bf_size_for(layout, maxcap, fprs[fi], MAX_NBITS, NULL));
			CHECK(!bf_size_for(layout, maxcap + 1, fprs[fi], MAX_NBITS, NULL));
		}

		/* monotone in fpr at fixed capacity */
		{
			uint64_t	prev = UINT64_MAX;
			double		p;

			for (p = 1e-12; p < 0.999; p *= 1.37)
			{
				BfSize		sz;

				CHECK(bf_size_for(layout, 50000, p, UINT64_MAX, &sz));
				CHECKF(sz.nbits <= prev, "layout %d: fpr %g needs more bits than a lower one", layout, p);
				prev = sz.nbits;
			}
		}

		/* refusals and extremes: no hang, no overflow */
		CHECK(!bf_size_for(layout, 0, 0.01, UINT64_MAX, NULL));
		CHECK(!bf_size_for(layout, 100, 0.0, UINT64_MAX, NULL));
		CHECK(!bf_size_for(layout, 100, 1.0, UINT64_MAX, NULL));
		CHECK(!bf_size_for(layout, 100, NAN, UINT64_MAX, NULL));
		CHECK(!bf_size_for(layout, 100, 0.01, unit - 1, NULL));
		CHECK(!bf_size_for(layout, UINT64_C(1000000000000), 0.01, MAX_NBITS, NULL));
		/* 512-bit blocks and k <= 64 cannot reach 1e-300; classic can */
		CHECK(bf_size_for(layout, 100, 1e-300, MAX_NBITS, NULL) == (layout == BF_LAYOUT_CLASSIC));
		t0 = clock();
		(void) bf_size_for(layout, UINT64_MAX, 1e-15, UINT64_MAX, NULL);
		(void) bf_size_for(layout, UINT64_MAX, 0.999, UINT64_MAX, NULL);
		(void) bf_size_for(layout, UINT64_MAX, 0.999, MAX_NBITS, NULL);
		(void) bf_max_capacity(layout, 0.999, UINT64_MAX);
		(void) bf_max_capacity(layout, 1e-15, UINT64_MAX);
		printf("sizing: extremes took %.1f ms\n", elapsed_ms(t0));
		CHECK(bf_max_capacity(layout, 0.01, unit - 1) == 0);
		CHECK(bf_max_capacity(layout, 0.0, MAX_NBITS) == 0);
		CHECK(bf_max_capacity(layout, 1.0, MAX_NBITS) == 0);
	}
	printf("sizing: slowest bf_size_for %.3f ms\n", worst);

	/* predicted rates: monotone, and the formulas at known points */
	{
		double		prev = 0.0;
		uint64_t	m;

		for (m = 512 * 4000; m >= 512 * 8; m -= 512 * 7)
		{
			double		f = bf_predict_fpr(BF_LAYOUT_BLOCKED, m, 7, 100000.0);

			CHECK(f >= prev && f <= 1.0);
			prev = f;
		}
		CHECK(bf_predict_fpr(BF_LAYOUT_BLOCKED, 512, 7, 0.0) == 0.0);
		CHECK(bf_predict_fpr(BF_LAYOUT_BLOCKED, 512, 7, 1e15) == 1.0);
		CHECK(fabs(bf_predict_fpr(BF_LAYOUT_CLASSIC, 958506, 7, 100000) - 0.01) < 1e-4);

		/*
		 * Closed forms of the Poisson mixture: with q = 1 - 1/512 and
		 * E[x^i] = exp(-lambda (1 - x)), k = 1 gives 1 - exp(-lambda / 512)
		 * and k = 2 gives 1 - 2 exp(-lambda (1 - q^2)) + exp(-lambda (1 - q^4)).
		 */
		{
			const double lambdas[] = {1e-6, 0.5, 3, 50, 400, 5000, 15000, 30000};
			double		q = 1.0 - 1.0 / 512;
			size_t		li;

			for (li = 0; li < sizeof(lambdas) / sizeof(lambdas[0]); li++)
			{
				double		lam = lambdas[li];
				double		n = lam * 1000;	/* 1000 blocks */
				double		f1 = bf_predict_fpr(BF_LAYOUT_BLOCKED, 512 * 1000, 1, n);
				double		f2 = bf_predict_fpr(BF_LAYOUT_BLOCKED, 512 * 1000, 2, n);
				double		e1 = -expm1(-lam / 512);
				double		e2 = -2.0 * expm1(-lam * (1 - q * q)) + expm1(-lam * (1 - q * q * q * q));

				CHECKF(fabs(f1 - e1) <= 1e-12 * e1, "lambda %g k 1: %.15g vs %.15g", lam, f1, e1);
				if (lam >= 0.5)
					CHECKF(fabs(f2 - e2) <= 1e-9 * e2, "lambda %g k 2: %.15g vs %.15g", lam, f2, e2);
			}
		}
	}

	/* bits per key at 1% */
	{
		double		bc = bf_optimal_bits_per_key(BF_LAYOUT_CLASSIC, 0.01);
		double		bb = bf_optimal_bits_per_key(BF_LAYOUT_BLOCKED, 0.01);
		double		bc3 = bf_optimal_bits_per_key(BF_LAYOUT_CLASSIC, 0.001);
		double		bb3 = bf_optimal_bits_per_key(BF_LAYOUT_BLOCKED, 0.001);

		printf("bits per key: classic %.3f (1%%) %.3f (0.1%%); blocked %.3f (1%%) %.3f (0.1%%)\n",
			   bc, bc3, bb, bb3);
		CHECKF(fabs(bc - 9.585) < 0.01, "classic bits/key at 1%%: %.4f", bc);
		CHECKF(bb > 9.8 && bb < 10.0, "blocked bits/key at 1%%: %.4f", bb);
		CHECK(bb3 > bc3);
		CHECK(isnan(bf_optimal_bits_per_key(BF_LAYOUT_BLOCKED, 0.0)));
	}
}

/* ----------------------------------------------------------------
 * Simulation: no false negatives, measured FPR near the target
 * ----------------------------------------------------------------
 */

static void
simulate(int layout, double fpr)
{
	const uint64_t capacity = 100000;
	const int	absent = 1000000;
	BfSize		sz;
	BfHeader	h;
	uint8_t    *bits;
	char		key[32];
	int			i;
	int			fn = 0;
	int			fp = 0;
	double		measured;

	CHECK(bf_size_for(layout, capacity, fpr, MAX_NBITS, &sz));
	h = make_header(layout, sz.nbits);
	h.hashes = (uint16_t) sz.hashes;
	h.capacity = capacity;
	h.target_fpr = fpr;
	bits = calloc(bf_payload_bytes(sz.nbits), 1);

	for (i = 0; i < (int) capacity; i++)
	{
		int			n = snprintf(key, sizeof(key), "key-%d", i);

		bf_add_hash(&h, bits, bf_hash_bytes(layout, key, (size_t) n));
	}
	for (i = 0; i < (int) capacity; i++)
	{
		int			n = snprintf(key, sizeof(key), "key-%d", i);

		if (!bf_test_hash(&h, bits, bf_hash_bytes(layout, key, (size_t) n)))
			fn++;
	}
	for (i = 0; i < absent; i++)
	{
		int			n = snprintf(key, sizeof(key), "absent-%d", i);

		if (bf_test_hash(&h, bits, bf_hash_bytes(layout, key, (size_t) n)))
			fp++;
	}
	measured = (double) fp / absent;
	printf("simulation: %-7s target %-6g bits %-8llu k %-2d bits/key %6.3f predicted %.5f "
		   "measured %.5f (%.3f x target) estimated %.5f cardinality %.0f\n",
		   bf_layout_name(layout), fpr, (unsigned long long) sz.nbits, sz.hashes,
		   (double) sz.nbits / capacity, sz.predicted_fpr, measured, measured / fpr,
		   bf_estimate_fpr(&h, bits), bf_estimate_cardinality(&h, bits));
	CHECKF(fn == 0, "%d false negatives", fn);
	CHECKF(measured >= 0.8 * fpr && measured <= 1.1 * fpr,
		   "%s at %g: measured %g outside [0.8, 1.1] x target",
		   bf_layout_name(layout), fpr, measured);
	free(bits);
}

/* ----------------------------------------------------------------
 * The counting layout
 * ----------------------------------------------------------------
 */

/* The nibble order and the saturating sum and minimum, against a model. */
static void
test_counting_ops(void)
{
	uint8_t		a[200];
	uint8_t		b[200];
	uint8_t		r[200];

	/* counter c: low nibble of byte c / 2 when even, high nibble when odd */
	memset(a, 0, sizeof(a));
	bf_counter_set(a, 0, 3);
	bf_counter_set(a, 1, 12);
	bf_counter_set(a, 5, 15);
	CHECK(a[0] == 0xC3 && a[2] == 0xF0);
	CHECK(bf_counter_get(a, 0) == 3 && bf_counter_get(a, 1) == 12 &&
		  bf_counter_get(a, 4) == 0 && bf_counter_get(a, 5) == 15);
	CHECK(bf_counting_nonzero(a, sizeof(a)) == 3);
	CHECK(bf_counting_saturated(a, sizeof(a)) == 1);
	CHECK(bf_counting_block_nonzero(a) == 3);

	for (int round = 0; round < 50; round++)
	{
		uint64_t	nz = 0,
					sat = 0;

		for (size_t i = 0; i < sizeof(a); i++)
		{
			a[i] = (uint8_t) rng();
			b[i] = (uint8_t) rng();
		}
		memcpy(r, a, sizeof(a));
		bf_counting_sum(r, b, sizeof(a));
		for (unsigned c = 0; c < 2 * sizeof(a); c++)
		{
			unsigned	s = bf_counter_get(a, c) + bf_counter_get(b, c);

			CHECK(bf_counter_get(r, c) == (s > 15 ? 15 : s));
			nz += bf_counter_get(a, c) != 0;
			sat += bf_counter_get(a, c) == 15;
		}
		memcpy(r, a, sizeof(a));
		bf_counting_min(r, b, sizeof(a));
		for (unsigned c = 0; c < 2 * sizeof(a); c++)
		{
			unsigned	x = bf_counter_get(a, c),
						y = bf_counter_get(b, c);

			CHECK(bf_counter_get(r, c) == (x < y ? x : y));
		}
		CHECK(bf_counting_nonzero(a, sizeof(a)) == nz);
		CHECK(bf_counting_saturated(a, sizeof(a)) == sat);
	}
}

/*
 * Removal: adds and removes cancel exactly; a key added twice needs two
 * removals; a refused removal changes nothing; saturated counters stay.
 */
static void
test_counting_remove(void)
{
	BfHeader	h = make_header(BF_LAYOUT_COUNTING, 512 * 64);
	uint64_t	nbytes = bf_payload_bytes(h.nbits);
	uint8_t    *bits = calloc(nbytes, 1);
	uint8_t    *zero = calloc(nbytes, 1);
	uint8_t    *snap = malloc(nbytes);
	int			refused = 0;

	for (int i = 0; i < 300; i++)
		bf_add_hash(&h, bits, bf_hash_int64(BF_LAYOUT_COUNTING, i));
	for (int i = 0; i < 300; i++)
		CHECK(bf_test_hash(&h, bits, bf_hash_int64(BF_LAYOUT_COUNTING, i)));
	/* keys never added: a refused removal leaves every byte as it was */
	for (int i = 1000; i < 3000; i++)
	{
		BfHash		x = bf_hash_int64(BF_LAYOUT_COUNTING, i);

		if (bf_test_hash(&h, bits, x))
			continue;
		memcpy(snap, bits, nbytes);
		CHECK(!bf_counting_remove(bits, h.nbits, h.hashes, x.lo));
		CHECK(memcmp(snap, bits, nbytes) == 0);
		refused++;
	}
	CHECK(refused > 1000);
	/* remove the even keys: the odd ones stay, and removing all empties */
	for (int i = 0; i < 300; i += 2)
		CHECK(bf_counting_remove(bits, h.nbits, h.hashes,
								 bf_hash_int64(BF_LAYOUT_COUNTING, i).lo));
	for (int i = 1; i < 300; i += 2)
		CHECK(bf_test_hash(&h, bits, bf_hash_int64(BF_LAYOUT_COUNTING, i)));
	for (int i = 1; i < 300; i += 2)
		CHECK(bf_counting_remove(bits, h.nbits, h.hashes,
								 bf_hash_int64(BF_LAYOUT_COUNTING, i).lo));
	CHECK(memcmp(bits, zero, nbytes) == 0);

	/* twice added, twice removed; a third removal is refused */
	{
		BfHash		x = bf_hash_int64(BF_LAYOUT_COUNTING, 7);

		bf_add_hash(&h, bits, x);
		bf_add_hash(&h, bits, x);
		CHECK(bf_counting_remove(bits, h.nbits, h.hashes, x.lo));
		CHECK(bf_test_hash(&h, bits, x));
		CHECK(bf_counting_remove(bits, h.nbits, h.hashes, x.lo));
		CHECK(!bf_test_hash(&h, bits, x));
		CHECK(!bf_counting_remove(bits, h.nbits, h.hashes, x.lo));
		CHECK(memcmp(bits, zero, nbytes) == 0);

		/* 20 adds saturate: any number of removals keeps the key */
		for (int i = 0; i < 20; i++)
			bf_add_hash(&h, bits, x);
		CHECK(bf_counting_saturated(bits, nbytes) >= 1);
		for (int i = 0; i < 100; i++)
			CHECK(bf_counting_remove(bits, h.nbits, h.hashes, x.lo));
		CHECK(bf_test_hash(&h, bits, x));
	}
	free(bits);
	free(zero);
	free(snap);
}

/* ----------------------------------------------------------------
 * Cuckoo filters
 * ----------------------------------------------------------------
 */

static uint64_t
key_hash(const char *prefix, int i)
{
	char		key[32];
	int			n = snprintf(key, sizeof(key), "%s%d", prefix, i);

	return XXH3_64bits(key, (size_t) n);
}

/*
 * Sizing, no false negatives, the measured rate against the prediction,
 * the load reached before the filter is full, and that a refused insert
 * changes nothing.
 */
static void
simulate_cuckoo(double fpr)
{
	const uint64_t capacity = 100000;
	const int	absent = 1000000;
	BfCuckooHeader h;
	uint64_t	nbytes;
	uint8_t    *slots;
	uint8_t    *snap;
	int			why = 0;
	int			fn = 0,
				fp = 0;
	uint64_t	n;
	double		measured,
				predicted,
				load;

	CHECK(bf_cuckoo_size(capacity, fpr, UINT64_C(1) << 30, &h, &why));
	nbytes = bf_cuckoo_payload_bytes(h.nbuckets, h.fp_bits);
	slots = calloc(nbytes, 1);
	snap = malloc(nbytes);
	for (int i = 0; i < (int) capacity; i++)
		CHECKF(bf_cuckoo_insert(&h, slots, key_hash("key-", i)), "insert %d of %llu refused", i,
			   (unsigned long long) capacity);
	for (int i = 0; i < (int) capacity; i++)
		fn += !bf_cuckoo_contains(&h, slots, key_hash("key-", i));
	for (int i = 0; i < absent; i++)
		fp += bf_cuckoo_contains(&h, slots, key_hash("absent-", i));
	measured = (double) fp / absent;
	predicted = bf_cuckoo_predict_fpr(&h, (double) capacity);
	CHECKF(fn == 0, "cuckoo: %d false negatives", fn);
	CHECKF(measured >= 0.8 * predicted && measured <= 1.1 * predicted && measured <= fpr * 1.1,
		   "cuckoo at %g: measured %g, predicted %g", fpr, measured, predicted);
	/* fill up: the load when the first insert is refused */
	for (n = capacity;; n++)
	{
		memcpy(snap, slots, nbytes);
		if (!bf_cuckoo_insert(&h, slots, key_hash("more-", (int) n)))
			break;
	}
	CHECK(memcmp(snap, slots, nbytes) == 0);
	load = (double) n / (double) (h.nbuckets * BF_CUCKOO_SLOTS);
	CHECKF(load >= 0.95, "cuckoo full at load %.4f", load);
	CHECK(bf_cuckoo_occupied(&h, slots) == n);
	printf("simulation: cuckoo  target %-6g f %-2u buckets %-7llu bits/key %6.3f predicted %.5f "
		   "measured %.5f (%.3f x target) full at load %.4f\n",
		   fpr, (unsigned) h.fp_bits, (unsigned long long) h.nbuckets,
		   (double) nbytes * 8 / capacity, predicted, measured, measured / fpr, load);
	free(slots);
	free(snap);
}

static void
test_cuckoo_ops(void)
{
	BfCuckooHeader h;
	BfCuckooHeader g;
	uint8_t		buf[BF_HEADER_SIZE + 64];
	uint8_t    *slots = buf + BF_HEADER_SIZE;
	char		msg[256];
	int			why;
	uint64_t	x = key_hash("x", 0);

	/* packed slots: neighbours untouched, every width */
	for (int f = BF_CUCKOO_MIN_FP_BITS; f <= BF_CUCKOO_MAX_FP_BITS; f++)
	{
		uint8_t		a[40];

		memset(a, 0, sizeof(a));
		bf_cuckoo_set(a, f, 3, 0xFFFFFFFFu);
		CHECK(bf_cuckoo_get(a, f, 2) == 0 && bf_cuckoo_get(a, f, 4) == 0);
		CHECK(bf_cuckoo_get(a, f, 3) == (f == 32 ? 0xFFFFFFFFu : (1u << f) - 1));
		CHECK(bf_bits_popcount(a, sizeof(a)) == (uint64_t) f);
	}
	/* alt is an involution, for any bucket count */
	memset(&h, 0, sizeof(h));
	h.fp_bits = 12;
	for (uint64_t nb = 1; nb < 3000; nb += 7)
	{
		h.nbuckets = nb;
		for (uint32_t fp = 1; fp < 50; fp++)
		{
			uint64_t	i = (fp * UINT64_C(7919)) % nb;

			CHECK(bf_cuckoo_alt(&h, bf_cuckoo_alt(&h, i, fp), fp) == i);
		}
	}
	/* a small filter: duplicates, count, remove */
	CHECK(bf_cuckoo_size(10, 0.01, 1 << 20, &h, &why));
	CHECK(h.fp_bits == 10 && h.nbuckets == 3);
	h.key_kind = BF_KEY_TEXT;
	memset(buf, 0, sizeof(buf));
	CHECK(bf_cuckoo_insert(&h, slots, x) && bf_cuckoo_insert(&h, slots, x));
	CHECK(bf_cuckoo_count(&h, slots, x) == 2);
	CHECK(bf_cuckoo_remove(&h, slots, x) && bf_cuckoo_count(&h, slots, x) == 1);
	CHECK(bf_cuckoo_remove(&h, slots, x) && !bf_cuckoo_contains(&h, slots, x));
	CHECK(!bf_cuckoo_remove(&h, slots, x));
	/* the header round trip and its errors */
	h.count = 0;
	bf_cuckoo_encode(&h, buf);
	CHECK(bf_cuckoo_decode(buf, BF_HEADER_SIZE + 15, &g, msg, sizeof(msg)) == BF_OK);
	CHECK(g.fp_bits == 10 && g.nbuckets == 3 && g.capacity == 10);
	CHECK(bf_cuckoo_decode(buf, BF_HEADER_SIZE + 16, &g, msg, sizeof(msg)) == BF_ERR_LENGTH);
	slots[14] = 0x80;			/* 120 bits used: byte 14 is full */
	CHECK(bf_cuckoo_decode(buf, BF_HEADER_SIZE + 15, &g, msg, sizeof(msg)) == BF_OK);
	buf[5] = 1;
	CHECK(bf_cuckoo_decode(buf, BF_HEADER_SIZE + 15, &g, msg, sizeof(msg)) == BF_ERR_FAMILY);
	CHECK(strcmp(msg, "filter family 1 is not a cuckoo filter (family 3)") == 0);
	buf[5] = 3;
	buf[8] = 33;
	CHECK(bf_cuckoo_decode(buf, BF_HEADER_SIZE + 15, &g, msg, sizeof(msg)) == BF_ERR_HASHES);
	buf[8] = 10;
	bf_write_u64le(buf + 40, 13);
	CHECK(bf_cuckoo_decode(buf, BF_HEADER_SIZE + 15, &g, msg, sizeof(msg)) == BF_ERR_CAPACITY);
	/* sizing refusals */
	CHECK(!bf_cuckoo_size(10, 1e-12, 1 << 20, &h, &why) && why == 1);
	CHECK(!bf_cuckoo_size(UINT64_C(1) << 40, 0.01, 1 << 30, &h, &why) && why == 2);
}

/*
 * Scalable filters: growth appends layers of capacity c * g^i and rate
 * P (1 - r) r^i; every key added is found; the value decodes after each
 * growth and survives text output and input; each outer field and a
 * layer's fields are validated.
 */
static uint8_t *
scalable_grow(BfHeader *h, uint8_t *value, size_t *size)
{
	BfHeader	layer;

	CHECK(bf_scalable_new_layer(h, UINT64_C(1) << 33, &layer, NULL, 0) == BF_OK);
	value = realloc(value, *size + BF_HEADER_SIZE + bf_payload_bytes(layer.nbits));
	CHECK(value != NULL);
	bf_scalable_append(h, value, &layer);
	*size += BF_HEADER_SIZE + bf_payload_bytes(layer.nbits);
	return value;
}

static void
test_scalable(void)
{
	BfHeader	h;
	BfHeader	g;
	size_t		size = BF_HEADER_SIZE;
	uint8_t    *value = calloc(1, size);
	char		key[32];
	char		msg[256];
	int			n = 3000;

	memset(&h, 0, sizeof(h));
	h.version = BF_FORMAT_VERSION;
	h.family = BF_FAMILY_SCALABLE;
	h.layout = BF_LAYOUT_BLOCKED;
	h.capacity = 100;
	h.target_fpr = 0.01;
	h.growth = 2;
	h.ratio = 0.5;
	bf_header_encode(&h, value);
	value = scalable_grow(&h, value, &size);
	for (int i = 0; i < n; i++)
	{
		int			kl = snprintf(key, sizeof(key), "key-%d", i);
		BfHash		kh = bf_hash_bytes(h.layout, key, (size_t) kl);
		BfScalableAdd r = bf_scalable_add(&h, value + BF_HEADER_SIZE, kh);

		if (r == BF_SCALABLE_FULL)
		{
			value = scalable_grow(&h, value, &size);
			CHECK(bf_header_decode(value, size, NULL, msg, sizeof(msg)) == BF_OK);
			r = bf_scalable_add(&h, value + BF_HEADER_SIZE, kh);
			CHECK(r == BF_SCALABLE_SET);
		}
	}
	/* 100 + 200 + ... + 1600 = 3100 >= 3000: five layers */
	CHECK(h.layers == 5);
	CHECK(bf_header_decode(value, size, &g, msg, sizeof(msg)) == BF_OK);
	CHECK(g.layers == 5 && g.nbits == h.nbits && g.growth == 2 && g.ratio == 0.5);
	for (int i = 0; i < n; i++)
	{
		int			kl = snprintf(key, sizeof(key), "key-%d", i);

		CHECK(bf_test_hash(&h, value + BF_HEADER_SIZE, bf_hash_bytes(h.layout, key, (size_t) kl)));
	}
	{
		const uint8_t *l = value + BF_HEADER_SIZE;

		for (uint32_t i = 0; i < h.layers; i++)
		{
			BfHeader	lh;

			bf_scalable_layer_header(l, &lh);
			CHECK(lh.capacity == (UINT64_C(100) << i));
			CHECK(lh.target_fpr == bf_scalable_layer_fpr(0.01, 0.5, i));
			l = bf_scalable_next(l);
		}
		CHECK(l == value + size);
		CHECK(bf_scalable_layer_fpr(0.01, 0.5, 2) == 0.01 * 0.5 * 0.5 * 0.5);
	}
	/* text out, text in */
	{
		size_t		tlen = bf_text_length(&h);
		char	   *text = malloc(tlen + 1);
		uint8_t    *back = malloc(size);
		const char *d;
		size_t		dlen;

		CHECK(text != NULL && back != NULL);
		bf_text_render(&h, value + BF_HEADER_SIZE, text);
		CHECK(strncmp(text, "version=2 family=scalable layout=blocked key_kind=none layers=5 ", 64) == 0);
		CHECK(bf_text_parse_header(text, &g, &d, &dlen, msg, sizeof(msg)) == BF_OK);
		bf_header_encode(&g, back);
		CHECK(bf_text_decode_payload(d, dlen, back + BF_HEADER_SIZE, size - BF_HEADER_SIZE,
									 msg, sizeof(msg)) == BF_OK);
		CHECK(memcmp(back, value, size) == 0);
		free(back);
		free(text);
	}
	/* every field validated, one mutation at a time */
	{
		static const struct
		{
			size_t		off;
			uint8_t		byte;
			BfStatus	st;
		}			muts[] = {
			{6, 3, BF_ERR_LAYOUT}, {8, 1, BF_ERR_HASHES}, {12, 0, BF_ERR_LAYERS},
			{12, 65, BF_ERR_LAYERS}, {12, 4, BF_ERR_LENGTH}, {48, 1, BF_ERR_GROWTH},
			{48, 101, BF_ERR_GROWTH}, {52, 1, BF_ERR_RESERVED}, {63, 0x40, BF_ERR_RATIO},
			{64 + 5, 2, BF_ERR_LAYOUT}, {64 + 7, 1, BF_ERR_LAYER}, {64 + 24, 101, BF_ERR_LAYER},
			{64 + 32, 0, BF_ERR_LAYER}, {64 + 12, 2, BF_ERR_LAYERS}, {64 + 60, 1, BF_ERR_RESERVED},
			{24, 99, BF_ERR_LAYER},
		};

		for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++)
		{
			uint8_t    *b = malloc(size);
			BfStatus	st;

			CHECK(b != NULL);
			memcpy(b, value, size);
			b[muts[i].off] = muts[i].byte;
			st = bf_header_decode(b, size, NULL, msg, sizeof(msg));
			if (st != muts[i].st)
				fprintf(stderr, "scalable mutation at %zu: status %d (%s), expected %d\n",
						muts[i].off, st, msg, muts[i].st);
			CHECK(st == muts[i].st);
			CHECK(bf_header_decode(b, size - 1, NULL, NULL, 0) != BF_OK);
			free(b);
		}
		CHECK(bf_header_decode(value, size - 1, NULL, NULL, 0) == BF_ERR_LENGTH);
	}
	/* the layer cap */
	h.layers = BF_MAX_LAYERS;
	{
		BfHeader	layer;

		CHECK(bf_scalable_new_layer(&h, UINT64_C(1) << 33, &layer, msg, sizeof(msg)) == BF_ERR_LAYERS);
		h.layers = 63;
		h.ratio = 1e-300;
		CHECK(bf_scalable_new_layer(&h, UINT64_C(1) << 33, &layer, msg, sizeof(msg)) != BF_OK);
	}
	free(value);
}

int
main(void)
{
	clock_t		t0 = clock();

	test_format_round_trip();
	test_format_errors();
	test_format_fuzz();
	test_names();
	test_base64();
	test_payload_messages();
	test_format_double();
	test_text_round_trip();
	test_text_errors();
	test_text_fuzz();
	test_bit_ops();
	test_estimates();
	test_sizing();
	simulate(BF_LAYOUT_BLOCKED, 0.01);
	simulate(BF_LAYOUT_BLOCKED, 0.001);
	simulate(BF_LAYOUT_CLASSIC, 0.01);
	simulate(BF_LAYOUT_CLASSIC, 0.001);
	simulate(BF_LAYOUT_COUNTING, 0.01);
	simulate(BF_LAYOUT_COUNTING, 0.001);
	test_counting_ops();
	test_counting_remove();
	test_cuckoo_ops();
	test_scalable();
	simulate_cuckoo(0.01);
	simulate_cuckoo(0.001);
	simulate_cuckoo(0.0001);

	printf("%d checks, %d failures, %.0f ms\n", n_checks, n_failures, elapsed_ms(t0));
	return n_failures == 0 ? 0 : 1;
}
