# Shared filters on a streaming hot standby, and on a logical replication
# subscriber. Triggers do not fire during
# recovery, so a standby's filter cannot see the rows the primary inserts
# unless the implementation keeps it current some other way: its checks must
# answer "maybe" (state 'standby'), or, if it claims to be current, hold every
# replayed key. Then the standby is promoted: its filter must not answer "no"
# for any key committed before or after the promotion.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $U = 'public.users.username';
my $users_keys = 'SELECT username FROM users';
my $absent = "SELECT 'absent' || i FROM generate_series(1, 20000) i";

# ---------------------------------------------------------------- setup ----
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 'logical');
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'bloomfilter'
shared_buffers = 32MB
max_connections = 20
});
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE users (id bigserial PRIMARY KEY, username text NOT NULL);
	INSERT INTO users (username) SELECT 'user' || i FROM generate_series(1, 100000) i;
	SELECT bloom_guard('users', 'username');
});
is($primary->safe_psql('postgres', "SELECT bloom_shared_wait('$U', 60000)"), 't', 'primary: guard ready');

$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

# Rows the primary commits after the standby started.
$primary->safe_psql('postgres', q{
	INSERT INTO users (username) SELECT 'after-standby' || i FROM generate_series(1, 5000) i;
	UPDATE users SET username = 'renamed' || id WHERE id <= 500;
});
$primary->wait_for_catchup($standby, 'replay');

# ------------------------------------------------------- on the standby ----
my $st = state_of($standby, 'postgres', $U);
note("standby state: $st");
ok($st eq 'standby' || $st eq 'ready' || $st eq 'building' || $st eq 'not loaded',
	"the standby lists the filter with a known state ($st)");
is($standby->safe_psql('postgres', "SELECT count(*) FROM users"), '105000', 'standby: rows replayed');
is(missing($standby, 'postgres', $U, $users_keys), '0',
	'standby: every key, including those committed on the primary after the standby started, answers "maybe"');
is($standby->safe_psql('postgres', "SELECT bloom_shared_contains('$U', 'after-standby5000'::text)"), 't',
	'standby: spot check of a replayed insert');
is($standby->safe_psql('postgres', "SELECT bloom_shared_contains('$U', 'renamed7'::text)"), 't',
	'standby: spot check of a replayed update');
if ($st eq 'ready')
{
	# It claims to be current: then it must hold every replayed key (above)
	# and bloom_shared_get must hold them too.
	is($standby->safe_psql('postgres',
		"SELECT count(*) FROM users WHERE NOT bloom_shared_get('$U') @> username"), '0',
		'standby (ready): bloom_shared_get holds every replayed key');
}
else
{
	is(sqlstate_of($standby, 'postgres', "SELECT bloom_shared_get('$U')"), '55000',
		"standby ($st): bloom_shared_get raises 55000 (not ready)");
}
is(sqlstate_of($standby, 'postgres', "SELECT bloom_shared_contains('public.nosuch.col', 'x'::text)"), '42704',
	'standby: an unknown name raises 42704');
isnt(sqlstate_of($standby, 'postgres', "SELECT bloom_shared_rebuild('$U')"), 'OK',
	'standby: bloom_shared_rebuild fails (read-only)');
isnt(sqlstate_of($standby, 'postgres', "SELECT bloom_guard('users', 'id')"), 'OK',
	'standby: bloom_guard fails (read-only)');

# A guard created on the primary while the standby runs: its definition
# arrives by replay; the standby must answer "maybe", not 42704 or "no".
$primary->safe_psql('postgres', q{
	CREATE TABLE late (k bigint);
	INSERT INTO late SELECT i FROM generate_series(1, 10000) i;
	SELECT bloom_guard('late', 'k', 0.01, 20000);
});
$primary->wait_for_catchup($standby, 'replay');
is(sqlstate_of($standby, 'postgres', "SELECT bloom_shared_contains('public.late.k', 1)"), 'OK',
	'standby: a guard created on the primary after the standby started is known');
is(missing($standby, 'postgres', 'public.late.k', 'SELECT k FROM late'), '0',
	'standby: every key of the late guard answers "maybe"');

# A guard removed on the primary: unknown on the standby (not a stale "no").
$primary->safe_psql('postgres', q{
	SELECT bloom_unguard('late', 'k');
	INSERT INTO late SELECT i FROM generate_series(10001, 11000) i;
});
$primary->wait_for_catchup($standby, 'replay');
my ($rc, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\n"
	  . "SELECT count(*) FROM late WHERE NOT bloom_shared_contains('public.late.k', k)");
ok(($rc == 0 && $out eq '0') || $err =~ /ERROR:\s+42704/,
	'standby: after unguard on the primary the name is unknown (42704) or answers "maybe" for every key')
  or diag("got rc $rc, out '$out', err $err");

# A restart of the standby: still no "no" for a replayed key.
$standby->restart;
$primary->safe_psql('postgres', q{INSERT INTO users (username) SELECT 'after-standby-restart' || i FROM generate_series(1, 1000) i});
$primary->wait_for_catchup($standby, 'replay');
is(missing($standby, 'postgres', $U, $users_keys), '0', 'standby restarted: every key answers "maybe"');

# ------------------------------------------------------------ promotion ----
$standby->promote;
ok($standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'), 'the standby is promoted');
# Immediately, and while rows arrive on the new primary.
is(missing($standby, 'postgres', $U, $users_keys), '0', 'promoted: at once, every key answers "maybe"');
$standby->safe_psql('postgres', q{
	INSERT INTO users (username) SELECT 'after-promotion' || i FROM generate_series(1, 2000) i;
	UPDATE users SET username = 'promoted-rename' || id WHERE id BETWEEN 501 AND 600;
});
is(missing($standby, 'postgres', $U, $users_keys), '0',
	'promoted: rows written after the promotion answer "maybe" (state ' . state_of($standby, 'postgres', $U) . ')');
# Whatever it does by itself, a rebuild on the promoted server makes it ready
# with every key.
$standby->safe_psql('postgres', "SELECT bloom_shared_rebuild('$U')");
is($standby->safe_psql('postgres', "SELECT bloom_shared_wait('$U', 60000)"), 't', 'promoted: a rebuild completes');
ok($standby->poll_query_until('postgres', "SELECT state FROM bloom_shared_filters WHERE name = '$U'", 'ready'),
	'promoted: state ready');
is(missing($standby, 'postgres', $U, $users_keys), '0', 'promoted and rebuilt: every key answers "maybe"');
$standby->safe_psql('postgres', q{INSERT INTO users (username) SELECT 'after-rebuild' || i FROM generate_series(1, 1000) i});
is(missing($standby, 'postgres', $U, $users_keys), '0', 'promoted: triggers keep it current');
my $share = $standby->safe_psql('postgres',
	"SELECT avg(bloom_shared_contains('$U', k)::int)::float8 FROM ($absent) s(k)");
cmp_ok($share, '<=', 0.02, "promoted: the filter answers (absent keys \"maybe\" at $share)");

# The old primary is unaffected.
is(missing($primary, 'postgres', $U, $users_keys), '0', 'old primary: every key answers "maybe"');

# ------------------------------------------------- logical replication ----
# On a subscriber, rows arrive through the apply worker, which runs with
# session_replication_role = replica: ordinary triggers do not fire there.
# A guard on the subscriber's table must still hold every replicated key.
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'");
$sub->start;
$primary->safe_psql('postgres', 'CREATE PUBLICATION pub_users FOR TABLE users');
$sub->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE users (id bigserial PRIMARY KEY, username text NOT NULL);
});
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION sub_users CONNECTION '" . $primary->connstr() . ' dbname=postgres'
	  . "' PUBLICATION pub_users");
$sub->wait_for_subscription_sync($primary, 'sub_users');
$sub->safe_psql('postgres', "SELECT bloom_guard('users', 'username')");
is($sub->safe_psql('postgres', "SELECT bloom_shared_wait('$U', 60000)"), 't', 'subscriber: guard ready');
is(missing($sub, 'postgres', $U, $users_keys), '0', 'subscriber: every key of the initial copy answers "maybe"');
$primary->safe_psql('postgres', q{
	INSERT INTO users (username) SELECT 'replicated' || i FROM generate_series(1, 2000) i;
	UPDATE users SET username = 'replicated-update' || id WHERE id BETWEEN 601 AND 700;
});
$primary->wait_for_catchup('sub_users');
is($sub->safe_psql('postgres', q{SELECT count(*) FROM users WHERE username LIKE 'replicated%'}), '2100',
	'subscriber: the changes arrived');
is(missing($sub, 'postgres', $U, $users_keys), '0',
	'subscriber: every replicated insert and update answers "maybe" (state '
	  . state_of($sub, 'postgres', $U) . ')');
$sub->stop;

$standby->stop;
$primary->stop;
done_testing();
