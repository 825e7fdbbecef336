# Shared filters (1.1 rules): stuck and failed builds, DROP DATABASE,
# parameter validation and error codes.  The server must stay up throughout
# (the same postmaster, no crash reset: TAP servers run with
# restart_after_crash = off, so a crash would also stop it).
#
#   1. parameters are validated by bloom_guard up front: an fpr of 1e-300,
#      0, 1, NaN, a capacity of 0 or -5 fail with 22023, a capacity that
#      cannot fit with 53400, bloom_guard(0::regclass, ...) with 42P01, an
#      unknown column with 42703; nothing is left behind; guards rolled back
#      (transaction, savepoint, error) keep no slot;
#   2. ALTER TABLE ... ENABLE TRIGGER ALL on a guarded table works (ALWAYS);
#   3. a rebuild waiting for an uncommitted writer whose worker is killed
#      (pg_terminate_backend): the view shows last_error and next_try, the
#      build is retried by itself and the filter ends ready once the writer
#      commits, without any user action; after several kills the backoff
#      grows and bloom_shared_rebuild retries at once, before next_try;
#      checks never answer "no" for a committed key meanwhile;
#   4. odd calls: NULL arguments, the trigger and event-trigger functions
#      called directly, bloom_shared_trigger on tables, views and shapes it
#      does not belong to: clean errors (wrong shapes 42P17), never a crash;
#   5. DDL racing a rebuild of a large table: DISABLE TRIGGER, ATTACH
#      PARTITION, ALTER TABLE ... INHERIT, DROP TRIGGER with the slot reused
#      at once: never a "no", never a published filter missing rows;
#   6. DROP DATABASE (WITH FORCE, while one of its builds waits for a
#      writer) frees the database's filters: with
#      bloomfilter.max_shared_filters = 4 all used by the dropped database,
#      another database can guard four tables again within 15 s;
#   7. guards suspended by a disabled or replaced trigger stay suspended
#      across a restart; a renamed guard trigger is still the guard.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use Time::HiRes qw(usleep time);

$SharedFilterTest::wait_seconds = 20;

my $node = shared_node('trust_states', "bloomfilter.max_shared_filters = 4\nmax_worker_processes = 16\n");
my $watch = crash_watch($node);
my ($st, $err);
my $db = 'postgres';

sub run { return sqlstate($node, $_[1] // $db, $_[0]); }

sub sq
{
	my ($sql, $d) = @_;
	my ($st, $err, $out) = sqlstate($node, $d // $db, $sql);
	if ($st ne 'OK')
	{
		my $first = (grep { /\S/ } split /\n/, $sql)[0];
		$first =~ s/^\s+//;
		fail("statement failed ($st): $first");
		diag($err);
	}
	return $out;
}

sub make_tables
{
	my ($d, @t) = @_;
	sq(join('', map { "CREATE TABLE $_ (k text); INSERT INTO $_ SELECT '$_-' || i FROM generate_series(1, 1000) i;" } @t), $d);
}

sub build_workers
{
	return $node->safe_psql($db, q{SELECT coalesce(string_agg(pid::text, ','), '') FROM pg_stat_activity WHERE backend_type = 'bloomfilter build'});
}

# ======================================================= 1. validation ====
make_tables($db, 'v', 'b1');
sq(q{SELECT bloom_guard('b1', 'k')});
wait_ready($node, $db, 'public.b1.k', 'b1');
my @bad = (
	[ q{bloom_guard('v', 'k', 1e-300)}, '22023', 'an fpr of 1e-300' ],
	[ q{bloom_guard('v', 'k', 0)}, '22023', 'an fpr of 0' ],
	[ q{bloom_guard('v', 'k', 1)}, '22023', 'an fpr of 1' ],
	[ q{bloom_guard('v', 'k', -0.5)}, '22023', 'a negative fpr' ],
	[ q{bloom_guard('v', 'k', 'NaN')}, '22023', 'an fpr of NaN' ],
	[ q{bloom_guard('v', 'k', 0.01, 0)}, '22023', 'a capacity of 0' ],
	[ q{bloom_guard('v', 'k', 0.01, -5)}, '22023', 'a negative capacity' ],
	[ q{bloom_guard('v', 'k', 0.01, 1000000000000)}, '53400', 'a capacity that cannot fit in bloomfilter.shared_memory' ],
	[ q{bloom_guard('v', 'k', 1e-300, 1000)}, '22023', 'an fpr of 1e-300 with a capacity' ],
	[ q{bloom_guard(0::regclass, 'k')}, '42P01', 'bloom_guard(0::regclass, ...)' ],
	[ q{bloom_guard('v', 'nosuch')}, '42703', 'an unknown column' ]);
for my $b (@bad)
{
	my ($call, $want, $what) = @$b;
	($st, $err) = run("SELECT $call");
	is($st, $want, "bloom_guard with $what: $want up front") or diag($err);
}
like((run(q{SELECT bloom_guard(0::regclass, 'k')}))[1], qr/relation with OID 0 does not exist/,
	'bloom_guard(0::regclass): "relation with OID 0 does not exist"');
is($node->safe_psql($db, q{SELECT count(*) FROM bloom_shared_definitions d WHERE d.name LIKE 'public.v.%'}), '0',
	'the refused guards left no definition');
is(guard_trigger_list($node, $db, 'v'), '', 'the refused guards left no trigger');
is($node->safe_psql($db, q{SELECT count(*) FROM bloom_shared_filters WHERE state = 'failed'}), '0',
	'the refused guards left no failed filter');
($st, $err) = run(q{INSERT INTO v VALUES ('v-after')});
is($st, 'OK', 'the table stays writable') or diag($err);
# a very small but possible rate: refused up front, or built
($st, $err) = run(q{SELECT bloom_guard('v', 'k', 1e-9)});
note("bloom_guard with fpr 1e-9: $st");
if ($st eq 'OK')
{
	wait_ready($node, $db, 'public.v.k', 'fpr 1e-9');
	no_false_negatives($node, $db, 'public.v.k', 'SELECT k FROM v', 'fpr 1e-9');
	sq(q{SELECT bloom_unguard('v', 'k')});
}
else
{
	is($st, '22023', 'fpr 1e-9 refused with 22023');
}
server_intact($node, $watch, 'after the validation errors');

# Rolled-back guards (whole transaction, savepoint, an error after the
# guard) must not keep a slot: with max_shared_filters = 4 and b1 holding
# one, eight of them in a row, then three real guards still fit.
run(q{SELECT bloom_unguard('v', 'k')});
make_tables($db, 'v2', 'v3');
for my $i (1 .. 8)
{
	my $sql = $i % 3 == 0 ? q{BEGIN; SAVEPOINT a; SELECT bloom_guard('v', 'k'); ROLLBACK TO SAVEPOINT a; COMMIT;}
	  : $i % 3 == 1 ? q{BEGIN; SELECT bloom_guard('v', 'k'); ROLLBACK;}
	  : q{BEGIN; SELECT bloom_guard('v', 'k'); SELECT 1/0; COMMIT;};
	run($sql);
}
is($node->safe_psql($db, q{SELECT count(*) FROM bloom_shared_definitions WHERE name = 'public.v.k'}), '0',
	'rolled-back guards left no definition');
is(contains_error($node, $db, 'public.v.k', "'v-1'::text"), '42704', 'rolled-back guards: the name is unknown');
for my $t ('v', 'v2', 'v3')
{
	($st, $err) = run("SELECT bloom_guard('$t', 'k')");
	is($st, 'OK', "after eight rolled-back guards, guard $t still fits (no slot leaked)") or diag($err);
}
wait_ready($node, $db, "public.$_.k", "after the rolled-back guards: $_") for ('v', 'v2', 'v3');
no_false_negatives($node, $db, "public.$_.k", "SELECT k FROM $_", "after the rolled-back guards: $_") for ('v', 'v2', 'v3');
run("SELECT bloom_unguard('$_', 'k')") for ('v', 'v2', 'v3');

# =========================================== 2. ENABLE TRIGGER ALL works ====
run(q{SELECT bloom_unguard('v', 'k')});    # (in case a refusal above failed)
sq(q{SELECT bloom_guard('v', 'k')});
wait_ready($node, $db, 'public.v.k', 'v');
($st, $err) = run(q{ALTER TABLE v ENABLE TRIGGER ALL});
is($st, 'OK', 'ALTER TABLE ... ENABLE TRIGGER ALL on a guarded table') or diag($err);
is(guard_trigger_list($node, $db, 'v'), 'bloom_guard_k:A', 'the guard trigger still fires ALWAYS');
wait_ready($node, $db, 'public.v.k', 'after ENABLE TRIGGER ALL');
sq(q{SET session_replication_role = replica; INSERT INTO v VALUES ('v-replica')});
no_false_negatives($node, $db, 'public.v.k', 'SELECT k FROM v', 'after ENABLE TRIGGER ALL');
sq(q{SELECT bloom_unguard('v', 'k')});

# ================================================ 3. killed builds ====
my $S = 'public.b1.k';
my $view = "SELECT state, last_error IS NOT NULL, next_try IS NOT NULL FROM bloom_shared_filters WHERE name = '$S'";

# Hold an uncommitted insert, ask for a rebuild, wait until its worker waits.
sub stuck_rebuild
{
	my ($what, $key) = @_;
	my $h = $node->background_psql($db, on_error_stop => 0);
	$h->query_safe("BEGIN; INSERT INTO b1 VALUES ('$key')");
	sq("SELECT bloom_shared_rebuild('$S')");
	ok(poll_for($node, $db, q{SELECT count(*) > 0 FROM pg_stat_activity
		WHERE backend_type = 'bloomfilter build' AND wait_event_type = 'Lock'}, 't', 10),
		"$what: the rebuild's worker waits for the writer");
	return $h;
}

# Terminate the build worker(s); true if one was there.
sub kill_build
{
	my $pids = build_workers();
	return 0 if $pids eq '';
	$node->safe_psql($db, "SELECT pg_terminate_backend(p) FROM unnest('{$pids}'::int[]) p");
	return 1;
}

my $lb0 = $node->safe_psql($db, "SELECT last_build FROM bloom_shared_filters WHERE name = '$S'");
my $h = stuck_rebuild('first kill', 'b1-uncommitted-1');
no_false_negatives($node, $db, $S, 'SELECT k FROM b1', 'while the rebuild waits');
ok(kill_build(), 'pg_terminate_backend of the waiting build worker');
ok(poll_for($node, $db, "SELECT last_error IS NOT NULL AND next_try IS NOT NULL FROM bloom_shared_filters WHERE name = '$S'", 't', 10),
	'after the kill: the view shows last_error and next_try');
my ($state, $le) = split /\|/, (sqlstate($node, $db, "SELECT state, last_error FROM bloom_shared_filters WHERE name = '$S'"))[2] // '';
note("after the kill: state $state, last_error: $le");
is($state, 'rebuild failed', 'after the kill: "rebuild failed" (checks use the filter built before)');
no_false_negatives($node, $db, $S, 'SELECT k FROM b1', 'after the kill');
ok(poll_for($node, $db, q{SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'bloomfilter build'}, 't', 10),
	'the build is retried by itself (a worker is back within 10 s)');
$h->query_safe('COMMIT');
$h->quit;
ok(poll_for($node, $db, "SELECT state = 'ready' AND last_build > '$lb0' FROM bloom_shared_filters WHERE name = '$S'", 't', 30),
	'the writer committed: the filter ends ready, rebuilt (last_build advanced), without any user action');
is($node->safe_psql($db, "SELECT bloom_shared_wait('$S', 1000)"), 't', '... and bloom_shared_wait agrees');
no_false_negatives($node, $db, $S, 'SELECT k FROM b1', 'ready after the retried build');
is($node->safe_psql($db, "SELECT bloom_shared_contains('$S', 'b1-uncommitted-1'::text)"), 't',
	'the row committed by the writer the killed build waited for is found');

# Several kills: the backoff grows; bloom_shared_rebuild retries at once.
$h = stuck_rebuild('repeated kills', 'b1-uncommitted-2');
my $kills = 0;
for my $round (1 .. 3)
{
	# wait for the (re)started worker, then kill it
	last unless poll_for($node, $db, q{SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'bloomfilter build'}, 't', 12);
	$kills += kill_build();
	usleep(200_000);
}
is($kills, 3, 'the build was retried after each of three kills');
ok(poll_for($node, $db, "SELECT next_try IS NOT NULL FROM bloom_shared_filters WHERE name = '$S'", 't', 5),
	'after three kills: next_try is set');
my $wait_s = (sqlstate($node, $db, "SELECT extract(epoch FROM next_try - clock_timestamp()) FROM bloom_shared_filters WHERE name = '$S'"))[2] // '';
note("next retry in $wait_s s");
# backoff 1 s, 2 s, 4 s ...: after three failures the next try is a few seconds away
cmp_ok($wait_s eq '' ? 0 : $wait_s, '>', 1.5, "after three failures the retry backs off (next try in $wait_s s)");
$h->query_safe('COMMIT');
$h->quit;
my $t0 = time;
$lb0 = $node->safe_psql($db, "SELECT last_build FROM bloom_shared_filters WHERE name = '$S'");
sq("SELECT bloom_shared_rebuild('$S')");
my $ready = poll_for($node, $db, "SELECT state = 'ready' AND last_build > '$lb0' FROM bloom_shared_filters WHERE name = '$S'", 't', 30);
my $took = time - $t0;
ok($ready, 'bloom_shared_rebuild after the kills: ready');
ok($ready && ($wait_s eq '' || $wait_s < 1 || $took < $wait_s),
	sprintf('bloom_shared_rebuild retried at once (ready after %.1f s; the scheduled retry was %s s away)', $took, $wait_s));
no_false_negatives($node, $db, $S, 'SELECT k FROM b1', 'after the manual retry');
note('ready again, last_error: ' . (sqlstate($node, $db, "SELECT coalesce(last_error, '<null>') FROM bloom_shared_filters WHERE name = '$S'"))[2]);

# ======================================================== 4. odd calls ====
# NULL arguments, trigger and event-trigger functions called directly, the
# guard's trigger function attached to tables it does not belong to (other
# column types, no column at all, a view, wrong shapes and arguments):
# errors or no-ops, never a crash, and b1's filter unharmed.
for my $call (
	q{SELECT bloom_shared_contains(NULL, 'x'::text)},
	q{SELECT bloom_shared_contains('public.b1.k', NULL::text)},
	q{SELECT bloom_shared_contains('public.b1.k', NULL)},
	q{SELECT bloom_shared_add(NULL, 1)},
	q{SELECT bloom_shared_get(NULL)},
	q{SELECT bloom_shared_wait(NULL)},
	q{SELECT bloom_shared_wait('public.b1.k', -1)},
	q{SELECT bloom_shared_rebuild(NULL)},
	q{SELECT bloom_guard(NULL, 'k')},
	q{SELECT bloom_guard('b1', NULL)},
	q{SELECT bloom_guard('b1', 'k', NULL, NULL)},
	q{SELECT bloom_unguard(NULL, 'k')},
	q{SELECT bloom_unguard('b1', 'nosuch')},
	q{SELECT bloom_shared_trigger()},
	q{SELECT bloom_shared_ddl()},
	q{SELECT count(*) FROM bloom_shared_filters_info()},
	q{SELECT bloom_shared_contains(repeat('x', 100000), 'x'::text)},
	q{SELECT bloom_shared_contains('public.b1.k', repeat('x', 10000000))})
{
	my ($cs) = run($call);
	note("$call: $cs");
}
server_intact($node, $watch, 'odd calls');
for my $case (
	[ 'a table with an int column', q{CREATE TABLE odd_i (k int); CREATE TRIGGER tg AFTER INSERT OR UPDATE ON odd_i FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO odd_i VALUES (1)}, 'odd_i' ],
	[ 'a table without columns', q{CREATE TABLE odd_z (); CREATE TRIGGER tg AFTER INSERT OR UPDATE ON odd_z FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO odd_z DEFAULT VALUES}, 'odd_z' ],
	[ 'a table whose column 1 was dropped', q{CREATE TABLE odd_d (k text, x int); ALTER TABLE odd_d DROP COLUMN k; CREATE TRIGGER tg AFTER INSERT OR UPDATE ON odd_d FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO odd_d VALUES (1)}, 'odd_d' ],
	[ 'no argument', q{CREATE TABLE odd_n (k text); CREATE TRIGGER tg AFTER INSERT OR UPDATE ON odd_n FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger()}, q{INSERT INTO odd_n VALUES ('n')}, 'odd_n' ],
	[ 'an unknown filter', q{CREATE TABLE odd_u (k text); CREATE TRIGGER tg AFTER INSERT OR UPDATE ON odd_u FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.nosuch.k', 'x', 'y')}, q{INSERT INTO odd_u VALUES ('u')}, 'odd_u' ],
	[ 'a BEFORE trigger', q{CREATE TABLE odd_b (k text); CREATE TRIGGER tg BEFORE INSERT ON odd_b FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO odd_b VALUES ('b')}, 'odd_b', 'shape' ],
	[ 'a statement trigger', q{CREATE TABLE odd_s (k text); CREATE TRIGGER tg AFTER INSERT ON odd_s FOR EACH STATEMENT EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO odd_s VALUES ('s')}, 'odd_s', 'shape' ],
	[ 'a DELETE trigger', q{CREATE TABLE odd_x (k text); INSERT INTO odd_x VALUES ('x'); CREATE TRIGGER tg AFTER DELETE ON odd_x FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{DELETE FROM odd_x}, 'odd_x', 'shape' ],
	[ 'a view (INSTEAD OF)', q{CREATE VIEW odd_v AS SELECT 'v'::text AS k; CREATE TRIGGER tg INSTEAD OF INSERT ON odd_v FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO odd_v VALUES ('v')}, 'odd_v', 'shape' ],
	[ 'a constraint trigger', q{CREATE TABLE odd_c (k text); CREATE CONSTRAINT TRIGGER tg AFTER INSERT OR UPDATE ON odd_c DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO odd_c VALUES ('c')}, 'odd_c', 'shape' ],
	# deferrable: SET CONSTRAINTS ALL DEFERRED would add the keys at commit,
	# after the writer's own checks said "no"
	[ 'a deferrable trigger on the guarded table', q{CREATE CONSTRAINT TRIGGER tg AFTER INSERT OR UPDATE ON b1 DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.b1.k')}, q{INSERT INTO b1 VALUES ('b1-deferrable')}, 'b1', 'shape' ])
{
	my ($what, $ddl, $dml, $t, $shape) = @$case;
	my ($ds, $de) = run($ddl);
	# README: a trigger calling bloom_shared_trigger that is not a
	# non-deferrable AFTER INSERT OR UPDATE ... FOR EACH ROW trigger is
	# refused (42P17), wherever it is
	# (a view: 42809, wrong object type, is a refusal too)
	ok($ds eq '42P17' || ($t eq 'odd_v' && $ds eq '42809'), "bloom_shared_trigger as $what: refused ($ds)")
	  or diag($de) if $shape;
	my ($ms) = run($dml);
	note("bloom_shared_trigger on $what: DDL $ds, write $ms");
	server_intact($node, $watch, "bloom_shared_trigger on $what");
	run("DROP TRIGGER IF EXISTS tg ON $t");
}
sq(q{INSERT INTO b1 SELECT 'b1-after-odd' || i FROM generate_series(1, 100) i});
no_false_negatives($node, $db, $S, 'SELECT k FROM b1', 'b1 after the odd triggers');
$lb0 = $node->safe_psql($db, "SELECT last_build FROM bloom_shared_filters WHERE name = '$S'");
sq("SELECT bloom_shared_rebuild('$S')");
ok(poll_for($node, $db, "SELECT state = 'ready' AND last_build > '$lb0' FROM bloom_shared_filters WHERE name = '$S'", 't', 20),
	'b1 after the odd triggers: rebuilt and ready (' . state_of($node, $db, $S) . ')');
no_false_negatives($node, $db, $S, 'SELECT k FROM b1', 'b1 after the odd triggers, rebuilt');

# ============================================ 5. DDL racing a build ====
# A build scanning a large table while DDL changes what it may publish:
# DISABLE TRIGGER (rows written after it are missed by the trigger),
# ATTACH PARTITION and ALTER TABLE ... INHERIT (rows no trigger saw), DROP
# TRIGGER (the guard is removed; its slot reused).  At no point may a check
# answer "no" for a committed key, and the build may not publish a filter
# that misses them.  A guarded partitioned table takes a slot per partition:
# b1's guard goes, and each attached partition leaves again after its round,
# to stay within the four slots; a partition attached with no slot free gets
# no filter (a WARNING) and answers "maybe".
my $NBIG = 400000;
sq(q{SELECT bloom_unguard('b1', 'k')});
sq(qq{CREATE TABLE big (k text); INSERT INTO big SELECT 'big' || i FROM generate_series(1, $NBIG) i;
	CREATE TABLE bp (g int, k text) PARTITION BY LIST (g);
	CREATE TABLE bp0 PARTITION OF bp FOR VALUES IN (0);
	INSERT INTO bp SELECT 0, 'bp' || i FROM generate_series(1, $NBIG) i;
	CREATE TABLE bi (k text);
	INSERT INTO bi SELECT 'bi' || i FROM generate_series(1, $NBIG) i;
	SELECT bloom_guard('big', 'k'); SELECT bloom_guard('bp', 'k'); SELECT bloom_guard('bi', 'k');});
wait_ready($node, $db, "public.$_.k", "race: $_") for ('big', 'bp', 'bi');

# Poll for $seconds: count checks where $new_keys_sql has a key answering "no"
# while it is committed; returns the number of bad polls.
sub race_watch
{
	my ($name, $keys_sql, $seconds) = @_;
	my ($bad, $polls) = (0, 0);
	my $until = time + $seconds;
	while (time < $until)
	{
		my ($st2, $e2, $o2) = sqlstate($node, $db,
			"SELECT count(*) FROM ($keys_sql) s(k) WHERE NOT bloom_shared_contains('$name', k)");
		$polls++;
		if ($st2 ne 'OK' || $o2 ne '0')
		{
			$bad++;
			diag("$name: $st2 " . ($o2 // '') . ' keys answered "no" (state ' . state_of($node, $db, $name) . ')');
		}
		usleep(100_000);
	}
	return ($bad, $polls);
}

for my $round (1 .. 2)
{
	# (a) DISABLE TRIGGER ALL right after a rebuild started
	sq(q{SELECT bloom_shared_rebuild('public.big.k')});
	sq(q{ALTER TABLE big DISABLE TRIGGER ALL});
	sq(qq{INSERT INTO big SELECT 'big-dis$round-' || i FROM generate_series(1, 2000) i});
	my ($bad, $polls) = race_watch('public.big.k', "SELECT k FROM big WHERE k LIKE 'big-dis%'", 3);
	is($bad, 0, "race $round: DISABLE TRIGGER during a rebuild: no \"no\" for rows written meanwhile ($polls polls)");
	ok(poll_for($node, $db, "SELECT state FROM bloom_shared_filters WHERE name = 'public.big.k'", 'suspended', 10),
		"race $round: DISABLE TRIGGER during a rebuild: ends suspended (" . state_of($node, $db, 'public.big.k') . ')');
	sq(q{ALTER TABLE big ENABLE TRIGGER ALL});
	wait_ready($node, $db, 'public.big.k', "race $round: enabled again");
	no_false_negatives($node, $db, 'public.big.k', "SELECT k FROM big WHERE k LIKE 'big-dis%'", "race $round: enabled again");

	# (b) ATTACH PARTITION with rows right after a rebuild started
	my $g = $round;
	sq(qq{CREATE TABLE bp$g (g int, k text); INSERT INTO bp$g SELECT $g, 'bp$g-' || i FROM generate_series(1, 20000) i;});
	sq(q{SELECT bloom_shared_rebuild('public.bp.k')});
	sq(qq{ALTER TABLE bp ATTACH PARTITION bp$g FOR VALUES IN ($g)});
	($bad, $polls) = race_watch('public.bp.k', "SELECT k FROM bp$g", 3);
	is($bad, 0, "race $round: ATTACH PARTITION during a rebuild: no \"no\" for the attached rows ($polls polls)");
	wait_ready($node, $db, 'public.bp.k', "race $round: after ATTACH");
	no_false_negatives($node, $db, 'public.bp.k', "SELECT k FROM bp$g", "race $round: after ATTACH, ready");
	if ($round == 1)
	{
		# all four slots in use (big, bi, bp0, bp1): one more partition
		sq(q{CREATE TABLE bpx (g int, k text); INSERT INTO bpx VALUES (9, 'bpx-1')});
		my ($rc, $out, $warn) = $node->psql($db, q{ALTER TABLE bp ATTACH PARTITION bpx FOR VALUES IN (9)});
		like($warn, qr/WARNING:  partition "bpx" of the table guarded by shared bloom filter "public\.bp\.k" gets no filter: all 4 shared bloom filter slots are in use/,
			'no slot free: ATTACH PARTITION succeeds with a WARNING');
		is($node->safe_psql($db, q{SELECT bloom_shared_contains('public.bp.k', 'bpx-1'::text)}), 't',
			'... and the partition without a filter answers "maybe"');
		sq(q{DROP TABLE bpx});
	}
	sq(qq{ALTER TABLE bp DETACH PARTITION bp$g});

	# (c) ALTER TABLE ... INHERIT with rows right after a rebuild started
	sq(qq{CREATE TABLE bi$g (k text); INSERT INTO bi$g SELECT 'bi$g-' || i FROM generate_series(1, 20000) i;});
	sq(q{SELECT bloom_shared_rebuild('public.bi.k')});
	sq(qq{ALTER TABLE bi$g INHERIT bi});
	($bad, $polls) = race_watch('public.bi.k', "SELECT k FROM bi$g", 3);
	is($bad, 0, "race $round: INHERIT during a rebuild: no \"no\" for the new child's rows ($polls polls)");
	wait_ready($node, $db, 'public.bi.k', "race $round: after INHERIT");
	no_false_negatives($node, $db, 'public.bi.k', "SELECT k FROM bi$g", "race $round: after INHERIT, ready");
}
# (d) DROP TRIGGER during a rebuild, the slot reused at once
sq(q{SELECT bloom_shared_rebuild('public.big.k')});
($st, $err) = run(q{DROP TRIGGER bloom_guard_k ON big});
is($st, 'OK', 'race: DROP TRIGGER during a rebuild') or diag($err);
sq(q{CREATE TABLE reuse (k text); INSERT INTO reuse SELECT 'reuse' || i FROM generate_series(1, 5000) i;});
($st, $err) = run(q{SELECT bloom_guard('reuse', 'k')});
is($st, 'OK', 'race: the freed slot is reused by a new guard') or diag($err);
wait_ready($node, $db, 'public.reuse.k', 'race: the new guard');
no_false_negatives($node, $db, 'public.reuse.k', 'SELECT k FROM reuse', 'race: the new guard holds its own keys');
usleep(1_000_000);
is(contains_error($node, $db, 'public.big.k', "'big1'::text"), '42704', 'race: the removed guard stays removed (42704)');
no_false_negatives($node, $db, 'public.reuse.k', 'SELECT k FROM reuse', 'race: the new guard, a second later');
server_intact($node, $watch, 'after the races');

# ===================================================== 6. DROP DATABASE ====
sq(q{SELECT bloom_unguard(rel, column_name) FROM bloom_shared_definitions});
is($node->safe_psql($db, 'SELECT count(*) FROM bloom_shared_filters'), '0', 'no filter left in postgres');
$node->safe_psql($db, 'CREATE DATABASE d1');
sq('CREATE EXTENSION bloomfilter', 'd1');
make_tables('d1', 'a1', 'a2', 'a3', 'a4');
for my $t ('a1', 'a2', 'a3', 'a4')
{
	sq("SELECT bloom_guard('$t', 'k')", 'd1');
	wait_ready($node, 'd1', "public.$t.k", "d1: $t");
}
make_tables($db, 'b2', 'b3', 'b4');
($st, $err) = run("SELECT bloom_guard('b1', 'k')");
is($st, '53400', 'all four slots used by d1: a fifth guard fails with 53400') or diag($err);
like($err, qr/bloomfilter\.max_shared_filters/, '... naming bloomfilter.max_shared_filters');
is(guard_trigger_list($node, $db, 'b1'), '', 'the refused guard left no trigger');

# A rebuild in d1 waiting for a writer when the database is dropped.
my $w = $node->background_psql('d1', on_error_stop => 0);
$w->query_safe(q{BEGIN; INSERT INTO a1 VALUES ('a1-uncommitted')});
sq(q{SELECT bloom_shared_rebuild('public.a1.k')}, 'd1');
ok(poll_for($node, $db, q{SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'bloomfilter build'}, 't', 10),
	'a rebuild in d1 waits for the writer');
($st, $err) = run('DROP DATABASE d1 WITH (FORCE)');
is($st, 'OK', 'DROP DATABASE d1 WITH (FORCE) while one of its builds waits') or diag($err);
eval { $w->quit };
my $ok = 0;
my $deadline = time + 15;
while (time < $deadline)
{
	($st, $err) = run("SELECT bloom_guard('b1', 'k')");
	if ($st eq 'OK') { $ok = 1; last; }
	usleep(250_000);
}
ok($ok, 'after DROP DATABASE, its slots are freed: a guard fits again within 15 s') or diag($err);
for my $t ('b2', 'b3', 'b4')
{
	($st, $err) = run("SELECT bloom_guard('$t', 'k')");
	is($st, 'OK', "after DROP DATABASE: guard $t (all four slots are free)") or diag($err);
}
for my $t ('b1', 'b2', 'b3', 'b4')
{
	wait_ready($node, $db, "public.$t.k", "after DROP DATABASE: $t");
	no_false_negatives($node, $db, "public.$t.k", "SELECT k FROM $t", "after DROP DATABASE: $t");
}
is($node->safe_psql($db, 'SELECT count(*) FROM bloom_shared_filters'), '4', 'the view lists the four filters of this database');

# ======================================= 7. suspended guards and a restart ====
# After a restart the loader must not build and publish a filter whose guard
# trigger is disabled or replaced: such guards come back suspended; a
# renamed guard trigger is still the guard.
server_intact($node, $watch, 'before the restart');
sq(q{CREATE FUNCTION noop_trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$;
	ALTER TABLE b2 DISABLE TRIGGER ALL;
	CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON b3 FOR EACH ROW EXECUTE FUNCTION noop_trg();
	ALTER TRIGGER bloom_guard_k ON b4 RENAME TO b4_guard;});
$node->restart;
$watch = crash_watch($node);
sq(q{INSERT INTO b2 SELECT 'b2-after-restart' || i FROM generate_series(1, 200) i;
	INSERT INTO b3 SELECT 'b3-after-restart' || i FROM generate_series(1, 200) i;
	INSERT INTO b4 SELECT 'b4-after-restart' || i FROM generate_series(1, 200) i;});
ok(poll_for($node, $db, q{SELECT state FROM bloom_shared_filters WHERE name = 'public.b4.k'}, 'ready', 20),
	'after a restart: the guard with a renamed trigger is ready');
no_false_negatives($node, $db, 'public.b4.k', 'SELECT k FROM b4', 'after a restart: renamed guard trigger');
for my $t ('b2', 'b3')
{
	my $n = "public.$t.k";
	is(state_of($node, $db, $n), 'suspended', "after a restart: $t (trigger disabled or replaced) is still suspended");
	is($node->safe_psql($db, "SELECT count(*) FROM generate_series(1, 1000) i WHERE NOT bloom_shared_contains('$n', 'absent' || i)"),
		'0', "after a restart: $t answers \"maybe\" for everything");
	no_false_negatives($node, $db, $n, "SELECT k FROM $t", "after a restart: $t");
}
sq(q{ALTER TABLE b2 ENABLE TRIGGER ALL;
	CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON b3 FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.b3.k');});
for my $t ('b2', 'b3')
{
	wait_ready($node, $db, "public.$t.k", "after a restart, $t re-armed");
	no_false_negatives($node, $db, "public.$t.k", "SELECT k FROM $t", "after a restart, $t re-armed");
}

server_intact($node, $watch, 'end of 109');
$node->stop;
done_testing();
