# What the shared tier tells its users: a LOG line for each finished build,
# a NOTICE (and an immediate false) from bloom_shared_wait inside the
# transaction whose commit the build waits for.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('messages');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE m (k text);
	INSERT INTO m SELECT 'k' || i FROM generate_series(1, 5000) i;
});

# the guarding transaction: wait answers false at once, with a NOTICE
my $offset = -s $node->logfile;
my ($stdout, $stderr);
my $t0 = time;
$node->psql('postgres', q{
	BEGIN;
	SELECT bloom_guard('m', 'k');
	SELECT bloom_shared_wait('public.m.k', 20000);
	COMMIT;
}, stdout => \$stdout, stderr => \$stderr);
my $took = time - $t0;
like($stdout, qr/^public\.m\.k\nf$/m, 'inside the guarding transaction, bloom_shared_wait returns false');
like($stderr, qr/NOTICE:  shared bloom filter "public\.m\.k" is built after this transaction ends/,
	'... with a NOTICE saying why');
cmp_ok($took, '<', 15, "... at once, not after its 20 s timeout ($took s)");

# after the commit: built, and the build is logged
is($node->safe_psql('postgres', q{SELECT bloom_shared_wait('public.m.k', 60000)}), 't',
	'after the commit the filter is built');
ok($node->wait_for_log(qr/LOG:  built shared bloom filter "public\.m\.k": 5000 keys in \d+\.\d{3} s, \d+ kB/, $offset),
	'the build is logged with the filter, its keys, its time and its size');

# a rebuild is logged too
$offset = -s $node->logfile;
$node->safe_psql('postgres', q{SELECT bloom_shared_rebuild('public.m.k')});
is($node->safe_psql('postgres', q{SELECT bloom_shared_wait('public.m.k', 60000)}), 't',
	'the rebuild finishes');
ok($node->wait_for_log(qr/LOG:  built shared bloom filter "public\.m\.k": 5000 keys/, $offset),
	'the rebuild is logged');

$node->stop;
done_testing();
