# Shared filters under concurrent writers: no committed key is ever missing.
#
# 1. Deterministic races around a (re)build, one transaction at a time:
#    - a transaction that inserted before bloom_guard and commits while the
#      guard waits for it;
#    - a transaction that inserted before bloom_shared_rebuild and commits
#      after the rebuild started (its add went to the old filter only);
#    - the same with a PREPARED transaction (two-phase commit: no backend,
#      no snapshot, but its row commits later);
#    - aborted transactions and rolled-back savepoints (harmless).
# 2. pgbench, 4 clients, inserting / updating / aborting for ~25 s while the
#    test guards the table (a build), rebuilds it three times, unguards and
#    guards it again, and a second, small guard grows past its capacity
#    (growth rebuilds); between those steps every committed key is checked.
#    At the end, with the filters ready, every key of the table answers
#    "maybe" and absent keys mostly "no" (the filter really answers).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use IPC::Run;
use Time::HiRes qw(usleep);

# ---------------------------------------------------------------- setup ----
my $node = PostgreSQL::Test::Cluster->new('shared_concurrency');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'bloomfilter'
max_prepared_transactions = 10
max_connections = 40
shared_buffers = 64MB
});
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE users (id bigserial PRIMARY KEY, username text NOT NULL);
	INSERT INTO users (username) SELECT 'seed' || i FROM generate_series(1, 200000) i;
	CREATE SEQUENCE kseq;
	CREATE TABLE events (k bigint NOT NULL);
	INSERT INTO events SELECT i FROM generate_series(1, 1000) i;
	CREATE SEQUENCE eseq START 1000001;
	ANALYZE;
});
my $U = 'public.users.username';
my $E = 'public.events.k';
my $users_keys = 'SELECT username FROM users';
my $event_keys = 'SELECT k FROM events';

# ------------------------- 1a. open transaction racing the initial build ----
# T inserted before the guard and commits while bloom_guard (or its build)
# waits for it.
my $t = $node->background_psql('postgres');
$t->query_safe("BEGIN; INSERT INTO users (username) VALUES ('open-before-guard')");
my $g = $node->background_psql('postgres');
$g->query_until(qr/guarding/, "\\echo guarding\nSELECT bloom_guard('users', 'username');\n");
# bloom_guard (CREATE TRIGGER) or its build now waits for T (or, if it does
# not wait, has returned): give it up to 10 s to get there.
ok(poll_for($node, 'postgres', q{
	SELECT count(*) > 0 FROM pg_stat_activity WHERE pid <> pg_backend_pid()
	   AND query LIKE '%bloom_guard(%' AND (wait_event_type = 'Lock' OR state = 'idle')}, 't', 10),
	'bloom_guard is waiting for the open transaction (or has returned)');
$t->query_safe('COMMIT');
$g->query_safe('SELECT 1');    # bloom_guard has returned
$g->quit;
wait_ready($node, 'postgres', $U, 'initial build');
is(missing($node, 'postgres', $U, $users_keys), '0',
	'a row inserted before bloom_guard and committed during it is found');

# --------------------- 1b. open transaction racing bloom_shared_rebuild ----
# T's add went to the current filter; the rebuild's new filter must hold T's
# key once T commits (visible to triggers first, then wait for T, then scan).
$t->query_safe("BEGIN; INSERT INTO users (username) VALUES ('open-before-rebuild')");
my $r = $node->background_psql('postgres');
$r->query_until(qr/rebuilding/, "\\echo rebuilding\nSELECT bloom_shared_rebuild('$U');\n");
# Give the rebuild time to reach its wait (or to finish, if it wrongly does
# not wait): poll until it waits for a lock or the state leaves "ready".
poll_for($node, 'postgres', qq{
	SELECT (SELECT count(*) > 0 FROM pg_locks WHERE NOT granted)
	    OR (SELECT state <> 'ready' FROM bloom_shared_filters WHERE name = '$U')}, 't', 5);
usleep(300_000);
is(missing($node, 'postgres', $U, $users_keys), '0', 'while the rebuild waits: every committed key found');
$t->query_safe('COMMIT');
$t->query_safe("INSERT INTO users (username) VALUES ('after-rebuild-started')");
$r->query_safe('SELECT 1');
$r->quit;
wait_ready($node, 'postgres', $U, 'rebuild racing an open transaction');
is($node->safe_psql('postgres', "SELECT bloom_shared_contains('$U', 'open-before-rebuild'::text)"), 't',
	'a row inserted before bloom_shared_rebuild and committed during it is found');
is(missing($node, 'postgres', $U, $users_keys), '0', 'after the rebuild: every committed key found');

# --------------------------------- 1c. prepared transaction and rebuild ----
# A prepared transaction has no backend and no snapshot, but it holds its
# locks, and its row becomes visible when COMMIT PREPARED runs.
$node->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO users (username) VALUES ('prepared-before-rebuild');
	PREPARE TRANSACTION 'p1';
});
$r = $node->background_psql('postgres');
$r->query_until(qr/rebuilding/, "\\echo rebuilding\nSELECT bloom_shared_rebuild('$U');\n");
poll_for($node, 'postgres', qq{
	SELECT (SELECT count(*) > 0 FROM pg_locks WHERE NOT granted)
	    OR (SELECT state <> 'ready' FROM bloom_shared_filters WHERE name = '$U')}, 't', 5);
usleep(300_000);
$node->safe_psql('postgres', "COMMIT PREPARED 'p1'");
$r->query_safe('SELECT 1');
$r->quit;
wait_ready($node, 'postgres', $U, 'rebuild racing a prepared transaction');
is($node->safe_psql('postgres', "SELECT bloom_shared_contains('$U', 'prepared-before-rebuild'::text)"), 't',
	'a row of a transaction prepared before bloom_shared_rebuild and committed during it is found');

# A prepared transaction that inserted AFTER the rebuild has finished, and
# one rolled back.
$node->safe_psql('postgres', q{
	BEGIN; INSERT INTO users (username) VALUES ('prepared-2'); PREPARE TRANSACTION 'p2';
	BEGIN; INSERT INTO users (username) VALUES ('prepared-rolled-back'); PREPARE TRANSACTION 'p3';
	COMMIT PREPARED 'p2';
	ROLLBACK PREPARED 'p3';
});
is($node->safe_psql('postgres', "SELECT bloom_shared_contains('$U', 'prepared-2'::text)"), 't',
	'a committed prepared transaction: its key is found');

# ------------------------------------------- 1d. aborts and savepoints ----
my ($rc, $o, $e) = $node->psql('postgres', q{
	BEGIN; INSERT INTO users (username) SELECT 'aborted' || i FROM generate_series(1, 1000) i; ROLLBACK;
	BEGIN;
	INSERT INTO users (username) VALUES ('sp-kept-1');
	SAVEPOINT a;
	INSERT INTO users (username) SELECT 'sp-rolled-back' || i FROM generate_series(1, 100) i;
	ROLLBACK TO SAVEPOINT a;
	INSERT INTO users (username) VALUES ('sp-kept-2');
	COMMIT;
	BEGIN; INSERT INTO users (username) VALUES ('error-abort'); SELECT 1/0;
});
like($e, qr/division by zero/, 'a transaction aborted by an error');
is(state_of($node, 'postgres', $U), 'ready', 'aborts leave the filter ready');
is(missing($node, 'postgres', $U, $users_keys), '0', 'after aborts and savepoints: every committed key found');
is($node->safe_psql('postgres', "SELECT count(*) FROM users WHERE username IN ('sp-kept-1', 'sp-kept-2')"), '2',
	'savepoint rows committed');

# ------------------------------------------------------ 2. pgbench race ----
$node->safe_psql('postgres', "SELECT bloom_guard('events', 'k', 0.01, 2000)");
my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	insert => q{
INSERT INTO users (username) SELECT 'c' || nextval('kseq') FROM generate_series(1, 3);
INSERT INTO events VALUES (nextval('eseq'));
},
	update => q{
\set id random(1, 200000)
UPDATE users SET username = 'u' || nextval('kseq') WHERE id = :id;
},
	abort => q{
BEGIN;
INSERT INTO users (username) SELECT 'r' || nextval('kseq') FROM generate_series(1, 3);
INSERT INTO events VALUES (-nextval('eseq'));
ROLLBACK;
},
	savepoint => q{
BEGIN;
INSERT INTO users (username) VALUES ('s' || nextval('kseq'));
SAVEPOINT a;
INSERT INTO users (username) VALUES ('x' || nextval('kseq'));
ROLLBACK TO SAVEPOINT a;
INSERT INTO events VALUES (nextval('eseq'));
COMMIT;
},
);
my %weight = (insert => 6, update => 2, abort => 1, savepoint => 1);
my @files;
for my $s (sort keys %scripts)
{
	PostgreSQL::Test::Utils::append_to_file("$dir/$s.sql", $scripts{$s});
	push @files, '-f', "$dir/$s.sql\@$weight{$s}";
}
my $bench_seconds = 25;
my ($bout, $berr) = ('', '');
my $bench;
{
	# (pgbench's statements are not logged: the log keeps the test's own.)
	local $ENV{PGOPTIONS} = '-c log_statement=none';
	local $ENV{PGAPPNAME} = 'pgbench';
	$bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', $bench_seconds, @files,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$bout, '2>', \$berr);
}
my $bench_started = time;

# Checks while pgbench writes: every key committed before the check's
# snapshot must answer "maybe", whatever the filter is doing.
my ($checks, $bad) = (0, 0);
my @phases;
sub check_now
{
	my ($phase) = @_;
	my $res = $node->safe_psql('postgres', qq{
		SELECT (SELECT count(*) FROM users WHERE NOT bloom_shared_contains('$U', username))
		    || ',' || (SELECT count(*) FROM events WHERE NOT bloom_shared_contains('$E', k))
		    || ',' || coalesce((SELECT state FROM bloom_shared_filters WHERE name = '$U'), '<none>')
		    || ',' || coalesce((SELECT state FROM bloom_shared_filters WHERE name = '$E'), '<none>')});
	my ($mu, $me, $su, $se) = split /,/, $res;
	$checks++;
	if ($mu != 0 || $me != 0)
	{
		$bad++;
		diag("$phase: $mu users keys and $me events keys answered \"no\" (states $su, $se)");
	}
	push @phases, "$phase:$su/$se";
	return $su;
}

# Let pgbench get going.
poll_for($node, 'postgres',
	q{SELECT count(*) >= 4 FROM pg_stat_activity WHERE application_name = 'pgbench'}, 't', 20);
check_now('warm-up');
my $deadline = $bench_started + $bench_seconds - 3;

# (a) unguard and guard again: a fresh build racing the writers (the first
# check at once, while it builds).
$node->safe_psql('postgres', "SELECT bloom_unguard('users', 'username')");
$node->safe_psql('postgres', "SELECT bloom_guard('users', 'username')");
check_now('build 0');
for my $i (1 .. 100)
{
	last if time > $deadline;
	my $s = check_now("build $i");
	last if $s eq 'ready';
}
# (b) three rebuilds racing the writers.
for my $round (1 .. 3)
{
	last if time > $deadline;
	$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('$U')");
	check_now("rebuild $round/0");
	for my $i (1 .. 100)
	{
		last if time > $deadline;
		my $s = check_now("rebuild $round/$i");
		last if $s eq 'ready';
	}
}
# (c) keep checking until pgbench ends (the events guard grows meanwhile).
while (time < $bench_started + $bench_seconds + 60)
{
	check_now('steady');
	$bench->pump_nb;
	last if !$bench->pumpable;
	usleep(200_000);
}
$bench->finish;
my $bench_rc = $?;
is($bench_rc, 0, 'pgbench ran to the end') or diag("pgbench stderr: $berr");
unlike($berr, qr/ERROR|aborted/, 'no client of pgbench failed') or diag($berr);
like($bout, qr/number of transactions actually processed: (\d+)/, 'pgbench processed transactions');
my ($ntx) = $bout =~ /actually processed: (\d+)/;
cmp_ok($ntx // 0, '>', 1000, "pgbench: more than 1000 transactions raced the builds ($ntx)");
cmp_ok($checks, '>=', 3, "checks ran during the race ($checks)");
is($bad, 0, 'no check during the race found a committed key answering "no"');
note('phases seen: ' . join(' ', @phases));
note('the race saw the users filter ' .
	((grep { !m{:ready/} } @phases) ? 'both ready and not ready' : 'only ready (builds faster than a check)'));

# ------------------------------------------------------ 3. at the end ----
wait_ready($node, 'postgres', $U, 'after the race');
wait_ready($node, 'postgres', $E, 'events after the race');
is(missing($node, 'postgres', $U, $users_keys), '0', 'after the race: every users key answers "maybe"');
is(missing($node, 'postgres', $E, $event_keys), '0', 'after the race: every events key answers "maybe"');
my $nev = $node->safe_psql('postgres', 'SELECT count(*) FROM events');
cmp_ok($nev, '>', 2000, "events grew past its capacity of 2000 ($nev rows)");
is($node->safe_psql('postgres', "SELECT capacity > 2000 AND estimated_fpr <= 0.02 FROM bloom_shared_filters WHERE name = '$E'"),
	't', 'events: the growth rebuild made the filter larger, estimated FPR <= 2 x target');
my $share = $node->safe_psql('postgres',
	"SELECT avg(bloom_shared_contains('$U', 'absent' || i)::int)::float8 FROM generate_series(1, 20000) i");
cmp_ok($share, '<=', 0.02, "the filter really answers: absent keys \"maybe\" share $share <= 2%");
$share = $node->safe_psql('postgres',
	"SELECT avg(bloom_shared_contains('$E', -i::bigint)::int)::float8 FROM generate_series(1, 20000) i");
cmp_ok($share, '<=', 0.02, "events filter: absent keys \"maybe\" share $share <= 2%");

# A final rebuild from the settled table gives the same answers.
$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('$U')");
wait_ready($node, 'postgres', $U, 'final rebuild');
is(missing($node, 'postgres', $U, $users_keys), '0', 'after a final rebuild: every users key answers "maybe"');

$t->quit;
$node->stop;
done_testing();
