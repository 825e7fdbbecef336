/*
 * bfp_batch_scan.c
 *		The BloomBatch executor node: a sequential scan's check of a large
 *		filter, with the filter's lines of a batch of rows loaded before
 *		their checks.
 *
 * The node (planned by bfp_batch_path.c) has two children, both the scan:
 * the reader, which only reads the columns the node needs, and the plain
 * scan, with its conditions as planned.  The node holds the conditions, all
 * of them in their order, and the projection.  Before it returns a row of a
 * scan (or rescan) it chooses the child, once the filter can be seen without
 * evaluating anything the scan would not (a constant, a parameter, an
 * InitPlan's output once computed, or the check being the first condition
 * of a row that was read): a filter smaller than BATCH_MIN_FILTER_BYTES (in
 * the caches anyway), or NULL, makes it return the plain scan's rows, whose
 * conditions the scan itself evaluates: the cost of the plan without the
 * node but for a call per row returned.  (As for AlternativeSubPlan, the
 * plan chosen at run time; the choice depends on the filter's size alone,
 * so every process of a parallel scan makes the same one, and reads the
 * same child.)  Otherwise it reads BATCH_ROWS
 * rows from the scan, copies them, prefetches the filter line each key's
 * check will read (bf_contains_prefetch: the filter's cached copy, hashes as
 * the check computes them), and then takes the rows one by one through the
 * conditions, the unchanged check among them, and the projection: the
 * answers are the checks' own, and the lines they read have arrived
 * meanwhile.
 *
 * Reading ahead runs no code of the query: the scan below has no condition
 * and no expression to evaluate, so a row the node never reaches (past a
 * LIMIT) costs a read and a copy, never a function call.  The prefetch
 * reads no stored value, evaluates the filter argument only once a check has
 * (an InitPlan's output is never computed for it), and raises no error: the
 * key's type is one the check accepts (planned only then).  After scans
 * too short to pay for the copies, for a backward scan, in an EvalPlanQual
 * recheck and where the filter argument could fail to evaluate, the plain
 * scan's rows are returned.  Where the reader has been read (a filter seen
 * only in a batch: another condition comes first and its InitPlan had not
 * run), a filter found small, NULL, empty or not prefetchable makes rows
 * pass through one at a time without a copy; so do pauses while batches
 * find nothing to prefetch (IDLE_BATCHES).
 *
 * Each row keeps its TID in the scan slot, and the node scans the
 * children's relation, for WHERE CURRENT OF (bfp_position.c).
 */
#include "postgres.h"

#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "cache/bf_cache.h"
#include "plan/bf_plan.h"

/* Rows read ahead: their lines in flight at once, and a level 1 cache's. */
#define BATCH_ROWS				32

/* Smaller filters stay in the caches: rows pass through. */
#define BATCH_MIN_FILTER_BYTES	((Size) 2 * 1024 * 1024)

/* A scan (between rescans) of fewer rows makes the later ones pass through */
#define SHORT_SCAN_ROWS			(4 * BATCH_ROWS)

/*
 * A batch with nothing to prefetch (its keys NULL or stored out of line, or
 * the filter not seen yet: an InitPlan's output no check has needed, a
 * stored filter that the checks still read in slices, or never read whole,
 * as an empty one) copies its rows for nothing.  After IDLE_BATCHES of them
 * in a row, rows pass through for a pause, then batching tries again; each
 * pause is twice the last, from PAUSE_MIN_ROWS to PAUSE_MAX_ROWS rows, until
 * a batch prefetches.  So a scan that never prefetches copies 256 rows per
 * pause, and one whose keys come later loses at most a pause of prefetches.
 * A rescan starts over (its parameters may give another filter).
 */
#define IDLE_BATCHES			8
#define PAUSE_MIN_ROWS			1024
#define PAUSE_MAX_ROWS			65536

/* Which child a scan's rows come from */
typedef enum BatchMode
{
	MODE_UNDECIDED,				/* no row returned since the (re)scan began */
	MODE_READER,				/* the reader's, batched or passing through */
	MODE_PLAIN					/* the plain scan's, its conditions applied */
} BatchMode;

typedef struct BatchScanState
{
	CustomScanState css;
	PlanState  *reader;			/* the scan reading only */
	PlanState  *plain;			/* the scan with its conditions, or NULL */
	BatchMode	mode;
	TupleTableSlot *first;		/* a row the reader returned to see the
								 * filter, not yet taken, or NULL */
	int			checkno;		/* the check's position among the conditions */
	ExprState  *filter;			/* the filter argument */
	int			filter_param;	/* its PARAM_EXEC number, or -1 */
	FunctionCallInfo fcinfo;	/* the check's call, for the prefetches */
	int			filter_argno;
	int			key_argno;
	bool		literal;		/* the key is a bloom_literal */
	AttrNumber	keyatt;			/* the key's attribute in the scan tuple */
	bool		batching;		/* false: rows pass through */
	bool		exhausted;		/* the scan returned its last row */
	bool		short_scans;	/* a scan read too few rows to batch */
	bool		unsafe_filter;	/* the filter argument's parameter could
								 * fail to evaluate: never prefetched */
	uint64		rows_read;		/* read since the last (re)scan */
	int			idle_batches;	/* in a row, with nothing to prefetch */
	uint64		pause_rows;		/* left to pass through before a batch tries
								 * again; 0: batching stopped for the scan */
	uint64		next_pause;
	uint64		rows_batched;	/* EXPLAIN ANALYZE: rows copied into batches */
	uint64		keys_prefetched;	/* and keys whose line was prefetched */
	int16		keylen;			/* the key's typlen */
	int			natts;
	int			nrows;			/* rows in the batch */
	int			next;			/* the next one to return */
	Datum	   *values;			/* BATCH_ROWS x natts */
	bool	   *isnull;
	ItemPointerData *tids;		/* BATCH_ROWS: the rows' positions */
	ScanState  *position;		/* the reader's scan, for the rows' positions
								 * (bfp_position.c), or NULL */
	ScanState  *plain_position; /* and the plain scan's */
	MemoryContext batch_cxt;	/* the batch's by-reference values */
} BatchScanState;

static Node *batch_create_state(CustomScan *cscan);
static void batch_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *batch_exec(CustomScanState *node);
static void batch_end(CustomScanState *node);
static void batch_rescan(CustomScanState *node);
static void batch_explain(CustomScanState *node, List *ancestors,
						  ExplainState *es);

static const CustomScanMethods batch_scan_methods = {
	.CustomName = "BloomBatch",
	.CreateCustomScanState = batch_create_state,
};

static const CustomExecMethods batch_exec_methods = {
	.CustomName = "BloomBatch",
	.BeginCustomScan = batch_begin,
	.ExecCustomScan = batch_exec,
	.EndCustomScan = batch_end,
	.ReScanCustomScan = batch_rescan,
	.ExplainCustomScan = batch_explain,
};

/* Is this plan a BloomBatch node? */
bool
bfp_is_batch_scan(const CustomScan *cscan)
{
	return cscan->methods == &batch_scan_methods;
}

void
bfp_batch_scan_init(void)
{
	RegisterCustomScanMethods(&batch_scan_methods);
}

/*
 * The node over scan: its conditions qual (check->qualno of them the check
 * it batches) and output tlist read the scan's output scan_tlist, which
 * setrefs.c makes them read as the node's scan tuple.  The scan is left
 * reading only; a copy of it as it was, but for its output (scan_tlist), is
 * the plain scan.  check->qualno -1: no check to batch, the scan keeps its
 * conditions and output (scan_tlist), and rows pass through.  No backward
 * scan (cursors' plans get no node): a portal that says neither SCROLL nor NO SCROLL, as PL/pgSQL's FOR loop over a
 * query, then stays forward-only, and batched.
 */
Plan *
bfp_make_batch_scan(List *tlist, List *qual, const BfpBatchCheck *check,
					List *scan_tlist, Plan *scan, Bitmapset *relids)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = qual;
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cscan->custom_plans = list_make1(scan);
	if (check->qualno >= 0)
	{
		/* the plain scan: its conditions, and the reader's output */
		Plan	   *plain = copyObject(scan);

		plain->targetlist = copyObject(scan_tlist);
		cscan->custom_plans = lappend(cscan->custom_plans, plain);
	}
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_make5(makeInteger(check->qualno),
									   makeInteger(check->filter_argno),
									   makeInteger(check->key_argno),
									   makeInteger(check->literal ? 1 : 0),
									   makeInteger(check->keyresno));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = bms_copy(relids);
	cscan->methods = &batch_scan_methods;
	if (check->qualno >= 0)
	{
		scan->qual = NIL;
		scan->targetlist = copyObject(scan_tlist);
	}
	return (Plan *) cscan;
}

/* ---------------------------------------------------------------------
 * The executor node
 * ---------------------------------------------------------------------
 */

static Node *
batch_create_state(CustomScan *cscan)
{
	BatchScanState *b = (BatchScanState *) newNode(sizeof(BatchScanState),
												   T_CustomScanState);

	b->css.methods = &batch_exec_methods;
	return (Node *) b;
}

static void
batch_begin(CustomScanState *node, EState *estate, int eflags)
{
	BatchScanState *b = (BatchScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *ps = &node->ss.ps;
	PlanState  *child;
	Node	   *check;
	FmgrInfo   *flinfo;
	Oid			funcid;
	List	   *args;
	Oid			collation;

	child = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(child);
	b->reader = child;
	b->mode = MODE_READER;
	b->natts = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;
	if (bfp_plan_has_position(linitial(cscan->custom_plans)))
	{
		b->position = bfp_position_scan(child);
		node->ss.ss_currentRelation = b->position->ss_currentRelation;
		node->ss.ss_ScanTupleSlot->tts_tableOid =
			RelationGetRelid(node->ss.ss_currentRelation);
	}
	if (intVal(linitial(cscan->custom_private)) < 0)
		return;					/* nothing to batch: rows pass through */

	b->plain = ExecInitNode(lsecond(cscan->custom_plans), estate, eflags);
	node->custom_ps = lappend(node->custom_ps, b->plain);
	if (b->position != NULL)
		b->plain_position = bfp_position_scan(b->plain);
	b->mode = MODE_UNDECIDED;

	b->checkno = intVal(linitial(cscan->custom_private));
	check = list_nth(cscan->scan.plan.qual, b->checkno);
	b->filter_argno = intVal(lsecond(cscan->custom_private));
	b->key_argno = intVal(lthird(cscan->custom_private));
	b->literal = intVal(lfourth(cscan->custom_private)) != 0;
	b->keyatt = (AttrNumber) intVal(list_nth(cscan->custom_private, 4));

	if (!bfp_call_parts(check, &funcid, &args, &collation))
		elog(ERROR, "BloomBatch condition %d is not a call",
			 intVal(linitial(cscan->custom_private)));
	b->filter = ExecInitExpr(list_nth(args, b->filter_argno), ps);
	b->filter_param = -1;
	if (IsA(list_nth(args, b->filter_argno), Param) &&
		((Param *) list_nth(args, b->filter_argno))->paramkind == PARAM_EXEC)
		b->filter_param = ((Param *) list_nth(args, b->filter_argno))->paramid;

	/* a call of its own (its call site), as the check's */
	flinfo = palloc0(sizeof(FmgrInfo));
	fmgr_info(funcid, flinfo);
	fmgr_info_set_expr(check, flinfo);
	b->fcinfo = palloc0(SizeForFunctionCallInfo(2));
	InitFunctionCallInfoData(*b->fcinfo, flinfo, 2, collation, NULL, NULL);

	/*
	 * The rows of a backward scan or a recheck pass through, and all rows
	 * when reading the filter argument could fail (a PL/pgSQL record's
	 * field): the prefetch would read it before any check does.
	 */
	b->unsafe_filter = !bfp_params_safe(list_nth(args, b->filter_argno),
										estate->es_param_list_info);
	b->batching = (eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_EXPLAIN_ONLY)) == 0 &&
		estate->es_epq_active == NULL && !b->unsafe_filter;
	b->next_pause = PAUSE_MIN_ROWS;
	Assert(b->keyatt >= 1 && b->keyatt <= b->natts);
	b->keylen = TupleDescAttr(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
							  b->keyatt - 1)->attlen;
	if (b->batching)
	{
		b->values = palloc(sizeof(Datum) * BATCH_ROWS * b->natts);
		b->isnull = palloc(sizeof(bool) * BATCH_ROWS * b->natts);
		b->tids = palloc(sizeof(ItemPointerData) * BATCH_ROWS);
		b->batch_cxt = AllocSetContextCreate(estate->es_query_cxt,
											 "BloomBatch rows",
											 ALLOCSET_DEFAULT_SIZES);
	}
}

/* A batch's row in the scan slot, as a virtual tuple. */
static TupleTableSlot *
batch_row(BatchScanState *b, int i)
{
	TupleTableSlot *slot = b->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, b->values + i * b->natts, sizeof(Datum) * b->natts);
	memcpy(slot->tts_isnull, b->isnull + i * b->natts, sizeof(bool) * b->natts);
	ExecStoreVirtualTuple(slot);
	slot->tts_tid = b->tids[i];
	return slot;
}

/*
 * A row passing through: the child's values in the scan slot, as a virtual
 * tuple that points into the child's (valid until the child is read again),
 * the scan tuple the node's expressions were compiled for.
 */
static TupleTableSlot *
pass_row(BatchScanState *b, TupleTableSlot *child_slot, ScanState *position)
{
	TupleTableSlot *slot = b->css.ss.ss_ScanTupleSlot;

	slot_getallattrs(child_slot);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, child_slot->tts_values, sizeof(Datum) * b->natts);
	memcpy(slot->tts_isnull, child_slot->tts_isnull, sizeof(bool) * b->natts);
	ExecStoreVirtualTuple(slot);
	if (position == NULL || !bfp_position_tid(position, &slot->tts_tid))
		ItemPointerSetInvalid(&slot->tts_tid);
	return slot;
}

/* The reader's next row: the one read to see the filter first. */
static TupleTableSlot *
reader_next(BatchScanState *b)
{
	TupleTableSlot *slot = b->first;

	b->first = NULL;
	return slot != NULL ? slot : ExecProcNode(b->reader);
}

/*
 * Choose the child of a scan, before it returns a row: the plain scan for a
 * filter smaller than BATCH_MIN_FILTER_BYTES or NULL, and wherever batching
 * is off.  The filter is evaluated only where the scan without the node
 * would evaluate it too: it is not an InitPlan's output still to compute,
 * or the check is the first condition and the reader returned a row (the
 * first row's check computes it), which is then the first row batched.
 * Else the reader: the batches see the filter.
 */
static void
choose_child(BatchScanState *b)
{
	ExprContext *econtext = b->css.ss.ps.ps_ExprContext;
	MemoryContext oldcxt;
	Datum		filter;
	bool		isnull;
	bool		small;

	b->mode = MODE_PLAIN;
	if (!b->batching)
		return;
	b->mode = MODE_READER;
	if (b->filter_param >= 0 &&
		econtext->ecxt_param_exec_vals[b->filter_param].execPlan != NULL)
	{
		if (b->checkno != 0)
			return;
		b->first = ExecProcNode(b->reader);
		if (TupIsNull(b->first))
		{
			b->first = NULL;
			b->exhausted = true;
			return;
		}
	}
	ResetExprContext(econtext);
	oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	filter = ExecEvalExpr(b->filter, econtext, &isnull);
	small = isnull || bf_filter_datum_bytes(filter) < BATCH_MIN_FILTER_BYTES;
	MemoryContextSwitchTo(oldcxt);
	if (small)
	{
		b->mode = MODE_PLAIN;
		b->first = NULL;
	}
}

/*
 * The plain scan's next row, its conditions applied, projected.  The row is
 * copied into the scan slot for the projection and for WHERE CURRENT OF.
 */
static TupleTableSlot *
plain_exec(BatchScanState *b)
{
	ExprContext *econtext = b->css.ss.ps.ps_ExprContext;
	ProjectionInfo *proj = b->css.ss.ps.ps_ProjInfo;
	TupleTableSlot *slot = ExecProcNode(b->plain);

	if (TupIsNull(slot))
	{
		ExecClearTuple(b->css.ss.ss_ScanTupleSlot);
		return proj != NULL ? ExecClearTuple(proj->pi_state.resultslot) : NULL;
	}
	slot = pass_row(b, slot, b->plain_position);
	if (proj == NULL)
		return slot;
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = slot;
	return ExecProject(proj);
}

/*
 * Prefetch the filter's lines of the batch's keys; once the filter is seen,
 * stop batching if it is NULL, empty, small or cannot be prefetched, and
 * pause after IDLE_BATCHES batches that prefetched nothing.  Keys stored out
 * of line or compressed are not prefetched (that would read them twice),
 * and a batch without a key asks nothing (a check is never called for a
 * NULL key, so its key type is not resolved for one either).
 */
static void
prefetch_batch(BatchScanState *b)
{
	ExprContext *econtext = b->css.ss.ps.ps_ExprContext;
	FunctionCallInfo fcinfo = b->fcinfo;
	MemoryContext oldcxt;
	Datum		keys[BATCH_ROWS];
	bool		skip[BATCH_ROWS];
	int			nkeys = 0;
	BfPrefetch	done;
	Size		bytes = 0;
	bool		isnull;

	for (int i = 0; i < b->nrows; i++)
	{
		int			at = i * b->natts + b->keyatt - 1;

		keys[i] = b->values[at];
		skip[i] = b->isnull[at] ||
			(b->keylen == -1 &&
			 (VARATT_IS_EXTERNAL(DatumGetPointer(keys[i])) ||
			  VARATT_IS_COMPRESSED(DatumGetPointer(keys[i]))));
		nkeys += !skip[i];
	}
	/*
	 * An InitPlan's output is computed when a check first needs it: never
	 * here (the scan's earlier conditions may reject every row).
	 */
	if (nkeys == 0 ||
		(b->filter_param >= 0 &&
		 econtext->ecxt_param_exec_vals[b->filter_param].execPlan != NULL))
		done = BF_PREFETCH_LATER;
	else
	{
		ResetExprContext(econtext);
		oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		fcinfo->args[b->filter_argno].value = ExecEvalExpr(b->filter, econtext,
														   &isnull);
		fcinfo->args[b->filter_argno].isnull = isnull;
		/* a NULL filter stays NULL until a rescan: the checks give NULL */
		done = isnull ? BF_PREFETCH_NEVER :
			bf_contains_prefetch(fcinfo, b->filter_argno, b->key_argno,
								 b->literal, keys, skip, b->nrows, 1, &bytes);
		MemoryContextSwitchTo(oldcxt);
	}

	if (done == BF_PREFETCH_DONE)
	{
		b->keys_prefetched += nkeys;
		b->idle_batches = 0;
		b->next_pause = PAUSE_MIN_ROWS;
	}
	if (done == BF_PREFETCH_NEVER ||
		(done == BF_PREFETCH_DONE && bytes < BATCH_MIN_FILTER_BYTES))
	{
		b->batching = false;
		b->pause_rows = 0;
	}
	else if (done == BF_PREFETCH_LATER && ++b->idle_batches >= IDLE_BATCHES)
	{
		b->batching = false;
		b->pause_rows = b->next_pause;
		b->next_pause = Min(b->next_pause * 2, PAUSE_MAX_ROWS);
		b->idle_batches = 0;
	}
}

/* Read the next batch of rows from the child; false if there is none. */
static bool
read_batch(BatchScanState *b)
{
	TupleDesc	desc = b->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	MemoryContext oldcxt;

	b->nrows = 0;
	b->next = 0;
	MemoryContextReset(b->batch_cxt);
	while (b->nrows < BATCH_ROWS && !b->exhausted)
	{
		TupleTableSlot *slot = reader_next(b);
		Datum	   *values = b->values + b->nrows * b->natts;
		bool	   *isnull = b->isnull + b->nrows * b->natts;

		if (TupIsNull(slot))
		{
			b->exhausted = true;
			break;
		}
		slot_getallattrs(slot);
		oldcxt = MemoryContextSwitchTo(b->batch_cxt);
		for (int i = 0; i < b->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			isnull[i] = slot->tts_isnull[i];
			values[i] = isnull[i] ? (Datum) 0 :
				datumCopy(slot->tts_values[i], att->attbyval, att->attlen);
		}
		MemoryContextSwitchTo(oldcxt);
		if (b->position == NULL ||
			!bfp_position_tid(b->position, &b->tids[b->nrows]))
			ItemPointerSetInvalid(&b->tids[b->nrows]);
		b->nrows++;
	}
	b->rows_read += b->nrows;
	b->rows_batched += b->nrows;
	if (b->nrows == 0)
		return false;
	prefetch_batch(b);
	return true;
}

/* The next row for the conditions: a batch's, or the child's own slot. */
static TupleTableSlot *
batch_next(BatchScanState *b)
{
	TupleTableSlot *slot;

	if (b->next < b->nrows)
		return batch_row(b, b->next++);
	if (!b->batching)
	{
		/* a scan that ended (in a batch, or passing through) stays ended */
		if (b->exhausted)
			return NULL;
		slot = reader_next(b);
		if (TupIsNull(slot))
		{
			b->exhausted = true;
			return NULL;
		}
		b->rows_read++;
		/* after a pause's last row, batches try again */
		if (b->pause_rows > 0 && --b->pause_rows == 0)
			b->batching = true;
		return pass_row(b, slot, b->position);
	}
	if (!read_batch(b))
		return NULL;
	b->next = 1;
	return batch_row(b, 0);
}

/*
 * The next row passing the check, projected.  (Not ExecScan: in an
 * EvalPlanQual recheck it would not read the child.)
 */
static TupleTableSlot *
batch_exec(CustomScanState *node)
{
	BatchScanState *b = (BatchScanState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ExprState  *qual = node->ss.ps.qual;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	if (b->mode == MODE_UNDECIDED)
		choose_child(b);
	if (b->mode == MODE_PLAIN)
		return plain_exec(b);
	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		slot = batch_next(b);
		if (slot == NULL)
		{
			ExecClearTuple(node->ss.ss_ScanTupleSlot);
			return proj != NULL ? ExecClearTuple(proj->pi_state.resultslot) : NULL;
		}
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (ExecQual(qual, econtext))
			return proj != NULL ? ExecProject(proj) : slot;
		InstrCountFiltered1(node, 1);
	}
}

static void
batch_end(CustomScanState *node)
{
	ListCell   *lc;

	foreach(lc, node->custom_ps)
		ExecEndNode(lfirst(lc));
}

/*
 * Rescans start batching again, unless a scan ran to its end having read so
 * few rows that copying them cannot pay (an inner scan of a nested loop over
 * a small table): then rows pass through for the rest of the execution.  (A
 * scan stopped early, by a LIMIT or a semi-join, says nothing; a nested loop
 * rescans its inner side before its first row, too.)
 */
static void
batch_rescan(CustomScanState *node)
{
	BatchScanState *b = (BatchScanState *) node;
	ListCell   *lc;

	if (b->batch_cxt != NULL && b->exhausted && b->rows_read < SHORT_SCAN_ROWS)
		b->short_scans = true;
	b->nrows = 0;
	b->next = 0;
	b->rows_read = 0;
	b->idle_batches = 0;
	b->pause_rows = 0;
	b->next_pause = PAUSE_MIN_ROWS;
	b->exhausted = false;
	b->batching = b->batch_cxt != NULL && !b->short_scans && !b->unsafe_filter;
	b->first = NULL;
	b->mode = b->plain != NULL ? MODE_UNDECIDED : MODE_READER;
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	foreach(lc, node->custom_ps)
	{
		PlanState  *child = lfirst(lc);

		if (node->ss.ps.chgParam != NULL)
			UpdateChangedParamSet(child, node->ss.ps.chgParam);
		if (child->chgParam == NULL)
			ExecReScan(child);
	}
}

/*
 * EXPLAIN ANALYZE: the rows this process copied into batches (the others
 * passed through) and the keys among them whose filter line it prefetched,
 * over all the node's loops.
 */
static void
batch_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BatchScanState *b = (BatchScanState *) node;

	if (!es->analyze)
		return;
	ExplainPropertyUInteger("Rows Batched", NULL, b->rows_batched, es);
	ExplainPropertyUInteger("Keys Prefetched", NULL, b->keys_prefetched, es);
}
