# Logical replication of bloomfilter columns between two clusters, in text
# and in binary mode: the subscriber's values are byte-identical.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->start;
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->start;

my $schema = q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE f_text (id int PRIMARY KEY, bf bloomfilter);
	CREATE TABLE f_binary (id int PRIMARY KEY, bf bloomfilter);
};
$pub->safe_psql('postgres', $schema);
$sub->safe_psql('postgres', $schema);

my $load = q{
	INSERT INTO %1$s VALUES
		(1, bloom_empty(10)),
		(2, bloom_empty(5, 0.3, 'classic') || 'x'::text),
		(3, (SELECT bloom_agg(i, 5000) FROM generate_series(1, 5000) i)),
		(4, (SELECT bloom_agg('k' || i, 100000, 0.01, 'classic') FROM generate_series(1, 100000) i));
};
# rows present before the subscription (initial copy) ...
$pub->safe_psql('postgres', sprintf($load, 'f_text') . sprintf($load, 'f_binary'));

$pub->safe_psql('postgres', 'CREATE PUBLICATION p_text FOR TABLE f_text');
$pub->safe_psql('postgres', 'CREATE PUBLICATION p_binary FOR TABLE f_binary');
my $conn = $pub->connstr() . ' dbname=postgres';
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION s_text CONNECTION '$conn' PUBLICATION p_text WITH (binary = false)");
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION s_binary CONNECTION '$conn' PUBLICATION p_binary WITH (binary = true)");
$sub->wait_for_subscription_sync($pub, 's_text');
$sub->wait_for_subscription_sync($pub, 's_binary');

# ... and changes streamed afterwards
for my $t ('f_text', 'f_binary')
{
	$pub->safe_psql('postgres', qq{
		INSERT INTO $t SELECT 5, bloom_agg(md5(i::text), 50000) FROM generate_series(1, 50000) i;
		UPDATE $t SET bf = bf || 'added later'::text WHERE id = 4;
		UPDATE $t SET bf = bloom_add_all(bf, ARRAY[7, 8, 9]) WHERE id = 3;
	});
}
$pub->wait_for_catchup('s_text');
$pub->wait_for_catchup('s_binary');

for my $t ('f_text', 'f_binary')
{
	my $digest = "SELECT string_agg(id || ':' || md5(bf::bytea), ',' ORDER BY id) FROM $t";
	my $want = $pub->safe_psql('postgres', $digest);
	like($want, qr/^1:\w+,2:\w+,3:\w+,4:\w+,5:\w+$/, "$t: publisher has 5 filters");
	is($sub->safe_psql('postgres', $digest), $want, "$t: subscriber values are identical");
	is($sub->safe_psql('postgres', "SELECT bf @> 'added later'::text FROM $t WHERE id = 4"), 't',
		"$t: an update replicated");
}

$sub->stop;
$pub->stop;
done_testing();
