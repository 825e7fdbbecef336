/*
 * bloomfilter.c
 *		Module magic and initialization of the bloomfilter extension.
 *
 * The SQL-visible functions live in bf_io.c (I/O), bf_ops.c (functions and
 * operators) and bf_agg.c (aggregates); the PostgreSQL-free core in core/.
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	/* nothing yet: the value tier needs no shared state */
}
