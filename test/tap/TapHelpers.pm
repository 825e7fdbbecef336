# Helpers of the TAP tests (test/tap/*.pl).
# Every helper takes the PostgreSQL::Test::Cluster node and database first.
package TapHelpers;

use strict;
use warnings;
use Exporter 'import';
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;


our @EXPORT = qw(lit sqlstate sqlstate_of poll_for while_rows_held server_back bf_node);

# A SQL string literal.
sub lit
{
	my ($s) = @_;
	$s =~ s/'/''/g;
	return "'$s'";
}

# The SQLSTATE of the first error $sql raises ('OK' when none), psql's stderr
# (with VERBOSITY verbose: "ERROR:  42501: ...", then HINT lines) and stdout.
sub sqlstate
{
	my ($node, $db, $sql, %opt) = @_;
	my @extra = $opt{user} ? ('-U', $opt{user}) : ();
	my ($rc, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\n$sql",
		extra_params => \@extra);
	return ('OK', $err, $out) if $rc == 0 && $err !~ /ERROR:/;
	return ($1, $err, $out) if $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ("rc=$rc", $err, $out);
}

# The SQLSTATE alone.
sub sqlstate_of
{
	return (sqlstate(@_))[0];
}

# Poll $sql until it returns $expected, for at most $seconds; true if it did.
sub poll_for
{
	my ($node, $db, $sql, $expected, $seconds) = @_;
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		# (in eval: see server_back)
		my ($rc, $out) = eval { $node->psql($db, $sql) };
		return 1 if defined $rc && $rc == 0 && $out eq $expected;
		usleep(100_000);
	}
	return 0;
}

# Run $a_sql (in a psql of its own, application_name epq_a) while another
# session holds the rows $b_sql changes in an open transaction; commit that
# transaction once $a_sql waits for a lock.  Returns (whether it waited,
# its output and errors, "psql:...:" prefixes removed).
sub while_rows_held
{
	my ($node, $db, $b_sql, $a_sql) = @_;
	my $b = $node->background_psql($db);
	$b->query_safe("BEGIN; $b_sql");
	my ($out, $err) = ('', '');
	my $a = IPC::Run::start(
		[ 'psql', '-X', '-A', '-t', '-q', '-d', $node->connstr($db),
		  '-c', "SET application_name = 'epq_a'; $a_sql" ],
		'>', \$out, '2>', \$err);
	my $waiting = poll_for($node, $db,
		q{SELECT count(*) FROM pg_stat_activity WHERE application_name = 'epq_a' AND wait_event_type = 'Lock'},
		'1', 30);
	$b->query_safe('COMMIT');
	$b->quit;
	$a->finish;
	$err =~ s/^psql:[^\n]*?(ERROR|WARNING)/$1/mg;
	return ($waiting, "$out$err");
}

# True once the server answers again after a crash reset, within the
# default timeout.  Not poll_query_until: a psql started while the server
# still refuses connections exits before reading the query it is given, and
# writing the query to it then dies with EPIPE (seen on PostgreSQL 18).
sub server_back
{
	my ($node) = @_;
	return poll_for($node, 'postgres', 'SELECT 1', '1', $PostgreSQL::Test::Utils::timeout_default);
}

# A started node with the library preloaded (extra postgresql.conf lines in
# $conf) and the extension created in database postgres.
sub bf_node
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'\n" . ($conf // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');
	return $node;
}

1;
