# Shared filters (server-resident, kept current by triggers): the basic life
# cycle on one server started with shared_preload_libraries = 'bloomfilter'.
#
#   guard a 100,000-row column, wait, every existing key answers "maybe";
#   the "no" share for absent keys is close to 1 - target FPR; inserts,
#   updates, COPY, upserts and savepoints after ready are found; the view's
#   columns are sane; bloom_shared_get is a value holding every key;
#   rebuild; unusual identifiers (names are quote_ident'ed parts); unguard
#   removes the definition, the
#   trigger and the view row; the memory and filter-count GUCs fail clearly
#   (naming the GUC); and a second server WITHOUT the preload keeps the value
#   tier working while every shared function fails with 55000 and a hint.
#
# The invariant checked throughout: after a row is committed, every check of
# its key answers true.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $N = 100_000;

# ------------------------------------------------------------- helpers ----

# Share of "maybe" answers over keys that are not in the table.
sub maybe_share
{
	my ($node, $db, $name, $keys_sql) = @_;
	return $node->safe_psql($db,
		"SELECT avg(bloom_shared_contains(" . lit($name) . ", k)::int)::float8 FROM ($keys_sql) s(k)");
}

# ---------------------------------------------------------------- setup ----
my $node = PostgreSQL::Test::Cluster->new('shared_basic');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'");
$node->start;

is($node->safe_psql('postgres', 'SHOW bloomfilter.shared_memory'), '64MB',
	'GUC bloomfilter.shared_memory defaults to 64MB');
is($node->safe_psql('postgres', 'SHOW bloomfilter.max_shared_filters'), '64',
	'GUC bloomfilter.max_shared_filters defaults to 64');

$node->safe_psql('postgres', qq{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE users (id bigint PRIMARY KEY, username text, email text);
	INSERT INTO users SELECT i, 'user' || i, 'mail' || i FROM generate_series(1, $N) i;
	ANALYZE users;
});

my $all_keys = 'SELECT username FROM users';
my ($st, $err);
my $absent = "SELECT 'absent' || i FROM generate_series(1, $N) i";

# ----------------------------------------------------------- bloom_guard ----
# Guard, and check every key in the same session at once: the background
# build may be running, the answer must still be "maybe" for every key.
my $out = $node->safe_psql('postgres', qq{
	SELECT bloom_guard('users', 'username');
	SELECT count(*) FROM users WHERE NOT bloom_shared_contains('public.users.username', username);
});
my ($gname, $early_missing) = split /\n/, $out;
is($gname, 'public.users.username', 'bloom_guard returns <schema>.<table>.<column>');
is($early_missing, '0', 'right after bloom_guard (building): no existing key answers "no"');

wait_ready($node, 'postgres', $gname, 'first build');
is(missing($node, 'postgres', $gname, $all_keys), '0',
	"ready: all $N existing keys answer \"maybe\"");
is(state_of($node, 'postgres', $gname), 'ready', 'still ready after the full check');

my $share = maybe_share($node, 'postgres', $gname, $absent);
cmp_ok($share, '<=', 0.015, "absent keys: \"maybe\" share $share <= 1.5 x target 0.01");
my $est = $node->safe_psql('postgres',
	"SELECT estimated_fpr FROM bloom_shared_filters WHERE name = '$gname'");
cmp_ok(abs($share - $est), '<=', 0.5 * $est + 0.002,
	"measured false-positive rate $share agrees with the view's estimated_fpr $est");

# --------------------------------------------- explicit capacity, integers ----
is($node->safe_psql('postgres', "SELECT bloom_guard('users', 'id', 0.01, $N)"),
	'public.users.id', 'bloom_guard with fpr and capacity on a bigint column');
wait_ready($node, 'postgres', 'public.users.id', 'integer guard');
is(missing($node, 'postgres', 'public.users.id', 'SELECT id FROM users'), '0',
	'integer guard: every id (bigint) answers "maybe"');
is(missing($node, 'postgres', 'public.users.id', "SELECT i FROM generate_series(1, $N) i"), '0',
	'integer guard: int4 keys find the bigint keys (canonical int64)');
$share = maybe_share($node, 'postgres', 'public.users.id',
	"SELECT i::bigint FROM generate_series($N + 1, 2 * $N) i");
# sized as the first layer of a scalable filter: 40% of the target at its
# capacity (src/README.md, "Growth")
ok($share >= 0.002 && $share <= 0.005,
	"integer guard at its capacity: measured FPR $share within [0.2%, 0.5%] of absent keys");
my ($cap, $bits, $mem, $added) = split /\|/, $node->safe_psql('postgres',
	"SELECT capacity, bits, memory_bytes, keys_added FROM bloom_shared_filters WHERE name = 'public.users.id'");
is($cap, $N, 'view: capacity is the one given');
cmp_ok($bits, '>=', 9 * $N, 'view: at least 9 bits per key of capacity at 1%');
cmp_ok($mem, '>=', $bits / 8, 'view: memory_bytes holds the bits');
cmp_ok($added, '>=', $N, 'view: keys_added counts the build');

# ------------------------------------------------------- DML after ready ----
my ($rc, $stdout, $stderr) = $node->psql('postgres', qq{
	INSERT INTO users SELECT i, 'new' || i, NULL FROM generate_series($N + 1, $N + 1000) i;
	UPDATE users SET username = 'renamed' || id WHERE id <= 1000;
	UPDATE users SET email = 'changed' || id WHERE id BETWEEN 1001 AND 2000;
	INSERT INTO users VALUES (2001, 'upserted2001', NULL), ($N + 5001, 'upserted-new', NULL)
		ON CONFLICT (id) DO UPDATE SET username = excluded.username;
	INSERT INTO users VALUES ($N + 6001, NULL, 'no name');
	COPY users (id, username) FROM STDIN;
@{[ join("\n", map { ($N + 7000 + $_) . "\tcopied$_" } 1 .. 50) ]}
\\.
	BEGIN;
	INSERT INTO users VALUES ($N + 8001, 'kept-before-savepoint', NULL);
	SAVEPOINT s;
	INSERT INTO users VALUES ($N + 8002, 'rolled-back-to-savepoint', NULL);
	ROLLBACK TO SAVEPOINT s;
	INSERT INTO users VALUES ($N + 8003, 'kept-after-savepoint', NULL);
	COMMIT;
});
is($rc, 0, 'inserts, updates, upserts, COPY and savepoints on the guarded table succeed')
  or diag($stderr);
is(state_of($node, 'postgres', $gname), 'ready', 'still ready after the writes');
is(missing($node, 'postgres', $gname, $all_keys), '0',
	'every committed key (inserted, updated, upserted, copied) answers "maybe"');
is($node->safe_psql('postgres', q{
	SELECT bloom_shared_contains('public.users.username', 'renamed7')
	   AND bloom_shared_contains('public.users.username', 'upserted2001')
	   AND bloom_shared_contains('public.users.username', 'upserted-new')
	   AND bloom_shared_contains('public.users.username', 'copied50')
	   AND bloom_shared_contains('public.users.username', 'kept-after-savepoint')
	   AND bloom_shared_contains('public.users.username', 'new100500')}),
	't', 'named spot checks: updated, upserted, copied, savepoint keys');
is($node->safe_psql('postgres', "SELECT bloom_shared_contains('public.users.username', NULL::text) IS NOT TRUE"),
	't', 'a NULL key is not reported present');
is(missing($node, 'postgres', 'public.users.id', 'SELECT id FROM users'), '0',
	'integer guard: every id after the writes answers "maybe"');

# MERGE (PostgreSQL 15) inserts and updates through the same triggers.
($rc, $stdout, $stderr) = $node->psql('postgres', qq{
	MERGE INTO users u
	USING (VALUES (3001, 'merged-update'), ($N + 9001, 'merged-insert')) AS s(id, username) ON u.id = s.id
	WHEN MATCHED THEN UPDATE SET username = s.username
	WHEN NOT MATCHED THEN INSERT (id, username) VALUES (s.id, s.username);
});
is($rc, 0, 'MERGE on the guarded table') or diag($stderr);
is($node->safe_psql('postgres', q{
	SELECT bloom_shared_contains('public.users.username', 'merged-update')
	   AND bloom_shared_contains('public.users.username', 'merged-insert')}),
	't', 'MERGE: updated and inserted keys answer "maybe"');
is($node->safe_psql('postgres', "SELECT bloom_shared_contains('public.users.id', '42'), bloom_shared_contains('public.users.id', 42::smallint)"),
	't|t', 'integer guard: a string literal and a smallint find a bigint key');

# Columns a filter cannot hold: refused at bloom_guard, nothing left behind.
$node->safe_psql('postgres', q{
	CREATE TABLE odd (j jsonb, f float4, ci text);
	INSERT INTO odd VALUES ('{"a": 1}', 1.5, 'x');
});
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('odd', 'j')");
is($st, '0A000', 'bloom_guard of a jsonb column: 0A000 (no canonical form)');
like($err, qr/HINT:/, '... with a hint');
if ($node->safe_psql('postgres', q{SELECT count(*) > 0 FROM pg_collation WHERE collprovider = 'i'}) eq 't')
{
	$node->safe_psql('postgres', q{
		CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
		ALTER TABLE odd ALTER COLUMN ci TYPE text COLLATE ci;
	});
	is((sqlstate($node, 'postgres', "SELECT bloom_guard('odd', 'ci')"))[0], '0A000',
		'bloom_guard of a column with a nondeterministic collation: 0A000');
}
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'odd'::regclass}), '0',
	'the refused guards left no trigger');
is($node->safe_psql('postgres', q{SELECT count(*) FROM bloom_shared_definitions WHERE rel = 'odd'::regclass}), '0',
	'the refused guards left no definition');
is($node->safe_psql('postgres', q{INSERT INTO odd VALUES ('{}', 2, 'y') RETURNING f}), '2', 'the table stays writable');

# Relations a guard cannot serve: views, materialized views (no triggers),
# and temporary tables (the background build cannot read another session's
# temporary table): a clear error, or, for a temporary table, a guard that
# works; and nothing left behind once the session ends.
$node->safe_psql('postgres', q{
	CREATE VIEW v_users AS SELECT username FROM users;
	CREATE MATERIALIZED VIEW mv_users AS SELECT username FROM users LIMIT 10;
});
for my $rel ('v_users', 'mv_users')
{
	($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('$rel', 'username')");
	ok($st ne 'OK' && $err =~ /ERROR:/, "bloom_guard of $rel: a clear error ($st)");
}
my ($trc, $tout, $terr) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	CREATE TEMP TABLE tmp_users (k text);
	INSERT INTO tmp_users SELECT 't' || i FROM generate_series(1, 1000) i;
	SELECT bloom_guard('tmp_users', 'k') AS tname \gset
	SELECT bloom_shared_wait(:'tname', 10000);
	SELECT count(*) FROM tmp_users WHERE NOT bloom_shared_contains(:'tname', k);
});
if ($trc == 0)
{
	is($tout, "t\n0", 'a guarded temporary table: ready, every key found');
}
else
{
	like($terr, qr/ERROR:\s+[0-9A-Z]{5}:/, 'bloom_guard of a temporary table: a clear error')
	  or diag($terr);
}
ok(poll_for($node, 'postgres',
	q{SELECT count(*) FROM bloom_shared_definitions d LEFT JOIN pg_class c ON c.oid = d.rel
	  WHERE c.oid IS NULL OR c.relpersistence = 't'}, '0', 10),
	'no definition of a temporary table is left once its session has ended');
# (so that what follows does not depend on the above)
$node->safe_psql('postgres', q{DELETE FROM bloom_shared_definitions d
	WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = d.rel AND c.relpersistence <> 't')});

# -------------------------------------------------------------- the view ----
my @cols = qw(name table column state capacity bits keys_added estimated_fpr
  memory_bytes checks negatives negative_ratio last_build last_error next_try
  skipped_scans);
my $have = $node->safe_psql('postgres',
	"SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute "
	  . "WHERE attrelid = 'bloom_shared_filters'::regclass AND attnum > 0 AND NOT attisdropped");
my %have = map { $_ => 1 } split /,/, $have;
ok((!grep { !$have{$_} } @cols), "view bloom_shared_filters has the columns @cols")
  or diag("has: $have");

my $view_row = q{SELECT checks, negatives FROM bloom_shared_filters WHERE name = 'public.users.username'};
my ($c0, $n0) = split /\|/, $node->safe_psql('postgres', $view_row);
$node->safe_psql('postgres',
	"SELECT count(*) FROM generate_series(1, 1000) i WHERE bloom_shared_contains('public.users.username', 'zz' || i)");
my ($c1, $n1) = split /\|/, $node->safe_psql('postgres', $view_row);
is($c1 - $c0, 1000, 'view: checks counts every check');
ok($n1 - $n0 >= 950 && $n1 - $n0 <= 1000, 'view: negatives counts the "no" answers (' . ($n1 - $n0) . ' of 1000 absent)');
is($node->safe_psql('postgres', q{
	SELECT "table"::text IN ('users', 'public.users'), "column"::text = 'username',
	       abs(negative_ratio - negatives::float8 / nullif(checks, 0)) < 1e-6,
	       negatives <= checks, last_build IS NOT NULL AND last_build <= now(),
	       estimated_fpr > 0 AND estimated_fpr <= 0.015, keys_added >= 101000,
	       capacity >= 100000, bits >= 9 * capacity, memory_bytes >= bits / 8
	FROM bloom_shared_filters WHERE name = 'public.users.username'}),
	't|t|t|t|t|t|t|t|t|t', 'view: table, column, negative_ratio, last_build, estimated_fpr, keys_added, capacity, bits, memory are sane');

# ------------------------------------------------------ bloom_shared_get ----
$node->safe_psql('postgres', q{
	CREATE TABLE snap AS SELECT bloom_shared_get('public.users.username') AS bf;
	CREATE TABLE agg AS SELECT bloom_agg(username, (SELECT capacity FROM bloom_shared_filters
		WHERE name = 'public.users.username'), 0.01) AS bf FROM users;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM users, snap WHERE NOT snap.bf @> users.username'),
	'0', 'bloom_shared_get: the value holds every key of the column');
is($node->safe_psql('postgres', q{SELECT bloom_info(bf)->>'key_kind' FROM snap}), 'text',
	'bloom_shared_get: key kind text');
is($node->safe_psql('postgres', q{
	SELECT (bloom_info(s.bf)->>'bits')::bigint = v.bits
	FROM snap s, bloom_shared_filters v WHERE v.name = 'public.users.username'}),
	't', 'bloom_shared_get: as many bits as the view says');
$share = $node->safe_psql('postgres',
	"SELECT avg((bf @> ('absent' || i))::int)::float8 FROM snap, generate_series(1, $N) i");
cmp_ok($share, '<=', 0.015, "bloom_shared_get: absent keys answer \"maybe\" at $share <= 1.5%");
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM users, agg, snap WHERE agg.bf @> users.username AND NOT snap.bf @> users.username}),
	'0', 'bloom_shared_get: every key that bloom_agg over the column holds, the snapshot holds');

# ------------------------------------------------------------ unknown names ----
for my $call (
	"SELECT bloom_shared_contains('public.nosuch.col', 'x'::text)",
	"SELECT bloom_shared_contains('public.nosuch.col', 42)",
	"SELECT bloom_shared_get('public.nosuch.col')",
	"SELECT bloom_shared_rebuild('public.nosuch.col')",
	"SELECT bloom_shared_add('public.nosuch.col', 'x'::text)")
{
	is((sqlstate($node, 'postgres', $call))[0], '42704', "unknown name: $call raises 42704");
}

# --------------------------------------------------- unusual identifiers ----
$node->safe_psql('postgres', q{
	CREATE SCHEMA "My Schema";
	CREATE TABLE "My Schema"."User List" ("E-Mail" varchar(40), "x.y" text);
	INSERT INTO "My Schema"."User List" SELECT 'e' || i || '@x', 'dot' || i FROM generate_series(1, 2000) i;
});
my $qname = $node->safe_psql('postgres', q{SELECT bloom_guard('"My Schema"."User List"', 'E-Mail')});
is($qname, '"My Schema"."User List"."E-Mail"',
	'quoted identifiers: the name is quote_ident(schema).quote_ident(table).quote_ident(column)');
my $dname = $node->safe_psql('postgres', q{SELECT bloom_guard('"My Schema"."User List"', 'x.y')});
is($dname, '"My Schema"."User List"."x.y"', 'a column with a dot: quoted in the name');
# dots inside identifiers cannot make two guards share a name
$node->safe_psql('postgres', q{
	CREATE SCHEMA "a.b"; CREATE TABLE "a.b".c (k text); INSERT INTO "a.b".c VALUES ('in a.b');
	CREATE SCHEMA a; CREATE TABLE a."b.c" (k text); INSERT INTO a."b.c" VALUES ('in b.c');
});
is($node->safe_psql('postgres', q{SELECT bloom_guard('"a.b".c', 'k')}), '"a.b".c.k', 'schema "a.b", table c: "a.b".c.k');
is($node->safe_psql('postgres', q{SELECT bloom_guard('a."b.c"', 'k')}), 'a."b.c".k', 'schema a, table "b.c": a."b.c".k');
wait_ready($node, 'postgres', '"a.b".c.k', 'schema with a dot');
wait_ready($node, 'postgres', 'a."b.c".k', 'table with a dot');
is(missing($node, 'postgres', '"a.b".c.k', q{SELECT k FROM "a.b".c}), '0', '"a.b".c.k holds its table\'s keys');
is(missing($node, 'postgres', 'a."b.c".k', q{SELECT k FROM a."b.c"}), '0', 'a."b.c".k holds its table\'s keys');
$node->safe_psql('postgres', q{SELECT bloom_unguard('"a.b".c', 'k'); SELECT bloom_unguard('a."b.c"', 'k');});
wait_ready($node, 'postgres', $qname, 'quoted identifiers');
wait_ready($node, 'postgres', $dname, 'column with a dot');
is(missing($node, 'postgres', $qname, q{SELECT "E-Mail" FROM "My Schema"."User List"}), '0',
	'quoted identifiers: every varchar key answers "maybe"');
is(missing($node, 'postgres', $dname, q{SELECT "x.y" FROM "My Schema"."User List"}), '0',
	'column with a dot: every key answers "maybe"');
is($node->safe_psql('postgres', "SELECT count(*) FROM bloom_shared_filters WHERE name IN (" . lit($qname) . ', ' . lit($dname) . ')'),
	'2', 'both names are listed in the view');

# ------------------------------------------------------------------ rebuild ----
my $lb0 = $node->safe_psql('postgres', "SELECT last_build FROM bloom_shared_filters WHERE name = '$gname'");
$out = $node->safe_psql('postgres', qq{
	SELECT bloom_shared_rebuild('$gname');
	SELECT count(*) FROM users WHERE NOT bloom_shared_contains('$gname', username);
});
is((split /\n/, $out)[-1], '0', 'during bloom_shared_rebuild: every key answers "maybe"');
wait_ready($node, 'postgres', $gname, 'rebuild');
is(missing($node, 'postgres', $gname, $all_keys), '0', 'after rebuild: every key answers "maybe"');
is($node->safe_psql('postgres', "SELECT last_build > '$lb0' FROM bloom_shared_filters WHERE name = '$gname'"),
	't', 'rebuild: last_build advanced');

# Guarding the same column again: an error or the same name, never a second
# filter for it.
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('users', 'username')");
note("second bloom_guard of the same column: $st");
is($node->safe_psql('postgres', "SELECT count(*) FROM bloom_shared_filters WHERE name = '$gname'"),
	'1', 'guarding the same column twice leaves one filter');
is(missing($node, 'postgres', $gname, $all_keys), '0', 'and every key still answers "maybe"');

# ------------------------------------------------------------------ unguard ----
my $trig = q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'users'::regclass
	AND tgfoid = 'bloom_shared_trigger'::regproc};
cmp_ok($node->safe_psql('postgres', $trig), '>=', 2, 'users has trigger(s) running bloom_shared_trigger()');
$node->safe_psql('postgres', "SELECT bloom_unguard('users', 'username')");
is($node->safe_psql('postgres', "SELECT count(*) FROM bloom_shared_filters WHERE name = '$gname'"),
	'0', 'unguard: the view no longer lists the filter');
is((sqlstate($node, 'postgres', "SELECT bloom_shared_contains('$gname', 'user1'::text)"))[0], '42704',
	'unguard: the name is unknown (42704), not a stale "no"');
is(missing($node, 'postgres', 'public.users.id', 'SELECT id FROM users'), '0',
	'unguarding one column leaves the other guard working');
$node->safe_psql('postgres', "SELECT bloom_unguard('users', 'id')");
is($node->safe_psql('postgres', $trig), '0', 'unguard of both columns: no trigger left on users');
$node->safe_psql('postgres', q{
	SELECT bloom_unguard('"My Schema"."User List"', 'E-Mail');
	SELECT bloom_unguard('"My Schema"."User List"', 'x.y');
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM bloom_shared_filters'), '0', 'unguard everything: view empty');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bloom_shared_definitions'), '0',
	'unguard everything: no definition left');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_trigger WHERE tgfoid = 'bloom_shared_trigger'::regproc}),
	'0', 'unguard everything: no trigger left anywhere');
($rc, $stdout, $stderr) = $node->psql('postgres', "INSERT INTO users VALUES (-1, 'after-unguard', NULL)");
is($rc, 0, 'inserts after unguard succeed');

# Guard again after unguard: a fresh filter with every key.
is($node->safe_psql('postgres', "SELECT bloom_guard('users', 'username')"), $gname, 'guard again after unguard');
wait_ready($node, 'postgres', $gname, 're-guard');
is(missing($node, 'postgres', $gname, $all_keys), '0', 're-guard: every key, including those added while unguarded');
$node->safe_psql('postgres', "SELECT bloom_unguard('users', 'username')");

# ------------------------------------------------------------------ limits ----
# A filter that does not fit in bloomfilter.shared_memory: 53400 naming the
# GUC; the filter count capped by bloomfilter.max_shared_filters.
$node->append_conf('postgresql.conf', "bloomfilter.shared_memory = 1\nbloomfilter.max_shared_filters = 2");
$node->restart;
is($node->safe_psql('postgres', 'SHOW bloomfilter.shared_memory'), '1MB', 'shared_memory set to 1MB');
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('users', 'username', 0.01, 2000000)");
is($st, '53400', 'a filter larger than bloomfilter.shared_memory: 53400');
like($err, qr/bloomfilter\.shared_memory/, 'the error names bloomfilter.shared_memory');
is($node->safe_psql('postgres', "SELECT count(*) FROM bloom_shared_filters"), '0',
	'the failed guard left no filter');
is($node->safe_psql('postgres', $trig), '0', 'the failed guard left no trigger');
($rc, $stdout, $stderr) = $node->psql('postgres', "INSERT INTO users VALUES (-2, 'after-failed-guard', NULL)");
is($rc, 0, 'inserts after a failed guard succeed');

$node->safe_psql('postgres', q{
	CREATE TABLE small1 (k text); CREATE TABLE small2 (k text); CREATE TABLE small3 (k text);
	INSERT INTO small1 SELECT 'a' || i FROM generate_series(1, 100) i;
	INSERT INTO small2 SELECT 'b' || i FROM generate_series(1, 100) i;
	INSERT INTO small3 SELECT 'c' || i FROM generate_series(1, 100) i;
});
is((sqlstate($node, 'postgres', "SELECT bloom_guard('small1', 'k', 0.01, 1000)"))[0], 'OK', 'first small guard fits');
is((sqlstate($node, 'postgres', "SELECT bloom_guard('small2', 'k', 0.01, 1000)"))[0], 'OK', 'second small guard fits');
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('small3', 'k', 0.01, 1000)");
is($st, '53400', "a third filter over bloomfilter.max_shared_filters = 2 fails with 53400");
like($err, qr/bloomfilter\.max_shared_filters/, 'the error names bloomfilter.max_shared_filters');
wait_ready($node, 'postgres', 'public.small1.k', 'small1');
is(missing($node, 'postgres', 'public.small1.k', 'SELECT k FROM small1'), '0', 'the guards that fit work');
$node->safe_psql('postgres', "SELECT bloom_unguard('small2', 'k')");
is((sqlstate($node, 'postgres', "SELECT bloom_guard('small3', 'k', 0.01, 1000)"))[0], 'OK',
	'unguard frees a slot: the third guard now fits');
wait_ready($node, 'postgres', 'public.small3.k', 'small3');
is(missing($node, 'postgres', 'public.small3.k', 'SELECT k FROM small3'), '0', 'the reused slot holds its own keys');

# A rebuild that cannot fit next to the live filter (two copies of 600 kB in
# 1 MB): the view says "rebuild failed", not "rebuilding", and checks keep
# answering from the live filter.
$node->safe_psql('postgres', q{
	SELECT bloom_unguard('small1', 'k');
	SELECT bloom_unguard('small3', 'k');
	SELECT bloom_guard('small2', 'k', 0.01, 350000);
});
wait_ready($node, 'postgres', 'public.small2.k', 'a filter of more than half the pool');
cmp_ok($node->safe_psql('postgres', "SELECT memory_bytes FROM bloom_shared_filters WHERE name = 'public.small2.k'"),
	'>', 524288, 'it takes more than half of the 1 MB pool');
$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('public.small2.k')");
ok(poll_for($node, 'postgres', "SELECT state FROM bloom_shared_filters WHERE name = 'public.small2.k'",
	'rebuild failed', 60), 'a rebuild that does not fit: state "rebuild failed"');
like($node->safe_psql('postgres', "SELECT last_error FROM bloom_shared_filters WHERE name = 'public.small2.k'"),
	qr/do not fit in bloomfilter\.shared_memory/, '... and last_error says why');
is(missing($node, 'postgres', 'public.small2.k', 'SELECT k FROM small2'), '0',
	'a rebuild that does not fit: the live filter still answers, no key answers "no"');
is($node->safe_psql('postgres', "SELECT bloom_shared_contains('public.small2.k', 'absent-key')"), 'f',
	'... and it still answers "no" for an absent key');
$node->stop;

# ------------------------------------------------------ without the preload ----
my $plain = PostgreSQL::Test::Cluster->new('no_preload');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE users (id int, username text);
	INSERT INTO users SELECT i, 'user' || i FROM generate_series(1, 1000) i;
});
is($plain->safe_psql('postgres', q{SELECT bloom_agg(username) @> 'user7' FROM users}), 't',
	'without the preload: the value tier works');
for my $call (
	"SELECT bloom_guard('users', 'username')",
	"SELECT bloom_unguard('users', 'username')",
	"SELECT bloom_shared_contains('public.users.username', 'user1'::text)",
	"SELECT bloom_shared_contains('public.users.username', 1)",
	"SELECT bloom_shared_get('public.users.username')",
	"SELECT bloom_shared_add('public.users.username', 'x'::text)",
	"SELECT bloom_shared_rebuild('public.users.username')",
	"SELECT bloom_shared_wait('public.users.username', 10)")
{
	($st, $err) = sqlstate($plain, 'postgres', $call);
	is($st, '55000', "without the preload: $call raises 55000");
	like($err, qr/HINT:.*shared_preload_libraries/, '... with a hint to add it to shared_preload_libraries');
}
is($plain->safe_psql('postgres', q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'users'::regclass}),
	'0', 'without the preload: the failed guard left no trigger');
$plain->stop;

done_testing();
