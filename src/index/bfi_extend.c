/*
 * bfi_extend.c
 *		New pages of a guard index: one at a time through the buffer manager
 *		(the build, the init fork), or a whole layer at once (growth).
 */
#include "postgres.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "index/bf_index.h"

/* A new page at the end of a fork, pinned and locked exclusively. */
Buffer
bfi_new_buffer(Relation index, ForkNumber fork)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(index), fork, NULL, EB_LOCK_FIRST);
#else
	Buffer		buf;
	bool		local = RELATION_IS_LOCAL(index);

	if (!local)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);
	if (!local)
		UnlockRelationForExtension(index, ExclusiveLock);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	return buf;
#endif
}

/*
 * Extend the main fork to nblocks pages for a new layer, the caller holding
 * the metapage exclusively (only a growth extends a built guard).  As hash
 * indexes allocate bucket pages: only the last page is written and
 * WAL-logged (an empty data page), so that redo extends the file to it; the
 * pages before it read as new (all zero) pages, which hold no key, until a
 * key is set on them.  A relation already that long (a growth that extended
 * it before a crash, its metapage not updated) is left as it is: its pages
 * past the last layer were never written, or are empty.
 */
void
bfi_extend_to(Relation index, BlockNumber nblocks)
{
	PGAlignedBlock zerobuf;
	Page		page = (Page) zerobuf.data;
	BlockNumber last = nblocks - 1;

	if (nblocks <= RelationGetNumberOfBlocks(index))
		return;
	bfi_data_page_init(page);
	if (RelationNeedsWAL(index))
	{
#if PG_VERSION_NUM >= 160000
		log_newpage(&index->rd_locator, MAIN_FORKNUM, last, page, true);
#else
		log_newpage(&index->rd_node, MAIN_FORKNUM, last, page, true);
#endif
	}
	PageSetChecksumInplace(page, last);
	smgrextend(RelationGetSmgr(index), MAIN_FORKNUM, last, zerobuf.data, false);
}
