/*
 * bf_keyconv.c
 *		A key given for a column: its conversion to the column's canonical
 *		key bytes, agreeing with PostgreSQL's "=" (see bf_keyconv.h).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "nodes/value.h"
#include "parser/parse_coerce.h"
#include "parser/parse_oper.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "value/bf_keyconv.h"

/*
 * Its own type, or one that shares its bytes and its equality; char(n)
 * ignores trailing blanks, so only a varchar column (whose keys are hashed
 * without them too) may be compared as char(n).
 */
bool
bf_key_compares_as(Oid colbase, Oid left)
{
	if (left == colbase)
		return true;
	if (!IsBinaryCoercible(colbase, left))
		return false;
	if (left == BPCHAROID)
		return colbase == VARCHAROID;
	return colbase != BPCHAROID;
}

static void
no_operator(Oid argtype, Oid colbase, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("cannot check a key of type %s against %s of a column of type %s",
					format_type_be(argtype), what, format_type_be(colbase)),
			 errdetail("There is no equality operator between the two types."),
			 errhint("Cast the key to %s.", format_type_be(colbase))));
}

static void
converts_column(Oid argtype, Oid colbase, Oid left, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("cannot check a key of type %s against %s of a column of type %s",
					format_type_be(argtype), what, format_type_be(colbase)),
			 errdetail("PostgreSQL would compare them as %s, not as the column's type, so the filter's answer could disagree with \"=\".",
					   format_type_be(left)),
			 errhint("Cast the key to %s.", format_type_be(colbase))));
}

/* A value of type argtype (not the column's base type): how to hash it. */
static void
resolve_conversion(BfKeyConv *kc, MemoryContext mcxt, Oid argtype,
				   const char *what)
{
	Oid			colbase = kc->colkt.basetype;
	Oid			argbase = getBaseType(argtype);
	Operator	op;
	Form_pg_operator form;
	Oid			left,
				right;
	Oid			funcid;
	CoercionPathType path;

	op = oper(NULL, list_make2(makeString("pg_catalog"), makeString("=")),
			  colbase, argbase, true, -1);
	if (op == NULL)
		no_operator(argtype, colbase, what);
	form = (Form_pg_operator) GETSTRUCT(op);
	left = form->oprleft;
	right = form->oprright;
	ReleaseSysCache(op);

	/* else "=" converts the column: its answer could disagree with the keys */
	if (!bf_key_compares_as(colbase, left))
		path = COERCION_PATH_NONE;
	else if (right == argbase && right != left)
	{
		/* a cross-type operator: both sides keep their type */
		bf_key_type_init(&kc->argkt, argtype, kc->colkt.collation, InvalidOid);
		bf_key_check_kind(kc->colkt.kind, &kc->argkt);
		kc->conv = BF_CONV_NONE;
		return;
	}
	else if (right == left)
		path = find_coercion_pathway(left, argbase, COERCION_IMPLICIT, &funcid);
	else
		path = COERCION_PATH_NONE;
	switch (path)
	{
		case COERCION_PATH_RELABELTYPE:
			kc->conv = BF_CONV_RELABEL;
			break;
		case COERCION_PATH_FUNC:
			fmgr_info_cxt(funcid, &kc->conv_fn, mcxt);
			kc->conv_nargs = get_func_nargs(funcid);
			kc->conv = BF_CONV_FUNC;
			break;
		case COERCION_PATH_COERCEVIAIO:
			{
				Oid			outfn;
				Oid			infn;
				bool		varlena;

				getTypeOutputInfo(argbase, &outfn, &varlena);
				fmgr_info_cxt(outfn, &kc->out_fn, mcxt);
				getTypeInputInfo(left, &infn, &kc->in_ioparam);
				fmgr_info_cxt(infn, &kc->conv_fn, mcxt);
				kc->conv = BF_CONV_IO;
				break;
			}
		default:
			converts_column(argtype, colbase, left, what);
	}
}

void
bf_keyconv_init(BfKeyConv *kc, MemoryContext mcxt, Oid atttypid, Oid attcoll,
				Oid argtype, const char *what)
{
	memset(kc, 0, sizeof(BfKeyConv));
	bf_key_type_init(&kc->colkt, atttypid, attcoll, InvalidOid);
	if (!OidIsValid(argtype))
		elog(ERROR, "could not determine the type of the key");
	if (getBaseType(argtype) == kc->colkt.basetype)
		kc->conv = BF_CONV_RELABEL;
	else if (getBaseType(argtype) == TEXTOID &&
			 kc->colkt.basetype != VARCHAROID)
	{
		Oid			infn;

		getTypeInputInfo(kc->colkt.basetype, &infn, &kc->in_ioparam);
		fmgr_info_cxt(infn, &kc->conv_fn, mcxt);
		kc->conv = BF_CONV_PARSE;
	}
	else
		resolve_conversion(kc, mcxt, argtype, what);
}

BfHash
bf_keyconv_hash(BfKeyConv *kc, Datum key)
{
	Datum		v = key;

	switch (kc->conv)
	{
		case BF_CONV_NONE:
			return bf_key_hash(&kc->argkt, key, BF_LAYOUT_BLOCKED);
		case BF_CONV_RELABEL:
			break;
		case BF_CONV_FUNC:
			if (kc->conv_nargs == 1)
				v = FunctionCall1(&kc->conv_fn, key);
			else
				v = FunctionCall3(&kc->conv_fn, key, Int32GetDatum(-1),
								  BoolGetDatum(false));
			break;
		case BF_CONV_IO:
			v = InputFunctionCall(&kc->conv_fn, OutputFunctionCall(&kc->out_fn, key),
								  kc->in_ioparam, -1);
			break;
		case BF_CONV_PARSE:
			v = InputFunctionCall(&kc->conv_fn, TextDatumGetCString(key),
								  kc->in_ioparam, -1);
			break;
	}
	return bf_key_hash(&kc->colkt, v, BF_LAYOUT_BLOCKED);
}

int
bf_keyconv_other_hashes(BfKeyConv *kc, Datum key, BfHash *hashes)
{
	if (kc->conv != BF_CONV_NONE)
		return 0;
	return bf_key_probe_hashes(&kc->argkt, key, BF_LAYOUT_BLOCKED, hashes);
}

void
bf_keyconv_check_collation(Oid collation, const char *what)
{
	if (OidIsValid(collation) && !get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check %s under the nondeterministic collation \"%s\"",
						what, get_collation_name(collation)),
				 errdetail("Strings equal under a nondeterministic collation can differ in their bytes."),
				 errhint("Check the key under the column's own collation.")));
}

/*
 * The type a text argument had before PostgreSQL cast it to text implicitly
 * to call a text overload (TEXTOID if it was not cast).  A char(n) value has
 * lost its trailing blanks by then, a citext value its case-insensitivity:
 * such a key could disagree with "=".
 */
static Oid
text_arg_source_type(FmgrInfo *flinfo, int argno)
{
	Node	   *expr = flinfo->fn_expr;
	List	   *args;
	Node	   *arg;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return TEXTOID;
	args = ((FuncExpr *) expr)->args;
	if (list_length(args) <= argno)
		return TEXTOID;
	arg = list_nth(args, argno);
	if (IsA(arg, RelabelType) &&
		((RelabelType *) arg)->relabelformat == COERCE_IMPLICIT_CAST)
		return exprType((Node *) ((RelabelType *) arg)->arg);
	if (IsA(arg, FuncExpr) &&
		((FuncExpr *) arg)->funcformat == COERCE_IMPLICIT_CAST &&
		((FuncExpr *) arg)->args != NIL)
		return exprType(linitial(((FuncExpr *) arg)->args));
	if (IsA(arg, CoerceViaIO) &&
		((CoerceViaIO *) arg)->coerceformat == COERCE_IMPLICIT_CAST)
		return exprType((Node *) ((CoerceViaIO *) arg)->arg);
	return TEXTOID;
}

void
bf_keyconv_check_text_arg(FunctionCallInfo fcinfo, int argno, Oid colbase,
						  const char *what)
{
	Oid			source = getBaseType(text_arg_source_type(fcinfo->flinfo, argno));

	if (source != TEXTOID && source != VARCHAROID && source != NAMEOID &&
		source != UNKNOWNOID && source != colbase)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot check a key of type %s against %s through a conversion to text",
						format_type_be(source), what),
				 errdetail("The conversion can change which values are equal (char(n) drops trailing blanks, citext ignores case)."),
				 errhint("Cast the key to the guarded column's type.")));
}

/* The key kind of a type, or BF_KEY_NONE (never an error). */
static int
gate_key_kind(Oid typid, Oid collation)
{
	BfKeyType	kt;

	if (!bf_key_type_usable(typid, collation))
		return BF_KEY_NONE;
	bf_key_type_init(&kt, typid, collation, InvalidOid);
	return kt.kind;
}

/*
 * How a gate hashes a value of type argtype for a column of type coltype
 * (collation colcoll):
 *  - BF_GATE_AS_COLUMN: the value's type compares as the column's (text for
 *    a varchar column): hash it as the column's keys are hashed;
 *  - BF_GATE_AS_KEY: pg_catalog's "=" for (column, value) is a cross-type
 *    operator between types of the same key kind (int8 = int4): hash the
 *    value as it is, whose canonical bytes equal the column's when "=" holds;
 *  - BF_GATE_NONE: anything else (no gate).
 */
BfGateMode
bf_key_gate_mode(Oid coltype, Oid colcoll, Oid argtype)
{
	Oid			colbase = getBaseType(coltype);
	Oid			argbase = getBaseType(argtype);
	Operator	op;
	Form_pg_operator form;
	bool		cross;
	int			colkind;

	colkind = gate_key_kind(coltype, colcoll);
	if (colkind == BF_KEY_NONE)
		return BF_GATE_NONE;
	if (bf_key_compares_as(colbase, argbase))
		return BF_GATE_AS_COLUMN;
	if (gate_key_kind(argtype, colcoll) != colkind)
		return BF_GATE_NONE;
	op = oper(NULL, list_make2(makeString("pg_catalog"), makeString("=")),
			  colbase, argbase, true, -1);
	if (op == NULL)
		return BF_GATE_NONE;
	form = (Form_pg_operator) GETSTRUCT(op);
	cross = bf_key_compares_as(colbase, form->oprleft) &&
		form->oprright == argbase && form->oprleft != form->oprright;
	ReleaseSysCache(op);
	return cross ? BF_GATE_AS_KEY : BF_GATE_NONE;
}
