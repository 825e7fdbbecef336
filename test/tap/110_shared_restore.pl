# Shared filters (1.1 rules): pg_restore into guarded databases.
#
# A database with guards on a plain table, an inheritance parent (a child
# made before bloom_guard and one after), a partitioned table and a table
# with quoted names is dumped (pg_dump -Fc), then:
#
#   1. pg_restore --clean --if-exists into the same database;
#   2. pg_restore --clean --exit-on-error into a database built like the
#      source;
#   3. pg_restore --data-only --disable-triggers (-n s) into a freshly created
#      database whose schema was created and guarded by hand;
#   4. the same with --single-transaction (DISABLE and ENABLE in one
#      transaction);
#   5. pg_restore --data-only --disable-triggers of the whole dump (the
#      definitions table's rows included) into such a guarded database:
#      whatever pg_restore says, never a "no" for a restored key;
#   6. pg_restore --schema-only into an empty database, then --data-only
#      --disable-triggers (the triggers exist before the definitions).
#
# After each: every pg_restore succeeds, the definitions are the dumped ones,
# every guard trigger fires ALWAYS (tgenabled = 'A'), each filter becomes
# ready (bloom_shared_wait), and no restored or later-inserted key answers
# "no".
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

$SharedFilterTest::wait_seconds = 20;

my $node = shared_node('restore', "max_worker_processes = 16\nlog_statement = none\n");
my $watch = crash_watch($node);
my $tmp = PostgreSQL::Test::Utils::tempdir;

my %keys = (
	's.t.k' => 'SELECT k FROM s.t',
	's.par.k' => 'SELECT k FROM s.par',
	's.pt.k' => 'SELECT k FROM s.pt',
	'"My S"."T x".k' => 'SELECT k FROM "My S"."T x"');
my $names = join(',', sort keys %keys);
# guard triggers: s.t, s.par, s.ch1, s.ch2, s.pt, s.pt0, s.pt1, "My S"."T x"
my $ntriggers = 8;

my $schema_sql = q{
	CREATE SCHEMA s;
	CREATE TABLE s.t (id int, k text);
	CREATE TABLE s.par (k text);
	CREATE TABLE s.ch1 () INHERITS (s.par);
	CREATE TABLE s.pt (g int, k text) PARTITION BY LIST (g);
	CREATE TABLE s.pt0 PARTITION OF s.pt FOR VALUES IN (0);
	CREATE TABLE s.pt1 PARTITION OF s.pt FOR VALUES IN (1);
	CREATE SCHEMA "My S";
	CREATE TABLE "My S"."T x" (k text);
};
my $guard_sql = q{
	SELECT bloom_guard('s.t', 'k');
	SELECT bloom_guard('s.par', 'k');
	SELECT bloom_guard('s.pt', 'k');
	SELECT bloom_guard('"My S"."T x"', 'k');
	CREATE TABLE s.ch2 () INHERITS (s.par);
};

sub sq
{
	my ($db, $sql) = @_;
	my ($st, $err, $out) = sqlstate($node, $db, $sql);
	if ($st ne 'OK')
	{
		my $first = (grep { /\S/ } split /\n/, $sql)[0];
		$first =~ s/^\s+//;
		fail("$db: statement failed ($st): $first");
		diag($err);
	}
	return $out;
}

# The checks after a restore, then inserts everywhere and the checks again.
sub check_db
{
	my ($db, $what, $tag) = @_;
	is(sq($db, q{SELECT string_agg(name, ',' ORDER BY name COLLATE "C") FROM bloom_shared_definitions}), $names,
		"$what: the definitions are the dumped ones");
	is(sq($db, q{SELECT count(*) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
		WHERE p.proname = 'bloom_shared_trigger' AND t.tgenabled = 'A'}), $ntriggers,
		"$what: $ntriggers guard triggers, all ALWAYS");
	is(sq($db, q{SELECT coalesce(string_agg(format('%s.%s:%s', tgrelid::regclass, tgname, tgenabled), ', '), 'none')
		FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
		WHERE p.proname = 'bloom_shared_trigger' AND t.tgenabled <> 'A'}), 'none',
		"$what: no guard trigger left other than ALWAYS");
	for my $name (sort keys %keys)
	{
		wait_ready($node, $db, $name, "$what: $name");
		no_false_negatives($node, $db, $name, $keys{$name}, "$what: $name");
	}
	sq($db, qq{
		INSERT INTO s.t SELECT i, '$tag-t' || i FROM generate_series(1, 200) i;
		INSERT INTO s.par SELECT '$tag-par' || i FROM generate_series(1, 200) i;
		INSERT INTO s.ch1 SELECT '$tag-ch1-' || i FROM generate_series(1, 200) i;
		INSERT INTO s.ch2 SELECT '$tag-ch2-' || i FROM generate_series(1, 200) i;
		INSERT INTO s.pt SELECT i % 2, '$tag-pt' || i FROM generate_series(1, 200) i;
		INSERT INTO s.pt1 SELECT 1, '$tag-pt1-' || i FROM generate_series(1, 200) i;
		INSERT INTO "My S"."T x" SELECT '$tag-q' || i FROM generate_series(1, 200) i;
		SET session_replication_role = replica;
		INSERT INTO s.ch2 SELECT '$tag-ch2-replica' || i FROM generate_series(1, 200) i;
	});
	no_false_negatives($node, $db, $_, $keys{$_}, "$what, then inserts: $_") for (sort keys %keys);
}

# ---------------------------------------------------------------- source ----
sub build_source
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	sq($db, 'CREATE EXTENSION bloomfilter');
	sq($db, $schema_sql);
	sq($db, q{
		INSERT INTO s.t SELECT i, 't' || i FROM generate_series(1, 3000) i;
		INSERT INTO s.par SELECT 'par' || i FROM generate_series(1, 3000) i;
		INSERT INTO s.ch1 SELECT 'ch1-' || i FROM generate_series(1, 3000) i;
		INSERT INTO s.pt SELECT i % 2, 'pt' || i FROM generate_series(1, 3000) i;
		INSERT INTO "My S"."T x" SELECT 'q' || i FROM generate_series(1, 3000) i;
	});
	sq($db, $guard_sql);
	sq($db, q{INSERT INTO s.ch2 SELECT 'ch2-' || i FROM generate_series(1, 3000) i});
}
build_source('src');
build_source('src2');
is(sq('src', q{SELECT string_agg(name, ',' ORDER BY name COLLATE "C") FROM bloom_shared_definitions}), $names,
	'source: filter names are quote_ident\'ed parts ("My S"."T x".k)');
my $dumped_rows = sq('src', 'SELECT (SELECT count(*) FROM s.par) + (SELECT count(*) FROM s.pt)');
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', "$tmp/src.dump" ], 'pg_dump of the guarded database');
check_db('src', 'source', 'src');

# ------------------------------------------- 1. --clean --if-exists ----
$node->command_ok([ 'pg_restore', '--clean', '--if-exists', '-d', $node->connstr('src'), "$tmp/src.dump" ],
	'pg_restore --clean --if-exists into the same database');
check_db('src', 'restore --clean --if-exists', 'r1');
server_intact($node, $watch, 'after pg_restore --clean --if-exists');

# ---------------------------------------------- 2. --clean --exit-on-error ----
# (into src2, built like src: independent of what happened to src)
$node->command_ok([ 'pg_restore', '--clean', '--exit-on-error', '-d', $node->connstr('src2'), "$tmp/src.dump" ],
	'pg_restore --clean --exit-on-error into a guarded database holding the same objects');
check_db('src2', 'restore --clean --exit-on-error', 'r2');

# ------------------------------- 3., 4. --data-only --disable-triggers ----
my $n = 3;
for my $opts ([], ['--single-transaction'])
{
	my $db = "dst$n";
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	sq($db, 'CREATE EXTENSION bloomfilter');
	sq($db, $schema_sql);
	sq($db, $guard_sql);
	wait_ready($node, $db, $_, "$db: empty guarded table $_") for (sort keys %keys);
	$node->command_ok([ 'pg_restore', '--data-only', '--disable-triggers', @$opts, '-n', 's', '-n', 'My S',
		'-d', $node->connstr($db), "$tmp/src.dump" ],
		"pg_restore --data-only --disable-triggers @$opts -n s -n 'My S' into a freshly guarded database");
	is(sq($db, 'SELECT (SELECT count(*) FROM s.par) + (SELECT count(*) FROM s.pt)'), $dumped_rows, "$db: the rows are restored");
	check_db($db, "restore --data-only --disable-triggers @$opts", "r$n");
	$n++;
}

# ---------------------------- 5. the whole dump's data, definitions included ----
$node->safe_psql('postgres', 'CREATE DATABASE dst5');
sq('dst5', 'CREATE EXTENSION bloomfilter');
sq('dst5', $schema_sql);
sq('dst5', $guard_sql);
my ($rc, $out, $err) = (0, '', '');
{
	my @cmd = ('pg_restore', '--data-only', '--disable-triggers', '-d', $node->connstr('dst5'), "$tmp/src.dump");
	IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	$rc = $? >> 8;
}
note("pg_restore --data-only --disable-triggers of the whole dump into a guarded database: exit $rc; $err");
is(sq('dst5', q{SELECT coalesce(string_agg(format('%s.%s:%s', tgrelid::regclass, tgname, tgenabled), ', '), 'none')
	FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
	WHERE p.proname = 'bloom_shared_trigger' AND t.tgenabled <> 'A'}), 'none',
	'whole data-only restore: every guard trigger ALWAYS');
for my $name (sort keys %keys)
{
	my ($st, $e2, $o2) = sqlstate($node, 'dst5', "SELECT bloom_shared_wait(" . lit($name) . ", 20000)");
	no_false_negatives($node, 'dst5', $name, $keys{$name}, "whole data-only restore ($st $o2): $name");
}

# ----------------------- 6. --schema-only, then --data-only --disable-triggers ----
# The triggers arrive before the definitions (configuration-table data):
# nothing may fail, and once the data is in, every filter is built.
$node->safe_psql('postgres', 'CREATE DATABASE dst6');
$node->command_ok([ 'pg_restore', '--schema-only', '--exit-on-error', '-d', $node->connstr('dst6'), "$tmp/src.dump" ],
	'pg_restore --schema-only into an empty database');
$node->command_ok([ 'pg_restore', '--data-only', '--disable-triggers', '--exit-on-error', '-d', $node->connstr('dst6'),
	"$tmp/src.dump" ], 'then pg_restore --data-only --disable-triggers');
is(sq('dst6', 'SELECT (SELECT count(*) FROM s.par) + (SELECT count(*) FROM s.pt)'), $dumped_rows, 'dst6: the rows are restored');
check_db('dst6', 'restore --schema-only, then --data-only --disable-triggers', 'r6');

server_intact($node, $watch, 'end of 110');
$node->stop;
done_testing();
