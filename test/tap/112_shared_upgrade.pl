# Shared filters: the 1.0 -> 1.1 update with the library preloaded.
#
# A database still at extension version 1.0 (definitions by schema_name /
# table_name, triggers made by 1.0's bloom_guard: ENABLE ALWAYS, argument
# "schema.table.column" unquoted) meets the 1.1 library: its event triggers,
# guard triggers and the start-up loader run the new code against the old
# catalog (no crash, no wrong "no"), the server restarts with it, and
# ALTER EXTENSION bloomfilter UPDATE converts the definitions: afterwards the
# filters (same names) become ready, their triggers fire ALWAYS, and no key of
# the tables (written before, between and after) answers "no"; a definition
# whose table is gone is dropped by the update.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

$SharedFilterTest::wait_seconds = 20;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'\nmax_worker_processes = 16\n");
$node->start;
my $watch = crash_watch($node);
my $db = 'postgres';

sub run { return sqlstate($node, $db, $_[0]); }

my ($st, $err) = run(q{CREATE EXTENSION bloomfilter VERSION '1.0'});
is($st, 'OK', 'CREATE EXTENSION bloomfilter VERSION 1.0 with the 1.1 library loaded') or diag($err);

# What 1.0's bloom_guard left behind, made by hand (1.0's C code is gone).
my @guards = (
	[ 'public', 'plain', 'k', 'public.plain.k' ],
	[ 'up s', 'Up t', 'k', 'up s.Up t.k' ],
	[ 'public', 'par', 'k', 'public.par.k' ]);
($st, $err) = run(q{
	CREATE TABLE plain (id serial, k text);
	INSERT INTO plain (k) SELECT 'plain' || i FROM generate_series(1, 3000) i;
	CREATE SCHEMA "up s";
	CREATE TABLE "up s"."Up t" (k text);
	INSERT INTO "up s"."Up t" SELECT 'up' || i FROM generate_series(1, 3000) i;
	CREATE TABLE par (g int, k text) PARTITION BY LIST (g);
	CREATE TABLE par0 PARTITION OF par FOR VALUES IN (0);
	INSERT INTO par SELECT 0, 'par' || i FROM generate_series(1, 3000) i;
	CREATE TABLE gone (k text);
});
is($st, 'OK', 'tables of the 1.0 database') or diag($err);
my $sql = '';
for my $g (@guards, [ 'public', 'gone', 'k', 'public.gone.k' ])
{
	my ($nsp, $rel, $col, $name) = @$g;
	my $q = "\"$nsp\".\"$rel\"";
	$sql .= "INSERT INTO bloom_shared_definitions (name, schema_name, table_name, column_name, fpr) VALUES ("
	  . lit($name) . ', ' . lit($nsp) . ', ' . lit($rel) . ', ' . lit($col) . ", 0.01);\n"
	  . "CREATE TRIGGER bloom_guard_$col AFTER INSERT OR UPDATE ON $q FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger("
	  . lit($name) . ");\nALTER TABLE $q ENABLE ALWAYS TRIGGER bloom_guard_$col;\n";
}
($st, $err) = run($sql);
note("1.0 definitions and triggers made under the 1.1 library: $st " . ($st eq 'OK' ? '' : $err));
run(q{DROP TABLE gone});    # (1.0 would have deleted the definition; simulate one left over)
server_intact($node, $watch, '1.0 catalog, 1.1 library');

# Writes and checks before the update: errors are acceptable, crashes and
# wrong "no"s are not.
($st, $err) = run(q{INSERT INTO plain (k) SELECT 'plain-before-update' || i FROM generate_series(1, 100) i});
note("write to a 1.0-guarded table under the 1.1 library: $st");
for my $g (@guards)
{
	my ($nsp, $rel, $col, $name) = @$g;
	my ($cs, $ce, $co) = run("SELECT count(*) FROM \"$nsp\".\"$rel\" WHERE NOT bloom_shared_contains(" . lit($name) . ", k)");
	ok($cs ne 'OK' || $co eq '0', "before the update, $name: an error or no \"no\" ($cs " . ($co // '') . ')');
}
# 1.0's bloom_guard has four arguments; 1.1's library reads a fifth (layout)
($st, $err) = run(q{SELECT bloom_guard('plain', 'id')});
is($st, '55000', "before the update, 1.0's bloom_guard asks for the update") or diag($err);
$node->restart;
$watch = crash_watch($node);
ok(1, 'the server restarts with a 1.0 catalog and the 1.1 library');
server_intact($node, $watch, 'restart before the update');

($st, $err) = run(q{ALTER EXTENSION bloomfilter UPDATE TO '1.1'});
is($st, 'OK', "ALTER EXTENSION bloomfilter UPDATE TO '1.1'") or diag($err);
is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'}), '1.1', 'at 1.1');
is($node->safe_psql($db, q{SELECT string_agg(name || '=' || rel::regclass::text, ', ' ORDER BY name COLLATE "C")
	FROM bloom_shared_definitions}),
	'public.par.k=par, public.plain.k=plain, up s.Up t.k="up s"."Up t"',
	'the update converted the definitions (same names, tables by OID) and dropped the one whose table is gone');
($st, $err) = run(q{INSERT INTO plain (k) SELECT 'plain-after-update' || i FROM generate_series(1, 100) i;
	INSERT INTO "up s"."Up t" SELECT 'up-after-update' || i FROM generate_series(1, 100) i;
	INSERT INTO par SELECT 0, 'par-after-update' || i FROM generate_series(1, 100) i;});
is($st, 'OK', 'writes after the update') or diag($err);
for my $g (@guards)
{
	my ($nsp, $rel, $col, $name) = @$g;
	my $s = state_of($node, $db, $name);
	if ($s ne 'ready' && $s ne 'building' && $s ne 'rebuilding')
	{
		note("$name after the update: $s, asking for a rebuild");
		run("SELECT bloom_shared_rebuild(" . lit($name) . ")");
	}
	wait_ready($node, $db, $name, "after the update: $name");
	no_false_negatives($node, $db, $name, "SELECT k FROM \"$nsp\".\"$rel\"", "after the update: $name");
}
is($node->safe_psql($db, q{SELECT count(*) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
	WHERE p.proname = 'bloom_shared_trigger' AND t.tgenabled <> 'A'}), '0', 'after the update: every guard trigger ALWAYS');
# the 1.1 rules apply to the converted guards
($st, $err) = run(q{ALTER TABLE plain DISABLE TRIGGER bloom_guard_k});
is($st, 'OK', 'converted guard: DISABLE TRIGGER') or diag($err);
ok(poll_for($node, $db, q{SELECT state FROM bloom_shared_filters WHERE name = 'public.plain.k'}, 'suspended', 5),
	'converted guard: DISABLE TRIGGER suspends it');
run(q{INSERT INTO plain (k) VALUES ('plain-disabled'); ALTER TABLE plain ENABLE TRIGGER bloom_guard_k;});
wait_ready($node, $db, 'public.plain.k', 'converted guard enabled again');
no_false_negatives($node, $db, 'public.plain.k', 'SELECT k FROM plain', 'converted guard enabled again');
($st, $err) = run(q{DROP TRIGGER bloom_guard_k ON "up s"."Up t"});
is($st, 'OK', 'converted guard: DROP TRIGGER') or diag($err);
is(contains_error($node, $db, 'up s.Up t.k', "'up1'::text"), '42704', 'converted guard: DROP TRIGGER removes it (42704)');
$node->restart;
$watch = crash_watch($node);
ok(poll_for($node, $db, q{SELECT bool_and(state = 'ready') FROM bloom_shared_filters}, 't', 30),
	'after a restart: the converted filters are ready again');
no_false_negatives($node, $db, 'public.par.k', 'SELECT k FROM par', 'after a restart: public.par.k');
server_intact($node, $watch, 'end of 112');
$node->stop;
done_testing();
