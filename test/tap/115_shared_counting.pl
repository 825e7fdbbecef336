# Counting guards (bloom_guard(..., layout => 'counting')): the trigger also
# fires on DELETE and on UPDATE, and queues the removal of the key that went
# away; the launcher applies it once the deleting transaction committed and
# the xmin horizon passed it, to the filter that was live when it was queued.
# Never a false negative:
#
#   1. a REPEATABLE READ transaction that began before the deletes still
#      finds every row it sees; the removals wait (removals_pending) until it
#      ends, then are applied (keys_removed) and the deleted keys answer "no";
#   2. a key held by several rows stays until its last row is deleted;
#      saturated counters (a key in 20 rows) never go down;
#   3. rolled-back deletes and savepoints leave their keys; prepared
#      transactions hold their removals until COMMIT or ROLLBACK PREPARED;
#   4. key-changing UPDATEs (also to NULL) remove the old key; others queue
#      nothing;
#   5. a rebuild between a delete and its removal drops the removal (the new
#      filter counted the row while a snapshot could see it);
#   6. a full queue drops removals (their keys stay) and never fails the
#      writer;
#   7. pgbench: inserts and deletes from 4 clients while REPEATABLE READ
#      transactions check the rows they see, across the removals; rows moving
#      between partitions;
#   8. a restart and a crash with removals in the queue.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use IPC::Run;

my $queue_size = 1000;
my $node = shared_node('shared_counting', qq{
bloomfilter.removal_queue_size = $queue_size
max_connections = 40
max_prepared_transactions = 2
restart_after_crash = on
});
my $T = 'public.t.k';

# keys_removed|removals_pending|removals_dropped of the filter
sub counters
{
	return $node->safe_psql('postgres',
		"SELECT keys_removed || '|' || removals_pending || '|' || removals_dropped "
		  . "FROM bloom_shared_filters WHERE name = '$T'");
}

# Wait until no removal is pending; one test.
sub drained
{
	my ($what) = @_;
	ok(poll_for($node, 'postgres',
		"SELECT removals_pending FROM bloom_shared_filters WHERE name = '$T'", '0', 60),
		"$what: the queue is empty");
}

# How many of the keys of $sql the filter answers "maybe" for.
sub maybes
{
	my ($sql, $session) = @_;
	my $q = "SELECT count(*) FROM ($sql) s(k) WHERE bloom_shared_contains('$T', k)";
	return $session ? $session->query_safe($q) : $node->safe_psql('postgres', $q);
}

my $rows = 'SELECT k FROM t';

$node->safe_psql('postgres', q{
	CREATE TABLE t (id bigserial PRIMARY KEY, k int, v text);
	INSERT INTO t (k) SELECT i FROM generate_series(1, 20000) i;
	-- keys 1 .. 100 are held by three rows each
	INSERT INTO t (k, v) SELECT i, 'dup1' FROM generate_series(1, 100) i;
	INSERT INTO t (k, v) SELECT i, 'dup2' FROM generate_series(1, 100) i;
	ANALYZE t;
});
is($node->safe_psql('postgres',
	"SELECT bloom_guard('t', 'k', 0.01, 40000, layout => 'counting')"), $T, 'guarded with layout counting');
wait_ready($node, 'postgres', $T, 'counting guard');
is($node->safe_psql('postgres',
	"SELECT layout || ' ' || keys_added FROM bloom_shared_filters WHERE name = '$T'"),
	'counting 20200', 'the view shows the layout and every row counted');
like($node->safe_psql('postgres',
	"SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 't'::regclass"),
	qr/AFTER INSERT OR DELETE OR UPDATE ON public\.t FOR EACH ROW/, 'the trigger also fires on DELETE');
is(counters(), '0|0|0', 'nothing removed yet');
my ($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('t', 'v', layout => 'classic')");
is($st, '0A000', 'layout classic is refused for a guard');
like($err, qr/a shared bloom filter cannot use layout classic\nHINT:  Use 'blocked' \(the default\), 'counting' or 'cuckoo'\./,
	'... with a hint');
($st, $err) = sqlstate($node, 'postgres', "SELECT bloom_guard('t', 'v', layout => 'Counting')");
is($st, '22023', 'an unrecognized layout is refused');
like($err, qr/unrecognized bloomfilter layout "Counting"/, '... naming it');

# ------------------------- 1. REPEATABLE READ across deletes ----
my $rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($rr->query_safe('SELECT count(*) FROM t'), '20200', 'RR: the snapshot sees every row');
$node->safe_psql('postgres', 'DELETE FROM t WHERE k BETWEEN 1001 AND 1500');
# several rounds of the launcher (every 200 ms while the queue is not empty)
sleep 2;
is(counters(), '0|500|0', 'RR open: 500 removals wait, none applied');
is($rr->query_safe(
	"SELECT count(*) FROM t WHERE NOT bloom_shared_contains('$T', k)"), '0',
	'RR open: every row the old snapshot sees answers "maybe"');
is($rr->query_safe("SELECT count(*) FROM t WHERE k BETWEEN 1001 AND 1500"), '500',
	'RR open: the snapshot still sees the deleted rows');
$rr->query_safe('COMMIT');
drained('RR ended');
is(counters(), '500|0|0', 'RR ended: the 500 removals were applied');
no_false_negatives($node, 'postgres', $T, $rows, 'after the removals');
cmp_ok(maybes('SELECT generate_series(1001, 1500)'), '<=', 25,
	'the deleted keys answer "no" (at most 25 of 500 "maybe")');

# ------------------------- 2. a key in several rows ----
$node->safe_psql('postgres', "DELETE FROM t WHERE v = 'dup1'");
drained('one copy deleted');
is(maybes('SELECT generate_series(1, 100)'), '100', 'keys still in two rows answer "maybe"');
$node->safe_psql('postgres', "DELETE FROM t WHERE v = 'dup2'");
drained('two copies deleted');
is(maybes('SELECT generate_series(1, 100)'), '100', 'keys still in one row answer "maybe"');
$node->safe_psql('postgres', "DELETE FROM t WHERE k <= 100");
drained('every copy deleted');
cmp_ok(maybes('SELECT generate_series(1, 100)'), '<=', 10, 'keys in no row answer "no"');
is(counters(), '800|0|0', 'one removal per deleted row');
no_false_negatives($node, 'postgres', $T, $rows, 'duplicates');
# a key in 20 rows: its counters saturate at 15 and never go down again
$node->safe_psql('postgres', "INSERT INTO t (k, v) SELECT 999999, 'sat' FROM generate_series(1, 20)");
$node->safe_psql('postgres', "DELETE FROM t WHERE v = 'sat'");
drained('saturated');
is(counters(), '820|0|0', 'the 20 removals of a saturated key are applied');
is(maybes('SELECT 999999'), '1', 'its saturated counters stay: the key stays ("maybe")');

# ------------------------- 3. rolled back ----
$node->safe_psql('postgres', q{
	BEGIN; DELETE FROM t WHERE k BETWEEN 2001 AND 2300; ROLLBACK;
	BEGIN; SAVEPOINT a; DELETE FROM t WHERE k BETWEEN 2301 AND 2400;
	ROLLBACK TO SAVEPOINT a; DELETE FROM t WHERE k = 2401; COMMIT;
});
drained('rolled back');
is(counters(), '821|0|0', 'a rolled-back delete removes nothing; the committed one in the same transaction does');
is(maybes('SELECT generate_series(2001, 2400)'), '400', 'rows kept by a rollback answer "maybe"');
no_false_negatives($node, 'postgres', $T, $rows, 'rollbacks');

# a prepared transaction: no session, no snapshot, but its xid still holds
# the horizon until COMMIT PREPARED (and ROLLBACK PREPARED drops the removals)
$node->safe_psql('postgres', q{
	BEGIN; DELETE FROM t WHERE k BETWEEN 2501 AND 2550; PREPARE TRANSACTION 'del1';
	BEGIN; DELETE FROM t WHERE k BETWEEN 2551 AND 2600; PREPARE TRANSACTION 'del2';
});
sleep 1;
is(counters(), '821|100|0', 'prepared deletes: their removals wait');
no_false_negatives($node, 'postgres', $T, $rows, 'prepared deletes');
$node->safe_psql('postgres', "COMMIT PREPARED 'del1'");
$node->safe_psql('postgres', "ROLLBACK PREPARED 'del2'");
drained('prepared deletes ended');
is(counters(), '871|0|0', 'COMMIT PREPARED applies its removals, ROLLBACK PREPARED drops them');
is(maybes('SELECT generate_series(2551, 2600)'), '50', 'rows kept by ROLLBACK PREPARED answer "maybe"');

# ------------------------- 4. UPDATE ----
$node->safe_psql('postgres', "UPDATE t SET v = 'touched' WHERE k BETWEEN 3001 AND 3500");
sleep 1;
is(counters(), '871|0|0', 'an UPDATE that keeps the key queues nothing');
$node->safe_psql('postgres', "UPDATE t SET k = k + 1000000 WHERE k BETWEEN 4001 AND 4200");
$node->safe_psql('postgres', "UPDATE t SET k = NULL WHERE k BETWEEN 4201 AND 4300");
drained('key changes');
is(counters(), '1171|0|0', 'a changed key and a key set to NULL are removed');
no_false_negatives($node, 'postgres', $T, $rows, 'key changes');
cmp_ok(maybes('SELECT generate_series(4001, 4300)'), '<=', 15, 'the old keys answer "no"');
$node->safe_psql('postgres', "UPDATE t SET k = 4250 WHERE k IS NULL AND id = (SELECT min(id) FROM t WHERE k IS NULL)");
is(maybes('SELECT 4250'), '1', 'a key set from NULL is added');

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
is(counters(), '0|0|200', 'the removals queued before the rebuild are dropped (keys_removed counts the new filter)');
is(maybes('SELECT generate_series(5001, 5200)'), '200', 'their keys stay ("maybe")');
no_false_negatives($node, 'postgres', $T, $rows, 'rebuild');

# ------------------------- 6. a full queue ----
$rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$rr->query_safe('SELECT 1');
($st) = sqlstate($node, 'postgres', 'DELETE FROM t WHERE k BETWEEN 6001 AND 7500');
is($st, 'OK', 'a DELETE of more rows than the queue holds succeeds');
# (removals_dropped also counts the 200 of the rebuild above)
is(counters(), "0|$queue_size|700", 'the queue is full; the other 500 removals are dropped');
$rr->query_safe('COMMIT');
$rr->quit;
drained('full queue');
is(counters(), "$queue_size|0|700", 'the queued removals are applied');
cmp_ok(maybes('SELECT generate_series(6001, 7500)'), '>=', 500,
	'the keys of the dropped removals stay ("maybe")');
no_false_negatives($node, 'postgres', $T, $rows, 'full queue');

# ------------------------- 7. pgbench churn with REPEATABLE READ checkers ----
$node->safe_psql('postgres', q{
	CREATE SEQUENCE kseq START 2000000;
	CREATE TABLE fails (at timestamptz DEFAULT now(), n bigint);
});
my $dir = PostgreSQL::Test::Utils::tempdir;
# Each checker takes its snapshot, lets the writers delete for a while, then
# checks the rows its snapshot sees (a window of ids); a row answering "no"
# is recorded.
my %scripts = (
	insert => q{
INSERT INTO t (k) SELECT nextval('kseq') FROM generate_series(1, 5);
},
	delete => q{
\set id random(1, 30000)
DELETE FROM t WHERE id IN (SELECT id FROM t WHERE id >= :id ORDER BY id LIMIT 5);
},
	check => q{
\set id random(1, 30000)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM t WHERE id BETWEEN :id AND :id + 300;
\sleep 300 ms
INSERT INTO fails (n) SELECT count(*) FROM t
 WHERE id BETWEEN :id AND :id + 300 AND NOT bloom_shared_contains('public.t.k', k)
HAVING count(*) > 0;
COMMIT;
},
);
my %weight = (insert => 4, delete => 4, check => 2);
my @files;
for my $s (sort keys %scripts)
{
	PostgreSQL::Test::Utils::append_to_file("$dir/$s.sql", $scripts{$s});
	push @files, '-f', "$dir/$s.sql\@$weight{$s}";
}
my $before = $node->safe_psql('postgres',
	"SELECT keys_removed FROM bloom_shared_filters WHERE name = '$T'");
my $built = $node->safe_psql('postgres',
	"SELECT last_build FROM bloom_shared_filters WHERE name = '$T'");
my ($bout, $berr) = ('', '');
my $rc = IPC::Run::run(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '15', @files,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$bout, '2>', \$berr);
ok($rc, 'pgbench ran to the end') or diag($berr);
is($node->safe_psql('postgres', 'SELECT count(*) FROM fails'), '0',
	'pgbench: no REPEATABLE READ checker found a row answering "no"');
drained('pgbench');
cmp_ok($node->safe_psql('postgres',
	"SELECT keys_removed FROM bloom_shared_filters WHERE name = '$T'"), '>', $before,
	'pgbench: removals were applied meanwhile');
is($node->safe_psql('postgres',
	"SELECT state || ' ' || last_build FROM bloom_shared_filters WHERE name = '$T'"),
	"ready $built", 'pgbench: still ready, not rebuilt meanwhile');
no_false_negatives($node, 'postgres', $T, $rows, 'after pgbench');

# ------------------------- 7b. a partitioned table: rows moving between partitions ----
partition_moves_follow($node, 'counting', 15);

# ------------------------- 7c. a second guard trigger ----
# Every trigger calling bloom_shared_trigger(name) queues a removal per
# deleted row: with two on one table, deleting one of two rows holding a key
# would take the key out of the filter while the other row is still there.
# A table owner, or a role with the TRIGGER privilege, must not get there.
$node->safe_psql('postgres', q{
	CREATE TABLE d (id int PRIMARY KEY, k int);
	INSERT INTO d SELECT i, i % 50 FROM generate_series(1, 500) i;
	CREATE ROLE trig_only LOGIN;
	GRANT SELECT, DELETE, TRIGGER ON d TO trig_only;
});
my $D = $node->safe_psql('postgres', "SELECT bloom_guard('d', 'k', layout => 'counting')");
wait_ready($node, 'postgres', $D, 'table d');
my ($st2, $err2) = sqlstate($node, 'postgres', qq{
	CREATE TRIGGER dup AFTER INSERT OR UPDATE OR DELETE ON d
	  FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('$D')});
is($st2, '42P17', 'a second guard trigger on a counting guard is refused');
like($err2, qr/table "d" has more than one trigger calling bloom_shared_trigger\('public\.d\.k'\)/,
	'... naming the table and the filter');
($st2, $err2) = sqlstate($node, 'postgres', qq{
	CREATE TRIGGER dup AFTER INSERT OR UPDATE OR DELETE ON d
	  FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('$D')}, user => 'trig_only');
isnt($st2, 'OK', 'a role with the TRIGGER privilege cannot add one either');
is(guard_trigger_list($node, 'postgres', 'd'), 'bloom_guard_k:A', 'd keeps one guard trigger');
$node->safe_psql('postgres', 'DELETE FROM d WHERE k = 7 AND id <> 7');
ok(poll_for($node, 'postgres',
	"SELECT removals_pending FROM bloom_shared_filters WHERE name = '$D'", '0', 60),
	'a second trigger: the queue is empty');
no_false_negatives($node, 'postgres', $D, 'SELECT k FROM d', 'a second trigger refused');
is($node->safe_psql('postgres', 'SELECT count(*) FROM d WHERE k = 7'), '1',
	'a second trigger refused: the gated scan finds the remaining row');

# ------------------------- 8. restart and crash with a non-empty queue ----
$rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$rr->query_safe('SELECT 1');
my $n = $node->safe_psql('postgres',
	'WITH d AS (DELETE FROM t WHERE k BETWEEN 8001 AND 8300 RETURNING 1) SELECT count(*) FROM d');
like(counters(), qr/^\d+\|$n\|700$/, "restart: $n removals wait");
$rr->quit;
$node->restart;
wait_ready($node, 'postgres', $T, 'after the restart');
like(counters(), qr/^0\|0\|0$/, 'after the restart: the queue is empty, nothing removed');
no_false_negatives($node, 'postgres', $T, $rows, 'after the restart');

my $w = crash_watch($node);
$rr = $node->background_psql('postgres');
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$rr->query_safe('SELECT 1');
$n = $node->safe_psql('postgres',
	'WITH d AS (DELETE FROM t WHERE k BETWEEN 8301 AND 8500 RETURNING 1) SELECT count(*) FROM d');
like(counters(), qr/^\d+\|$n\|0$/, "crash: $n removals wait");
my $pid = $rr->query_safe('SELECT pg_backend_pid()');
ok(kill('KILL', $pid), 'crash: kill -9 of a backend');
ok(server_back($node), 'crash: the server is back');
eval { $rr->quit };
eval { $w->{bg}->quit };
wait_ready($node, 'postgres', $T, 'after the crash');
like(counters(), qr/^0\|0\|0$/, 'after the crash: the queue is empty');
no_false_negatives($node, 'postgres', $T, $rows, 'after the crash');
$n = $node->safe_psql('postgres',
	'WITH d AS (DELETE FROM t WHERE k BETWEEN 8501 AND 8600 RETURNING 1) SELECT count(*) FROM d');
drained('after the crash');
is(counters(), "$n|0|0", 'after the crash: removals are applied again');
no_false_negatives($node, 'postgres', $T, $rows, 'at the end');

$node->stop;
done_testing();
