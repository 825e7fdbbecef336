# The write paths on which PostgreSQL maintains indexes, each into a table
# with a guard index (access method bloomguard).  The guard is not a trigger:
# PostgreSQL's index machinery calls it on every heap insert and non-HOT
# update, whatever turned triggers off or routed the row.  On each path
# every key the table holds must answer true from bloom_guard_contains
# (0 false negatives, over a known number of keys), and where it says
# something, absent keys must answer false.
#
#  1. COPY FROM STDIN (multi-insert), into a plain and a partitioned table.
#  2. A rule (ON INSERT TO src DO ALSO INSERT INTO guarded): the key is found
#     in the same transaction.
#  3. session_replication_role = replica, and ALTER TABLE ... DISABLE TRIGGER
#     ALL (a trigger that would raise proves triggers were off).
#  4. An UPDATE of the key (never HOT), a STORED generated column,
#     INSERT ... ON CONFLICT DO UPDATE / DO NOTHING, MERGE.
#  5. Partition routing into a partitioned table with a partitioned guard
#     (each leaf's guard holds its own rows; the parent's answers for all),
#     an UPDATE moving rows between partitions, ATTACH PARTITION of a table
#     with rows (PostgreSQL builds its guard) and of a table with a guard of
#     its own (attached as it is).  A partitioned guard that is not valid
#     (CREATE INDEX ON ONLY, one partition's guard not attached yet) and one
#     over a foreign-table partition (which gets no index): no key of the
#     table may answer false.  VACUUM FULL, CLUSTER and REINDEX rebuild the
#     guard with every key.
#  6. Logical replication into a subscriber whose table has the guard (the
#     publisher's has none): the initial copy and the streamed inserts and
#     updates.
#  7. SERIALIZABLE: two transactions each see bloom_guard_contains answer
#     false for 777777 and each insert it: the second fails with 40001 (as
#     if they had read the table); without the check both commit.
#  8. pg_dump -Fc / pg_restore by a non-superuser owning the database, the
#     table and the guard (the extension is trusted): the restored guard
#     answers true for every key and keeps its options.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TapHelpers;
use GuardIndexTest;

# The leaf guards of a partitioned guard: [index, its table], by index name.
sub leaf_guards
{
	my ($node, $parent) = @_;
	my $out = $node->safe_psql('postgres', qq{
		SELECT c.relname || ' ' || i.indrelid::regclass::text || ' ' || a.amname
		FROM pg_partition_tree('$parent') t
		JOIN pg_class c ON c.oid = t.relid
		JOIN pg_am a ON a.oid = c.relam
		JOIN pg_index i ON i.indexrelid = t.relid
		WHERE t.isleaf ORDER BY c.relname});
	my @leaves;
	for my $line (split /\n/, $out)
	{
		my ($idx, $tbl, $am) = split / /, $line;
		is($am, 'bloomguard', "leaf index $idx of $parent is a bloomguard index");
		push @leaves, [ $idx, $tbl ];
	}
	return @leaves;
}

# Every leaf guard of $parent holds its table's keys, and the parent's guard
# all of them.
sub partitions_found
{
	my ($node, $parent, $table, $nleaves, $what) = @_;
	my @leaves = leaf_guards($node, $parent);
	is(scalar(@leaves), $nleaves, "$what: $parent has $nleaves leaf guards");
	for my $l (@leaves)
	{
		my ($idx, $tbl) = @$l;
		my $n = $node->safe_psql('postgres', "SELECT count(*) FROM $tbl");
		cmp_ok($n, '>', 0, "$what: partition $tbl has rows");
		all_found($node, $idx, "SELECT k FROM $tbl", $n, "$what, leaf guard $idx of $tbl");
	}
	my $n = $node->safe_psql('postgres', "SELECT count(*) FROM $table");
	all_found($node, $parent, "SELECT k FROM $table", $n, "$what, the partitioned guard $parent");
	return @leaves;
}

my $node = PostgreSQL::Test::Cluster->new('guard_paths');
$node->init(allows_streaming => 'logical');
$node->start;
one($node, 'CREATE EXTENSION bloomfilter');

# ------------------------------------------------------------------ 1. COPY ----
one($node, q{
	CREATE TABLE cp (id serial, k text NOT NULL);
	CREATE INDEX cp_g ON cp USING bloomguard (k);
});
my $copy_data = join('', map { "copy$_\n" } 1 .. 5000);
one($node, "COPY cp (k) FROM STDIN;\n$copy_data\\.\n");
is(one($node, 'SELECT count(*) FROM cp'), '5000', 'COPY: 5000 rows');
all_found($node, 'cp_g', 'SELECT k FROM cp', 5000, 'COPY FROM STDIN');
mostly_false($node, 'cp_g', "SELECT 'nocopy' || i FROM generate_series(1, 10000) i", 10000, 'COPY FROM STDIN');

# ------------------------------------------------------------------ 2. rule ----
one($node, q{
	CREATE TABLE rsrc (k int4);
	CREATE TABLE rdst (k int4 NOT NULL);
	CREATE INDEX rdst_g ON rdst USING bloomguard (k);
	CREATE RULE r AS ON INSERT TO rsrc DO ALSO INSERT INTO rdst VALUES (NEW.k);
});
is(one($node, q{SELECT bloom_guard_contains('rdst_g', 424242)}), 'f', 'rule: the key answers false before');
is(one($node, q{
	BEGIN;
	INSERT INTO rsrc VALUES (424242);
	SELECT bloom_guard_contains('rdst_g', 424242);
	COMMIT;}), 't', 'rule: the key the rule wrote answers true in the same transaction');
one($node, 'INSERT INTO rsrc SELECT generate_series(1, 5000)');
all_found($node, 'rdst_g', 'SELECT k FROM rdst', 5001, 'rule action');

# ------------------------------------------- 3. triggers off: two ways ----
one($node, q{
	CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'trigger fired'; END $$;
	CREATE TABLE srr (k int8 NOT NULL);
	CREATE INDEX srr_g ON srr USING bloomguard (k);
	CREATE TRIGGER boom BEFORE INSERT ON srr FOR EACH ROW EXECUTE FUNCTION boom();
	CREATE TABLE dta (k int8 NOT NULL);
	CREATE INDEX dta_g ON dta USING bloomguard (k);
	CREATE TRIGGER boom BEFORE INSERT ON dta FOR EACH ROW EXECUTE FUNCTION boom();
});
isnt(sqlstate_of($node, 'postgres', 'INSERT INTO srr VALUES (1)'), 'OK', 'the trigger does fire normally');
one($node, q{
	SET session_replication_role = replica;
	INSERT INTO srr SELECT generate_series(1, 5000);
});
all_found($node, 'srr_g', 'SELECT k FROM srr', 5000, 'session_replication_role = replica');
one($node, q{
	ALTER TABLE dta DISABLE TRIGGER ALL;
	INSERT INTO dta SELECT generate_series(1, 5000);
	ALTER TABLE dta ENABLE TRIGGER ALL;
});
all_found($node, 'dta_g', 'SELECT k FROM dta', 5000, 'DISABLE TRIGGER ALL');
mostly_false($node, 'dta_g', 'SELECT generate_series(100001, 110000)::int8', 10000, 'DISABLE TRIGGER ALL');

# --------------------------------------------------- 4. UPDATE of the key ----
one($node, q{
	CREATE TABLE upd (id int PRIMARY KEY, k text NOT NULL, pad int);
	CREATE INDEX upd_g ON upd USING bloomguard (k);
	INSERT INTO upd SELECT i, 'before' || i, 0 FROM generate_series(1, 5000) i;
});
is(one($node, q{
	BEGIN;
	UPDATE upd SET k = 'after' || id WHERE id <= 2500;
	SELECT pg_stat_get_xact_tuples_updated('upd'::regclass) || ',' || pg_stat_get_xact_tuples_hot_updated('upd'::regclass);
	COMMIT;}), '2500,0', 'UPDATE of the key: 2500 rows updated, none HOT');
one($node, 'UPDATE upd SET pad = 1 WHERE id > 4000');
all_found($node, 'upd_g', 'SELECT k FROM upd', 5000, 'UPDATE of the key');
is(one($node, q{SELECT count(*) FROM upd WHERE k LIKE 'after%'}), '2500', 'UPDATE of the key: 2500 new keys among them');

# ------------------------------------------------ generated column ----
one($node, q{
	CREATE TABLE gen (a int NOT NULL, k text GENERATED ALWAYS AS ('gen-' || a) STORED);
	CREATE INDEX gen_g ON gen USING bloomguard (k);
	INSERT INTO gen (a) SELECT generate_series(1, 5000);
	UPDATE gen SET a = a + 100000 WHERE a <= 1000;
});
all_found($node, 'gen_g', 'SELECT k FROM gen', 5000, 'STORED generated column');
is(one($node, q{SELECT bloom_guard_contains('gen_g', 'gen-100001'::text)}), 't',
	'generated column: the key computed by the UPDATE answers true');
mostly_false($node, 'gen_g', "SELECT 'gen-' || generate_series(200001, 210000)", 10000, 'generated column');

# ------------------------------------------------------------ ON CONFLICT ----
one($node, q{
	CREATE TABLE ups (id int PRIMARY KEY, k text NOT NULL);
	CREATE INDEX ups_g ON ups USING bloomguard (k);
	INSERT INTO ups SELECT i, 'v1-' || i FROM generate_series(1, 3000) i;
	INSERT INTO ups SELECT i, 'v2-' || i FROM generate_series(2001, 5000) i
		ON CONFLICT (id) DO UPDATE SET k = EXCLUDED.k;
	INSERT INTO ups SELECT i, 'v3-' || i FROM generate_series(4001, 6000) i
		ON CONFLICT DO NOTHING;
});
is(one($node, q{SELECT string_agg(n::text, ',' ORDER BY p) FROM
	(SELECT left(k, 2) p, count(*) n FROM ups GROUP BY 1) s}), '2000,3000,1000',
	'ON CONFLICT: 2000 v1, 3000 v2 (1000 of them by DO UPDATE), 1000 v3');
all_found($node, 'ups_g', 'SELECT k FROM ups', 6000, 'INSERT ... ON CONFLICT');

# ------------------------------------------------------------------ MERGE ----
one($node, q{
	CREATE TABLE mg (id int PRIMARY KEY, k text NOT NULL);
	CREATE INDEX mg_g ON mg USING bloomguard (k);
	INSERT INTO mg SELECT i, 'm0-' || i FROM generate_series(1, 2000) i;
	MERGE INTO mg USING (SELECT g FROM generate_series(1001, 4000) g) s ON mg.id = s.g
		WHEN MATCHED AND s.g <= 1500 THEN UPDATE SET k = 'mu-' || s.g
		WHEN MATCHED THEN DELETE
		WHEN NOT MATCHED THEN INSERT VALUES (s.g, 'mi-' || s.g);
});
is(one($node, q{SELECT string_agg(n::text, ',' ORDER BY p) FROM
	(SELECT left(k, 3) p, count(*) n FROM mg GROUP BY 1) s}), '1000,2000,500',
	'MERGE: 1000 untouched, 2000 inserted, 500 updated');
all_found($node, 'mg_g', 'SELECT k FROM mg', 3500, 'MERGE');

# ------------------------------------------------------ 5. partitions ----
one($node, q{
	CREATE TABLE pt (r int NOT NULL, k int8 NOT NULL) PARTITION BY RANGE (r);
	CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (1000);
	CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (1000) TO (2000);
	CREATE INDEX pt_g ON pt USING bloomguard (k);
	INSERT INTO pt SELECT i % 2000, i FROM generate_series(1, 20000) i;
});
is(one($node, q{SELECT count(*) FROM pt1}) . ',' . one($node, q{SELECT count(*) FROM pt2}), '10000,10000',
	'partition routing: 10000 rows in each partition');
my @leaves = partitions_found($node, 'pt_g', 'pt', 2, 'partition routing');
# each leaf's guard has its own partition's keys, not the other's
if (@leaves == 2)
{
	mostly_false($node, $leaves[0][0], "SELECT k FROM $leaves[1][1]", 10000,
		"partition routing: $leaves[0][0] for the keys of $leaves[1][1]");
}
mostly_false($node, 'pt_g', 'SELECT generate_series(100001, 110000)::int8', 10000, 'the partitioned guard');

# rows moved between partitions by an UPDATE (a delete and an insert)
one($node, 'UPDATE pt SET r = r + 1000, k = k + 1000000 WHERE r < 100');
is(one($node, q{SELECT count(*) FROM pt2 WHERE k > 1000000}), '1000', 'UPDATE moved 1000 rows to pt2');
partitions_found($node, 'pt_g', 'pt', 2, 'rows moved between partitions');

# COPY routed into the partitions
my $pcopy = join('', map { ($_ % 2000) . "\t" . (200000 + $_) . "\n" } 1 .. 4000);
one($node, "COPY pt FROM STDIN;\n$pcopy\\.\n");
is(one($node, 'SELECT count(*) FROM pt WHERE k BETWEEN 200001 AND 204000'), '4000', 'COPY into the partitioned table: 4000 rows');
partitions_found($node, 'pt_g', 'pt', 2, 'COPY routed into partitions');

# ATTACH of a table with rows: PostgreSQL builds its guard
one($node, q{
	CREATE TABLE pt3 (r int NOT NULL, k int8 NOT NULL);
	INSERT INTO pt3 SELECT 2000 + i % 1000, 300000 + i FROM generate_series(1, 5000) i;
	ALTER TABLE pt ATTACH PARTITION pt3 FOR VALUES FROM (2000) TO (3000);
});
is(one($node, q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'pt3'::regclass AND a.amname = 'bloomguard'}), '1',
	'ATTACH: pt3 got a bloomguard index');
partitions_found($node, 'pt_g', 'pt', 3, 'ATTACH of a table with rows');

# ATTACH of a table with a guard of its own: that guard is attached
one($node, q{
	CREATE TABLE pt4 (r int NOT NULL, k int8 NOT NULL);
	INSERT INTO pt4 SELECT 3000 + i % 1000, 400000 + i FROM generate_series(1, 5000) i;
	CREATE INDEX pt4_own_g ON pt4 USING bloomguard (k);
});
my $own = one($node, q{SELECT 'pt4_own_g'::regclass::oid});
one($node, 'ALTER TABLE pt ATTACH PARTITION pt4 FOR VALUES FROM (3000) TO (4000)');
is(one($node, q{SELECT count(*) FROM pg_partition_tree('pt_g') WHERE relid = 'pt4_own_g'::regclass}), '1',
	'ATTACH: pt4\'s own guard is attached to the partitioned guard');
is(one($node, q{SELECT 'pt4_own_g'::regclass::oid || ',' || count(*) FROM pg_index WHERE indrelid = 'pt4'::regclass}),
	"$own,1", 'ATTACH: no second guard was built on pt4');
one($node, q{INSERT INTO pt SELECT i % 4000, 500000 + i FROM generate_series(1, 8000) i});
partitions_found($node, 'pt_g', 'pt', 4, 'after two ATTACHes and routed inserts');

# A partitioned guard that is not valid: made ON ONLY the parent (no leaf
# guard yet), then with one partition's guard attached and the other's not.
# PostgreSQL would not rely on such an index; a check must not answer false
# for a key of the table (an error, or "maybe").
one($node, q{
	CREATE TABLE pv (k int4 NOT NULL) PARTITION BY RANGE (k);
	CREATE TABLE pv1 PARTITION OF pv FOR VALUES FROM (0) TO (1000);
	CREATE TABLE pv2 PARTITION OF pv FOR VALUES FROM (1000) TO (2000);
	INSERT INTO pv SELECT generate_series(0, 1999);
	CREATE INDEX pv_g ON ONLY pv USING bloomguard (k);
});
sub invalid_guard_ok
{
	my ($what) = @_;
	my ($st, $err, $out) = sqlstate($node, 'postgres',
		"SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('pv_g', k)) FROM pv");
	is(one($node, q{SELECT indisvalid::text FROM pg_index WHERE indexrelid = 'pv_g'::regclass}), 'false',
		"$what: the partitioned guard is not valid");
	ok($st ne 'OK' || $out eq '0', "$what: no key of the table answers false (got $st, '$out' keys answering false)");
}
invalid_guard_ok('CREATE INDEX ON ONLY');
one($node, q{
	CREATE INDEX pv1_g ON pv1 USING bloomguard (k);
	ALTER INDEX pv_g ATTACH PARTITION pv1_g;
});
invalid_guard_ok('one of two partitions\' guards attached');
one($node, q{
	CREATE INDEX pv2_g ON pv2 USING bloomguard (k);
	ALTER INDEX pv_g ATTACH PARTITION pv2_g;
});
is(one($node, q{SELECT indisvalid::text FROM pg_index WHERE indexrelid = 'pv_g'::regclass}), 'true',
	'both partitions\' guards attached: the partitioned guard is valid');
all_found($node, 'pv_g', 'SELECT k FROM pv', 2000, 'a partitioned guard made valid by ATTACH');

# A partition that is a foreign table: a partitioned index skips it (no
# index on a foreign table) and is valid nonetheless.  The foreign
# partition's rows are rows of the table: they must not answer false.
my $has_fdw = one($node, q{SELECT count(*) FROM pg_available_extensions WHERE name = 'file_fdw'});
SKIP:
{
	skip 'file_fdw is not available', 3 unless $has_fdw;
	my $csv = PostgreSQL::Test::Utils::tempdir . '/pf2.csv';
	PostgreSQL::Test::Utils::append_to_file($csv, join('', map { "$_\n" } 1000 .. 1999));
	one($node, qq{
		CREATE EXTENSION file_fdw;
		CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
		CREATE TABLE pf (k int4 NOT NULL) PARTITION BY RANGE (k);
		CREATE TABLE pf1 PARTITION OF pf FOR VALUES FROM (0) TO (1000);
		CREATE FOREIGN TABLE pf2 PARTITION OF pf FOR VALUES FROM (1000) TO (2000)
			SERVER files OPTIONS (filename '$csv', format 'csv');
		INSERT INTO pf SELECT generate_series(0, 999);
		CREATE INDEX pf_g ON pf USING bloomguard (k);
	});
	is(one($node, q{SELECT count(*) FILTER (WHERE k < 1000) || ',' || count(*) FILTER (WHERE k >= 1000) FROM pf}),
		'1000,1000', 'a foreign partition: 1000 rows in each partition');
	my ($st, $err, $out) = sqlstate($node, 'postgres',
		"SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('pf_g', k)) FROM pf");
	ok($st ne 'OK' || $out eq '0',
		"a partitioned guard with a foreign partition: no key of the table answers false (got $st, '$out' keys answering false)");
	all_found($node, 'pf_g', 'SELECT k FROM pf1', 1000, 'a partitioned guard with a foreign partition, pf1\'s keys');
}

# --------------------------------- rebuilds: VACUUM FULL, CLUSTER, REINDEX ----
for my $rebuild ('VACUUM FULL upd', 'CLUSTER upd USING upd_pkey', 'REINDEX TABLE upd')
{
	my $before = one($node, q{SELECT pg_relation_filenode('upd_g')});
	one($node, $rebuild);
	isnt(one($node, q{SELECT pg_relation_filenode('upd_g')}), $before, "$rebuild: the guard was rebuilt");
	all_found($node, 'upd_g', 'SELECT k FROM upd', 5000, $rebuild);
}
mostly_false($node, 'upd_g', "SELECT 'before' || generate_series(1, 2500)", 2500,
	'rebuilt: the keys updated away before the rebuild');

# ----------------------------------------------- 6. logical replication ----
one($node, q{
	CREATE TABLE lr (id int PRIMARY KEY, k text NOT NULL);
	INSERT INTO lr SELECT i, 'lr' || i FROM generate_series(1, 5000) i;
	CREATE PUBLICATION lr_pub FOR TABLE lr;
});
my $sub = PostgreSQL::Test::Cluster->new('guard_subscriber');
$sub->init;
$sub->start;
one($sub, q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE lr (id int PRIMARY KEY, k text NOT NULL);
	CREATE INDEX lr_g ON lr USING bloomguard (k);
});
one($sub, "CREATE SUBSCRIPTION lr_sub CONNECTION '" . $node->connstr() . " dbname=postgres' PUBLICATION lr_pub");
$sub->wait_for_subscription_sync($node, 'lr_sub');
all_found($sub, 'lr_g', 'SELECT k FROM lr', 5000, 'subscriber, initial copy');
one($node, q{
	INSERT INTO lr SELECT i, 'lr' || i FROM generate_series(5001, 10000) i;
	UPDATE lr SET k = 'lrupd' || id WHERE id % 10 = 0;
	DELETE FROM lr WHERE id % 100 = 1;
});
$node->wait_for_catchup('lr_sub');
is(one($sub, q{SELECT count(*) || ',' || count(*) FILTER (WHERE k LIKE 'lrupd%') FROM lr}), '9900,1000',
	'subscriber: the inserts, updates and deletes arrived');
all_found($sub, 'lr_g', 'SELECT k FROM lr', 9900, 'subscriber, streamed changes');
mostly_false($sub, 'lr_g', "SELECT 'nolr' || i FROM generate_series(1, 10000) i", 10000, 'subscriber');
is(one($node, q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'lr'::regclass AND a.amname = 'bloomguard'}), '0',
	'the publisher\'s table has no guard');
$sub->stop;

# ------------------------------------------------------ 7. SERIALIZABLE ----
one($node, q{
	CREATE TABLE ser (k int4 NOT NULL);
	CREATE INDEX ser_g ON ser USING bloomguard (k);
	INSERT INTO ser SELECT generate_series(1, 1000);
});
# Each of two transactions checks (or not), then both insert the key.
# Returns (rows of the key afterwards, stderr of a, stderr of b).
sub write_skew
{
	my ($key, $check) = @_;
	my ($a, $b) = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 2;
	for my $s ($a, $b)
	{
		$s->query_safe("\\set VERBOSITY verbose");
		$s->query_safe('BEGIN ISOLATION LEVEL SERIALIZABLE');
		is($s->query_safe("SELECT bloom_guard_contains('ser_g', $key)"), 'f',
			"SERIALIZABLE: $key answers false in each transaction") if $check;
		# (a snapshot either way)
		$s->query_safe('SELECT 1') unless $check;
	}
	$a->query("INSERT INTO ser VALUES ($key)");
	$b->query("INSERT INTO ser VALUES ($key)");
	$a->query('COMMIT');
	$b->query('COMMIT');
	my ($ea, $eb) = ($a->{stderr}, $b->{stderr});
	$a->quit;
	$b->quit;
	return (one($node, "SELECT count(*) FROM ser WHERE k = $key"), $ea, $eb);
}
my ($rows, $ea, $eb) = write_skew(777777, 1);
is($rows, '1', 'SERIALIZABLE: one of the two inserts of 777777 committed');
unlike($ea, qr/ERROR/, 'SERIALIZABLE: the first transaction committed') or diag($ea);
like($eb, qr/ERROR:\s+40001/, 'SERIALIZABLE: the second failed with 40001') or diag($eb);
($rows, $ea, $eb) = write_skew(888888, 0);
is($rows . ($ea =~ /ERROR/ ? ' a failed' : '') . ($eb =~ /ERROR/ ? ' b failed' : ''), '2',
	'SERIALIZABLE without the check: both inserts commit (the check is what conflicts)');

# ----------------------------------- 8. dump and restore by a non-superuser ----
one($node, 'CREATE ROLE guard_owner LOGIN CREATEDB');
my @as_owner = (extra_params => [ '-U', 'guard_owner' ]);
$node->safe_psql('postgres', 'CREATE DATABASE owned', @as_owner);
$node->safe_psql('owned', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE ot (id int PRIMARY KEY, k text NOT NULL);
	INSERT INTO ot SELECT i, 'owned' || i FROM generate_series(1, 10000) i;
	CREATE INDEX ot_g ON ot USING bloomguard (k) WITH (fpr = 0.001, capacity = 5000);
	INSERT INTO ot SELECT i, 'owned' || i FROM generate_series(10001, 20000) i;
}, @as_owner);
is($node->safe_psql('owned', q{SELECT rolsuper::text || ',' || (SELECT extowner::regrole::text FROM pg_extension WHERE extname = 'bloomfilter')
	FROM pg_roles WHERE rolname = current_user}, @as_owner), 'false,guard_owner',
	'the owner is no superuser and created the (trusted) extension');
all_found($node, 'ot_g', 'SELECT k FROM ot', 20000, 'the owner\'s guard',
	db => 'owned', params => \@as_owner);
my $opts = $node->safe_psql('owned', q{SELECT reloptions FROM pg_class WHERE oid = 'ot_g'::regclass});
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $dumped = PostgreSQL::Test::Utils::run_log(
	[ 'pg_dump', '-Fc', '-d', $node->connstr('owned') . ' user=guard_owner', '-f', "$tmp/owned.dump" ]);
ok($dumped, 'pg_dump -Fc by the owner (no extension configuration table: 1.1\'s is gone)');
SKIP:
{
	skip 'no dump to restore', 8 unless $dumped;
	$node->safe_psql('postgres', 'CREATE DATABASE owned_restored', @as_owner);
	# (not --exit-on-error: after an error the rest is restored, and checked)
	$node->command_ok([ 'pg_restore', '-d', $node->connstr('owned_restored') . ' user=guard_owner',
		"$tmp/owned.dump" ], 'pg_restore by the owner, without an error');
	is($node->safe_psql('owned_restored', 'SELECT count(*) FROM ot', @as_owner), '20000', 'restored: the rows');
	is($node->safe_psql('owned_restored', q{SELECT a.amname || ' ' || c.relowner::regrole::text
		FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'ot_g'::regclass}, @as_owner),
		'bloomguard guard_owner', 'restored: the guard is a bloomguard index owned by the owner');
	is($node->safe_psql('owned_restored', q{SELECT reloptions FROM pg_class WHERE oid = 'ot_g'::regclass}), $opts,
		"restored: the guard keeps its options ($opts)");
	is($node->safe_psql('owned_restored', q{SELECT target_fpr FROM bloom_guard_info('ot_g')}, @as_owner), '0.001',
		'restored: bloom_guard_info shows the target rate');
	all_found($node, 'ot_g', 'SELECT k FROM ot', 20000, 'the restored guard',
		db => 'owned_restored', params => \@as_owner);
	mostly_false($node, 'ot_g', "SELECT 'notowned' || i FROM generate_series(1, 10000) i", 10000,
		'the restored guard', db => 'owned_restored', params => \@as_owner);
}

$node->stop;
done_testing();
