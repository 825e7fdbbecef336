# Differential random-query test of the planner features: a query returns
# the same rows (or fails with the same SQLSTATE) with
# bloomfilter.planner_guards and bloomfilter.batch_checks on as with them
# off.
#
# Guarded tables (DiffQueries.pm, schema_sql): a plain table (int4, int8,
# text, uuid and varchar keys, B-tree and hash indexes), an inheritance
# parent with children, a partitioned table with a sub-partitioned
# partition (guarded at the parent, and two partitions on another column),
# counting and cuckoo guards, an empty table; keys present, absent and
# NULL; stored filters for BloomBatch.  A seeded generator (one sub per query
# shape) makes point lookups, IN lists and = ANY with NULL, empty and
# duplicate elements, EXISTS / NOT EXISTS, correlated subqueries, joins of
# every kind, LATERAL, set operations, CTEs, window functions, LIMIT/OFFSET,
# aggregates, cursors (SCROLL, FETCH BACKWARD, WITH HOLD), prepared
# statements (generic plans, 7 executions), PL/pgSQL and SQL functions,
# UPDATE/DELETE/INSERT ... RETURNING and MERGE (rolled back), FOR UPDATE,
# WHERE CURRENT OF, BloomBatch conditions, keys that fail to evaluate; each
# under random planner settings (parallel plans with zero costs, scans and
# joins disabled).
#
# Phases: 1. READ COMMITTED (on, off, on again; the session reconnects now
# and then, for fresh sessions); 2. REPEATABLE READ and 3. SERIALIZABLE (on
# and off in savepoints of one transaction: one snapshot); 4. REPEATABLE
# READ next to a concurrent writer (inserts, deletes, updates moving rows
# between partitions, rollbacks, index DDL, guarding and unguarding another
# column, rebuilds, a new child table).  One test per phase: no mismatch
# (different rows or SQLSTATEs, or an internal error XX... in any run);
# each mismatch is diagnosed with the settings, the SQL and both results
# (all of them in tmp_check/log/128_differential_mismatches.txt).  Every 5th
# case is also run with auto_explain, to count the gated plans: the test
# cannot pass vacuously.
#
# Environment: BF_DIFF_SEED (default 20240611), BF_DIFF_QUERIES (cases of
# phase 1, default 3000; the other phases run a share of it), BF_DIFF_SHOW
# (mismatches diagnosed per phase, default 25), BF_DIFF_DUMP=1 (write every
# case, with its errors, to the mismatch file).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use DiffQueries;

my $seed = $ENV{BF_DIFF_SEED} // 20240611;
my $queries = $ENV{BF_DIFF_QUERIES} // 3000;
my $started = time;
note "seed $seed, $queries cases in phase 1 (BF_DIFF_SEED, BF_DIFF_QUERIES)";

my $node = shared_node('main', qq{
max_connections = 30
jit = off
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
bloomfilter.max_shared_filters = 64
deadlock_timeout = 100ms
});

$node->safe_psql('postgres', DiffQueries::schema_sql());
my $names = join(' AND ', map { "bloom_shared_wait('$_', 60000)" } DiffQueries::filter_names());
is($node->safe_psql('postgres', "SELECT $names"), 't', 'the guards are ready');

DiffQueries::drive($node, name => '128_differential', seed => $seed, queries => $queries,
	started => $started,
	markers => [qw(BloomGate BloomAppend BloomBatch bloom_shared_gate bloom_shared_gate_elements)]);
done_testing();
