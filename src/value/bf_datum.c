/*
 * bf_datum.c
 *		A bloomfilter datum of any form opened as a value: a sized
 *		aggregate's batched state where it is, anything else detoasted.
 *
 * Above bf_value.c (a detoasted value) and bf_agg_batch.c (the batched
 * state, a value with key hashes pending, made by bf_value.c): the one file
 * of the folder that knows both forms.
 */
#include "postgres.h"

#include "fmgr.h"

#include "value/bf_agg_batch.h"
#include "value/bf_datum.h"
#include "value/bf_value_mem.h"

void
bf_value_from_datum(Datum d, bool copy, BfValue *v)
{
	struct varlena *raw;

	/* an aggregate's state is read where it is */
	if (!copy && bf_agg_batch_open(d, v))
		return;

	if (copy)
		raw = PG_DETOAST_DATUM_COPY(d);
	else
		raw = PG_DETOAST_DATUM(d);
	bf_value_open(raw, v);
}
