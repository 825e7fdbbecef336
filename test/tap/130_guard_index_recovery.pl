# The guard index (access method bloomguard) through crash recovery,
# TRUNCATE and point-in-time recovery.  Its pages change by generic WAL
# (every insert), whole-page WAL (the build) and a file extension WAL-logged
# by its last page (a growth): recovery must bring back every bit a
# committed row set, without a rebuild, or the guard answers "no" for a key
# that is in the table.
#
#  1. An unlogged table's guard: after a clean restart it keeps its keys.
#  2. TRUNCATE: rolled back, the guard keeps its keys; committed, the guard is
#     empty (the old keys answer false, exactly: no bit is set) and new keys
#     answer true.  (Before the crash below, so its redo replays it.)
#  3. Crash: a guarded table of 100,000 text keys and a small guard
#     (capacity 1000) that grows by layers while a background psql streams
#     inserts committing every 200 rows; the postmaster is stopped
#     ('immediate': SIGQUIT, no shutdown checkpoint) in the middle of the
#     stream.  After the restart, with no rebuild (same relfilenodes): every
#     key the table holds answers true (from bloom_guard_contains and from
#     bloom_guard_filter), absent keys mostly false, the grown guard still
#     has its layers, and new inserts are found.  The unlogged table is empty
#     and its guard (reset from its init fork) answers false for every old
#     key, true for new ones.
#  4. Point-in-time recovery: a base backup, batch A, a named restore point,
#     batch B; a new node recovered to the restore point from the archive:
#     the table has A and not B, every key it has answers true, B's keys
#     mostly false, the guard is the one of the backup (same relfilenode).
#  5. wal_level = minimal: guards of tables created or truncated in the
#     transaction that fills them (not WAL-logged, synced or logged whole at
#     commit) hold every key after a crash.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use TapHelpers;
use GuardIndexTest;

# ---------------------------------------------------------------- setup ----
my $node = PostgreSQL::Test::Cluster->new('guard_recovery');
$node->init(allows_streaming => 1, has_archiving => 1);
$node->append_conf('postgresql.conf', qq{
shared_buffers = 64MB
checkpoint_timeout = 1h
max_wal_size = 1GB
});
$node->start;

one($node, q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE words (id bigserial PRIMARY KEY, w text NOT NULL);
	INSERT INTO words (w) SELECT 'word' || i FROM generate_series(1, 100000) i;
	CREATE INDEX words_g ON words USING bloomguard (w);
	CREATE TABLE grown (k int8 NOT NULL);
	CREATE INDEX grown_g ON grown USING bloomguard (k) WITH (capacity = 1000);
	CHECKPOINT;
});
my $words = 'SELECT w FROM words';
my $absent_words = "SELECT 'absent' || i FROM generate_series(1, 20000) i";
all_found($node, 'words_g', $words, 100000, 'built');
mostly_false($node, 'words_g', $absent_words, 20000, 'built');
is(one($node, q{SELECT bloom_guard_contains('words_g', 'word77'::text)}
	  . q{ || ',' || bloom_guard_contains('words_g', 'nosuchword'::text)}), 'true,false',
	'built: a spot check of a present and an absent key');
is(one($node, q{SELECT bloom_guard_contains('words_g', NULL::text) IS NULL}), 't',
	'bloom_guard_contains is strict');

# ------------------------------------------------ 1. unlogged, clean restart ----
one($node, q{
	CREATE UNLOGGED TABLE ul (k text NOT NULL);
	CREATE INDEX ul_g ON ul USING bloomguard (k);
	INSERT INTO ul SELECT 'ul' || i FROM generate_series(1, 10000) i;
});
my $ul_old = "SELECT 'ul' || i FROM generate_series(1, 10000) i";
all_found($node, 'ul_g', $ul_old, 10000, 'unlogged (grown from 1000)');
$node->restart;
is(one($node, 'SELECT count(*) FROM ul'), '10000', 'unlogged, clean restart: the rows are kept');
all_found($node, 'ul_g', $ul_old, 10000, 'unlogged, clean restart');

# ------------------------------------------------------------ 2. TRUNCATE ----
one($node, q{
	CREATE TABLE tr (k int4 NOT NULL);
	CREATE INDEX tr_g ON tr USING bloomguard (k);
	INSERT INTO tr SELECT generate_series(1, 20000);
});
my $tr_old = 'SELECT generate_series(1, 20000)';
all_found($node, 'tr_g', 'SELECT k FROM tr', 20000, 'before TRUNCATE');
one($node, 'BEGIN; TRUNCATE tr; ROLLBACK;');
all_found($node, 'tr_g', $tr_old, 20000, 'TRUNCATE rolled back');
my $tr_node = one($node, q{SELECT pg_relation_filenode('tr_g')});
one($node, 'TRUNCATE tr');
isnt(one($node, q{SELECT pg_relation_filenode('tr_g')}), $tr_node, 'TRUNCATE gives the guard a new relfilenode');
is(true_of($node, 'tr_g', $tr_old), '0/20000', 'after TRUNCATE: no old key answers true (the guard is empty)');
is(one($node, q{SELECT layers || ',' || added FROM bloom_guard_info('tr_g')}), '1,0',
	'after TRUNCATE: bloom_guard_info shows one empty layer');
one($node, 'INSERT INTO tr SELECT generate_series(30001, 31000)');
all_found($node, 'tr_g', 'SELECT k FROM tr', 1000, 'inserts after TRUNCATE');
mostly_false($node, 'tr_g', $tr_old, 20000, 'after TRUNCATE and new inserts, the old keys');

# ----------------------------------------------- 3. crash during a stream ----
my $words_node = one($node, q{SELECT pg_relation_filenode('words_g')});
my $grown_node = one($node, q{SELECT pg_relation_filenode('grown_g')});
my $words_bytes = one($node, q{SELECT pg_relation_size('words_g')});

# 200 rows into each table per transaction; 2,000,000 rows in all, far more
# than it can insert before the crash.
my ($sout, $serr) = ('', '');
my $stream = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', q{
DO $$
BEGIN
	FOR i IN 0 .. 9999 LOOP
		INSERT INTO words (w) SELECT 'stream' || (i * 200 + g) FROM generate_series(1, 200) g;
		INSERT INTO grown (k) SELECT i * 200 + g FROM generate_series(1, 200) g;
		INSERT INTO ul (k) SELECT 'ulstream' || (i * 200 + g) FROM generate_series(1, 200) g;
		COMMIT;
	END LOOP;
END $$} ],
	'>', \$sout, '2>', \$serr);
ok(poll_for($node, 'postgres', 'SELECT count(*) >= 30000 FROM grown', 't', 60),
	'the stream committed 30,000 rows before the crash');
# (one more committed transaction during the stop is fine: whatever the
# table holds afterwards is what is checked)
$node->stop('immediate');
$stream->finish;
like($serr, qr/terminat|server closed the connection|connection to server/i,
	'the stream was cut off by the crash (not finished)')
  or diag("stream stderr: $serr");
$node->start;
ok(server_back($node), 'the server is back after the crash');

my $nwords = one($node, 'SELECT count(*) FROM words');
my $ngrown = one($node, 'SELECT count(*) FROM grown');
cmp_ok($ngrown, '>=', 30000, "after the crash: the committed stream rows are there ($ngrown)");
cmp_ok($ngrown, '<', 2000000, 'after the crash: the stream did not complete');
is($nwords, 100000 + $ngrown, 'after the crash: words holds the 100,000 keys and the stream\'s');
is(one($node, q{SELECT pg_relation_filenode('words_g') || ',' || pg_relation_filenode('grown_g')}),
	"$words_node,$grown_node", 'after the crash: the guards were not rebuilt (same relfilenodes)');
cmp_ok(one($node, q{SELECT pg_relation_size('words_g')}), '>=', $words_bytes,
	'after the crash: the guard\'s file did not shrink');
all_found($node, 'words_g', $words, $nwords, 'after the crash, words');
all_found($node, 'grown_g', 'SELECT k FROM grown', $ngrown, 'after the crash, the grown guard');
is(one($node, q{
	WITH f AS MATERIALIZED (SELECT bloom_guard_filter('words_g') AS f)
	SELECT count(*) FILTER (WHERE NOT bloom_contains(f.f, w)) || '/' || count(*) FROM words, f}),
	"0/$nwords", 'after the crash: bloom_guard_filter holds every key too');
mostly_false($node, 'words_g', $absent_words, 20000, 'after the crash, words');
mostly_false($node, 'grown_g', 'SELECT -generate_series(1, 20000)::int8', 20000,
	'after the crash, the grown guard');
my ($layers) = split /,/, one($node, q{SELECT layers || ',' || capacity FROM bloom_guard_info('grown_g')});
cmp_ok($layers, '>', 1, "after the crash: the grown guard still has its layers ($layers)");
# the tr guard: its TRUNCATE and the inserts after it were replayed
all_found($node, 'tr_g', 'SELECT k FROM tr', 1000, 'after the crash, tr (truncated before)');
mostly_false($node, 'tr_g', $tr_old, 20000, 'after the crash, tr\'s keys from before TRUNCATE');

# new inserts after the crash
one($node, q{
	INSERT INTO words (w) SELECT 'postcrash' || i FROM generate_series(1, 5000) i;
	INSERT INTO grown SELECT 5000000 + i FROM generate_series(1, 20000) i;
});
all_found($node, 'words_g', $words, $nwords + 5000, 'inserts after the crash, words');
all_found($node, 'grown_g', 'SELECT k FROM grown', $ngrown + 20000,
	'inserts after the crash, the grown guard');

# the unlogged table: reset to empty, its guard too
is(one($node, 'SELECT count(*) FROM ul'), '0', 'unlogged, after the crash: the table is empty');
is(true_of($node, 'ul_g', $ul_old), '0/10000',
	'unlogged, after the crash: no old key answers true (the guard was reset)');
is(true_of($node, 'ul_g', "SELECT 'ulstream' || i FROM generate_series(1, 10000) i"), '0/10000',
	'unlogged, after the crash: no key of the stream answers true');
is(one($node, q{SELECT layers || ',' || added FROM bloom_guard_info('ul_g')}), '1,0',
	'unlogged, after the crash: bloom_guard_info shows one empty layer');
one($node, q{INSERT INTO ul SELECT 'ulnew' || i FROM generate_series(1, 3000) i});
all_found($node, 'ul_g', 'SELECT k FROM ul', 3000, 'unlogged, inserts after the crash');
mostly_false($node, 'ul_g', $ul_old, 10000, 'unlogged, after new inserts, the old keys');

# ------------------------------------------- 4. point-in-time recovery ----
$node->backup('pitr_base');
my $nbase = one($node, 'SELECT count(*) FROM words');
one($node, q{INSERT INTO words (w) SELECT 'batchA' || i FROM generate_series(1, 5000) i});
one($node, q{SELECT pg_create_restore_point('before_b')});
one($node, q{
	INSERT INTO words (w) SELECT 'batchB' || i FROM generate_series(1, 5000) i;
	INSERT INTO grown SELECT 9000000 + i FROM generate_series(1, 20000) i;
});
my $walfile = one($node, 'SELECT pg_walfile_name(pg_current_wal_lsn())');
one($node, 'SELECT pg_switch_wal()');
ok($node->poll_query_until('postgres',
		"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver"),
	'the WAL with the restore point and batch B is archived');

my $pitr = PostgreSQL::Test::Cluster->new('guard_pitr');
$pitr->init_from_backup($node, 'pitr_base', has_restoring => 1, standby => 0);
$pitr->append_conf('postgresql.conf', qq{
recovery_target_name = 'before_b'
recovery_target_action = 'promote'
archive_mode = off
});
$pitr->start;
ok($pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'), 'PITR: recovered and promoted');
is(one($pitr, q{SELECT count(*) FILTER (WHERE w LIKE 'batchA%') || ',' || count(*) FILTER (WHERE w LIKE 'batchB%') FROM words}),
	'5000,0', 'PITR: the table has batch A and not batch B');
is(one($pitr, 'SELECT count(*) FROM words'), $nbase + 5000, 'PITR: the table has the base rows and batch A');
all_found($pitr, 'words_g', $words, $nbase + 5000, 'PITR, words (base rows and batch A)');
mostly_false($pitr, 'words_g', "SELECT 'batchB' || i FROM generate_series(1, 5000) i", 5000,
	'PITR, batch B\'s keys');
all_found($pitr, 'grown_g', 'SELECT k FROM grown', $ngrown + 20000, 'PITR, the grown guard');
mostly_false($pitr, 'grown_g', 'SELECT 9000000 + generate_series(1, 20000)::int8', 20000,
	'PITR, the grown guard, keys of the rows after the restore point');
is(one($pitr, q{SELECT pg_relation_filenode('words_g')}), $words_node, 'PITR: the guard was not rebuilt');
one($pitr, q{INSERT INTO words (w) SELECT 'afterpitr' || i FROM generate_series(1, 1000) i});
all_found($pitr, 'words_g', $words, $nbase + 6000, 'PITR, inserts after the promotion');

$pitr->stop;
$node->stop;

# ------------------------------------------------- 5. wal_level = minimal ----
# A table created (or truncated) in the transaction that fills it is not
# WAL-logged under wal_level = minimal: at commit its files are synced, or,
# below wal_skip_threshold, logged whole.  The guard's pages, extensions by
# growth included, must be among them.
my $min = PostgreSQL::Test::Cluster->new('guard_minimal');
$min->init;
$min->append_conf('postgresql.conf', qq{
wal_level = minimal
max_wal_senders = 0
wal_skip_threshold = '64kB'
});
$min->start;
one($min, q{
	CREATE EXTENSION bloomfilter;
	BEGIN;
	CREATE TABLE big (k int8 NOT NULL);
	CREATE INDEX big_g ON big USING bloomguard (k) WITH (capacity = 1000);
	INSERT INTO big SELECT generate_series(1, 50000);
	COMMIT;
	BEGIN;
	CREATE TABLE small (k int8 NOT NULL);
	CREATE INDEX small_g ON small USING bloomguard (k) WITH (capacity = 1000);
	INSERT INTO small SELECT generate_series(1, 300);
	COMMIT;
	CREATE TABLE tt (k int8 NOT NULL);
	CREATE INDEX tt_g ON tt USING bloomguard (k) WITH (capacity = 1000);
	INSERT INTO tt SELECT generate_series(1, 500);
	BEGIN;
	TRUNCATE tt;
	INSERT INTO tt SELECT generate_series(1001, 30000);
	COMMIT;
});
my ($min_layers) = one($min, q{SELECT layers FROM bloom_guard_info('big_g')});
cmp_ok($min_layers, '>', 1, "wal_level = minimal: the guard grew in its table's first transaction ($min_layers layers)");
$min->stop('immediate');
$min->start;
all_found($min, 'big_g', 'SELECT k FROM big', 50000, 'wal_level = minimal, after a crash, synced at commit');
all_found($min, 'small_g', 'SELECT k FROM small', 300, 'wal_level = minimal, after a crash, logged at commit');
all_found($min, 'tt_g', 'SELECT k FROM tt', 29000, 'wal_level = minimal, after a crash, truncated and filled in one transaction');
is(one($min, q{SELECT layers FROM bloom_guard_info('big_g')}), $min_layers, 'wal_level = minimal, after a crash: the layers are kept');
one($min, 'INSERT INTO big SELECT generate_series(50001, 100000)');
all_found($min, 'big_g', 'SELECT k FROM big', 100000, 'wal_level = minimal, inserts after the crash');
mostly_false($min, 'big_g', 'SELECT -generate_series(1, 20000)::int8', 20000, 'wal_level = minimal');
$min->stop;
done_testing();
