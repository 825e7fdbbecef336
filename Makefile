# bloomfilter — PGXS build
EXTENSION = bloomfilter
MODULE_big = bloomfilter
DATA = sql/bloomfilter--1.0.sql sql/bloomfilter--1.1.sql sql/bloomfilter--1.0--1.1.sql \
	sql/bloomfilter--1.1--2.0.sql
PGFILEDESC = "bloomfilter - Bloom filter type, operators and aggregates"

# The folders, lowest first: each calls only those before it (test/layering.sh).

# the PostgreSQL-free core (src/core/)
CORE_OBJS = \
	src/core/bf_counting.o \
	src/core/bf_cuckoo.o \
	src/core/bf_cuckoo_text.o \
	src/core/bf_format.o \
	src/core/bf_layout.o \
	src/core/bf_scalable.o \
	src/core/bf_sizing.o \
	src/core/bf_text.o

# the value type (src/value/): I/O, operators' building blocks, keys,
# aggregates' states, expanded objects, the cuckoofilter functions
VALUE_OBJS = \
	src/value/bf_keys.o \
	src/value/bf_keyconv.o \
	src/value/bf_value.o \
	src/value/bf_agg_batch.o \
	src/value/bf_datum.o \
	src/value/bf_expanded.o \
	src/value/bf_io.o \
	src/value/bf_agg_auto.o \
	src/value/bf_agg_state.o \
	src/value/bf_cuckoo.o

# call sites and the stored-filter cache (src/cache/), and the SQL functions
# that read their filters through them
CACHE_OBJS = \
	src/cache/bf_cache.o \
	src/cache/bf_toast_id.o \
	src/cache/bf_site.o \
	src/cache/bf_ops.o \
	src/cache/bf_agg.o

# the guard index access method (src/index/)
INDEX_OBJS = \
	src/index/bfi_handler.o \
	src/index/bfi_page.o \
	src/index/bfi_extend.o \
	src/index/bfi_build.o \
	src/index/bfi_insert.o \
	src/index/bfi_vacuum.o \
	src/index/bfi_rebuild.o \
	src/index/bfi_export.o \
	src/index/bfi_probe.o \
	src/index/bfi_sql.o \
	src/index/bfi_compat.o

# the planner tier (src/plan/): gates on guard indexes, BloomBatch
PLAN_OBJS = \
	src/plan/bfp_hook.o \
	src/plan/bfp_clause.o \
	src/plan/bfp_path.o \
	src/plan/bfp_narrow.o \
	src/plan/bfp_scan.o \
	src/plan/bfp_batch_path.o \
	src/plan/bfp_batch_scan.o \
	src/plan/bfp_position.o \
	src/plan/bfp_catalog.o

OBJS = \
	src/bloomfilter.o \
	$(PLAN_OBJS) \
	$(INDEX_OBJS) \
	$(CACHE_OBJS) \
	$(VALUE_OBJS) \
	$(CORE_OBJS)

# Includes name their folder ("value/bf_value.h"): only src/ is searched.
PG_CPPFLAGS = -I$(srcdir)/src

REGRESS = basics keys keys_stored io send setops aggregates expanded aggregates_auto agg_state counting cuckoo scalable cache_kept guard_index guard_gates compat
REGRESS_OPTS = --load-extension=bloomfilter

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The full suite on a throwaway server (installs what is missing).
.PHONY: test demo core-test
test:
	bash test/run-tests.sh

demo:
	bash test/demo.sh

# The benchmark of the performance budget (never part of make test).
.PHONY: bench
bench:
	bash test/bench.sh

# A guard index under 50/50 insert/delete churn: its estimated and measured
# rate after each round.
.PHONY: bench-churn
bench-churn:
	bash test/bench/guard_churn.sh
# Guard indexes grown 100x by layers against guard indexes sized in advance.
.PHONY: bench-growth
bench-growth:
	bash test/bench/guard_growth.sh
# The planner-guard benchmark (pgbench, BloomGuard gates on guard indexes on
# vs off, 1 and 4 clients).
.PHONY: bench-planner
bench-planner:
	bash test/bench/planner_guards.sh
# Guard indexes against the B-tree (and the gated EXISTS): checks, inserts
# and WAL, builds, restart to the first "no".
.PHONY: bench-guard
bench-guard:
	bash test/bench/guard_index.sh

# The client libraries' copy of a guard: in-process checks against round
# trips, the registration workload, refreshes under inserts, memory.
.PHONY: bench-clients
bench-clients:
	bash test/bench/clients.sh

# The memory of a pool of backends checking one 62 MB stored filter.
.PHONY: bench-pool
bench-pool:
	bash test/bench/cache_pool.sh

# The disk-bound lookup benchmark: a users table several times the server's
# memory (a memory cgroup), reads throttled (a blkio cgroup), gated lookups of
# absent names against unguarded ones.
.PHONY: bench-seed
bench-seed:
	bash test/bench/seed.sh

# Plain C unit tests of the PostgreSQL-free core.
core-test:
	$(MAKE) -C test/core

# libFuzzer harnesses of the core's text and binary parsers (clang), each run
# for FUZZ_SECONDS (default 60); see test/fuzz/Makefile.
.PHONY: fuzz
fuzz:
	$(MAKE) -C test/fuzz run

# Regression and pgTAP suites against an ASan/UBSan build.
.PHONY: sanitize
sanitize:
	bash test/sanitize.sh

# The regression suite against a server running under valgrind memcheck.
.PHONY: valgrind
valgrind:
	bash test/valgrind.sh
