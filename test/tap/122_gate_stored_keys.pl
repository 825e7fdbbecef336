# Guard indexes checked with keys a table hands over out of line (TOAST
# pointers, compressed or not): the planner's gate and bloom_guard_contains
# (and 1.1's bloom_shared_contains) read the key's value, so every stored key is found and a gated query gives
# the rows of the same query planned without gates.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('gate_stored');
$node->init;
$node->append_conf('postgresql.conf', qq{
session_preload_libraries = 'bloomfilter'
jit = off
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE users (id int PRIMARY KEY, username text);
CREATE INDEX ON users USING hash (username);
ALTER TABLE users ALTER username SET STORAGE EXTERNAL;
INSERT INTO users SELECT g, 'u' || g || repeat(md5(g::text), 80)
FROM generate_series(1, 50) g;
ALTER TABLE users ALTER username SET STORAGE EXTENDED;
INSERT INTO users SELECT g, string_agg(md5(g::text || i::text) || repeat('q', 32), '')
FROM generate_series(51, 60) g, generate_series(1, 400) i GROUP BY g;
INSERT INTO users SELECT g, 'short ' || g FROM generate_series(61, 100) g;
CREATE TABLE probes (name text);
ALTER TABLE probes ALTER name SET STORAGE EXTERNAL;
INSERT INTO probes SELECT username FROM users WHERE id <= 50 OR id > 60;
ALTER TABLE probes ALTER name SET STORAGE EXTENDED;
INSERT INTO probes SELECT username FROM users WHERE id BETWEEN 51 AND 60;
CREATE INDEX users_guard ON users USING bloomguard (username);
});

is($node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE pg_column_compression(name) IS NOT NULL) || ' compressed, '
       || count(*) FILTER (WHERE pg_column_size(name) > 2000) || ' long'
FROM probes}), '10 compressed, 60 long', 'the keys: out of line, compressed or not, and short');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM probes WHERE NOT bloom_guard_contains('users_guard', name)
    OR NOT bloom_shared_contains('public.users.username', name)}),
	'0', 'bloom_guard_contains and bloom_shared_contains find every key read out of line');

my $query = q{SELECT count(*) FROM probes p
WHERE EXISTS (SELECT 1 FROM users u WHERE u.username = p.name OFFSET 0)};
my $setup = 'SET enable_hashjoin = off; SET enable_mergejoin = off;';
like($node->safe_psql('postgres', "$setup EXPLAIN (COSTS OFF) $query"),
	qr/BloomGuard\)\n.*Guard: users_guard\n.*Guard Keys: p\.name/,
	'the subquery scan is gated on the outer column');
is($node->safe_psql('postgres', "$setup $query"), '100',
	'a gate given keys read out of line skips no scan that finds a row');
is($node->safe_psql('postgres', "$setup SET bloomfilter.planner_guards = off; $query"),
	'100', 'the same query without gates');

$node->stop;
done_testing();
