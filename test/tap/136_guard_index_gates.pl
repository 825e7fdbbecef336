# The planner's gates on guard indexes where concurrency and replication
# decide the answer:
#  1. SERIALIZABLE: a gate's "no" takes a predicate lock on the guard's page
#     it read, and an insert of the key conflicts with it: of two
#     transactions that each found no row for a key (their gates answering
#     "no", the scans skipped) and inserted it, the second fails with 40001,
#     as with the gates off.
#  2. Parallel plans: a gate above a Parallel Seq Scan or a Parallel Index
#     Scan of "k = ANY (keys)" with present and absent keys returns what the
#     plan without gates returns, instrumented (EXPLAIN ANALYZE) or not.
#  3. READ COMMITTED updates rechecked by EvalPlanQual return what they
#     return without gates.
#  4. A hot standby: gated lookups there skip scans for absent keys and find
#     every key the primary committed and the standby replayed, while the
#     primary inserts.
#  5. After an immediate shutdown (crash) and restart, the first gated
#     lookup already answers "no" (nothing is rebuilt).
#  6. Without any preloading: the plan during which the planner itself loads
#     the library (opening a guard) has no gate; a cached generic plan made
#     then is made again, with its gate, in a later transaction; BloomBatch
#     is planned too.
#  7. Join clauses: a nested loop's inner scan, parameterized by the outer
#     row's key, gated on each rescan, with the same rows as without gates.
#  8. bloomfilter.planner_guards = off set by the operator (postgresql.conf,
#     ALTER SYSTEM), with and without preloading, is in force.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
session_preload_libraries = 'bloomfilter'
jit = off
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE acct (k int8, who text);
INSERT INTO acct SELECT g, 'x' FROM generate_series(1, 10000) g;
CREATE INDEX acct_g ON acct USING bloomguard (k);
CREATE TABLE wide (id int, k int8, pad text);
INSERT INTO wide SELECT g, g * 5, repeat('p', 40) FROM generate_series(1, 200000) g;
CREATE INDEX wide_k ON wide (k);
CREATE INDEX wide_g ON wide USING bloomguard (k);
ANALYZE;
});

my $skipped = qr/Scans Skipped: 1/;

# ---------------------------------------------------------------------
# 1. SERIALIZABLE write skew
# ---------------------------------------------------------------------
my $plan = $node->safe_psql('postgres', q{SET default_transaction_isolation = serializable;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM acct WHERE k = 777777});
like($plan, $skipped, 'SERIALIZABLE: the gate answers "no" and skips the scan');
foreach my $on ('on', 'off')
{
	foreach my $pred ('k = 777777', 'k = ANY (\'{777777, 888888}\')')
	{
		$node->safe_psql('postgres', 'DELETE FROM acct WHERE k = 777777');
		my ($a, $b) = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 2;
		foreach my $s ($a, $b)
		{
			$s->query_safe("SET bloomfilter.planner_guards = $on");
			$s->query_safe('BEGIN ISOLATION LEVEL SERIALIZABLE');
			is($s->query_safe("SELECT count(*) FROM acct WHERE $pred"), '0',
				"SERIALIZABLE, gates $on, $pred: no row yet");
		}
		$a->query_safe("INSERT INTO acct VALUES (777777, 'a')");
		$b->query("INSERT INTO acct VALUES (777777, 'b')");
		$a->query_safe('COMMIT');
		$b->query('COMMIT');
		$a->quit;
		$b->quit;
		is($node->safe_psql('postgres', 'SELECT count(*) FROM acct WHERE k = 777777'), '1',
			"SERIALIZABLE, gates $on, $pred: the write skew is caught (one insert commits)");
	}
}

# ---------------------------------------------------------------------
# 2. Parallel plans
# ---------------------------------------------------------------------
my $par = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_index_scan_size = 0; SET min_parallel_table_scan_size = 0;};
# enough keys (a sixth of the table) for the planner to choose a parallel
# index scan; some present, some absent, or all absent
my $mixed = join(',', map { $_ * 5 } 1 .. 30000) . ',' . join(',', map { 5_000_000 + $_ } 1 .. 1000);
my $absent = join(',', map { 5_000_000 + $_ * 5 } 1 .. 31000);
my %shape = (
	'Parallel Seq Scan' => 'SET enable_indexscan = off; SET enable_bitmapscan = off;',
	'Parallel Index Scan' => 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
	'Parallel Bitmap Heap Scan' => 'SET enable_seqscan = off; SET enable_indexscan = off;');
foreach my $scan (sort keys %shape)
{
	foreach my $keys ($mixed, $absent)
	{
		my $q = "SELECT count(*), sum(id) FROM wide WHERE k = ANY ('{$keys}'::int8[])";
		my $what = $keys eq $absent ? 'absent keys' : 'present and absent keys';
		my $p = $node->safe_psql('postgres', "$par $shape{$scan} EXPLAIN (COSTS OFF) $q");
		like($p, qr/BloomGuard.*\Q$scan\E/s, "$scan below a gate, $what");
		my $on = $node->safe_psql('postgres', "$par $shape{$scan} $q");
		my $off = $node->safe_psql('postgres', "$par $shape{$scan} SET bloomfilter.planner_guards = off; $q");
		is($on, $off, "$scan, $what: the same rows with gates on and off ($on)");
		my ($rc, $out, $err) = $node->psql('postgres',
			"$par $shape{$scan} EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $q");
		is($rc, 0, "$scan, $what: EXPLAIN ANALYZE of the gated parallel plan runs") or diag($err);
	}
}

# ---------------------------------------------------------------------
# 3. EvalPlanQual rechecks
# ---------------------------------------------------------------------
foreach my $on ('on', 'off')
{
	$node->safe_psql('postgres', "UPDATE acct SET who = 'x' WHERE k BETWEEN 10 AND 12");
	my ($a, $b) = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 2;
	$b->query_safe("SET bloomfilter.planner_guards = $on");
	$a->query_safe('BEGIN');
	$a->query_safe("UPDATE acct SET who = 'a' WHERE k = 11");
	# b waits for a's row lock, then rechecks the new version
	$b->query_until(qr/started/, q{\echo started
		UPDATE acct SET who = who || 'b' WHERE k = ANY ('{11, 99999999}') RETURNING who;
		\echo done
});
	$a->query_safe('COMMIT');
	$b->query_until(qr/done/, '');
	$b->quit;
	$a->quit;
	is($node->safe_psql('postgres', 'SELECT who FROM acct WHERE k = 11'), 'ab',
		"EvalPlanQual, gates $on: the recheck updated the new row version");
}

# ---------------------------------------------------------------------
# 4. A hot standby under primary inserts
# ---------------------------------------------------------------------
$node->backup('b1');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b1', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
$plan = $standby->safe_psql('postgres',
	'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM acct WHERE k = 123456789');
like($plan, $skipped, 'standby: the gate answers "no" and skips the scan');
my $missed = 0;
foreach my $batch (1 .. 5)
{
	my $lo = 100000 * $batch;
	$node->safe_psql('postgres',
		"INSERT INTO acct SELECT g, 's' FROM generate_series($lo, $lo + 1999) g");
	$node->wait_for_catchup($standby);
	$missed += $standby->safe_psql('postgres', qq{
		SELECT 2000 - count(*) FROM generate_series($lo, $lo + 1999) g
		WHERE EXISTS (SELECT 1 FROM acct WHERE k = g)});
}
is($missed, 0, 'standby: gated lookups find every replayed key (0 false negatives)');
$plan = $standby->safe_psql('postgres',
	'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM acct WHERE k = 500500');
like($plan, qr/Scans Skipped: 0.*actual rows=1/s, 'standby: a replayed key is found through its gate');
$standby->stop;

# ---------------------------------------------------------------------
# 7. Join clauses: the inner side of a nested loop, parameterized by the
#    outer row's key, is gated on each rescan (EXISTS and NOT EXISTS made
#    semi and anti joins, an inner and a left join, under a Memoize too),
#    and returns what it returns without gates, NULL keys included
# ---------------------------------------------------------------------
$node->safe_psql('postgres', q{
CREATE TABLE probe (id int, k int8);
INSERT INTO probe SELECT g, CASE WHEN g % 10 = 0 THEN g * 5 WHEN g % 97 = 0 THEN NULL ELSE g * 5 + 1 END
FROM generate_series(1, 3000) g;
INSERT INTO probe SELECT 3000 + g, 50 FROM generate_series(1, 20) g;
ANALYZE probe;
});
my $nl = 'SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;';
my %joins = (
	'EXISTS' => 'SELECT count(*), sum(p.id) FROM probe p WHERE EXISTS (SELECT 1 FROM wide w WHERE w.k = p.k)',
	'NOT EXISTS' => 'SELECT count(*), sum(p.id) FROM probe p WHERE NOT EXISTS (SELECT 1 FROM wide w WHERE w.k = p.k)',
	'inner join' => 'SELECT count(*), sum(p.id), sum(w.id) FROM probe p JOIN wide w ON w.k = p.k',
	'left join' => 'SELECT count(*), sum(p.id), sum(w.id) FROM probe p LEFT JOIN wide w ON w.k = p.k',
	'IN (SELECT)' => 'SELECT count(*), sum(p.id) FROM probe p WHERE p.k IN (SELECT w.k FROM wide w)',
	'int4 outer key' => 'SELECT count(*), sum(p.id) FROM probe p WHERE EXISTS (SELECT 1 FROM wide w WHERE w.k = p.id)',
);
foreach my $name (sort keys %joins)
{
	my $q = $joins{$name};
	my $on = $node->safe_psql('postgres', "$nl $q");
	is($on, $node->safe_psql('postgres', "$nl SET bloomfilter.planner_guards = off; $q"),
		"join clause: same rows as without gates: $name");
	isnt($on, '', "join clause: $name: rows");
}
$plan = $node->safe_psql('postgres', "$nl EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $joins{'NOT EXISTS'}");
like($plan, qr/Nested Loop Anti Join(.*\n)*\s+->  Custom Scan \(BloomGuard\) \(actual rows=[0-9.]+ loops=3020\)\n\s+Guard: wide_g\n\s+Guard Keys: p\.k\n\s+Guard Checks: 3020\n\s+Scans Skipped: (\d+)/,
	'join clause: the anti join\'s inner index scan is gated on each outer row');
my ($skips) = $plan =~ /Scans Skipped: (\d+)/;
ok(defined $skips && $skips >= 2600 && $skips <= 2730,
	'join clause: the scans of absent keys (and NULL ones) are skipped (' . ($skips // 'none') . ')');
$plan = $node->safe_psql('postgres', "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_indexscan = off;
	EXPLAIN (COSTS OFF) $joins{'inner join'}");
like($plan, qr/Memoize\n(.*\n)*\s+->  Custom Scan \(BloomGuard\)\n\s+Guard: wide_g\n\s+Guard Keys: p\.k\n\s+->  Bitmap Heap Scan on wide w/,
	'join clause: gated under a Memoize, over a bitmap scan');

# ---------------------------------------------------------------------
# 5. Crash and restart: no rebuild, "no" at once
# ---------------------------------------------------------------------
$node->stop('immediate');
$node->start;
$plan = $node->safe_psql('postgres',
	'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM acct WHERE k = 123456789');
like($plan, $skipped, 'after a crash: the first gated lookup answers "no"');
is($node->safe_psql('postgres', q{SELECT count(*) FROM generate_series(100000, 101999) g
	WHERE EXISTS (SELECT 1 FROM acct WHERE k = g)}), '2000',
	'after a crash: every committed key is found');

# ---------------------------------------------------------------------
# 6. No preloading at all
# ---------------------------------------------------------------------
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE p (k int4, pad text);
INSERT INTO p SELECT g, 'x' FROM generate_series(1, 100000) g;
CREATE INDEX p_g ON p USING bloomguard (k);
CREATE TABLE f (bf bloomfilter);
INSERT INTO f SELECT bloom_agg(g, 2000000, 0.01) FROM generate_series(1, 1000) g;
ANALYZE;
});
my $out = $plain->safe_psql('postgres', q{
SET plan_cache_mode = force_generic_plan;
PREPARE q(int) AS SELECT count(*) FROM p WHERE k = $1;
EXPLAIN (COSTS OFF) EXECUTE q(-1);
SELECT '--';
SELECT txid_current();
SELECT '--';
EXPLAIN (COSTS OFF) EXECUTE q(-1);
SELECT '--';
EXPLAIN (COSTS OFF) SELECT count(*) FROM p WHERE k = -1;
SELECT '--';
EXPLAIN (COSTS OFF) SELECT count(*) FROM p WHERE (SELECT bf FROM f) @> k;
});
my @part = split /\n--\n/, $out;
unlike($part[0], qr/BloomGuard/, 'no preloading: the plan that loaded the library has no gate');
like($part[2], qr/BloomGuard/, 'no preloading: the cached plan is made again, with its gate, in a later transaction');
like($part[3], qr/BloomGuard/, 'no preloading: later plans of the session have gates');
like($part[4], qr/BloomBatch/, 'no preloading: BloomBatch is planned');

# 8. bloomfilter.planner_guards set by the operator: in postgresql.conf
#    with the library preloaded (its prefix reserved at start, no setting of
#    it dropped) and without (a placeholder taken up when it loads), and by
#    ALTER SYSTEM.
for my $preload ('shared_preload_libraries', 'session_preload_libraries')
{
	$plain->append_conf('postgresql.conf',
		"$preload = 'bloomfilter'\nbloomfilter.planner_guards = off\n");
	my $log_start = -s $plain->logfile;
	$plain->restart;
	is($plain->safe_psql('postgres', 'SHOW bloomfilter.planner_guards'), 'off',
		"$preload: planner_guards = off in postgresql.conf is in force");
	unlike(slurp_file($plain->logfile, $log_start), qr/invalid configuration parameter name/,
		"$preload: no setting of the library is dropped at start");
	unlike($plain->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT * FROM p WHERE k = 5'),
		qr/BloomGuard/, "$preload: the operator turned gates off: none is planned");
	$plain->safe_psql('postgres', 'ALTER SYSTEM SET bloomfilter.planner_guards = on');
	$plain->restart;
	like($plain->safe_psql('postgres', 'SHOW bloomfilter.planner_guards; EXPLAIN (COSTS OFF) SELECT * FROM p WHERE k = 5'),
		qr/^on\n(.*\n)*.*BloomGuard/, "$preload: ALTER SYSTEM SET planner_guards = on is in force");
	$plain->safe_psql('postgres', 'ALTER SYSTEM RESET bloomfilter.planner_guards');
}
my ($rc, $o, $e) = $plain->psql('postgres', 'SET bloomfilter.planer_guards = off');
like($e, qr/invalid configuration parameter name|unrecognized configuration parameter/,
	'a misspelled bloomfilter.* setting is refused (the prefix is reserved)');
$plain->stop;

done_testing();
