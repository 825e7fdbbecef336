# Differential random-query test of the planner features: a query returns
# the same rows (or fails with the same SQLSTATE) with
# bloomfilter.planner_guards and bloomfilter.batch_checks on as with them
# off.
#
# Guarded tables (DiffQueries.pm, schema_sql): a plain table (int4, int8,
# text, uuid and varchar keys, B-tree and hash indexes), an inheritance
# parent with children, a partitioned table with a sub-partitioned
# partition (guarded at the parent, and two partitions on another column),
# counting and cuckoo guards, an empty table; keys present, absent and
# NULL; stored filters for BloomBatch.  A seeded generator (one sub per query
# shape) makes point lookups, IN lists and = ANY with NULL, empty and
# duplicate elements, EXISTS / NOT EXISTS, correlated subqueries, joins of
# every kind, LATERAL, set operations, CTEs, window functions, LIMIT/OFFSET,
# aggregates, cursors (SCROLL, FETCH BACKWARD, WITH HOLD), prepared
# statements (generic plans, 7 executions), PL/pgSQL and SQL functions,
# UPDATE/DELETE/INSERT ... RETURNING and MERGE (rolled back), FOR UPDATE,
# WHERE CURRENT OF, BloomBatch conditions, keys that fail to evaluate; each
# under random planner settings (parallel plans with zero costs, scans and
# joins disabled).
#
# Phases: 1. READ COMMITTED (on, off, on again; the session reconnects now
# and then, for fresh sessions); 2. REPEATABLE READ and 3. SERIALIZABLE (on
# and off in savepoints of one transaction: one snapshot); 4. REPEATABLE
# READ next to a concurrent writer (inserts, deletes, updates moving rows
# between partitions, rollbacks, index DDL, guarding and unguarding another
# column, rebuilds, a new child table).  One test per phase: no mismatch
# (different rows or SQLSTATEs, or an internal error XX... in any run);
# each mismatch is diagnosed with the settings, the SQL and both results
# (all of them in tmp_check/log/128_differential_mismatches.txt).  Every 5th
# case is also run with auto_explain, to count the gated plans: the test
# cannot pass vacuously.
#
# Environment: BF_DIFF_SEED (default 20240611), BF_DIFF_QUERIES (cases of
# phase 1, default 3000; the other phases run a share of it), BF_DIFF_SHOW
# (mismatches diagnosed per phase, default 25), BF_DIFF_DUMP=1 (write every
# case, with its errors, to the mismatch file).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use DiffQueries;

my $seed = $ENV{BF_DIFF_SEED} // 20240611;
my $queries = $ENV{BF_DIFF_QUERIES} // 3000;
my $started = time;
note "seed $seed, $queries cases in phase 1 (BF_DIFF_SEED, BF_DIFF_QUERIES)";

my $node = shared_node('main', qq{
max_connections = 30
jit = off
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
bloomfilter.max_shared_filters = 64
deadlock_timeout = 100ms
});

$node->safe_psql('postgres', DiffQueries::schema_sql());
my $names = join(' AND ', map { "bloom_shared_wait('$_', 60000)" } DiffQueries::filter_names());
is($node->safe_psql('postgres', "SELECT $names"), 't', 'the guards are ready');

DiffQueries::seed($seed);
my $mismatch_file = "$PostgreSQL::Test::Utils::log_path/128_differential_mismatches.txt";
open(my $mfh, '>', $mismatch_file) or die "$mismatch_file: $!";
my (%gated_by, $sampled, $gated);
my $total_cases = 0;

# Run $count cases; returns (cases run, mismatches, cases with rows).
# $level: undef (READ COMMITTED, no transaction of the runner's), or an
# isolation level for transactions of $group cases each.
sub phase
{
	my ($name, $count, %opt) = @_;
	my $t0 = time;
	my $sess = DiffQueries::Session->new($node, 'postgres');
	my $mode = $opt{level} ? 'sub' : 'rc';
	my ($ran, $skipped, $with_rows, @mism, %by_shape) = (0, 0, 0);
	my $in_tx = 0;
	for my $i (1 .. $count)
	{
		my $case = DiffQueries::gen_case(readonly => $opt{readonly});
		if ($opt{level} && !$in_tx)
		{
			$sess->run("BEGIN ISOLATION LEVEL $opt{level}; SELECT 1 FROM src LIMIT 1;");
			$in_tx = 1;
		}
		my ($rep, $o) = eval { DiffQueries::run_case($sess, $case, $mode, again => $opt{again}) };
		if (!$o)
		{
			$rep = "shape $case->{name}: $@\nsettings: $case->{settings}\nbody:\n$case->{body}\n";
			$in_tx = 0;
		}
		if ($rep && $opt{transient} && $rep =~ /errors: \[[^\]]*(40001|40P01|55P03|57014)/)
		{
			# a lock or serialization failure of the concurrent phase
			$skipped++;
			$rep = undef;
		}
		$ran++;
		print $mfh "-- case $i ($case->{name}) errors [$o->[0][1]{errors}] $o->[0][1]{msg}\n$case->{settings}\n$case->{body}\n"
		  if $ENV{BF_DIFF_DUMP} && $o;
		if ($rep)
		{
			push @mism, $rep;
			$by_shape{ $case->{name} }++;
		}
		elsif ($o && $o->[0][1]{nrows} > 0 && $o->[0][1]{errors} eq '')
		{
			$with_rows++;
		}
		if ($i % 5 == 0)
		{
			my ($m, $eo) = eval { DiffQueries::explain_markers($sess, $case, $mode) };
			if ($m)
			{
				$sampled++;
				$gated++ if %$m;
				$gated_by{$_}++ for keys %$m;
			}
		}
		if ($in_tx && ($i % ($opt{group} // 4) == 0 || $i == $count))
		{
			$sess->run('COMMIT;');
			$in_tx = 0;
		}
		$sess->reconnect if $opt{reconnect} && $i % $opt{reconnect} == 0;
	}
	$sess->quit;
	$total_cases += $ran;
	my $secs = time - $t0;
	note sprintf('%s: %d cases in %.1f s (%.1f ms each), %d with rows, %d skipped, %d mismatches',
		$name, $ran, $secs, 1000 * $secs / ($ran || 1), $with_rows, $skipped, scalar @mism);
	print $mfh "==================== $name: " . scalar(@mism) . " mismatches\n";
	print $mfh "$_\n" for @mism;
	is(scalar @mism, 0, "$name: no mismatch")
	  or diag("$name mismatches by shape: " . join(', ', map { "$_=$by_shape{$_}" } sort keys %by_shape)
		  . "\n(all of them in $mismatch_file)");
	my $shown = 0;
	for (@mism)
	{
		last if ++$shown > ($ENV{BF_DIFF_SHOW} // 25);
		diag("$name mismatch $shown:\n$_");
	}
	cmp_ok($ran, '>=', $count, "$name: every case ran");
	cmp_ok($with_rows, '>=', $ran / 4, "$name: at least a quarter of the cases returned rows");
	return;
}

phase('read committed', $queries, again => 1, reconnect => 100);
phase('repeatable read', int($queries / 2), level => 'REPEATABLE READ');
phase('serializable', int($queries / 3), level => 'SERIALIZABLE');

# 4. A concurrent writer, the reader in REPEATABLE READ transactions
my $wfile = "$PostgreSQL::Test::Utils::tmp_check/128_writer.sql";
PostgreSQL::Test::Utils::append_to_file($wfile, DiffQueries::writer_script(20000));
my ($wout, $werr) = ("$PostgreSQL::Test::Utils::tmp_check/128_writer.out", "$PostgreSQL::Test::Utils::tmp_check/128_writer.err");
my $writer = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0', '-d', $node->connstr('postgres'), '-f', $wfile ],
	'>', $wout, '2>', $werr);
phase('repeatable read with a concurrent writer', int($queries / 3), level => 'REPEATABLE READ',
	readonly => 1, transient => 1);
$writer->kill_kill;
my $wtext = PostgreSQL::Test::Utils::slurp_file($wout);
my $ops = () = $wtext =~ /^op$/mg;
my $wlog = PostgreSQL::Test::Utils::slurp_file($werr);
my %werrs;
$werrs{$1}++ while $wlog =~ /ERROR:\s+([^\n]*)/g;
note "the writer ran $ops operations; its errors: " . join('; ', map { "$werrs{$_}x $_" } sort keys %werrs);
cmp_ok($ops, '>=', 50, 'the concurrent writer ran');

# not vacuous: plans with gates and batches
note "gated plans: $gated of $sampled sampled cases; markers: " . join(', ', map { "$_=$gated_by{$_}" } sort keys %gated_by);
cmp_ok($gated // 0, '>=', ($sampled // 0) * 0.3, 'at least 30% of the sampled cases had a gate or a batch in a plan');
ok(($gated_by{$_} // 0) > 0, "some plans had $_") for qw(BloomGate BloomAppend BloomBatch bloom_shared_gate bloom_shared_gate_elements);

close $mfh;
diag(sprintf('%d cases in %.0f s (seed %s)', $total_cases, time - $started, $seed));
done_testing();
