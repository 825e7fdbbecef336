# Planner gates in plans run by parallel workers under instrumentation
# (EXPLAIN ANALYZE, auto_explain.log_analyze): a worker's BloomGate and
# BloomAppend answer "maybe" and initialize the children the leader's nodes
# left out, so the worker reports instrumentation for plan nodes the leader
# never built.  The statement must not fail where it succeeds with
# bloomfilter.planner_guards off, and must return the same rows.  Gates
# outside the parallel part of a plan still check when the executor starts.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $node = shared_node('main', qq{
max_worker_processes = 8
max_parallel_workers = 4
jit = off
});

$node->safe_psql('postgres', q{
CREATE TABLE events (event_id int8, day int, payload text) PARTITION BY RANGE (day);
CREATE TABLE events_0 PARTITION OF events FOR VALUES FROM (0) TO (10);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM (10) TO (20);
CREATE TABLE events_2 PARTITION OF events FOR VALUES FROM (20) TO (30);
CREATE TABLE events_d PARTITION OF events DEFAULT;
CREATE INDEX ON events (event_id);
INSERT INTO events SELECT i, i % 50, 'x' || i FROM generate_series(1, 20000) i;
CREATE TABLE other (id int8, day int);
INSERT INTO other SELECT i, i % 50 FROM generate_series(1, 20000) i;
ANALYZE;
SELECT bloom_guard('events', 'event_id');
});
is($node->safe_psql('postgres', q{SELECT bloom_shared_wait('public.events.event_id', 60000)}),
	't', 'the partitions\' filters are ready');

my $force = q{SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
	THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false)};
my $cheap = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET enable_parallel_append = off; SET enable_parallel_hash = off};

# [ name, setup, statement ]; key 33 is in events_d only
my @cases = (
	[ 'BloomAppend under a forced Gather, EXPLAIN ANALYZE', $force,
	  'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM events WHERE event_id = 33' ],
	[ 'BloomGate under a forced Gather, EXPLAIN ANALYZE', $force,
	  'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM events_0 WHERE event_id = 33' ],
	[ 'BloomAppend on the inner side of a parallel hash join, EXPLAIN ANALYZE', $cheap,
	  'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM other o JOIN events e ON e.day = o.day WHERE e.event_id = 33' ],
	[ 'BloomAppend under a forced Gather, auto_explain.log_analyze',
	  "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; $force",
	  'SELECT * FROM events WHERE event_id = 33' ],
);

foreach my $case (@cases)
{
	my ($name, $setup, $sql) = @$case;
	my ($state_off, $err_off, $out_off) =
	  sqlstate($node, 'postgres', "SET bloomfilter.planner_guards = off; $setup; $sql");
	my ($state_on, $err_on, $out_on) = sqlstate($node, 'postgres', "$setup; $sql");
	is($state_off, 'OK', "$name: succeeds with guards off") or diag($err_off);
	is($state_on, $state_off, "$name: guards on end as guards off") or diag($err_on);
	next if $sql =~ /^EXPLAIN/;
	is($out_on, $out_off, "$name: the same rows");
}

# Only gates that workers may run (below a Gather) defer: a BloomAppend
# outside the parallel part of the plan (a nested loop's inner side over a
# CTE computed by a Gather) still skips partitions under EXPLAIN ANALYZE.
my $cte = q{WITH o AS MATERIALIZED (SELECT id FROM other WHERE id % 5000 = 7)
SELECT o.id, e.day FROM o, LATERAL (SELECT day FROM events WHERE event_id = 33 AND day <> o.id) e ORDER BY 1};
my $cheap_cte = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0};
my $cplan = $node->safe_psql('postgres',
	"$cheap_cte; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $cte");
like($cplan, qr/Gather/, 'a Gather in the CTE');
like($cplan, qr/Custom Scan \(BloomAppend\)[^\n]*\n\s+Partitions Skipped: 3\n/,
	'the BloomAppend outside the parallel part skips three partitions') or diag($cplan);
is($node->safe_psql('postgres', "$cheap_cte; $cte"),
	$node->safe_psql('postgres', "SET bloomfilter.planner_guards = off; $cheap_cte; $cte"),
	'the BloomAppend outside the parallel part: the same rows as with guards off');

done_testing();
