# BloomBatch: a sequential scan's check of a large filter known before the
# scan (bf @> column, column <@ bf) runs in a node above the scan that reads
# a batch of rows and prefetches their filter lines first.
#
# 1. Where the node is planned and where not (EXPLAIN): constants, external
#    parameters, InitPlans, a joined row's filter (the nested loop passes it
#    in, inner and outer joins), both operators, text and bigint keys; not
#    for an expression key, a cursor, or with bloomfilter.batch_checks off.
# 2. The same rows with the node as without it, for: a large filter (the
#    batches prefetch) and a small one (rows pass through), NULL keys and a
#    NULL filter, projections (whole row, ctid, expressions), LIMIT, a
#    scrollable cursor read backward, rescans (joins and a LATERAL join over
#    per-row filters), a parallel scan (EXPLAIN ANALYZE too), UPDATE and DELETE,
#    PL/pgSQL variables, a stored filter kept out of the cache.
# 3. No false negative: every key added is found through the node.
# 4. An UPDATE through the node that waits for a row another session
#    updates, then rechecks it (EvalPlanQual), ends as it does without it.
# 5. Planned as a path: a gate on a guard index wraps it (and skips it, not
#    initialized, on "no"), a correlated filter is batched, the node
#    projects and its scan outputs only the columns read.
# Also: EXPLAIN ANALYZE's Rows Batched and Keys Prefetched where batching
# goes on and where it stops; no node for a whole-row reference.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use TapHelpers;

my $node = bf_node('main', qq{
max_connections = 20
jit = off
max_worker_processes = 8
max_parallel_workers_per_gather = 2
});

$node->safe_psql('postgres', q{
CREATE TABLE keys (id int PRIMARY KEY, k text NOT NULL, n bigint NOT NULL);
INSERT INTO keys SELECT i, 'key-' || i, i * 7 FROM generate_series(1, 200000) i;
-- candidates: every 20th a key, the rest absent; some NULL keys
CREATE TABLE cand (id int, k text, n bigint, note text);
INSERT INTO cand
SELECT g, CASE WHEN g % 997 = 0 THEN NULL WHEN g % 20 = 0 THEN 'key-' || (g / 20) ELSE 'nokey-' || g END,
       CASE WHEN g % 991 = 0 THEN NULL WHEN g % 20 = 0 THEN (g / 20) * 7 ELSE -g END,
       'note ' || g
FROM generate_series(1, 300000) g;
ANALYZE keys, cand;
CREATE TABLE filters (name text PRIMARY KEY, bf bloomfilter);
-- large (2.4 MB: batched) and small (1.2 kB: rows pass through)
INSERT INTO filters SELECT 'big', bloom_agg(k, 2000000, 0.01) FROM keys;
INSERT INTO filters SELECT 'bign', bloom_agg(n, 2000000, 0.01) FROM keys;
INSERT INTO filters SELECT 'small', bloom_agg(k, 1000, 0.01) FROM keys WHERE id <= 1000;
INSERT INTO filters VALUES ('null', NULL);
INSERT INTO filters SELECT 'counting', bloom_agg(k, 200000, 0.01, 'counting') FROM keys;
CREATE TABLE cand20 AS SELECT * FROM cand WHERE id <= 20;
CREATE TABLE cand40 AS SELECT * FROM cand WHERE id <= 40;
-- per-part filters for the LATERAL join
CREATE TABLE parts (part int PRIMARY KEY, bf bloomfilter);
INSERT INTO parts SELECT id % 4, bloom_agg(k, 1000000, 0.01) FROM keys GROUP BY 1;
ANALYZE filters, parts;
CREATE FUNCTION count_with_variable() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	f bloomfilter;
	n bigint;
BEGIN
	SELECT bf INTO f FROM filters WHERE name = 'big';
	SELECT count(*) INTO n FROM cand WHERE f @> k;
	RETURN n;
END $$;
});

sub rows
{
	my ($sql, $batch) = @_;
	return $node->safe_psql('postgres',
		"SET bloomfilter.batch_checks = $batch; SET max_parallel_workers_per_gather = 0; $sql");
}

# 1. Plans
my $big = q{(SELECT bf FROM filters WHERE name = 'big')};
my %planned = (
	'InitPlan filter, @>' => "SELECT count(*) FROM cand WHERE $big @> k",
	'InitPlan filter, <@' => "SELECT count(*) FROM cand WHERE k <@ $big",
	'bigint key' => q{SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = 'bign') @> n},
	'other quals first' => "SELECT id FROM cand WHERE id > 10 AND note LIKE 'note%' AND $big @> k",
	'a filter from a joined row' => q{SELECT count(*) FROM cand c, filters f WHERE f.name = 'big' AND f.bf @> c.k},
	'a filter from a joined row, outer join' => q{SELECT count(c.id) FROM filters f LEFT JOIN cand c ON f.bf @> c.k WHERE f.name = 'big'},
);
# a constant needs the filter's text; built from the small one
my $small_text = $node->safe_psql('postgres', q{SELECT bf::text FROM filters WHERE name = 'small'});
$planned{'a constant filter'} = "SELECT count(*) FROM cand WHERE '$small_text'::bloomfilter @> k";
for my $name (sort keys %planned)
{
	like(rows("EXPLAIN (COSTS OFF) $planned{$name}", 'on'), qr/Custom Scan \(BloomBatch\)\n\s+Filter: [^\n]*(\@>|<\@)[^\n]*\n(.*\n)*\s+->  Seq Scan on cand/,
		"planned: $name");
	unlike(rows("EXPLAIN (COSTS OFF) $planned{$name}", 'off'), qr/BloomBatch/, "batch_checks off: $name");
}
like(rows(q{PREPARE p(bloomfilter) AS SELECT count(*) FROM cand WHERE $1 @> k;
	SET plan_cache_mode = force_generic_plan; EXPLAIN (COSTS OFF) EXECUTE p(NULL)}, 'on'),
	qr/BloomBatch.*\n.*Filter: \(\$1 \@> \(k\)::bloom_literal\)/, 'planned: a generic plan\'s parameter');
my %not_planned = (
	'an expression key' => "SELECT count(*) FROM cand WHERE $big @> lower(k)",
	'a cursor' => "DECLARE c CURSOR FOR SELECT id FROM cand WHERE $big @> k",
);
for my $name (sort keys %not_planned)
{
	unlike(rows("EXPLAIN (COSTS OFF) $not_planned{$name}", 'on'), qr/BloomBatch/, "not planned: $name");
}

# 2. The same rows, batched or not
my %same = (
	'large filter, count' => "SELECT count(*), sum(id) FROM cand WHERE $big @> k",
	'large filter, <@' => "SELECT count(*), sum(id) FROM cand WHERE k <@ $big",
	'large filter, bigint' => q{SELECT count(*), sum(id) FROM cand WHERE (SELECT bf FROM filters WHERE name = 'bign') @> n},
	'small filter' => q{SELECT count(*), sum(id) FROM cand WHERE (SELECT bf FROM filters WHERE name = 'small') @> k},
	'NULL filter' => q{SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = 'null') @> k},
	'whole rows and ctid' => "SELECT c, c.ctid, length(c.note) * 2 FROM cand c WHERE id % 50 = 0 AND $big @> k ORDER BY id",
	'LIMIT' => "SELECT id, k FROM cand WHERE $big @> k LIMIT 3",
	'a joined filter' => q{SELECT count(*), sum(c.id) FROM filters f JOIN cand c ON f.bf @> c.k WHERE f.name = 'big'},
	'joined filters, a rescan each' => q{SELECT f.name, count(c.id), sum(c.id) FROM filters f JOIN cand c ON f.bf @> c.k
		WHERE f.name IN ('big', 'small', 'null', 'counting') GROUP BY 1 ORDER BY 1},
	'a joined filter, outer join' => q{SELECT f.name, count(c.id), sum(c.id) FROM filters f LEFT JOIN cand c ON f.bf @> c.k AND c.id % 3 = 0
		WHERE f.name IN ('big', 'null') GROUP BY 1 ORDER BY 1},
	'joined filters, EXISTS and NOT EXISTS' => q{SELECT count(*), sum(id) FROM cand c WHERE EXISTS (SELECT 1 FROM filters f WHERE f.bf @> c.k AND f.name IN ('big', 'small'));
		SELECT count(*), sum(id) FROM cand c WHERE NOT EXISTS (SELECT 1 FROM filters f WHERE f.bf @> c.k AND f.name IN ('big', 'small'))},
	'two joined filters' => q{SELECT count(*), sum(c.id) FROM filters f JOIN cand c ON c.k <@ f.bf JOIN filters g ON g.bf @> c.k WHERE f.name = 'big' AND g.name = 'small'},
	'a joined filter, the key side outer' => q{SELECT count(*), count(f.name) FROM cand c LEFT JOIN filters f ON f.bf @> c.k AND f.name = 'big' WHERE c.id % 7 = 0},
	'LATERAL rescans' => q{SELECT p.part, (SELECT count(*) FROM cand c WHERE p.bf @> c.k AND c.id % 4 = p.part) FROM parts p ORDER BY 1},
	'a cursor read backward' => "BEGIN; DECLARE c SCROLL CURSOR FOR SELECT id FROM cand WHERE $big @> k;
		FETCH FORWARD 5 FROM c; FETCH BACKWARD 3 FROM c; FETCH LAST FROM c; FETCH BACKWARD 2 FROM c; COMMIT",
	'PL/pgSQL variable' => q{SELECT count_with_variable()},
	'under 32 rows, a constant small filter' => "SELECT count(*), count(DISTINCT id) FROM cand20 WHERE '$small_text'::bloomfilter @> k",
	'40 rows, a small filter from an InitPlan' => q{SELECT count(*), count(DISTINCT id) FROM cand40 WHERE (SELECT bf FROM filters WHERE name = 'small') @> k},
	'40 rows, a counting filter' => q{SELECT count(*), count(DISTINCT id) FROM cand40 WHERE (SELECT bf FROM filters WHERE name = 'counting') @> k},
	'stored filter out of the cache' => "SET bloomfilter.cache_size = 0; SELECT count(*), sum(id) FROM cand WHERE $big @> k",
);
for my $name (sort keys %same)
{
	my $on = rows($same{$name}, 'on');
	is($on, rows($same{$name}, 'off'), "same rows: $name");
	isnt($on, '', "$name: rows");
}

# what the scan's conditions and output run on: only the rows the node
# reaches and passes, as without it (output expressions, other conditions
# past a LIMIT, volatile functions, row-level security)
$node->safe_psql('postgres', q{
CREATE SEQUENCE s;
CREATE FUNCTION chk(int) RETURNS bool IMMUTABLE STRICT LANGUAGE plpgsql COST 0.1
	AS $$BEGIN IF $1 = 30 THEN RAISE EXCEPTION 'row 30 read'; END IF; RETURN true; END$$;
CREATE FUNCTION leak(text) RETURNS text LANGUAGE plpgsql COST 0.1
	AS $$BEGIN RAISE NOTICE 'saw %', $1; RETURN $1; END$$;
CREATE TABLE secrets AS SELECT id, k, 'secret-' || id AS secret FROM cand WHERE id <= 100;
ALTER TABLE secrets ENABLE ROW LEVEL SECURITY;
CREATE ROLE alice;
CREATE POLICY p ON secrets FOR SELECT TO alice
	USING ((SELECT bf FROM filters WHERE name = 'big') @> k);
GRANT SELECT ON secrets, filters TO alice;
CREATE TABLE pts AS SELECT g AS id, NULL::point AS p FROM generate_series(1, 100) g;
CREATE TABLE c2 AS SELECT * FROM cand WHERE id <= 1000;
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE nd (id int, k text COLLATE ci);
INSERT INTO nd SELECT g, 'key-' || g FROM generate_series(1, 100) g;
});
my %cmp;
for my $batch ('on', 'off')
{
	my %r;
	$r{'output expressions'} = rows("SELECT 1 / (id - 1) FROM cand WHERE $big @> k ORDER BY 1 LIMIT 3", $batch);
	$r{'conditions past a LIMIT'} = rows("SELECT id FROM cand WHERE chk(id) AND $big @> k LIMIT 1", $batch);
	my $before = rows('SELECT nextval(\'s\')', $batch);
	my $n = rows("SELECT count(*) FROM (SELECT nextval('s') FROM cand WHERE $big @> k) x", $batch);
	$r{'volatile output'} = (rows('SELECT nextval(\'s\')', $batch) - $before - 1) . " for $n rows";
	$r{'keys all NULL, a type with no key kind'} = rows(
		"SELECT count(*) FROM cand WHERE $big @> k; SELECT count(*) FROM pts WHERE $big @> p", $batch);
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET bloomfilter.batch_checks = $batch; SET max_parallel_workers_per_gather = 0;
		 SET ROLE alice; SELECT leak(secret) FROM secrets");
	my $seen = () = $err =~ /saw secret/g;
	my $nrows = () = $out =~ /^secret-/mg;
	$r{'row-level security'} = "$nrows rows, $seen seen";
	($rc, $out, $err) = $node->psql('postgres',
		"SET bloomfilter.batch_checks = $batch; BEGIN;
		 DECLARE c CURSOR FOR SELECT id, k FROM c2 WHERE $big @> k;
		 FETCH 2 FROM c; FETCH BACKWARD 1 FROM c;
		 UPDATE c2 SET note = 'current' WHERE CURRENT OF c RETURNING id; ROLLBACK");
	$r{'a cursor: backward, WHERE CURRENT OF'} = "$out$err";
	($rc, $out, $err) = $node->psql('postgres',
		"SET bloomfilter.batch_checks = $batch; SET max_parallel_workers_per_gather = 0;
		 SELECT id FROM cand WHERE id < 0 AND (SELECT bf FROM filters) @> k");
	$r{'an InitPlan no row needs'} = "$rc $out$err";
	($rc, $out, $err) = $node->psql('postgres',
		"SET bloomfilter.batch_checks = $batch; SET max_parallel_workers_per_gather = 0;
		 SELECT count(*) FROM cand WHERE false AND (SELECT bf FROM filters) @> k;
		 SELECT count(*) FROM cand20 WHERE id < 0 AND (SELECT bf FROM filters) @> k;
		 CREATE TEMP TABLE nocand (LIKE cand); SELECT count(*) FROM nocand WHERE (SELECT bf FROM filters) @> k;
		 SELECT count(*) FROM cand WHERE (SELECT bf FROM filters) @> k");
	$err =~ s/^psql:[^\n]*?ERROR/ERROR/mg;
	$r{'an InitPlan that fails: run for the first row only'} = "$rc $out$err";
	($rc, $out, $err) = $node->psql('postgres',
		"SET bloomfilter.batch_checks = $batch; SELECT count(*) FROM cand WHERE $big @> k;
		 SELECT count(*) FROM nd WHERE id < 0 AND $big @> k; SELECT count(*) FROM nd WHERE $big @> k");
	$err =~ s/^psql:[^\n]*?ERROR/ERROR/mg;
	$r{'a nondeterministic collation'} = "$out$err";
	for my $name (sort keys %r)
	{
		$cmp{$name}{$batch} = $r{$name};
	}
}
like(rows("SET ROLE alice; EXPLAIN (VERBOSE, COSTS OFF) SELECT leak(secret) FROM secrets", 'on'),
	qr/BloomBatch\)\n\s+Output: leak\(secrets.secret\)\n(.*\n)*\s+->  Seq Scan on public.secrets\n\s+Output: [^\n]*\n\s+->  Seq Scan on public.secrets\n\s+Output: [^\n]*\n\s+Filter: [^\n]*\n?$/,
	'row-level security: the node evaluates the output, not the scan');
like(rows("EXPLAIN (VERBOSE, COSTS OFF) SELECT nextval('s') FROM cand WHERE $big @> k", 'on'),
	qr/BloomBatch\)\n\s+Output: nextval/, 'volatile output: evaluated by the node');
for my $name (sort keys %cmp)
{
	is($cmp{$name}{on}, $cmp{$name}{off}, "same result: $name") or diag("off: $cmp{$name}{off}");
}
like($cmp{'row-level security'}{on}, qr/^(\d+) rows, \1 seen$/, 'row-level security: only visible rows seen');
like($cmp{'an InitPlan no row needs'}{on}, qr/^0 $/, 'an InitPlan no row needs: not run (it would fail)');
like($cmp{'an InitPlan that fails: run for the first row only'}{on}, qr/^\d+ 0\n0\n0ERROR:  more than one row returned by a subquery/,
	'an InitPlan that fails: not run for an empty table, run for the first row');
like($cmp{'a nondeterministic collation'}{on}, qr/nondeterministic collation/, 'a nondeterministic collation: the check\'s error');
like($cmp{'volatile output'}{on}, qr/^(\d+) for \1 rows$/, 'volatile output: run for the rows returned only');
like($cmp{'a cursor: backward, WHERE CURRENT OF'}{on}, qr/^\d+$/m, 'a cursor: WHERE CURRENT OF updated a row');

# EXPLAIN ANALYZE's Rows Batched and Keys Prefetched (ranges: low, high).
# A large filter: every row batched, every non-NULL key prefetched but those
# checked while the filter is read in slices (about 200 checks for 2.4 MB;
# a pause of 1024 rows at most if they took 8 batches).  A NULL filter, or
# one under 2 MB (small, counting): none, the plain scan's rows (the check
# being the first condition, the InitPlan is run to see the filter once the
# reader has returned a row); an empty one of 2.4 MB given as a parameter:
# one batch.  Nothing to prefetch (keys all NULL, an InitPlan no
# row needs, an empty stored filter, whose checks never read it whole): 8
# batches, then pauses of 1024, 2048, ... 65536 rows with 8 batches between
# (2560 rows batched of 300000).  Keys that come after 2000 NULL ones:
# prefetched once a batch after a pause finds them (from row 3585).  Keys
# between two runs of NULL ones (the first 7 batches of them checked while
# the filter is read in slices): the pause after them starts again at 1024.
# Rescans: each chooses its child again (a small filter's scan is the plain
# one, a large one's batched), one batched scan of fewer than 128 rows is
# short (later loops take the plain scan), and a rescan in a pause starts
# over.
sub batched
{
	my ($sql) = @_;
	my $out = rows("$sql", 'on');
	return $out =~ /Rows Batched: (\d+)\n\s+Keys Prefetched: (\d+)/ ? ($1, $2) : (-1, -1);
}
my $ea = 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)';
$node->safe_psql('postgres', q{
CREATE TABLE nullkeys AS SELECT g AS id, NULL::text AS k FROM generate_series(1, 1000) g;
CREATE TABLE latekeys AS SELECT g AS id, CASE WHEN g > 2000 THEN 'key-' || g END AS k FROM generate_series(1, 20000) g;
CREATE TABLE midkeys AS SELECT g AS id, CASE WHEN g BETWEEN 1281 AND 1600 THEN 'key-' || g END AS k FROM generate_series(1, 6000) g;
CREATE TABLE k100 AS SELECT g AS id, 'key-' || g AS k FROM generate_series(1, 100) g;
CREATE TABLE k1000 AS SELECT g AS id, 'key-' || g AS k FROM generate_series(1, 1000) g;
CREATE TABLE k2000 AS SELECT g AS id, 'key-' || g AS k FROM generate_series(1, 2000) g;
INSERT INTO filters SELECT 'empty', bloom_empty(2000000, 0.01);
});
my $nonnull = rows('SELECT count(k) FROM cand', 'on');
my $from = sub { "$ea SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = '$_[0]') \@> k" };
my %batched = (
	'a large filter' => [ "$ea SELECT count(*) FROM cand WHERE $big @> k", 300000 - 1056, 300000, $nonnull - 1056 - 256, $nonnull ],
	'a large filter out of the cache' =>
		[ "SET bloomfilter.cache_size = 0; $ea SELECT count(*) FROM cand WHERE $big @> k", 300000 - 1056, 300000, $nonnull - 1056 - 256, $nonnull ],
	'a small filter' => [ $from->('small'), 0, 0, 0, 0 ],
	'a NULL filter' => [ $from->('null'), 0, 0, 0, 0 ],
	'a counting filter' => [ $from->('counting'), 0, 0, 0, 0 ],
	'an empty filter, a parameter' => [ "PREPARE pe(bloomfilter) AS SELECT count(*) FROM cand WHERE \$1 @> k;
		$ea EXECUTE pe(bloom_empty(2000000, 0.01))", 32, 32, 0, 0 ],
	'an empty stored filter' => [ $from->('empty'), 2560, 2560, 0, 0 ],
	'keys all NULL' => [ "$ea SELECT count(*) FROM nullkeys WHERE $big @> k", 256, 256, 0, 0 ],
	'an InitPlan no row needs' => [ "$ea SELECT count(*) FROM cand WHERE id < 0 AND $big @> k", 2560, 2560, 0, 0 ],
	'keys after 2000 NULL ones' => [ "$ea SELECT count(*) FROM latekeys WHERE $big @> k", 16928, 16928, 16416, 16416 ],
	'keys between NULL ones' => [ "$ea SELECT count(*) FROM midkeys WHERE $big @> k", 1344, 1344, 96, 96 ],
	'rescans: a small filter (the plain scan of 1000 rows), then a large one' =>
		[ "$ea SELECT f.name, (SELECT count(*) FROM k1000 c WHERE f.bf @> c.k) FROM (SELECT * FROM filters WHERE name IN ('small', 'big') ORDER BY name DESC) f",
		  1000, 1000, 700, 1000 ],
	'rescans: a short scan (100 rows) of a large filter, then the plain scan' =>
		[ "$ea SELECT f.name, (SELECT count(*) FROM k100 c WHERE f.bf @> c.k) FROM (SELECT * FROM filters WHERE name = 'big' UNION ALL SELECT * FROM filters WHERE name = 'big') f",
		  100, 100, 0, 100 ],
	'rescans: a rescan in a pause starts over' =>
		[ "$ea SELECT f.name, (SELECT count(*) FROM k2000 c WHERE f.bf @> c.k) FROM (SELECT * FROM filters WHERE name IN ('empty', 'big') ORDER BY name DESC) f",
		  2512, 2512, 1700, 2000 ],
);
for my $name (sort keys %batched)
{
	my ($sql, $rlo, $rhi, $klo, $khi) = @{ $batched{$name} };
	my ($rb, $kp) = batched($sql);
	ok($rb >= $rlo && $rb <= $rhi, "rows batched: $name ($rb, expected $rlo to $rhi)");
	ok($kp >= $klo && $kp <= $khi, "keys prefetched: $name ($kp, expected $klo to $khi)");
}
# the same rows across pauses
for my $sql ("SELECT count(*), sum(id) FROM latekeys WHERE $big @> k",
	q{SELECT count(*), sum(id) FROM cand WHERE (SELECT bf FROM filters WHERE name = 'empty') @> k},
	"SELECT count(*), sum(id) FROM latekeys l WHERE $big @> k AND id % 7 <> 0")
{
	my $on = rows($sql, 'on');
	is($on, rows($sql, 'off'), "same rows across pauses: $sql");
}

# a whole-row reference plans no node: the scan would form every row it
# reads ahead, its out-of-line values read
for my $sql ("SELECT c FROM cand c WHERE $big @> k", "SELECT row_to_json(c) FROM cand c WHERE $big @> k",
	"SELECT count(*) FROM cand c WHERE $big @> k AND c IS NOT NULL")
{
	unlike(rows("EXPLAIN (COSTS OFF) $sql", 'on'), qr/BloomBatch/, "not planned: a whole row ($sql)");
}

# memory: a scan's per-query memory does not grow with its rows (read
# through a PL/pgSQL cursor after 200 and after every row it returns)
$node->safe_psql('postgres', q{
CREATE FUNCTION scan_memory(OUT early bigint, OUT late bigint, OUT n int) LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	n := 0;
	FOR r IN SELECT id FROM cand WHERE (SELECT bf FROM filters WHERE name = 'big') @> k LOOP
		n := n + 1;
		IF n = 200 THEN
			SELECT sum(total_bytes) INTO early FROM pg_backend_memory_contexts;
		END IF;
	END LOOP;
	SELECT sum(total_bytes) INTO late FROM pg_backend_memory_contexts;
END $$;
});
my ($early, $late, $nrows) = split /\|/, rows('SELECT * FROM scan_memory()', 'on');
cmp_ok($nrows, '>', 10000, 'memory: the cursor read the matching rows');
cmp_ok($late - $early, '<', 512 * 1024, "memory: no growth with the rows (early $early, late $late)");

# parallel: a Parallel Seq Scan below the node, in the workers
my $par = "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
	SET max_parallel_workers_per_gather = 2;";
my $par_plan = $node->safe_psql('postgres', "$par EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT count(*) FROM cand WHERE $big @> k");
like($par_plan, qr/Gather.*\n(.*\n)*.*BloomBatch.*\n(.*\n)*.*Parallel Seq Scan on cand/, 'parallel: the node above a Parallel Seq Scan');
like($par_plan, qr/Workers Launched: [12]/, 'parallel: workers ran');
is($node->safe_psql('postgres', "$par SELECT count(*), sum(id) FROM cand WHERE $big @> k"),
	rows("SELECT count(*), sum(id) FROM cand WHERE $big @> k", 'off'), 'parallel: the same rows');
# every process chooses the same child: a small filter's plain scan, and a
# PL/pgSQL variable's filter (expanded in the leader, flat in the workers)
# of either size
my $small = q{(SELECT bf FROM filters WHERE name = 'small')};
like($node->safe_psql('postgres', "$par EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT count(*) FROM cand WHERE $small @> k"),
	qr/BloomBatch.*\n(.*\n)*\s+->  Parallel Seq Scan on cand \(never executed\)\n\s+->  Parallel Seq Scan on cand \(actual rows=[\d.]+ loops=\d\)\n\s+Filter/,
	'parallel, a small filter: the plain scan in every process');
is($node->safe_psql('postgres', "$par SELECT count(*), sum(id) FROM cand WHERE $small @> k"),
	rows("SELECT count(*), sum(id) FROM cand WHERE $small @> k", 'off'), 'parallel, a small filter: the same rows');
$node->safe_psql('postgres', q{
CREATE FUNCTION count_variable(fname text, add text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	f bloomfilter;
	r text;
BEGIN
	SELECT bf INTO f FROM filters WHERE name = fname;
	f := bloom_add(f, add);		-- an expanded value, read/write
	SELECT count(*) || '/' || sum(id) INTO r FROM cand WHERE f @> k;
	RETURN r;
END $$;
});
for my $fname ('small', 'big')
{
	is($node->safe_psql('postgres', "$par SELECT count_variable('$fname', 'nokey-7')"),
		rows("SELECT count_variable('$fname', 'nokey-7')", 'off'), "parallel, a PL/pgSQL variable's $fname filter: the same rows");
}

# UPDATE and DELETE through the node
my $update_on;
for my $batch ('on', 'off')
{
	$node->safe_psql('postgres', 'DROP TABLE IF EXISTS w; CREATE TABLE w AS SELECT * FROM cand; ANALYZE w');
	my $res = rows("UPDATE w SET note = 'hit' WHERE $big @> k RETURNING id", $batch) . '/'
		. rows("DELETE FROM w WHERE k <@ $big AND note = 'hit' RETURNING id, note", $batch) . '/'
		. rows('SELECT count(*), sum(id) FROM w', $batch);
	if ($batch eq 'on')
	{
		like(rows("EXPLAIN (COSTS OFF) UPDATE w SET note = 'hit' WHERE $big @> k", 'on'), qr/BloomBatch/,
			'UPDATE: planned');
		$update_on = $res;
	}
	else
	{
		is($update_on, $res, 'UPDATE and DELETE: the same rows');
	}
}

# 3. No false negative through the node
is(rows("SELECT count(*) FROM keys WHERE $big @> k", 'on'), '200000', 'every text key found through the node');
is(rows("SELECT count(*) FROM keys WHERE (SELECT bf FROM filters WHERE name = 'bign') @> n", 'on'), '200000',
	'every bigint key found through the node');
like(rows("EXPLAIN (COSTS OFF) SELECT count(*) FROM keys WHERE $big @> k", 'on'), qr/BloomBatch/,
	'no false negative: through the node');

# 4. EvalPlanQual: A's UPDATE waits for B's; B moves one key away and one onto
#    the filter's keys (a row the filter holds)
my %epq;
for my $batch ('on', 'off')
{
	$node->safe_psql('postgres', 'DROP TABLE IF EXISTS e; CREATE TABLE e AS SELECT * FROM cand WHERE id <= 2000; ANALYZE e');
	my ($waiting, $res) = while_rows_held($node, 'postgres',
		q{UPDATE e SET k = 'moved' WHERE id = 20; UPDATE e SET k = 'key-77' WHERE id = 21; UPDATE e SET n = 1 WHERE id = 40},
		"SET bloomfilter.batch_checks = $batch;
		 UPDATE e SET note = 'seen' WHERE $big @> k AND id <= 60 RETURNING id, k");
	ok($waiting, "EvalPlanQual, batch_checks $batch: A waited for B");
	$epq{$batch} = $res;
}
is($epq{on}, $epq{off}, 'EvalPlanQual: the same rows with the node as without');
unlike($epq{on}, qr/^20\|/m, 'EvalPlanQual: the key moved away is not updated');
like($epq{on}, qr/^40\|key-2$/m, 'EvalPlanQual: the row kept is updated');

# A path like the gates': a gate on a guard index wraps the BloomBatch path
# (BloomGuard, then BloomBatch over the scan), a correlated filter (a
# PARAM_EXEC set for each rescan) is batched, and the answers are the same
# with either or both off.
$node->safe_psql('postgres', q{
CREATE TABLE gcand AS SELECT * FROM cand;
CREATE INDEX gcand_note ON gcand USING bloomguard (note);
ANALYZE gcand;
});
for my $note ('note 40', 'absent')
{
	my $q = "SELECT count(*), sum(id) FROM gcand WHERE note = '$note' AND $big @> k";
	like(rows("EXPLAIN (COSTS OFF) $q", 'on'),
		qr/Custom Scan \(BloomGuard\)\n(.*\n)*\s+->  Custom Scan \(BloomBatch\)\n\s+Filter: [^\n]*\@>[^\n]*\n\s+->  Seq Scan on gcand/,
		"a gate over BloomBatch: $note");
	my $on = rows($q, 'on');
	is($on, rows($q, 'off'), "same rows, gate over BloomBatch: $note");
	is($on, rows("SET bloomfilter.planner_guards = off; $q", 'off'),
		"same rows, neither gate nor BloomBatch: $note");
}
my $skipped = rows(q{EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) }
	. "SELECT count(*) FROM gcand WHERE note = 'absent' AND $big @> k", 'on');
like($skipped, qr/Scans Skipped: 1$/m, 'the gate answers "no"');
unlike($skipped, qr/BloomBatch|Seq Scan on gcand/,
	'the gate skips the BloomBatch node and its scan, not initialized');
like($skipped, qr/Seq Scan on filters \(never executed\)/,
	"the filter's InitPlan is not run");
like(rows("EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM cand WHERE '$small_text'::bloomfilter @> k", 'on'),
	qr/BloomBatch\) \(actual rows=[\d.]+ loops=1\)\n(.*\n)*\s+Rows Batched: 0\n\s+Keys Prefetched: 0\n\s+->  Seq Scan on cand \(never executed\)\n\s+->  Seq Scan on cand \(actual rows=[\d.]+ loops=1\)\n\s+Filter: /,
	'a small constant filter: the plain scan, the reader never executed');
like(rows("EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM cand WHERE $big @> k", 'on'),
	qr/BloomBatch\) \(actual rows=[\d.]+ loops=1\)\n(.*\n)*\s+->  Seq Scan on cand \(actual rows=300000(?:\.00)? loops=1\)\n\s+->  Seq Scan on cand \(never executed\)\n/,
	'a large filter: the reader, the plain scan never executed');
like(rows("EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = 'small') @> k", 'on'),
	qr/->  Seq Scan on cand \(actual rows=1(?:\.00)? loops=1\)\n\s+->  Seq Scan on cand \(actual rows=[\d.]+ loops=1\)\n\s+Filter: /,
	'a small filter from an InitPlan: one row read to see it, then the plain scan');
like(rows(q{EXPLAIN (COSTS OFF) SELECT p.part, (SELECT count(*) FROM cand c WHERE p.bf @> c.k) FROM parts p}, 'on'),
	qr/SubPlan 1\n(.*\n)*\s+->  Custom Scan \(BloomBatch\)\n\s+Filter: \(p\.bf \@> \(k\)::bloom_literal\)\n\s+->  Seq Scan on cand c/,
	'planned: a correlated filter (a parameter of each rescan)');
like(rows(q{EXPLAIN (VERBOSE, COSTS OFF) }
	. "SELECT id * 2, upper(k) FROM cand WHERE $big @> k", 'on'),
	qr/Custom Scan \(BloomBatch\)\n\s+Output: \(cand\.id \* 2\), upper\(cand\.k\)\n(.*\n)*\s+->  Seq Scan on public\.cand\n\s+Output: cand\.id, cand\.k\n\s+->  Seq Scan on public\.cand\n\s+Output: cand\.id, cand\.k\n\s+Filter: [^\n]*$/,
	'the node projects; its scans output only the columns read, the plain one filters');


$node->stop;
done_testing();
