# Helpers shared by the shared-filter TAP tests (test/tap/1*_shared_*.pl).
# Every helper takes the PostgreSQL::Test::Cluster node and database first.
package SharedFilterTest;

use strict;
use warnings;
use Exporter 'import';
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

# Default timeout of wait_ready (files may lower it).
our $wait_seconds = 60;

our @EXPORT = qw(lit sqlstate sqlstate_of missing state_of poll_for wait_ready
  shared_node server_back postmaster_pid crash_watch server_intact no_false_negatives
  contains_error guard_trigger_list psql_as plant_traps partition_moves_follow
  while_rows_held);

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
	my ($rc, $out, $err) = $node->psql($db,
		"SELECT count(*) FROM ($keys_sql) s(k) WHERE k IS NOT NULL AND NOT bloom_shared_contains("
		  . lit($name) . ", k)");
	return $rc == 0 ? $out : "<error: $err>";
}

# The filter's state in the view, '<none>' when it is not listed.
sub state_of
{
	my ($node, $db, $name) = @_;
	my ($rc, $out, $err) = $node->psql($db,
		"SELECT coalesce((SELECT state FROM bloom_shared_filters WHERE name = " . lit($name) . "), '<none>')");
	return $rc == 0 ? $out : "<error: $err>";
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

# Two tests: bloom_shared_wait returns true, and the view says 'ready'.
sub wait_ready
{
	my ($node, $db, $name, $what, $seconds) = @_;
	my $ms = 1000 * ($seconds // $wait_seconds);
	my ($rc, $w, $err) = $node->psql($db, "SELECT bloom_shared_wait(" . lit($name) . ", $ms)");
	$w = "error: $err" if $rc != 0;
	is($w, 't', "$what: bloom_shared_wait returns true")
	  or diag("$name right after the failed wait: " . join(' ', $node->psql($db,
		"SELECT state || ' last_error=' || coalesce(last_error, '-') FROM bloom_shared_filters WHERE name = " . lit($name))));
	# (after a failed wait, do not poll another 180 s)
	ok($w eq 't' && poll_for($node, $db,
		"SELECT state FROM bloom_shared_filters WHERE name = " . lit($name), 'ready', $seconds // $wait_seconds),
		"$what: state is ready");
}

# A started node with the library preloaded (extra postgresql.conf lines in
# $conf) and the extension created in database postgres.
sub shared_node
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'\n" . ($conf // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');
	return $node;
}

# The postmaster's pid (first line of postmaster.pid).
sub postmaster_pid
{
	my ($node) = @_;
	open(my $fh, '<', $node->data_dir . '/postmaster.pid') or return -1;
	my $pid = <$fh>;
	close $fh;
	chomp $pid;
	return $pid;
}

# Start watching for crashes: the postmaster's pid, the log's size, and a
# session that a crash (any backend's) would end.
sub crash_watch
{
	my ($node) = @_;
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $bg->query('SELECT pg_backend_pid()');
	return { pid => postmaster_pid($node), log => -s $node->logfile, bg => $bg, bgpid => $pid };
}

# Three tests: the same postmaster, no crash in the log since crash_watch,
# and the watching session still answers (no crash reset).
sub server_intact
{
	my ($node, $w, $what) = @_;
	is(postmaster_pid($node), $w->{pid}, "$what: same postmaster pid");
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile, $w->{log});
	unlike($log, qr/terminated by signal|was terminated by exception|reinitializing|PANIC:/,
		"$what: no crash in the server log");
	my $alive = eval { $w->{bg}->query('SELECT 1') } // '';
	is($alive, '1', "$what: a session opened before is still connected (no crash reset)");
}

# One test: no key of $keys_sql answers "no" (an error counts as a failure).
sub no_false_negatives
{
	my ($node, $db, $name, $keys_sql, $what) = @_;
	my ($st, $err, $out) = sqlstate($node, $db,
		"SELECT count(*) FROM ($keys_sql) s(k) WHERE k IS NOT NULL AND NOT bloom_shared_contains("
		  . lit($name) . ", k)");
	my $res = $st eq 'OK' ? $out : "error $st";
	is($res, '0', "$what: no key answers \"no\"") or diag($err);
}

# The SQLSTATE of a check of $name ('OK' when it answers).
sub contains_error
{
	my ($node, $db, $name, $key_sql) = @_;
	return sqlstate_of($node, $db, "SELECT bloom_shared_contains(" . lit($name) . ", $key_sql)");
}

# "tgname:tgenabled" of every bloom_shared_trigger trigger on $rel, sorted,
# comma-separated ('' when none).
sub guard_trigger_list
{
	my ($node, $db, $rel) = @_;
	my ($rc, $out, $err) = $node->psql($db, "SELECT coalesce(string_agg(t.tgname::text OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) t.tgenabled::text, ',' ORDER BY t.tgname), '') "
		  . "FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid "
		  . "WHERE t.tgrelid = " . lit($rel) . "::regclass AND p.proname = 'bloom_shared_trigger'");
	return $rc == 0 ? $out : "<error: $err>";
}

# ($sqlstate or 'OK', stdout, stderr) of $sql run as $user (psql -U).
sub psql_as
{
	my ($node, $db, $user, $sql) = @_;
	my ($st, $err, $out) = sqlstate($node, $db, $sql, user => $user);
	return ($st, $out, $err);
}

# Trap objects in schema $schema (created, owned by role $victim), for
# search_path attacks on the extension's internal queries: operators
# = <> || ~~ on many argument pairs, functions named like pg_catalog's
# (left, lower, quote_ident, format, to_regclass, ...), aggregates (count(*),
# count(text), max, bool_or, array_agg) and pg_event_trigger_dropped_objects().
# Each, when run by anyone but $victim, logs the call in $schema.trap_log and
# tries ALTER ROLE $victim SUPERUSER (errors swallowed), then answers
# correctly.  With liar => 1 they do not escalate but lie instead: = answers
# false, <> true, ~~ false, count 0, bool_or false, and
# pg_event_trigger_dropped_objects() returns nothing.
sub plant_traps
{
	my ($node, $db, $schema, $victim, %opt) = @_;
	my $liar = $opt{liar} ? 1 : 0;
	my $s = $schema;
	my @sql = (
		"CREATE SCHEMA $s AUTHORIZATION $victim",
		"SET ROLE $victim",
		"CREATE TABLE $s.trap_log (who name, su bool, what text, at timestamptz DEFAULT now())",
		"GRANT USAGE ON SCHEMA $s TO PUBLIC",
		"GRANT INSERT, SELECT ON $s.trap_log TO PUBLIC",
		qq{CREATE FUNCTION $s.trap(what text) RETURNS void LANGUAGE plpgsql
		   SET search_path = pg_catalog, pg_temp AS \$f\$
		BEGIN
			IF current_user <> '$victim' THEN
				BEGIN
					INSERT INTO $s.trap_log (who, su, what)
					VALUES (current_user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), what);
				EXCEPTION WHEN OTHERS THEN NULL;
				END;
				IF NOT ${liar}::bool THEN
					BEGIN
						EXECUTE 'ALTER ROLE $victim SUPERUSER';
					EXCEPTION WHEN OTHERS THEN NULL;
					END;
				END IF;
			END IF;
		END \$f\$},
	);
	my @pairs = (
		[ 'int8', 'int4' ], [ 'int8', 'int8' ], [ 'int4', 'int4' ], [ 'int4', 'int8' ], [ 'int2', 'int2' ],
		[ 'name', 'name' ], [ 'name', 'text' ], [ 'text', 'name' ], [ 'text', 'text' ],
		[ 'oid', 'oid' ], [ 'regclass', 'regclass' ], [ 'regclass', 'oid' ], [ 'oid', 'regclass' ],
		[ 'regproc', 'regproc' ], [ 'regprocedure', 'regprocedure' ], [ 'regnamespace', 'regnamespace' ],
		[ '"char"', '"char"' ], [ 'bool', 'bool' ], [ 'int2', 'int4' ], [ 'int4', 'int2' ],
		[ 'text[]', 'text[]' ], [ 'name[]', 'name[]' ]);
	my $i = 0;
	for my $p (@pairs)
	{
		my ($l, $r) = @$p;
		$i++;
		my $eq = $liar ? 'false' : "a OPERATOR(pg_catalog.=) b";
		my $ne = $liar ? 'true' : "a OPERATOR(pg_catalog.<>) b";
		push @sql,
		  qq{CREATE FUNCTION $s.eq$i(a $l, b $r) RETURNS bool LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
			AS \$f\$ BEGIN PERFORM $s.trap('$l = $r'); RETURN $eq; END \$f\$},
		  "CREATE OPERATOR $s.= (LEFTARG = $l, RIGHTARG = $r, FUNCTION = $s.eq$i)",
		  qq{CREATE FUNCTION $s.ne$i(a $l, b $r) RETURNS bool LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
			AS \$f\$ BEGIN PERFORM $s.trap('$l <> $r'); RETURN $ne; END \$f\$},
		  "CREATE OPERATOR $s.<> (LEFTARG = $l, RIGHTARG = $r, FUNCTION = $s.ne$i)";
	}
	$i = 0;
	for my $p ([ 'text', 'text' ], [ 'name', 'text' ], [ 'text', 'name' ], [ 'name', 'name' ])
	{
		my ($l, $r) = @$p;
		$i++;
		push @sql,
		  qq{CREATE FUNCTION $s.cat$i(a $l, b $r) RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
			AS \$f\$ BEGIN PERFORM $s.trap('$l || $r'); RETURN a::text OPERATOR(pg_catalog.||) b::text; END \$f\$},
		  "CREATE OPERATOR $s.|| (LEFTARG = $l, RIGHTARG = $r, FUNCTION = $s.cat$i)",
		  qq{CREATE FUNCTION $s.like$i(a $l, b $r) RETURNS bool LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
			AS \$f\$ BEGIN PERFORM $s.trap('$l ~~ $r'); RETURN } . ($liar ? 'false' : 'a::text OPERATOR(pg_catalog.~~) b::text') . qq{; END \$f\$},
		  "CREATE OPERATOR $s.~~ (LEFTARG = $l, RIGHTARG = $r, FUNCTION = $s.like$i)";
	}
	# functions named like pg_catalog's: [name, argument types, result type, real call]
	my @funcs = (
		[ 'left', 'a text, b int4', 'text', 'pg_catalog.left(a, b)' ],
		[ 'right', 'a text, b int4', 'text', 'pg_catalog.right(a, b)' ],
		[ 'lower', 'a text', 'text', 'pg_catalog.lower(a)' ],
		[ 'upper', 'a text', 'text', 'pg_catalog.upper(a)' ],
		[ 'length', 'a text', 'int4', 'pg_catalog.length(a)' ],
		[ 'substr', 'a text, b int4', 'text', 'pg_catalog.substr(a, b)' ],
		[ 'substr', 'a text, b int4, c int4', 'text', 'pg_catalog.substr(a, b, c)' ],
		[ 'split_part', 'a text, b text, c int4', 'text', 'pg_catalog.split_part(a, b, c)' ],
		[ 'replace', 'a text, b text, c text', 'text', 'pg_catalog.replace(a, b, c)' ],
		[ 'btrim', 'a text', 'text', 'pg_catalog.btrim(a)' ],
		[ 'quote_ident', 'a text', 'text', 'pg_catalog.quote_ident(a)' ],
		[ 'quote_literal', 'a text', 'text', 'pg_catalog.quote_literal(a)' ],
		[ 'format', 'a text', 'text', 'pg_catalog.format(a)' ],
		[ 'format', 'a text, b text', 'text', 'pg_catalog.format(a, b)' ],
		[ 'format', 'a text, b text, c text', 'text', 'pg_catalog.format(a, b, c)' ],
		[ 'format', 'a text, b text, c text, d text', 'text', 'pg_catalog.format(a, b, c, d)' ],
		[ 'to_regclass', 'a text', 'regclass', 'pg_catalog.to_regclass(a)' ],
		[ 'row_security_active', 'a regclass', 'bool', 'pg_catalog.row_security_active(a)' ],
		[ 'row_security_active', 'a text', 'bool', 'pg_catalog.row_security_active(a)' ],
		[ 'has_table_privilege', 'a text, b text', 'bool', 'pg_catalog.has_table_privilege(a, b)' ],
		[ 'has_table_privilege', 'a oid, b text', 'bool', 'pg_catalog.has_table_privilege(a, b)' ],
		[ 'pg_get_triggerdef', 'a oid', 'text', 'pg_catalog.pg_get_triggerdef(a)' ],
		[ 'pg_get_triggerdef', 'a oid, b bool', 'text', 'pg_catalog.pg_get_triggerdef(a, b)' ],
		[ 'array_to_string', 'a text[], b text', 'text', 'pg_catalog.array_to_string(a, b)' ],
		[ 'array_position', 'a text[], b text', 'int4', 'pg_catalog.array_position(a, b)' ],
		[ 'array_position', 'a name[], b name', 'int4', 'pg_catalog.array_position(a, b)' ],
		[ 'starts_with', 'a text, b text', 'bool', 'pg_catalog.starts_with(a, b)' ],
		[ 'current_setting', 'a text', 'text', 'pg_catalog.current_setting(a)' ],
		[ 'set_config', 'a text, b text, c bool', 'text', 'pg_catalog.set_config(a, b, c)' ],
		[ 'now', '', 'timestamptz', 'pg_catalog.now()' ],
	);
	for my $f (@funcs)
	{
		my ($fn, $args, $ret, $call) = @$f;
		push @sql, qq{CREATE FUNCTION $s.$fn($args) RETURNS $ret LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
			AS \$f\$ BEGIN PERFORM $s.trap('$fn($args)'); RETURN $call; END \$f\$};
	}
	my $cnt = $liar ? '0' : 'st OPERATOR(pg_catalog.+) 1';
	push @sql,
	  qq{CREATE FUNCTION $s.cnt0(st int8) RETURNS int8 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
		AS \$f\$ BEGIN PERFORM $s.trap('count(*)'); RETURN $cnt; END \$f\$},
	  "CREATE AGGREGATE $s.count(*) (SFUNC = $s.cnt0, STYPE = int8, INITCOND = '0')";
	for my $t ('text', 'name', 'oid', 'int8', 'regclass')
	{
		push @sql,
		  qq{CREATE FUNCTION $s.cnt_$t(st int8, v $t) RETURNS int8 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
			AS \$f\$ BEGIN PERFORM $s.trap('count($t)'); RETURN CASE WHEN v IS NULL THEN st ELSE $cnt END; END \$f\$},
		  "CREATE AGGREGATE $s.count($t) (SFUNC = $s.cnt_$t, STYPE = int8, INITCOND = '0')";
	}
	push @sql,
	  qq{CREATE FUNCTION $s.max_t(st text, v text) RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
		AS \$f\$ BEGIN PERFORM $s.trap('max(text)'); RETURN pg_catalog.greatest(st, v); END \$f\$},
	  "CREATE AGGREGATE $s.max(text) (SFUNC = $s.max_t, STYPE = text)",
	  qq{CREATE FUNCTION $s.min_t(st text, v text) RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
		AS \$f\$ BEGIN PERFORM $s.trap('min(text)'); RETURN pg_catalog.least(st, v); END \$f\$},
	  "CREATE AGGREGATE $s.min(text) (SFUNC = $s.min_t, STYPE = text)",
	  qq{CREATE FUNCTION $s.bor(st bool, v bool) RETURNS bool LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
		AS \$f\$ BEGIN PERFORM $s.trap('bool_or'); RETURN } . ($liar ? 'false' : 'st OR v') . qq{; END \$f\$},
	  "CREATE AGGREGATE $s.bool_or(bool) (SFUNC = $s.bor, STYPE = bool, INITCOND = 'false')",
	  qq{CREATE FUNCTION $s.aagg(st text[], v text) RETURNS text[] LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
		AS \$f\$ BEGIN PERFORM $s.trap('array_agg(text)'); RETURN pg_catalog.array_append(st, v); END \$f\$},
	  "CREATE AGGREGATE $s.array_agg(text) (SFUNC = $s.aagg, STYPE = text[], INITCOND = '{}')",
	  qq{CREATE FUNCTION $s.pg_event_trigger_dropped_objects(OUT classid oid, OUT objid oid, OUT objsubid int4,
			OUT original bool, OUT normal bool, OUT is_temporary bool, OUT object_type text, OUT schema_name text,
			OUT object_name text, OUT object_identity text, OUT address_names text[], OUT address_args text[])
		RETURNS SETOF record LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
		AS \$f\$ BEGIN PERFORM $s.trap('pg_event_trigger_dropped_objects()');
			IF NOT ${liar}::bool THEN RETURN QUERY SELECT * FROM pg_catalog.pg_event_trigger_dropped_objects(); END IF;
		END \$f\$},
	  "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA $s TO PUBLIC",
	  "RESET ROLE";
	$node->safe_psql($db, join(";\n", @sql) . ";\n");
}

# A guard of layout $layout (counting or cuckoo) on a new table p, list
# partitioned by region (p1, p2), of 1000 rows in p1: an UPDATE moving 500
# rows to p2 (a DELETE from p1, an INSERT into p2: their AFTER triggers
# remove and add the key) removes each key once; deleting them removes them,
# at most $max_fp of them still answer "maybe"; no key of p ever answers
# "no".  Returns the guard's name.
sub partition_moves_follow
{
	my ($node, $layout, $max_fp) = @_;
	my $p = 'public.p.k';
	my $removed = "SELECT keys_removed || '|' || removals_pending FROM bloom_shared_filters WHERE name = '$p'";

	$node->safe_psql('postgres', q{
		CREATE TABLE p (region int, k int) PARTITION BY LIST (region);
		CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1);
		CREATE TABLE p2 PARTITION OF p FOR VALUES IN (2);
		INSERT INTO p SELECT 1, i FROM generate_series(1, 1000) i;
	});
	$node->safe_psql('postgres', "SELECT bloom_guard('p', 'k', 0.01, 2000, layout => '$layout')");
	wait_ready($node, 'postgres', $p, 'partitioned');
	$node->safe_psql('postgres', 'UPDATE p SET region = 2 WHERE k <= 500');
	ok(poll_for($node, 'postgres', $removed, '500|0', 60),
		'partitioned: each row moved to another partition removed its key once (and added it again)');
	no_false_negatives($node, 'postgres', $p, 'SELECT k FROM p', 'partitioned, rows moved');
	$node->safe_psql('postgres', 'DELETE FROM p WHERE region = 2');
	ok(poll_for($node, 'postgres', $removed, '1000|0', 60),
		'partitioned: deletes in a partition remove their keys');
	cmp_ok($node->safe_psql('postgres',
		"SELECT count(*) FROM generate_series(1, 500) g WHERE bloom_shared_contains('$p', g)"), '<=', $max_fp,
		'partitioned: the deleted keys answer "no"');
	no_false_negatives($node, 'postgres', $p, 'SELECT k FROM p', 'partitioned, rows deleted');
	return $p;
}

1;
