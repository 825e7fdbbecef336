/*
 * bloomfilter.c
 *		Module magic and initialization of the bloomfilter extension.
 *
 * The SQL-visible functions live in bf_io.c (I/O), bf_ops.c (functions and
 * operators) and bf_agg.c (aggregates); the PostgreSQL-free core in core/;
 * the guard index in index/, the planner's gates and BloomBatch in plan/.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "cache/bf_cache.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* src/index/bfi_handler.c */
extern void bfi_init(void);

/* src/plan/bfp_hook.c */
extern void bfp_init(void);

/* src/bf_agg_auto.c */
extern int	bf_agg_max_distinct;

void
_PG_init(void)
{
	DefineCustomIntVariable("bloomfilter.agg_max_distinct",
							"Most distinct keys a bloom_agg without a capacity accepts per group.",
							"Such a build keeps 8 bytes per distinct key (up to 16 while it runs); past this many it fails with program_limit_exceeded.",
							&bf_agg_max_distinct,
							100000000, 1, 100000000,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	bf_cache_init();
	bfi_init();

	/*
	 * The planner hooks of the gates and BloomBatch last, so that their
	 * planner_hook is the outermost (it must see every planning, to know a
	 * cursor's).
	 */
	bfp_init();

	/*
	 * Only now is every GUC of the library defined: reserving the prefix
	 * earlier would drop a setting of a later one (planner_guards in
	 * postgresql.conf, ALTER SYSTEM or -c) as a misspelled placeholder.
	 */
	MarkGUCPrefixReserved("bloomfilter");
}
