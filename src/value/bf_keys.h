/*
 * bf_keys.h
 *		Key kinds and canonical key bytes: how a SQL value becomes the bytes
 *		that are hashed.  See doc/keys.md ("Key types").
 */
#ifndef BF_KEYS_H
#define BF_KEYS_H

#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"

#include "value/bf_compat.h"

#include "core/bf_core.h"

/* What a call site knows about the type of its key argument. */
typedef struct BfKeyType
{
	Oid			typid;			/* the argument's type (InvalidOid: not set) */
	Oid			collation;		/* the collation it was checked under */
	Oid			basetype;		/* typid with domains stripped */
	BfKeyKind	kind;
	int16		typlen;
	bool		typbyval;
	char		typalign;
} BfKeyType;

/*
 * Resolve a key type: its kind and storage properties.  Raises an error for a
 * type without a canonical form, and for text under a nondeterministic
 * collation.  filter_typid is the bloomfilter type (to give a better message
 * when a filter is passed as a key), or InvalidOid.
 */
extern void bf_key_type_init(BfKeyType *kt, Oid typid, Oid collation,
							 Oid filter_typid);

/*
 * Would bf_key_type_init accept this type and collation?  (For callers that
 * must not raise an error, such as a DDL check.)
 */
extern bool bf_key_type_usable(Oid typid, Oid collation);

/*
 * The type of argument argno of the function called: that of the call's
 * expression, or, when the caller passes none (Citus's worker_partial_agg
 * calls an aggregate's transition function so, with a new FmgrInfo for every
 * row), the function's declared type.  A polymorphic declared type is an
 * error then.  In an aggregate's transition function, a key that reached the
 * argument's type through an implicit cast must itself be a supported key
 * type (or the call is an error).
 */
extern Oid	bf_key_arg_type(FunctionCallInfo fcinfo, int argno);

/*
 * Hash a (non-NULL) key of that type for a filter of the given layout: the
 * hash of its canonical bytes.  A guard index, which reads every key as
 * its column's type, sets and tests just this hash.
 */
extern BfHash bf_key_hash(const BfKeyType *kt, Datum key, int layout);

/* The most hashes bf_key_add_hashes or bf_key_probe_hashes gives for a key. */
#define BF_KEY_MAX_FORMS	3
#define BF_KEY_MAX_PROBES	BF_KEY_MAX_FORMS

/*
 * The hashes to set when adding a (non-NULL) key to a bloomfilter value:
 * bf_key_hash first, then, for a text key (a string literal, which
 * PostgreSQL's = may read as char(n) or name), the forms the literal takes
 * as those (see bf_keys.c).  Returns how many (1 to BF_KEY_MAX_FORMS).
 */
extern int	bf_key_add_hashes_any(const BfKeyType *kt, Datum key, int layout,
								  BfHash *hashes);

/*
 * A text or varchar key in a plain varlena (not compressed, not out of line)
 * shorter than NAMEDATALEN and not ending in a blank: then its only form, to
 * add or to check, is its bytes as they are (the common case, hashed inline
 * on a row's path).  Sets *s and *len to its bytes.
 */
static inline bool
bf_key_plain_text(const BfKeyType *kt, Datum key, const char **s, size_t *len)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(key);

	if (kt->basetype != TEXTOID && kt->basetype != VARCHAROID)
		return false;
	/* in line and uncompressed only (a 1-byte header is also an external one's) */
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		return false;
	*s = VARDATA_ANY(v);
	*len = VARSIZE_ANY_EXHDR(v);
	return *len < NAMEDATALEN && (*len == 0 || (*s)[*len - 1] != ' ');
}

static inline int
bf_key_add_hashes(const BfKeyType *kt, Datum key, int layout, BfHash *hashes)
{
	const char *s;
	size_t		len;

	if (kt->basetype == TEXTOID && bf_key_plain_text(kt, key, &s, &len))
	{
		hashes[0] = bf_hash_bytes(layout, s, len);
		return 1;
	}
	return bf_key_add_hashes_any(kt, key, layout, hashes);
}

/*
 * The hashes to test when checking a (non-NULL) key: the filter may hold it
 * ("maybe") if all the bits of any one of them are set.  Usually just
 * bf_key_hash; more where PostgreSQL's = makes the key equal to a key of
 * other canonical bytes (see bf_keys.c).  Returns how many (1 to
 * BF_KEY_MAX_PROBES).
 */
extern int	bf_key_probe_hashes_any(const BfKeyType *kt, Datum key, int layout,
									BfHash *hashes);

static inline int
bf_key_probe_hashes(const BfKeyType *kt, Datum key, int layout, BfHash *hashes)
{
	const char *s;
	size_t		len;

	if (bf_key_plain_text(kt, key, &s, &len))
	{
		hashes[0] = bf_hash_bytes(layout, s, len);
		return 1;
	}
	return bf_key_probe_hashes_any(kt, key, layout, hashes);
}

/*
 * Check that keys of this type may be added to or checked against a filter
 * whose key kind is filter_kind; raises an error naming both kinds otherwise.
 * A filter of kind none (no key added yet) accepts any kind.
 */
extern void bf_key_check_kind(int filter_kind, const BfKeyType *kt);

/*
 * bf_key_check_kind for a bloomfilter value, where a key also meets string
 * literals as text: refuses "char" keys besides (a string literal compared
 * with a "char" keeps only its first byte).  Shared filters, which read a
 * literal as their column's type, accept "char" columns and do not call it.
 */
extern void bf_key_check_value_any(int filter_kind, const BfKeyType *kt);

/* The same, inline where the filter's kind is the key's (the usual row). */
static inline void
bf_key_check_value(int filter_kind, const BfKeyType *kt)
{
	if (filter_kind != (int) kt->kind || kt->basetype == CHAROID)
		bf_key_check_value_any(filter_kind, kt);
}

#endif							/* BF_KEYS_H */
