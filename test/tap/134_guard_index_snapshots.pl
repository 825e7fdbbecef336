# A guard index and the snapshots that may use it.  A guard built while a
# HOT chain has a recently dead member lacks that member's key, which an
# older snapshot still sees; PostgreSQL marks such an index indcheckxmin and
# the planner ignores it for older transactions.  bloom_guard_contains must
# answer "maybe" there too, never "no" for a row the caller sees.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('snap');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE h (id int PRIMARY KEY, k int) WITH (fillfactor = 50);
	INSERT INTO h VALUES (1, 1);
});

# an old snapshot sees k = 1
my $old = $node->background_psql('postgres');
$old->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($old->query_safe('SELECT count(*) FROM h WHERE k = 1'), '1', 'the old snapshot sees k = 1');

# a HOT update (k not indexed yet), then the guard: built without k = 1
$node->safe_psql('postgres', 'UPDATE h SET k = 2 WHERE id = 1');
$node->safe_psql('postgres', 'CREATE INDEX hg ON h USING bloomguard (k)');
is($node->safe_psql('postgres', q{SELECT indcheckxmin FROM pg_index WHERE indexrelid = 'hg'::regclass}),
	't', 'the guard is marked indcheckxmin');
is($old->query_safe('SELECT count(*) FROM h WHERE k = 1'), '1', 'the old snapshot still sees k = 1');
is($old->query_safe(q{SELECT bloom_guard_contains('hg', 1)}), 't',
	'the old snapshot: the guard answers "maybe" for k = 1');
$old->query_safe('COMMIT');
$old->quit;

# a new transaction does not see k = 1; once the guard's pg_index row is
# older than every snapshot, the guard answers
is($node->safe_psql('postgres', q{SELECT bloom_guard_contains('hg', 2)}), 't', 'a new snapshot: k = 2 is there');
is($node->safe_psql('postgres', q{SELECT bloom_guard_contains('hg', 12345)}), 'f',
	'a new snapshot: the guard answers "no" for an absent key');

# a transaction keeps its locks on the guard and its table to its end
my $s = $node->background_psql('postgres');
$s->query_safe(q{BEGIN; SELECT bloom_guard_contains('hg', 2)});
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_locks
	WHERE relation IN ('h'::regclass, 'hg'::regclass) AND mode = 'AccessShareLock' AND granted}),
	'2', 'a check holds AccessShareLock on the guard and its table until the transaction ends');
$s->query_safe('COMMIT');
$s->quit;

$node->stop;
done_testing();
