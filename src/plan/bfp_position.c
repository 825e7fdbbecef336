/*
 * bfp_position.c
 *		The current row of a BloomGuard or BloomBatch node, for WHERE CURRENT
 *		OF.
 *
 * A cursor's UPDATE or DELETE ... WHERE CURRENT OF finds the cursor's row
 * in the plan's scan of the table (execCurrent.c): a scan node whose
 * ss_currentRelation is the table, and the TID of the row in its scan
 * slot.  It does not look below a custom scan, whose rows it cannot relate
 * to its children's; so both nodes, which return the rows of one scan of
 * one relation, say which relation they scan and give the row they return
 * its TID, as the scan itself does.  A plan with a gate or a BloomBatch is
 * then as updatable through a cursor as the plan without: also through a
 * named portal of the extended protocol, whose plan the planner cannot
 * tell from any other.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"

#include "plan/bf_plan.h"

/*
 * Does plan return the rows of one relation's scan, with their positions?
 * A gating Result returns its input's rows, as execCurrent.c assumes too.
 */
bool
bfp_plan_has_position(Plan *plan)
{
	while (plan != NULL && IsA(plan, Result))
		plan = outerPlan(plan);
	if (plan == NULL)
		return false;
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
			return true;
		case T_CustomScan:
			return bfp_is_batch_scan((CustomScan *) plan) &&
				bfp_plan_has_position(linitial(((CustomScan *) plan)->custom_plans));
		default:
			return false;
	}
}

/*
 * The scan node under child (initialized from a plan that has positions)
 * whose current row is child's.
 */
ScanState *
bfp_position_scan(PlanState *child)
{
	while (child != NULL && IsA(child, ResultState))
		child = outerPlanState(child);
	if (child == NULL || !bfp_plan_has_position(child->plan))
		elog(ERROR, "BloomBatch or BloomGuard child without row positions");
	return (ScanState *) child;
}

/* The TID of scan's current row; false if it is on none. */
bool
bfp_position_tid(ScanState *scan, ItemPointer tid)
{
	if (TupIsNull(scan->ss_ScanTupleSlot))
		return false;
	if (IsA(scan, IndexOnlyScanState))
	{
		/* its scan tuple may be the index's: the heap's TID is here */
		IndexScanDesc desc = ((IndexOnlyScanState *) scan)->ioss_ScanDesc;

		if (desc == NULL)
			return false;
		*tid = desc->xs_heaptid;
	}
	else
		*tid = scan->ss_ScanTupleSlot->tts_tid;
	return ItemPointerIsValid(tid);
}
