# Shared filters: growth past the capacity, and DDL on guarded tables.
#
# Growth: a guard sized for 10,000 keys takes 45,000 in batches of 500; after
# every batch the measured false-positive rate on 20,000 absent keys stays
# under 2 x target (the filter grows by layers, test 119; if a rebuild runs,
# it must come in time), and every key is found.
#
# Growth again after the filter was rebuilt back at its defined capacity (the
# same slot growing twice from the same capacity). Two rebuilds in a row of a
# guard whose table outgrew its capacity: each is one build, sized for the
# rows.
#
# DDL: DROP COLUMN, DROP TABLE (and DROP SCHEMA ... CASCADE), ALTER COLUMN
# TYPE (also to a type or collation a filter cannot hold), TRUNCATE, renames
# (including swapping the guarded column's name with another's), rows that
# bypass ordinary triggers (session_replication_role = replica; DISABLE
# TRIGGER suspends the guard, ENABLE re-arms it), DROP TRIGGER of the guard
# trigger (removes the guard), guard/unguard/DROP TABLE/TRUNCATE/DROP
# EXTENSION rolled back,
# DROP EXTENSION + CREATE EXTENSION, a table of the same name in two
# databases, partitioned tables (ATTACH PARTITION of a populated table),
# pg_dump/pg_restore of a guarded table. Each ends cleaned up or with a clear
# error; never a stale filter answering "no" for a committed key.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

# ($sqlstate or 'OK', stderr, stdout)
sub run_sql
{
	my ($node, $db, $sql) = @_;
	my ($rc, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\n$sql");
	return ('OK', $err, $out) if $rc == 0 && $err !~ /ERROR:/;
	return ($1, $err, $out) if $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ("rc=$rc", $err, $out);
}

# 'unknown' (42704), 'all maybe' (every key answers true) or what went wrong.
sub stale_check
{
	my ($node, $db, $name, $keys_sql) = @_;
	my ($st, $err, $out) = run_sql($node, $db,
		"SELECT count(*) FROM ($keys_sql) s(k) WHERE k IS NOT NULL AND NOT bloom_shared_contains("
		  . lit($name) . ", k)");
	return 'unknown' if $st eq '42704';
	return 'all maybe' if $st eq 'OK' && $out eq '0';
	return $st eq 'OK' ? "$out keys answered \"no\"" : "error $st: $err";
}

sub listed
{
	my ($node, $db, $name) = @_;
	return $node->safe_psql($db, "SELECT count(*) FROM bloom_shared_filters WHERE name = " . lit($name));
}

sub guard_triggers
{
	my ($node, $db, $table) = @_;
	return $node->safe_psql($db, "SELECT count(*) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid "
		  . "WHERE t.tgrelid = " . lit($table) . "::regclass AND p.proname = 'bloom_shared_trigger'");
}

# Ready by itself or after a manual rebuild (for cases where a rolled-back
# DDL may have left the filter waiting for one), then every key found.
sub ready_with_all_keys
{
	my ($node, $db, $name, $keys_sql, $what) = @_;
	my $s = state_of($node, $db, $name);
	if ($s ne 'ready' && $s ne 'building' && $s ne 'rebuilding')
	{
		note("$what: state $s, asking for a rebuild");
		$node->safe_psql($db, "SELECT bloom_shared_rebuild(" . lit($name) . ")");
	}
	wait_ready($node, $db, $name, $what);
	is(missing($node, $db, $name, $keys_sql), '0', "$what: every key answers \"maybe\"");
}

sub make_table
{
	my ($node, $db, $table, $prefix, $n) = @_;
	$node->safe_psql($db, qq{
		CREATE TABLE $table (id serial, k text, other text);
		INSERT INTO $table (k, other) SELECT '$prefix' || i, 'o' || i FROM generate_series(1, $n) i;
	});
}

# ---------------------------------------------------------------- setup ----
my $node = PostgreSQL::Test::Cluster->new('shared_growth_ddl');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'bloomfilter'
shared_buffers = 64MB
log_statement = none
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

# ================================================================ growth ====
$node->safe_psql('postgres', q{
	CREATE TABLE ev (k bigint);
	INSERT INTO ev SELECT i FROM generate_series(1, 5000) i;
	SELECT bloom_guard('ev', 'k', 0.01, 10000);
});
my $EV = 'public.ev.k';
wait_ready($node, 'postgres', $EV, 'growth: initial build');
my $n_absent = 20000;
my $limit = 0.02 + 3 * sqrt(0.02 * 0.98 / $n_absent);    # 2 x target, plus sampling noise

# Insert batches of 500 keys (5% of the initial capacity) up to $upto rows;
# after each batch measure the false-positive rate at once, whatever the
# state (checks answer from the current filter while a rebuild runs), then,
# if a rebuild is running, let it finish (at most 10 s) before the next batch:
# a steady writer, not a flood.
sub growth_pass
{
	my ($label, $from, $upto, $mincap) = @_;
	my ($worst, $worst_at, $worst_state, $slow) = (0, 0, '', 0);
	my $rows = $from;
	while ($rows < $upto)
	{
		$node->safe_psql('postgres', "INSERT INTO ev SELECT i FROM generate_series($rows + 1, $rows + 500) i");
		$rows += 500;
		my ($s, $fpr) = split /\n/, $node->safe_psql('postgres', qq{
			SELECT (SELECT state FROM bloom_shared_filters WHERE name = '$EV');
			SELECT avg(bloom_shared_contains('$EV', -i::bigint)::int)::float8 FROM generate_series(1, $n_absent) i;
		});
		($worst, $worst_at, $worst_state) = ($fpr, $rows, $s) if $fpr > $worst;
		next if $s eq 'ready';
		if (!poll_for($node, 'postgres', "SELECT state FROM bloom_shared_filters WHERE name = '$EV'", 'ready',
				$slow ? 2 : 10))
		{
			$slow++;
			diag("$label: at $rows keys the filter stayed '"
				  . state_of($node, 'postgres', $EV) . "' for more than 10 s; "
				  . $node->safe_psql('postgres', "SELECT capacity || ' capacity, ' || keys_added || ' added, estimated FPR ' || estimated_fpr FROM bloom_shared_filters WHERE name = '$EV'"));
		}
	}
	is($slow, 0, "$label: every growth rebuild finished within 10 s");
	cmp_ok($worst, '<=', $limit,
		"$label: worst measured FPR $worst (at $worst_at keys, state $worst_state) <= 2 x target (+ noise: $limit)");
	wait_ready($node, 'postgres', $EV, "$label: at the end");
	my ($cap, $efpr) = split /\|/, $node->safe_psql('postgres',
		"SELECT capacity, estimated_fpr FROM bloom_shared_filters WHERE name = '$EV'");
	cmp_ok($cap, '>=', $mincap, "$label: capacity grew from 10,000 to $cap (doubling)");
	cmp_ok($efpr, '<=', 0.015, "$label: estimated FPR $efpr <= 1.5 x target at the end");
	is(missing($node, 'postgres', $EV, 'SELECT k FROM ev'), '0', "$label: every one of $upto keys answers \"maybe\"");
	my $fpr_end = $node->safe_psql('postgres',
		"SELECT avg(bloom_shared_contains('$EV', -i::bigint)::int)::float8 FROM generate_series(1, $n_absent) i");
	cmp_ok($fpr_end, '<=', $limit, "$label: measured FPR at the end $fpr_end");
}
growth_pass('growth', 5000, 45000, 40000);

# The filter back at its defined capacity (TRUNCATE, rebuild), then grown
# once (10,000 -> 20,000 or more), back again, and grown again: each time
# the same slot grows from the same capacity, as soon as needed.
sub back_to_defined_capacity
{
	my ($label) = @_;
	$node->safe_psql('postgres', q{
		TRUNCATE ev;
		INSERT INTO ev SELECT i FROM generate_series(1, 5000) i;
		SELECT bloom_shared_rebuild('public.ev.k');
	});
	wait_ready($node, 'postgres', $EV, "$label: rebuilt after TRUNCATE");
	is($node->safe_psql('postgres', "SELECT capacity FROM bloom_shared_filters WHERE name = '$EV'"), '10000',
		"$label: the rebuild is back at the defined capacity");
}
back_to_defined_capacity('growth once');
growth_pass('growth once', 5000, 13000, 20000);
back_to_defined_capacity('growth again');
growth_pass('growth again', 5000, 45000, 40000);

# A second rebuild of a guard whose table outgrew its capacity: the first
# rebuild sized one filter for the rows; the second must be sized for them
# again at once, not at the defined 1,000 keys (saturated, answering "maybe"
# until a second build at twice the keys).
$node->safe_psql('postgres', q{
	CREATE TABLE rb (k bigint);
	SELECT bloom_guard('rb', 'k', 0.01, 1000);
});
wait_ready($node, 'postgres', 'public.rb.k', 'outgrown: guarded');
$node->safe_psql('postgres', 'INSERT INTO rb SELECT i FROM generate_series(1, 6000) i');
for my $round (1, 2)
{
	my $logpos = -s $node->logfile;
	$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('public.rb.k')");
	wait_ready($node, 'postgres', 'public.rb.k', "outgrown: rebuild $round");
	sleep 1;    # a build asked for by the swap would have started by now
	wait_ready($node, 'postgres', 'public.rb.k', "outgrown: rebuild $round, settled");
	my @builds = slurp_file($node->logfile, $logpos) =~ /built shared bloom filter "public\.rb\.k"/g;
	is(scalar(@builds), 1, "outgrown: rebuild $round is one build");
	cmp_ok($node->safe_psql('postgres', "SELECT capacity FROM bloom_shared_filters WHERE name = 'public.rb.k'"),
		'>=', 12000, "outgrown: rebuild $round is sized for twice the 6,000 rows");
	no_false_negatives($node, 'postgres', 'public.rb.k', 'SELECT k FROM rb', "outgrown: rebuild $round");
}

# ============================================================ DROP COLUMN ====
make_table($node, 'postgres', 'dc', 'dc', 10000);
$node->safe_psql('postgres', "SELECT bloom_guard('dc', 'k')");
wait_ready($node, 'postgres', 'public.dc.k', 'drop column');
my ($st, $err) = run_sql($node, 'postgres', 'ALTER TABLE dc DROP COLUMN k');
is($st, 'OK', 'DROP COLUMN of a guarded column succeeds') or diag($err);
is(listed($node, 'postgres', 'public.dc.k'), '0', 'DROP COLUMN: the guard is gone from the view');
is(guard_triggers($node, 'postgres', 'dc'), '0', 'DROP COLUMN: no guard trigger left on the table');
is((run_sql($node, 'postgres', "SELECT bloom_shared_contains('public.dc.k', 'dc1'::text)"))[0], '42704',
	'DROP COLUMN: the name is unknown (42704)');
$node->safe_psql('postgres', q{
	ALTER TABLE dc ADD COLUMN k text;
	INSERT INTO dc (k) SELECT 'readded' || i FROM generate_series(1, 1000) i;
});
is(stale_check($node, 'postgres', 'public.dc.k', 'SELECT k FROM dc'), 'unknown',
	'a new column of the same name: the old guard does not answer for it');
($st) = run_sql($node, 'postgres', "SELECT bloom_guard('dc', 'k')");
is($st, 'OK', 'the new column can be guarded');
ready_with_all_keys($node, 'postgres', 'public.dc.k', 'SELECT k FROM dc', 'new column guarded');

# Dropping ANOTHER column (before the guarded one) leaves the guard working.
make_table($node, 'postgres', 'dc2', 'dctwo', 10000);
$node->safe_psql('postgres', "SELECT bloom_guard('dc2', 'k')");
wait_ready($node, 'postgres', 'public.dc2.k', 'drop another column');
($st, $err) = run_sql($node, 'postgres', 'ALTER TABLE dc2 DROP COLUMN id');
is($st, 'OK', 'DROP COLUMN of an unguarded column succeeds') or diag($err);
$node->safe_psql('postgres', q{INSERT INTO dc2 (k) SELECT 'dctwo-new' || i FROM generate_series(1, 1000) i});
is(missing($node, 'postgres', 'public.dc2.k', 'SELECT k FROM dc2'), '0',
	'after dropping another column: every key (old and new) answers "maybe"');
is(state_of($node, 'postgres', 'public.dc2.k'), 'ready', 'after dropping another column: still ready');

# ============================================================= DROP TABLE ====
make_table($node, 'postgres', 'dt', 'dt', 10000);
my $ndefs = $node->safe_psql('postgres', 'SELECT count(*) FROM bloom_shared_definitions');
$node->safe_psql('postgres', "SELECT bloom_guard('dt', 'k')");
wait_ready($node, 'postgres', 'public.dt.k', 'drop table');
($st, $err) = run_sql($node, 'postgres', 'DROP TABLE dt');
is($st, 'OK', 'DROP TABLE of a guarded table succeeds') or diag($err);
is(listed($node, 'postgres', 'public.dt.k'), '0', 'DROP TABLE: the guard is gone from the view');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bloom_shared_definitions'), $ndefs,
	'DROP TABLE: its definition is deleted');
make_table($node, 'postgres', 'dt', 'dt-again', 1000);
is(stale_check($node, 'postgres', 'public.dt.k', 'SELECT k FROM dt'), 'unknown',
	'a new table of the same name: the old guard does not answer for it');

# DROP TABLE rolled back: the guard keeps working.
make_table($node, 'postgres', 'dtr', 'dtr', 10000);
$node->safe_psql('postgres', "SELECT bloom_guard('dtr', 'k')");
wait_ready($node, 'postgres', 'public.dtr.k', 'drop table rolled back');
$node->safe_psql('postgres', 'BEGIN; DROP TABLE dtr; ROLLBACK;');
$node->safe_psql('postgres', q{INSERT INTO dtr (k) SELECT 'dtr-new' || i FROM generate_series(1, 1000) i});
is(missing($node, 'postgres', 'public.dtr.k', 'SELECT k FROM dtr'), '0',
	'DROP TABLE rolled back: every key, including later inserts, answers "maybe"');
ready_with_all_keys($node, 'postgres', 'public.dtr.k', 'SELECT k FROM dtr', 'DROP TABLE rolled back');

# DROP SCHEMA ... CASCADE
$node->safe_psql('postgres', q{
	CREATE SCHEMA gone;
	CREATE TABLE gone.t (k text);
	INSERT INTO gone.t SELECT 'g' || i FROM generate_series(1, 1000) i;
	SELECT bloom_guard('gone.t', 'k');
});
wait_ready($node, 'postgres', 'gone.t.k', 'drop schema');
($st, $err) = run_sql($node, 'postgres', 'DROP SCHEMA gone CASCADE');
is($st, 'OK', 'DROP SCHEMA CASCADE succeeds') or diag($err);
is(listed($node, 'postgres', 'gone.t.k'), '0', 'DROP SCHEMA CASCADE: the guard is gone');

# ====================================================== ALTER COLUMN TYPE ====
# The guard is rebuilt for the new type, or dropped with a WARNING; never a
# stale "no".
# To a type or collation a filter cannot hold (jsonb; a nondeterministic
# collation): refused, or the guard dropped with a WARNING; the table stays
# writable.
my $have_icu = $node->safe_psql('postgres', q{SELECT count(*) > 0 FROM pg_collation WHERE collprovider = 'i'}) eq 't';
$node->safe_psql('postgres',
	q{CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)}) if $have_icu;
my @alter_cases = (
	[ 'at_int_bigint', 'int', 'bigint', 'i', 'i::bigint' ],
	[ 'at_int_text', 'int', 'text USING k::text', 'i', 'i::text' ],
	[ 'at_varchar_text', 'varchar(20)', 'text', q{'v' || i}, q{'v' || i} ],
	[ 'at_text_jsonb', 'text', 'jsonb USING to_jsonb(k)', q{'j' || i}, q{to_jsonb('j' || i)} ]);
push @alter_cases, [ 'at_text_ci', 'text', 'text COLLATE ci', q{'c' || i}, q{'c' || i} ] if $have_icu;
for my $case (@alter_cases)
{
	my ($t, $from, $to, $before, $after) = @$case;
	my $name = "public.$t.k";
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (k $from);
		INSERT INTO $t SELECT $before FROM generate_series(1, 10000) i;
		SELECT bloom_guard('$t', 'k');
	});
	wait_ready($node, 'postgres', $name, "$t");
	($st, $err) = run_sql($node, 'postgres', "ALTER TABLE $t ALTER COLUMN k TYPE $to");
	note("ALTER COLUMN TYPE $from -> $to: $st");
	if ($st ne 'OK')
	{
		# refused: the guard must be intact
		like($err, qr/ERROR:/, "$from -> $to: refused with a clear error ($st)");
		$node->safe_psql('postgres', "INSERT INTO $t SELECT $before FROM generate_series(10001, 11000) i");
		is(stale_check($node, 'postgres', $name, "SELECT k FROM $t"), 'all maybe',
			"$from -> $to refused: the guard still answers \"maybe\" for every key");
		next;
	}
	my ($ist, $ierr) = run_sql($node, 'postgres', "INSERT INTO $t SELECT $after FROM generate_series(10001, 11000) i");
	is($ist, 'OK', "$from -> $to: the table is still writable") or diag($ierr);
	if (listed($node, 'postgres', $name) eq '0')
	{
		like($err, qr/WARNING/, "$from -> $to: the guard was dropped, with a WARNING");
		is(stale_check($node, 'postgres', $name, "SELECT k FROM $t"), 'unknown',
			"$from -> $to: dropped guard: the name is unknown");
		is(guard_triggers($node, 'postgres', $t), '0', "$from -> $to: dropped guard: no trigger left");
	}
	else
	{
		note("$from -> $to: the guard was kept (rebuilt)");
		is(stale_check($node, 'postgres', $name, "SELECT k FROM $t"), 'all maybe',
			"$from -> $to: at once, every key (old and new) answers \"maybe\"");
		wait_ready($node, 'postgres', $name, "$from -> $to rebuilt");
		is(stale_check($node, 'postgres', $name, "SELECT k FROM $t"), 'all maybe',
			"$from -> $to: rebuilt, every key answers \"maybe\"");
		($ist, $ierr) = run_sql($node, 'postgres', "INSERT INTO $t SELECT $after FROM generate_series(11001, 12000) i");
		is($ist, 'OK', "$from -> $to: rebuilt, the table is writable") or diag($ierr);
		is(stale_check($node, 'postgres', $name, "SELECT k FROM $t"), 'all maybe',
			"$from -> $to: rebuilt, later inserts answer \"maybe\" (the trigger works with the new type)");
	}
}

# ================================================================ TRUNCATE ====
make_table($node, 'postgres', 'tr', 'tr', 10000);
$node->safe_psql('postgres', "SELECT bloom_guard('tr', 'k')");
wait_ready($node, 'postgres', 'public.tr.k', 'truncate');
# TRUNCATE rolled back: every row is still there and found.
$node->safe_psql('postgres', 'BEGIN; TRUNCATE tr; ROLLBACK;');
is(missing($node, 'postgres', 'public.tr.k', 'SELECT k FROM tr'), '0', 'TRUNCATE rolled back: every key answers "maybe"');
ready_with_all_keys($node, 'postgres', 'public.tr.k', 'SELECT k FROM tr', 'TRUNCATE rolled back');
# TRUNCATE and inserts in the same transaction.
$node->safe_psql('postgres', q{
	BEGIN;
	TRUNCATE tr;
	INSERT INTO tr (k) SELECT 'tr-same-xact' || i FROM generate_series(1, 1000) i;
	COMMIT;
	INSERT INTO tr (k) SELECT 'tr-after' || i FROM generate_series(1, 1000) i;
});
is(missing($node, 'postgres', 'public.tr.k', 'SELECT k FROM tr'), '0', 'TRUNCATE: every key inserted since answers "maybe"');
is(state_of($node, 'postgres', 'public.tr.k') =~ /^(ready|building|rebuilding)$/ ? 1 : 0, 1,
	'TRUNCATE: the filter is still listed');
# A rebuild drops the truncated keys' bits.
$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('public.tr.k')");
wait_ready($node, 'postgres', 'public.tr.k', 'rebuild after TRUNCATE');
is(missing($node, 'postgres', 'public.tr.k', 'SELECT k FROM tr'), '0', 'rebuilt after TRUNCATE: every key answers "maybe"');
my $old_share = $node->safe_psql('postgres',
	"SELECT avg(bloom_shared_contains('public.tr.k', 'tr' || i)::int)::float8 FROM generate_series(1, 10000) i");
cmp_ok($old_share, '<=', 0.05, "rebuilt after TRUNCATE: the truncated keys mostly answer \"no\" ($old_share)");

# ================================================================== RENAME ====
# A guard follows its table's name (renaming the table or its other columns
# is fine); renaming the guarded column itself is refused with a clear error
# (unguard first), so the view always names the column the filter holds.
make_table($node, 'postgres', 'rn', 'rn', 5000);
$node->safe_psql('postgres', "SELECT bloom_guard('rn', 'k')");
wait_ready($node, 'postgres', 'public.rn.k', 'rename');
($st, $err) = run_sql($node, 'postgres', 'ALTER TABLE rn RENAME COLUMN k TO k2');
is($st, '0A000', 'renaming the guarded column is refused (0A000)') or diag($err);
like($err, qr/guard/i, 'the refusal says why (the guard)');
$node->safe_psql('postgres', q{
	ALTER TABLE rn RENAME COLUMN other TO other2;
	ALTER TABLE rn RENAME TO rn2;
	INSERT INTO rn2 (k) SELECT 'rn-after' || i FROM generate_series(1, 1000) i;
	CREATE TABLE rn (id serial, k text, other text);
	INSERT INTO rn (k) SELECT 'impostor' || i FROM generate_series(1, 1000) i;
});
is($node->safe_psql('postgres', q{SELECT "table"::text || '.' || "column" FROM bloom_shared_filters WHERE name = 'public.rn.k'}),
	'rn2.k', 'the view follows the renamed table');
is(stale_check($node, 'postgres', 'public.rn.k', 'SELECT k FROM rn2'), 'all maybe',
	'renamed table: every key of the guarded column answers "maybe"');
$node->safe_psql('postgres', "SELECT bloom_shared_rebuild('public.rn.k')");
wait_ready($node, 'postgres', 'public.rn.k', 'renames: rebuilt');
is(stale_check($node, 'postgres', 'public.rn.k', 'SELECT k FROM rn2'), 'all maybe',
	'renamed table, rebuilt: every key answers "maybe" (the rebuild read the renamed table)');

# ====================================================== trigger bypasses ====
# Ways rows arrive without ordinary triggers firing: session_replication_role
# = replica (what logical replication's apply worker and pg_restore
# --disable-triggers use), and triggers disabled by the table's owner.
# Either the guard still sees the rows, or it stops answering "no" for the
# table (or refuses the change): never a stale "no".
make_table($node, 'postgres', 'byp', 'byp', 5000);
$node->safe_psql('postgres', "SELECT bloom_guard('byp', 'k')");
wait_ready($node, 'postgres', 'public.byp.k', 'bypass');
($st, $err) = run_sql($node, 'postgres', q{
	SET session_replication_role = replica;
	INSERT INTO byp (k) SELECT 'byp-replica' || i FROM generate_series(1, 1000) i;
	UPDATE byp SET k = 'byp-replica-upd' || id WHERE id <= 100;
	RESET session_replication_role;
});
is($st, 'OK', 'inserts with session_replication_role = replica') or diag($err);
is(stale_check($node, 'postgres', 'public.byp.k', 'SELECT k FROM byp'), 'all maybe',
	'session_replication_role = replica: every key answers "maybe" (the guard trigger fires ALWAYS)');

make_table($node, 'postgres', 'dis', 'dis', 5000);
$node->safe_psql('postgres', "SELECT bloom_guard('dis', 'k')");
wait_ready($node, 'postgres', 'public.dis.k', 'disabled triggers');
# Disabling the guard's trigger suspends the guard (every check answers
# "maybe"); enabling it again sets it back to ALWAYS and rebuilds.
for my $how ('ALL', 'USER', 'bloom_guard_k')
{
	($st, $err) = run_sql($node, 'postgres', "ALTER TABLE dis DISABLE TRIGGER $how");
	is($st, 'OK', "DISABLE TRIGGER $how on a guarded table succeeds") or diag($err);
	ok(poll_for($node, 'postgres', "SELECT state FROM bloom_shared_filters WHERE name = 'public.dis.k'", 'suspended', 5),
		"DISABLE TRIGGER $how: the guard is suspended");
	$node->safe_psql('postgres', "INSERT INTO dis (k) SELECT 'dis-$how' || i FROM generate_series(1, 1000) i");
	is(stale_check($node, 'postgres', 'public.dis.k', "SELECT 'absent-' || i FROM generate_series(1, 1000) i"),
		'all maybe', "DISABLE TRIGGER $how: every check answers \"maybe\", absent keys too");
	($st, $err) = run_sql($node, 'postgres', "ALTER TABLE dis ENABLE TRIGGER $how");
	is($st, 'OK', "ENABLE TRIGGER $how") or diag($err);
	is($node->safe_psql('postgres', q{SELECT tgenabled FROM pg_trigger WHERE tgrelid = 'dis'::regclass AND tgname = 'bloom_guard_k'}),
		'A', "ENABLE TRIGGER $how: the guard trigger fires ALWAYS again");
	ready_with_all_keys($node, 'postgres', 'public.dis.k', 'SELECT k FROM dis', "DISABLE, then ENABLE TRIGGER $how");
}

# Dropping the guard's trigger removes the guard (NOTICE): its name is
# unknown afterwards, never a stale "no".
make_table($node, 'postgres', 'dtg', 'dtg', 2000);
$node->safe_psql('postgres', "SELECT bloom_guard('dtg', 'k')");
wait_ready($node, 'postgres', 'public.dtg.k', 'drop trigger');
($st, $err) = run_sql($node, 'postgres', 'DROP TRIGGER bloom_guard_k ON dtg');
is($st, 'OK', 'DROP TRIGGER of a guard trigger succeeds') or diag($err);
like($err, qr/NOTICE/, 'DROP TRIGGER of a guard trigger: a NOTICE');
is(listed($node, 'postgres', 'public.dtg.k'), '0', 'DROP TRIGGER: the guard is gone from the view');
$node->safe_psql('postgres', q{INSERT INTO dtg (k) SELECT 'dtg-after' || i FROM generate_series(1, 100) i});
is(stale_check($node, 'postgres', 'public.dtg.k', 'SELECT k FROM dtg'), 'unknown',
	'DROP TRIGGER: the name is unknown (42704)');

# ========================================== guard / unguard rolled back ====
make_table($node, 'postgres', 'tx', 'tx', 5000);
$node->safe_psql('postgres', "BEGIN; SELECT bloom_guard('tx', 'k'); ROLLBACK;");
is(listed($node, 'postgres', 'public.tx.k'), '0', 'bloom_guard rolled back: not listed');
is(guard_triggers($node, 'postgres', 'tx'), '0', 'bloom_guard rolled back: no trigger');
is((run_sql($node, 'postgres', "SELECT bloom_shared_contains('public.tx.k', 'tx1'::text)"))[0], '42704',
	'bloom_guard rolled back: the name is unknown');
$node->safe_psql('postgres', "INSERT INTO tx (k) VALUES ('tx-while-unguarded')");
is($node->safe_psql('postgres', "SELECT bloom_guard('tx', 'k')"), 'public.tx.k', 'guard after a rolled-back guard');
wait_ready($node, 'postgres', 'public.tx.k', 'guard after a rolled-back guard');
is(missing($node, 'postgres', 'public.tx.k', 'SELECT k FROM tx'), '0', 'guard after a rolled-back guard: every key');
$node->safe_psql('postgres', "BEGIN; SELECT bloom_unguard('tx', 'k'); ROLLBACK;");
is(listed($node, 'postgres', 'public.tx.k'), '1', 'bloom_unguard rolled back: still listed');
$node->safe_psql('postgres', q{INSERT INTO tx (k) SELECT 'tx-after-unguard-rollback' || i FROM generate_series(1, 1000) i});
is(missing($node, 'postgres', 'public.tx.k', 'SELECT k FROM tx'), '0',
	'bloom_unguard rolled back: every key, including later inserts, answers "maybe"');
ready_with_all_keys($node, 'postgres', 'public.tx.k', 'SELECT k FROM tx', 'bloom_unguard rolled back');

# ==================================================== two databases, one name ====
for my $db ('db1', 'db2')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
		CREATE EXTENSION bloomfilter;
		CREATE TABLE users (username text);
		INSERT INTO users SELECT '$db-' || i FROM generate_series(1, 20000) i;
	});
}
is($node->safe_psql('db1', "SELECT bloom_guard('users', 'username')"), 'public.users.username', 'db1: guard');
wait_ready($node, 'db1', 'public.users.username', 'db1');
($st, $err) = run_sql($node, 'db2', "SELECT bloom_guard('users', 'username')");
note("db2: guard of a table with the same name: $st");
if ($st eq 'OK')
{
	wait_ready($node, 'db2', 'public.users.username', 'db2');
	is(missing($node, 'db2', 'public.users.username', 'SELECT username FROM users'), '0',
		'db2: every key of db2 answers "maybe"');
}
else
{
	like($err, qr/ERROR:/, "db2: a clear error ($st)");
}
$node->safe_psql('db1', q{INSERT INTO users SELECT 'db1-new' || i FROM generate_series(1, 1000) i});
$node->safe_psql('db2', q{INSERT INTO users SELECT 'db2-new' || i FROM generate_series(1, 1000) i});
is(missing($node, 'db1', 'public.users.username', 'SELECT username FROM users'), '0',
	'db1: every key of db1 answers "maybe" after db2 guarded its own users table');
is(state_of($node, 'db1', 'public.users.username'), 'ready', 'db1: still ready');
if ($st eq 'OK')
{
	is(missing($node, 'db2', 'public.users.username', 'SELECT username FROM users'), '0',
		'db2: every key of db2 answers "maybe" after inserts in both');
	$node->safe_psql('db2', "SELECT bloom_unguard('users', 'username')");
	is(missing($node, 'db1', 'public.users.username', 'SELECT username FROM users'), '0',
		'db1: unguard in db2 leaves db1\'s filter whole');
	is(state_of($node, 'db1', 'public.users.username'), 'ready', 'db1: still ready after unguard in db2');
}
# DROP EXTENSION in db2 leaves db1 alone.
$node->safe_psql('db2', 'DROP EXTENSION bloomfilter CASCADE');
is(state_of($node, 'db1', 'public.users.username'), 'ready', 'db1: still ready after DROP EXTENSION in db2');
is(missing($node, 'db1', 'public.users.username', 'SELECT username FROM users'), '0',
	'db1: every key after DROP EXTENSION in db2');

# ================================================ DROP / CREATE EXTENSION ====
$node->safe_psql('postgres', 'CREATE DATABASE extdb');
$node->safe_psql('extdb', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE users (username text);
	INSERT INTO users SELECT 'e' || i FROM generate_series(1, 20000) i;
	SELECT bloom_guard('users', 'username');
});
my $X = 'public.users.username';
wait_ready($node, 'extdb', $X, 'extension');

# Rolled back: everything keeps working.
$node->safe_psql('extdb', 'BEGIN; DROP EXTENSION bloomfilter CASCADE; ROLLBACK;');
is(guard_triggers($node, 'extdb', 'users'), '1', 'DROP EXTENSION rolled back: the trigger is back');
$node->safe_psql('extdb', q{INSERT INTO users SELECT 'e-after-rollback' || i FROM generate_series(1, 1000) i});
is(missing($node, 'extdb', $X, 'SELECT username FROM users'), '0',
	'DROP EXTENSION rolled back: every key, including later inserts, answers "maybe"');
ready_with_all_keys($node, 'extdb', $X, 'SELECT username FROM users', 'DROP EXTENSION rolled back');

# Dropped for real (CASCADE if the trigger is a dependent object), rows
# inserted while it is gone, then created again.
($st, $err) = run_sql($node, 'extdb', 'DROP EXTENSION bloomfilter');
ok($st eq 'OK' || $st eq '2BP01', "DROP EXTENSION: done, or refused for dependent objects ($st)") or diag($err);
($st, $err) = run_sql($node, 'extdb', 'DROP EXTENSION bloomfilter CASCADE') if $st ne 'OK';
is($st, 'OK', 'DROP EXTENSION (CASCADE) succeeds') or diag($err);
is($node->safe_psql('extdb', q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'users'::regclass}), '0',
	'DROP EXTENSION: no trigger left on the table');
$node->safe_psql('extdb', q{INSERT INTO users SELECT 'e-while-dropped' || i FROM generate_series(1, 1000) i});
$node->safe_psql('extdb', 'CREATE EXTENSION bloomfilter');
is(listed($node, 'extdb', $X), '0', 'CREATE EXTENSION again: the old filter is not listed');
is(stale_check($node, 'extdb', $X, 'SELECT username FROM users'), 'unknown',
	'CREATE EXTENSION again: the old name is unknown, not a stale "no"');
my $out = $node->safe_psql('extdb', qq{
	SELECT bloom_guard('users', 'username');
	SELECT count(*) FROM users WHERE NOT bloom_shared_contains('$X', username);
});
is((split /\n/, $out)[1], '0', 'guard again: at once, every key (incl. those inserted while dropped) answers "maybe"');
wait_ready($node, 'extdb', $X, 'guard after CREATE EXTENSION');
is(missing($node, 'extdb', $X, 'SELECT username FROM users'), '0',
	'guard after CREATE EXTENSION: every key, including those inserted while the extension was dropped');

# Dropped, created and guarded again in one transaction.
$node->safe_psql('extdb', q{
	BEGIN;
	DROP EXTENSION bloomfilter CASCADE;
	INSERT INTO users SELECT 'e-same-xact' || i FROM generate_series(1, 1000) i;
	CREATE EXTENSION bloomfilter;
	SELECT bloom_guard('users', 'username');
	COMMIT;
	INSERT INTO users SELECT 'e-after-same-xact' || i FROM generate_series(1, 1000) i;
});
is(missing($node, 'extdb', $X, 'SELECT username FROM users'), '0',
	'drop + create + guard in one transaction: at once, every key answers "maybe"');
wait_ready($node, 'extdb', $X, 'drop + create + guard in one transaction');
is(missing($node, 'extdb', $X, 'SELECT username FROM users'), '0',
	'drop + create + guard in one transaction: every key answers "maybe"');
is($node->safe_psql('extdb', "SELECT count(*) FROM bloom_shared_filters WHERE name = '$X'"), '1',
	'one filter listed');

# ============================================================ partitioned ====
$node->safe_psql('postgres', q{
	CREATE TABLE parted (k text) PARTITION BY HASH (k);
	CREATE TABLE parted_0 PARTITION OF parted FOR VALUES WITH (MODULUS 2, REMAINDER 0);
	CREATE TABLE parted_1 (k text);
	INSERT INTO parted SELECT 'p' || i FROM generate_series(1, 5000) i
		WHERE satisfies_hash_partition('parted'::regclass, 2, 0, 'p' || i);
	INSERT INTO parted_1 SELECT 'p' || i FROM generate_series(1, 5000) i
		WHERE satisfies_hash_partition('parted'::regclass, 2, 1, 'p' || i);
});
($st, $err) = run_sql($node, 'postgres', "SELECT bloom_guard('parted', 'k')");
note("guard of a partitioned table: $st");
if ($st eq 'OK')
{
	wait_ready($node, 'postgres', 'public.parted.k', 'partitioned');
	is(missing($node, 'postgres', 'public.parted.k', 'SELECT k FROM parted'), '0',
		'partitioned: every key of the partitions answers "maybe"');
	$node->safe_psql('postgres', q{
		INSERT INTO parted SELECT 'p-parent' || i FROM generate_series(1, 1000) i
			WHERE satisfies_hash_partition('parted'::regclass, 2, 0, 'p-parent' || i);
		INSERT INTO parted_0 SELECT 'p-direct' || i FROM generate_series(1, 1000) i
			WHERE satisfies_hash_partition('parted'::regclass, 2, 0, 'p-direct' || i);
	});
	is(missing($node, 'postgres', 'public.parted.k', 'SELECT k FROM parted'), '0',
		'partitioned: rows inserted through the parent and into a partition answer "maybe"');
	# Attaching a partition that already holds rows (no insert trigger fires):
	# refused, or its rows are found.
	($st, $err) = run_sql($node, 'postgres',
		'ALTER TABLE parted ATTACH PARTITION parted_1 FOR VALUES WITH (MODULUS 2, REMAINDER 1)');
	note("ATTACH PARTITION of a populated table: $st");
	is(missing($node, 'postgres', 'public.parted.k', 'SELECT k FROM parted'), '0',
		"partitioned: after ATTACH PARTITION ($st), every key answers \"maybe\"");
	if ($st eq 'OK')
	{
		$node->safe_psql('postgres', q{INSERT INTO parted SELECT 'p-after-attach' || i FROM generate_series(1, 1000) i});
	}
	ready_with_all_keys($node, 'postgres', 'public.parted.k', 'SELECT k FROM parted', 'partitioned');
}
else
{
	like($err, qr/ERROR:/, "a partitioned table cannot be guarded: a clear error ($st)");
	is(guard_triggers($node, 'postgres', 'parted'), '0', 'no trigger left on the partitioned table');
}

# ================================================== pg_dump / pg_restore ====
# The definition is in an extension configuration table: pg_dump keeps it.
# In the restored database the filter must not answer "no" for restored keys.
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
	CREATE EXTENSION bloomfilter;
	CREATE TABLE members (name text);
	INSERT INTO members SELECT 'm' || i FROM generate_series(1, 20000) i;
	SELECT bloom_guard('members', 'name');
});
wait_ready($node, 'src', 'public.members.name', 'dump source');
my $tmp = PostgreSQL::Test::Utils::tempdir;
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', "$tmp/src.dump" ], 'pg_dump of a guarded table');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), "$tmp/src.dump" ], 'pg_restore');
is($node->safe_psql('restored', 'SELECT count(*) FROM bloom_shared_definitions'), '1',
	'pg_dump kept the definition (extension configuration table)');
is(guard_triggers($node, 'restored', 'members'), '1', 'the restored table has its guard trigger');
$node->safe_psql('restored', q{INSERT INTO members SELECT 'm-restored' || i FROM generate_series(1, 1000) i});
is(stale_check($node, 'restored', 'public.members.name', 'SELECT name FROM members'), 'all maybe',
	'restored: every key (restored and inserted since) answers "maybe"');
ready_with_all_keys($node, 'restored', 'public.members.name', 'SELECT name FROM members', 'restored');
is(missing($node, 'src', 'public.members.name', 'SELECT name FROM members'), '0',
	'the source database\'s filter is unaffected by the restore');

$node->stop;
done_testing();
