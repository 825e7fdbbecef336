/*
 * bf_toast_id.c
 *		Which stored value a TOAST pointer is to: the identity of its
 *		chunk 0 (storage, place, inserting transaction), recorded when the
 *		value is read and compared before a kept copy is used again.
 *
 * A TOAST value id alone is not a safe key across statements: once the
 * value is vacuumed away its id may be given to another (the OID counter
 * wraps around).  bf_chunk_same() below says why the chunk's identity is.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/toast_internals.h"
#include "access/transam.h"
#include "storage/proc.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "cache/bf_cache_int.h"
#include "value/bf_value.h"

/*
 * Fewer xids than this may be assigned between reading a value and using its
 * entry again (half the xid space: see bf_chunk_same()).
 */
#define KEPT_MAX_XIDS			(UINT64CONST(1) << 31)

/*
 * Find chunk 0 of a stored value in its toast relation, dead or alive
 * (SnapshotAny), through the toast index: its tuple's location, raw xmin,
 * whether that is frozen, and whether the tuple is visible to the active
 * snapshot.  False unless there is exactly one.
 */
static bool
chunk_read(const struct varatt_external *toast, BfChunkId *id)
{
	Relation	toastrel;
	Relation   *toastidxs;
	int			nindexes;
	int			valid;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	int			found = 0;
	Snapshot	active = current_snapshot();

	toastrel = table_open(toast->va_toastrelid, AccessShareLock);
	valid = toast_open_indexes(toastrel, AccessShareLock, &toastidxs, &nindexes);
	ScanKeyInit(&key[0], (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(toast->va_valueid));
	ScanKeyInit(&key[1], (AttrNumber) 2, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(0));
	scan = systable_beginscan(toastrel, RelationGetRelid(toastidxs[valid]),
							  true, SnapshotAny, 2, key);
	id->visible = false;
	while ((tup = systable_getnext(scan)) != NULL)
	{
		found++;
		id->tid = tup->t_self;
		id->xmin = HeapTupleHeaderGetRawXmin(tup->t_data);
		id->frozen = HeapTupleHeaderXminFrozen(tup->t_data);
		id->visible = active != NULL &&
			table_tuple_satisfies_snapshot(toastrel, scan->slot, active);
	}
	systable_endscan(scan);
	id->relfilenode = bf_rel_filenumber(toastrel);
	toast_close_indexes(toastidxs, nindexes, AccessShareLock);
	table_close(toastrel, AccessShareLock);
	return found == 1;
}

/* x as a full xid, x at most KEPT_MAX_XIDS older than next; false if not. */
static bool
full_xid(FullTransactionId next, TransactionId x, FullTransactionId *full)
{
	uint32		age = XidFromFullTransactionId(next) - x;

	if (!TransactionIdIsNormal(x) || age >= KEPT_MAX_XIDS ||
		U64FromFullTransactionId(next) < age)
		return false;
	*full = FullTransactionIdFromU64(U64FromFullTransactionId(next) - age);
	return true;
}

/*
 * Identify the stored value just read (chunk 0 and its xids); false if it
 * cannot be checked later, then the entry is not kept past its use.
 */
bool
bf_chunk_identify(const struct varatt_external *toast, BfChunkId *id)
{
	FullTransactionId next;

	if (MyProc == NULL || !TransactionIdIsValid(MyProc->xmin))
		return false;
	if (!chunk_read(toast, id) || !TransactionIdIsNormal(id->xmin))
		return false;
	next = ReadNextFullTransactionId();
	if (!full_xid(next, MyProc->xmin, &id->horizon))
		return false;
	if (!id->frozen && !full_xid(next, id->xmin, &id->fxmin))
		return false;
	return true;
}

/*
 * Whether the stored value a kept entry copied is still the one with its
 * TOAST pointer.  A pointer from a row this statement sees is to a value
 * that exists now, so its chunk 0 is found (only one: a value id is given
 * only when no tuple of the toast relation has it).  If that is the tuple
 * the entry recorded, the value is the one copied: chunks are never changed
 * in place, and a tuple at the same place in the same storage with the same
 * raw xmin is the same tuple, unless a transaction with a xid equal modulo
 * 2^32 inserted it after the entry's value was removed.  Such a transaction
 * ran between the read and now, so its xid lies between the oldest xid then
 * possibly running (the backend's xmin) and the next xid now.  It cannot be
 * the transaction that inserted the value (a transaction never sees its own
 * rows removed while it runs), and no other xid in that span equals it
 * modulo 2^32 if fewer than 2^31 xids were assigned since it (not frozen
 * when read: its full xid is known); for a frozen xmin, if the span holds
 * no xid equal to it modulo 2^32.
 */
bool
bf_chunk_same(const struct varatt_external *toast, const BfChunkId *was,
			  bool *visible)
{
	BfChunkId	now;
	FullTransactionId next;
	uint64		span;

	if (!chunk_read(toast, &now))
		return false;
	*visible = now.visible;
	next = ReadNextFullTransactionId();		/* after the chunk was found */
	if (now.relfilenode != was->relfilenode ||
		!ItemPointerEquals(&now.tid, (ItemPointer) &was->tid) ||
		now.xmin != was->xmin)
		return false;
	if (!was->frozen &&
		U64FromFullTransactionId(next) - U64FromFullTransactionId(was->fxmin) < KEPT_MAX_XIDS)
		return true;
	span = U64FromFullTransactionId(next) - U64FromFullTransactionId(was->horizon);
	return span < KEPT_MAX_XIDS &&
		(uint32) (was->xmin - XidFromFullTransactionId(was->horizon)) >= span;
}
