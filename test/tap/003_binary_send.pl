# Binary transfer of bloomfilter and bloomfilter[]: logical replication with
# binary = true, and binary COPY of bloomfilter[] out and back in.  Inline
# (short and 4-byte header) and TOASTed filters, as plain columns and as
# array elements.  The walsender frees what send returns: the publisher must
# stay up (same postmaster, no crashed process) and the subscriber must get
# byte-identical values.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->start;
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->start;

my $schema = q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE t (id int PRIMARY KEY, bf bloomfilter, bfs bloomfilter[]);
};
$pub->safe_psql('postgres', $schema);
$sub->safe_psql('postgres', $schema);

# short: 72 bytes (a 1-byte header in the row); inline: 1344 bytes (4-byte
# header, not TOASTed); big: about 1 MB (TOASTed)
my $filters = q{
	CREATE TEMP TABLE k AS SELECT
		bloom_empty(1, 0.5, 'classic') || 7 AS short,
		bloom_add(bloom_empty(1000), 'x'::text) AS inline,
		(SELECT bloom_agg(i, 800000, 0.01) FROM generate_series(1, 1000) i) AS big;
};
my $load = $filters . q{
	INSERT INTO t SELECT %1$d + 0, short, ARRAY[short] FROM k;
	INSERT INTO t SELECT %1$d + 1, inline, ARRAY[inline, inline || 'y'::text] FROM k;
	INSERT INTO t SELECT %1$d + 2, big, ARRAY[big, inline, NULL, short] FROM k;
	INSERT INTO t SELECT %1$d + 3, NULL, ARRAY[[inline, short], [NULL, inline]] FROM k;
	INSERT INTO t SELECT %1$d + 4, inline, '{}' FROM k;
};

# rows present before the subscription (initial copy) ...
$pub->safe_psql('postgres', sprintf($load, 10));
$pub->safe_psql('postgres', 'CREATE PUBLICATION p FOR TABLE t');

# the publisher's postmaster, from its postmaster.pid
sub postmaster_pid
{
	my $pidfile = $pub->data_dir . '/postmaster.pid';
	return -f $pidfile ? (split /\n/, slurp_file($pidfile))[0] : 'none';
}

my $start_time = $pub->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $postmaster_pid = postmaster_pid();
my $watch = $pub->background_psql('postgres');
my $backend_pid = $watch->query_safe('SELECT pg_backend_pid()');

my $conn = $pub->connstr() . ' dbname=postgres';
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION s CONNECTION '$conn' PUBLICATION p WITH (binary = true)");
$sub->wait_for_subscription_sync($pub, 's');

# ... and changes streamed afterwards, in binary: inserts, an update of every
# kind of value, and a delete
is( scalar $pub->psql(
		'postgres', sprintf($load, 20) . q{
	UPDATE t SET bf = bf || 'later'::text, bfs = bfs || (SELECT inline FROM k) WHERE id IN (11, 21);
	UPDATE t SET bfs = ARRAY[bf, (SELECT big FROM k)] WHERE id = 20;
	UPDATE t SET bf = (SELECT big FROM k) || 424242 WHERE id = 24;
	DELETE FROM t WHERE id = 13;
}),
	0,
	'changes written on the publisher');

# Wait for the subscriber to apply everything, failing at once if a server
# process of the publisher crashed (with restart_after_crash on, a walsender
# crashing on every restart would only show as a timeout).
sub caught_up
{
	my $target = $pub->lsn('insert');
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;

	while (time() < $deadline)
	{
		return 0 if slurp_file($pub->logfile) =~ /terminated by signal/;
		my ($rc, $out) = $pub->psql('postgres',
			"SELECT replay_lsn >= '$target' FROM pg_stat_replication WHERE application_name = 's'");
		return 1 if $rc == 0 && $out eq 't';
		usleep(100_000);
	}
	return 0;
}
ok(caught_up(), 'the subscriber applied the binary changes');

# the publisher stayed up: same postmaster, and no restart after a crash
# (which would have ended every backend, the watching session included)
unlike(slurp_file($pub->logfile), qr/terminated by signal/, 'no server process crashed');
is(postmaster_pid(), $postmaster_pid, 'same postmaster');
is($pub->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_time,
	'postmaster not restarted');
is(eval { $watch->query_safe('SELECT pg_backend_pid()') }, $backend_pid,
	'a session opened before the replication is still connected');
eval { $watch->quit };

# every value, and every array element, by its bytes
my $digest = q{
	SELECT string_agg(id || ':' || coalesce(md5(bf::bytea), 'null') || ':'
		|| coalesce(array_dims(bfs), '-') || ':'
		|| coalesce((SELECT string_agg(coalesce(md5(e::bytea), 'null'), '/' ORDER BY n)
		             FROM unnest(bfs) WITH ORDINALITY AS u(e, n)), 'null'),
		',' ORDER BY id)
	FROM t
};
my $want = $pub->safe_psql('postgres', $digest);
note("publisher: $want");
like($want, qr/^10:\w+:\[1:1\]:\w+,11:.*,24:\w+:-:null$/, 'publisher has the rows');
unlike($want, qr/(^|,)13:/, 'the deleted row is gone');
is($sub->safe_psql('postgres', $digest), $want, 'subscriber values are byte-identical');
is($sub->safe_psql('postgres',
		q{SELECT bf @> 'later'::text AND bfs[3] @> 'x'::text FROM t WHERE id = 21}),
	't', 'an update of inline values replicated');
is($sub->safe_psql('postgres',
		q{SELECT pg_column_size(bfs[2]) > 900000 FROM t WHERE id = 20}),
	't', 'an update to a TOASTed array element replicated');

# binary COPY of bloomfilter[] (array_send out, array_recv in), then back into
# a table: byte-identical
my $file = $pub->basedir . '/bfs.bin';
$pub->safe_psql('postgres', "COPY t (id, bfs) TO '$file' WITH (FORMAT binary)");
$pub->safe_psql('postgres', qq{
	CREATE TABLE t_copy (id int PRIMARY KEY, bfs bloomfilter[]);
	COPY t_copy FROM '$file' WITH (FORMAT binary);
});
my $arrays = q{
	SELECT string_agg(id || ':' || coalesce(array_dims(bfs), '-') || ':'
		|| coalesce((SELECT string_agg(coalesce(md5(e::bytea), 'null'), '/' ORDER BY n)
		             FROM unnest(bfs) WITH ORDINALITY AS u(e, n)), 'null'),
		',' ORDER BY id)
	FROM %s
};
is($pub->safe_psql('postgres', sprintf($arrays, 't_copy')),
	$pub->safe_psql('postgres', sprintf($arrays, 't')),
	'binary COPY of bloomfilter[]: byte-identical after the round trip');
is($pub->safe_psql('postgres',
		'SELECT count(*) FROM t JOIN t_copy USING (id) WHERE array_send(t.bfs) = array_send(t_copy.bfs)'),
	$pub->safe_psql('postgres', 'SELECT count(*) FROM t WHERE bfs IS NOT NULL'),
	'binary COPY of bloomfilter[]: array_send gives the same bytes');
unlike(slurp_file($pub->logfile), qr/terminated by signal/, 'no server process crashed in COPY');

$sub->stop;
$pub->stop;
done_testing();
