# Shared filters (1.1 rules): no privilege escalation through the extension,
# and checks that respect row-level security.
#
# The extension is trusted: a database owner may create it, and its objects
# (the definitions table, the trigger and event-trigger functions) belong to
# the bootstrap superuser.  Every query the extension runs on its own behalf
# must ignore the caller's search_path, so user-defined operators and
# functions planted in it never run with the extension's rights:
#
#   1. mallory (unprivileged, owns schema mal) plants trap operators (=, <>,
#      ||, ~~ on text/name/oid/int8/regclass/... pairs), functions (left,
#      lower, quote_ident, format, to_regclass, ...) and aggregates (count(*),
#      count(text), max, bool_or, array_agg) that run ALTER ROLE mallory
#      SUPERUSER when anybody else runs them, puts mal first on her
#      search_path (before pg_catalog), and then guards, alters, renames,
#      creates/replaces/renames/drops triggers, disables and enables them,
#      adds children and partitions, rebuilds, unguards and drops tables.
#      After every step: mallory is still not a superuser, and no trap ran
#      as another role.
#   2. lying operators (= always false) on the search path do not silence
#      the event triggers: disabling the guard trigger still suspends the
#      guard, dropping it still removes it; never a "no" for a stored key.
#   3. a database owner (not a superuser) creates the extension, sets
#      ALTER DATABASE ... SET search_path = traps first, and guards tables:
#      the background workers (build, rebuild, start-up load) must not run
#      the traps; index expressions and domain CHECKs on the guarded table
#      that escalate when run by a superuser do not escalate either.
#   4. row-level security: a role subject to RLS on the table gets 42501 from
#      bloom_shared_contains and bloom_shared_get; BYPASSRLS, the owner
#      (without FORCE), superusers, and roles on tables without RLS succeed;
#      FORCE ROW LEVEL SECURITY makes the owner fail too;
#   5. checks, get and wait need USAGE on the schema (42501); the view hides
#      state and counters from roles that may not check.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

$SharedFilterTest::wait_seconds = 20;

my $node = shared_node('trust_privilege', "max_worker_processes = 16\n");
my $watch = crash_watch($node);

$node->safe_psql('postgres', q{
	CREATE ROLE mallory LOGIN;
	CREATE ROLE dbo LOGIN;
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	CREATE ROLE carl LOGIN BYPASSRLS;
	GRANT CREATE ON SCHEMA public TO alice;
});

# Superuser? and what the traps logged (as anyone but their owner).
sub rolsuper
{
	my ($role, $db) = @_;
	local $ENV{PGOPTIONS} = '-c search_path=pg_catalog,public';
	return $node->safe_psql($db // 'postgres', "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = '$role'");
}

sub trap_calls
{
	my ($db, $schema) = @_;
	local $ENV{PGOPTIONS} = '-c search_path=pg_catalog,public';
	return $node->safe_psql($db,
		"SELECT coalesce(string_agg(DISTINCT who || (CASE WHEN su THEN ' (superuser)' ELSE '' END) || ': ' || what, '; '), '') FROM $schema.trap_log");
}

# Two tests after each step: still not a superuser, no trap ran as anybody
# else.  A failure resets both so that the next step is tested on its own.
sub not_escalated
{
	my ($db, $schema, $role, $what) = @_;
	my $su = rolsuper($role, $db);
	is($su, 'f', "$what: $role is still not a superuser");
	my $calls = trap_calls($db, $schema);
	is($calls, '', "$what: no trap planted by $role ran as another role");
	if ($su ne 'f' || $calls ne '')
	{
		local $ENV{PGOPTIONS} = '-c search_path=pg_catalog,public';
		$node->safe_psql($db, "ALTER ROLE $role NOSUPERUSER; DELETE FROM $schema.trap_log;");
	}
}

# ============================================== 1. mallory's search_path ====
plant_traps($node, 'postgres', 'mal', 'mallory');
$node->safe_psql('postgres', q{
	CREATE SCHEMA mal2 AUTHORIZATION mallory;
	GRANT USAGE ON SCHEMA mal2 TO PUBLIC;
});
my $SP = 'SET search_path = mal, pg_catalog, public;';

# Run $sql as mallory with the traps first on her search_path; returns the
# SQLSTATE ('OK' when none).
sub as_mallory
{
	my ($sql, $what) = @_;
	my ($st, $out, $err) = psql_as($node, 'postgres', 'mallory', "$SP\n$sql");
	note("$what: $st" . ($st eq 'OK' ? '' : " ($err)"));
	return ($st, $out, $err);
}

# The example of the issue, verbatim: an int8 = int4 operator.
my ($st, $out, $err) = as_mallory(q{
	CREATE TABLE mal.t(k text);
	INSERT INTO mal.t SELECT 'm' || i FROM generate_series(1, 2000) i;
	SELECT public.bloom_guard('mal.t','k');
}, 'bloom_guard');
is($st, 'OK', 'mallory guards her own table with traps on her search_path') or diag($err);
like($out, qr/^mal\.t\.k$/m, 'bloom_guard returns mal.t.k');
not_escalated('postgres', 'mal', 'mallory', 'bloom_guard');
wait_ready($node, 'postgres', 'mal.t.k', 'mallory\'s guard');
no_false_negatives($node, 'postgres', 'mal.t.k', 'SELECT k FROM mal.t', 'mallory\'s guard');
not_escalated('postgres', 'mal', 'mallory', 'the build of mallory\'s guard');

my @steps = (
	[ 'checks, add and get', q{
		SELECT public.bloom_shared_contains('mal.t.k', 'm1'), public.bloom_shared_contains('mal.t.k', 'm1'::text),
		       public.bloom_info(public.bloom_shared_get('mal.t.k')) IS NOT NULL;
		SELECT public.bloom_shared_add('mal.t.k', 'added'::text);
		SELECT count(*) FROM public.bloom_shared_filters;} ],
	[ 'INSERT and UPDATE (the guard trigger)', q{
		INSERT INTO mal.t SELECT 'n' || i FROM generate_series(1, 100) i;
		UPDATE mal.t SET k = k || '-u' WHERE k = 'n1';} ],
	[ 'ALTER TABLE ADD COLUMN / ALTER COLUMN TYPE', q{
		ALTER TABLE mal.t ADD COLUMN x int;
		ALTER TABLE mal.t ALTER COLUMN x TYPE bigint;
		ALTER TABLE mal.t ALTER COLUMN k TYPE text USING k;} ],
	[ 'CREATE / ALTER / DROP TRIGGER of another trigger', q{
		CREATE FUNCTION mal.noop() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$;
		CREATE TRIGGER other AFTER INSERT ON mal.t FOR EACH ROW EXECUTE FUNCTION mal.noop();
		ALTER TRIGGER other ON mal.t RENAME TO other2;
		DROP TRIGGER other2 ON mal.t;} ],
	[ 'DISABLE / ENABLE TRIGGER ALL', q{
		ALTER TABLE mal.t DISABLE TRIGGER ALL;
		INSERT INTO mal.t VALUES ('while-disabled');
		ALTER TABLE mal.t ENABLE TRIGGER ALL;} ],
	[ 'CREATE OR REPLACE TRIGGER of the guard trigger (same definition)', q{
		CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON mal.t
			FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('mal.t.k');} ],
	[ 'ALTER TRIGGER RENAME of the guard trigger', q{
		ALTER TRIGGER bloom_guard_k ON mal.t RENAME TO renamed_guard;
		INSERT INTO mal.t VALUES ('after-trigger-rename');} ],
	[ 'inheritance child and partitions', q{
		CREATE TABLE mal.c () INHERITS (mal.t);
		INSERT INTO mal.c (k) VALUES ('child1');
		CREATE TABLE mal.p (k text) PARTITION BY LIST (k);
		CREATE TABLE mal.p1 PARTITION OF mal.p FOR VALUES IN ('a');
		SELECT public.bloom_guard('mal.p', 'k');
		CREATE TABLE mal.p2 (k text);
		INSERT INTO mal.p2 VALUES ('b');
		ALTER TABLE mal.p ATTACH PARTITION mal.p2 FOR VALUES IN ('b');
		ALTER TABLE mal.p DETACH PARTITION mal.p2;} ],
	[ 'bloom_shared_rebuild', q{SELECT public.bloom_shared_rebuild('mal.t.k');} ],
	[ 'bloom_shared_wait', q{SELECT public.bloom_shared_wait('mal.t.k', 30000);} ],
	[ 'bloom_unguard and bloom_guard again', q{
		SELECT public.bloom_unguard('mal.t', 'k');
		SELECT public.bloom_guard('mal.t', 'k');} ],
	[ 'DROP TRIGGER of a guard trigger (removes the guard)', q{
		CREATE TABLE mal.t2 (k text);
		INSERT INTO mal.t2 VALUES ('x');
		SELECT public.bloom_guard('mal.t2', 'k');
		DROP TRIGGER bloom_guard_k ON mal.t2;} ],
	[ 'DROP TABLE of a guarded table (event trigger)', q{
		CREATE TABLE mal.t3 (k text);
		SELECT public.bloom_guard('mal.t3', 'k');
		DROP TABLE mal.t3;} ],
	[ 'ALTER TABLE RENAME, ALTER SCHEMA RENAME, DROP SCHEMA CASCADE', q{
		CREATE TABLE mal2.t (k text);
		SELECT public.bloom_guard('mal2.t', 'k');
		ALTER TABLE mal2.t RENAME TO t_renamed;
		ALTER SCHEMA mal2 RENAME TO mal2_renamed;
		DROP SCHEMA mal2_renamed CASCADE;} ],
	[ 'DROP TABLE CASCADE of a guarded parent with children', q{
		CREATE TABLE mal.par (k text);
		SELECT public.bloom_guard('mal.par', 'k');
		CREATE TABLE mal.par_c () INHERITS (mal.par);
		DROP TABLE mal.par CASCADE;} ],
);
for my $step (@steps)
{
	my ($what, $sql) = @$step;
	as_mallory($sql, $what);
	not_escalated('postgres', 'mal', 'mallory', $what);
}
# Let the builds the steps started run (as whoever they run as), then look
# again.
poll_for($node, 'postgres', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bloomfilter build'}, '0', 20);
ok(poll_for($node, 'postgres', q{SELECT bool_and(state IN ('ready', 'suspended')) FROM bloom_shared_filters WHERE name LIKE 'mal.%'}, 't', 20),
	'mallory\'s filters are built');
not_escalated('postgres', 'mal', 'mallory', 'the builds started by mallory\'s steps');
no_false_negatives($node, 'postgres', 'mal.t.k', 'SELECT k FROM mal.t', 'mallory\'s table after the steps');

# ========================================= 2. lying operators on the path ====
# = always false, <> always true, count 0, bool_or false: the event
# triggers' protections must still apply.
plant_traps($node, 'postgres', 'liar', 'mallory', liar => 1);
my $LSP = 'SET search_path = liar, pg_catalog, public;';
$node->safe_psql('postgres', q{
	SET ROLE mallory;
	CREATE TABLE mal.lt (k text);
	INSERT INTO mal.lt SELECT 'l' || i FROM generate_series(1, 2000) i;
	SELECT public.bloom_guard('mal.lt', 'k');
	CREATE TABLE mal.lt2 (k text);
	INSERT INTO mal.lt2 SELECT 'l' || i FROM generate_series(1, 2000) i;
	SELECT public.bloom_guard('mal.lt2', 'k');
});
wait_ready($node, 'postgres', 'mal.lt.k', 'liar table');
wait_ready($node, 'postgres', 'mal.lt2.k', 'liar table 2');

($st, $out, $err) = psql_as($node, 'postgres', 'mallory', qq{$LSP
	ALTER TABLE mal.lt DISABLE TRIGGER bloom_guard_k;
	INSERT INTO mal.lt SELECT 'l-disabled' || i FROM generate_series(1, 500) i;});
is($st, 'OK', 'liars on the path: DISABLE TRIGGER and inserts') or diag($err);
ok(poll_for($node, 'postgres', q{SELECT state FROM bloom_shared_filters WHERE name = 'mal.lt.k'}, 'suspended', 20),
	'liars on the path: the guard is still suspended by DISABLE TRIGGER')
	or diag('state: ' . state_of($node, 'postgres', 'mal.lt.k'));
no_false_negatives($node, 'postgres', 'mal.lt.k', 'SELECT k FROM mal.lt', 'liars on the path, trigger disabled');
($st, $out, $err) = psql_as($node, 'postgres', 'mallory', qq{$LSP
	ALTER TABLE mal.lt ENABLE TRIGGER bloom_guard_k;});
is($st, 'OK', 'liars on the path: ENABLE TRIGGER') or diag($err);
is(guard_trigger_list($node, 'postgres', 'mal.lt'), 'bloom_guard_k:A', 'liars on the path: ENABLE is set back to ALWAYS');
wait_ready($node, 'postgres', 'mal.lt.k', 'liars on the path, enabled again');
no_false_negatives($node, 'postgres', 'mal.lt.k', 'SELECT k FROM mal.lt', 'liars on the path, enabled again');

($st, $out, $err) = psql_as($node, 'postgres', 'mallory', qq{$LSP
	ALTER TRIGGER bloom_guard_k ON mal.lt2 RENAME TO x;
	DROP TRIGGER x ON mal.lt2;
	INSERT INTO mal.lt2 SELECT 'l-dropped' || i FROM generate_series(1, 500) i;});
is($st, 'OK', 'liars on the path: rename and drop the guard trigger') or diag($err);
is(contains_error($node, 'postgres', 'mal.lt2.k', "'l-dropped1'::text"), '42704',
	'liars on the path: dropping the guard trigger removed the guard (42704, not "no")');
is($node->safe_psql('postgres', q{SELECT count(*) FROM bloom_shared_definitions WHERE name = 'mal.lt2.k'}), '0',
	'liars on the path: the definition is gone');

($st, $out, $err) = psql_as($node, 'postgres', 'mallory', qq{$LSP
	CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON mal.lt
		FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('mal.lt.k');});
is($st, 'OK', 'liars on the path: CREATE OR REPLACE TRIGGER of the guard trigger') or diag($err);
is(guard_trigger_list($node, 'postgres', 'mal.lt'), 'bloom_guard_k:A', 'liars on the path: the replaced trigger fires ALWAYS');
$node->safe_psql('postgres', q{SET session_replication_role = replica;
	INSERT INTO mal.lt SELECT 'l-replica' || i FROM generate_series(1, 500) i;});
no_false_negatives($node, 'postgres', 'mal.lt.k', 'SELECT k FROM mal.lt', 'liars on the path, replaced trigger, replica writes');
($st, $out, $err) = psql_as($node, 'postgres', 'mallory', qq{$LSP DROP TABLE mal.lt;});
is($st, 'OK', 'liars on the path: DROP TABLE') or diag($err);
is($node->safe_psql('postgres', q{SELECT count(*) FROM bloom_shared_definitions WHERE name = 'mal.lt.k'}), '0',
	'liars on the path: DROP TABLE removed the definition');
is(contains_error($node, 'postgres', 'mal.lt.k', "'l1'::text"), '42704', 'liars on the path: dropped table: 42704');
not_escalated('postgres', 'mal', 'mallory', 'the liar steps');

# ================================ 3. database owner and background workers ====
$node->safe_psql('postgres', 'CREATE DATABASE owned OWNER dbo');
($st, $out, $err) = psql_as($node, 'owned', 'dbo', 'CREATE EXTENSION bloomfilter');
is($st, 'OK', 'a database owner (not a superuser) creates the trusted extension') or diag($err);
plant_traps($node, 'owned', 'dmal', 'dbo');
# The escalating index expression and domain check: IMMUTABLE wrappers
# around the (volatile) trap.
$node->safe_psql('owned', q{
	SET ROLE dbo;
	CREATE FUNCTION dmal.esc(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE
		SET search_path = pg_catalog, pg_temp AS $$
	BEGIN
		IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
			PERFORM dmal.trap('index expression as ' || current_user);
		END IF;
		RETURN t;
	END $$;
	CREATE FUNCTION dmal.chk(t text) RETURNS bool LANGUAGE plpgsql
		SET search_path = pg_catalog, pg_temp AS $$
	BEGIN
		IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
			PERFORM dmal.trap('domain check as ' || current_user);
		END IF;
		RETURN true;
	END $$;
	CREATE DOMAIN dmal.dk AS text CHECK (dmal.chk(VALUE));
	CREATE TABLE public.w (k text, d dmal.dk);
	INSERT INTO public.w SELECT 'w' || i, 'd' || i FROM generate_series(1, 3000) i;
	CREATE INDEX ON public.w ((dmal.esc(k)));
	CREATE INDEX ON public.w (k) WHERE dmal.esc(k) IS NOT NULL;
	CREATE TABLE public.fresh (k text);
	INSERT INTO public.fresh SELECT 'f' || i FROM generate_series(1, 3000) i;
});
# the brief's setting first (pg_catalog implicitly first), then traps before
# pg_catalog
my $round = 0;
for my $path ('dmal, public', 'dmal, pg_catalog, public')
{
	$round++;
	($st, $out, $err) = psql_as($node, 'owned', 'dbo', "ALTER DATABASE owned SET search_path = $path");
	is($st, 'OK', "database owner: ALTER DATABASE owned SET search_path = $path") or diag($err);
	# dbo works with the database's setting (a new session each time)
	my $sql = $round == 1
	  ? q{SELECT bloom_guard('public.w', 'k'); SELECT bloom_guard('public.w', 'd'); SELECT bloom_guard('public.fresh', 'k');}
	  : q{SELECT bloom_shared_rebuild('public.w.k'); SELECT bloom_shared_rebuild('public.w.d');
		  SELECT bloom_unguard('public.fresh', 'k'); SELECT bloom_guard('public.fresh', 'k');};
	($st, $out, $err) = psql_as($node, 'owned', 'dbo', $sql);
	is($st, 'OK', "database owner, search_path $path: guards and rebuilds") or diag($err);
	{
		local $ENV{PGOPTIONS} = '-c search_path=pg_catalog,public';
		wait_ready($node, 'owned', $_, "database owner, search_path $path: $_")
		  for ('public.w.k', 'public.w.d', 'public.fresh.k');
		no_false_negatives($node, 'owned', 'public.w.k', 'SELECT k FROM public.w', "database owner, $path: w.k");
		no_false_negatives($node, 'owned', 'public.w.d', 'SELECT d::text FROM public.w', "database owner, $path: w.d (domain)");
		no_false_negatives($node, 'owned', 'public.fresh.k', 'SELECT k FROM public.fresh', "database owner, $path: fresh.k");
	}
	not_escalated('owned', 'dmal', 'dbo', "builds under ALTER DATABASE SET search_path = $path");
}
# dbo's own writes run the index expression and the check as dbo: harmless
($st, $out, $err) = psql_as($node, 'owned', 'dbo', q{INSERT INTO public.w SELECT 'w2-' || i, 'e' || i FROM generate_series(1, 100) i});
is($st, 'OK', 'database owner: inserts into the guarded table') or diag($err);
# the start-up worker loads every filter of the database with its settings
$node->restart;
{
	local $ENV{PGOPTIONS} = '-c search_path=pg_catalog,public';
	ok(poll_for($node, 'owned', q{SELECT bool_and(state = 'ready') FROM bloom_shared_filters}, 't', 60),
		'database owner: the filters are ready again after a restart (start-up load)');
	no_false_negatives($node, 'owned', 'public.w.k', 'SELECT k FROM public.w', 'database owner, after the restart: w.k');
}
not_escalated('owned', 'dmal', 'dbo', 'the start-up load under the database\'s search_path');
$watch = crash_watch($node);

# ================================================ 4. row-level security ====
$node->safe_psql('postgres', q{
	SET ROLE alice;
	CREATE TABLE public.r (k text, owner_name name DEFAULT current_user);
	INSERT INTO public.r (k) SELECT 'r' || i FROM generate_series(1, 1000) i;
	CREATE TABLE public.nr (k text);
	INSERT INTO public.nr SELECT 'nr' || i FROM generate_series(1, 1000) i;
	GRANT SELECT ON public.r, public.nr TO bob, carl;
	SELECT bloom_guard('public.r', 'k');
	SELECT bloom_guard('public.nr', 'k');
	ALTER TABLE public.r ENABLE ROW LEVEL SECURITY;
	CREATE POLICY own ON public.r USING (owner_name = current_user);
});
wait_ready($node, 'postgres', 'public.r.k', 'RLS table');
wait_ready($node, 'postgres', 'public.nr.k', 'table without RLS');
is((psql_as($node, 'postgres', 'bob', q{SELECT count(*) FROM public.r}))[1], '0',
	'RLS: bob sees no row of r through SELECT');
for my $call ("SELECT bloom_shared_contains('public.r.k', 'r1')",
	"SELECT bloom_shared_contains('public.r.k', 'r1'::text)",
	"SELECT bloom_shared_get('public.r.k') IS NOT NULL")
{
	is((psql_as($node, 'postgres', 'bob', $call))[0], '42501', "RLS applies to bob: $call raises 42501");
}
for my $who ('carl', 'alice', $node->safe_psql('postgres', 'SELECT current_user'))
{
	my ($s2, $o2, $e2) = psql_as($node, 'postgres', $who,
		"SELECT bloom_shared_contains('public.r.k', 'r1'::text), bloom_shared_get('public.r.k') IS NOT NULL");
	is("$s2 $o2", 'OK t|t', "RLS bypassed by $who (BYPASSRLS, owner without FORCE, or superuser): checks answer")
	  or diag($e2);
}
my ($s3, $o3, $e3) = psql_as($node, 'postgres', 'bob',
	"SELECT bloom_shared_contains('public.nr.k', 'nr1'::text), bloom_shared_get('public.nr.k') IS NOT NULL");
is("$s3 $o3", 'OK t|t', 'bob on a table without RLS: checks answer') or diag($e3);
$node->safe_psql('postgres', 'ALTER TABLE public.r FORCE ROW LEVEL SECURITY');
is((psql_as($node, 'postgres', 'alice', "SELECT bloom_shared_contains('public.r.k', 'r1'::text)"))[0], '42501',
	'FORCE ROW LEVEL SECURITY: the owner gets 42501 too');
is((psql_as($node, 'postgres', 'alice', "SELECT bloom_shared_get('public.r.k') IS NOT NULL"))[0], '42501',
	'FORCE ROW LEVEL SECURITY: bloom_shared_get of the owner: 42501');
is((psql_as($node, 'postgres', 'carl', "SELECT bloom_shared_contains('public.r.k', 'r1'::text)"))[0], 'OK',
	'FORCE ROW LEVEL SECURITY: BYPASSRLS still answers');
# RLS that applies to bob although no policy names him: no policy at all
# (default deny), a policy for another role only, a policy for INSERT only;
# and row_security = off does not turn the refusal into an answer.
$node->safe_psql('postgres', q{
	SET ROLE alice;
	CREATE TABLE public.rl1 (k text); INSERT INTO public.rl1 VALUES ('secret1');
	CREATE TABLE public.rl2 (k text); INSERT INTO public.rl2 VALUES ('secret2');
	CREATE TABLE public.rl3 (k text); INSERT INTO public.rl3 VALUES ('secret3');
	SELECT bloom_guard('public.rl1', 'k'); SELECT bloom_guard('public.rl2', 'k'); SELECT bloom_guard('public.rl3', 'k');
	ALTER TABLE public.rl1 ENABLE ROW LEVEL SECURITY;
	ALTER TABLE public.rl2 ENABLE ROW LEVEL SECURITY;
	CREATE POLICY p ON public.rl2 FOR SELECT TO carl USING (true);
	ALTER TABLE public.rl3 ENABLE ROW LEVEL SECURITY;
	CREATE POLICY p ON public.rl3 FOR INSERT TO bob WITH CHECK (true);
	GRANT SELECT, INSERT ON public.rl1, public.rl2, public.rl3 TO bob;
});
for my $t ('rl1', 'rl2', 'rl3')
{
	wait_ready($node, 'postgres', "public.$t.k", "RLS variant $t");
	is((psql_as($node, 'postgres', 'bob', "SELECT count(*) FROM public.$t"))[1], '0', "RLS variant $t: bob sees no row");
	is((psql_as($node, 'postgres', 'bob', "SELECT bloom_shared_contains('public.$t.k', 'secret1'::text)"))[0], '42501',
		"RLS variant $t: bob's check raises 42501");
	is((psql_as($node, 'postgres', 'bob', "SET row_security = off; SELECT bloom_shared_contains('public.$t.k', 'x'::text)"))[0],
		'42501', "RLS variant $t: with row_security = off too");
	is((psql_as($node, 'postgres', 'bob', "SELECT bloom_shared_get('public.$t.k') IS NOT NULL"))[0], '42501',
		"RLS variant $t: bob's bloom_shared_get raises 42501");
}
$node->safe_psql('postgres', 'ALTER TABLE public.r NO FORCE ROW LEVEL SECURITY; ALTER TABLE public.r DISABLE ROW LEVEL SECURITY');
is((psql_as($node, 'postgres', 'bob', "SELECT bloom_shared_contains('public.r.k', 'r1'::text)"))[0], 'OK',
	'RLS disabled again: bob\'s checks answer');

# ============================================= 5. schema USAGE, the view ====
# Checks, get and wait also need USAGE on the table's schema; the view shows
# the state and counters only to roles that may check (or own) the filter.
$node->safe_psql('postgres', q{
	CREATE SCHEMA priv AUTHORIZATION alice;
	SET ROLE alice;
	CREATE TABLE priv.t (k text);
	INSERT INTO priv.t SELECT 'p' || i FROM generate_series(1, 500) i;
	GRANT SELECT ON priv.t TO bob;
	SELECT bloom_guard('priv.t', 'k');
});
wait_ready($node, 'postgres', 'priv.t.k', 'table in a schema without USAGE');
for my $call ("SELECT bloom_shared_contains('priv.t.k', 'p1'::text)",
	"SELECT bloom_shared_get('priv.t.k') IS NOT NULL",
	"SELECT bloom_shared_wait('priv.t.k', 100)")
{
	is((psql_as($node, 'postgres', 'bob', $call))[0], '42501', "no USAGE on the schema: $call raises 42501");
}
$node->safe_psql('postgres', q{SET ROLE alice; SELECT count(*) FROM generate_series(1, 100) i WHERE bloom_shared_contains('priv.t.k', 'zz' || i);});
my ($vs, $vo) = psql_as($node, 'postgres', 'carl', q{SELECT state, coalesce(checks, 0) = 0 AND coalesce(negatives, 0) = 0
	AND keys_added IS NULL AND last_error IS NULL FROM bloom_shared_filters WHERE name = 'priv.t.k'});
is("$vs $vo", 'OK hidden|t', 'the view hides the state and counters from a role that may not check');
is($node->safe_psql('postgres', q{SELECT checks >= 100 FROM bloom_shared_filters WHERE name = 'priv.t.k'}), 't',
	'(the filter has counted checks, shown to the superuser)');
$node->safe_psql('postgres', 'SET ROLE alice; GRANT USAGE ON SCHEMA priv TO bob;');
my ($us, $uo, $ue) = psql_as($node, 'postgres', 'bob', q{SELECT bloom_shared_contains('priv.t.k', 'p1'::text)});
is("$us $uo", 'OK t', 'USAGE granted: bob\'s check answers') or diag($ue);
($vs, $vo) = psql_as($node, 'postgres', 'bob', q{SELECT state FROM bloom_shared_filters WHERE name = 'priv.t.k'});
is("$vs $vo", 'OK ready', 'the view shows the state to a role that may check');

# SELECT on one partition (or inheritance child) is not SELECT on the tree:
# the filter answers for every partition.
$node->safe_psql('postgres', q{
	SET ROLE alice;
	CREATE TABLE public.pp (g int, k text) PARTITION BY LIST (g);
	CREATE TABLE public.pp0 PARTITION OF public.pp FOR VALUES IN (0);
	CREATE TABLE public.pp1 PARTITION OF public.pp FOR VALUES IN (1);
	INSERT INTO public.pp VALUES (0, 'visible'), (1, 'hidden');
	GRANT SELECT ON public.pp0 TO bob;
	CREATE TABLE public.ip (k text); CREATE TABLE public.ic () INHERITS (public.ip);
	INSERT INTO public.ip VALUES ('parent-row'); INSERT INTO public.ic VALUES ('child-row');
	GRANT SELECT ON public.ic TO bob;
	SELECT bloom_guard('public.pp', 'k'); SELECT bloom_guard('public.ip', 'k');
});
wait_ready($node, 'postgres', 'public.pp.k', 'partitioned, SELECT on one partition');
is((psql_as($node, 'postgres', 'bob', q{SELECT bloom_shared_contains('public.pp.k', 'hidden'::text)}))[0], '42501',
	'SELECT on one partition only: checks of the partitioned table\'s filter raise 42501');
is((psql_as($node, 'postgres', 'bob', q{SELECT bloom_shared_contains('public.ip.k', 'parent-row'::text)}))[0], '42501',
	'SELECT on an inheritance child only: checks of the parent\'s filter raise 42501');

server_intact($node, $watch, 'end of 107');
$node->stop;
done_testing();
