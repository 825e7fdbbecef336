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
DECLARE n int := 0;
BEGIN
	FOR k IN 1 .. 200 LOOP
		n := n + (SELECT count(*) FROM events WHERE event_id = k * 200);
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

# ------------------------------- 6. DETACH and DROP rolled back, re-ATTACH ----
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
$node->safe_psql('postgres', q{
BEGIN;
ALTER TABLE events DETACH PARTITION events_1;
ALTER TABLE events ATTACH PARTITION events_1 FOR VALUES FROM (10) TO (20);
COMMIT});
is(has_filter('events_1'), '1', 'DETACH and re-ATTACH in one transaction: the partition has a filter');
wait_ready($node, 'postgres', $name, 'after the rolled-back DDL');
$before = skipped();
$node->safe_psql('postgres', 'SELECT count(*) FROM events WHERE event_id = -6');
is(skipped() - $before, 6, 'an absent key: every partition is skipped');
no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', 'after the rolled-back DDL');

# ------------------------------- 7. ATTACH of a table guarded itself ----
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

# ------------------------------------ 8. a partition without a filter ----
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
