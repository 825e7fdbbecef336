# Differential random-query test of the planner's gates on guard indexes:
# the generator, the schema and the phases of 128_differential.pl
# (DiffQueries.pm), with the tables guarded by bloomguard indexes instead of
# 1.1's shared guards: a plain table (int4, int8, text, uuid, varchar), an
# inheritance parent whose children are guarded on some columns only, a
# partitioned table guarded through a partitioned index and on two of its
# partitions, small guards (pc) that grow layers under the writer, an empty
# table.  A query returns the same rows (or fails with the same SQLSTATE)
# with bloomfilter.planner_guards on as off: under READ COMMITTED (on, off,
# on again), REPEATABLE READ and SERIALIZABLE (in savepoints of one
# transaction), and next to a concurrent writer whose DDL is the guards':
# CREATE INDEX [CONCURRENTLY] and DROP INDEX [CONCURRENTLY] of a guard,
# REINDEX [CONCURRENTLY], DETACH and ATTACH of a guarded partition with a
# write in between.
#
# The library is not preloaded: session_preload_libraries loads it, as a
# server without shared_preload_libraries would (the gates need nothing
# more).  Environment as 128_differential.pl (BF_DIFF_SEED, BF_DIFF_QUERIES,
# BF_DIFF_SHOW, BF_DIFF_DUMP); the mismatches are in
# tmp_check/log/135_guard_index_differential_mismatches.txt.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use DiffQueries;

my $seed = $ENV{BF_DIFF_SEED} // 20261202;
my $queries = $ENV{BF_DIFF_QUERIES} // 2000;
my $started = time;
note "seed $seed, $queries cases in phase 1 (BF_DIFF_SEED, BF_DIFF_QUERIES)";

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', qq{
session_preload_libraries = 'bloomfilter'
max_connections = 30
jit = off
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
deadlock_timeout = 100ms
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

$DiffQueries::guards = 'index';
$node->safe_psql('postgres', DiffQueries::schema_sql());
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'bloomguard' AND i.indisvalid}),
	'22', 'the guard indexes are there (pp: the partitioned index and its 5 partitions)');

DiffQueries::drive($node, name => '135_guard_index_differential', seed => $seed,
	queries => $queries, started => $started, markers => [qw(BloomGuard bloom_guard_elements)]);
done_testing();
