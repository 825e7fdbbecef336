# The update from 1.1 to 2.0 on a server: a 1.1 database (its guards
# defined in bloom_shared_definitions, kept by guard triggers) meets the 2.0
# library, as after `make install` and a restart.
#  1. Before ALTER EXTENSION UPDATE: writes to guarded tables go on (the
#     guard trigger does nothing), the guard functions fail with 55000 and
#     say to update; a restart with the library preloaded and 1.1's settings
#     still in postgresql.conf starts.
#  2. The update (waiting for a writer's open transaction on the table): each guard is a guard index with its rate and
#     capacity, every key written before, during and after answers true, the
#     1.1 name and the index's name both check it, the planner gates the
#     table; no trigger, event trigger or definitions table is left.
#  3. A dump by the database's owner (no superuser) restores into a new
#     database, guards included.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TapHelpers;
use GuardIndexTest;

my $node = PostgreSQL::Test::Cluster->new('update11');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'bloomfilter'
bloomfilter.shared_memory = 64
});
$node->start;
one($node, q{
	CREATE ROLE owner LOGIN;
	CREATE DATABASE app OWNER owner;
});
$node->safe_psql('app', q{
	CREATE EXTENSION bloomfilter VERSION '1.1';
	CREATE TABLE users (id bigserial PRIMARY KEY, username text NOT NULL);
	INSERT INTO users (username) SELECT 'user' || i FROM generate_series(1, 50000) i;
	INSERT INTO bloom_shared_definitions (name, rel, column_name, fpr, capacity, layout)
	VALUES ('"public"."users"."username"', 'users', 'username', 0.005, 200000, 'blocked');
	CREATE TRIGGER bloom_guard_username AFTER INSERT OR UPDATE ON users
		FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('"public"."users"."username"');
	ALTER TABLE users OWNER TO owner;
	CREATE FUNCTION username_taken(name text) RETURNS boolean LANGUAGE sql STABLE
		AS $$ SELECT bloom_shared_contains('"public"."users"."username"', name)
			AND EXISTS (SELECT 1 FROM users WHERE username = name) $$;
});

# ------------------------------------------------- 1. before the update ----
is($node->safe_psql('app', q{INSERT INTO users (username) SELECT 'before' || i FROM generate_series(1, 1000) i;
	SELECT count(*) FROM users WHERE username LIKE 'before%'}), '1000',
	'a 1.1 database with the 2.0 library: writes to the guarded table go on (its trigger does nothing)');
my ($st, $err) = sqlstate($node, 'app', q{SELECT bloom_shared_contains('"public"."users"."username"', 'user1'::text)});
is($st, '55000', 'the 1.1 guard functions fail with 55000 before the update');
like($err, qr/ALTER EXTENSION bloomfilter UPDATE/, 'and say to update');
my $log_start = -s $node->logfile;
$node->restart;
like(slurp_file($node->logfile, $log_start), qr/invalid configuration parameter name "bloomfilter.shared_memory"/,
	'a restart with 1.1\'s setting starts, and names the setting to remove');

# ------------------------------------------------------ 2. the update ----
my $writer = $node->background_psql('app');
$writer->query_safe('BEGIN');
$writer->query_safe(q{INSERT INTO users (username) SELECT 'during' || i FROM generate_series(1, 500) i});
my $updater = $node->background_psql('app', on_error_stop => 0);
$updater->query_until(qr/started/, "\\echo started\nALTER EXTENSION bloomfilter UPDATE;\n\\echo updated\n");
ok(poll_for($node, 'app', q{SELECT count(*) > 0 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
	WHERE c.relname = 'users' AND NOT l.granted}, 't', 30),
	'the update waits for the writer\'s transaction (its locks on the table)');
$writer->query_safe('COMMIT');
$writer->quit;
$updater->quit;
is($node->safe_psql('app', q{SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'}), '2.0',
	'updated to 2.0');
$node->safe_psql('app', q{INSERT INTO users (username) SELECT 'after' || i FROM generate_series(1, 1000) i});
my $guard = $node->safe_psql('app', q{SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'bloomguard' AND i.indrelid = 'users'::regclass});
like($guard, qr/^users_username_idx$/, "the guard is a guard index ($guard)");
is($node->safe_psql('app', qq{SELECT capacity || ',' || target_fpr FROM bloom_guard_info('$guard')}),
	'200000,0.005', 'with the 1.1 guard\'s capacity and rate');
my $n = $node->safe_psql('app', 'SELECT count(*) FROM users');
is($node->safe_psql('app', qq{SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('$guard', username)
	OR NOT bloom_shared_contains('"public"."users"."username"', username)) || '/' || count(*) FROM users}),
	"0/$n", "every key written before, during and after the update answers true ($n), by either name");
is($node->safe_psql('app', q{SELECT count(*) FILTER (WHERE username_taken('nobody' || i)) FROM generate_series(1, 1000) i}),
	'0', 'a function written for 1.1 keeps working');
like($node->safe_psql('app', q{EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'x'}),
	qr/BloomGuard/, 'the planner gates the table');
is($node->safe_psql('app', q{SELECT (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal) || ',' ||
	(SELECT count(*) FROM pg_event_trigger) || ',' || (to_regclass('bloom_shared_definitions') IS NULL)}),
	'0,0,true', 'no guard trigger, event trigger or definitions table is left');

# ---------------------------------------------- 3. dump by the owner ----
my $tmp = PostgreSQL::Test::Utils::tempdir;
ok(PostgreSQL::Test::Utils::run_log([ 'pg_dump', '-Fc', '-d', $node->connstr('app') . ' user=owner',
	'-f', "$tmp/app.dump" ]), 'pg_dump by the database owner (no superuser)');
one($node, 'CREATE DATABASE app2 OWNER owner');
ok(PostgreSQL::Test::Utils::run_log([ 'pg_restore', '--no-owner', '-d', $node->connstr('app2') . ' user=owner',
	"$tmp/app.dump" ]), 'pg_restore into a new database');
is($node->safe_psql('app2', qq{SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('$guard', username))
	|| '/' || count(*) FROM users}), "0/$n", 'the restored guard holds every key');

$node->stop;
done_testing();
