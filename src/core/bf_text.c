/*
 * bf_text.c
 *		The text form of a value, and strict base64.
 *
 *	version=2 layout=blocked hashes=7 key_kind=text bits=1024 capacity=100
 *	target_fpr=0.01 added=3 data=<base64 of the bit array>
 *
 * Output is canonical and input accepts exactly what output produces, so
 * that text in, text out reproduces the input byte for byte:
 *
 *	- the fields come in exactly this order, separated by single spaces,
 *	  with nothing before the first or after the last;
 *	- integers are decimal digits, no sign, no leading zero (a lone "0" is
 *	  well-formed; whether 0 is a valid value is for the field to say);
 *	- target_fpr is the shortest "%.*g" form that reads back as the same
 *	  double (bf_format_double, bf_format.h), and nothing else: "0.010" or "1e-7" are
 *	  refused because output would write "0.01" and "1e-07";
 *	- data is standard base64 (RFC 4648 section 4) with '=' padding, no
 *	  whitespace, and zero unused bits in the last character.
 *
 * The parser is meant for hostile input.  It never reads past the
 * terminating NUL, never allocates, and checks every field, then the header
 * as a whole (bf_header_check), then that the length of the base64 payload
 * is exactly the one the bit count implies, all before the caller allocates
 * the bit array.  Positions and offsets in messages count bytes from 0: a
 * position is within the whole text, an offset within the base64 payload.
 *
 * Free of PostgreSQL.  Numbers go through snprintf and strtod, which are
 * locale-independent in the "C" LC_NUMERIC locale PostgreSQL always uses.
 */
#include "core/bf_text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------
 * base64
 * ----------------------------------------------------------------
 */

static const char b64_alphabet[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Character -> 6-bit value, or 0xFF for anything outside the alphabet. */
static const uint8_t b64_value[256] = {
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 62, 0xFF, 0xFF, 0xFF, 63,
	52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
	15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
	41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
};

/* Why a base64 string was refused (internal). */
typedef enum B64Error
{
	B64_OK = 0,
	B64_LENGTH,					/* not the length of dstlen bytes */
	B64_INVALID_CHAR,			/* outside the alphabet */
	B64_UNEXPECTED_PAD,			/* '=' where data belongs */
	B64_MISSING_PAD,			/* a character where '=' belongs */
	B64_NONCANONICAL			/* unused low bits not zero */
} B64Error;

/* Encoded length in uint64, which cannot overflow for any nbytes <= 2^62. */
static uint64_t
b64_length_u64(uint64_t n)
{
	return (n / 3 + (n % 3 != 0)) * 4;
}

size_t
bf_base64_encoded_length(size_t n)
{
	return (n / 3 + (n % 3 != 0)) * 4;
}

void
bf_base64_encode(const uint8_t *src, size_t n, char *dst)
{
	size_t		i = 0;
	char	   *o = dst;

	for (; i + 3 <= n; i += 3)
	{
		uint32_t	v = ((uint32_t) src[i] << 16) | ((uint32_t) src[i + 1] << 8) |
			src[i + 2];

		o[0] = b64_alphabet[(v >> 18) & 63];
		o[1] = b64_alphabet[(v >> 12) & 63];
		o[2] = b64_alphabet[(v >> 6) & 63];
		o[3] = b64_alphabet[v & 63];
		o += 4;
	}
	if (n - i == 1)
	{
		uint32_t	v = (uint32_t) src[i] << 16;

		o[0] = b64_alphabet[(v >> 18) & 63];
		o[1] = b64_alphabet[(v >> 12) & 63];
		o[2] = '=';
		o[3] = '=';
		o += 4;
	}
	else if (n - i == 2)
	{
		uint32_t	v = ((uint32_t) src[i] << 16) | ((uint32_t) src[i + 1] << 8);

		o[0] = b64_alphabet[(v >> 18) & 63];
		o[1] = b64_alphabet[(v >> 12) & 63];
		o[2] = b64_alphabet[(v >> 6) & 63];
		o[3] = '=';
		o += 4;
	}
	*o = '\0';
}

/*
 * Classify a character that is not a valid data character at this place.
 */
static B64Error
b64_bad_data_char(unsigned char c)
{
	return (c == '=') ? B64_UNEXPECTED_PAD : B64_INVALID_CHAR;
}

/*
 * Decode the canonical base64 encoding of exactly dstlen bytes.  On failure
 * *err_off is the offset of the offending character (0 for a length error).
 * dst may have been partly written on failure.
 */
static B64Error
b64_decode(const char *src, size_t srclen, uint8_t *dst, size_t dstlen,
		   size_t *err_off)
{
	const unsigned char *s = (const unsigned char *) src;
	size_t		full = dstlen / 3;
	size_t		rem = dstlen % 3;
	size_t		g;
	size_t		p;

	*err_off = 0;
	if ((uint64_t) srclen != b64_length_u64(dstlen))
		return B64_LENGTH;

	for (g = 0; g < full; g++)
	{
		const unsigned char *q = s + 4 * g;
		uint8_t		a = b64_value[q[0]];
		uint8_t		b = b64_value[q[1]];
		uint8_t		c = b64_value[q[2]];
		uint8_t		d = b64_value[q[3]];
		uint32_t	v;

		if ((a | b | c | d) & 0x80)
		{
			size_t		j;

			for (j = 0; j < 4; j++)
			{
				if (b64_value[q[j]] & 0x80)
				{
					*err_off = 4 * g + j;
					return b64_bad_data_char(q[j]);
				}
			}
		}
		v = ((uint32_t) a << 18) | ((uint32_t) b << 12) | ((uint32_t) c << 6) | d;
		dst[3 * g] = (uint8_t) (v >> 16);
		dst[3 * g + 1] = (uint8_t) (v >> 8);
		dst[3 * g + 2] = (uint8_t) v;
	}

	if (rem == 0)
		return B64_OK;

	/* Last group: 1 byte is "xx==", 2 bytes are "xxx=". */
	p = 4 * full;
	{
		size_t		ndata = rem + 1;	/* data characters in the group */
		uint8_t		v[3] = {0, 0, 0};
		size_t		j;

		for (j = 0; j < ndata; j++)
		{
			v[j] = b64_value[s[p + j]];
			if (v[j] & 0x80)
			{
				*err_off = p + j;
				return b64_bad_data_char(s[p + j]);
			}
		}
		for (j = ndata; j < 4; j++)
		{
			if (s[p + j] != '=')
			{
				*err_off = p + j;
				return (b64_value[s[p + j]] & 0x80) ? B64_INVALID_CHAR : B64_MISSING_PAD;
			}
		}
		if (rem == 1)
		{
			if (v[1] & 0x0F)
			{
				*err_off = p + 1;
				return B64_NONCANONICAL;
			}
			dst[3 * full] = (uint8_t) ((v[0] << 2) | (v[1] >> 4));
		}
		else
		{
			if (v[2] & 0x03)
			{
				*err_off = p + 2;
				return B64_NONCANONICAL;
			}
			dst[3 * full] = (uint8_t) ((v[0] << 2) | (v[1] >> 4));
			dst[3 * full + 1] = (uint8_t) (((v[1] & 0x0F) << 4) | (v[2] >> 2));
		}
	}
	return B64_OK;
}

bool
bf_base64_decode(const char *src, size_t srclen, uint8_t *dst, size_t dstlen)
{
	size_t		off;

	return b64_decode(src, srclen, dst, dstlen, &off) == B64_OK;
}

/* ----------------------------------------------------------------
 * Output
 * ----------------------------------------------------------------
 */

/* Render the header part ("version=... data=") into buf; its length. */
static int
render_header(const BfHeader *h, char *buf, size_t buflen)
{
	char		fpr[64];
	const char *layout = bf_layout_name(h->layout);
	const char *kind = bf_key_kind_name(h->key_kind);

	bf_format_double(h->target_fpr, fpr, sizeof(fpr));
	if (h->family == BF_FAMILY_SCALABLE)
	{
		char		ratio[64];

		bf_format_double(h->ratio, ratio, sizeof(ratio));
		return snprintf(buf, buflen,
						"version=%u family=scalable layout=%s key_kind=%s layers=%lu "
						"bits=%llu capacity=%llu target_fpr=%s growth=%lu ratio=%s "
						"added=%llu data=",
						(unsigned) h->version,
						layout ? layout : "unknown",
						kind ? kind : "unknown",
						(unsigned long) h->layers,
						(unsigned long long) h->nbits,
						(unsigned long long) h->capacity,
						fpr,
						(unsigned long) h->growth,
						ratio,
						(unsigned long long) h->added);
	}
	return snprintf(buf, buflen,
					"version=%u layout=%s hashes=%u key_kind=%s bits=%llu "
					"capacity=%llu target_fpr=%s added=%llu data=",
					(unsigned) h->version,
					layout ? layout : "unknown",
					(unsigned) h->hashes,
					kind ? kind : "unknown",
					(unsigned long long) h->nbits,
					(unsigned long long) h->capacity,
					fpr,
					(unsigned long long) h->added);
}

size_t
bf_text_length(const BfHeader *h)
{
	char		buf[256];
	int			n = render_header(h, buf, sizeof(buf));

	return (size_t) n + bf_base64_encoded_length((size_t) bf_value_payload_bytes(h));
}

void
bf_text_render(const BfHeader *h, const uint8_t *bits, char *out)
{
	char		buf[256];
	int			n = render_header(h, buf, sizeof(buf));

	memcpy(out, buf, (size_t) n);
	bf_base64_encode(bits, (size_t) bf_value_payload_bytes(h), out + n);
}

/* ----------------------------------------------------------------
 * Input
 * ----------------------------------------------------------------
 */

typedef struct TextParser
{
	const char *s;
	size_t		pos;
	char	   *msg;
	size_t		msglen;
} TextParser;

/* Longest token quoted in a message, in input bytes. */
#define QUOTE_MAX 40

/*
 * Quote len bytes of token for a message: printable ASCII as is (with " and
 * \ escaped), anything else as \xNN, so that a message is one line of ASCII
 * whatever the input; truncated with "..." after QUOTE_MAX bytes.
 */
static void
quote_token(const char *tok, size_t len, char *out, size_t outlen)
{
	size_t		o = 0;
	size_t		i;
	size_t		n = len > QUOTE_MAX ? QUOTE_MAX : len;

	/* outlen is at least 4 * QUOTE_MAX + 8 at every caller */
	out[o++] = '"';
	for (i = 0; i < n && o + 8 < outlen; i++)
	{
		unsigned char c = (unsigned char) tok[i];

		if (c == '"' || c == '\\')
		{
			out[o++] = '\\';
			out[o++] = (char) c;
		}
		else if (c >= 0x20 && c < 0x7F)
			out[o++] = (char) c;
		else
		{
			snprintf(out + o, outlen - o, "\\x%02x", c);
			o += 4;
		}
	}
	if (n < len && o + 5 < outlen)
	{
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '"';
	out[o] = '\0';
}

/* Describe one byte for a message: 'c' if printable ASCII, else 0xNN. */
static void
describe_char(unsigned char c, char *out, size_t outlen)
{
	if (c > 0x20 && c < 0x7F && c != '\'')
		snprintf(out, outlen, "'%c'", c);
	else
		snprintf(out, outlen, "0x%02x", c);
}

/*
 * Expect the literal name (e.g. "hashes=") at the current position, preceded
 * by a single space unless it is the first field.
 */
static bool
expect_name(TextParser *tp, const char *name, bool first)
{
	size_t		n = strlen(name);
	size_t		i;

	if (!first)
	{
		/* Tokens end at a space or the NUL, so this is one or the other. */
		if (tp->s[tp->pos] != ' ')
		{
			if (tp->msg)
				snprintf(tp->msg, tp->msglen,
						 "unexpected end of input at position %zu, expected \" %s\"",
						 tp->pos, name);
			return false;
		}
		tp->pos++;
	}
	for (i = 0; i < n; i++)
	{
		if (tp->s[tp->pos + i] != name[i])
		{
			if (tp->msg)
			{
				if (tp->s[tp->pos + i] == '\0')
					snprintf(tp->msg, tp->msglen,
							 "unexpected end of input at position %zu, expected \"%s\"",
							 tp->pos + i, name);
				else
					snprintf(tp->msg, tp->msglen,
							 "expected \"%s\" at position %zu", name, tp->pos);
			}
			return false;
		}
		/* a mismatch is found at the NUL at the latest: no overrun */
	}
	tp->pos += n;
	return true;
}

/* The value after a name: up to the next space or the end. */
static const char *
next_token(TextParser *tp, size_t *len)
{
	const char *start = tp->s + tp->pos;
	size_t		n = 0;

	while (start[n] != '\0' && start[n] != ' ')
		n++;
	tp->pos += n;
	*len = n;
	return start;
}

/*
 * Parse an unsigned decimal integer value of the field called what.
 * Syntax errors are BF_ERR_SYNTAX; a value beyond uint64 is range_status.
 */
static BfStatus
parse_uint(TextParser *tp, const char *what, BfStatus range_status,
		   uint64_t *out)
{
	size_t		start_pos = tp->pos;
	size_t		len;
	const char *tok = next_token(tp, &len);
	char		q[4 * QUOTE_MAX + 16];
	uint64_t	v = 0;
	size_t		i;

	if (len == 0)
	{
		if (tp->msg)
			snprintf(tp->msg, tp->msglen, "%s is empty at position %zu",
					 what, start_pos);
		return BF_ERR_SYNTAX;
	}
	for (i = 0; i < len; i++)
	{
		if (tok[i] < '0' || tok[i] > '9')
		{
			if (tp->msg)
			{
				quote_token(tok, len, q, sizeof(q));
				snprintf(tp->msg, tp->msglen,
						 "%s %s is not an unsigned decimal integer", what, q);
			}
			return BF_ERR_SYNTAX;
		}
	}
	if (len > 1 && tok[0] == '0')
	{
		if (tp->msg)
		{
			quote_token(tok, len, q, sizeof(q));
			snprintf(tp->msg, tp->msglen, "%s %s has a leading zero", what, q);
		}
		return BF_ERR_SYNTAX;
	}
	for (i = 0; i < len; i++)
	{
		unsigned	d = (unsigned) (tok[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
		{
			if (tp->msg)
			{
				quote_token(tok, len, q, sizeof(q));
				snprintf(tp->msg, tp->msglen, "%s %s is out of range", what, q);
			}
			return range_status;
		}
		v = v * 10 + d;
	}
	*out = v;
	return BF_OK;
}

/* Parse a name from table names[lo..hi]; -1 if not found. */
static int
parse_name(TextParser *tp, const char *(*name_of) (int), int lo, int hi,
		   const char **tok, size_t *len)
{
	int			i;

	*tok = next_token(tp, len);
	for (i = lo; i <= hi; i++)
	{
		const char *nm = name_of(i);

		if (nm != NULL && strlen(nm) == *len && memcmp(nm, *tok, *len) == 0)
			return i;
	}
	return -1;
}

/*
 * The field "layout=" and a layout name, in the plain and the scalable form;
 * expected lists the layouts the form has, for the message.
 */
static BfStatus
parse_layout_field(TextParser *tp, const char *expected, uint8_t *layout)
{
	const char *tok;
	size_t		len;
	char		q[4 * QUOTE_MAX + 16];
	int			idx;

	if (!expect_name(tp, "layout=", false))
		return BF_ERR_SYNTAX;
	idx = parse_name(tp, bf_layout_name, 1, BF_LAYOUT_MAX, &tok, &len);
	if (idx < 0)
	{
		if (tp->msg)
		{
			quote_token(tok, len, q, sizeof(q));
			snprintf(tp->msg, tp->msglen, "unrecognized layout %s (expected %s)",
					 q, expected);
		}
		return BF_ERR_LAYOUT;
	}
	*layout = (uint8_t) idx;
	return BF_OK;
}

/* The field "key_kind=" and a key kind name, in either form. */
static BfStatus
parse_key_kind_field(TextParser *tp, uint8_t *key_kind)
{
	const char *tok;
	size_t		len;
	char		q[4 * QUOTE_MAX + 16];
	int			idx;

	if (!expect_name(tp, "key_kind=", false))
		return BF_ERR_SYNTAX;
	idx = parse_name(tp, bf_key_kind_name, 0, BF_KEY_KIND_MAX, &tok, &len);
	if (idx < 0)
	{
		if (tp->msg)
		{
			quote_token(tok, len, q, sizeof(q));
			snprintf(tp->msg, tp->msglen, "unrecognized key kind %s", q);
		}
		return BF_ERR_KEY_KIND;
	}
	*key_kind = (uint8_t) idx;
	return BF_OK;
}

/*
 * A rate (target_fpr, ratio): accepted only in the exact form
 * bf_format_double writes.
 */
static BfStatus parse_double(TextParser *tp, const char *what, double *out);
static BfStatus finish_header(TextParser *tp, const BfHeader *hdr, BfHeader *h,
							  const char **data, size_t *datalen);
static BfStatus parse_scalable_fields(TextParser *tp, BfHeader *hdr);

static BfStatus
parse_fpr(TextParser *tp, double *out)
{
	return parse_double(tp, "target_fpr", out);
}

static BfStatus
parse_double(TextParser *tp, const char *what, double *out)
{
	size_t		start_pos = tp->pos;
	size_t		len;
	const char *tok = next_token(tp, &len);
	char		q[4 * QUOTE_MAX + 16];
	char		buf[64];
	char		canon[64];
	char	   *end;
	double		v;
	size_t		i;

	if (len == 0)
	{
		if (tp->msg)
			snprintf(tp->msg, tp->msglen, "%s is empty at position %zu",
					 what, start_pos);
		return BF_ERR_SYNTAX;
	}

	/*
	 * Only characters of a decimal floating-point number reach strtod, which
	 * would otherwise also take "nan", "inf", hexadecimal and leading blanks.
	 */
	for (i = 0; i < len; i++)
	{
		char		c = tok[i];

		if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == '-' ||
			  c == '+'))
			break;
	}
	if (i < len || len >= sizeof(buf))
	{
		if (tp->msg)
		{
			quote_token(tok, len, q, sizeof(q));
			snprintf(tp->msg, tp->msglen, "%s %s is not a decimal number", what, q);
		}
		return BF_ERR_SYNTAX;
	}
	memcpy(buf, tok, len);
	buf[len] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (end != buf + len)
	{
		if (tp->msg)
		{
			quote_token(tok, len, q, sizeof(q));
			snprintf(tp->msg, tp->msglen, "%s %s is not a decimal number", what, q);
		}
		return BF_ERR_SYNTAX;
	}
	bf_format_double(v, canon, sizeof(canon));
	if (strcmp(canon, buf) != 0)
	{
		if (tp->msg)
		{
			quote_token(tok, len, q, sizeof(q));
			snprintf(tp->msg, tp->msglen,
					 "%s %s is not in canonical form (expected \"%s\")",
					 what, q, canon);
		}
		return BF_ERR_SYNTAX;
	}
	*out = v;
	return BF_OK;
}

BfStatus
bf_text_parse_header(const char *s, BfHeader *h,
					 const char **data, size_t *datalen,
					 char *msg, size_t msglen)
{
	TextParser	tp;
	BfHeader	hdr;
	BfStatus	st;
	uint64_t	v;

	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	if (msglen == 0)
		msg = NULL;
	if (s == NULL)
	{
		if (msg)
			snprintf(msg, msglen, "no input");
		return BF_ERR_SYNTAX;
	}

	tp.s = s;
	tp.pos = 0;
	tp.msg = msg;
	tp.msglen = msglen;
	memset(&hdr, 0, sizeof(hdr));

	/* version: checked at once, since another version may differ after it */
	if (!expect_name(&tp, "version=", true))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(&tp, "version", BF_ERR_VERSION, &v)) != BF_OK)
		return st;
	if (!bf_format_version_known(v))
	{
		if (msg)
			snprintf(msg, msglen,
					 "unrecognized format version %llu (this build reads versions %d to %d)",
					 (unsigned long long) v, BF_FORMAT_VERSION_MIN, BF_FORMAT_VERSION);
		return BF_ERR_VERSION;
	}
	hdr.version = (uint8_t) v;
	hdr.flags = 0;
	hdr.layers = 1;

	/* "family=" comes next only in the scalable form */
	if (strncmp(s + tp.pos, " family=", 8) == 0)
	{
		st = parse_scalable_fields(&tp, &hdr);
		if (st != BF_OK)
			return st;
		return finish_header(&tp, &hdr, h, data, datalen);
	}

	/* layout */
	if ((st = parse_layout_field(&tp, "blocked, classic or counting", &hdr.layout)) != BF_OK)
		return st;
	hdr.family = (uint8_t) bf_layout_family(hdr.layout);

	/* hashes */
	if (!expect_name(&tp, "hashes=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(&tp, "hashes", BF_ERR_HASHES, &v)) != BF_OK)
		return st;
	if (v > UINT16_MAX)
	{
		if (msg)
			snprintf(msg, msglen, "hash count %llu is out of range 1..%d",
					 (unsigned long long) v, BF_MAX_HASHES);
		return BF_ERR_HASHES;
	}
	hdr.hashes = (uint16_t) v;

	/* key_kind */
	if ((st = parse_key_kind_field(&tp, &hdr.key_kind)) != BF_OK)
		return st;

	/* bits, capacity */
	if (!expect_name(&tp, "bits=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(&tp, "bits", BF_ERR_NBITS, &hdr.nbits)) != BF_OK)
		return st;
	if (!expect_name(&tp, "capacity=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(&tp, "capacity", BF_ERR_CAPACITY, &hdr.capacity)) != BF_OK)
		return st;

	/* target_fpr, added */
	if (!expect_name(&tp, "target_fpr=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_fpr(&tp, &hdr.target_fpr)) != BF_OK)
		return st;
	if (!expect_name(&tp, "added=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(&tp, "added", BF_ERR_SYNTAX, &hdr.added)) != BF_OK)
		return st;

	return finish_header(&tp, &hdr, h, data, datalen);
}

/*
 * The end of the header ("data=") and the length of the payload, after the
 * fields as a whole were found valid.
 */
static BfStatus
finish_header(TextParser *tp, const BfHeader *hdr, BfHeader *h,
			  const char **data, size_t *datalen)
{
	BfStatus	st;
	uint64_t	nbytes;
	uint64_t	expected;
	size_t		dlen;

	/* data: the rest of the string */
	if (!expect_name(tp, "data=", false))
		return BF_ERR_SYNTAX;

	/* The fields as a whole, before trusting nbits. */
	if ((st = bf_header_check(hdr, tp->msg, tp->msglen)) != BF_OK)
		return st;

	/*
	 * The payload length must be exactly that of nbits / 8 bytes (and the
	 * layers' headers); checked in 64 bits (nbits / 8 < 2^61, so its encoded
	 * length cannot overflow).
	 */
	/* From here on the header is valid: a length error still returns it. */
	if (h != NULL)
		*h = *hdr;
	dlen = strlen(tp->s + tp->pos);
	nbytes = bf_value_payload_bytes(hdr);
	expected = b64_length_u64(nbytes);
	if ((uint64_t) dlen != expected)
	{
		if (tp->msg)
			snprintf(tp->msg, tp->msglen,
					 "data has %zu base64 characters, expected %llu for %llu bytes",
					 dlen, (unsigned long long) expected,
					 (unsigned long long) nbytes);
		return BF_ERR_LENGTH;
	}

	if (data != NULL)
		*data = tp->s + tp->pos;
	if (datalen != NULL)
		*datalen = dlen;
	return BF_OK;
}

/*
 * The fields of the scalable form after the version, up to "added":
 *	family=scalable layout=blocked key_kind=text layers=2 bits=N
 *	capacity=1000 target_fpr=0.01 growth=2 ratio=0.5 added=5
 */
static BfStatus
parse_scalable_fields(TextParser *tp, BfHeader *hdr)
{
	BfStatus	st;
	uint64_t	v;
	const char *tok;
	size_t		len;
	char		q[4 * QUOTE_MAX + 16];

	if (!expect_name(tp, "family=", false))
		return BF_ERR_SYNTAX;
	tok = next_token(tp, &len);
	if (len != 8 || memcmp(tok, "scalable", 8) != 0)
	{
		if (tp->msg)
		{
			quote_token(tok, len, q, sizeof(q));
			snprintf(tp->msg, tp->msglen,
					 "unrecognized family %s (expected scalable, or no family field)", q);
		}
		return BF_ERR_FAMILY;
	}
	hdr->family = BF_FAMILY_SCALABLE;
	hdr->hashes = 0;

	if ((st = parse_layout_field(tp, "blocked or classic", &hdr->layout)) != BF_OK)
		return st;
	if ((st = parse_key_kind_field(tp, &hdr->key_kind)) != BF_OK)
		return st;

	if (!expect_name(tp, "layers=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(tp, "layers", BF_ERR_LAYERS, &v)) != BF_OK)
		return st;
	if (v < 1 || v > BF_MAX_LAYERS)
	{
		if (tp->msg)
			snprintf(tp->msg, tp->msglen, "layer count %llu is out of range 1..%d",
					 (unsigned long long) v, BF_MAX_LAYERS);
		return BF_ERR_LAYERS;
	}
	hdr->layers = (uint32_t) v;

	if (!expect_name(tp, "bits=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(tp, "bits", BF_ERR_NBITS, &hdr->nbits)) != BF_OK)
		return st;
	if (!expect_name(tp, "capacity=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(tp, "capacity", BF_ERR_CAPACITY, &hdr->capacity)) != BF_OK)
		return st;
	if (!expect_name(tp, "target_fpr=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_fpr(tp, &hdr->target_fpr)) != BF_OK)
		return st;

	if (!expect_name(tp, "growth=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_uint(tp, "growth", BF_ERR_GROWTH, &v)) != BF_OK)
		return st;
	if (v > BF_MAX_GROWTH)
	{
		if (tp->msg)
			snprintf(tp->msg, tp->msglen, "growth %llu is out of range %d..%d",
					 (unsigned long long) v, BF_MIN_GROWTH, BF_MAX_GROWTH);
		return BF_ERR_GROWTH;
	}
	hdr->growth = (uint32_t) v;
	if (!expect_name(tp, "ratio=", false))
		return BF_ERR_SYNTAX;
	if ((st = parse_double(tp, "ratio", &hdr->ratio)) != BF_OK)
		return st;

	if (!expect_name(tp, "added=", false))
		return BF_ERR_SYNTAX;
	return parse_uint(tp, "added", BF_ERR_SYNTAX, &hdr->added);
}

BfStatus
bf_text_decode_payload(const char *data, size_t datalen,
					   uint8_t *bits, uint64_t nbytes,
					   char *msg, size_t msglen)
{
	size_t		off;
	char		c[16];
	uint64_t	expected = b64_length_u64(nbytes);

	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	if (msglen == 0)
		msg = NULL;

	if ((uint64_t) datalen != expected || nbytes > (uint64_t) SIZE_MAX)
	{
		if (msg)
			snprintf(msg, msglen,
					 "data has %zu base64 characters, expected %llu for %llu bytes",
					 datalen, (unsigned long long) expected,
					 (unsigned long long) nbytes);
		return BF_ERR_LENGTH;
	}

	switch (b64_decode(data, datalen, bits, (size_t) nbytes, &off))
	{
		case B64_OK:
			return BF_OK;
		case B64_LENGTH:
			/* checked above */
			if (msg)
				snprintf(msg, msglen, "data has the wrong length");
			return BF_ERR_LENGTH;
		case B64_INVALID_CHAR:
			if (msg)
			{
				describe_char((unsigned char) data[off], c, sizeof(c));
				snprintf(msg, msglen, "invalid base64 character %s at offset %zu",
						 c, off);
			}
			return BF_ERR_SYNTAX;
		case B64_UNEXPECTED_PAD:
			if (msg)
				snprintf(msg, msglen,
						 "unexpected base64 padding '=' at offset %zu", off);
			return BF_ERR_SYNTAX;
		case B64_MISSING_PAD:
			if (msg)
			{
				describe_char((unsigned char) data[off], c, sizeof(c));
				snprintf(msg, msglen,
						 "expected base64 padding '=' at offset %zu, found %s",
						 off, c);
			}
			return BF_ERR_SYNTAX;
		case B64_NONCANONICAL:
			if (msg)
				snprintf(msg, msglen,
						 "non-canonical base64 at offset %zu: the unused low bits of the last character are not zero",
						 off);
			return BF_ERR_SYNTAX;
	}
	return BF_ERR_SYNTAX;		/* not reached */
}
