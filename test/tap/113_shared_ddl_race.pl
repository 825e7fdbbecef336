# Shared filters (1.1 rules): DDL on guarded trees while writers run.
#
# pgbench (2 clients, ~20 s) inserts into a guarded partitioned table (through
# the parent) and into a guarded inheritance tree (parent and child), while
# the test, in a loop: disables and enables the guard trigger on a partition
# (ALL) and on the child (USER), replaces the parent's guard trigger with the
# same definition, renames it away and back, attaches a populated partition
# and detaches it again, and rebuilds both filters.  After every step, every
# key committed before the check answers "maybe"; at the end both filters are
# ready with every key.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;
use IPC::Run;
use Time::HiRes qw(usleep time);

$SharedFilterTest::wait_seconds = 30;

my $node = shared_node('ddl_race', "max_worker_processes = 16\nmax_connections = 30\nlog_statement = none\n");
my $watch = crash_watch($node);
my $db = 'postgres';

$node->safe_psql($db, q{
	CREATE SEQUENCE s;
	CREATE TABLE pt (g int, k text) PARTITION BY LIST (g);
	CREATE TABLE pt0 PARTITION OF pt FOR VALUES IN (0);
	CREATE TABLE pt1 PARTITION OF pt FOR VALUES IN (1);
	INSERT INTO pt SELECT i % 2, 'p-seed' || i FROM generate_series(1, 20000) i;
	CREATE TABLE ih (k text);
	CREATE TABLE ih_c () INHERITS (ih);
	INSERT INTO ih SELECT 'i-seed' || i FROM generate_series(1, 10000) i;
	INSERT INTO ih_c SELECT 'c-seed' || i FROM generate_series(1, 10000) i;
	SELECT bloom_guard('pt', 'k');
	SELECT bloom_guard('ih', 'k');
});
my ($P, $I) = ('public.pt.k', 'public.ih.k');
wait_ready($node, $db, $P, 'partitioned');
wait_ready($node, $db, $I, 'inheritance');

my $dir = PostgreSQL::Test::Utils::tempdir;
PostgreSQL::Test::Utils::append_to_file("$dir/w.sql", q{
\set g random(0, 1)
INSERT INTO pt VALUES (:g, 'p' || nextval('s'));
INSERT INTO ih VALUES ('i' || nextval('s'));
INSERT INTO ih_c VALUES ('c' || nextval('s'));
});
my $seconds = 20;
my ($bout, $berr) = ('', '');
my $bench;
{
	local $ENV{PGOPTIONS} = '-c log_statement=none';
	$bench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', $seconds, '-f', "$dir/w.sql",
		  '-h', $node->host, '-p', $node->port, $db ],
		'>', \$bout, '2>', \$berr);
}
my $started = time;
poll_for($node, $db, q{SELECT count(*) >= 2 FROM pg_stat_activity WHERE application_name = 'pgbench'}, 't', 10);

my ($checks, $bad, $ddl_failed) = (0, 0, 0);
sub check
{
	my ($step) = @_;
	my ($st, $err, $out) = sqlstate($node, $db, qq{
		SELECT (SELECT count(*) FROM pt WHERE NOT bloom_shared_contains('$P', k)) || ','
		    || (SELECT count(*) FROM ih WHERE NOT bloom_shared_contains('$I', k))});
	$checks++;
	if ($st ne 'OK' || $out ne '0,0')
	{
		$bad++;
		diag("after $step: $st " . ($out // '') . ' keys answered "no" (states '
			  . state_of($node, $db, $P) . ', ' . state_of($node, $db, $I) . ") $err");
	}
}
sub ddl
{
	my ($step, $sql) = @_;
	my ($st, $err) = sqlstate($node, $db, $sql);
	if ($st ne 'OK')
	{
		$ddl_failed++;
		diag("$step: $st $err");
	}
	check($step);
}

my $round = 0;
while (time < $started + $seconds - 2)
{
	$round++;
	ddl("round $round: pt0 DISABLE TRIGGER ALL", 'ALTER TABLE pt0 DISABLE TRIGGER ALL');
	usleep(200_000);
	ddl("round $round: pt0 ENABLE TRIGGER ALL", 'ALTER TABLE pt0 ENABLE TRIGGER ALL');
	ddl("round $round: ih_c DISABLE TRIGGER USER", 'ALTER TABLE ih_c DISABLE TRIGGER USER');
	usleep(200_000);
	ddl("round $round: ih_c ENABLE TRIGGER USER", 'ALTER TABLE ih_c ENABLE TRIGGER USER');
	ddl("round $round: CREATE OR REPLACE TRIGGER on ih", q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON ih
		FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.ih.k')});
	ddl("round $round: rename the trigger away and back",
		'ALTER TRIGGER bloom_guard_k ON ih RENAME TO g2; ALTER TRIGGER g2 ON ih RENAME TO bloom_guard_k;');
	my $g = 10 + $round;
	ddl("round $round: ATTACH a populated partition", qq{CREATE TABLE pt$g (g int, k text);
		INSERT INTO pt$g SELECT $g, 'attached$g-' || i FROM generate_series(1, 2000) i;
		ALTER TABLE pt ATTACH PARTITION pt$g FOR VALUES IN ($g);});
	ddl("round $round: rebuild both", "SELECT bloom_shared_rebuild('$P'); SELECT bloom_shared_rebuild('$I');");
	ddl("round $round: DETACH the partition", qq{ALTER TABLE pt DETACH PARTITION pt$g; DROP TABLE pt$g;});
}
$bench->finish;
is($? >> 8, 0, 'pgbench ran to the end') or diag($berr);
unlike($berr, qr/ERROR|aborted/, 'no pgbench client failed') or diag($berr);
my ($ntx) = $bout =~ /actually processed: (\d+)/;
cmp_ok($ntx // 0, '>', 500, 'writers raced the DDL (' . ($ntx // 0) . ' transactions)');
cmp_ok($round, '>=', 2, "$round rounds of DDL ($checks checks)");
is($ddl_failed, 0, 'every DDL step succeeded');
is($bad, 0, 'no check during the race found a committed key answering "no"');
wait_ready($node, $db, $P, 'partitioned, at the end');
wait_ready($node, $db, $I, 'inheritance, at the end');
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partitioned, at the end');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance, at the end');
like(guard_trigger_list($node, $db, 'pt0'), qr/^bloom_guard_k:A$/, 'pt0: the guard trigger is ALWAYS at the end');
is(guard_trigger_list($node, $db, 'ih_c'), 'bloom_guard_k:A', 'ih_c: the guard trigger is ALWAYS at the end');
is(guard_trigger_list($node, $db, 'ih'), 'bloom_guard_k:A', 'ih: the guard trigger is ALWAYS at the end');
my $share = $node->safe_psql($db, "SELECT avg(bloom_shared_contains('$P', 'absent' || i)::int) FROM generate_series(1, 5000) i");
cmp_ok($share, '<', 0.05, "the partitioned filter answers at the end (absent \"maybe\" share $share)");
server_intact($node, $watch, 'end of 113');
$node->stop;
done_testing();
