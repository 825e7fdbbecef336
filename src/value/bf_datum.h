/*
 * bf_datum.h
 *		Opening a bloomfilter datum of any form (bf_datum.c).
 */
#ifndef BF_DATUM_H
#define BF_DATUM_H

#include "postgres.h"

#include "fmgr.h"

#include "value/bf_value_mem.h"

/*
 * Detoast a datum and open it; copy = true gives a private, writable copy,
 * copy = false a value to read only (a sized aggregate's state, which is an
 * expanded object, is read where it is: bf_agg_batch.h).
 */
extern void bf_value_from_datum(Datum d, bool copy, BfValue *v);

#endif							/* BF_DATUM_H */
