# Shared filters that grow by a layer (src/README.md, "Growth"): a guard
# whose table outgrows its capacity gets a scalable layer, without reading
# the table again.
#
# 1. A guard sized for 1,000 keys takes 100,000 (100x) from 3 concurrent
#    inserting clients while a fourth checks every committed key again and
#    again: no check ever answers "no"; the filter has more than one layer;
#    no build ran after the first (last_build unchanged, one "built" line in
#    the log, one "grew by a layer" line per layer added); the measured
#    false-positive rate on 100,000 absent keys is within the 1% target;
#    the planner gate and bloom_shared_get (a valid scalable value whose
#    layers the view counts) agree; planner guards skip scans.
# 2. bloom_shared_rebuild makes one layer sized for the rows again.
# 3. A restart: the filter is built again, one layer, every key found.
# 4. The pool's limit (bloomfilter.shared_memory = 1 MB, after a restart):
#    when the next layer does not fit, the guard asks for a larger rebuild
#    instead (logged), which scans the table once into a single layer; every
#    key found.
# 5. A counting guard keeps growing by a rebuild (no layers).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use IPC::Run;

my $node = shared_node('shared_layer_growth', qq{
bloomfilter.shared_memory = 8
max_connections = 20
log_statement = none
});
my $G = 'public.g.k';

sub view
{
	my ($name, $cols) = @_;
	return $node->safe_psql('postgres',
		"SELECT $cols FROM bloom_shared_filters WHERE name = " . lit($name));
}

sub log_count
{
	my ($re) = @_;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
	my @m = $log =~ /$re/g;
	return scalar @m;
}

# The share of n absent keys (negative numbers) answered "maybe".
sub measured_fpr
{
	my ($name, $n) = @_;
	return $node->safe_psql('postgres',
		"SELECT avg(bloom_shared_contains(" . lit($name) . ", -i::bigint)::int)::float8 FROM generate_series(1, $n) i");
}

$node->safe_psql('postgres', q{
	CREATE TABLE g (k bigint);
	CREATE SEQUENCE gs;
	CREATE TABLE misses (n bigint, layers int);
	SELECT bloom_guard('g', 'k', 0.01, 1000);
});
wait_ready($node, 'postgres', $G, 'the filter of g');
my $built_before = view($G, 'last_build');
is(view($G, 'layers'), '1', 'a new guard has one layer');
is(log_count(qr/built shared bloom filter "public\.g\.k"/), 1, 'one build logged');

# ------------------------------------------- 1. 100x under concurrency ----
my $dir = PostgreSQL::Test::Utils::tempdir;
PostgreSQL::Test::Utils::append_to_file("$dir/insert.sql",
	"INSERT INTO g SELECT nextval('gs') FROM generate_series(1, 25);\n");
PostgreSQL::Test::Utils::append_to_file("$dir/check.sql",
	"INSERT INTO misses SELECT count(*), (SELECT layers FROM bloom_shared_filters WHERE name = '$G')\n"
	  . "  FROM g WHERE NOT bloom_shared_contains('$G', k);\n");
my ($cout, $cerr) = ('', '');
my $checker;
{
	local $ENV{PGOPTIONS} = '-c log_statement=none';
	$checker = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '1', '-T', '10', '-f', "$dir/check.sql",
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$cout, '2>', \$cerr);
	# 3 clients x 1340 transactions x 25 keys: 100,500 keys
	my ($iout, $ierr) = ('', '');
	IPC::Run::run(
		[ 'pgbench', '-n', '-c', '3', '-j', '3', '-t', '1340', '-f', "$dir/insert.sql",
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$iout, '2>', \$ierr);
	like($iout, qr/number of failed transactions: 0|processed: 4020\/4020/, 'the inserting clients finished')
	  or diag("$iout\n$ierr");
}
$checker->finish;
like($cout, qr/number of transactions actually processed: [1-9]/, 'the checking client ran')
  or diag("$cout\n$cerr");
my ($rows, $checks, $missed, $seen) = split /\|/, $node->safe_psql('postgres',
	'SELECT (SELECT count(*) FROM g), count(*), coalesce(sum(n), 0), count(DISTINCT layers) FROM misses');
is($rows, '100500', '100,500 keys inserted (100x the capacity)');
note("$checks full checks of the table ran during and after the inserts");
cmp_ok($seen, '>=', 3, "the checks ran while the filter grew (they saw $seen layer counts)");
is($missed, '0', 'no check during the growth answered "no" for a committed key');
no_false_negatives($node, 'postgres', $G, 'SELECT k FROM g', 'after the growth');

my ($state, $layers, $built_after) = split /\|/, view($G, 'state, layers, last_build');
is($state, 'ready', 'the grown filter is ready');
cmp_ok($layers, '>', 1, "the filter grew by layers ($layers)");
is($built_after, $built_before, 'no build ran: last_build unchanged');
is(log_count(qr/built shared bloom filter "public\.g\.k"/), 1, 'still one build logged: the table was not scanned again');
is(log_count(qr/shared bloom filter "public\.g\.k" grew by a layer/), $layers - 1,
	'one "grew by a layer" line per layer added');

my $n_absent = 100000;
my $fpr = measured_fpr($G, $n_absent);
my $noise = 3 * sqrt(0.01 * 0.99 / $n_absent);
cmp_ok($fpr, '<=', 0.01 + $noise, "measured FPR $fpr within the 1% target (+ 3 sigma)");
note('view: ' . view($G, "capacity || ' capacity, ' || bits || ' bits, ' || memory_bytes || ' bytes, estimated FPR ' || estimated_fpr"));

# the value and the planner gate read the same layers
my ($vlayers, $vpred, $vmiss) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT jsonb_array_length(bloom_info(f)->'layers') = $layers,
		   (bloom_info(f)->>'predicted_fpr')::float8 <= 0.01,
		   (SELECT count(*) FROM g WHERE NOT f @> k)
	  FROM (SELECT bloom_shared_get('$G') f) s});
is($vlayers, 't', 'bloom_shared_get returns a scalable value with the same layers');
is($vpred, 't', 'its predicted FPR is within the target');
is($vmiss, '0', 'the value holds every key');
# a layer takes its capacity, plus at most a key per concurrent writer
# (each waits for a growth under way)
is($node->safe_psql('postgres', qq{
	SELECT string_agg(l->>'added' || '/' || (l->>'capacity'), ' ')
	  FILTER (WHERE (l->>'added')::bigint > (l->>'capacity')::bigint + 3)
	  FROM jsonb_array_elements(bloom_info(bloom_shared_get('$G'))->'layers') l}),
	'', 'no layer holds more than its capacity plus 3 keys (3 writers)');
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM g
	 WHERE NOT bloom_shared_gate((SELECT id FROM bloom_shared_definitions WHERE name = '$G'), k)}),
	'0', 'the planner gate answers "maybe" for every key');
# and skips the scans of absent keys: 20 queries, at most a few false positives
my $skipped = view($G, 'skipped_scans');
$node->safe_psql('postgres', join('', map { "SELECT count(*) FROM g WHERE k = -$_;\n" } 1 .. 20));
cmp_ok(view($G, 'skipped_scans') - $skipped, '>=', 17, 'planner guards skip the scans of absent keys');

# ------------------------------------------------------ 2. rebuild ----
$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('$G')");
wait_ready($node, 'postgres', $G, 'rebuild of the grown filter');
my ($rl, $rcap) = split /\|/, view($G, 'layers, capacity');
is($rl, '1', 'a rebuild makes one layer');
cmp_ok($rcap, '>=', 100500, "sized for the rows ($rcap), not the defined 1,000");
no_false_negatives($node, 'postgres', $G, 'SELECT k FROM g', 'after the rebuild');

# ------------------------------------------------------ 3. restart ----
# grow again first, so that a layered filter is what the restart loses
$node->safe_psql('postgres', "INSERT INTO g SELECT nextval('gs') FROM generate_series(1, 200000)");
cmp_ok(view($G, 'layers'), '>', 1, 'grown again by layers');
# (and a small pool from now on, for 4.)
$node->append_conf('postgresql.conf', "bloomfilter.shared_memory = 1\n");
$node->restart;
wait_ready($node, 'postgres', $G, 'after a restart');
is(view($G, 'layers'), '1', 'after a restart: built again, one layer');
no_false_negatives($node, 'postgres', $G, 'SELECT k FROM g', 'after the restart');
$node->safe_psql('postgres', "SELECT bloom_unguard('g', 'k')");

# -------------------------------------------------- 4. the pool's limit ----
$node->safe_psql('postgres', q{
	CREATE TABLE p (k bigint);
	SELECT bloom_guard('p', 'k', 0.01, 1000);
});
my $P = 'public.p.k';
wait_ready($node, 'postgres', $P, 'the filter of p');
my $p_built = log_count(qr/built shared bloom filter "public\.p\.k"/);
my $refused = 0;
for my $i (1 .. 40)
{
	$node->safe_psql('postgres', "INSERT INTO p SELECT nextval('gs') FROM generate_series(1, 20000)");
	$refused = log_count(qr/shared bloom filter "public\.p\.k" cannot grow by a layer, a larger rebuild is requested: \d+ kB do not fit in bloomfilter\.shared_memory/);
	last if $refused;
}
ok($refused, 'a layer that does not fit in the pool is refused, logged');
wait_ready($node, 'postgres', $P, 'the larger rebuild');
is(view($P, 'layers'), '1', 'the larger rebuild made one layer');
cmp_ok(log_count(qr/built shared bloom filter "public\.p\.k"/), '>', $p_built, 'the rebuild scanned the table');
no_false_negatives($node, 'postgres', $P, 'SELECT k FROM p', 'at the pool\'s limit');
$node->safe_psql('postgres', "SELECT bloom_unguard('p', 'k')");

# ------------------------------------------ 5. counting: no layers ----
$node->safe_psql('postgres', q{
	CREATE TABLE c (k bigint);
	SELECT bloom_guard('c', 'k', 0.01, 1000, layout => 'counting');
});
my $C = 'public.c.k';
wait_ready($node, 'postgres', $C, 'the counting filter');
$node->safe_psql('postgres', "INSERT INTO c SELECT generate_series(1, 5000)");
wait_ready($node, 'postgres', $C, 'the counting filter after 5x its capacity');
my ($cl, $ccap) = split /\|/, view($C, 'layers, capacity');
is($cl, '1', 'a counting guard has one layer');
cmp_ok($ccap, '>', 1000, "a counting guard grew by a rebuild (capacity $ccap)");
is(log_count(qr/shared bloom filter "public\.c\.k" grew by a layer/), 0, 'no layer for a counting guard');
no_false_negatives($node, 'postgres', $C, 'SELECT k FROM c', 'the counting guard');

unlike(PostgreSQL::Test::Utils::slurp_file($node->logfile),
	qr/terminated by signal|was terminated by exception|PANIC:/, 'no crash in the server log');
$node->stop;
done_testing();
