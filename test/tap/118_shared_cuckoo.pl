# Cuckoo guards (bloom_guard(..., layout => 'cuckoo')): the guard keeps a
# cuckoo table; the trigger also fires on DELETE and key-changing UPDATE and
# queues the removal, applied as for a counting guard (after the deleter
# committed and the xmin horizon passed it, to the table live when it was
# queued) by clearing one copy of the key's fingerprint.  Never a false
# negative:
#
#   0. the guard: layout cuckoo in the view, the trigger fires on DELETE,
#      no hash count, bloom_shared_get refused; bad layouts and rates;
#   1. a REPEATABLE READ transaction that began before the deletes finds
#      every row it sees; the removals wait until it ends, then apply;
#   2. a key in several rows stays until its last row is deleted;
#   3. rolled-back deletes and savepoints leave their keys;
#   4. key-changing UPDATEs remove the old key;
#   5. a rebuild between a delete and its removal drops the removal;
#   6. a full table: a guard of capacity 200 receiving 2,000 rows in one
#      transaction overflows (its rebuild waits for that transaction) and
#      answers "maybe" for every key; one receiving 20,000 rows answers
#      "maybe" for every row at every moment, grows by rebuilds at 2x, and
#      ends ready; a key in more rows than its buckets hold makes the guard
#      "full" (answering "maybe"), never a missing key;
#   6b. a partitioned table, rows moving between partitions;
#   7. concurrency: inserters and deleters move fingerprints between
#      buckets (the table near its load limit) while checkers test, without
#      a lock, keys that are never deleted, and REPEATABLE READ checkers
#      test the rows they see: zero "no";
#   8. a restart (a guard defined with a capacity far below its rows is
#      built once, at the size its statistics say) and a crash.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use IPC::Run;

my $node = shared_node('shared_cuckoo', qq{
max_connections = 40
restart_after_crash = on
});
my $T = 'public.t.k';

# keys_removed|removals_pending|removals_dropped of a filter
sub counters
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT keys_removed || '|' || removals_pending || '|' || removals_dropped "
		  . "FROM bloom_shared_filters WHERE name = '" . ($name // $T) . "'");
}

# Wait until no removal is pending; one test.
sub drained
{
	my ($what, $name) = @_;
	ok(poll_for($node, 'postgres',
		"SELECT removals_pending FROM bloom_shared_filters WHERE name = '" . ($name // $T) . "'", '0', 60),
		"$what: the queue is empty");
}

# How many of the keys of $sql the filter answers "maybe" for.
sub maybes
{
	my ($sql, $session, $name) = @_;
	$name //= $T;
	my $q = "SELECT count(*) FROM ($sql) s(k) WHERE bloom_shared_contains('$name', k)";
	return $session ? $session->query_safe($q) : $node->safe_psql('postgres', $q);
}

my $rows = 'SELECT k FROM t';

# ------------------------- 0. the guard ----
$node->safe_psql('postgres', q{
	CREATE TABLE t (id bigserial PRIMARY KEY, k int, v text);
	INSERT INTO t (k) SELECT i FROM generate_series(1, 20000) i;
	-- keys 1 .. 100 are held by three rows each
	INSERT INTO t (k, v) SELECT i, 'dup1' FROM generate_series(1, 100) i;
	INSERT INTO t (k, v) SELECT i, 'dup2' FROM generate_series(1, 100) i;
	ANALYZE t;
});
my ($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('t', 'k', layout => 'Cuckoo')");
is($st, '22023', 'an unrecognized layout is refused');
like($err, qr/unrecognized bloomfilter layout "Cuckoo"\nHINT:  Use 'blocked' \(the default\), 'counting' or 'cuckoo'\./,
	'... naming it, with a hint');
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('t', 'k', 1e-12, layout => 'cuckoo')");
is($st, '22023', 'a rate below what 32-bit fingerprints give is refused');
like($err, qr/false-positive rate 1e-12 is too small for a cuckoo filter\nDETAIL:  Its fingerprints have at most 32 bits\.\nHINT:  Use a rate of at least 2e-9, or layout counting\./,
	'... with a detail and a hint');
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('t', 'k', 0.01, 1000000000000, layout => 'cuckoo')");
is($st, '53400', 'a cuckoo guard larger than the pool is refused');
like($err, qr/a shared cuckoo filter of capacity 1000000000000 at false-positive rate 0\.01 does not fit in bloomfilter\.shared_memory/,
	'... saying so');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bloom_shared_definitions'), '0',
	'the refused guards left no definition');

is($node->safe_psql('postgres',
	"SELECT bloom_guard('t', 'k', 0.01, 40000, layout => 'cuckoo')"), $T, 'guarded with layout cuckoo');
wait_ready($node, 'postgres', $T, 'cuckoo guard');
like($node->safe_psql('postgres',
	"SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 't'::regclass"),
	qr/AFTER INSERT OR DELETE OR UPDATE ON public\.t FOR EACH ROW/, 'the trigger also fires on DELETE');
is($node->safe_psql('postgres',
	"SELECT layout || '|' || capacity || '|' || keys_added || '|' || (bits > 0) "
	  . "|| '|' || (estimated_fpr BETWEEN 0.001 AND 0.01) FROM bloom_shared_filters WHERE name = '$T'"),
	'cuckoo|40000|20200|true|true',
	'the view: layout cuckoo, one fingerprint per row, the rate at its load');
is($node->safe_psql('postgres', 'SELECT layout FROM bloom_shared_definitions'), 'cuckoo',
	'the definition says cuckoo');
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_shared_get('$T')");
is($st, '42809', 'bloom_shared_get of a cuckoo guard is refused');
like($err, qr/shared filter "public\.t\.k" is a cuckoo filter\nDETAIL:  bloom_shared_get\(\) returns a bloomfilter value\./,
	'... saying why');
no_false_negatives($node, 'postgres', $T, $rows, 'built');
cmp_ok(maybes('SELECT generate_series(100001, 110000)'), '<=', 150,
	'absent keys: at most 1.5% of 10000 answer "maybe"');
is(counters(), '0|0|0', 'nothing removed yet');

# the planner's gate answers from the cuckoo table too
is($node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE k = 12345'), '1',
	'a gated scan finds a present key');
my $skipped = $node->safe_psql('postgres',
	"SELECT skipped_scans FROM bloom_shared_filters WHERE name = '$T'");
$node->safe_psql('postgres', join('', map { "SELECT count(*) FROM t WHERE k = " . (300000 + $_) . ";\n" } 1 .. 100));
cmp_ok($node->safe_psql('postgres',
	"SELECT skipped_scans FROM bloom_shared_filters WHERE name = '$T'"), '>=', $skipped + 95,
	'planner gates skip the scans of absent keys');

# a key added by hand
$node->safe_psql('postgres', "SELECT bloom_shared_add('$T', 424242)");
is(maybes('SELECT 424242'), '1', 'bloom_shared_add adds to the cuckoo table');

# ------------------------- 1. REPEATABLE READ across deletes ----
my $rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($rr->query_safe('SELECT count(*) FROM t'), '20200', 'RR: the snapshot sees every row');
$node->safe_psql('postgres', 'DELETE FROM t WHERE k BETWEEN 1001 AND 1500');
sleep 2;
is(counters(), '0|500|0', 'RR open: 500 removals wait, none applied');
is($rr->query_safe(
	"SELECT count(*) FROM t WHERE NOT bloom_shared_contains('$T', k)"), '0',
	'RR open: every row the old snapshot sees answers "maybe"');
$rr->query_safe('COMMIT');
drained('RR ended');
is(counters(), '500|0|0', 'RR ended: the 500 removals were applied');
is($node->safe_psql('postgres', "SELECT keys_added FROM bloom_shared_filters WHERE name = '$T'"),
	'19701', 'keys_added is net of the removals (and counts the key added by hand)');
no_false_negatives($node, 'postgres', $T, $rows, 'after the removals');
cmp_ok(maybes('SELECT generate_series(1001, 1500)'), '<=', 15,
	'the deleted keys answer "no" (at most 15 of 500 "maybe")');

# ------------------------- 2. a key in several rows ----
$node->safe_psql('postgres', "DELETE FROM t WHERE v = 'dup1'");
drained('one copy deleted');
is(maybes('SELECT generate_series(1, 100)'), '100', 'keys still in two rows answer "maybe"');
$node->safe_psql('postgres', "DELETE FROM t WHERE v = 'dup2'");
drained('two copies deleted');
is(maybes('SELECT generate_series(1, 100)'), '100', 'keys still in one row answer "maybe"');
$node->safe_psql('postgres', "DELETE FROM t WHERE k <= 100");
drained('every copy deleted');
cmp_ok(maybes('SELECT generate_series(1, 100)'), '<=', 5, 'keys in no row answer "no"');
is(counters(), '800|0|0', 'one removal per deleted row');
no_false_negatives($node, 'postgres', $T, $rows, 'duplicates');

# ------------------------- 3. rolled back ----
$node->safe_psql('postgres', q{
	BEGIN; DELETE FROM t WHERE k BETWEEN 2001 AND 2300; ROLLBACK;
	BEGIN; SAVEPOINT a; DELETE FROM t WHERE k BETWEEN 2301 AND 2400;
	ROLLBACK TO SAVEPOINT a; DELETE FROM t WHERE k = 2401; COMMIT;
});
drained('rolled back');
is(counters(), '801|0|0', 'a rolled-back delete removes nothing; the committed one in the same transaction does');
is(maybes('SELECT generate_series(2001, 2400)'), '400', 'rows kept by a rollback answer "maybe"');
no_false_negatives($node, 'postgres', $T, $rows, 'rollbacks');

# ------------------------- 4. UPDATE ----
$node->safe_psql('postgres', "UPDATE t SET v = 'touched' WHERE k BETWEEN 3001 AND 3500");
sleep 1;
is(counters(), '801|0|0', 'an UPDATE that keeps the key queues nothing');
$node->safe_psql('postgres', "UPDATE t SET k = k + 1000000 WHERE k BETWEEN 4001 AND 4200");
$node->safe_psql('postgres', "UPDATE t SET k = NULL WHERE k BETWEEN 4201 AND 4300");
drained('key changes');
is(counters(), '1101|0|0', 'a changed key and a key set to NULL are removed');
no_false_negatives($node, 'postgres', $T, $rows, 'key changes');
cmp_ok(maybes('SELECT generate_series(4001, 4300)'), '<=', 10, 'the old keys answer "no"');

# ------------------------- 5. a rebuild between delete and removal ----
$rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$rr->query_safe('SELECT count(*) FROM t');
$node->safe_psql('postgres', 'DELETE FROM t WHERE k BETWEEN 5001 AND 5200');
$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('$T')");
wait_ready($node, 'postgres', $T, 'rebuilt with removals queued');
is($rr->query_safe(
	"SELECT count(*) FROM t WHERE NOT bloom_shared_contains('$T', k)"), '0',
	'rebuilt: every row the old snapshot sees answers "maybe"');
$rr->query_safe('COMMIT');
$rr->quit;
drained('rebuilt');
is(counters(), '0|0|200', 'the removals queued before the rebuild are dropped');
is(maybes('SELECT generate_series(5001, 5200)'), '200', 'their keys stay ("maybe")');
no_false_negatives($node, 'postgres', $T, $rows, 'rebuild');

# ------------------------- 6. a full table ----
my $F = 'public.f.k';
$node->safe_psql('postgres', q{
	CREATE TABLE f (k int, v text);
	CREATE TABLE f_fails (batch int, n bigint);
});
$node->safe_psql('postgres', "SELECT bloom_guard('f', 'k', 0.01, 200, layout => 'cuckoo')");
wait_ready($node, 'postgres', $F, 'capacity 200');
# 100 batches of 200 rows, each checked at once, while rebuilds come and go
$node->safe_psql('postgres', qq{
	DO \$\$
	BEGIN
		FOR b IN 1 .. 100 LOOP
			INSERT INTO f (k) SELECT g FROM generate_series((b - 1) * 200 + 1, b * 200) g;
			COMMIT;
			INSERT INTO f_fails SELECT b, count(*) FROM f
			 WHERE NOT bloom_shared_contains('$F', k) HAVING count(*) > 0;
			COMMIT;
		END LOOP;
	END
	\$\$});
is($node->safe_psql('postgres', 'SELECT count(*) FROM f_fails'), '0',
	'full table: no row answered "no" after any batch');
wait_ready($node, 'postgres', $F, 'grown', 120);
cmp_ok($node->safe_psql('postgres',
	"SELECT capacity FROM bloom_shared_filters WHERE name = '$F'"), '>=', 20000,
	'it grew by rebuilds to hold the 20000 rows');
no_false_negatives($node, 'postgres', $F, 'SELECT k FROM f', 'grown');

# a table overflowing inside one transaction: the rebuild waits for it, so
# the live table overflows (deterministically) and answers "maybe"
my $H = 'public.h.k';
$node->safe_psql('postgres', 'CREATE TABLE h (k int)');
$node->safe_psql('postgres', "SELECT bloom_guard('h', 'k', 0.01, 200, layout => 'cuckoo')");
wait_ready($node, 'postgres', $H, 'capacity 200, one transaction');
$rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN');
$rr->query_safe('INSERT INTO h SELECT generate_series(1, 2000)');
is(state_of($node, 'postgres', $H), 'full', 'one transaction of 2000 rows: the table overflowed');
is($rr->query_safe("SELECT count(*) FROM h WHERE NOT bloom_shared_contains('$H', k)"), '0',
	'overflowed: every row answers "maybe"');
is(maybes('SELECT generate_series(900001, 900100)', undef, $H), '100',
	'overflowed: absent keys answer "maybe" too');
$rr->query_safe('COMMIT');
$rr->quit;
wait_ready($node, 'postgres', $H, 'grown after the transaction', 120);
cmp_ok($node->safe_psql('postgres', "SELECT capacity FROM bloom_shared_filters WHERE name = '$H'"),
	'>=', 2000, 'grown to hold the 2000 rows');
no_false_negatives($node, 'postgres', $H, 'SELECT k FROM h', 'grown after the transaction');

# a key in more rows than its two buckets (8 slots) can hold
my $G = 'public.g.k';
$node->safe_psql('postgres', q{
	CREATE TABLE g (k int, v text);
	INSERT INTO g (k) SELECT i FROM generate_series(1, 1000) i;
});
$node->safe_psql('postgres', "SELECT bloom_guard('g', 'k', 0.01, 10000, layout => 'cuckoo')");
wait_ready($node, 'postgres', $G, 'table g');
$node->safe_psql('postgres', "INSERT INTO g (k, v) SELECT 777777, 'many' FROM generate_series(1, 12)");
is(state_of($node, 'postgres', $G), 'full', 'a key in 12 rows: the guard is full');
like($node->safe_psql('postgres', "SELECT last_error FROM bloom_shared_filters WHERE name = '$G'"),
	qr/a key is held by more rows \(or row versions not yet vacuumed\) than its cuckoo buckets can count/, '... and says why');
is($node->safe_psql('postgres', "SELECT capacity FROM bloom_shared_filters WHERE name = '$G'"), '10000',
	'... without growing (the table is mostly empty: it would not help)');
is(maybes('SELECT generate_series(900001, 901000)', undef, $G), '1000',
	'full: every key answers "maybe"');
no_false_negatives($node, 'postgres', $G, 'SELECT k FROM g', 'full');
is($node->safe_psql('postgres', "SELECT estimated_fpr FROM bloom_shared_filters WHERE name = '$G'"), '1',
	'full: the estimated rate is 1 (every key answers "maybe")');
$node->safe_psql('postgres', "INSERT INTO g (k) SELECT generate_series(2001, 2005)");
is($node->safe_psql('postgres',
	"SELECT keys_added >= (SELECT count(*) FROM g) FROM bloom_shared_filters WHERE name = '$G'"), 't',
	'full: keys_added still counts the keys added');
$node->safe_psql('postgres', "DELETE FROM g WHERE v = 'many'");
sleep 1;
is(counters($G), '0|0|12', 'full: removals are not queued (the table lacks a key), they are counted dropped');
# no bloom_shared_rebuild: the same-size rebuilds retried with backoff recover
wait_ready($node, 'postgres', $G, 'rebuilt by itself after the duplicates went', 120);
no_false_negatives($node, 'postgres', $G, 'SELECT k FROM g', 'rebuilt after the duplicates went');

# keys of rolled-back inserts fill the buckets too (no row holds them): full,
# then a same-size rebuild drops them
for (1 .. 12)
{
	$node->safe_psql('postgres', "BEGIN; INSERT INTO g (k) VALUES (-1); ROLLBACK;");
}
is(state_of($node, 'postgres', $G), 'full', 'a rolled-back key 12 times: full');
no_false_negatives($node, 'postgres', $G, 'SELECT k FROM g', 'full after rollbacks');
wait_ready($node, 'postgres', $G, 'rebuilt by itself after the rollbacks', 120);
no_false_negatives($node, 'postgres', $G, 'SELECT k FROM g', 'rebuilt after the rollbacks');

# ------------------------- 6b. a partitioned table: rows moving between partitions ----
my $P = partition_moves_follow($node, 'cuckoo', 10);
# a partition's table full: the guard's row says so (the worst state)
$node->safe_psql('postgres', "INSERT INTO p SELECT 1, 555555 FROM generate_series(1, 12)");
is(state_of($node, 'postgres', $P), 'full', 'partitioned: a full partition makes the guard full');
no_false_negatives($node, 'postgres', $P, 'SELECT k FROM p', 'partitioned, a partition full');

# ------------------------- 7. concurrency ----
# Table c: 2000 stable keys (never deleted) and churn around 80% of the
# table's slots, so inserts kick fingerprints between buckets all the time.
my $C = 'public.c.k';
$node->safe_psql('postgres', q{
	CREATE TABLE c (id bigserial PRIMARY KEY, k bigint, stable bool DEFAULT false);
	CREATE INDEX ON c (k);
	CREATE SEQUENCE cseq START 10000000;
	CREATE TABLE fails (at timestamptz DEFAULT now(), who text, n bigint);
	INSERT INTO c (k, stable) SELECT i, true FROM generate_series(1, 2000) i;
	INSERT INTO c (k) SELECT nextval('cseq') FROM generate_series(1, 5500);
});
$node->safe_psql('postgres', "SELECT bloom_guard('c', 'k', 0.01, 9000, layout => 'cuckoo')");
wait_ready($node, 'postgres', $C, 'table c');
my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	insert => q{
INSERT INTO c (k) SELECT nextval('cseq') FROM generate_series(1, 10);
},
	delete => q{
DELETE FROM c WHERE id IN (SELECT id FROM c WHERE NOT stable ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED);
},
	stable => q{
INSERT INTO fails (who, n) SELECT 'stable', count(*) FROM c
 WHERE stable AND NOT bloom_shared_contains('public.c.k', k) HAVING count(*) > 0;
},
	snapshot => q{
\set id random(1, 12000)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM c WHERE id BETWEEN :id AND :id + 300;
\sleep 200 ms
INSERT INTO fails (who, n) SELECT 'snapshot', count(*) FROM c
 WHERE id BETWEEN :id AND :id + 300 AND NOT bloom_shared_contains('public.c.k', k)
HAVING count(*) > 0;
COMMIT;
},
);
my %weight = (insert => 3, delete => 3, stable => 3, snapshot => 1);
my @files;
for my $s (sort keys %scripts)
{
	PostgreSQL::Test::Utils::append_to_file("$dir/$s.sql", $scripts{$s});
	push @files, '-f', "$dir/$s.sql\@$weight{$s}";
}
my $before = $node->safe_psql('postgres',
	"SELECT checks FROM bloom_shared_filters WHERE name = '$C'");
my ($bout, $berr) = ('', '');
my $rc = IPC::Run::run(
	[ 'pgbench', '-n', '-c', '6', '-j', '2', '-T', '20', @files,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$bout, '2>', \$berr);
ok($rc, 'pgbench ran to the end') or diag($berr);
is($node->safe_psql('postgres', "SELECT coalesce(string_agg(who || ':' || n, ', '), 'none') FROM fails"),
	'none', 'pgbench: no check of a stable key or of a row a snapshot sees answered "no"');
cmp_ok($node->safe_psql('postgres',
	"SELECT checks FROM bloom_shared_filters WHERE name = '$C'"), '>', $before + 50000,
	'pgbench: more than 50000 checks ran meanwhile');
drained('pgbench', $C);
cmp_ok($node->safe_psql('postgres',
	"SELECT keys_removed FROM bloom_shared_filters WHERE name = '$C'"), '>', 0,
	'pgbench: removals were applied meanwhile');
note('c after pgbench: ' . $node->safe_psql('postgres',
	"SELECT 'keys_added ' || keys_added || ', keys_removed ' || keys_removed || ', capacity ' || capacity "
	  . "|| ', checks ' || checks FROM bloom_shared_filters WHERE name = '$C'"));
no_false_negatives($node, 'postgres', $C, 'SELECT k FROM c', 'after pgbench');

# ------------------------- 8. restart ----
$node->safe_psql('postgres', 'DELETE FROM t WHERE k BETWEEN 8001 AND 8300');
$node->safe_psql('postgres', 'ANALYZE f');
my $logpos = -s $node->logfile;
$node->restart;
wait_ready($node, 'postgres', $T, 'after the restart');
is(counters(), '0|0|0', 'after the restart: rebuilt, the queue is empty');
is($node->safe_psql('postgres', "SELECT layout FROM bloom_shared_filters WHERE name = '$T'"), 'cuckoo',
	'after the restart: still cuckoo');
no_false_negatives($node, 'postgres', $T, $rows, 'after the restart');
no_false_negatives($node, 'postgres', $C, 'SELECT k FROM c', 'c after the restart');
# f's definition says capacity 200, its statistics 20,000 rows: one build,
# sized for them (not an overflowed build at 200, then a second one)
wait_ready($node, 'postgres', $F, 'f after the restart', 120);
no_false_negatives($node, 'postgres', $F, 'SELECT k FROM f', 'f after the restart');
sleep 1;    # a build asked for by an overflow would have started by now
wait_ready($node, 'postgres', $F, 'f after the restart, settled', 120);
my @fbuilds = slurp_file($node->logfile, $logpos) =~ /built shared bloom filter "public\.f\.k"/g;
is(scalar(@fbuilds), 1, 'f after the restart: built once, from its statistics');
cmp_ok($node->safe_psql('postgres', "SELECT capacity FROM bloom_shared_filters WHERE name = '$F'"),
	'>=', 20000, 'f after the restart: sized for its rows');
$node->safe_psql('postgres', 'DELETE FROM t WHERE k BETWEEN 8501 AND 8600');
drained('after the restart');
is(counters(), '100|0|0', 'after the restart: removals are applied again');
no_false_negatives($node, 'postgres', $T, $rows, 'at the end');

# a crash (kill -9 of a backend) with removals waiting
$rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$rr->query_safe('SELECT 1');
my $n = $node->safe_psql('postgres',
	'WITH d AS (DELETE FROM t WHERE k BETWEEN 8701 AND 8800 RETURNING 1) SELECT count(*) FROM d');
like(counters(), qr/^\d+\|$n\|0$/, "crash: $n removals wait");
my $pid = $rr->query_safe('SELECT pg_backend_pid()');
ok(kill('KILL', $pid), 'crash: kill -9 of a backend');
ok(server_back($node), 'crash: the server is back');
eval { $rr->quit };
wait_ready($node, 'postgres', $T, 'after the crash');
is(counters(), '0|0|0', 'after the crash: rebuilt, the queue is empty');
no_false_negatives($node, 'postgres', $T, $rows, 'after the crash');
no_false_negatives($node, 'postgres', $C, 'SELECT k FROM c', 'c after the crash');

$node->stop;
done_testing();
