# Round trips of bloomfilter values through pg_dump/pg_restore (plain and
# custom formats) and binary COPY: every value comes back byte-identical.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE filters (id int PRIMARY KEY, bf bloomfilter);
	INSERT INTO filters VALUES
		(1, bloom_empty(10)),                                          -- empty, inline
		(2, bloom_empty(5, 0.3, 'classic') || 'x'::text),              -- 72 bytes: short header
		(3, (SELECT bloom_agg(i, 1000) FROM generate_series(1, 1000) i)), -- inline
		(4, (SELECT bloom_agg('k' || i, 200000, 0.001, 'classic')
		     FROM generate_series(1, 200000) i)),                      -- TOASTed
		(5, (SELECT bloom_agg(md5(i::text)::uuid, 100000)
		     FROM generate_series(1, 100000) i)),                      -- TOASTed
		(6, NULL),
		(7, (SELECT bloom_agg('c' || i, 50000, 0.01, 'counting')
		     FROM generate_series(1, 50000) i) - 'c1'::text),         -- counting, TOASTed
		(8, bloom_empty_scalable(10, 0.1) || 'one'::text),             -- scalable, inline
		(9, bloom_add_all(bloom_empty_scalable(1000, 0.01),
		                  ARRAY(SELECT 's' || i FROM generate_series(1, 100000) i)));
		                                                               -- scalable, 7 layers, TOASTed
	CREATE TABLE cuckoos (id int PRIMARY KEY, cf cuckoofilter);
	INSERT INTO cuckoos VALUES
		(1, cuckoo_empty(10)),
		(2, (SELECT cuckoo_agg('q' || i, 100000, 0.001) FROM generate_series(1, 90000) i)),
		(3, NULL);
});
my $cdigest = q{SELECT string_agg(id || ':' || coalesce(md5(cf::bytea), 'null'), ',' ORDER BY id) FROM cuckoos};
my $cexpected = $node->safe_psql('postgres', $cdigest);
like($cexpected, qr/^1:\w+,2:\w+,3:null$/, 'source cuckoo digests');

my $digest = q{SELECT string_agg(id || ':' || coalesce(md5(bf::bytea), 'null'), ',' ORDER BY id) FROM filters};
my $expected = $node->safe_psql('postgres', $digest);
like($expected, qr/^1:\w+,2:\w+,3:\w+,4:\w+,5:\w+,6:null,7:\w+,8:\w+,9:\w+$/, 'source digests');

my $tmp = PostgreSQL::Test::Utils::tempdir;

# plain format, restored with psql
$node->command_ok([ 'pg_dump', '-d', $node->connstr('postgres'), '-f', "$tmp/plain.sql" ],
	'pg_dump plain');
$node->safe_psql('postgres', 'CREATE DATABASE restored_plain');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
	$node->connstr('restored_plain'), '-f', "$tmp/plain.sql" ], 'restore plain');
is($node->safe_psql('restored_plain', $digest), $expected, 'plain dump/restore: identical values');
is($node->safe_psql('restored_plain', $cdigest), $cexpected, 'plain dump/restore: identical cuckoo filters');

# custom format, restored with pg_restore
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('postgres'), '-f', "$tmp/custom.dump" ],
	'pg_dump custom');
$node->safe_psql('postgres', 'CREATE DATABASE restored_custom');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored_custom'), "$tmp/custom.dump" ],
	'pg_restore custom');
is($node->safe_psql('restored_custom', $digest), $expected, 'custom dump/restore: identical values');
is($node->safe_psql('restored_custom', $cdigest), $cexpected, 'custom dump/restore: identical cuckoo filters');

# the restored filters still answer
is($node->safe_psql('restored_custom', q{
	SELECT count(*) FROM filters f, generate_series(1, 200000) i
	WHERE f.id = 4 AND NOT f.bf @> ('k' || i)}), '0', 'restored classic filter: no false negatives');
is($node->safe_psql('restored_plain', q{
	SELECT count(*) FROM filters f, generate_series(1, 100000) i
	WHERE f.id = 9 AND NOT f.bf @> ('s' || i)}), '0', 'restored scalable filter: no false negatives');

# binary COPY out and in (send/recv)
$node->safe_psql('postgres', qq{
	COPY filters TO '$tmp/filters.bin' WITH (FORMAT binary);
	CREATE TABLE filters_copy (LIKE filters);
	COPY filters_copy FROM '$tmp/filters.bin' WITH (FORMAT binary);
});
is($node->safe_psql('postgres', $digest =~ s/FROM filters/FROM filters_copy/r), $expected,
	'binary COPY: identical values');

# text COPY too
$node->safe_psql('postgres', qq{
	COPY filters TO '$tmp/filters.txt';
	CREATE TABLE filters_text (LIKE filters);
	COPY filters_text FROM '$tmp/filters.txt';
});
is($node->safe_psql('postgres', $digest =~ s/FROM filters/FROM filters_text/r), $expected,
	'text COPY: identical values');

$node->stop;
done_testing();
