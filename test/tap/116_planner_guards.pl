# Planner guards: the plan checks a shared filter once before a scan whose
# condition compares a guarded column with a value known before the scan,
# and skips the scan when the filter answers "no".
#
# 1. EXPLAIN (COSTS OFF) of where a gate is added and where not, against
#    planner/explain.out.
# 2. Randomized equivalence: thousands of random queries (constants,
#    generic prepared plans, PL/pgSQL's cached plans, IN lists and arrays,
#    joins, partitions, subqueries; planner/equiv.sql) give the same rows
#    as the same queries planned without guards, in the same snapshot,
#    while pgbench inserts new keys; the gates did skip scans.
# 3. Rows inserted earlier in the same transaction; a suspended guard.
# 4. Cached plans (prepared statements, PL/pgSQL) across unguard and guard:
#    right rows, then plans without the gate, then with the new one.
# 5. Privileges: no SELECT is the scan's usual error; through a view the
#    gate answers "maybe" for a role that could not check the filter; no
#    gate under row-level security or a nondeterministic collation.
# 6. The GUC: off plans no gate, and a gated plan cached before answers
#    "maybe".
# 7. Restart: right after it (filters not loaded yet) and once ready.
# 8. Hot standby: gated plans find the rows the primary committed.
# 9. IN lists: the index is searched for the "maybe" keys only; every plan
#    shape gives the rows it gives without guards.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use File::Compare;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $dir = "$FindBin::RealBin/planner";

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'bloomfilter'
shared_buffers = 64MB
max_connections = 30
jit = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');
$node->safe_psql('postgres', slurp_file("$dir/setup.sql"));
for my $f ('public.users.username', 'public.users.n', 'public.users.tag', 'public.events.event_id')
{
	wait_ready($node, 'postgres', $f, "setup: $f");
}

# Rows of a query (one line per row, '|' between columns).
sub rows
{
	my ($n, $sql) = @_;
	return $n->safe_psql('postgres', $sql);
}

sub skipped
{
	my ($n, $name) = @_;
	return $n->safe_psql('postgres',
		"SELECT skipped_scans FROM bloom_shared_filters WHERE name = '$name'");
}

# ---------------------------------------------------------- 1. EXPLAIN ----
{
	my $out = PostgreSQL::Test::Utils::tempdir . '/explain.out';
	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[ 'psql', '-X', '-a', '-q', '-d', $node->connstr('postgres'),
		  '-f', "$dir/explain.sql" ],
		'>', $out, '2>', \$stderr);
	is($stderr, '', 'EXPLAIN script: no error');
	my $same = compare($out, "$dir/explain.out") == 0;
	ok($same, 'EXPLAIN shows a gate exactly where it is valid (planner/explain.out)');
	if (!$same)
	{
		my ($d) = ('');
		IPC::Run::run([ 'diff', '-u', "$dir/explain.out", $out ], '>', \$d);
		diag($d);
	}
}

# ------------------------------------------- 2. randomized equivalence ----
$node->safe_psql('postgres', slurp_file("$dir/equiv.sql"));
my %before = map { $_ => skipped($node, $_) }
  ('public.users.username', 'public.users.n', 'public.events.event_id');

my $wdir = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$wdir/insert.sql") or die;
print $fh q{
INSERT INTO users (username, n, tag)
	SELECT 'user' || i, 3 * i, 'tag' || (i % 600) FROM (SELECT nextval('users_more') i) s;
INSERT INTO events SELECT i, i % 8, 'p' || i FROM (SELECT nextval('events_more') i) s;
};
close $fh;
my ($bout, $berr) = ('', '');
my $bench;
{
	local $ENV{PGOPTIONS} = '-c log_statement=none';
	$bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-T', '40', '-f', "$wdir/insert.sql",
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$bout, '2>', \$berr);
}
my $compared = 0;
my $rounds = 0;
my $deadline = time + 35;
while ($rounds < 20 && (time < $deadline || $rounds < 6))
{
	# one session per round: prepared statements, PL/pgSQL plans, a snapshot
	my $n = $node->safe_psql('postgres', qq{
		SET plan_cache_mode = force_generic_plan;
		SELECT eq_prepare();
		BEGIN ISOLATION LEVEL REPEATABLE READ;
		SELECT eq_run(300);
		COMMIT;
	});
	$n =~ s/\D//g;
	$compared += $n;
	$rounds++;
}
$bench->finish;
is($?, 0, 'pgbench inserted concurrently') or diag($berr);
like($bout, qr/number of transactions actually processed: (\d+)/, 'pgbench: transactions');
cmp_ok($compared, '>=', 3000, "randomized equivalence: $compared comparisons in $rounds rounds");
my $fails = $node->safe_psql('postgres',
	q{SELECT count(*) || coalesce(': ' || string_agg(format('template %s %s (%s): %s, want %s', template, mode, value, got, want), '; '), '')
	  FROM (SELECT * FROM eq_failures LIMIT 20) f});
is($fails, '0', 'the same rows with planner guards on and off');
for my $f (sort keys %before)
{
	cmp_ok(skipped($node, $f), '>', $before{$f}, "the gates skipped scans ($f)");
}
# ------------------------------ 3. same transaction, suspended guard ----
is( rows($node, q{
	BEGIN;
	INSERT INTO users (username, n) VALUES ('fresh-1', -1);
	PREPARE fresh(text) AS SELECT id IS NOT NULL FROM users WHERE username = $1;
	SET LOCAL plan_cache_mode = force_generic_plan;
	SELECT count(*) FROM users WHERE username = 'fresh-1';
	EXECUTE fresh('fresh-1');
	ROLLBACK;
	}), "1\nt", 'a row inserted earlier in the transaction is found by gated plans');
is( rows($node, q{
	BEGIN;
	INSERT INTO users (username, n) VALUES ('fresh-2', -2);
	SAVEPOINT s;
	INSERT INTO users (username, n) VALUES ('fresh-3', -3);
	RELEASE s;
	SELECT count(*) FROM users WHERE username IN ('fresh-2', 'fresh-3');
	COMMIT;
	SELECT count(*) FROM users WHERE n = ANY ('{-2,-3}');
	}), "2\n2", 'rows of released savepoints and committed rows are found');

# a disabled trigger suspends the guard: rows written meanwhile are found
my $trig = $node->safe_psql('postgres', q{
	SELECT tgname FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
	 WHERE tgrelid = 'users'::regclass AND p.proname = 'bloom_shared_trigger'
	   AND encode(tgargs, 'escape') LIKE '%username%'});
$node->safe_psql('postgres', qq{ALTER TABLE users DISABLE TRIGGER "$trig"});
ok(poll_for($node, 'postgres', q{SELECT state FROM bloom_shared_filters WHERE name = 'public.users.username'},
	'suspended', 30), 'guard suspended');
$node->safe_psql('postgres', q{INSERT INTO users (username) VALUES ('while-disabled')});
is(rows($node, q{SELECT count(*) FROM users WHERE username = 'while-disabled'}), '1',
	'suspended guard: a row written meanwhile is found');
$node->safe_psql('postgres', qq{ALTER TABLE users ENABLE ALWAYS TRIGGER "$trig"});
wait_ready($node, 'postgres', 'public.users.username', 'trigger enabled again');
is(rows($node, q{SELECT count(*) FROM users WHERE username = 'while-disabled'}), '1',
	'rebuilt guard: the row is found');

# ------------------- 3b. queries run by a statement that is writing rows ----
# A guard trigger adds a row's key when the writing statement ends, but a
# query the statement runs meanwhile (a function per row, a BEFORE trigger of
# a later row, RETURNING, an AFTER trigger firing before the guard trigger,
# COPY's triggers) already sees the row: its gates must answer "maybe".
$node->safe_psql('postgres', q{
	CREATE TABLE dd (k text NOT NULL, note text);
	SELECT bloom_guard('dd', 'k');
	CREATE FUNCTION dd_count(v text) RETURNS bigint LANGUAGE plpgsql AS
		$f$ BEGIN RETURN (SELECT count(*) FROM dd WHERE k = v); END $f$;
	CREATE FUNCTION dd_audit() RETURNS trigger LANGUAGE plpgsql AS
		$f$ BEGIN INSERT INTO dd_log VALUES (NEW.k, dd_count(NEW.k)); RETURN NULL; END $f$;
	CREATE TABLE dd_log (k text, seen bigint);
	CREATE FUNCTION dd_skip() RETURNS trigger LANGUAGE plpgsql AS
		$f$ BEGIN IF EXISTS (SELECT 1 FROM dd WHERE k = NEW.k) THEN RETURN NULL; END IF; RETURN NEW; END $f$;
});
wait_ready($node, 'postgres', 'public.dd.k', 'dd');
is(rows($node, q{
	INSERT INTO dd SELECT 'm' || i, dd_count('m1')::text FROM generate_series(1, 3) i;
	SELECT string_agg(k || '=' || note, ',' ORDER BY k) FROM dd WHERE k LIKE 'm%'}),
	'm1=0,m2=1,m3=1', 'a function per row of a multi-row INSERT sees the earlier rows');
is(rows($node, q{INSERT INTO dd VALUES ('r1') RETURNING dd_count('r1')}), '1',
	'RETURNING sees the row just inserted');
is(rows($node, q{
	CREATE TRIGGER a_audit AFTER INSERT ON dd FOR EACH ROW EXECUTE FUNCTION dd_audit();
	INSERT INTO dd VALUES ('t1');
	DROP TRIGGER a_audit ON dd;
	SELECT seen FROM dd_log WHERE k = 't1'}), '1',
	'an AFTER trigger firing before the guard trigger sees the row');
is(rows($node, q{
	CREATE TRIGGER dd_skip BEFORE INSERT ON dd FOR EACH ROW EXECUTE FUNCTION dd_skip();
	INSERT INTO dd VALUES ('d1'), ('d1'), ('d1');
	SELECT count(*) FROM dd WHERE k = 'd1'}), '1',
	'a BEFORE trigger skipping duplicates sees the earlier rows of a multi-row INSERT');
{
	my ($rc, $o, $e) = $node->psql('postgres', "COPY dd (k) FROM STDIN;\nc1\nc1\nc1\n\\.\nSELECT count(*) FROM dd WHERE k = 'c1';");
	is($o, '1', 'the same trigger sees the earlier rows of COPY FROM') or diag($e);
}
# bloom_shared_contains in the same places answers "maybe" for such rows
$node->safe_psql('postgres', q{
	CREATE TABLE ee (k text NOT NULL, note text);
	SELECT bloom_guard('ee', 'k');
	CREATE FUNCTION ee_has(v text) RETURNS boolean LANGUAGE sql AS
		$f$ SELECT bloom_shared_contains('public.ee.k', v) $f$;
	CREATE FUNCTION ee_reject() RETURNS trigger LANGUAGE plpgsql AS
		$f$ BEGIN
			IF bloom_shared_contains('public.ee.k', NEW.k)
			   AND EXISTS (SELECT 1 FROM ee WHERE k = NEW.k) THEN
				RETURN NULL;
			END IF;
			RETURN NEW;
		END $f$;
});
wait_ready($node, 'postgres', 'public.ee.k', 'ee');
is(rows($node, q{
	SET bloomfilter.planner_guards = off;
	INSERT INTO ee SELECT 'h' || i, ee_has('h1')::text FROM generate_series(1, 3) i;
	SELECT string_agg(k || '=' || note, ',' ORDER BY k) FROM ee}),
	'h1=false,h2=true,h3=true',
	'bloom_shared_contains per row of a multi-row INSERT: "maybe" once an earlier row is written');
is(rows($node, q{
	SET bloomfilter.planner_guards = off;
	CREATE TRIGGER ee_reject BEFORE INSERT ON ee FOR EACH ROW EXECUTE FUNCTION ee_reject();
	INSERT INTO ee VALUES ('e1'), ('e1'), ('e1');
	SELECT count(*) FROM ee WHERE k = 'e1'}), '1',
	'a BEFORE trigger checking bloom_shared_contains sees the earlier rows of a multi-row INSERT');
{
	my ($rc, $o, $e) = $node->psql('postgres', "SET bloomfilter.planner_guards = off;\nCOPY ee (k) FROM STDIN;\nc1\nc1\nc1\n\\.\nSELECT count(*) FROM ee WHERE k = 'c1';");
	is($o, '1', 'the same trigger sees the earlier rows of COPY FROM') or diag($e);
}
is(rows($node, q{SELECT bloom_shared_contains('public.ee.k', 'never-added-x')}), 'f',
	'outside a writing statement, bloom_shared_contains answers "no" again');
my $sk0 = skipped($node, 'public.dd.k');
is(rows($node, q{
	INSERT INTO dd VALUES ('single-1');
	INSERT INTO dd VALUES ('single-1');
	SELECT count(*) FROM dd WHERE k = 'single-1'}), '1',
	'one-row INSERTs: the trigger skips the duplicate');
cmp_ok(skipped($node, 'public.dd.k'), '>', $sk0,
	'one-row INSERT: the trigger\'s lookup of a new key skipped its scan');
# writers that fail after a row: no open writer left behind (gates skip again)
for my $case (
	[ 'a subtransaction', q{
		BEGIN;
		SAVEPOINT a;
		INSERT INTO dd SELECT 'sub-2', (1 / (2 - g))::text FROM generate_series(1, 2) g;
		ROLLBACK TO a;
		SELECT count(*) FROM dd WHERE k = 'never-there-1';
		COMMIT;} ],
	[ 'an exception block', q{
		DO $d$ BEGIN
			BEGIN
				INSERT INTO dd SELECT 'sub-3', (1 / (2 - g))::text FROM generate_series(1, 2) g;
			EXCEPTION WHEN division_by_zero THEN NULL;
			END;
			PERFORM count(*) FROM dd WHERE k = 'never-there-2';
		END $d$;} ],
	[ 'a failed statement', q{
		INSERT INTO dd SELECT 'sub-4', (1 / (2 - g))::text FROM generate_series(1, 2) g;
		SELECT count(*) FROM dd WHERE k = 'never-there-3';} ])
{
	my $before = skipped($node, 'public.dd.k');
	my ($rc, $o, $e) = $node->psql('postgres', $case->[1]);
	like($e, qr/division by zero|^$/, "writer failing in $case->[0]");
	cmp_ok(skipped($node, 'public.dd.k'), '>', $before,
		"after a writer failed in $case->[0], gates skip scans again");
}
$node->safe_psql('postgres', q{DROP TRIGGER dd_skip ON dd});

# ------------------------------- 3c. cross-type "=" with other forms ----
# A varchar column's keys are hashed without trailing blanks, while
# varchar = name (text = name) compares every byte: a gate hashing the name
# as it is would answer "no" for 'ab '.  Every query gives the rows of the
# same query planned without gates.
$node->safe_psql('postgres', q{
	CREATE TABLE xv (vc varchar, nm name, tx text, i8 int8, i4 int4, f8 float8);
	INSERT INTO xv VALUES ('ab ', 'ab ', 'ab ', -1, -1, 0.1::float4),
		('cd', 'cd', 'cd', 4294967295, 7, -0.0);
	SELECT bloom_guard('xv', c) FROM unnest('{vc,nm,tx,i8,i4,f8}'::text[]) c;
});
wait_ready($node, 'postgres', "public.xv.$_", "xv.$_") for qw(vc nm tx i8 i4 f8);
{
	my @cols = qw(vc nm tx i8 i4 f8);
	my @vals = ("'ab '::name", "'ab '::text", "'ab '::varchar", "'ab '::bpchar",
		"'ab'::name", "'cd '::name", "'cd'::name", "-1::int2", "-1::int4", "-1::int8",
		"4294967295::oid", "(0.1::float4)", "0::float4", "(-0.0)::float4");
	my ($ngate, @diffs) = (0);
	for my $c (@cols)
	{
		for my $v (@vals)
		{
			my $q = "SELECT count(*) FROM xv WHERE $c = $v";
			my ($st1, undef, $off) = sqlstate($node, 'postgres',
				"SET bloomfilter.planner_guards = off; $q");
			next if $st1 ne 'OK';
			my $on = rows($node, $q);
			$ngate++ if rows($node, "EXPLAIN (COSTS OFF) $q") =~ /One-Time Filter/;
			push @diffs, "$q: $off without gates, $on with" if $on ne $off;
		}
	}
	cmp_ok($ngate, '>=', 20, "cross-type: $ngate gated queries");
	is(join("\n", @diffs), '', 'cross-type "=": the rows of the plan without gates');
	is(rows($node, q{SELECT bloom_shared_contains('public.xv.vc', 'ab '::name)}), 't',
		'bloom_shared_contains: a name key equal to a varchar row with trailing blanks answers "maybe"');
}

# Called directly, a gate's arguments may change from row to row: arrays of
# pg_stats (type anyarray) of columns of many types, definitions of other
# filters.  Each call answers for its own definition and key type.
$node->safe_psql('postgres', q{
	INSERT INTO xv SELECT * FROM xv;
	ANALYZE xv;
	CREATE TABLE g1 (k text); INSERT INTO g1 VALUES ('only1');
	CREATE TABLE g2 (k text); INSERT INTO g2 VALUES ('only2');
	SELECT bloom_guard('g1', 'k'); SELECT bloom_guard('g2', 'k');
});
wait_ready($node, 'postgres', "public.$_.k", $_) for qw(g1 g2);
my $cw = crash_watch($node);
is(rows($node, q{
	SELECT count(*) FILTER (WHERE bloom_shared_gate_any(d.id, s.most_common_vals))
	FROM pg_stats s, bloom_shared_definitions d
	WHERE s.tablename = 'xv' AND d.name = 'public.xv.tx' AND s.most_common_vals IS NOT NULL}),
	'6', 'a gate over arrays of pg_stats of six column types: no crash, "maybe" for each');
server_intact($node, $cw, 'a gate over pg_stats');
$cw->{bg}->quit;
is(rows($node, q{
	SELECT string_agg(name || '=' || bloom_shared_gate(id, 'only2'::text), ',' ORDER BY name)
	FROM bloom_shared_definitions WHERE name IN ('public.g1.k', 'public.g2.k')}),
	'public.g1.k=false,public.g2.k=true', 'a gate called for two definitions answers for each');

# ----------------------------------- 4. cached plans, unguard and guard ----
{
	my $s = $node->background_psql('postgres');
	$s->query_safe(q{
		SET plan_cache_mode = force_generic_plan;
		PREPARE c(text) AS SELECT count(*) FROM users WHERE username = $1;
		CREATE FUNCTION c_fn(v text) RETURNS bigint LANGUAGE plpgsql AS
			$f$ BEGIN RETURN (SELECT count(*) FROM users WHERE username = v); END $f$;
	});
	like($s->query_safe(q{EXPLAIN (COSTS OFF) EXECUTE c('x')}), qr/One-Time Filter: bloom_shared_gate/,
		'cached plan: gated');
	is($s->query_safe(q{SELECT c_fn('user5')}), '1', 'PL/pgSQL: gated plan cached');

	$node->safe_psql('postgres', q{SELECT bloom_unguard('users', 'username')});
	# rows inserted after the unguard have no trigger to add their keys
	$node->safe_psql('postgres', q{INSERT INTO users (username) VALUES ('after-unguard')});
	is($s->query_safe(q{EXECUTE c('after-unguard')}), '1', 'after unguard: the prepared plan finds a new row');
	is($s->query_safe(q{SELECT c_fn('after-unguard')}), '1', 'after unguard: the PL/pgSQL plan finds it');
	unlike($s->query_safe(q{EXPLAIN (COSTS OFF) EXECUTE c('x')}), qr/One-Time Filter/,
		'after unguard: the cached plan was replanned without a gate');

	$node->safe_psql('postgres', q{SELECT bloom_guard('users', 'username')});
	# before the new filter is ready, gated plans answer "maybe"
	is($s->query_safe(q{EXECUTE c('after-unguard')}), '1', 'guarded again, building: found');
	wait_ready($node, 'postgres', 'public.users.username', 'guarded again');
	like($s->query_safe(q{EXPLAIN (COSTS OFF) EXECUTE c('x')}), qr/One-Time Filter: bloom_shared_gate/,
		'guarded again: the cached plan has a gate again');
	is($s->query_safe(q{EXECUTE c('after-unguard')}), '1', 'guarded again: found');
	my $sk = skipped($node, 'public.users.username');
	is($s->query_safe(q{SELECT c_fn('never-there')}), '0', 'guarded again: an absent key');
	cmp_ok(skipped($node, 'public.users.username'), '>', $sk, 'the PL/pgSQL plan skipped the scan');
	$s->quit;
}

# --------------------------------------------------------- 5. privileges ----
$node->safe_psql('postgres', q{
	CREATE ROLE nobody LOGIN;
	CREATE ROLE viewer LOGIN;
	CREATE VIEW users_v AS SELECT id, username FROM users;
	GRANT SELECT ON users_v TO viewer;
	CREATE TABLE secret (k text);
	INSERT INTO secret SELECT 'user' || i FROM generate_series(1, 100) i;
	ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
	CREATE POLICY p ON secret USING (k <> 'user5');
	GRANT SELECT ON secret TO nobody;
	SELECT bloom_guard('secret', 'k');
});
wait_ready($node, 'postgres', 'public.secret.k', 'secret');
my ($st, $out, $err) = psql_as($node, 'postgres', 'nobody', q{SELECT * FROM users WHERE username = 'user1'});
is($st, '42501', 'no SELECT: the usual permission error');
like($err, qr/permission denied for table users/, 'no SELECT: the scan\'s message, not the gate\'s');
my $sk = skipped($node, 'public.users.username');
($st, $out) = psql_as($node, 'postgres', 'viewer',
	q{SELECT count(*) FROM users_v WHERE username = 'user1' UNION ALL SELECT count(*) FROM users_v WHERE username = 'absent-x'});
is("$st $out", "OK 1\n0", 'through a view: the right rows');
is(skipped($node, 'public.users.username'), $sk,
	'through a view: the gate answered "maybe" for a role without SELECT on the table');
unlike(rows($node, q{EXPLAIN (COSTS OFF) SELECT * FROM secret WHERE k = 'user5'}), qr/One-Time/,
	'row-level security: no gate');
($st, $out) = psql_as($node, 'postgres', 'nobody', q{SELECT count(*) FROM secret WHERE k = 'user5'});
is("$st $out", 'OK 0', 'row-level security: the policy decides');
SKIP:
{
	my $icu = $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_collation WHERE collprovider = 'i'});
	skip 'no ICU collations', 2 if $icu eq '0';
	$node->safe_psql('postgres',
		q{CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)});
	unlike(rows($node, q{EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'USER1' COLLATE ci}),
		qr/One-Time/, 'nondeterministic collation: no gate');
	is(rows($node, q{SELECT username FROM users WHERE username = 'USER1' COLLATE ci}), 'user1',
		'nondeterministic collation: the row equal under it is found');
}

# ----------------------------------------------------------------- 6. GUC ----
{
	my $s = $node->background_psql('postgres');
	$s->query_safe(q{
		SET plan_cache_mode = force_generic_plan;
		PREPARE g(text) AS SELECT count(*) FROM users WHERE username = $1;
	});
	$s->query_safe(q{EXECUTE g('x')});
	my $k = skipped($node, 'public.users.username');
	$s->query_safe(q{SET bloomfilter.planner_guards = off});
	is($s->query_safe(q{EXECUTE g('absent-y')}), '0', 'GUC off: a gated cached plan still answers');
	is(skipped($node, 'public.users.username'), $k, 'GUC off: its gate answered "maybe"');
	unlike($s->query_safe(q{EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'x'}),
		qr/One-Time/, 'GUC off: no gate planned');
	$s->quit;
}

# ------------------------------------------------------------- 7. restart ----
$node->restart;
is(rows($node, q{SELECT count(*) FROM users WHERE username IN ('user7', 'while-disabled', 'after-unguard')}),
	'3', 'right after a restart: rows found (filters not loaded: "maybe")');
is(rows($node, q{SELECT count(*) FROM events WHERE event_id = 17}), '1', 'right after a restart: partitions');
wait_ready($node, 'postgres', 'public.events.event_id', 'after the restart');
is(rows($node, q{SELECT count(*) FROM events WHERE event_id IN (17, -5)}), '1', 'after the reload: found');
is(rows($node, q{SELECT count(*) FROM events WHERE event_id = -5}), '0', 'after the reload: an absent key');
cmp_ok(skipped($node, 'public.events.event_id'), '>=', 8, 'after the reload: its 8 partition scans skipped');

# ------------------------------------------------------------- 8. standby ----
$node->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'bk', has_streaming => 1);
$standby->start;
$node->safe_psql('postgres', q{
	INSERT INTO users (username) VALUES ('on-primary-after-backup');
	INSERT INTO events VALUES (-77, 2, 'x');
});
$node->wait_for_catchup($standby, 'replay');
like(rows($standby, q{EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'x'}),
	qr/One-Time Filter/, 'standby: plans are gated too');
is(rows($standby, q{SELECT count(*) FROM users WHERE username = 'on-primary-after-backup'}), '1',
	'standby: a row the primary committed later is found');
is(rows($standby, q{SELECT count(*) FROM events WHERE event_id = -77}), '1', 'standby: partitions');
is(rows($standby, q{SELECT count(*) FROM users WHERE username IN ('on-primary-after-backup', 'user1')}), '2',
	'standby: an IN list finds every row (its keys are not narrowed)');
is(rows($standby, q{SELECT coalesce(sum(skipped_scans), 0) FROM bloom_shared_filters}), '0',
	'standby: no scan skipped');
$standby->stop;

# ------------------------------------------------- 9. IN lists narrowed ----
# Under a gate, the index condition "column = ANY (keys)" searches the index
# for the keys the filter may hold only (bloom_shared_gate_elements).
my $U = q{(SELECT id FROM bloom_shared_definitions WHERE name = 'public.users.username')};
# (a constant: a gate's keys are values that cannot fail to evaluate)
my $absent = "'{" . join(',', map { 'user' . ($_ * 997) . 'x' } 1 .. 20) . "}'::text[]";
is(rows($node, qq{
	SELECT bloom_shared_gate_elements($U, a) =
	       ARRAY(SELECT k FROM unnest(a) k WHERE bloom_shared_contains('public.users.username', k))
	  FROM (SELECT ARRAY['user1', 'user2'] || $absent AS a) s}), 't',
	'bloom_shared_gate_elements keeps exactly the keys bloom_shared_contains calls "maybe"');
is(rows($node, qq{SELECT bloom_shared_gate_elements($U, '[0:2]={user3,NULL,absent-z}'::text[])}),
	'{user3,NULL}', 'bloom_shared_gate_elements: NULLs stay, the result is one-dimensional from 1');
is(rows($node, qq{SET bloomfilter.planner_guards = off; SELECT bloom_shared_gate_elements($U, '{user3,absent-z}'::text[])}),
	'{user3,absent-z}', 'bloom_shared_gate_elements with planner guards off: every key');
like(rows($node, q{EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username IN ('user1', 'absent-z')}),
	qr/Index Keys: narrowed to the filter's "maybe" keys/, 'EXPLAIN says the index keys are narrowed');

# Index searches (btree primitive scans) for 2 present and 20 absent keys,
# guards on and off, and the rows, in one transaction.
my $search = qq{SELECT count(*) FROM users WHERE username = ANY (ARRAY['user1', 'user2'] || $absent)};
my @searches = split /\n/, rows($node, qq{
	CREATE TEMP TABLE searches (step int, n bigint);
	BEGIN;
	INSERT INTO searches SELECT 0, pg_stat_get_xact_numscans('users_username_idx'::regclass);
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	$search;
	INSERT INTO searches SELECT 1, pg_stat_get_xact_numscans('users_username_idx'::regclass);
	SET LOCAL bloomfilter.planner_guards = off;
	$search;
	INSERT INTO searches SELECT 2, pg_stat_get_xact_numscans('users_username_idx'::regclass);
	SELECT count(*) FROM unnest(ARRAY['user1', 'user2'] || $absent) k
	 WHERE bloom_shared_contains('public.users.username', k);
	SELECT n - lag(n) OVER (ORDER BY step) FROM searches ORDER BY step OFFSET 1;
	COMMIT;
});
my ($on_rows, $off_rows, $maybe, $on, $off) = @searches;
is("$on_rows $off_rows", '2 2', 'IN list: the same rows with guards on and off');
cmp_ok($on, '<=', $maybe, "IN list: $on index searches for the $maybe keys the filter may hold");
cmp_ok($on, '<', $off, "IN list: fewer index searches than without guards ($off)");

# Every plan shape, compared with guards off: bitmap and index-only scans,
# NULLs and duplicates, generic plans of arrays and of IN ($1, $2),
# cross-type integers, partitions, a subquery's array, rows inserted earlier
# in the transaction.
$node->safe_psql('postgres', 'VACUUM users');
my @same = (
	[ 'bitmap', 'SET enable_indexscan = off', q{SELECT id FROM users WHERE username IN ('user4', 'absent-a', 'user9')} ],
	[ 'index only', 'SET enable_bitmapscan = off', q{SELECT username FROM users WHERE username IN ('user4', 'absent-a')} ],
	[ 'NULLs and duplicates', 'SET enable_bitmapscan = off',
	  q{SELECT id FROM users WHERE username = ANY (ARRAY['user5', NULL, 'user5', 'absent-b'])} ],
	[ 'generic plan of an array', 'SET plan_cache_mode = force_generic_plan; PREPARE a(text[]) AS SELECT id FROM users WHERE username = ANY ($1)',
	  q{EXECUTE a('{user6,absent-c,user7}')} ],
	[ 'generic plan of IN ($1, $2)', 'SET plan_cache_mode = force_generic_plan; PREPARE b(text, text) AS SELECT id FROM users WHERE username IN ($1, $2)',
	  q{EXECUTE b('user8', 'absent-d')} ],
	[ 'cross-type integers', 'SET enable_bitmapscan = off', q{SELECT id FROM users WHERE n IN (3::int4, 1::int4, 9::int4)} ],
	[ 'partitions', 'SET enable_bitmapscan = off', q{SELECT event_id FROM events WHERE event_id IN (42, -42, 43, 9999999)} ],
	[ 'a subquery\'s array', 'SET enable_bitmapscan = off',
	  q{SELECT id FROM users WHERE username = ANY ((SELECT array_agg(k) FROM other WHERE k < 'user12') || '{absent-e}'::text[])} ],
	[ 'inserted earlier in the transaction', q{BEGIN; INSERT INTO users (username) VALUES ('fresh-in-list'); SET LOCAL enable_bitmapscan = off},
	  q{SELECT username FROM users WHERE username IN ('fresh-in-list', 'user10', 'absent-f')} ],
);
for my $c (@same)
{
	my ($what, $setup, $q) = @$c;
	my $got = rows($node, qq{$setup; CREATE TEMP TABLE on_rows AS $q;
		SET bloomfilter.planner_guards = off; CREATE TEMP TABLE off_rows AS $q;
		SELECT (SELECT count(*) FROM on_rows) || ' ' ||
		       (SELECT count(*) FROM (TABLE on_rows EXCEPT ALL TABLE off_rows UNION ALL
		                              (TABLE off_rows EXCEPT ALL TABLE on_rows)) d)});
	my ($n, $diff) = split / /, $got;
	is($diff, '0', "$what: the same rows with guards on and off ($n rows)");
	cmp_ok($n, '>', 0, "$what: rows found");
}

# a writing statement's own query: the row it inserted is found (its key
# is not in the filter until the statement ends)
is(rows($node, q{
	CREATE FUNCTION in_count(v text) RETURNS bigint LANGUAGE sql AS
		$f$ SELECT count(*) FROM users WHERE username IN (v, 'user11', 'absent-g') $f$;
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	INSERT INTO users (username) VALUES ('while-writing') RETURNING in_count('while-writing')}), '2',
	'a query run by a writing statement finds the row it wrote');
$node->stop;
done_testing();
