# Checks without a lock (src/README.md, "Checks without a lock"): a check
# reads the slot between reads of its sequence counter and takes no lock; it
# must never answer "no" for a key of the table while the filter is swapped,
# reset or freed under it, and the view's counters, kept per backend and
# added now and then, must count every check.
#
# 1. pgbench, 2 clients, each checking all 20,000 keys of the table per
#    transaction (recording the keys answered "no"), for ~20 s while the test
#    rebuilds the filter again and again (each swap gives the old buffer back
#    to the pool, and with a 1 MB pool the next build takes that very buffer
#    and zeroes it: a check still reading it would see zeros), guards and
#    unguards a second table (slots and buffers freed and taken), and resets
#    the filter by DDL (ALTER TABLE ... ALTER COLUMN TYPE).  No key is ever
#    answered "no".
# 2. The view's checks: pgbench again for a few seconds while the filter is
#    rebuilt (no reset: a reset forgets the counts of checks not added yet):
#    every check of its transactions is counted once they ended (keys times
#    transactions, exactly); a backend reading the view sees its own checks
#    at once, also inside its transaction.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use IPC::Run;

my $node = shared_node('shared_lockfree', qq{
bloomfilter.shared_memory = 1
max_connections = 20
});
my $U = 'public.t.k';
$node->safe_psql('postgres', q{
	CREATE TABLE t (k text);
	INSERT INTO t SELECT 'k' || g FROM generate_series(1, 20000) g;
	CREATE TABLE other (k text);
	INSERT INTO other SELECT 'o' || g FROM generate_series(1, 5000) g;
	CREATE TABLE misses (at timestamptz DEFAULT clock_timestamp(), n bigint);
	SELECT bloom_guard('t', 'k', 0.01, 20000);
});
wait_ready($node, 'postgres', $U, 'the filter of t');
is(missing($node, 'postgres', $U, 'SELECT k FROM t'), '0', 'before the race: every key found');

# ------------------------------------------------------ 1. the race ----
my $dir = PostgreSQL::Test::Utils::tempdir;
PostgreSQL::Test::Utils::append_to_file("$dir/check.sql", qq{
INSERT INTO misses (n) SELECT count(*) FROM t WHERE NOT bloom_shared_contains('$U', k);
});
my $seconds = 20;
my ($bout, $berr) = ('', '');
my $bench;
{
	local $ENV{PGOPTIONS} = '-c log_statement=none';
	local $ENV{PGAPPNAME} = 'pgbench';
	$bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', $seconds, '-f', "$dir/check.sql",
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$bout, '2>', \$berr);
}
ok(poll_for($node, 'postgres', 'SELECT count(*) > 0 FROM misses', 't', 30), 'pgbench checks run');

my ($rebuilds, $guards, $resets) = (0, 0, 0);
my $end = time + $seconds - 4;
while (time < $end)
{
	$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('$U')");
	$node->safe_psql('postgres', "SELECT bloom_shared_wait('$U', 60000)");
	$rebuilds++;
	if ($rebuilds % 3 == 0)
	{
		$node->safe_psql('postgres', q{SELECT bloom_guard('other', 'k', 0.01, 5000)});
		$node->safe_psql('postgres', q{SELECT bloom_shared_wait('public.other.k', 60000)});
		$node->safe_psql('postgres', q{SELECT bloom_unguard('other', 'k')});
		$guards++;
	}
	if ($rebuilds % 5 == 0)
	{
		# a type change resets the filter (a new generation): checks answer
		# "maybe" until the next build publishes
		my $type = $resets % 2 ? 'text' : 'varchar';
		$node->safe_psql('postgres', "ALTER TABLE t ALTER COLUMN k TYPE $type");
		$node->safe_psql('postgres', "SELECT bloom_shared_wait('$U', 60000)");
		$resets++;
	}
}
$bench->finish;
is($bench->result(0), 0, 'pgbench ran to the end') or diag("pgbench stderr: $berr");
cmp_ok($rebuilds, '>=', 3, "the filter was rebuilt during the checks ($rebuilds times; $guards guards of another table, $resets resets)");
my ($txns, $bad) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*), coalesce(sum(n), -1) FROM misses');
cmp_ok($txns, '>=', 10, "checks of all keys ran during the race ($txns)");
is($bad, '0', 'no key of the table was ever answered "no" during swaps, resets and frees');

# --------------------------------------------------- 2. the counters ----
sub view_checks
{
	return $node->safe_psql('postgres', "SELECT checks FROM bloom_shared_filters WHERE name = '$U'");
}
my $c0 = view_checks();
my $t0 = $node->safe_psql('postgres', 'SELECT count(*) FROM misses');
($bout, $berr) = ('', '');
{
	local $ENV{PGOPTIONS} = '-c log_statement=none';
	$bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '6', '-f', "$dir/check.sql",
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$bout, '2>', \$berr);
}
for (1 .. 3)
{
	$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('$U')");
	$node->safe_psql('postgres', "SELECT bloom_shared_wait('$U', 60000)");
}
$bench->finish;
is($bench->result(0), 0, 'pgbench ran to the end again') or diag("pgbench stderr: $berr");
my $t1 = $node->safe_psql('postgres', 'SELECT count(*) FROM misses');
my $c1 = view_checks();
cmp_ok($t1 - $t0, '>', 0, 'checks ran while the filter was rebuilt');
is($c1 - $c0, 20000 * ($t1 - $t0),
	"the view counts every check of the ended transactions, once ($c1 - $c0 = 20000 x " . ($t1 - $t0) . ')');
is($node->safe_psql('postgres', 'SELECT sum(n) FROM misses'), '0', 'still no key answered "no"');

my $own = $node->safe_psql('postgres', qq{
	BEGIN;
	CREATE TEMP TABLE c0 AS SELECT checks, negatives FROM bloom_shared_filters WHERE name = '$U';
	SELECT count(*) FROM t WHERE bloom_shared_contains('$U', k);
	SELECT count(*) FROM generate_series(1, 1000) g WHERE bloom_shared_contains('$U', 'absent' || g);
	SELECT f.checks - c0.checks, f.negatives - c0.negatives >= 900
	FROM bloom_shared_filters f, c0 WHERE f.name = '$U';
	COMMIT;
});
my @lines = split /\n/, $own;
is($lines[2], '21000|t', 'a backend reading the view sees its own checks at once, inside its transaction');

done_testing();
