
# Copyright (c) the bloomfilter authors
#
# Review R6: attacks on planner gates and partition slot changes.  Every
# query is compared with its result under bloomfilter.planner_guards = off.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

my $node = shared_node('main', qq{
bloomfilter.max_shared_filters = 16
jit = off
});
my $name = 'public.events.event_id';

$node->safe_psql('postgres', q{
CREATE TABLE events (event_id int8 NOT NULL, day int NOT NULL, payload text)
	PARTITION BY RANGE (day);
CREATE TABLE events_0 PARTITION OF events FOR VALUES FROM (0) TO (10);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM (10) TO (20);
INSERT INTO events SELECT i, i % 20, 'p' FROM generate_series(1, 2000) i;
CREATE INDEX ON events (event_id);
ANALYZE events;
SELECT bloom_guard('events', 'event_id');
});
wait_ready($node, 'postgres', $name, 'setup');

sub same
{
	my ($what, $sql) = @_;
	my $on = $node->safe_psql('postgres', $sql);
	my $off = $node->safe_psql('postgres', "SET bloomfilter.planner_guards = off; $sql");
	is($on, $off, "$what: guards on and off give the same rows");
}

# A row written into a partition while it is detached, re-attached in the
# same transaction: the partition's old filter (freed only at commit) must
# not answer "no" for it, neither in the transaction nor after it.
my $sql = q{
BEGIN;
ALTER TABLE events DETACH PARTITION events_1;
INSERT INTO events_1 VALUES (5000001, 15, 'written while detached');
UPDATE events_1 SET event_id = 5000002 WHERE event_id = 11;
ALTER TABLE events ATTACH PARTITION events_1 FOR VALUES FROM (10) TO (20);
SELECT count(*) FROM events WHERE event_id IN (5000001, 5000002);
COMMIT};
my $in_tx = $node->safe_psql('postgres', $sql);
is($in_tx, '2', 'detached, written, re-attached in one transaction: both rows found in it');
same('after that transaction', 'SELECT event_id FROM events WHERE event_id IN (5000001, 5000002) ORDER BY 1');
wait_ready($node, 'postgres', $name, 'after the re-attach');
same('after bloom_shared_wait', 'SELECT event_id FROM events WHERE event_id IN (5000001, 5000002) ORDER BY 1');
no_false_negatives($node, 'postgres', $name, 'SELECT event_id FROM events', 'after the re-attach');

$node->stop;
done_testing();
