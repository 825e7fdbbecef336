# Planner gates under concurrent updates (READ COMMITTED, EvalPlanQual):
# a statement that blocks on a row another session is updating, and then
# rechecks the row's newest version, ends with the same rows (or the same
# error) with bloomfilter.planner_guards on as off.
#
# Each case: session B opens a transaction and updates rows; session A
# starts its statement, waits for B's row lock; B commits; A's result is
# compared with the same case run with guards off.  Cases: the key moved
# away from A's value, the key kept (other columns changed), the key moved
# onto A's value, an IN list, a join rechecked with FOR UPDATE, a DELETE,
# a row moved to another partition, a generic plan of a prepared statement.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $node = shared_node('main', qq{
max_connections = 20
jit = off
});

# Tables made again for each run: guards on and off see the same data.
my $setup = q{
DROP TABLE IF EXISTS t, t2, p;
CREATE TABLE t (id int PRIMARY KEY, k text NOT NULL, v int NOT NULL DEFAULT 0);
INSERT INTO t SELECT i, 'key-' || i, 0 FROM generate_series(1, 2000) i;
CREATE INDEX ON t (k);
CREATE TABLE t2 (k text NOT NULL, note text);
INSERT INTO t2 SELECT 'key-' || i, 'n' || i FROM generate_series(1, 2000) i;
CREATE INDEX ON t2 (k);
CREATE TABLE p (k text NOT NULL, d int NOT NULL, v int NOT NULL DEFAULT 0) PARTITION BY LIST (d);
CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1);
CREATE TABLE p2 PARTITION OF p FOR VALUES IN (2);
INSERT INTO p SELECT 'pk-' || i, 1 + i % 2, 0 FROM generate_series(1, 2000) i;
CREATE INDEX ON p (k);
ANALYZE t, t2, p;
SELECT bloom_guard('t', 'k');
SELECT bloom_guard('t2', 'k');
SELECT bloom_guard('p', 'k');
};

# [ name, B's updates, A's statement (A's session runs its setup first) ]
my @cases = (
	[ 'key moved away', q{UPDATE t SET k = 'moved-1' WHERE k = 'key-1'},
	  q{UPDATE t SET v = v + 1 WHERE k = 'key-1' RETURNING id, k} ],
	[ 'key kept', q{UPDATE t SET v = 7 WHERE k = 'key-2'},
	  q{UPDATE t SET v = v + 1 WHERE k = 'key-2' RETURNING id, k, v} ],
	[ 'key moved onto the value', q{UPDATE t SET k = 'onto-3' WHERE k = 'key-3'; UPDATE t SET v = 1 WHERE k = 'key-4'},
	  q{UPDATE t SET v = v + 10 WHERE k IN ('onto-3', 'key-4') RETURNING id, k, v} ],
	[ 'IN list, one key moved away', q{UPDATE t SET k = 'gone-5' WHERE k = 'key-5'},
	  q{UPDATE t SET v = v + 1 WHERE k IN ('key-5', 'key-6', 'absent-x') RETURNING id, k} ],
	[ 'join rechecked, FOR UPDATE', q{UPDATE t SET v = 3 WHERE k = 'key-7'},
	  q{SELECT t.id, t2.note FROM t JOIN t2 ON t2.k = t.k WHERE t.k = 'key-7' FOR UPDATE OF t} ],
	[ 'join rechecked, key moved', q{UPDATE t SET k = 'key-9' WHERE k = 'key-8'},
	  q{SELECT t.id, t.k, t2.note FROM t JOIN t2 ON t2.k = t.k WHERE t.k = 'key-8' FOR UPDATE OF t} ],
	[ 'DELETE', q{UPDATE t SET v = 5 WHERE k = 'key-10'},
	  q{DELETE FROM t WHERE k = 'key-10' RETURNING id, v} ],
	[ 'partitions, key kept', q{UPDATE p SET v = 2 WHERE k = 'pk-11'},
	  q{UPDATE p SET v = v + 1 WHERE k = 'pk-11' RETURNING k, d, v} ],
	[ 'partitions, row moved to another partition', q{UPDATE p SET d = 2 WHERE k = 'pk-12'},
	  q{UPDATE p SET v = v + 1 WHERE k = 'pk-12' RETURNING k, d, v} ],
	[ 'generic plan', q{UPDATE t SET k = 'moved-12' WHERE k = 'key-12'; UPDATE t SET k = 'key-12' WHERE k = 'key-14'},
	  q{SET plan_cache_mode = force_generic_plan; PREPARE u(text) AS UPDATE t SET v = v + 1 WHERE k = $1 RETURNING id, k;
	    EXECUTE u('key-15'); EXECUTE u('key-15'); EXECUTE u('key-12')} ],
);

# A's statement while B holds its rows; A's output and errors.
sub run_case
{
	my ($guards, $b_sql, $a_sql) = @_;
	return while_rows_held($node, 'postgres', $b_sql,
		"SET bloomfilter.planner_guards = $guards; $a_sql");
}

my %got;
for my $guards ('on', 'off')
{
	$node->safe_psql('postgres', $setup);
	for my $n ('public.t.k', 'public.t2.k', 'public.p.k')
	{
		wait_ready($node, 'postgres', $n, "guards $guards: $n");
	}
	if ($guards eq 'on')
	{
		like($node->safe_psql('postgres', q{EXPLAIN (COSTS OFF) UPDATE t SET v = 1 WHERE k = 'key-1'}),
			qr/One-Time Filter: bloom_shared_gate/, 'the UPDATE is gated');
		like($node->safe_psql('postgres', q{EXPLAIN (COSTS OFF) UPDATE p SET v = 1 WHERE k = 'pk-1'}),
			qr/One-Time Filter: bloom_shared_gate\('\d+'::bigint, 'p1'::regclass/,
			'the partitions\' scans are gated');
	}
	for my $c (@cases)
	{
		my ($name, $b_sql, $a_sql) = @$c;
		my ($waiting, $res) = run_case($guards, $b_sql, $a_sql);
		ok($waiting, "guards $guards, $name: A waited for B's row lock");
		$got{$guards}{$name} = $res;
	}
	$got{$guards}{'final rows'} = $node->safe_psql('postgres',
		q{SELECT string_agg(format('%s:%s:%s', id, k, v), ' ' ORDER BY id) FROM t WHERE v <> 0 OR k NOT LIKE 'key-%'}) .
		' / ' . $node->safe_psql('postgres',
		q{SELECT string_agg(format('%s:%s:%s', k, d, v), ' ' ORDER BY k) FROM p WHERE v <> 0 OR k IN ('pk-11', 'pk-12')});
}
for my $c (@cases, [ 'final rows' ])
{
	my $name = $c->[0];
	is($got{on}{$name}, $got{off}{$name}, "$name: the same result with guards on and off")
	  or diag("on: $got{on}{$name}\noff: $got{off}{$name}");
}
# the cases reached EvalPlanQual's outcomes: a recheck that fails, one that
# passes, and the moved-row error
is($got{off}{'key moved away'}, '', 'key moved away: no row (the recheck failed)');
like($got{off}{'key kept'}, qr/^2\|key-2\|8$/m, 'key kept: the newest version updated');
like($got{off}{'partitions, row moved to another partition'}, qr/ERROR:.*moved to another partition/,
	'row moved: the serialization error');
unlike(join("\n", values %{ $got{on} }), qr/ERROR:(?!.*moved to another partition)/,
	'guards on: no other error');

$node->stop;
done_testing();
