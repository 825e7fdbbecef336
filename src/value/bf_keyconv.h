/*
 * bf_keyconv.h
 *		A key given for a column: how it becomes the bytes that column's
 *		keys were hashed from, the way PostgreSQL's "=" would compare it.
 *
 * Used by the checks of a column's filter (guard indexes):
 * they must answer "maybe" whenever "WHERE column = key" would find a row.
 *  - a string key (text) for a column of another type is read by the
 *    column type's input function (without typmod, as a literal in WHERE
 *    is): char(n) ignores trailing blanks, name clips to 63 bytes;
 *  - a value of another type: pg_catalog's "=" for (column type, key type)
 *    is looked up.  If it compares as the column's type, the value is cast
 *    to it (implicit casts only); if it is a cross-type operator of the same
 *    key kind (int8 = int4), the value is hashed as it is; if it would
 *    convert the column instead (a varchar column against a char(n) value),
 *    the check is refused with an error naming the cast to use.
 * Messages name the filter as the caller's "what" (e.g. 'index "g"').
 */
#ifndef BF_KEYCONV_H
#define BF_KEYCONV_H

#include "postgres.h"

#include "fmgr.h"

#include "value/bf_keys.h"

typedef enum BfConvKind
{
	BF_CONV_NONE,				/* hash the argument as it is */
	BF_CONV_RELABEL,			/* binary-compatible: hash as the column type */
	BF_CONV_FUNC,				/* a cast function */
	BF_CONV_IO,					/* the argument's output, the column's input */
	BF_CONV_PARSE				/* a string read by the column's input */
} BfConvKind;

typedef struct BfKeyConv
{
	BfKeyType	colkt;			/* the column's key type */
	BfKeyType	argkt;			/* BF_CONV_NONE: the argument's key type */
	BfConvKind	conv;
	FmgrInfo	conv_fn;
	int			conv_nargs;
	FmgrInfo	out_fn;
	Oid			in_ioparam;
} BfKeyConv;

/*
 * Does "=" with an input of type left on the column's side compare a column
 * of type colbase as its canonical keys do?
 */
extern bool bf_key_compares_as(Oid colbase, Oid left);

/*
 * Resolve how a key of type argtype becomes a key of a column of type
 * atttypid and collation attcoll (FmgrInfos in mcxt).  Raises an error when
 * it cannot agree with "=".
 */
extern void bf_keyconv_init(BfKeyConv *kc, MemoryContext mcxt, Oid atttypid,
							Oid attcoll, Oid argtype, const char *what);

/* The hash a (non-NULL) key sets in the column's filter. */
extern BfHash bf_keyconv_hash(BfKeyConv *kc, Datum key);

/*
 * A key hashed as it is (BF_CONV_NONE) may equal a column's key whose
 * canonical bytes differ (varchar = name compares every byte, the varchar
 * column's keys are hashed without trailing blanks): its other forms to
 * test, as checks of bloomfilter values do.  Returns how many (0 unless
 * BF_CONV_NONE).
 */
extern int	bf_keyconv_other_hashes(BfKeyConv *kc, Datum key, BfHash *hashes);

/* The key kind the conversion hashes with. */
static inline int
bf_keyconv_kind(const BfKeyConv *kc)
{
	return kc->conv == BF_CONV_NONE ? kc->argkt.kind : kc->colkt.kind;
}

/*
 * A key compared under a nondeterministic collation equals strings of other
 * bytes: refuse it.
 */
extern void bf_keyconv_check_collation(Oid collation, const char *what);

/*
 * The type a text argument argno had before PostgreSQL cast it to text to
 * call a text overload; refuses one whose conversion changes which values
 * are equal (char(n), citext), unless it is the column's own type colbase
 * (a char(n) key for a char(n) column, whose keys lose their trailing
 * blanks too; InvalidOid: none).
 */
extern void bf_keyconv_check_text_arg(FunctionCallInfo fcinfo, int argno,
									  Oid colbase, const char *what);

/*
 * How a value compared with "=" to a column is hashed to find the column's
 * keys equal to it (the rule of the planner's gates).
 */
typedef enum BfGateMode
{
	BF_GATE_NONE,				/* no filter of the column can answer */
	BF_GATE_AS_COLUMN,			/* hash the value as the column's type */
	BF_GATE_AS_KEY				/* hash the value as its own type (int8 = int4) */
} BfGateMode;

extern BfGateMode bf_key_gate_mode(Oid coltype, Oid colcoll, Oid argtype);

#endif							/* BF_KEYCONV_H */
