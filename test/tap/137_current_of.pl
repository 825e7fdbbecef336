# WHERE CURRENT OF through the planner's nodes: a cursor's UPDATE or DELETE
# finds the row in a gate (BloomGuard) and in BloomBatch as in the scan
# itself, with the same result as with both off, for
#  1. DECLARE cursors over gated lookups: an index scan, an index-only
#     scan, a sequential scan read backward (SCROLL), an inheritance child,
#     a gate answering "no" (the cursor is on no row: the same error);
#  2. PL/pgSQL cursors (OPEN and FETCH, a FOR loop over a bound cursor);
#  3. named portals of the extended protocol, fetched a few rows at a time
#     as drivers do (a plan the planner cannot tell from any other): a
#     gated lookup, BloomBatch's rows batched and passing through, and a
#     gate over BloomBatch.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use PgWire;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', qq{
session_preload_libraries = 'bloomfilter'
jit = off
max_parallel_workers_per_gather = 0
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE t (id int PRIMARY KEY, k int NOT NULL, v text);
INSERT INTO t SELECT g, g, 'x' FROM generate_series(1, 1000) g;
CREATE INDEX t_guard ON t USING bloomguard (k);
CREATE INDEX t_k ON t (k);
CREATE TABLE p (k int, v text);
CREATE TABLE p1 () INHERITS (p);
CREATE TABLE p2 () INHERITS (p);
INSERT INTO p1 SELECT g, 'a' FROM generate_series(1, 100) g;
INSERT INTO p2 SELECT g, 'b' FROM generate_series(101, 200) g;
CREATE INDEX ON p1 USING bloomguard (k);
CREATE INDEX ON p2 USING bloomguard (k);
-- BloomBatch: a 2.4 MB filter of every 3rd key of cand (batched)
CREATE TABLE cand (id int PRIMARY KEY, k text, v text);
INSERT INTO cand SELECT g, 'key-' || g, 'x' FROM generate_series(1, 20000) g;
CREATE INDEX cand_guard ON cand USING bloomguard (id);
CREATE TABLE filters (name text PRIMARY KEY, bf bloomfilter);
INSERT INTO filters SELECT 'big', bloom_agg(k, 2000000, 0.01) FROM cand WHERE id % 3 = 0;
INSERT INTO filters SELECT 'small', bloom_agg(k, 1000, 0.01) FROM cand WHERE id % 3 = 0;
ANALYZE;
CREATE FUNCTION plpgsql_current() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c CURSOR FOR SELECT * FROM t WHERE k = 7;
	d CURSOR FOR SELECT * FROM t WHERE k IN (8, 9);
	r record;
	out text := '';
BEGIN
	OPEN c;
	FETCH c INTO r;
	UPDATE t SET v = 'plpgsql' WHERE CURRENT OF c;
	CLOSE c;
	FOR r IN d LOOP
		DELETE FROM t WHERE CURRENT OF d;
		out := out || r.id || ' ';
	END LOOP;
	SELECT out || string_agg(id || v, ',' ORDER BY id) INTO out
	FROM t WHERE k BETWEEN 6 AND 10;
	RETURN out;
END $$;
});

my $big = q{(SELECT bf FROM filters WHERE name = 'big')};
my $small = q{(SELECT bf FROM filters WHERE name = 'small')};
sub settings
{
	my ($on) = @_;
	return "SET bloomfilter.planner_guards = $on; SET bloomfilter.batch_checks = $on;";
}

# One transaction of psql commands (rolled back): its output and error.
sub in_psql
{
	my ($on, $sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres',
		settings($on) . " BEGIN; $sql ROLLBACK;");
	$err =~ s/^psql:[^\n]*?(ERROR|WARNING)/$1/mg;
	return "$out\n$err";
}

my %declare = (
	'an index scan' => q{DECLARE c CURSOR FOR SELECT * FROM t WHERE k = 5;
		FETCH c; UPDATE t SET v = 'upd' WHERE CURRENT OF c RETURNING *;},
	'an index-only scan' => q{SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
		DECLARE c CURSOR FOR SELECT k FROM t WHERE k = 5;
		FETCH c; UPDATE t SET v = 'ios' WHERE CURRENT OF c RETURNING *;},
	'a sequential scan read backward' => q{SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
		DECLARE c SCROLL CURSOR FOR SELECT * FROM t WHERE k IN (5, 6);
		FETCH c; FETCH c; FETCH BACKWARD c; DELETE FROM t WHERE CURRENT OF c RETURNING *;},
	'an inheritance child' => q{DECLARE c CURSOR FOR SELECT * FROM p WHERE k = 150;
		FETCH c; UPDATE p SET v = 'inh' WHERE CURRENT OF c RETURNING tableoid::regclass, *;},
	'a gate answering no' => q{DECLARE c CURSOR FOR SELECT * FROM t WHERE k = 5000;
		FETCH c; UPDATE t SET v = 'no' WHERE CURRENT OF c;},
	'a PL/pgSQL cursor' => q{SELECT plpgsql_current();},
);
for my $name (sort keys %declare)
{
	my $on = in_psql('on', $declare{$name});
	is($on, in_psql('off', $declare{$name}), "DECLARE, $name: the same as with gates off");
	unlike($on, qr/ERROR: .*simply updatable/, "DECLARE, $name: the row is found");
}
like(in_psql('on', $declare{'an index scan'}), qr/^5\|5\|upd$/m, 'DECLARE: the row is updated');
like(in_psql('on', $declare{'a gate answering no'}), qr/not positioned on a row/,
	'a gate answering "no": the cursor is on no row');
like(in_psql('on', 'EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR SELECT * FROM t WHERE k = 5;'),
	qr/BloomGuard/, "a cursor's plan is gated");

# Named portals of the extended protocol: fetch $fetch rows, then
# WHERE CURRENT OF the portal; every result in one string.
sub in_portal
{
	my ($on, $query, $fetch, $stmt, $set) = @_;
	my $c = PgWire->connect($node, 'postgres');
	$c->query(settings($on) . ($set // ''));
	$c->query('BEGIN');
	my $plan = $c->query("EXPLAIN (COSTS OFF) $query");
	my $r = $c->portal('p', $query, $fetch);
	my $u = $c->query("$stmt WHERE CURRENT OF p RETURNING id");
	$c->query('ROLLBACK');
	$c->close;
	my $fetched = join(',', map { $_->[0] } @{ $r->{rows} });
	my $updated = join(',', map { $_->[0] } @{ $u->{rows} });
	return (
		"fetched $fetched; " . ($r->{error} // '')
		  . "updated $updated; " . ($u->{error} // ''),
		join("\n", map { $_->[0] } @{ $plan->{rows} }));
}

my %portal = (
	'a gated lookup' => [ 'SELECT id FROM t WHERE k IN (3, 4, 5000)', 2,
		"UPDATE t SET v = 'portal'", qr/BloomGuard/ ],
	'BloomBatch, rows batched' => [ "SELECT id FROM cand WHERE $big @> k", 40,
		"UPDATE cand SET v = 'batched'", qr/BloomBatch/ ],
	'BloomBatch, rows passing through' => [ "SELECT id FROM cand WHERE $small @> k", 5,
		"DELETE FROM cand", qr/BloomBatch/ ],
	'a gate over BloomBatch' => [ "SELECT id FROM cand WHERE id = 999 AND $big @> k", 1,
		"UPDATE cand SET v = 'gated'", qr/BloomGuard(.*\n)*.*BloomBatch/,
		'SET enable_indexscan = off; SET enable_bitmapscan = off;' ],
);
for my $name (sort keys %portal)
{
	my ($query, $fetch, $stmt, $plan, $set) = @{ $portal{$name} };
	my ($on, $on_plan) = in_portal('on', $query, $fetch, $stmt, $set);
	my ($off) = in_portal('off', $query, $fetch, $stmt, $set);
	like($on_plan, $plan, "portal, $name: planned with the node");
	is($on, $off, "portal, $name: the same as with both off");
	like($on, qr/^fetched (?:\d+,)*(\d+); updated \1; $/, "portal, $name: the fetched row is updated");
}

$node->stop;
done_testing();
