/*
 * bf_cache.c
 *		Per-call-site state: key type and detoasted-filter cache.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "utils/memutils.h"

#include "bf_cache.h"

BfCallSite *
bf_call_site(FunctionCallInfo fcinfo)
{
	BfCallSite *site = (BfCallSite *) fcinfo->flinfo->fn_extra;

	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfCallSite));
		fcinfo->flinfo->fn_extra = site;
	}
	return site;
}

const BfKeyType *
bf_call_site_key(FunctionCallInfo fcinfo, BfCallSite *site, Oid keytype,
				 int filter_argno)
{
	Oid			collation = PG_GET_COLLATION();

	if (site->key.typid != keytype || site->key.collation != collation)
	{
		Oid			filter_typid = get_fn_expr_argtype(fcinfo->flinfo, filter_argno);

		/* reset first: a failed init must not leave a half-set entry */
		site->key.typid = InvalidOid;
		bf_key_type_init(&site->key, keytype, collation, filter_typid);
	}
	return &site->key;
}

void
bf_call_site_value(FunctionCallInfo fcinfo, BfCallSite *site, int argno,
				   BfValue *v)
{
	Datum		d = PG_GETARG_DATUM(argno);
	struct varlena *ptr = (struct varlena *) DatumGetPointer(d);
	struct varatt_external toast;
	MemoryContext oldcxt;
	struct varlena *raw;

	/* A value in memory or inline in its row costs nothing to open. */
	if (!VARATT_IS_EXTERNAL_ONDISK(ptr))
	{
		bf_value_from_datum(d, false, v);
		return;
	}

	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	if (site->have_value && memcmp(&toast, &site->toast, sizeof(toast)) == 0)
	{
		*v = site->value;
		return;
	}

	/* Replace the cached copy. */
	if (site->have_value)
	{
		site->have_value = false;
		pfree(site->value.raw);
	}
	oldcxt = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	raw = detoast_attr(ptr);
	MemoryContextSwitchTo(oldcxt);
	bf_value_open(raw, &site->value);
	site->toast = toast;
	site->have_value = true;
	*v = site->value;
}
