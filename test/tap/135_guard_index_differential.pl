# Differential random-query test of the planner's gates on guard indexes and
# BloomBatch: a query returns the same rows (or fails with the same SQLSTATE)
# with bloomfilter.planner_guards and bloomfilter.batch_checks on as with
# them off.
#
# Guarded tables (DiffQueries.pm, schema_sql): a plain table (int4, int8,
# text, uuid, varchar keys, B-tree and hash indexes), an inheritance parent
# whose children are guarded on some columns only, a partitioned table with
# a sub-partitioned partition guarded through a partitioned index and on two
# of its partitions, small guards (pc) that grow layers under the writer, an
# empty table; keys present, absent and NULL; stored filters for BloomBatch.
# A seeded generator (one sub per query shape) makes point lookups, IN lists
# and = ANY with NULL, empty and duplicate elements, EXISTS / NOT EXISTS,
# correlated subqueries, joins of every kind, LATERAL, set operations, CTEs,
# window functions, LIMIT/OFFSET, aggregates, cursors (SCROLL, FETCH
# BACKWARD, WITH HOLD), prepared statements (generic plans), PL/pgSQL and
# SQL functions, UPDATE/DELETE/INSERT ... RETURNING and MERGE (rolled back),
# FOR UPDATE, WHERE CURRENT OF, BloomBatch conditions, keys that fail to
# evaluate, 1.1's bloom_shared_contains; each under random planner settings
# (parallel plans with zero costs, scans and joins disabled).
#
# Phases: 1. READ COMMITTED (on, off, on again; fresh sessions now and
# then); 2. REPEATABLE READ and 3. SERIALIZABLE (on and off in savepoints of
# one transaction: one snapshot); 4. REPEATABLE READ next to a concurrent
# writer (inserts, deletes, updates moving rows between partitions,
# rollbacks, CREATE INDEX [CONCURRENTLY] and DROP INDEX [CONCURRENTLY] of a
# guard, REINDEX [CONCURRENTLY], DETACH and ATTACH of a guarded partition
# with a write in between, a new child table).  One test per phase: no
# mismatch (different rows or SQLSTATEs, or an internal error XX... in any
# run); each mismatch is diagnosed with the settings, the SQL and both
# results (all in tmp_check/log/135_guard_index_differential_mismatches.txt).
# Every 5th case also runs with auto_explain, to count the gated plans: the
# test cannot pass vacuously.
#
# The library is not preloaded: session_preload_libraries loads it, as a
# server without shared_preload_libraries would (the gates need nothing
# more).  Environment: BF_DIFF_SEED, BF_DIFF_QUERIES (cases of phase 1; the
# other phases run a share of it), BF_DIFF_SHOW (mismatches diagnosed per
# phase, default 25), BF_DIFF_DUMP=1 (write every case, with its errors, to
# the mismatch file).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use DiffQueries;

my $seed = $ENV{BF_DIFF_SEED} // 20261202;
my $queries = $ENV{BF_DIFF_QUERIES} // 2000;
my $started = time;
note "seed $seed, $queries cases in phase 1 (BF_DIFF_SEED, BF_DIFF_QUERIES)";

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', qq{
session_preload_libraries = 'bloomfilter'
max_connections = 30
jit = off
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
deadlock_timeout = 100ms
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

$node->safe_psql('postgres', DiffQueries::schema_sql());
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'bloomguard' AND i.indisvalid}),
	'22', 'the guard indexes are there (pp: the partitioned index and its 5 partitions)');

DiffQueries::drive($node, name => '135_guard_index_differential', seed => $seed,
	queries => $queries, started => $started, markers => [qw(BloomGuard bloom_guard_elements)]);
done_testing();
