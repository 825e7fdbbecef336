# Shared filters: a membership check is an oracle on the table's contents, and
# a guard changes a table. So:
#   - managing a guard (bloom_guard, bloom_unguard, bloom_shared_rebuild,
#     bloom_shared_add) requires ownership of the table (membership in the
#     owning role counts, as everywhere in PostgreSQL): 42501 otherwise;
#   - bloom_shared_contains and bloom_shared_get require SELECT on the guarded
#     column (a column-level grant is enough; a grant on another column is
#     not): 42501 otherwise; a revoke takes effect at once;
#   - the definitions table cannot be changed by other roles;
#   - the trigger keeps the filter current for every role that may INSERT or
#     UPDATE, even without SELECT;
#   - a SECURITY DEFINER function owned by the table's owner is the way to
#     let other roles check without SELECT.
# Each role logs in as itself (psql -U), as applications do.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ($sqlstate or 'OK', stdout, stderr) of $sql run as $user.
sub as
{
	my ($node, $user, $sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ]);
	return ('OK', $out, $err) if $rc == 0 && $err !~ /ERROR:/;
	return ($1, $out, $err) if $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ("rc=$rc", $out, $err);
}

sub state_is
{
	my ($node, $user, $sql, $want, $what) = @_;
	my ($st, $out, $err) = as($node, $user, $sql);
	is($st, $want, $what) or diag("$sql as $user: $err");
	return $out;
}

my $node = PostgreSQL::Test::Cluster->new('shared_security');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION bloomfilter;
	CREATE ROLE alice LOGIN;      -- owns users
	CREATE ROLE bob LOGIN;        -- no SELECT on users.username (INSERT, UPDATE, below)
	CREATE ROLE carol LOGIN;      -- SELECT on users.username only
	CREATE ROLE dave LOGIN;       -- SELECT on users.email only
	CREATE ROLE erin LOGIN;       -- member of alice
	CREATE ROLE frank LOGIN;      -- SELECT on the whole table
	GRANT alice TO erin;
	GRANT CREATE ON SCHEMA public TO alice, bob;
	SET ROLE alice;
	CREATE TABLE users (id serial PRIMARY KEY, username text, email text);
	INSERT INTO users (username, email) SELECT 'user' || i, 'mail' || i FROM generate_series(1, 10000) i;
	GRANT SELECT (username) ON users TO carol;
	GRANT SELECT (email) ON users TO dave;
	GRANT SELECT ON users TO frank;
	GRANT INSERT, UPDATE (username), SELECT (id) ON users TO bob;  -- not SELECT (username)
	GRANT USAGE ON SEQUENCE users_id_seq TO bob;
	RESET ROLE;
});

my $U = 'public.users.username';

# ------------------------------------------------------------ management ----
state_is($node, 'bob', "SELECT bloom_guard('users', 'username')", '42501', 'bob (not owner): bloom_guard refused');
state_is($node, 'carol', "SELECT bloom_guard('users', 'username')", '42501', 'carol (SELECT only): bloom_guard refused');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'users'::regclass AND NOT tgisinternal}),
	'0', 'the refused guards left no trigger');
my $name = state_is($node, 'alice', "SELECT bloom_guard('users', 'username')", 'OK', 'alice (owner): bloom_guard');
is($name, $U, 'alice: the guard is named public.users.username');
state_is($node, 'alice', "SELECT bloom_shared_wait('$U', 60000)", 'OK', 'alice: bloom_shared_wait');

for my $who ('bob', 'carol', 'dave', 'frank')
{
	state_is($node, $who, "SELECT bloom_unguard('users', 'username')", '42501', "$who (not owner): bloom_unguard refused");
	state_is($node, $who, "SELECT bloom_shared_rebuild('$U')", '42501', "$who (not owner): bloom_shared_rebuild refused");
	state_is($node, $who, "SELECT bloom_shared_add('$U', 'planted-by-$who'::text)", '42501',
		"$who (not owner): bloom_shared_add refused");
	state_is($node, $who, "SELECT bloom_guard('users', 'email')", '42501', "$who (not owner): bloom_guard of another column refused");
}
is($node->safe_psql('postgres', "SELECT count(*) FROM bloom_shared_filters WHERE name = '$U'"), '1',
	'the guard is still there after the refused unguards');
state_is($node, 'erin', "SELECT bloom_shared_rebuild('$U')", 'OK', 'erin (member of the owning role): bloom_shared_rebuild');
state_is($node, 'alice', "SELECT bloom_shared_wait('$U', 60000)", 'OK', 'rebuild by erin completes');
state_is($node, 'alice', "SELECT bloom_shared_add('$U', 'added-by-alice'::text)", 'OK', 'alice (owner): bloom_shared_add');

# The definitions table: only through the functions.
for my $who ('bob', 'carol')
{
	state_is($node, $who, 'DELETE FROM bloom_shared_definitions', '42501', "$who: DELETE FROM bloom_shared_definitions refused");
	state_is($node, $who, 'TRUNCATE bloom_shared_definitions', '42501', "$who: TRUNCATE bloom_shared_definitions refused");
	state_is($node, $who, 'INSERT INTO bloom_shared_definitions SELECT * FROM bloom_shared_definitions', '42501',
		"$who: INSERT INTO bloom_shared_definitions refused");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM bloom_shared_definitions'), '1', 'the definition is intact');

# --------------------------------------------------------------- checks ----
for my $who ('bob', 'dave')
{
	state_is($node, $who, "SELECT bloom_shared_contains('$U', 'user1'::text)", '42501',
		"$who (no SELECT on username): bloom_shared_contains refused");
	state_is($node, $who, "SELECT bloom_shared_contains('$U', 'user1')", '42501',
		"$who (no SELECT on username): bloom_shared_contains (text overload) refused");
	state_is($node, $who, "SELECT bloom_shared_get('$U')", '42501', "$who (no SELECT on username): bloom_shared_get refused");
}
for my $who ('carol', 'frank', 'alice')
{
	my $out = state_is($node, $who, "SELECT bloom_shared_contains('$U', 'user1'::text)", 'OK',
		"$who (SELECT on username): bloom_shared_contains");
	is($out, 't', "$who: an existing key answers true");
	$out = state_is($node, $who, "SELECT bloom_info(bloom_shared_get('$U'))->>'key_kind'", 'OK',
		"$who (SELECT on username): bloom_shared_get");
	is($out, 'text', "$who: bloom_shared_get returns the filter");
}
state_is($node, 'carol', "SELECT bloom_shared_contains('$U', 'user5000')", 'OK',
	'carol: the text overload (unknown literal) with a column grant');

# A revoke takes effect at once, in a session that has already checked.
my $carol = $node->background_psql('postgres', extra_params => [ '-U', 'carol' ], on_error_stop => 0);
is($carol->query("SELECT bloom_shared_contains('$U', 'user2'::text)"), 't', 'carol\'s session: check allowed');
$node->safe_psql('postgres', 'SET ROLE alice; REVOKE SELECT (username) ON users FROM carol;');
my ($o, $failed) = $carol->query("\\set VERBOSITY verbose\nSELECT bloom_shared_contains('$U', 'user2'::text)");
ok($failed && $carol->{stderr} =~ /42501/, 'carol\'s session: after REVOKE the next check is refused (42501)')
  or diag("got '$o', stderr: $carol->{stderr}");
$carol->quit;
$node->safe_psql('postgres', 'SET ROLE alice; GRANT SELECT (username) ON users TO carol;');

# Checks for other roles through a SECURITY DEFINER function of the owner.
$node->safe_psql('postgres', q{
	SET ROLE alice;
	CREATE FUNCTION username_taken(candidate text) RETURNS boolean
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
		SELECT CASE WHEN NOT bloom_shared_contains('public.users.username', candidate) THEN false
		            ELSE EXISTS (SELECT 1 FROM users WHERE username = candidate) END
	$$;
	REVOKE ALL ON FUNCTION username_taken(text) FROM PUBLIC;
	GRANT EXECUTE ON FUNCTION username_taken(text) TO bob;
});
is((as($node, 'bob', q{SELECT username_taken('user7'), username_taken('nobody-here')}))[1], 't|f',
	'bob: checks through the owner\'s SECURITY DEFINER function');

# ---------------------------------------- writes by roles without SELECT ----
# bob may INSERT and UPDATE but not SELECT: his rows must still reach the
# filter (the trigger runs for him).
state_is($node, 'bob', q{INSERT INTO users (username) VALUES ('inserted-by-bob')}, 'OK', 'bob: INSERT into the guarded table');
state_is($node, 'bob', q{UPDATE users SET username = 'updated-by-bob' WHERE id = 42}, 'OK',
	'bob: UPDATE of the guarded column');
is($node->safe_psql('postgres', qq{
	SELECT bloom_shared_contains('$U', 'inserted-by-bob'::text), bloom_shared_contains('$U', 'updated-by-bob'::text)}),
	't|t', 'rows written by a role without SELECT are found');
is($node->safe_psql('postgres', "SELECT count(*) FROM users WHERE NOT bloom_shared_contains('$U', username)"), '0',
	'every key answers "maybe"');

# ----------------------------------------------- a table bob owns himself ----
$node->safe_psql('postgres', q{
	SET ROLE bob;
	CREATE TABLE bobs (k text);
	INSERT INTO bobs SELECT 'b' || i FROM generate_series(1, 100) i;
});
state_is($node, 'bob', "SELECT bloom_guard('bobs', 'k')", 'OK', 'bob guards his own table');
state_is($node, 'bob', "SELECT bloom_shared_contains('public.bobs.k', 'b1'::text)", 'OK', 'bob checks his own guard');
state_is($node, 'alice', "SELECT bloom_shared_contains('public.bobs.k', 'b1'::text)", '42501',
	'alice (no SELECT on bobs): bob\'s guard refused');
state_is($node, 'alice', "SELECT bloom_unguard('bobs', 'k')", '42501', 'alice cannot unguard bob\'s table');
state_is($node, 'bob', "SELECT bloom_unguard('bobs', 'k')", 'OK', 'bob unguards his own table');

# ---------------------------------------------------- unguard by the owner ----
state_is($node, 'alice', "SELECT bloom_unguard('users', 'username')", 'OK', 'alice (owner): bloom_unguard');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bloom_shared_filters'), '0', 'no filter left');

$node->stop;
done_testing();
