/*
 * bf_shared.h
 *		The shared tier: named Bloom filters resident in server shared memory,
 *		kept current by triggers.  See src/README.md for the design and the
 *		concurrency protocol.
 *
 * A filter is defined by a row of the extension's configuration table
 * bloom_shared_definitions (name, guarded table by OID, column, rate,
 * capacity); its bits live in a slot of the registry in shared memory.
 * Code outside the registry refers to a filter through a BfFilterRef and
 * the functions below, never through the slot itself.
 *
 * The value tier (the .c files directly in src/) never includes this file.
 */
#ifndef BF_SHARED_H
#define BF_SHARED_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/lockdefs.h"
#include "utils/timestamp.h"

#include "bf_catalog.h"
#include "bf_format.h"
#include "bf_hash.h"
#include "bf_keys.h"

/* "schema"."table"."column", each part quoted as needed */
#define BF_SHARED_NAME_LEN	(3 * (2 * NAMEDATALEN + 2))
#define BF_SHARED_CONFIG_TABLE	"bloom_shared_definitions"
#define BF_TRIGGER_FUNCTION "bloom_shared_trigger"
#define BF_POOL_ALIGN		64
#define BF_MAX_LOAD_REQUESTS 32

/* A definition row (name first: it is the key of the per-backend cache). */
typedef struct BfDefinition
{
	char		name[BF_SHARED_NAME_LEN];
	int64		id;
	Oid			relid;			/* the guarded table */
	NameData	column_name;
	double		fpr;
	int64		capacity;		/* 0: sized from the table */
	int			layout;			/* BF_LAYOUT_BLOCKED, BF_LAYOUT_COUNTING or
								 * BF_GUARD_CUCKOO */
	Oid			member;			/* the leaf partition whose own filter this
								 * names (bf_members.c), else InvalidOid; not
								 * a column of the configuration table */
} BfDefinition;

/*
 * A guard's layout is a Bloom layout (blocked, counting) or this one, a
 * cuckoo filter (bf_cuckoo_slot.c); never a value of BfHeader.layout.
 */
#define BF_GUARD_CUCKOO		100

/* Does a guard of this layout follow deletes (its trigger fires on DELETE)? */
static inline bool
bf_guard_follows_deletes(int layout)
{
	return layout == BF_LAYOUT_COUNTING || layout == BF_GUARD_CUCKOO;
}

/* The layout's name in bloom_shared_definitions.layout, and back (-1: none). */
static inline const char *
bf_guard_layout_name(int layout)
{
	return layout == BF_GUARD_CUCKOO ? "cuckoo" : bf_layout_name(layout);
}

static inline int
bf_guard_layout_from_name(const char *name)
{
	return strcmp(name, "cuckoo") == 0 ? BF_GUARD_CUCKOO : bf_layout_from_name(name);
}

/* Where a call site found a filter: valid until the slot is reset or freed. */
typedef struct BfFilterRef
{
	int			slot;			/* -1: none */
	uint32		generation;
} BfFilterRef;

#define BF_FILTER_REF_NONE	((BfFilterRef) {-1, 0})

/* What a check of a loaded filter said. */
typedef enum BfCheckResult
{
	BF_CHECK_UNKNOWN,			/* not loaded, building, suspended: "maybe" */
	BF_CHECK_MAYBE,
	BF_CHECK_NO,
	BF_CHECK_WRONG_KIND			/* built for keys of another kind */
} BfCheckResult;

/* bf_registry.c: GUCs, shared memory, slots */
extern bool bf_shared_enabled;
extern int	bf_shared_memory_mb;
extern int	bf_max_shared_filters;

extern void bf_shared_init(void);	/* from _PG_init during preload */
extern void bf_shared_check_enabled(void);
extern bool bf_shared_available(void);
extern uint64 bf_shared_max_nbits(void);

/* The rate a build sizes a guard of this layout and rate for (bf_grow.c). */
extern double bf_first_layer_fpr(int layout, double fpr);

extern bool bf_filter_lookup(const BfDefinition *def, bool create, BfFilterRef *ref);
extern bool bf_filter_slot_free(void);
extern uint64 bf_pool_free_bytes(void);
extern void bf_filter_request_build(const BfDefinition *def, TransactionId wait_xid,
									bool forget);
extern void bf_filter_forget(int64 defid);
extern void bf_filter_forget_member(int64 defid, Oid member);
extern void bf_filter_forget_member_of(Oid cfgoid, int64 defid, Oid member);
extern List *bf_filter_slot_members(int64 defid);	/* of Oid */
extern void bf_filters_forget_db(Oid dbid, Oid keep_cfgoid);
extern void bf_request_load(Oid dbid);
extern void bf_wake_launcher(void);

/* bf_filter.c: operations on a loaded filter */
extern BfCheckResult bf_filter_check(const BfFilterRef *ref, BfHash h, int kind,
									 int *filter_kind);
extern BfCheckResult bf_filter_add(const BfFilterRef *ref, BfHash h, int kind,
								   int *filter_kind);
/* bf_removals.c: queue the removal of a deleted row's key (counting filters) */
extern BfCheckResult bf_filter_remove(const BfFilterRef *ref, BfHash h, int kind);
extern struct varlena *bf_filter_snapshot(const BfFilterRef *ref);
extern bool bf_filter_is_ready(const BfFilterRef *ref);
extern bool bf_filter_waits_for(const BfFilterRef *ref, TransactionId xid);
extern bool bf_filter_needs_build(const BfDefinition *def);

/* bf_definitions.c: the configuration table */
extern uint64 bf_def_epoch;
extern Oid	bf_config_table(bool missing_ok);
extern bool bf_config_current(void);
extern bool bf_def_by_name(const char *name, BfDefinition *def);
extern void bf_def_undefined(const char *name);
extern bool bf_def_by_id(int64 id, BfDefinition *def);
extern List *bf_def_all(void);	/* of BfDefinition *, fresh read */
extern void bf_def_invalidate(void);
extern int64 bf_def_insert(const BfDefinition *def);
extern void bf_def_delete(int64 id);

/* bf_tree.c: guarded tables, their inheritance trees and guard triggers */
typedef enum BfGuardState
{
	BF_GUARD_OK,				/* every table of the tree has it, firing ALWAYS */
	BF_GUARD_NOT_ALWAYS,		/* enabled somewhere as ORIGIN or REPLICA only */
	BF_GUARD_CHILD_MISSING,		/* an inheritance child lacks it */
	BF_GUARD_DISABLED,			/* disabled on some table of the tree */
	BF_GUARD_DUPLICATE,			/* counting: two enabled on one table */
	BF_GUARD_BAD_SHAPE,			/* not AFTER INSERT OR UPDATE FOR EACH ROW */
	BF_GUARD_MISSING			/* the guarded table itself lacks it */
} BfGuardState;

extern Oid	bf_trigger_function(bool missing_ok);
extern List *bf_tree_members(Oid relid, LOCKMODE lockmode);
extern bool bf_tree_contains(Oid root, Oid relid);
extern BfGuardState bf_guard_state(Oid root, const char *name, bool counting,
								   Oid *culprit);
extern List *bf_guard_triggers(Oid relid, const char *name);	/* of names */
extern double bf_tree_estimate_rows(Oid relid, bool *counted);
extern void bf_tree_check_guardable(Oid root);
extern bool bf_tree_per_partition(Oid relid);
extern List *bf_tree_leaves(Oid relid, LOCKMODE lockmode);

/* bf_members.c: a guard on a partitioned table, a filter per leaf partition */
extern BfDefinition *bf_member_def(const BfDefinition *def, Oid member);
extern List *bf_filter_members(const BfDefinition *def);	/* of BfDefinition * */
extern void bf_members_reconcile(const BfDefinition *def, List *reset);
extern void bf_members_forget_at_commit(int64 defid, Oid member);
extern void bf_members_request_build(const BfDefinition *def,
									 TransactionId wait_xid, bool forget);

typedef struct BfMemberSet
{
	int64		defid;
	uint64		inval;			/* relcache invalidations when read */
	int			n;
	Oid		   *relids;			/* its leaf partitions */
	BfFilterRef *refs;			/* their filters */
	bool		load_requested;
} BfMemberSet;

extern BfCheckResult bf_members_check(BfMemberSet *set, const BfDefinition *def,
									  MemoryContext mcxt, const BfHash *hashes,
									  int nhashes, int kind, int *filter_kind);
extern void bf_check_owner(Oid relid);
extern char *bf_filter_name(Oid relid, const char *column);

/* bf_guard.c: guards and their triggers */
extern int	bf_own_ddl;
extern void bf_guard_create_trigger(Oid relid, const BfDefinition *def);
extern void bf_guard_enable_always(Oid relid, const BfDefinition *def);
extern void bf_guard_drop_triggers(const BfDefinition *def);
extern void bf_guard_remove(const BfDefinition *def, bool drop_triggers);

/* bf_ddl.c: the review of DDL on guarded tables */
extern void bf_ddl_check_attach(Node *stmt);

/* bf_gate.c and bf_planner.c: the planner's gates */
extern void bf_planner_init(void);	/* from bf_shared_init */
extern bool bf_planner_is_gate(Oid funcid);
extern Oid	bf_planner_elements_fn(Oid funcid);
extern AttrNumber bf_gate_guarded_attnum(int64 defid, Oid relid);
struct Plan;
extern bool bf_gate_narrow(List *gates, struct Plan *child, List *rtable);	/* bf_gate_narrow.c */
extern void bf_gate_scan_init(void);	/* bf_gate_scan.c */
struct EState;
struct PlanState;
struct FuncExpr;
struct Append;
extern bool bf_gate_scan_defers(struct EState *estate, int eflags, bool parallel);
extern struct FuncExpr *bf_gate_scan_partition_gate(struct Plan *plan);
extern List *bf_gate_scan_output(struct Plan *plan, Index *scanrelid, bool *failed);
extern struct Plan *bf_gate_append(struct Append *append, bool parallel);	/* bf_gate_append.c */
extern void bf_gate_append_init(void);
extern bool bf_gates_can_answer(void);
extern bool bf_gate_partition_maybe(int64 defid, Oid partition, Oid argtype,
									const Datum *keys, int nkeys);

/* The elements of an array of keys, and what building one needs. */
typedef struct BfGateKeys
{
	Oid			elemtype;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
} BfGateKeys;
struct ArrayType;
extern void bf_gate_keys(struct ArrayType *arr, BfGateKeys *keys);
extern bool bf_planner_is_partition_gate(Oid funcid, bool *any);
extern List *bf_gate_definitions(Oid *cfgoid);
extern Size bf_gate_shmem_size(void);
extern void bf_gate_shmem_init(void);
extern void bf_writers_init(void);	/* bf_writers.c */
extern bool bf_open_writers(void);
extern bool bf_unfired_writes(void);

/* bf_security.c: running SQL and user-reachable code safely; access */
typedef enum BfReadAccess
{
	BF_READ_OK,
	BF_READ_NO_USAGE,
	BF_READ_NO_SELECT,
	BF_READ_ROW_SECURITY
} BfReadAccess;

extern BfReadAccess bf_read_access(Oid relid, AttrNumber attnum, Oid userid);
extern int	bf_fixed_search_path(void);
extern void bf_restore_search_path(int nestlevel);
extern Oid	bf_rel_owner(Oid relid);
extern void bf_spi_exec(const char *sql, int nargs, Oid *types, Datum *values,
						int expect);

#endif							/* BF_SHARED_H */
