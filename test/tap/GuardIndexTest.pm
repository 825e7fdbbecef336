# Helpers shared by the guard index TAP tests (test/tap/13*_guard_index_*.pl).
# Every helper takes the PostgreSQL::Test::Cluster node first and runs its
# query in database postgres; trailing named options change that:
#   db => NAME        another database
#   params => [...]   more arguments of $node->psql / safe_psql, such as
#                     (extra_params => [ '-U', ROLE ])
package GuardIndexTest;

use strict;
use warnings;
use Carp;
use Exporter 'import';
use Test::More;
use TapHelpers qw(lit);

our @EXPORT = qw(false_sql true_sql false_of true_of all_found mostly_false one);

# The database and the extra psql arguments of the options %opt (dies on an
# unknown option, so that a misspelt one is not silently ignored).
sub _target
{
	my (%opt) = @_;
	my @unknown = grep { $_ ne 'db' && $_ ne 'params' } sort keys %opt;
	croak "GuardIndexTest: unknown option(s) @unknown" if @unknown;
	return ($opt{db} // 'postgres', @{ $opt{params} // [] });
}

# The output of the one-value query $sql, "<error: stderr>" when it fails.
sub _answer
{
	my ($node, $sql, %opt) = @_;
	my ($db, @params) = _target(%opt);
	my ($rc, $out, $err) = $node->psql($db, $sql, @params);
	return $rc == 0 ? $out : "<error: $err>";
}

# A query of "keys answering false/keys checked" of bloom_guard_contains($guard, k)
# over the non-NULL keys of $keys_sql (one column; the table as it sees it).
sub false_sql
{
	my ($guard, $keys_sql) = @_;
	return "SELECT count(*) FILTER (WHERE NOT bloom_guard_contains(" . lit($guard) . ", k)) || '/' || count(*) "
	  . "FROM ($keys_sql) s(k) WHERE k IS NOT NULL";
}

# A query of "keys answering true/keys checked" of bloom_guard_contains($guard, k)
# over the keys of $keys_sql (keys not in the table).
sub true_sql
{
	my ($guard, $keys_sql) = @_;
	return "SELECT count(*) FILTER (WHERE bloom_guard_contains(" . lit($guard) . ", k)) || '/' || count(*) "
	  . "FROM ($keys_sql) s(k)";
}

# The result of false_sql ("<error: ...>" when it fails).
sub false_of
{
	my ($node, $guard, $keys_sql, %opt) = @_;
	return _answer($node, false_sql($guard, $keys_sql), %opt);
}

# The result of true_sql ("<error: ...>" when it fails).
sub true_of
{
	my ($node, $guard, $keys_sql, %opt) = @_;
	return _answer($node, true_sql($guard, $keys_sql), %opt);
}

# One test: all $n keys of $keys_sql answer true ("0/$n" answer false).
sub all_found
{
	my ($node, $guard, $keys_sql, $n, $what, %opt) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is(false_of($node, $guard, $keys_sql, %opt), "0/$n", "$what: all $n keys answer true");
}

# Two tests: $n absent keys of $keys_sql were checked, and at most 5% of
# them answered true (the guard really says "no").
sub mostly_false
{
	my ($node, $guard, $keys_sql, $n, $what, %opt) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $r = true_of($node, $guard, $keys_sql, %opt);
	my ($t, $checked) = $r =~ m{^(\d+)/(\d+)$} ? ($1, $2) : (-1, -1);
	is($checked, $n, "$what: $n absent keys checked") or diag($r);
	ok($t >= 0 && $t <= 0.05 * $n, "$what: absent keys answer false ($t of $n answer true)");
}

# The output of safe_psql of $sql (dies when it fails).
sub one
{
	my ($node, $sql, %opt) = @_;
	my ($db, @params) = _target(%opt);
	return $node->safe_psql($db, $sql, @params);
}

1;
