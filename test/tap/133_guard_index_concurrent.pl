# The guard index (access method bloomguard) built and rebuilt while rows
# arrive.  CREATE INDEX CONCURRENTLY and REINDEX ... CONCURRENTLY build the
# index from a snapshot and then let PostgreSQL's validation scan insert the
# rows the build missed (amvalidate is ambulkdelete plus aminsert of every
# heap tuple not yet in the index): a guard that mishandled either half
# would miss the keys written during the build.  DETACH PARTITION
# CONCURRENTLY and ATTACH PARTITION move a partition's guard out of and back
# into a partitioned guard while a writer keeps inserting into the
# partition.
#
# Background psqls insert all along (100 rows a transaction, one every few
# milliseconds; three of them in 1 and 2, into the table and into one whose
# guard, of capacity 1000, grows meanwhile); each step checks that rows arrived during it, and every
# check is over all the rows the table holds: 0 false negatives, and absent
# keys mostly answer false.
#
#  1. CREATE INDEX CONCURRENTLY under inserts: afterwards the index is valid
#     and every key answers true.
#  2. REINDEX INDEX CONCURRENTLY under inserts: a new relfilenode, no
#     leftover invalid index, every key answers true.
#  3. DETACH PARTITION CONCURRENTLY of a partition being written, checks while
#     detached, ATTACH PARTITION again (its own guard is attached, not
#     rebuilt), more inserts: the partition's guard and the parent's hold
#     every key.
#  4. A guard not valid yet (CREATE INDEX CONCURRENTLY between its build and
#     its validation, a row committed meanwhile that the guard lacks) and one
#     left invalid by a cancelled CREATE INDEX CONCURRENTLY: a check must not
#     answer false for a key of the table (an error or "maybe").
#  5. VACUUM builds a guard again once it holds twice as many keys as the
#     table has rows (bfi_rebuild.c), while writers insert and delete: the
#     same relfilenode, one layer sized for the rows, every key of the table
#     answers true (during and after), the deleted keys mostly false; a
#     second VACUUM with nothing to forget leaves it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use TapHelpers;
use GuardIndexTest;

# One test: no key answers false, and at least $min keys were checked.
sub none_false
{
	my ($node, $guard, $keys_sql, $min, $what) = @_;
	my $r = false_of($node, $guard, $keys_sql);
	my ($f, $n) = $r =~ m{^(\d+)/(\d+)$} ? ($1, $2) : (-1, -1);
	ok($f == 0 && $n >= $min, "$what: all keys answer true ($r answer false, at least $min checked)");
	return $n;
}

# A background psql running $body (statements; i is the iteration) and a
# COMMIT in a loop, every 5 ms, until writer_stop has a row (at most 90 s).
sub start_writer
{
	my ($node, $body) = @_;
	my $w = { out => '', err => '' };
	$w->{h} = IPC::Run::start(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', qq{
DO \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	FOR i IN 0 .. 100000000 LOOP
		EXIT WHEN EXISTS (SELECT 1 FROM writer_stop) OR clock_timestamp() > t0 + interval '90 s';
		$body
		COMMIT;
		PERFORM pg_sleep(0.005);
	END LOOP;
END \$\$} ],
		'>', \$w->{out}, '2>', \$w->{err});
	return $w;
}

sub stop_writers
{
	my ($node, $what, @w) = @_;
	one($node, 'INSERT INTO writer_stop VALUES (1)');
	$_->{h}->finish for @w;
	is(join('', map { $_->{err} } @w), '', "$what: the writers ran without an error");
	one($node, 'DELETE FROM writer_stop');
}

# Rows of $table after $sql, minus before; the time $sql took.
sub rows_during
{
	my ($node, $table, $sql) = @_;
	my $before = one($node, "SELECT count(*) FROM $table");
	my $t0 = Time::HiRes::time();
	one($node, $sql);
	my $took = sprintf("%.2f", Time::HiRes::time() - $t0);
	return (one($node, "SELECT count(*) FROM $table") - $before, $took);
}

my $node = PostgreSQL::Test::Cluster->new('guard_concurrent');
$node->init;
$node->append_conf('postgresql.conf', "shared_buffers = 64MB\n");
$node->start;
one($node, q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE writer_stop (x int);
	CREATE TABLE cc (id bigserial PRIMARY KEY, k text NOT NULL);
	INSERT INTO cc (k) SELECT 'seed' || i FROM generate_series(1, 300000) i;
	CREATE SEQUENCE wseq;
	CREATE TABLE cg (k int8 NOT NULL);
	CREATE INDEX cg_g ON cg USING bloomguard (k) WITH (capacity = 1000);
	CREATE SEQUENCE gseq;
});
my $cc_keys = 'SELECT k FROM cc';
my $cc_absent = "SELECT 'absent' || i FROM generate_series(1, 20000) i";

# --------------------------------------------- 1. CREATE INDEX CONCURRENTLY ----
# three writers, into cc and into cg (whose guard grows meanwhile)
my @w = map {
	start_writer($node, q{
		INSERT INTO cc (k) SELECT 'w' || nextval('wseq') FROM generate_series(1, 100);
		INSERT INTO cg SELECT nextval('gseq') FROM generate_series(1, 100);})
} 1 .. 3;
ok(poll_for($node, 'postgres', 'SELECT count(*) > 301000 FROM cc', 't', 30), 'the writers are inserting');
my ($during, $took) = rows_during($node, 'cc', 'CREATE INDEX CONCURRENTLY cc_g ON cc USING bloomguard (k)');
note("CREATE INDEX CONCURRENTLY took about $took s");
cmp_ok($during, '>', 0, "CREATE INDEX CONCURRENTLY: $during rows were inserted while it ran");
is(one($node, q{SELECT indisvalid::text || ',' || indisready::text FROM pg_index WHERE indexrelid = 'cc_g'::regclass}),
	'true,true', 'CREATE INDEX CONCURRENTLY: the guard is valid');
my $n = none_false($node, 'cc_g', $cc_keys, 301000, 'after CREATE INDEX CONCURRENTLY (writer still running)');
mostly_false($node, 'cc_g', $cc_absent, 20000, 'after CREATE INDEX CONCURRENTLY');

# ------------------------------------------ 2. REINDEX INDEX CONCURRENTLY ----
my $fn = one($node, q{SELECT pg_relation_filenode('cc_g')});
($during, $took) = rows_during($node, 'cc', 'REINDEX INDEX CONCURRENTLY cc_g');
note("REINDEX INDEX CONCURRENTLY took about $took s");
cmp_ok($during, '>', 0, "REINDEX INDEX CONCURRENTLY: $during rows were inserted while it ran");
isnt(one($node, q{SELECT pg_relation_filenode('cc_g')}), $fn, 'REINDEX INDEX CONCURRENTLY: a new relfilenode');
is(one($node, q{SELECT count(*) || ',' || count(*) FILTER (WHERE indisvalid) FROM pg_index WHERE indrelid = 'cc'::regclass}),
	'2,2', 'REINDEX INDEX CONCURRENTLY: the primary key and the guard, both valid, no leftover');
$n = none_false($node, 'cc_g', $cc_keys, $n, 'after REINDEX INDEX CONCURRENTLY (writer still running)');
none_false($node, 'cg_g', 'SELECT k FROM cg', 1000, 'cg, three writers growing its guard (writers running)');
stop_writers($node, 'cc', @w);
my $total = one($node, 'SELECT count(*) FROM cc');
is(false_of($node, 'cc_g', $cc_keys), "0/$total", "cc, writers stopped: all $total keys answer true");
my $ncg = one($node, 'SELECT count(*) FROM cg');
is(false_of($node, 'cg_g', 'SELECT k FROM cg'), "0/$ncg", "cg, writers stopped: all $ncg keys answer true");
my ($cg_layers) = one($node, q{SELECT layers FROM bloom_guard_info('cg_g')});
cmp_ok($cg_layers, '>', 2, "cg: the guard grew under three writers ($cg_layers layers for $ncg keys)");
mostly_false($node, 'cg_g', 'SELECT -generate_series(1, 20000)::int8', 20000, 'cg, grown under three writers');
mostly_false($node, 'cc_g', $cc_absent, 20000, 'after REINDEX INDEX CONCURRENTLY');

# ------------------------------------------ 3. DETACH CONCURRENTLY / ATTACH ----
one($node, q{
	CREATE TABLE pp (r int NOT NULL, k int8 NOT NULL) PARTITION BY RANGE (r);
	CREATE TABLE pp1 PARTITION OF pp FOR VALUES FROM (0) TO (1000);
	CREATE TABLE pp2 PARTITION OF pp FOR VALUES FROM (1000) TO (2000);
	INSERT INTO pp SELECT i % 2000, i FROM generate_series(1, 20000) i;
	CREATE INDEX pp_g ON pp USING bloomguard (k);
	CREATE SEQUENCE pseq START 1000000;
});
my $pp2_g = one($node, q{SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'pp2'::regclass});
my $pp1_g = one($node, q{SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'pp1'::regclass});
my $pp2_oid = one($node, "SELECT '$pp2_g'::regclass::oid");
my $leaves = q{SELECT string_agg(relid::regclass::text, ',' ORDER BY relid::regclass::text) FROM pg_partition_tree('pp_g') WHERE isleaf};
is(one($node, $leaves), "$pp1_g,$pp2_g", 'the partitioned guard has a guard on each partition');

my $w = start_writer($node,
	q{INSERT INTO pp2 SELECT 1000 + g % 1000, nextval('pseq') FROM generate_series(1, 100) g;});
ok(poll_for($node, 'postgres', 'SELECT count(*) > 11000 FROM pp2', 't', 30), 'the writer is inserting into pp2');
($during, $took) = rows_during($node, 'pp2', 'ALTER TABLE pp DETACH PARTITION pp2 CONCURRENTLY');
note("DETACH PARTITION CONCURRENTLY took about $took s");
cmp_ok($during, '>', 0, "DETACH PARTITION CONCURRENTLY: $during rows were inserted into pp2 while it ran");
is(one($node, q{SELECT count(*) FROM pg_inherits WHERE inhrelid = 'pp2'::regclass}), '0', 'pp2 is detached');
is(one($node, $leaves), $pp1_g, 'detached: the partitioned guard has pp1\'s guard only');
is(one($node, "SELECT '$pp2_g'::regclass::oid"), $pp2_oid, 'detached: pp2 keeps its guard');
none_false($node, $pp2_g, 'SELECT k FROM pp2', 11000, 'detached, pp2\'s guard (writer running)');
none_false($node, 'pp_g', 'SELECT k FROM pp', 10000, 'detached, the partitioned guard');
none_false($node, $pp1_g, 'SELECT k FROM pp1', 10000, 'detached, pp1\'s guard');
usleep(300_000);
($during, $took) = rows_during($node, 'pp2', 'ALTER TABLE pp ATTACH PARTITION pp2 FOR VALUES FROM (1000) TO (2000)');
note("ATTACH PARTITION took about $took s");
is(one($node, $leaves), "$pp1_g,$pp2_g", 'attached again: pp2\'s guard is a leaf of the partitioned guard');
is(one($node, "SELECT '$pp2_g'::regclass::oid || ',' || (SELECT count(*) FROM pg_index WHERE indrelid = 'pp2'::regclass)"),
	"$pp2_oid,1", 'attached again: the same guard, none built');
my $pp2_before = one($node, 'SELECT count(*) FROM pp2');
ok(poll_for($node, 'postgres', "SELECT count(*) > $pp2_before + 500 FROM pp2", 't', 30),
	'the writer goes on inserting into pp2 after the ATTACH');
stop_writers($node, 'pp2', $w);
my $n2 = one($node, 'SELECT count(*) FROM pp2');
my $np = one($node, 'SELECT count(*) FROM pp');
cmp_ok($n2, '>', 11000, "pp2 holds its 10000 rows and the writer's ($n2)");
is(false_of($node, $pp2_g, 'SELECT k FROM pp2'), "0/$n2", "the end: pp2's guard, all $n2 keys answer true");
is(false_of($node, $pp1_g, 'SELECT k FROM pp1'), '0/10000', 'the end: pp1\'s guard, all 10000 keys answer true');
is(false_of($node, 'pp_g', 'SELECT k FROM pp'), "0/$np", "the end: the partitioned guard, all $np keys answer true");
mostly_false($node, 'pp_g', 'SELECT -generate_series(1, 20000)::int8', 20000, 'the partitioned guard');
mostly_false($node, $pp1_g, 'SELECT k FROM pp2', $n2, 'pp1\'s guard, for pp2\'s keys');

# ------------------------- 4. a guard that is not valid yet, or never will be ----
# Until CREATE INDEX CONCURRENTLY has validated it, a guard lacks the rows
# committed between its build's snapshot and its validation; a CREATE INDEX
# CONCURRENTLY that fails leaves it so (invalid).  PostgreSQL never reads an
# invalid index; a check of one must not answer false for a key the table
# holds either (an error, or "maybe").
#   X holds a write lock: CREATE INDEX CONCURRENTLY waits for it (phase 1).
#   T1 and T2 begin meanwhile and insert (the guard is not ready: their
#   rows are not added to it), X commits, the build's snapshot does not see
#   T1's and T2's rows, the guard becomes ready, and CREATE INDEX
#   CONCURRENTLY waits for T1 and T2 (phase 2).  T1 commits: its row is in
#   the table and not in the guard.  Then CREATE INDEX CONCURRENTLY is
#   cancelled, T2 commits: the guard stays invalid without either row.
one($node, q{
	CREATE TABLE ci (k int4 NOT NULL);
	INSERT INTO ci SELECT generate_series(1, 10000);
});
my @s = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 4;
my ($x, $c, $t1, $t2) = @s;
$x->query_safe('BEGIN; INSERT INTO ci VALUES (0);');
my $cpid = $c->query_safe('SELECT pg_backend_pid()');
$c->query_until(qr/starting/, "\\echo starting\nCREATE INDEX CONCURRENTLY ci_g ON ci USING bloomguard (k);\n");
my $waiting = "SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $cpid AND wait_event_type = 'Lock'";
ok(poll_for($node, 'postgres', $waiting, 't', 30), 'CREATE INDEX CONCURRENTLY waits for X (phase 1)');
my ($st0, $e0, $o0) = sqlstate($node, 'postgres', "SELECT bloom_guard_contains('ci_g', 5)");
note("a check of the guard before its build: $st0 '$o0' $e0");
ok($st0 ne 'OK' || $o0 eq 't', "before its build, the guard does not answer false for a key of the table (got $st0 '$o0')");
$t1->query_safe("BEGIN; INSERT INTO ci VALUES (424241);");
$t2->query_safe("BEGIN; INSERT INTO ci VALUES (424242);");
$x->query_safe('COMMIT');
ok(poll_for($node, 'postgres',
		"SELECT indisready::text || ',' || indisvalid::text FROM pg_index WHERE indexrelid = 'ci_g'::regclass",
		'true,false', 30),
	'the guard is built and ready, not valid yet');
ok(poll_for($node, 'postgres', $waiting, 't', 30), 'CREATE INDEX CONCURRENTLY waits for T1 and T2 (phase 2)');
$t1->query_safe('COMMIT');
my ($st1, $e1, $o1) = sqlstate($node, 'postgres', "SELECT bloom_guard_contains('ci_g', 424241)");
ok($st1 ne 'OK' || $o1 eq 't',
	"during CREATE INDEX CONCURRENTLY: a committed key the guard lacks does not answer false (got $st1 '$o1')");
is(one($node, "SELECT count(*) FROM ci WHERE k = 424241"), '1', '(the key is in the table)');
one($node, "SELECT pg_cancel_backend($cpid)");
my ($cout, $cfail) = $c->query('SELECT 1');
like($c->{stderr}, qr/canceling statement/, 'CREATE INDEX CONCURRENTLY was cancelled');
$t2->query_safe('COMMIT');
is(one($node, q{SELECT indisvalid::text FROM pg_index WHERE indexrelid = 'ci_g'::regclass}), 'false',
	'the cancelled build left the guard invalid');
my ($st2, $e2, $o2) = sqlstate($node, 'postgres',
	"SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('ci_g', k)) FROM ci");
ok($st2 ne 'OK' || $o2 eq '0',
	"an invalid guard: no key of the table answers false (got $st2, '$o2' keys answering false)");
$_->quit for @s;
one($node, 'DROP INDEX ci_g');

# ------------------------------------------------ 5. rebuilt by VACUUM ----
one($node, q{
	CREATE TABLE vr (id bigserial PRIMARY KEY, k int8 NOT NULL) WITH (autovacuum_enabled = off);
	INSERT INTO vr (k) SELECT i FROM generate_series(1, 200000) i;
	CREATE INDEX vr_g ON vr USING bloomguard (k) WITH (capacity = 20000);
	DELETE FROM vr WHERE k <= 160000;
	CREATE SEQUENCE vseq START 1000000;
});
my $vr_before = one($node, q{SELECT layers || ',' || added FROM bloom_guard_info('vr_g')});
$fn = one($node, q{SELECT pg_relation_filenode('vr_g')});
@w = map {
	start_writer($node, q{
		INSERT INTO vr (k) SELECT nextval('vseq') FROM generate_series(1, 100);
		DELETE FROM vr WHERE id IN (SELECT id FROM vr WHERE k >= 1000000 ORDER BY id LIMIT 20);})
} 1 .. 2;
ok(poll_for($node, 'postgres', q{SELECT count(*) > 41000 FROM vr}, 't', 30), 'vr: the writers are inserting');
($during, $took) = rows_during($node, 'vr', 'VACUUM vr');
note("VACUUM vr took about $took s; the guard was $vr_before (layers,keys)");
cmp_ok($during, '>', 0, "VACUUM: $during rows were inserted (net) while it ran");
is(one($node, q{SELECT pg_relation_filenode('vr_g')}), $fn, 'VACUUM: the guard keeps its relfilenode');
like(one($node, q{SELECT layers || ',' || (added < 150000)::text FROM bloom_guard_info('vr_g')}),
	qr/^[12],true$/, "VACUUM: the guard was built again (before: $vr_before layers,keys)");
none_false($node, 'vr_g', 'SELECT k FROM vr', 40000, 'after the rebuild by VACUUM (writers running)');
stop_writers($node, 'vr', @w);
my $nvr = one($node, 'SELECT count(*) FROM vr');
is(false_of($node, 'vr_g', 'SELECT k FROM vr'), "0/$nvr", "vr, writers stopped: all $nvr keys answer true");
mostly_false($node, 'vr_g', 'SELECT generate_series(1, 20000)::int8', 20000, 'vr: keys of deleted rows');
my $vr_after = one($node, q{SELECT capacity || ',' || layers FROM bloom_guard_info('vr_g')});
one($node, 'VACUUM vr');
is(one($node, q{SELECT capacity || ',' || layers FROM bloom_guard_info('vr_g')}), $vr_after,
	'a VACUUM with few deleted keys leaves the guard');

$node->stop;
done_testing();
