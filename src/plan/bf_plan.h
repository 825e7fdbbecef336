/*
 * bf_plan.h
 *		The planner's gates on guard indexes: where a scan's condition
 *		compares a guarded column with a value known before the scan, the
 *		scan's paths are wrapped in a BloomGuard path that checks the guard
 *		index first and skips the scan when it answers "no".
 *
 * Files: bfp_hook.c (the planner hooks and the GUC), bfp_clause.c (which
 * clauses a gate can answer for), bfp_path.c (the gate paths and their
 * plans), bfp_narrow.c (IN lists narrowed), bfp_scan.c (the executor node);
 * bfp_batch_path.c and bfp_batch_scan.c (BloomBatch: a sequential scan's
 * checks of a large filter, batched); bfp_position.c (their rows' positions,
 * for WHERE CURRENT OF); bfp_catalog.c (the extension's schema and check
 * functions).  See doc/design.md, "Planner gates on guard indexes".
 *
 * This folder calls the guard index (index/bf_index.h), the call sites
 * (cache/bf_cache.h: BloomBatch's prefetching) and the value type
 * (value/bf_value.h); nothing below it calls it.
 */
#ifndef BF_PLAN_H
#define BF_PLAN_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

/* The custom scans' names, in EXPLAIN. */
#define BFP_NODE_NAME		"BloomGuard"
#define BFP_BATCH_NODE_NAME	"BloomBatch"

/* bfp_hook.c */
extern bool bfp_planner_guards;	/* GUC bloomfilter.planner_guards */
extern bool bfp_batch_checks;	/* GUC bloomfilter.batch_checks */
extern void bfp_init(void);		/* from _PG_init */

/* bfp_clause.c */
extern bool bfp_cannot_fail(PlannerInfo *root, Node *node);
extern bool bfp_params_safe(Node *expr, ParamListInfo params);
extern bool bfp_operator_agrees(Oid opno, int colside, Oid coltype,
								Oid colcoll, Oid valtype);
extern Node *bfp_clause_key(PlannerInfo *root, Expr *clause, Index rti,
							AttrNumber attnum, Oid coltype, Oid colcoll,
							Relids outer, bool *any, Oid *collation,
							Oid *opno);

/* bfp_path.c */
extern void bfp_gate_paths(PlannerInfo *root, RelOptInfo *rel, Index rti,
						   RangeTblEntry *rte);
extern bool bfp_rel_has_guard(RelOptInfo *rel);
extern CustomPath *bfp_wrapper_path(RelOptInfo *rel, Path *sub, Cost extra,
									const struct CustomPathMethods *methods);

/*
 * A gated plan's custom_private: per gate (in custom_exprs' order) the
 * guard index, the type its key is hashed as, the column's collation and
 * whether the key is an array of keys; then the node's flags.
 */
enum
{
	BFP_PRIV_INDEXES,			/* OID list */
	BFP_PRIV_HASHTYPES,			/* OID list */
	BFP_PRIV_COLLATIONS,		/* OID list */
	BFP_PRIV_ANY,				/* integer list, 1: an array of keys */
	BFP_PRIV_FLAGS,				/* Integer, BFP_FLAG_* */
	BFP_PRIV_COUNT
};

#define BFP_FLAG_PARALLEL_CHILD	0x01	/* the child is parallel-aware */

/* bfp_narrow.c: an array gate's index condition narrowed to its "maybe" keys */
typedef struct BfpNarrowGate
{
	Oid			guard;			/* the guard index */
	Oid			amoid;			/* its access method */
	Oid			opno;			/* the clause's "=" */
	AttrNumber	attnum;			/* the guarded column */
	Node	   *keys;			/* the clause's array; NULL: not an array gate */
} BfpNarrowGate;

extern bool bfp_narrow_child(PlannerInfo *root, RelOptInfo *rel, Plan *child,
							 const BfpNarrowGate *gates, int ngates);

/* bfp_batch_path.c: BloomBatch, sequential scans' checks of large filters */
extern void bfp_batch_paths(PlannerInfo *root, RelOptInfo *rel, Index rti,
							RangeTblEntry *rte);
extern bool bfp_call_parts(Node *expr, Oid *funcid, List **args,
						   Oid *collation);

/* A BloomBatch node's check: the condition it batches, in its plan */
typedef struct BfpBatchCheck
{
	int			qualno;			/* its position among the node's conditions */
	int			filter_argno;	/* the call's argument holding the filter */
	int			key_argno;		/* and the key */
	bool		literal;		/* the key is a bloom_literal */
	AttrNumber	keyresno;		/* the key's column in the scan tuple */
} BfpBatchCheck;

/* bfp_batch_scan.c */
extern Plan *bfp_make_batch_scan(List *tlist, List *qual,
								 const BfpBatchCheck *check, List *scan_tlist,
								 Plan *scan, Bitmapset *relids);
extern void bfp_batch_scan_init(void);	/* from bfp_init */
extern bool bfp_is_batch_scan(const CustomScan *cscan);

/* bfp_position.c: a node's current row, for WHERE CURRENT OF */
extern bool bfp_plan_has_position(Plan *plan);
extern ScanState *bfp_position_scan(PlanState *child);
extern bool bfp_position_tid(ScanState *scan, ItemPointer tid);

/* bfp_catalog.c: the extension's own catalog objects */
typedef enum BfCheckFn
{
	BF_CHECK_FN_NONE = -1,
	BF_CHECK_FN_CONTAINS,		/* bloom_contains(bloomfilter, anyelement): @> */
	BF_CHECK_FN_CONTAINED,		/* bloom_contained(anyelement, bloomfilter): <@ */
	BF_CHECK_FN_CONTAINS_LITERAL,	/* bloom_contains(bloomfilter, bloom_literal) */
	BF_CHECK_FN_CONTAINED_LITERAL,	/* bloom_contained(bloom_literal, bloomfilter) */
	BF_NUM_CHECK_FNS
} BfCheckFn;

extern Oid	bf_extension_schema(bool missing_ok);	/* its schema */
extern BfCheckFn bf_check_fn(Oid funcid);	/* which check funcid is */

/* bfp_scan.c */
extern Plan *bfp_make_scan(List *tlist, List *keys, List *priv, Plan *child,
						   Bitmapset *relids, bool backward, bool mark);
extern void bfp_scan_init(void);

#endif							/* BF_PLAN_H */
