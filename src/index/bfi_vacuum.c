/*
 * bfi_vacuum.c
 *		VACUUM of a guard index.
 *
 * A guard holds no tuple identifiers, so there is nothing to delete: a key
 * whose rows are all gone stays in the filter (a false positive, never a
 * false negative) until the guard is built again.  VACUUM's cleanup does
 * that when the guard holds at least twice as many keys as the table has
 * rows (bfi_rebuild.c), and reports the guard's size and the keys set in
 * it.
 */
#include "postgres.h"

#include "commands/vacuum.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "index/bf_index.h"

IndexBulkDeleteResult *
bfi_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			   IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	return stats;
}

IndexBulkDeleteResult *
bfi_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	BfiSummary *sum;
	uint64		added = 0;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	sum = palloc(sizeof(BfiSummary));
	bfi_meta_read(info->index, &sum->meta);
	bfi_summarize(info->index, sum, NULL);
	for (uint32 i = 0; i < sum->meta.nlayers; i++)
		added += sum->added[i];
	pfree(sum);
	added = bfi_rebuild_if_needed(info, added);
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->num_index_tuples = (double) added;
	stats->estimated_count = true;
	return stats;
}
