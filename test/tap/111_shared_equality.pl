# Shared filters follow PostgreSQL's = like stored values do: a check of a
# key equal (as "column = key" resolves) to a committed row's key answers
# "maybe", or is refused with an error — never a silent "no".
#
#   an integer column checked with oids (int4 = oid reads the 32 bits
#   unsigned: -1 = 4294967295) and an oid column checked with integers;
#   a varchar column whose values end in blanks checked with char(n) (which
#   ignores trailing blanks) and with text; a char(n) column checked with
#   blank-padded varchar; string literals; a citext column cannot be guarded
#   (0A000).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $node = PostgreSQL::Test::Cluster->new('shared_equality');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE EXTENSION citext;
	CREATE TABLE ints (k int4);
	INSERT INTO ints SELECT -i * 7919 FROM generate_series(1, 2000) i;
	INSERT INTO ints VALUES (-1), (-2147483648), (2147483647), (0);
	CREATE TABLE oids (k oid);
	INSERT INTO oids SELECT (2147483648 + i * 1000003)::oid FROM generate_series(1, 2000) i;
	INSERT INTO oids VALUES (4294967295), (2147483648);
	CREATE TABLE vc (k varchar(20));
	INSERT INTO vc SELECT 'v' || i || repeat(' ', i % 4) FROM generate_series(1, 2000) i;
	CREATE TABLE bp (k char(12));
	INSERT INTO bp SELECT 'b' || i FROM generate_series(1, 2000) i;
	CREATE TABLE ci (k citext);
	SELECT bloom_guard('ints', 'k'), bloom_guard('oids', 'k'), bloom_guard('vc', 'k'), bloom_guard('bp', 'k');
});
wait_ready($node, 'postgres', "public.$_.k", $_) for qw(ints oids vc bp);

# each equality holds for every row (else the test would prove nothing)
is($node->safe_psql('postgres', q{
	SELECT (SELECT bool_and(k = k::oid) FROM ints WHERE k < 0)
	   AND (SELECT bool_and(k = k::int4) FROM oids)
	   AND (SELECT bool_and(k = rtrim(k)::char(20)) FROM vc)
	   AND (SELECT bool_and(k = (k || '   ')::varchar) FROM bp)}), 't',
	'the checked keys are equal to the rows\' keys under =');

is(missing($node, 'postgres', 'public.ints.k', 'SELECT k::oid FROM ints WHERE k < 0'), '0',
	'integer column: every negative key found as the oid it equals');
is(missing($node, 'postgres', 'public.oids.k', 'SELECT k::int4 FROM oids'), '0',
	'oid column: every key above 2^31 - 1 found as the integer it equals');
is(missing($node, 'postgres', 'public.oids.k', 'SELECT (-1)::int2'), '0',
	'oid column: 4294967295 found as smallint -1');
is(missing($node, 'postgres', 'public.vc.k', 'SELECT rtrim(k)::char(20) FROM vc'), '0',
	'varchar column: every key found as char(n), which ignores trailing blanks');
is(missing($node, 'postgres', 'public.vc.k', 'SELECT k::text FROM vc'), '0',
	'varchar column: every key found as text, blanks included');
is(missing($node, 'postgres', 'public.vc.k', 'SELECT k FROM vc'), '0',
	'varchar column: every key found as itself');
is(missing($node, 'postgres', 'public.bp.k', q{SELECT (rtrim(k) || '  ')::varchar FROM bp}), '0',
	'char(n) column: every key found as blank-padded varchar');
is($node->safe_psql('postgres', q{
	SELECT bloom_shared_contains('public.vc.k', 'v3   ')
	   AND bloom_shared_contains('public.vc.k', 'v3')
	   AND bloom_shared_contains('public.bp.k', 'b7 ')
	   AND bloom_shared_contains('public.ints.k', '-1')}), 't',
	'string literals: read as the column\'s type, found');
is(sqlstate_of($node, 'postgres', q{SELECT bloom_guard('ci', 'k')}), '0A000',
	'a citext column cannot be guarded');

# a key added after the build (through the trigger) follows the same rules
$node->safe_psql('postgres', q{
	INSERT INTO ints VALUES (-5);
	INSERT INTO vc VALUES ('late  ');
});
is($node->safe_psql('postgres', q{
	SELECT bloom_shared_contains('public.ints.k', 4294967291::oid)
	   AND bloom_shared_contains('public.vc.k', 'late'::char(8))}), 't',
	'keys added by the trigger: found as oid and as char(n)');

$node->stop;
done_testing();
