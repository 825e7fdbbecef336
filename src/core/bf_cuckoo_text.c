/*
 * bf_cuckoo_text.c
 *		The text form of a cuckoo filter:
 *
 *	version=2 family=cuckoo fingerprint_bits=10 key_kind=text buckets=3
 *	capacity=10 target_fpr=0.01 count=2 data=<base64 of the slots>
 *
 * on one line, canonical as the bloomfilter text form (bf_text.c): fields in
 * this order separated by single spaces, integers without sign or leading
 * zeros, the rate in its shortest round-trip form, strict base64 with
 * padding.  Input accepts exactly what output produces; the parser checks
 * every field and the payload length before anything is allocated.
 *
 * Free of PostgreSQL.
 */
#include "core/bf_cuckoo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf_text.h"

size_t
bf_cuckoo_text_length(const BfCuckooHeader *h)
{
	char		fpr[32];
	char		head[256];
	int			n;

	bf_format_double(h->target_fpr, fpr, sizeof(fpr));
	n = snprintf(head, sizeof(head),
				 "version=%u family=cuckoo fingerprint_bits=%u key_kind=%s buckets=%llu "
				 "capacity=%llu target_fpr=%s count=%llu data=",
				 (unsigned) h->version, (unsigned) h->fp_bits, bf_key_kind_name(h->key_kind),
				 (unsigned long long) h->nbuckets, (unsigned long long) h->capacity,
				 fpr, (unsigned long long) h->count);
	return (size_t) n +
		bf_base64_encoded_length((size_t) bf_cuckoo_payload_bytes(h->nbuckets, h->fp_bits));
}

void
bf_cuckoo_text_render(const BfCuckooHeader *h, const uint8_t *slots, char *out)
{
	char		fpr[32];
	int			n;

	bf_format_double(h->target_fpr, fpr, sizeof(fpr));
	n = sprintf(out,
				"version=%u family=cuckoo fingerprint_bits=%u key_kind=%s buckets=%llu "
				"capacity=%llu target_fpr=%s count=%llu data=",
				(unsigned) h->version, (unsigned) h->fp_bits, bf_key_kind_name(h->key_kind),
				(unsigned long long) h->nbuckets, (unsigned long long) h->capacity,
				fpr, (unsigned long long) h->count);
	bf_base64_encode(slots, (size_t) bf_cuckoo_payload_bytes(h->nbuckets, h->fp_bits), out + n);
}

/* The token at *p up to the next space (or the end). */
static size_t
token(const char *p)
{
	size_t		n = 0;

	while (p[n] != '\0' && p[n] != ' ')
		n++;
	return n;
}

/* "name=" at *p, then a token ending in a space (or the end when last). */
static bool
field(const char **p, const char *name, bool last, const char **tok, size_t *len,
	  char *msg, size_t msglen)
{
	size_t		nl = strlen(name);

	if (strncmp(*p, name, nl) != 0)
	{
		if (msg)
			snprintf(msg, msglen, "expected the field \"%s\"", name);
		return false;
	}
	*tok = *p + nl;
	*len = token(*tok);
	if (last ? (*tok)[*len] != '\0' : (*tok)[*len] != ' ')
	{
		if (msg)
			snprintf(msg, msglen, "expected %s after the %s field",
					 last ? "the end" : "a single space", name);
		return false;
	}
	*p = *tok + *len + (last ? 0 : 1);
	return true;
}

/* A canonical decimal uint64. */
static bool
parse_uint(const char *tok, size_t len, uint64_t *v)
{
	uint64_t	r = 0;

	if (len == 0 || len > 20 || (len > 1 && tok[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++)
	{
		if (tok[i] < '0' || tok[i] > '9')
			return false;
		if (r > (UINT64_MAX - (uint64_t) (tok[i] - '0')) / 10)
			return false;
		r = r * 10 + (uint64_t) (tok[i] - '0');
	}
	*v = r;
	return true;
}

/* A field's value in a message: at most 40 characters, printable ASCII. */
static BfStatus
bad(char *msg, size_t msglen, const char *what, const char *tok, size_t len)
{
	char		q[41];
	size_t		n = len > 40 ? 40 : len;

	for (size_t i = 0; i < n; i++)
		q[i] = ((unsigned char) tok[i] < 0x20 || (unsigned char) tok[i] >= 0x7F) ? '?' : tok[i];
	q[n] = '\0';
	if (msg)
		snprintf(msg, msglen, "invalid %s \"%s\"", what, q);
	return BF_ERR_SYNTAX;
}

BfStatus
bf_cuckoo_text_parse(const char *s, BfCuckooHeader *h, const char **data,
					 size_t *datalen, char *msg, size_t msglen)
{
	const char *p = s;
	const char *t;
	size_t		n;
	uint64_t	v;
	char		buf[40];
	char		canon[40];
	int			kind;

	if (msg && msglen > 0)
		msg[0] = '\0';
	memset(h, 0, sizeof(*h));
	if (strncmp(p, "version=", 8) != 0 || p[8] < '0' || p[8] > '9' ||
		strncmp(p + 9, " family=cuckoo ", 15) != 0)
	{
		if (msg)
			snprintf(msg, msglen, "a cuckoo filter's text starts with \"version=%d family=cuckoo \"",
					 BF_FORMAT_VERSION);
		return BF_ERR_SYNTAX;
	}
	if (!bf_format_version_known((unsigned) (p[8] - '0')))
	{
		if (msg)
			snprintf(msg, msglen, "unrecognized format version %c (this build reads versions %d to %d)",
					 p[8], BF_FORMAT_VERSION_MIN, BF_FORMAT_VERSION);
		return BF_ERR_VERSION;
	}
	h->version = (uint8_t) (p[8] - '0');
	p += 24;
	if (!field(&p, "fingerprint_bits=", false, &t, &n, msg, msglen))
		return BF_ERR_SYNTAX;
	if (!parse_uint(t, n, &v) || v > 0xFFFF)
		return bad(msg, msglen, "fingerprint_bits", t, n);
	h->fp_bits = (uint16_t) v;
	if (!field(&p, "key_kind=", false, &t, &n, msg, msglen))
		return BF_ERR_SYNTAX;
	if (n >= sizeof(buf))
		return bad(msg, msglen, "key_kind", t, n);
	memcpy(buf, t, n);
	buf[n] = '\0';
	if ((kind = bf_key_kind_from_name(buf)) < 0)
		return bad(msg, msglen, "key_kind", t, n);
	h->key_kind = (uint8_t) kind;
	if (!field(&p, "buckets=", false, &t, &n, msg, msglen))
		return BF_ERR_SYNTAX;
	if (!parse_uint(t, n, &h->nbuckets))
		return bad(msg, msglen, "buckets", t, n);
	if (!field(&p, "capacity=", false, &t, &n, msg, msglen))
		return BF_ERR_SYNTAX;
	if (!parse_uint(t, n, &h->capacity))
		return bad(msg, msglen, "capacity", t, n);
	if (!field(&p, "target_fpr=", false, &t, &n, msg, msglen))
		return BF_ERR_SYNTAX;
	if (n == 0 || n >= sizeof(buf))
		return bad(msg, msglen, "target_fpr", t, n);
	memcpy(buf, t, n);
	buf[n] = '\0';
	h->target_fpr = strtod(buf, NULL);	/* ERANGE for subnormals: fine */
	bf_format_double(h->target_fpr, canon, sizeof(canon));
	if (strcmp(canon, buf) != 0)
		return bad(msg, msglen, "target_fpr (not in its shortest form)", t, n);
	if (!field(&p, "count=", false, &t, &n, msg, msglen))
		return BF_ERR_SYNTAX;
	if (!parse_uint(t, n, &h->count))
		return bad(msg, msglen, "count", t, n);
	if (!field(&p, "data=", true, &t, &n, msg, msglen))
		return BF_ERR_SYNTAX;
	{
		BfStatus	st = bf_cuckoo_check(h, msg, msglen);

		if (st != BF_OK)
			return st;
	}
	if (n != bf_base64_encoded_length((size_t) bf_cuckoo_payload_bytes(h->nbuckets, h->fp_bits)))
	{
		if (msg)
			snprintf(msg, msglen, "data is %zu base64 characters, expected %zu for %llu buckets of %u-bit slots",
					 n, bf_base64_encoded_length((size_t) bf_cuckoo_payload_bytes(h->nbuckets, h->fp_bits)),
					 (unsigned long long) h->nbuckets, (unsigned) h->fp_bits);
		return BF_ERR_LENGTH;
	}
	*data = t;
	*datalen = n;
	return BF_OK;
}
