/*
 * bloomfilter.c
 *		Module magic and initialization of the bloomfilter extension.
 *
 * The SQL-visible functions live in bf_io.c (I/O), bf_ops.c (functions and
 * operators) and bf_agg.c (aggregates); the PostgreSQL-free core in core/;
 * the shared tier (server-resident filters) in shared/.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* src/shared/bf_registry.c (the value tier includes nothing from shared/) */
extern void bf_shared_init(void);

void
_PG_init(void)
{
	/*
	 * The shared tier needs shared memory, GUCs and a launcher registered at
	 * server start.  Loaded any other way, only the value tier is available
	 * and the shared functions raise an error with a hint.
	 */
	if (process_shared_preload_libraries_in_progress)
		bf_shared_init();
}
