/*
 * bf_keys.c
 *		Key kinds and canonical key bytes.
 *
 * A key is never hashed with PostgreSQL's own hash support functions, whose
 * values are not stable across platforms and versions.  Each supported type
 * maps to a key kind and a canonical byte string whose bytes are equal
 * exactly when the values are equal; the bytes are hashed with XXH3.
 *
 *	kind		types					canonical bytes
 *	integer		int2, int4, int8, oid	the value as int64, little-endian
 *	text		text, varchar, bpchar,	the bytes in the database encoding
 *				name					(bpchar and varchar without trailing
 *										blanks)
 *	bytea		bytea					the bytes
 *	uuid		uuid					the 16 bytes
 *	boolean		bool					one byte, 0 or 1
 *	float		float4, float8			binary64 little-endian (float4 widened),
 *										-0 as 0, every NaN as 0x7ff8000000000000
 *	numeric		numeric					its decimal text without trailing
 *										fractional zeros ("1.50" -> "1.5")
 *	date		date					days since 2000-01-01, int64 LE
 *	timestamp	timestamp				microseconds since 2000-01-01, int64 LE
 *	timestamptz	timestamptz				microseconds since 2000-01-01 UTC, int64 LE
 *
 * Domains use their base type; bloom_literal (what string literals become)
 * is text.  "char" keys are refused by bloomfilter values
 * (bf_key_check_value); a guard index may guard a "char" column, whose
 * keys are hashed as the bytes of their text form.
 *
 * The rule these forms keep: whenever k1 = k2 is true as PostgreSQL resolves
 * it, a filter holding k1 answers "maybe" for k2, or the combination is an
 * error.  Keys of different kinds never mix (an error).  Within a kind, some
 * of PostgreSQL's equalities identify keys whose canonical bytes differ, and
 * an add sets, or a check tests, the other forms too (bf_key_add_hashes,
 * bf_key_probe_hashes):
 *
 *	- int2 or int4 = oid compares the integer as an oid, its 32 bits read
 *	  unsigned: (-1)::int4 = 4294967295::oid.  A negative int2/int4 key also
 *	  tests the oid it equals, an oid above 2^31 - 1 the negative integer.
 *	- varchar = char(n) compares as char(n), ignoring trailing blanks, while
 *	  varchar = text compares every byte.  varchar keys are therefore added
 *	  without trailing blanks (as char(n) keys are), and a check of a text,
 *	  varchar or name key that ends in blanks tests the string with and
 *	  without them.  (Filters built by version 1.0 hold varchar keys with
 *	  their blanks: checks of the same key still find them.)
 *	- A string literal compared with a column is read by the column type's
 *	  input function: as char(n) it loses its trailing blanks ('ab ' =
 *	  'ab'::char(2)), as name it is clipped to NAMEDATALEN - 1 = 63 bytes at
 *	  a character boundary.  Literals reach a filter as text keys, so a text
 *	  key is added as it is and also without its trailing blanks and clipped
 *	  to 63 bytes (when those differ), and a check of a text key longer than
 *	  63 bytes also tests it clipped.  (Filters built by version 1.0 lack the
 *	  forms added: a char(n) or name check of such a key can answer "no".)
 *
 * Types with an equality of their own that bytes cannot follow (citext,
 * nondeterministic collations) are refused; so is "char" in filter values,
 * since a literal compared with it keeps only its first byte ('a'::"char" =
 * 'abc' is true), and the text form of a byte above 127 changed between
 * PostgreSQL major versions.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/dependency.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "mb/pg_wchar.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/pg_locale.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "value/bf_keys.h"

static BfKeyKind
key_kind_of_type(Oid basetype)
{
	switch (basetype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
			return BF_KEY_INTEGER;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
		case CHAROID:
			return BF_KEY_TEXT;
		case BYTEAOID:
			return BF_KEY_BYTEA;
		case UUIDOID:
			return BF_KEY_UUID;
		case BOOLOID:
			return BF_KEY_BOOLEAN;
		case FLOAT4OID:
		case FLOAT8OID:
			return BF_KEY_FLOAT;
		case NUMERICOID:
			return BF_KEY_NUMERIC;
		case DATEOID:
			return BF_KEY_DATE;
		case TIMESTAMPOID:
			return BF_KEY_TIMESTAMP;
		case TIMESTAMPTZOID:
			return BF_KEY_TIMESTAMPTZ;
		default:
			return BF_KEY_NONE;
	}
}

/*
 * Is this this extension's type bloom_literal?  It is text under another
 * name (text's I/O functions, a binary cast from text): the type of string
 * literals and text keys in the bloom_literal variants, and of an array of
 * them.
 */
static bool
is_bloom_literal(Oid basetype)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(basetype));
	bool		result = false;

	if (HeapTupleIsValid(tup))
	{
		Form_pg_type t = (Form_pg_type) GETSTRUCT(tup);

		if (strcmp(NameStr(t->typname), "bloom_literal") == 0)
		{
			Oid			ext = getExtensionOfObject(TypeRelationId, basetype);

			result = OidIsValid(ext) &&
				ext == get_extension_oid("bloomfilter", true);
		}
		ReleaseSysCache(tup);
	}
	return result;
}

void
bf_key_type_init(BfKeyType *kt, Oid typid, Oid collation, Oid filter_typid)
{
	Oid			basetype = getBaseType(typid);
	BfKeyKind	kind = key_kind_of_type(basetype);

	if (kind == BF_KEY_NONE && is_bloom_literal(basetype))
	{
		/* byte for byte text: hashed as text */
		basetype = TEXTOID;
		kind = BF_KEY_TEXT;
	}
	if (kind == BF_KEY_NONE)
	{
		if (OidIsValid(filter_typid) && basetype == getBaseType(filter_typid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a bloomfilter cannot be a key of another bloomfilter"),
					 errhint("To combine two filters use bloom_union() (operator |) or bloom_intersect() (operator &).")));
		if (TypeCategory(basetype) == TYPCATEGORY_STRING)
		{
			/*
			 * A string type of its own (citext, for one) has an equality that
			 * the bytes of its text form need not follow: 'Alice'::citext =
			 * 'ALICE'::citext.
			 */
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("keys of type %s are not supported by bloomfilter",
							format_type_be(typid)),
					 errdetail("Values of type %s can be equal with different bytes (as citext compares case-insensitively), so a filter could answer \"no\" for a key it holds.",
							   format_type_be(basetype)),
					 errhint("Cast the key to text the same way when adding and when checking: key::text compares it exactly, lower(key::text) ignores case.")));
		}
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("keys of type %s are not supported by bloomfilter",
						format_type_be(typid)),
				 errdetail("Supported key types: smallint, integer, bigint, oid, text, varchar, char, name, bytea, uuid, boolean, real, double precision, numeric, date, timestamp, timestamptz."),
				 errhint("Cast the key to text (key::text), and use the same cast when adding and when checking.")));
	}

	/*
	 * Under a nondeterministic collation, equal strings can have different
	 * bytes: a key added as 'A' would not be found as 'a'.  That would be a
	 * false negative, so refuse.
	 */
	if (kind == BF_KEY_TEXT && OidIsValid(collation) &&
		!get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloomfilter keys cannot use the nondeterministic collation \"%s\"",
						get_collation_name(collation)),
				 errdetail("Strings that are equal under a nondeterministic collation can differ in their bytes, so a filter could answer \"no\" for a key it holds."),
				 errhint("Normalize the key (for example lower(key) for a case-insensitive collation) and apply COLLATE \"C\".")));

	kt->typid = typid;
	kt->collation = collation;
	kt->basetype = basetype;	/* TEXTOID for bloom_literal */
	kt->kind = kind;
	get_typlenbyvalalign(typid, &kt->typlen, &kt->typbyval, &kt->typalign);
}

bool
bf_key_type_usable(Oid typid, Oid collation)
{
	Oid			basetype = getBaseType(typid);
	BfKeyKind	kind = key_kind_of_type(basetype);

	if (kind == BF_KEY_NONE && is_bloom_literal(basetype))
		kind = BF_KEY_TEXT;
	if (kind == BF_KEY_NONE)
		return false;
	return kind != BF_KEY_TEXT || !OidIsValid(collation) ||
		get_collation_isdeterministic(collation);
}

/*
 * The declared type of argument argno of function fnoid.  The last answer is
 * kept: a caller without call expressions asks the same on every row.
 */
static Oid
declared_arg_type(Oid fnoid, int argno)
{
	static Oid	last_fnoid = InvalidOid;
	static int	last_argno = -1;
	static Oid	last_type = InvalidOid;
	HeapTuple	tup;
	Form_pg_proc proc;
	Oid			type;

	if (fnoid == last_fnoid && argno == last_argno)
		return last_type;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fnoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", fnoid);
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (argno < 0 || argno >= proc->pronargs)
		elog(ERROR, "function %u has no argument %d", fnoid, argno);
	type = proc->proargtypes.values[argno];
	ReleaseSysCache(tup);
	if (IsPolymorphicType(type))
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_DATATYPE),
				 errmsg("could not determine the type of the bloomfilter key"),
				 errdetail("Function %s was called without its call expression, and its key argument is of the polymorphic type %s.",
						   format_procedure(fnoid), format_type_be(type)),
				 errhint("Cast the key to a supported key type: each has overloads of its own.")));
	last_fnoid = fnoid;
	last_argno = argno;
	last_type = type;
	return type;
}

/*
 * An aggregate's key that reached an overload of a fixed type through an
 * implicit cast (citext to text, say) is refused as its own type would be:
 * the cast must not let a key type the filters cannot follow in.  arg is the
 * aggregate's argument expression, type the overload's.
 */
static void
check_key_source(Node *arg, Oid type)
{
	Oid			source = exprType(strip_implicit_coercions(arg));
	BfKeyType	kt;

	if (source != type && OidIsValid(source))
		bf_key_type_init(&kt, source, exprCollation(arg), InvalidOid);
}

/* The transition function of an aggregate, or InvalidOid. */
static Oid
agg_transfn(Oid aggfnoid)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Oid			transfn;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	transfn = ((Form_pg_aggregate) GETSTRUCT(tup))->aggtransfn;
	ReleaseSysCache(tup);
	return transfn;
}

/*
 * The source of argument argno of the transition function fcinfo calls: in
 * a plain aggregation its Aggref; in a window aggregation (which has no
 * Aggref to give) every window aggregate of the node with this transition
 * function, which may be several.
 */
static void
check_agg_key_source(FunctionCallInfo fcinfo, int argno, Oid type)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	ListCell   *lc;

	if (argno < 1)
		return;
	if (aggref != NULL)
	{
		if (list_length(aggref->args) >= argno)
			check_key_source((Node *) ((TargetEntry *) list_nth(aggref->args, argno - 1))->expr,
							 type);
		return;
	}
	if (fcinfo->context == NULL || !IsA(fcinfo->context, WindowAggState))
		return;
	foreach(lc, ((WindowAggState *) fcinfo->context)->funcs)
	{
		WindowFunc *wfunc = ((WindowFuncExprState *) lfirst(lc))->wfunc;

		if (wfunc->winagg && list_length(wfunc->args) >= argno &&
			agg_transfn(wfunc->winfnoid) == fcinfo->flinfo->fn_oid)
			check_key_source((Node *) list_nth(wfunc->args, argno - 1), type);
	}
}

Oid
bf_key_arg_type(FunctionCallInfo fcinfo, int argno)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, argno);

	if (!OidIsValid(type))
		return declared_arg_type(fcinfo->flinfo->fn_oid, argno);
	check_agg_key_source(fcinfo, argno, type);
	return type;
}

/* Hash a varlena's payload (detoasting only if needed). */
static inline BfHash
hash_varlena(Datum key, int layout)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(key);
	struct varlena *d = (VARATT_IS_COMPRESSED(v) || VARATT_IS_EXTERNAL(v)) ?
		pg_detoast_datum_packed(v) : v;
	BfHash		h = bf_hash_bytes(layout, VARDATA_ANY(d), VARSIZE_ANY_EXHDR(d));

	if (d != v)
		pfree(d);
	return h;
}

static BfHash
hash_bpchar(Datum key, int layout)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(key);
	struct varlena *d = pg_detoast_datum_packed(v);
	const char *s = VARDATA_ANY(d);
	size_t		len = VARSIZE_ANY_EXHDR(d);
	BfHash		h;

	/* trailing blanks are not significant in bpchar comparisons */
	while (len > 0 && s[len - 1] == ' ')
		len--;
	h = bf_hash_bytes(layout, s, len);
	if (d != v)
		pfree(d);
	return h;
}

/*
 * "char": the bytes of its text form, what the implicit cast to text gives
 * (a string literal compared with it, or a text key, meets it as text).
 */
static BfHash
hash_char(Datum key, int layout)
{
	text	   *t = DatumGetTextPP(DirectFunctionCall1(char_text, key));
	BfHash		h = bf_hash_bytes(layout, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));

	pfree(t);
	return h;
}

static BfHash
hash_float(double d, int layout)
{
	uint64		bits;

	if (isnan(d))
		bits = UINT64CONST(0x7ff8000000000000);
	else if (d == 0.0)
		bits = 0;				/* -0 equals 0 */
	else
		memcpy(&bits, &d, sizeof(bits));
	return bf_hash_int64(layout, (int64) bits);
}

/*
 * numeric: equal values can differ in display scale ("1.5" = "1.50"), so the
 * canonical form is the decimal text with trailing fractional zeros removed.
 */
static BfHash
hash_numeric_key(Datum key, int layout)
{
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, key));
	size_t		len = strlen(s);
	BfHash		h;

	if (strchr(s, '.') != NULL)
	{
		while (len > 0 && s[len - 1] == '0')
			len--;
		if (len > 0 && s[len - 1] == '.')
			len--;
	}
	h = bf_hash_bytes(layout, s, len);
	pfree(s);
	return h;
}

BfHash
bf_key_hash(const BfKeyType *kt, Datum key, int layout)
{
	switch (kt->basetype)
	{
		case INT2OID:
			return bf_hash_int64(layout, DatumGetInt16(key));
		case INT4OID:
			return bf_hash_int64(layout, DatumGetInt32(key));
		case INT8OID:
			return bf_hash_int64(layout, DatumGetInt64(key));
		case OIDOID:
			return bf_hash_int64(layout, (int64) DatumGetObjectId(key));
		case TEXTOID:
		case BYTEAOID:
			return hash_varlena(key, layout);
		case VARCHAROID:
		case BPCHAROID:
			return hash_bpchar(key, layout);
		case CHAROID:
			return hash_char(key, layout);
		case NAMEOID:
			{
				const char *s = NameStr(*DatumGetName(key));

				return bf_hash_bytes(layout, s, strnlen(s, NAMEDATALEN));
			}
		case UUIDOID:
			return bf_hash_bytes(layout, DatumGetUUIDP(key)->data, UUID_LEN);
		case BOOLOID:
			{
				uint8		b = DatumGetBool(key) ? 1 : 0;

				return bf_hash_bytes(layout, &b, 1);
			}
		case FLOAT4OID:
			return hash_float((double) DatumGetFloat4(key), layout);
		case FLOAT8OID:
			return hash_float(DatumGetFloat8(key), layout);
		case NUMERICOID:
			return hash_numeric_key(key, layout);
		case DATEOID:
			return bf_hash_int64(layout, (int64) DatumGetDateADT(key));
		case TIMESTAMPOID:
			return bf_hash_int64(layout, (int64) DatumGetTimestamp(key));
		case TIMESTAMPTZOID:
			return bf_hash_int64(layout, (int64) DatumGetTimestampTz(key));
		default:
			elog(ERROR, "unexpected bloomfilter key type %u", kt->basetype);
	}
	pg_unreachable();
}

/*
 * The string bytes of a text-kind key that is not bpchar (text, varchar,
 * name, "char"), as they are, trailing blanks included.  *to_free is set to
 * what the caller must pfree (or NULL).
 */
static void
string_key_bytes(const BfKeyType *kt, Datum key, const char **s, size_t *len,
				 void **to_free)
{
	*to_free = NULL;
	switch (kt->basetype)
	{
		case NAMEOID:
			*s = NameStr(*DatumGetName(key));
			*len = strnlen(*s, NAMEDATALEN);
			break;
		case CHAROID:
			{
				text	   *t = DatumGetTextPP(DirectFunctionCall1(char_text, key));

				*s = VARDATA_ANY(t);
				*len = VARSIZE_ANY_EXHDR(t);
				*to_free = t;
				break;
			}
		default:				/* text, varchar */
			{
				struct varlena *v = (struct varlena *) DatumGetPointer(key);
				struct varlena *d = pg_detoast_datum_packed(v);

				*s = VARDATA_ANY(d);
				*len = VARSIZE_ANY_EXHDR(d);
				if (d != v)
					*to_free = d;
				break;
			}
	}
}

/* Length of a string read as name: clipped to 63 bytes as namein does it. */
static inline size_t
name_clip_len(const char *s, size_t len)
{
	if (len < NAMEDATALEN)
		return len;
	return (size_t) pg_mbcliplen(s, (int) len, NAMEDATALEN - 1);
}

static inline size_t
without_trailing_blanks(const char *s, size_t len)
{
	while (len > 0 && s[len - 1] == ' ')
		len--;
	return len;
}

int
bf_key_add_hashes_any(const BfKeyType *kt, Datum key, int layout,
					  BfHash *hashes)
{
	const char *s;
	size_t		len;
	size_t		trimmed;
	size_t		clipped;
	void	   *to_free;
	int			n = 1;

	if (kt->basetype != TEXTOID)
	{
		hashes[0] = bf_key_hash(kt, key, layout);
		return 1;
	}

	/*
	 * A text key: a string literal, for all a filter can tell.  Compared
	 * with a char(n) column the literal is read as char(n), without its
	 * trailing blanks; with a name column as name, clipped to 63 bytes.  Set
	 * those forms too, so that the char(n) or name keys equal to it are
	 * found.
	 */
	string_key_bytes(kt, key, &s, &len, &to_free);
	trimmed = without_trailing_blanks(s, len);
	clipped = name_clip_len(s, len);
	hashes[0] = bf_hash_bytes(layout, s, len);
	if (trimmed != len)
		hashes[n++] = bf_hash_bytes(layout, s, trimmed);
	if (clipped != len)
		hashes[n++] = bf_hash_bytes(layout, s, clipped);
	if (to_free != NULL)
		pfree(to_free);
	return n;
}

int
bf_key_probe_hashes_any(const BfKeyType *kt, Datum key, int layout,
						BfHash *hashes)
{
	switch (kt->basetype)
	{
		case INT2OID:
		case INT4OID:
			{
				int32		v = kt->basetype == INT2OID ?
					(int32) DatumGetInt16(key) : DatumGetInt32(key);

				hashes[0] = bf_hash_int64(layout, (int64) v);
				if (v >= 0)
					return 1;
				/* = oid reads the 32 bits unsigned: -1 = 4294967295 */
				hashes[1] = bf_hash_int64(layout, (int64) (uint32) v);
				return 2;
			}
		case OIDOID:
			{
				Oid			o = DatumGetObjectId(key);

				hashes[0] = bf_hash_int64(layout, (int64) o);
				if (o <= (Oid) PG_INT32_MAX)
					return 1;
				/* the int4 (or int2) whose bits it has: 4294967295 = -1 */
				hashes[1] = bf_hash_int64(layout, (int64) (int32) o);
				return 2;
			}
		case TEXTOID:
		case VARCHAROID:
		case NAMEOID:
		case CHAROID:
			{
				const char *s;
				size_t		len;
				size_t		trimmed;
				void	   *to_free;
				int			n = 1;

				string_key_bytes(kt, key, &s, &len, &to_free);
				trimmed = without_trailing_blanks(s, len);

				/*
				 * The string as it is (text, name and "char" keys are added
				 * so, and varchar keys were by version 1.0) and, if it ends
				 * in blanks, without them (bpchar and varchar keys are added
				 * so): varchar = char(n) ignores trailing blanks, and so
				 * does a string literal compared with a char(n).
				 */
				hashes[0] = bf_hash_bytes(layout, s, len);
				if (trimmed != len)
					hashes[n++] = bf_hash_bytes(layout, s, trimmed);

				/*
				 * A text key may be a string literal, which a name column
				 * reads clipped to 63 bytes: also the name it equals.
				 */
				if (kt->basetype == TEXTOID)
				{
					size_t		clipped = name_clip_len(s, len);

					/* tested once when it is the trimmed form too */
					if (clipped != len && clipped != trimmed)
						hashes[n++] = bf_hash_bytes(layout, s, clipped);
				}
				if (to_free != NULL)
					pfree(to_free);
				return n;
			}
		default:
			hashes[0] = bf_key_hash(kt, key, layout);
			return 1;
	}
}

void
bf_key_check_kind(int filter_kind, const BfKeyType *kt)
{
	if (filter_kind != BF_KEY_NONE && filter_kind != (int) kt->kind)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("key of type %s (key kind %s) does not match this filter's key kind %s",
						format_type_be(kt->typid), bf_key_kind_name(kt->kind),
						bf_key_kind_name(filter_kind)),
				 errhint("Cast the key to a type of kind %s, as when the filter was built.",
						 bf_key_kind_name(filter_kind))));
}

void
bf_key_check_value_any(int filter_kind, const BfKeyType *kt)
{
	if (kt->basetype == CHAROID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("keys of type %s are not supported by bloomfilter",
						format_type_be(kt->typid)),
				 errdetail("A string literal compared with a \"char\" value keeps only its first byte ('a'::\"char\" = 'abc' is true), so a filter could answer \"no\" for a key it holds.  The text form of a \"char\" value above 127 also differs between PostgreSQL major versions."),
				 errhint("Cast the key to text (key::text), and use the same cast when adding and when checking.")));
	bf_key_check_kind(filter_kind, kt);
}
