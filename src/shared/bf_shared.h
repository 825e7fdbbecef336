/*
 * bf_shared.h
 *		The shared tier: named Bloom filters resident in server shared memory,
 *		kept current by triggers (DESIGN.md §8).
 *
 * Shared memory holds a registry of bloomfilter.max_shared_filters slots and
 * one pool of bloomfilter.shared_memory bytes for the bit arrays.  A slot is
 * tied to its definition (a row of the extension's configuration table
 * bloom_shared_definitions) by the table's OID and the row's id, so a stale
 * slot (extension dropped and re-created, definition rolled back) never
 * answers for another definition.
 *
 * Locks: the registry lock protects slot identity and the pool's extents; a
 * slot's own lock protects what checks and adds read (which buffers are
 * live).  Whoever takes both takes the registry lock first.  Checks and adds
 * take the slot lock in shared mode; a build swaps buffers in exclusive mode.
 * Bits only go from 0 to 1 in a published buffer: adds use atomic OR on
 * 32-bit words, checks read plain bytes.
 *
 * The value tier (the .c files directly in src/) never includes this file.
 */
#ifndef BF_SHARED_H
#define BF_SHARED_H

#include "postgres.h"

#include "fmgr.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#include "bf_format.h"
#include "bf_hash.h"
#include "bf_keys.h"

/* schema.table.column, each at most NAMEDATALEN - 1 bytes */
#define BF_SHARED_NAME_LEN	(3 * NAMEDATALEN)
#define BF_SHARED_CONFIG_TABLE	"bloom_shared_definitions"
#define BF_POOL_ALIGN		64
#define BF_MAX_LOAD_REQUESTS 32

typedef struct BfSharedSlot
{
	/* identity: written under the registry lock and the slot lock */
	bool		in_use;
	uint32		generation;		/* bumped each time the slot is (re)assigned */
	Oid			dbid;
	Oid			cfgoid;			/* OID of the configuration table */
	int64		defid;			/* id of the definition row */
	char		name[BF_SHARED_NAME_LEN];

	/* extents in the pool: written under the registry lock (bytes 0: none) */
	uint64		live_off;
	uint64		live_bytes;
	uint64		next_off;
	uint64		next_bytes;

	/* what checks and adds use: under the slot lock */
	bool		has_live;
	bool		has_next;
	BfHeader	live_hdr;
	BfHeader	next_hdr;
	Oid			relid;
	int16		attnum;
	Oid			atttypid;
	int			key_kind;
	uint64		grow_threshold; /* live adds past which to grow */
	TimestampTz last_build;

	pg_atomic_uint64 added;		/* keys added to live */
	pg_atomic_uint64 next_added;	/* keys added to next */
	pg_atomic_uint64 checks;
	pg_atomic_uint64 negatives;
	pg_atomic_uint32 grow_requested;
	pg_atomic_uint32 pending;	/* a build is requested or running */
	int64		request_capacity;	/* capacity asked for by a grow request */
} BfSharedSlot;

typedef struct BfSharedState
{
	int			nslots;
	uint64		pool_bytes;
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	/* databases whose definitions should be loaded (under registry lock) */
	int			nload;
	Oid			load_dbid[BF_MAX_LOAD_REQUESTS];
	BfSharedSlot slots[FLEXIBLE_ARRAY_MEMBER];
} BfSharedState;

/* a definition row */
typedef struct BfDefinition
{
	char		name[BF_SHARED_NAME_LEN];
	int64		id;
	NameData	schema_name;
	NameData	table_name;
	NameData	column_name;
	double		fpr;
	int64		capacity;		/* 0: sized from the table */
} BfDefinition;

/* bf_shmem.c */
extern bool bf_shared_enabled;
extern int	bf_shared_memory_mb;
extern int	bf_max_shared_filters;
extern BfSharedState *bf_shared;
extern char *bf_pool;

extern void bf_shared_init(void);	/* from _PG_init during preload */
extern void bf_shared_check_enabled(void);
extern LWLock *bf_registry_lock(void);
extern LWLock *bf_slot_lock(int i);
extern int	bf_slot_find(Oid dbid, const char *name, Oid cfgoid, int64 defid);
extern int	bf_slot_find_or_create(Oid dbid, const char *name, Oid cfgoid, int64 defid);
extern void bf_slot_free(int i);
extern void bf_slots_purge_db(Oid dbid, Oid cfgoid, const char *name);
extern bool bf_pool_alloc(uint64 bytes, uint64 *off);	/* registry lock held exclusively */
extern uint64 bf_pool_used(void);	/* registry lock held */
extern void bf_request_load(Oid dbid);
extern void bf_wake_launcher(void);

/* definitions (per-backend cache) */
extern Oid	bf_extension_schema(bool missing_ok);
extern Oid	bf_config_table(bool missing_ok);
extern uint64 bf_def_epoch;
extern bool bf_def_lookup(const char *name, BfDefinition *def);
extern List *bf_def_all(void);	/* of BfDefinition *, fresh read */
extern void bf_def_invalidate(void);

/* bf_hotpath.c */
extern void bf_shared_add_hash(uint8 *bits, const BfHeader *h, BfHash hash);
extern uint64 bf_grow_threshold(const BfHeader *h);
extern bool bf_slot_add_locked(BfSharedSlot *s, BfHash h);
extern void bf_slot_unload(int i);

/* bf_worker.c */
#define BF_WORKER_LOAD		1	/* build every definition of a database not loaded */
#define BF_WORKER_BUILD		2	/* (re)build one filter */

typedef struct BfWorkerArgs
{
	int32		mode;
	TransactionId wait_xid;
	int64		capacity;
	int32		slot;			/* BUILD: the slot and its generation */
	uint32		generation;
} BfWorkerArgs;

extern void bf_register_launcher(void);
extern bool bf_start_worker(Oid dbid, int mode, TransactionId wait_xid,
							int slot, int64 capacity);

/* bf_guard.c */
extern void bf_check_owner(Oid relid);

#endif							/* BF_SHARED_H */
