# Helpers shared by the shared-filter TAP tests (test/tap/1*_shared_*.pl).
# Every helper takes the PostgreSQL::Test::Cluster node and database first.
package SharedFilterTest;

use strict;
use warnings;
use Exporter 'import';
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(lit sqlstate sqlstate_of missing state_of poll_for wait_ready);

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

# How many non-NULL keys of $keys_sql (one column) the filter answers "no" for.
sub missing
{
	my ($node, $db, $name, $keys_sql) = @_;
	return $node->safe_psql($db,
		"SELECT count(*) FROM ($keys_sql) s(k) WHERE k IS NOT NULL AND NOT bloom_shared_contains("
		  . lit($name) . ", k)");
}

# The filter's state in the view, '<none>' when it is not listed.
sub state_of
{
	my ($node, $db, $name) = @_;
	return $node->safe_psql($db,
		"SELECT coalesce((SELECT state FROM bloom_shared_filters WHERE name = " . lit($name) . "), '<none>')");
}

# Poll $sql until it returns $expected, for at most $seconds; true if it did.
sub poll_for
{
	my ($node, $db, $sql, $expected, $seconds) = @_;
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		my ($rc, $out) = $node->psql($db, $sql);
		return 1 if $rc == 0 && $out eq $expected;
		usleep(100_000);
	}
	return 0;
}

# Two tests: bloom_shared_wait returns true, and the view says 'ready'.
sub wait_ready
{
	my ($node, $db, $name, $what) = @_;
	my $w = $node->safe_psql($db, "SELECT bloom_shared_wait(" . lit($name) . ", 60000)");
	is($w, 't', "$what: bloom_shared_wait returns true");
	# (after a failed wait, do not poll another 180 s)
	ok($w eq 't' && $node->poll_query_until($db,
		"SELECT state FROM bloom_shared_filters WHERE name = " . lit($name), 'ready'),
		"$what: state is ready");
}

1;
