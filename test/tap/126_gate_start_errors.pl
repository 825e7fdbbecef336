# Gates checked when the executor starts (BloomGate, BloomAppend) evaluate
# their key there, before any row is asked for.  A key that is an ARRAY[...]
# of external parameters can fail to evaluate ("multidimensional arrays must
# have array expressions with matching dimensions") where the scan itself is
# never run (LIMIT 0, an empty outer side of a nested loop): the statement
# must then succeed with bloomfilter.planner_guards on, as it does off
# (review R11).  Such a key gets no gate at all (a gating Result checked on
# the first row would still evaluate it where a sequential scan of an empty
# table never does; TAP 129); a one-dimensional ARRAY[...] of scalar
# parameters still gets the node checked at the start.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $node = shared_node('main', qq{
jit = off
});

$node->safe_psql('postgres', q{
CREATE TABLE events (event_id int8, day int) PARTITION BY RANGE (day);
CREATE TABLE events_0 PARTITION OF events FOR VALUES FROM (0) TO (10);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM (10) TO (20);
CREATE TABLE events_d PARTITION OF events DEFAULT;
INSERT INTO events SELECT i, i % 30 FROM generate_series(1, 3000) i;
CREATE INDEX ON events (event_id);
CREATE TABLE single (id int8);
INSERT INTO single SELECT generate_series(1, 1000);
ANALYZE;
SELECT bloom_guard('events', 'event_id');
SELECT bloom_guard('single', 'id');
});
is($node->safe_psql('postgres', q{SELECT bloom_shared_wait('public.events.event_id', 60000)
	AND bloom_shared_wait('public.single.id', 60000)}), 't', 'the filters are ready');

my $generic = 'SET plan_cache_mode = force_generic_plan';
# [ name, plan marker, PREPARE, EXECUTE ]: '{100}' and '{{1,2}}' do not
# make one array, but the scan that would say so never runs
my @cases = (
	[ 'BloomGate under LIMIT 0', 'BloomGate',
	  'PREPARE q(int8[], int8[], int) AS SELECT id FROM single WHERE id = ANY (ARRAY[$1, $2]) LIMIT $3',
	  q{EXECUTE q('{100}', '{{1,2}}', 0)} ],
	[ 'BloomAppend under LIMIT 0', 'BloomAppend',
	  'PREPARE q(int8[], int8[], int) AS SELECT event_id FROM events WHERE event_id = ANY (ARRAY[$1, $2]) LIMIT $3',
	  q{EXECUTE q('{100}', '{{1,2}}', 0)} ],
	[ 'BloomAppend on the inner side of a nested loop whose outer side is empty', 'BloomAppend',
	  'PREPARE q(int8[], int8[]) AS SELECT count(*) FROM generate_series(1, 0) g,
	   LATERAL (SELECT * FROM events WHERE event_id = ANY (ARRAY[$1, $2]) AND day > g) e',
	  q{EXECUTE q('{100}', '{{1,2}}')} ],
);

foreach my $case (@cases)
{
	my ($name, $marker, $prepare, $execute) = @$case;

	my $plan = $node->safe_psql('postgres', "$generic; $prepare; EXPLAIN (COSTS OFF) $execute");
	unlike($plan, qr/\Q$marker\E/, "$name: no $marker for a multidimensional ARRAY[...]");
	unlike($plan, qr/bloom_shared_gate/, "$name: no gate at all (the array can fail to build)");
	my ($state_off, $err_off, $out_off) = sqlstate($node, 'postgres',
		"SET bloomfilter.planner_guards = off; $generic; $prepare; $execute");
	my ($state_on, $err_on, $out_on) = sqlstate($node, 'postgres',
		"$generic; $prepare; $execute");
	is($state_off, 'OK', "$name: succeeds with guards off") or diag($err_off);
	is($state_on, $state_off, "$name: guards on end as guards off") or diag($err_on);
	is($out_on, $out_off, "$name: the same rows");
}

# a one-dimensional ARRAY[...] of scalar parameters: checked at the start
my $one = "PREPARE o(int8, int8) AS SELECT count(*) FROM events WHERE event_id = ANY (ARRAY[\$1, \$2])";
like($node->safe_psql('postgres', "$generic; $one; EXPLAIN (COSTS OFF) EXECUTE o(100, -1)"),
	qr/BloomAppend/, 'ARRAY[$1, $2] of scalars: BloomAppend');
is($node->safe_psql('postgres', "$generic; $one; EXECUTE o(100, -1); EXECUTE o(-2, -1)"), "1\n0",
	'ARRAY[$1, $2] of scalars: the present key found, the absent ones not');

done_testing();
