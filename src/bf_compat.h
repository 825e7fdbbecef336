/*
 * bf_compat.h
 *		Differences between the PostgreSQL major versions the extension
 *		builds against (15 to 18), in one place.  Include it after
 *		postgres.h.  Only value-tier and core-free headers here: it must not
 *		include anything of src/shared/.
 */
#ifndef BF_COMPAT_H
#define BF_COMPAT_H

#include "postgres.h"

/*
 * PostgreSQL 16 moved the varlena macros and structs (VARDATA, VARSIZE,
 * SET_VARSIZE, VARATT_IS_*, varattrib_1b_e, struct varatt_external) out of
 * postgres.h into varatt.h.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#endif							/* BF_COMPAT_H */
