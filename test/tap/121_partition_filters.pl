# A guard on a partitioned table keeps one filter per leaf partition.
#
# 1. Each leaf (sub-partitions and the default partition included) has its
#    own filter, built from its own rows only; the view sums them.
# 2. A lookup of a present key by a non-partition key scans one partition:
#    the others' gates say "no" (skipped scans), where one filter for the
#    whole tree skipped none.
# 3. Randomized equivalence with guards on and off in one snapshot (fresh
#    plans, PL/pgSQL's cached generic plans, = ANY arrays with NULLs and
#    duplicates), zero false negatives of bloom_shared_contains, while
#    pgbench inserts and moves rows between partitions (never into days
#    10-29, whose partitions are detached for a while; only rows of the
#    initial keys move, so the keys the steps add stay), and between rounds:
#    CREATE ... PARTITION OF, ATTACH of a table with rows, DETACH,
#    re-ATTACH of a table written while detached, DETACH CONCURRENTLY of a
#    sub-partition and its re-ATTACH, DROP of a partition, an UPDATE of the
#    partition key.
# 4. A generic plan cached in a session across ATTACH and DETACH.
# 5. A partition whose guard trigger is disabled: its filter is suspended
#    and its scan not skipped, the others' are; bloom_shared_add adds to
#    every partition's filter; bloom_shared_get refuses.
# 6. DETACH and DROP of a partition rolled back (also to a savepoint): the
#    partition keeps its filter (freed only at commit); DETACH and re-ATTACH
#    in one transaction.
# 7. ATTACH of a table guarded itself: 55000 with a hint, not PostgreSQL's
#    duplicate-trigger error; after bloom_unguard it attaches.
# 8. A partition created when no slot is free: a WARNING, the view says
#    "incomplete", its rows are found.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $node = shared_node('main', qq{
bloomfilter.max_shared_filters = 64
max_connections = 30
jit = off
});
my $name = 'public.events.event_id';

$node->safe_psql('postgres', q{
CREATE TABLE events (event_id int8 NOT NULL, day int NOT NULL, payload text)
	PARTITION BY RANGE (day);
CREATE TABLE events_0 PARTITION OF events FOR VALUES FROM (0) TO (10);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM (10) TO (20);
CREATE TABLE events_2 PARTITION OF events FOR VALUES FROM (20) TO (30)
	PARTITION BY LIST ((day % 2));
CREATE TABLE events_2e PARTITION OF events_2 FOR VALUES IN (0);
CREATE TABLE events_2o PARTITION OF events_2 FOR VALUES IN (1);
CREATE TABLE events_def PARTITION OF events DEFAULT;
INSERT INTO events SELECT i, (i * 7) % 45, 'p' FROM generate_series(1, 45000) i;
CREATE INDEX ON events (event_id);
CREATE SEQUENCE ev_seq START 1000001;
ANALYZE events;
SELECT bloom_guard('events', 'event_id');
});
wait_ready($node, 'postgres', $name, 'setup');

# ------------------------------------------------------------ 1. filters ----
sub per_partition
{
	return $node->safe_psql('postgres', q{
SELECT string_agg(i.partition::text || '=' || i.keys_added || '/' ||
				  (SELECT count(*) FROM events e WHERE e.tableoid = i.partition), ','
				  ORDER BY i.partition::text)
  FROM bloom_shared_filters_info() i WHERE i.name = 'public.events.event_id'});
}
is(per_partition(),
	'events_0=10000/10000,events_1=10000/10000,events_2e=5000/5000,events_2o=5000/5000,events_def=15000/15000',
	'one filter per leaf partition, each holding its own rows only');
is($node->safe_psql('postgres',
	"SELECT state || ' ' || partitions || ' ' || keys_added FROM bloom_shared_filters WHERE name = '$name'"),
	'ready 5 45000', 'the view: one row, the sum over 5 partitions');

# ------------------------------------------------- 2. one partition read ----
sub skipped
{
	return $node->safe_psql('postgres',
		"SELECT skipped_scans FROM bloom_shared_filters WHERE name = '$name'");
}
my $before = skipped();
my $found = $node->safe_psql('postgres', q{
CREATE FUNCTION lookups() RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; key int8;
BEGIN
	FOR k IN 1 .. 200 LOOP
		-- a variable (k * 200, which can overflow, would get no gate)
		key := k * 200;
		n := n + (SELECT count(*) FROM events WHERE event_id = key);
	END LOOP;
	RETURN n;
END $$;
SELECT lookups()});
is($found, '200', 'present keys are found');
my $skips = skipped() - $before;
cmp_ok($skips, '>=', 200 * 4 * 0.9,
	"a present key's lookup skips the partitions that do not hold it ($skips of 800)");

# -------------------------------------------- 3. randomized equivalence ----
$node->safe_psql('postgres', q{
CREATE TABLE eq_failures (what text, key text, got bigint, want bigint);
-- count of rows with the key, guards on (dynamic and cached generic plans)
-- against guards off, in one snapshot
CREATE FUNCTION eq_cached(k int8) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RETURN (SELECT count(*) FROM events WHERE event_id = k); END $$;
CREATE FUNCTION eq_cached_any(ks int8[]) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RETURN (SELECT count(*) FROM events WHERE event_id = ANY (ks)); END $$;
CREATE FUNCTION eq_round(n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	k int8;
	ks int8[];
	got bigint;
	want bigint;
	bad bigint := 0;
BEGIN
	FOR i IN 1 .. n LOOP
		IF random() < 0.5 THEN
			SELECT event_id INTO k FROM events OFFSET floor(random() * 1000) LIMIT 1;
		ELSE
			k := (random() * 2000000)::int8;
		END IF;
		ks := ARRAY[k, NULL, k, (random() * 2000000)::int8, -1];
		PERFORM set_config('bloomfilter.planner_guards', 'on', true);
		EXECUTE 'SELECT count(*) FROM events WHERE event_id = ' || k INTO got;
		PERFORM set_config('bloomfilter.planner_guards', 'off', true);
		EXECUTE 'SELECT count(*) FROM events WHERE event_id = ' || k INTO want;
		IF got <> want THEN
			INSERT INTO eq_failures VALUES ('literal', k, got, want); bad := bad + 1;
		END IF;
		PERFORM set_config('bloomfilter.planner_guards', 'on', true);
		got := eq_cached(k);
		IF got <> want THEN
			INSERT INTO eq_failures VALUES ('cached', k, got, want); bad := bad + 1;
		END IF;
		got := eq_cached_any(ks);
		PERFORM set_config('bloomfilter.planner_guards', 'off', true);
		want := (SELECT count(*) FROM events WHERE event_id = ANY (ks));
		IF got <> want THEN
			INSERT INTO eq_failures VALUES ('any', ks::text, got, want); bad := bad + 1;
		END IF;
		PERFORM set_config('bloomfilter.planner_guards', 'on', true);
	END LOOP;
	RETURN bad;
END $$;
ALTER FUNCTION eq_cached(int8) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION eq_cached_any(int8[]) SET plan_cache_mode = force_generic_plan;
});

my $wdir = PostgreSQL::Test::Utils::tempdir;
PostgreSQL::Test::Utils::append_to_file("$wdir/write.sql", q{
\set d random(0, 24)
\if :d >= 10
\set d :d + 20
\endif
\set r random(1, 10)
\if :r <= 8
INSERT INTO events VALUES (nextval('ev_seq'), :d, 'w');
\else
UPDATE events SET day = :d, event_id = nextval('ev_seq') WHERE event_id = (SELECT max(event_id) FROM events WHERE day = (:d + 11) % 45 AND event_id < 1000000);
\endif
});
my ($bout, $berr) = ('', '');
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-T', '60', '-f', "$wdir/write.sql",
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$bout, '2>', \$berr);

# a session whose generic plan is cached before the DDL below
my $cached = $node->background_psql('postgres');
$cached->query_safe('SET plan_cache_mode = force_generic_plan');
$cached->query_safe('PREPARE q(int8) AS SELECT count(*) FROM events WHERE event_id = $1');
is($cached->query_safe('EXECUTE q(200)'), '1', 'cached plan: a key found');

my @ddl = (
	[ 'CREATE ... PARTITION OF',
	  q{CREATE TABLE events_3 PARTITION OF events FOR VALUES FROM (45) TO (50)},
	  q{INSERT INTO events VALUES (2000001, 46, 'n')}, 2000001 ],
	[ 'ATTACH of a table with rows',
	  q{CREATE TABLE events_4 (LIKE events); INSERT INTO events_4 SELECT 3000000 + i, 55, 'a' FROM generate_series(1, 500) i; ALTER TABLE events ATTACH PARTITION events_4 FOR VALUES FROM (50) TO (60)},
	  q{SELECT 1}, 3000007 ],
	[ 'DETACH',
	  q{ALTER TABLE events DETACH PARTITION events_1},
	  q{INSERT INTO events_1 VALUES (4000001, 12, 'detached')}, 2000001 ],
	[ 're-ATTACH of a table written while detached',
	  q{ALTER TABLE events ATTACH PARTITION events_1 FOR VALUES FROM (10) TO (20)},
	  q{SELECT 1}, 4000001 ],
	[ 'DETACH CONCURRENTLY of a sub-partition, re-ATTACH',
	  q{ALTER TABLE events_2 DETACH PARTITION events_2o CONCURRENTLY},
	  q{INSERT INTO events_2o VALUES (4000003, 21, 'out');
		ALTER TABLE events_2 ATTACH PARTITION events_2o FOR VALUES IN (1)}, 4000003 ],
	[ 'DROP of a partition',
	  q{DROP TABLE events_4},
	  q{SELECT 1}, 2000001 ],
	[ 'UPDATE of the partition key',
	  q{UPDATE events SET day = 23, event_id = 5000001 WHERE event_id = 200},
	  q{SELECT 1}, 5000001 ],
);
for my $step (@ddl)
{
	my ($what, $ddl, $then, $key) = @$step;
	$node->safe_psql('postgres', $ddl);
	$node->safe_psql('postgres', $then);
	is($node->safe_psql('postgres', "SELECT count(*) FROM events WHERE event_id = $key"),
		'1', "$what: the key is found at once");
	is($cached->query_safe("EXECUTE q($key)"), '1', "$what: the cached generic plan finds it");
	my $bad = $node->safe_psql('postgres',
		'BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT eq_round(150); COMMIT');
	is($bad, '0', "$what: guards on and off give the same rows")
	  or diag($node->safe_psql('postgres', 'SELECT * FROM eq_failures'));
	no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', $what);
}
$bench->finish;
is($?, 0, 'pgbench wrote concurrently') or diag($berr);
like($bout, qr/number of transactions actually processed: [1-9]/, 'pgbench: transactions');
ok(poll_for($node, 'postgres', "SELECT bloom_shared_wait('$name', 60000)", 't', 90),
	'every partition filter is ready again');
no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', 'after the workload');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM bloom_shared_filters_info() i
 WHERE i.name = 'public.events.event_id' AND i.partition IS NOT NULL
   AND i.partition NOT IN (SELECT c.oid FROM pg_class c WHERE c.relispartition AND c.relkind = 'r')}),
	'0', 'no filter is left for a table that left the tree');
is($node->safe_psql('postgres', q{
SELECT string_agg(i.partition::text, ',' ORDER BY i.partition::text)
  FROM bloom_shared_filters_info() i WHERE i.name = 'public.events.event_id'}),
	'events_0,events_1,events_2e,events_2o,events_3,events_def',
	'the filters follow the partitions');
$cached->quit;

# ------------------------------------------------------ 5. a suspended leaf ----
$node->safe_psql('postgres', q{
ALTER TABLE events_0 DISABLE TRIGGER USER;
INSERT INTO events VALUES (6000001, 3, 'unseen')});
ok(poll_for($node, 'postgres', q{
SELECT string_agg(state, ',' ORDER BY partition = 'events_0'::regclass, state)
  FROM (SELECT DISTINCT partition, state FROM bloom_shared_filters_info()
		 WHERE name = 'public.events.event_id') s},
	'ready,ready,ready,ready,ready,suspended', 60),
	'a partition with its trigger disabled: its filter is suspended, the others are ready');
is($node->safe_psql('postgres', "SELECT state FROM bloom_shared_filters WHERE name = '$name'"),
	'suspended', 'the view shows the guard suspended');
is($node->safe_psql('postgres', 'SELECT count(*) FROM events WHERE event_id = 6000001'),
	'1', 'a row written while it was disabled is found');
is($node->safe_psql('postgres',
	"SELECT bloom_shared_contains('$name', 6000001::int8)"), 't',
	'bloom_shared_contains answers "maybe" for it');
$before = skipped();
$node->safe_psql('postgres', 'SELECT count(*) FROM events WHERE event_id = -5');
is(skipped() - $before, 5, 'the other partitions are still skipped');
$node->safe_psql('postgres', 'ALTER TABLE events_0 ENABLE TRIGGER USER');
wait_ready($node, 'postgres', $name, 'trigger enabled again');
no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', 'after the rebuild');
$node->safe_psql('postgres', "SELECT bloom_shared_add('$name', 77777777::int8)");
$before = skipped();
is($node->safe_psql('postgres', 'SELECT count(*) FROM events WHERE event_id = 77777777'), '0',
	'a key added by hand: no row');
is(skipped() - $before, 0, 'bloom_shared_add: every partition\'s filter holds the key (no scan skipped)');
my ($st) = sqlstate($node, 'postgres', "SELECT bloom_shared_get('$name')");
is($st, '0A000', 'bloom_shared_get of a table guarded per partition: 0A000');

# ------------------------------------------------- 6. the BloomGate node ----
# A gate on constants or external parameters is checked at ExecutorStart:
# a partition whose filter says "no" is never initialized.  Every query is
# compared with its result under bloomfilter.planner_guards = off.
sub both
{
	my ($sql, $setup) = @_;
	$setup //= '';
	my $on = $node->safe_psql('postgres', "$setup; $sql");
	my $off = $node->safe_psql('postgres',
		"$setup; SET bloomfilter.planner_guards = off; $sql");
	return ($on, $off);
}
sub same
{
	my ($what, $sql, $setup, $want) = @_;
	my ($on, $off) = both($sql, $setup);
	is($on, $off, "$what: guards on and off give the same rows");
	is($on, $want, "$what: the expected rows") if defined $want;
}

# keys of three partitions' rows (the workload above moved some initial keys)
$node->safe_psql('postgres',
	"INSERT INTO events VALUES (9100400, 5, 'p'), (9100600, 15, 'p'), (9100800, 25, 'p'); ANALYZE events");
like($node->safe_psql('postgres',
	'EXPLAIN (COSTS OFF) SELECT * FROM events WHERE event_id = 9100400'),
	qr/Custom Scan \(BloomGate\)\n\s+One-Time Filter: bloom_shared_gate\('\d+'::bigint, 'events_0'::regclass, 9100400\)\n\s+->  (Index|Bitmap|Seq)/,
	'EXPLAIN: a BloomGate node holds the gate and the scan');
my $ea = $node->safe_psql('postgres',
	'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM events WHERE event_id = 9100400');
my ($skipped_parts) = $ea =~ /Partitions Skipped: (\d+)/;
my $gates = () = $ea =~ /Custom Scan \(BloomGate\)/g;
my $scans = () = $ea =~ /Scan (using|on) events_/g;
is(($skipped_parts // 'none') . " $gates $scans", '5 1 1',
	'EXPLAIN ANALYZE: BloomAppend skipped five partitions (no node), one gate and scan left')
  or diag($ea);
like($ea, qr/^\s*Custom Scan \(BloomAppend\) \(actual rows=1(\.00)? loops=1\)/m,
	'EXPLAIN ANALYZE: BloomAppend in place of the Append');
like($ea, qr/BloomGate\) \(actual rows=1(\.00)? loops=1\)/, 'EXPLAIN ANALYZE: the row comes through the gate');
same('a present key', 'SELECT * FROM events WHERE event_id = 9100400', '', '9100400|5|p');
same('an absent key', 'SELECT * FROM events WHERE event_id = 9999999', '', '');
same('an IN list, projected', 'SELECT event_id * 2, day FROM events WHERE event_id IN (9100400, 9100600, -3, 9999999) ORDER BY 1');
same('an index-only scan', 'SELECT event_id FROM events WHERE event_id = ANY (ARRAY[9100400, 601, 9999999]) ORDER BY 1',
	'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = off');
same('a sequential scan', 'SELECT * FROM events WHERE event_id = 9100600',
	'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; SET max_parallel_workers_per_gather = 0');

# a generic plan and a PL/pgSQL function's cached plan, called repeatedly
same('a generic plan', q{
PREPARE g(int8) AS SELECT count(*) FROM events WHERE event_id = $1;
EXECUTE g(9100400); EXECUTE g(9999999); EXECUTE g(9100600); EXECUTE g(9100400); EXECUTE g(-1); EXECUTE g(9100800)},
	'SET plan_cache_mode = force_generic_plan');
same('a PL/pgSQL cached plan, 300 calls',
	'SELECT sum(eq_cached(k)), count(*) FILTER (WHERE eq_cached(k) > 0) FROM generate_series(1, 300) g, LATERAL (SELECT (44000 + g * 97 % 4000)::int8 AS k) k');

# a correlated subquery: the outer value is a PARAM_EXEC, the Result stays
my $corr = 'SELECT e.event_id, (SELECT max(x.day) FROM events x WHERE x.event_id = e.event_id) FROM events_0 e WHERE e.event_id < 60 ORDER BY 1';
my $cplan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) $corr");
like($cplan, qr/Result\n\s+One-Time Filter: bloom_shared_gate\([^\n]*, e\.event_id\)/,
	'correlated subquery: a Result checks the gate per outer row');
unlike($cplan, qr/BloomGate/, 'correlated subquery: no BloomGate node');
same('correlated subquery', $corr);

# a nested loop rescans the gate node; a merge join marks and restores
same('the inner side of a nested loop',
	'SELECT g, e.event_id FROM generate_series(1, 3) g JOIN events e ON e.event_id IN (9100400, 9100800, 9999999) AND e.day > g * 6 ORDER BY 1, 2',
	'SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off');
same('a merge join',
	'SELECT a.event_id, b.day FROM events a JOIN events b USING (event_id) WHERE a.event_id IN (9100400, 9100600, 9999999) AND b.event_id IN (9100400, 9100600, 9999999) ORDER BY 1',
	'SET enable_hashjoin = off; SET enable_nestloop = off');

# SCROLL cursor, backward
same('a SCROLL cursor fetched backward', q{
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT event_id, day FROM events WHERE event_id IN (9100400, 9100600, 9100800, 9999999) ORDER BY event_id;
FETCH ALL c; FETCH BACKWARD ALL c; FETCH ABSOLUTE 2 c; FETCH PRIOR c;
DECLARE u SCROLL CURSOR FOR SELECT event_id FROM events WHERE event_id = 9100600;
FETCH NEXT u; FETCH BACKWARD 1 u; FETCH NEXT u;
COMMIT}, '', "9100400|5\n9100600|15\n9100800|25\n9100800|25\n9100600|15\n9100400|5\n9100600|15\n9100400|5\n9100600\n9100600");

# BloomAppend: one key in four partitions (a sub-partition and the default
# one among them) read child after child, forward and backward, rescanned,
# mixed with other questions in one Append, NULL
$node->safe_psql('postgres',
	"INSERT INTO events VALUES (9100900, 5, 'm'), (9100900, 15, 'm'), (9100900, 27, 'm'), (9100900, 41, 'm')");
like($node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT * FROM events WHERE event_id = 9100900'),
	qr/^Custom Scan \(BloomAppend\)\n\s+->  Custom Scan \(BloomGate\)/, 'BloomAppend over the gates');
same('BloomAppend: a SCROLL cursor over four partitions', q{
BEGIN;
DECLARE m SCROLL CURSOR FOR SELECT day FROM events WHERE event_id = 9100900;
FETCH ALL m; FETCH BACKWARD ALL m; FETCH ABSOLUTE 3 m; FETCH PRIOR m; FETCH LAST m; FETCH NEXT m; FETCH BACKWARD 2 m;
COMMIT}, '', "5\n15\n27\n41\n41\n27\n15\n5\n27\n15\n41\n41\n27");
same('BloomAppend: rescanned by a nested loop',
	'SELECT g, e.day FROM generate_series(1, 30, 7) g, LATERAL (SELECT day FROM events WHERE event_id = 9100900 AND day > g) e ORDER BY 1, 2',
	'SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off');
same('BloomAppend: two keys and two tables in one Append', q{
SELECT 'a', day FROM events WHERE event_id = 9100900 UNION ALL SELECT 'b', day FROM events WHERE event_id = 9100400
UNION ALL SELECT 'c', day FROM events WHERE event_id = 9999999 UNION ALL SELECT 'd', day FROM events_1 WHERE event_id = 9100900
ORDER BY 1, 2});
same('BloomAppend: a generic plan with NULL and present keys', q{
PREPARE n(int8) AS SELECT string_agg(day::text, ',' ORDER BY day) FROM events WHERE event_id = $1;
EXECUTE n(NULL); EXECUTE n(9100900); EXECUTE n(9999999); EXECUTE n(9100900)},
	'SET plan_cache_mode = force_generic_plan', "\n5,15,27,41\n\n5,15,27,41");

like($node->safe_psql('postgres',
	'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM events WHERE event_id IN (9100400, 9999999)'),
	qr/^Custom Scan \(BloomAppend\) \(actual rows=1(\.00)? loops=1\)\n\s+Partitions Skipped: 5\n/,
	'BloomAppend over IN-list gates: five partitions skipped');
same('BloomAppend: IN lists with NULL, empty, duplicate keys', q{
SELECT count(*) FROM events WHERE event_id IN (NULL, 9100400);
SELECT count(*) FROM events WHERE event_id = ANY ('{}'::int8[]);
SELECT count(*) FROM events WHERE event_id = ANY (ARRAY[9100900, 9100900, 9999999]);
SELECT count(*) FROM events WHERE event_id IN (9999998, 9999999)}, '', "1\n0\n4\n0");
same('BloomAppend: a generic plan of = ANY ($1)', q{
PREPARE a(int8[]) AS SELECT string_agg(day::text, ',' ORDER BY day) FROM events WHERE event_id = ANY ($1);
EXECUTE a(NULL); EXECUTE a('{9100900,NULL}'); EXECUTE a('{}'); EXECUTE a('{9999999,9100400}'); EXECUTE a('{9999999}')},
	'SET plan_cache_mode = force_generic_plan', "\n5,15,27,41\n\n5\n");

# UPDATE and DELETE through the gate, rolled back
same('UPDATE and DELETE through the gate', q{
BEGIN;
UPDATE events SET payload = 'g' WHERE event_id = 9100400 RETURNING event_id, payload;
UPDATE events SET payload = 'g' WHERE event_id = 9999999 RETURNING event_id;
DELETE FROM events WHERE event_id = 9100600 RETURNING event_id;
DELETE FROM events WHERE event_id = -7 RETURNING event_id;
SELECT count(*) FROM events WHERE event_id IN (9100400, 9100600) AND payload = 'p';
ROLLBACK}, '', "9100400|g\n9100600\n0");
same('a prepared UPDATE, generic plan', q{
BEGIN;
PREPARE up(int8) AS UPDATE events SET payload = 'h' WHERE event_id = $1;
EXECUTE up(9100800); EXECUTE up(9999999);
SELECT event_id, payload FROM events WHERE event_id IN (9100800, 9999999);
ROLLBACK}, 'SET plan_cache_mode = force_generic_plan', '9100800|h');

# rows written earlier in the transaction and by the statement itself
same('rows of the same transaction', q{
BEGIN;
INSERT INTO events VALUES (8000001, 5, 'tx');
SELECT count(*) FROM events WHERE event_id = 8000001;
ROLLBACK}, '', '1');
$node->safe_psql('postgres', q{
CREATE FUNCTION seen(k int8) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RETURN (SELECT count(*) FROM events WHERE event_id = k); END $$});
same('rows of the writing statement, seen by a function it calls', q{
BEGIN;
INSERT INTO events SELECT 8000100 + i / 2, 5, seen(8000100 + i / 2)::text FROM generate_series(0, 3) i;
SELECT string_agg(payload, ',' ORDER BY event_id, payload) FROM events WHERE event_id >= 8000100 AND event_id < 8000200;
ROLLBACK}, '', '0,1,0,1');

# parallel plans: the leader's gate nodes over parallel-unaware scans, a
# Result over parallel-aware ones
my $par = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
	THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false)};
like($node->safe_psql('postgres', "$par; EXPLAIN (COSTS OFF) SELECT * FROM events WHERE event_id = 9100400"),
	qr/Gather.*BloomGate/s, 'a forced parallel plan: gate nodes under Gather');
same('a forced parallel plan', 'SELECT * FROM events WHERE event_id IN (9100400, 9100600, 9999999) ORDER BY 1', $par);
my $pseq = "$par; SET min_parallel_table_scan_size = 0; SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off";
like($node->safe_psql('postgres', "$pseq; EXPLAIN (COSTS OFF) SELECT * FROM events WHERE event_id = 9100400"),
	qr/Result\n\s+One-Time Filter: bloom_shared_gate[^\n]*\n\s+->  Parallel Seq Scan/,
	'a parallel-aware scan keeps its Result');
same('a parallel sequential scan', 'SELECT * FROM events WHERE event_id IN (9100400, 9100600, 9999999) ORDER BY 1', $pseq);

# JIT (where the server has it) compiles the pass-through projection
same('JIT', 'SELECT event_id + 1, day FROM events WHERE event_id IN (9100400, 9999999)',
	'SET jit = on; SET jit_above_cost = 0; SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = 0');

# the counter counts a skipped partition once per execution
$before = skipped();
$node->safe_psql('postgres', 'SELECT count(*) FROM events WHERE event_id = -5');
is(skipped() - $before, 6, 'skipped scans: one per partition not initialized');

# ------------------------------- 7. DETACH and DROP rolled back, re-ATTACH ----
# A partition's filter is freed when the DETACH or DROP commits: one rolled
# back (or rolled back to a savepoint) keeps it, and an absent key still
# skips all 6 partitions.
sub has_filter
{
	my ($t) = @_;
	return $node->safe_psql('postgres', "SELECT count(*) FROM bloom_shared_filters_info() "
		  . "WHERE name = '$name' AND partition = '$t'::regclass");
}
for my $ddl ('ALTER TABLE events DETACH PARTITION events_1', 'DROP TABLE events_1')
{
	$node->safe_psql('postgres', "BEGIN; $ddl; ROLLBACK");
	is(has_filter('events_1'), '1', "$ddl rolled back: the partition keeps its filter");
	$node->safe_psql('postgres', "BEGIN; SAVEPOINT s; $ddl; ROLLBACK TO s; COMMIT");
	is(has_filter('events_1'), '1', "$ddl rolled back to a savepoint: the partition keeps its filter");
}
# Detached, written while out (no guard trigger), re-attached in one
# transaction: the filter kept for the commit missed those rows and is rebuilt.
is($node->safe_psql('postgres', q{
BEGIN;
ALTER TABLE events DETACH PARTITION events_1;
INSERT INTO events_1 VALUES (5100001, 15, 'written while detached');
UPDATE events_1 SET event_id = 5100002 WHERE ctid = (SELECT min(ctid) FROM events_1 WHERE event_id <> 5100001);
ALTER TABLE events ATTACH PARTITION events_1 FOR VALUES FROM (10) TO (20);
SELECT count(*) FROM events WHERE event_id IN (5100001, 5100002);
COMMIT}), '2', 'detached, written, re-attached in one transaction: its rows are found in it');
is(has_filter('events_1'), '1', 'DETACH and re-ATTACH in one transaction: the partition has a filter');
same('detached, written, re-attached', 'SELECT event_id FROM events WHERE event_id IN (5100001, 5100002) ORDER BY 1',
	'', "5100001\n5100002");
wait_ready($node, 'postgres', $name, 'after the rolled-back DDL');
$before = skipped();
$node->safe_psql('postgres', 'SELECT count(*) FROM events WHERE event_id = -6');
is(skipped() - $before, 6, 'an absent key: every partition is skipped');
no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', 'after the rolled-back DDL');

# ------------------------------- 8. ATTACH of a table guarded itself ----
$node->safe_psql('postgres', q{
CREATE TABLE events_5 (LIKE events);
INSERT INTO events_5 VALUES (7000001, 65, 'own');
SELECT bloom_guard('events_5', 'event_id')});
my $err;
($st, $err) = sqlstate($node, 'postgres', 'ALTER TABLE events ATTACH PARTITION events_5 FOR VALUES FROM (60) TO (70)');
is($st, '55000', 'ATTACH of a table guarded itself: 55000');
like($err, qr/cannot attach guarded table "events_5" as a partition of guarded table "events"/, '... naming both tables');
like($err, qr/HINT:  Remove the table's own guard with bloom_unguard\(\) first/, '... with a hint');
$node->safe_psql('postgres', q{
SELECT bloom_unguard('events_5', 'event_id');
ALTER TABLE events ATTACH PARTITION events_5 FOR VALUES FROM (60) TO (70)});
wait_ready($node, 'postgres', $name, 'unguarded, then attached');
is(has_filter('events_5'), '1', 'unguarded, then attached: the partition has a filter of the parent\'s guard');
no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', 'unguarded, then attached');

# ------------------------------------ 9. a partition without a filter ----
# as many slots as partitions: a new one gets none, and the view says so
my $nleaves = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_partition_tree('events') WHERE isleaf");
$node->append_conf('postgresql.conf', "bloomfilter.max_shared_filters = $nleaves\n");
$node->restart;
wait_ready($node, 'postgres', $name, "restarted with $nleaves slots");
my ($wst, $werr) = sqlstate($node, 'postgres',
	"CREATE TABLE events_6 PARTITION OF events FOR VALUES FROM (70) TO (80); "
	  . "INSERT INTO events VALUES (8000001, 75, 'no slot')");
like($werr, qr/WARNING:  53400: partition "events_6" of the table guarded by shared bloom filter "public\.events\.event_id" gets no filter/,
	'a partition beyond the slots: a WARNING');
is($node->safe_psql('postgres', "SELECT state || ' ' || partitions FROM bloom_shared_filters WHERE name = '$name'"),
	"incomplete $nleaves", 'the view says the guard is incomplete');
no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', 'a partition without a filter');
is($node->safe_psql('postgres', 'SELECT count(*) FROM events WHERE event_id = 8000001'), '1',
	'a partition without a filter: its row is found');
$node->safe_psql('postgres', 'DROP TABLE events_6');
is(state_of($node, 'postgres', $name), 'ready', 'without that partition: ready again');

$node->stop;
done_testing();
