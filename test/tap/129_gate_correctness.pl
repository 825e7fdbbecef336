# Planner gates return what the plan without them returns: one case per
# class of defect found by the reviews of issue 26, each of which failed
# before its fix.
#  1. SERIALIZABLE: a gate's "no" skipped the scan and with it the predicate
#     lock by which a concurrent insert of the key is a conflict: two
#     transactions that each found no row and inserted one both committed.
#  2. A Parallel Index Scan of "k = ANY (keys)" below a gate: the leader
#     narrowed the keys, the workers (whose gates answer "maybe") did not,
#     and the participants of one shared scan searched different arrays.
#  3. A gate evaluated its key where the scan never would: a cast of a text
#     parameter, a division by a parameter, an InitPlan, on an empty table,
#     under LIMIT 0 or below an empty outer side.
#  4. Parallel mode: reading the guards' definitions took GetLatestSnapshot(),
#     which a parallel operation may not (XX000).
#  5. WHERE CURRENT OF a cursor (DECLARE, PL/pgSQL) over a gated lookup.
#  6. bloomfilter.planner_guards set in postgresql.conf was dropped at start
#     ("invalid configuration parameter name").
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $node = shared_node('main', qq{
jit = off
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
});

$node->safe_psql('postgres', q{
CREATE TABLE acct (k int8, note text);
INSERT INTO acct SELECT i, 'n' || i FROM generate_series(1, 20000) i;
CREATE INDEX ON acct (k);
CREATE TABLE empty_t (k int4);
CREATE TABLE wide (k int8, pad text);
INSERT INTO wide SELECT i, repeat('x', 200) FROM generate_series(1, 200000) i;
CREATE INDEX ON wide (k);
CREATE TABLE cur_t (k int8, v int);
INSERT INTO cur_t SELECT i, 0 FROM generate_series(1, 1000) i;
CREATE TABLE events (id int8, day int) PARTITION BY RANGE (day);
CREATE TABLE events_0 PARTITION OF events FOR VALUES FROM (0) TO (10);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM (10) TO (20);
INSERT INTO events SELECT i, i % 20 FROM generate_series(1, 2000) i;
ANALYZE;
SELECT bloom_guard('acct', 'k');
SELECT bloom_guard('empty_t', 'k');
SELECT bloom_guard('wide', 'k');
SELECT bloom_guard('cur_t', 'k');
SELECT bloom_guard('events', 'id');
});
foreach my $g ('acct.k', 'empty_t.k', 'wide.k', 'cur_t.k', 'events.id')
{
	is($node->safe_psql('postgres', "SELECT bloom_shared_wait('public.$g', 60000)"),
		't', "$g: the filter is ready");
}

# Rows (or the SQLSTATE) of $sql after $settings, with guards and batching
# on and off.
sub on_off
{
	my ($settings, $sql) = @_;
	my %r;
	foreach my $on ('on', 'off')
	{
		my ($state, $err, $out) = sqlstate($node, 'postgres',
			"SET bloomfilter.planner_guards = $on; SET bloomfilter.batch_checks = $on;\n"
			  . "$settings\n$sql");
		$r{$on} = $state eq 'OK' ? $out : "error $state";
	}
	return ($r{on}, $r{off});
}

# ---------------------------------------------------------------------
# 1. SERIALIZABLE: the second of two transactions that each saw no row for
#    777777 and inserted it fails with 40001, as without guards.
# ---------------------------------------------------------------------
foreach my $on ('on', 'off')
{
	$node->safe_psql('postgres', 'DELETE FROM acct WHERE k = 777777');
	my ($a, $b) = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 2;
	foreach my $s ($a, $b)
	{
		$s->query_safe("SET bloomfilter.planner_guards = $on");
		$s->query_safe('BEGIN ISOLATION LEVEL SERIALIZABLE');
		is($s->query_safe('SELECT count(*) FROM acct WHERE k = 777777'), '0',
			"SERIALIZABLE, guards $on: no row for the key yet");
	}
	# the second insert or its commit fails with 40001
	$a->query_safe("INSERT INTO acct VALUES (777777, 'a')");
	$b->query("INSERT INTO acct VALUES (777777, 'b')");
	$a->query_safe('COMMIT');
	$b->query('COMMIT');
	$a->quit;
	$b->quit;
	is($node->safe_psql('postgres', 'SELECT count(*) FROM acct WHERE k = 777777'), '1',
		"SERIALIZABLE, guards $on: write skew is caught (one of the two inserts commits)");
}
my $plan = $node->safe_psql('postgres', q{SET default_transaction_isolation = serializable;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM acct WHERE k = 888888});
unlike($plan, qr/not initialized/, 'SERIALIZABLE: the gated scan runs (its predicate lock is taken)');
$plan = $node->safe_psql('postgres', q{
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM acct WHERE k = 888888});
like($plan, qr/not initialized/, 'READ COMMITTED: the same gate skips the scan');

# ---------------------------------------------------------------------
# 2. A Parallel Index Scan of "k = ANY (keys)" with present and absent keys.
# ---------------------------------------------------------------------
my $parallel = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_index_scan_size = 0; SET min_parallel_table_scan_size = 0;
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SET parallel_leader_participation = on;};
# enough keys (a sixth of the table) for the planner to choose a parallel scan
my $keys = join(',', map { $_ * 5 } 1 .. 30000) . ',' . join(',', map { 5_000_000 + $_ } 1 .. 1000);
my $any = "SELECT count(*), sum(k) FROM wide WHERE k = ANY ('{$keys}'::int8[])";
$plan = $node->safe_psql('postgres', "$parallel EXPLAIN (COSTS OFF) $any");
like($plan, qr/Parallel Index (Only )?Scan/, 'the lookup is a parallel index scan');
unlike($plan, qr/bloom_shared_gate_elements/, 'a parallel-aware index scan is not narrowed');
my ($on, $off) = on_off($parallel, $any);
is($on, $off, 'parallel index scan of present and absent keys: the same rows on and off');
is($on, '30000|' . (5 * 30000 * 30001 / 2), 'parallel index scan: every present key found once');
# the same keys in a serial plan are narrowed, and the answer is the same
$plan = $node->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off;
	SET max_parallel_workers_per_gather = 0; EXPLAIN (COSTS OFF) $any");
like($plan, qr/narrowed/, 'a serial index scan is narrowed');
($on, $off) = on_off('SET enable_seqscan = off; SET max_parallel_workers_per_gather = 0;', $any);
is($on, $off, 'serial narrowed index scan: the same rows on and off');

# ---------------------------------------------------------------------
# 3. Keys that can fail to evaluate are not gated on.
# ---------------------------------------------------------------------
my $generic = 'SET plan_cache_mode = force_generic_plan;';
my @fail_cases = (
	[ 'a cast of a text parameter on an empty table',
	  "PREPARE p(text) AS SELECT * FROM empty_t WHERE k = \$1::int4; EXECUTE p('abc');" ],
	[ 'a division by a parameter on an empty table',
	  'PREPARE p(int4) AS SELECT * FROM empty_t WHERE k = 10 / $1; EXECUTE p(0);' ],
	[ 'a cast of a text parameter under LIMIT 0',
	  "PREPARE p(text) AS SELECT * FROM acct WHERE k = \$1::int8 LIMIT 0; EXECUTE p('abc');" ],
	[ 'a cast below an empty outer side',
	  "PREPARE p(text) AS SELECT count(*) FROM generate_series(1, 0) g,
	     LATERAL (SELECT * FROM acct WHERE k = \$1::int8 AND note > g::text) a; EXECUTE p('abc');" ],
	[ 'a division by a parameter on a partitioned table under LIMIT 0',
	  'PREPARE p(int4) AS SELECT * FROM events WHERE id = 10 / $1 LIMIT 0; EXECUTE p(0);' ],
	[ 'an InitPlan that fails, on an empty table',
	  'SELECT * FROM empty_t WHERE k = (SELECT 1 / (random() * 0)::int4);' ],
);
foreach my $case (@fail_cases)
{
	my ($name, $sql) = @$case;
	($on, $off) = on_off($generic, $sql);
	like($off, qr/^0?$/, "$name: guards off succeed with no rows");
	is($on, $off, "$name: guards on succeed too");
}
# a leakproof function of strings whose inputs' collations conflict fails
# when evaluated (review of the fix): no gate, as for any other failing key
$node->safe_psql('postgres', q{
CREATE TABLE empty_txt (k text);
CREATE TABLE coll_o (a text COLLATE "C", b text COLLATE "POSIX");
INSERT INTO coll_o VALUES ('x', 'y');
SELECT bloom_guard('empty_txt', 'k');
CREATE FUNCTION coll_f() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE a text COLLATE "C" := 'x'; b text COLLATE "POSIX" := 'y'; n bigint;
BEGIN SELECT count(*) INTO n FROM empty_txt WHERE k = text_larger(a, b); RETURN n; END $$;
});
is($node->safe_psql('postgres', "SELECT bloom_shared_wait('public.empty_txt.k', 60000)"), 't',
	'empty_txt.k: the filter is ready');
foreach my $case (
	[ 'text_larger of outer columns with conflicting collations',
	  'SELECT (SELECT count(*) FROM empty_txt e WHERE e.k = text_larger(o.a, o.b)) FROM coll_o o' ],
	[ 'text_larger of PL/pgSQL variables with conflicting collations', 'SELECT coll_f()' ])
{
	# (a custom plan of the function folds the call at plan time and fails
	# either way; what matters is that both end alike)
	($on, $off) = on_off('', $case->[1]);
	like($off, qr/^(0|error 42P22)$/, "$case->[0]: guards off");
	is($on, $off, "$case->[0]: guards on end as guards off");
}
# a sample scan checks its arguments on any table: no gate hides their error
($on, $off) = on_off('', q{SELECT count(*) FROM acct TABLESAMPLE BERNOULLI (200) WHERE k = 999999999});
is($off, 'error 2202H', 'TABLESAMPLE with a bad percentage: guards off fail');
is($on, $off, 'TABLESAMPLE with a bad percentage: guards on fail the same way');

$plan = $node->safe_psql('postgres', "$generic PREPARE p(text) AS SELECT * FROM acct WHERE k = \$1::int8;
	EXPLAIN (COSTS OFF) EXECUTE p('1')");
unlike($plan, qr/bloom_shared_gate|BloomGate/, 'a cast of a parameter gets no gate');
$plan = $node->safe_psql('postgres', "$generic PREPARE p(int8) AS SELECT * FROM acct WHERE k = \$1;
	EXPLAIN (COSTS OFF) EXECUTE p(1)");
like($plan, qr/BloomGate/, 'a plain parameter still gets its gate');
($on, $off) = on_off($generic, 'PREPARE p(int8) AS SELECT count(*) FROM acct WHERE k = $1; EXECUTE p(5); EXECUTE p(9999999);');
is($on, "1\n0", 'a gated parameter: present and absent keys');
is($on, $off, 'a gated parameter: the same rows on and off');
# a value of the parent query (a correlated subquery) is still gated
my $corr = 'SELECT g, (SELECT count(*) FROM acct WHERE k = g OFFSET 0) FROM generate_series(19998, 20002) g ORDER BY g';
$plan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $corr");
like($plan, qr/bloom_shared_gate/, "a correlated subquery's key is gated");
($on, $off) = on_off('', $corr);
is($on, $off, 'correlated subquery: the same rows on and off');

# ---------------------------------------------------------------------
# 4. Parallel mode: the first read of the definitions in a parallel query.
# ---------------------------------------------------------------------
my $par_seq = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0; SET enable_indexscan = off;
	SET enable_bitmapscan = off;};
my $contains = q{SELECT count(*) FILTER (WHERE bloom_shared_contains('public.acct.k', k)) FROM acct};
$plan = $node->safe_psql('postgres', "$par_seq EXPLAIN (COSTS OFF) $contains");
like($plan, qr/Gather/, 'bloom_shared_contains over a parallel scan');
# each psql is a fresh session: nothing is cached yet
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM acct');
($on, $off) = on_off($par_seq, $contains);
is($on, $rows, 'bloom_shared_contains in a parallel query of a fresh session: no error');
is($on, $off, 'bloom_shared_contains in parallel: the same answer on and off');
# definitions changing during a parallel gated query
$node->safe_psql('postgres', q{
CREATE FUNCTION slow_key() RETURNS int8 LANGUAGE plpgsql PARALLEL RESTRICTED
AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN 5; END $$;
CREATE TABLE other_t (k int8);
});
my $bg = $node->background_psql('postgres');
$bg->query_until(qr/started/, q{\echo started
SELECT pg_sleep(0.2); SELECT bloom_guard('other_t', 'k'); SELECT pg_sleep(0.2); SELECT bloom_unguard('other_t', 'k');
});
($on, $off) = on_off($par_seq, 'SELECT count(*) FROM acct WHERE k = (SELECT slow_key())');
$bg->quit;
is($on, '1', 'an InitPlan key in a parallel query while guards change: no error');
is($on, $off, 'an InitPlan key in a parallel query: the same rows on and off');

# ---------------------------------------------------------------------
# 5. WHERE CURRENT OF a cursor over a gated lookup.
# ---------------------------------------------------------------------
foreach my $on ('on', 'off')
{
	my $out = $node->safe_psql('postgres', qq{
SET bloomfilter.planner_guards = $on;
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM cur_t WHERE k = 7;
FETCH c;
UPDATE cur_t SET v = v + 1 WHERE CURRENT OF c;
COMMIT;
SELECT v FROM cur_t WHERE k = 7;
});
	like($out, qr/\n1$/, "DECLARE cursor, guards $on: WHERE CURRENT OF updates the row")
	  if $on eq 'on';
	like($out, qr/\n2$/, "DECLARE cursor, guards $on: WHERE CURRENT OF updates the row")
	  if $on eq 'off';
	$out = $node->safe_psql('postgres', qq{
SET bloomfilter.planner_guards = $on;
DO \$\$
DECLARE
	c CURSOR (key int8) FOR SELECT * FROM cur_t WHERE k = key;
	r record;
BEGIN
	OPEN c(8);
	FETCH c INTO r;
	UPDATE cur_t SET v = v + 10 WHERE CURRENT OF c;
	CLOSE c;
END
\$\$;
SELECT v FROM cur_t WHERE k = 8;
});
	is($out, $on eq 'on' ? '10' : '20', "PL/pgSQL cursor, guards $on: WHERE CURRENT OF updates the row");
	$out = $node->safe_psql('postgres', qq{
SET bloomfilter.planner_guards = $on;
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM events WHERE id = 7;
FETCH c;
DELETE FROM events WHERE CURRENT OF c;
ROLLBACK;
});
	like($out, qr/^7\|7$/, "DECLARE cursor over a partitioned table, guards $on: WHERE CURRENT OF deletes");
}
$plan = $node->safe_psql('postgres', q{BEGIN; EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR SELECT * FROM cur_t WHERE k = 7; ROLLBACK});
like($plan, qr/One-Time Filter: bloom_shared_gate/, "a cursor's plan keeps its gating Result");
unlike($plan, qr/BloomGate/, "a cursor's plan has no BloomGate");
my ($state, $err) = sqlstate($node, 'postgres', q{BEGIN;
DECLARE c CURSOR FOR SELECT * FROM cur_t WHERE k = 99999;
FETCH c;
UPDATE cur_t SET v = 0 WHERE CURRENT OF c;});
is($state, '24000', 'WHERE CURRENT OF a cursor whose gate said "no": not positioned on a row, as without guards');

# ---------------------------------------------------------------------
# 6. bloomfilter.planner_guards in postgresql.conf, ALTER SYSTEM and -c.
# ---------------------------------------------------------------------
$node->append_conf('postgresql.conf', "bloomfilter.planner_guards = off\n");
my $log_start = -s $node->logfile;
$node->restart;
is($node->safe_psql('postgres', 'SHOW bloomfilter.planner_guards'), 'off',
	'planner_guards = off in postgresql.conf is in force after a restart');
my $log = slurp_file($node->logfile, $log_start);
unlike($log, qr/invalid configuration parameter name/, 'no setting of the library is dropped at start');
$plan = $node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT * FROM acct WHERE k = 5');
unlike($plan, qr/bloom_shared_gate|BloomGate/, 'the operator turned gates off: none is planned');
$node->safe_psql('postgres', 'ALTER SYSTEM SET bloomfilter.planner_guards = on');
$node->restart;
is($node->safe_psql('postgres', 'SHOW bloomfilter.planner_guards'), 'on',
	'ALTER SYSTEM SET bloomfilter.planner_guards is in force after a restart');
# a misspelled setting of the library's prefix is still refused
($state, $err) = sqlstate($node, 'postgres', 'SET bloomfilter.planer_guards = off');
isnt($state, 'OK', 'a misspelled bloomfilter.* setting is refused');

$node->stop;
done_testing();
