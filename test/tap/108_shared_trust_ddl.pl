# Shared filters (1.1 rules): DDL manoeuvres that could make a filter answer
# "no" for a stored key.  Each manoeuvre ends with zero keys of the guarded
# table (children and partitions included) for which bloom_shared_contains
# answers false, or, where the rules remove the guard, with 42704 for its
# name (never a "no").
#
#   - CREATE OR REPLACE TRIGGER over the guard's trigger: the same
#     definition (set back to ALWAYS: replica writes still found), another
#     shape, a WHEN clause, a column list (42P17), another filter's name
#     (never a "no"), another function (suspended until put back);
#   - ALTER TRIGGER ... RENAME, then DROP TRIGGER of the renamed trigger;
#   - ALTER SCHEMA RENAME and a new schema and table under the old names;
#     DROP SCHEMA ... CASCADE;
#   - ALTER TABLE RENAME, swapping two tables by renames;
#   - inheritance children (before and after bloom_guard, ALTER TABLE ...
#     INHERIT with rows, a grandchild, a child's guard trigger dropped:
#     suspended until re-created), partitions (PARTITION OF, ATTACH with
#     rows, a sub-partitioned partition, DETACH);
#   - DISABLE TRIGGER name / ALL / USER on the table, a partition and an
#     inheritance child: suspended, every check answers "maybe"; ENABLE ...
#     sets the trigger back to ALWAYS and rebuilds;
#   - a rewrite with USING, renaming the guarded column (0A000);
#   - key conversion: char(n), name, oid, varchar, numeric(5,2) probes agree
#     with WHERE col = <the same literal>: whenever WHERE finds a row, the
#     filter answers true.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SharedFilterTest;

$SharedFilterTest::wait_seconds = 20;

my $node = shared_node('trust_ddl', "max_worker_processes = 16\nlog_statement = none\n");
my $watch = crash_watch($node);
my $db = 'postgres';

# Run $sql; on an error, one failing test naming it (the file goes on).
sub sq
{
	my ($sql) = @_;
	my ($st, $err, $out) = sqlstate($node, $db, $sql);
	if ($st ne 'OK')
	{
		my $first = (grep { /\S/ } split /\n/, $sql)[0];
		$first =~ s/^\s+//;
		fail("statement failed ($st): $first");
		diag($err);
	}
	return $out;
}

# ($sqlstate, stderr, stdout)
sub run { return sqlstate($node, $db, $_[0]); }

# A table $t (id serial, k text) with $n keys "$prefix<i>", guarded, ready.
sub guarded
{
	my ($t, $prefix, $n) = @_;
	sq(qq{
		CREATE TABLE $t (id serial, k text);
		INSERT INTO $t (k) SELECT '$prefix' || i FROM generate_series(1, $n) i;
		SELECT bloom_guard('$t', 'k');
	});
	my $name = ($t =~ /\./ ? $t : "public.$t") . '.k';
	wait_ready($node, $db, $name, "$t guarded");
	return $name;
}

# The guard is removed: its name raises 42704 and no definition is left.
sub removed
{
	my ($name, $what) = @_;
	is(contains_error($node, $db, $name, "'x'::text"), '42704', "$what: the name is unknown (42704), not a \"no\"");
	is(sq("SELECT count(*) FROM bloom_shared_definitions WHERE name = " . lit($name)), '0',
		"$what: the definition is deleted");
}

# Never a "no": either removed (42704) or no key answers "no".
sub never_no
{
	my ($name, $keys, $what) = @_;
	my ($st, $err, $out) = run("SELECT count(*) FROM ($keys) s(k) WHERE NOT bloom_shared_contains(" . lit($name) . ", k)");
	ok(($st eq 'OK' && $out eq '0') || $st eq '42704', "$what: no key answers \"no\" (got $st " . ($out // '') . ')')
	  or diag($err);
}

# Every check answers "maybe", even for absent keys.
sub all_maybe
{
	my ($name, $what) = @_;
	is(sq("SELECT count(*) FROM generate_series(1, 2000) i WHERE NOT bloom_shared_contains(" . lit($name) . ", 'absent-' || i)"),
		'0', "$what: every check answers \"maybe\", absent keys too");
}

sub suspended
{
	my ($name, $what) = @_;
	ok(poll_for($node, $db, "SELECT state FROM bloom_shared_filters WHERE name = " . lit($name), 'suspended', 3),
		"$what: state suspended (" . state_of($node, $db, $name) . ')');
}

sq(q{CREATE FUNCTION noop_trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$;});

# ============================================ CREATE OR REPLACE TRIGGER ====
my $C = guarded('t_cor', 'cor', 2000);
my ($st, $err) = run(q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON t_cor
	FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor.k')});
is($st, 'OK', 'CREATE OR REPLACE TRIGGER with the same definition') or diag($err);
is(guard_trigger_list($node, $db, 't_cor'), 'bloom_guard_k:A', 'the replaced guard trigger is set back to ALWAYS');
sq(q{SET session_replication_role = replica;
	INSERT INTO t_cor (k) SELECT 'cor-replica' || i FROM generate_series(1, 500) i;
	UPDATE t_cor SET k = 'cor-replica-upd' || id WHERE id <= 50;});
no_false_negatives($node, $db, $C, 'SELECT k FROM t_cor', 'replaced trigger, writes under session_replication_role = replica');
wait_ready($node, $db, $C, 'replaced trigger');
no_false_negatives($node, $db, $C, 'SELECT k FROM t_cor', 'replaced trigger, ready');

for my $shape (
	[ 'AFTER INSERT', 'FOR EACH ROW' ],
	[ 'AFTER UPDATE', 'FOR EACH ROW' ],
	[ 'BEFORE INSERT OR UPDATE', 'FOR EACH ROW' ],
	[ 'AFTER INSERT OR UPDATE', 'FOR EACH STATEMENT' ])
{
	my ($when, $each) = @$shape;
	($st, $err) = run(qq{CREATE OR REPLACE TRIGGER bloom_guard_k $when ON t_cor
		$each EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor.k')});
	is($st, '42P17', "CREATE OR REPLACE of the guard trigger as $when $each: refused (42P17)") or diag($err);
	($st, $err) = run(qq{CREATE TRIGGER extra_guard AFTER INSERT OR UPDATE ON t_cor
		FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor.k')});
	($st, $err) = run(qq{CREATE OR REPLACE TRIGGER extra_guard $when ON t_cor
		$each EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor.k')});
	is($st, '42P17', "a second bloom_shared_trigger trigger made $when $each: refused (42P17)") or diag($err);
	# (put things back as they were, whatever happened)
	run(q{DROP TRIGGER IF EXISTS extra_guard ON t_cor});
	run(q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON t_cor
		FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor.k')});
	run(q{ALTER TABLE t_cor ENABLE ALWAYS TRIGGER bloom_guard_k});
}
is(guard_trigger_list($node, $db, 't_cor'), 'bloom_guard_k:A', 'after the refused shapes: the guard trigger as it was');
sq(q{INSERT INTO t_cor (k) SELECT 'cor-after-shapes' || i FROM generate_series(1, 200) i});
no_false_negatives($node, $db, $C, 'SELECT k FROM t_cor', 'after the refused shapes');

# A WHEN clause or a column list: another shape (42P17).  Another filter's
# name as the argument: refused, or the guard no longer answers "no" for
# what it misses.
my $C2 = guarded('t_cor2', 'cortwo', 1000);
($st, $err) = run(q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON t_cor2
	FOR EACH ROW WHEN (false) EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor2.k')});
is($st, '42P17', 'CREATE OR REPLACE of the guard trigger with WHEN (false): refused (42P17)') or diag($err);
($st, $err) = run(q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE OF k ON t_cor2
	FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor2.k')});
is($st, '42P17', 'CREATE OR REPLACE of the guard trigger with UPDATE OF k: refused (42P17)') or diag($err);
run(q{INSERT INTO t_cor2 (k) SELECT 'cortwo-when' || i FROM generate_series(1, 300) i});
never_no($C2, 'SELECT k FROM t_cor2', 'after the refused WHEN clause and column list');
my $C3 = guarded('t_cor3', 'corthree', 1000);
($st, $err) = run(q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON t_cor3
	FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor.k')});
note("CREATE OR REPLACE TRIGGER with another filter's name: $st");
run(q{INSERT INTO t_cor3 (k) SELECT 'corthree-other' || i FROM generate_series(1, 300) i});
never_no($C3, 'SELECT k FROM t_cor3', "guard trigger replaced by one for another filter ($st)");
no_false_negatives($node, $db, $C, 'SELECT k FROM t_cor', 'the other filter, after a foreign trigger fed it');

# Replaced by a trigger calling another function: the guarded table has no
# guard trigger any more: the guard is suspended (every check "maybe") until
# it has one again, then rebuilt.
($st, $err) = run(q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON t_cor
	FOR EACH ROW EXECUTE FUNCTION noop_trg()});
is($st, 'OK', 'CREATE OR REPLACE of the guard trigger with another function') or diag($err);
sq(q{INSERT INTO t_cor (k) SELECT 'cor-noop' || i FROM generate_series(1, 200) i});
suspended($C, 'guard trigger replaced by another function');
all_maybe($C, 'guard trigger replaced by another function');
never_no($C, 'SELECT k FROM t_cor', 'guard trigger replaced by another function');
($st, $err) = run(q{CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON t_cor
	FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.t_cor.k')});
is($st, 'OK', 'the guard trigger put back with CREATE OR REPLACE') or diag($err);
is(guard_trigger_list($node, $db, 't_cor'), 'bloom_guard_k:A', 'put back: ALWAYS');
wait_ready($node, $db, $C, 'guard trigger put back');
no_false_negatives($node, $db, $C, 'SELECT k FROM t_cor', 'guard trigger put back: rows written while it was replaced are found');

# ========================================== ALTER TRIGGER RENAME, DROP ====
my $R = guarded('t_rentrg', 'rt', 2000);
($st, $err) = run(q{ALTER TRIGGER bloom_guard_k ON t_rentrg RENAME TO something_else});
is($st, 'OK', 'ALTER TRIGGER ... RENAME of the guard trigger') or diag($err);
sq(q{INSERT INTO t_rentrg (k) SELECT 'rt-renamed' || i FROM generate_series(1, 300) i;
	SET session_replication_role = replica; INSERT INTO t_rentrg (k) VALUES ('rt-renamed-replica');});
no_false_negatives($node, $db, $R, 'SELECT k FROM t_rentrg', 'renamed guard trigger: writes still found');
is(state_of($node, $db, $R), 'ready', 'renamed guard trigger: still ready');
($st, $err) = run(q{DROP TRIGGER something_else ON t_rentrg});
is($st, 'OK', 'DROP TRIGGER of the renamed guard trigger') or diag($err);
like($err, qr/NOTICE/, '... with a NOTICE');
sq(q{INSERT INTO t_rentrg (k) SELECT 'rt-dropped' || i FROM generate_series(1, 300) i});
removed($R, 'renamed guard trigger dropped');
is(guard_trigger_list($node, $db, 't_rentrg'), '', 'no guard trigger left');

# ================================================== ALTER SCHEMA RENAME ====
sq(q{CREATE SCHEMA s; CREATE TABLE s.t (k text);
	INSERT INTO s.t SELECT 'old' || i FROM generate_series(1, 2000) i;
	SELECT bloom_guard('s.t', 'k');});
wait_ready($node, $db, 's.t.k', 'schema s');
($st, $err) = run(q{ALTER SCHEMA s RENAME TO s2});
is($st, 'OK', 'ALTER SCHEMA s RENAME TO s2') or diag($err);
($st, $err) = run(q{INSERT INTO s2.t SELECT 'old-after-rename' || i FROM generate_series(1, 500) i;});
is($st, 'OK', 'writes to s2.t after the schema rename') or diag($err);
($st, $err) = run(q{CREATE SCHEMA s; CREATE TABLE s.t (k text);
	INSERT INTO s.t SELECT 'new' || i FROM generate_series(1, 500) i;});
is($st, 'OK', 'a new schema s and table s.t with rows') or diag($err);
is(sq(q{SELECT rel::regclass::text FROM bloom_shared_definitions WHERE name = 's.t.k'}), 's2.t',
	'the definition follows the table by OID (rel is s2.t), the name stays s.t.k');
no_false_negatives($node, $db, 's.t.k', 'SELECT k FROM s2.t', 'schema renamed: rows of s2.t found under s.t.k');
is(guard_trigger_list($node, $db, 's.t'), '', 'the new table s.t is not guarded (no guard trigger)');
is(state_of($node, $db, 's.t.k'), 'ready', 'schema renamed: the filter stays ready');
sq(q{SELECT bloom_shared_rebuild('s.t.k')});
wait_ready($node, $db, 's.t.k', 'schema renamed, rebuilt');
no_false_negatives($node, $db, 's.t.k', 'SELECT k FROM s2.t', 'schema renamed, rebuilt: rows of s2.t found');
is(sq(q{SELECT count(*) FROM s.t WHERE NOT bloom_shared_contains('s.t.k', k)}) > 0 ? 'not claimed' : 'claimed',
	'not claimed', 'the rebuilt filter was read from s2.t, not from the new s.t');
# The new s.t can be guarded on its own: under another name (the old one
# still belongs to s2.t); each filter answers for its own table.
my ($ns, $ne, $newname) = run(q{SELECT bloom_guard('s.t', 'k')});
is($ns, 'OK', 'the new s.t can be guarded') or diag($ne);
isnt($newname, 's.t.k', "the new s.t gets a name of its own ($newname)");
if ($ns eq 'OK')
{
	wait_ready($node, $db, $newname, 'the new s.t');
	no_false_negatives($node, $db, $newname, 'SELECT k FROM s.t', 'the new s.t under its own name');
	no_false_negatives($node, $db, 's.t.k', 'SELECT k FROM s2.t', 's2.t still under s.t.k');
	is(sq("SELECT count(*) FROM s.t WHERE NOT bloom_shared_contains('s.t.k', k)") > 0 ? 'own' : 'shared', 'own',
		'the two filters are distinct (s.t.k does not hold the new table\'s keys)');
}
($st, $err) = run(q{DROP SCHEMA s2 CASCADE});
is($st, 'OK', 'DROP SCHEMA s2 CASCADE') or diag($err);
removed('s.t.k', 'DROP SCHEMA CASCADE');
is(state_of($node, $db, 's.t.k'), '<none>', 'DROP SCHEMA CASCADE: not in the view');

# =================================================== table renames, swap ====
my $A = guarded('t_a', 'a', 1000);
my $B = guarded('t_b', 'b', 1000);
($st, $err) = run(q{ALTER TABLE t_a RENAME TO t_tmp; ALTER TABLE t_b RENAME TO t_a; ALTER TABLE t_tmp RENAME TO t_b;});
is($st, 'OK', 'swap t_a and t_b by renames') or diag($err);
sq(q{INSERT INTO t_a (k) SELECT 'b-after-swap' || i FROM generate_series(1, 300) i;
	INSERT INTO t_b (k) SELECT 'a-after-swap' || i FROM generate_series(1, 300) i;});
no_false_negatives($node, $db, $A, 'SELECT k FROM t_b', 'swapped: public.t_a.k holds the table now named t_b');
no_false_negatives($node, $db, $B, 'SELECT k FROM t_a', 'swapped: public.t_b.k holds the table now named t_a');
sq("SELECT bloom_shared_rebuild('$A'); SELECT bloom_shared_rebuild('$B');");
wait_ready($node, $db, $A, 'swapped, rebuilt a');
wait_ready($node, $db, $B, 'swapped, rebuilt b');
no_false_negatives($node, $db, $A, 'SELECT k FROM t_b', 'swapped and rebuilt: public.t_a.k');
no_false_negatives($node, $db, $B, 'SELECT k FROM t_a', 'swapped and rebuilt: public.t_b.k');
# a guarded and an unguarded table swapped
my $G = guarded('t_g', 'g', 1000);
sq(q{CREATE TABLE t_u (id serial, k text); INSERT INTO t_u (k) SELECT 'u' || i FROM generate_series(1, 1000) i;
	ALTER TABLE t_g RENAME TO t_x; ALTER TABLE t_u RENAME TO t_g; ALTER TABLE t_x RENAME TO t_u;
	INSERT INTO t_u (k) SELECT 'g-after' || i FROM generate_series(1, 300) i;
	INSERT INTO t_g (k) SELECT 'u-after' || i FROM generate_series(1, 300) i;});
no_false_negatives($node, $db, $G, 'SELECT k FROM t_u', 'guarded/unguarded swapped: the guarded table (now t_u) found');
is(guard_trigger_list($node, $db, 't_g'), '', 'the table now named t_g is not guarded');
($st, $err) = run(q{ALTER TABLE t_u RENAME TO t_renamed_again});
is($st, 'OK', 'ALTER TABLE RENAME of a guarded table') or diag($err);
sq(q{INSERT INTO t_renamed_again (k) VALUES ('g-after-rename')});
no_false_negatives($node, $db, $G, 'SELECT k FROM t_renamed_again', 'renamed again: every key found');
($st, $err) = run(q{ALTER TABLE t_renamed_again RENAME COLUMN k TO k2});
is($st, '0A000', 'renaming the guarded column: 0A000') or diag($err);

# ========================================================== inheritance ====
sq(q{CREATE TABLE ih (k text);
	INSERT INTO ih SELECT 'ih' || i FROM generate_series(1, 1000) i;
	CREATE TABLE ih_c1 () INHERITS (ih);
	INSERT INTO ih_c1 SELECT 'ihc1-' || i FROM generate_series(1, 1000) i;
	SELECT bloom_guard('ih', 'k');});
my $I = 'public.ih.k';
is(guard_trigger_list($node, $db, 'ih_c1'), 'bloom_guard_k:A', 'inheritance: a child that existed at bloom_guard gets the trigger');
wait_ready($node, $db, $I, 'inheritance');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: rows of the parent and of the child existing at bloom_guard');
sq(q{INSERT INTO ih_c1 SELECT 'ihc1-direct' || i FROM generate_series(1, 300) i;
	CREATE TABLE ih_c2 () INHERITS (ih);
	INSERT INTO ih_c2 SELECT 'ihc2-' || i FROM generate_series(1, 300) i;});
is(guard_trigger_list($node, $db, 'ih_c2'), 'bloom_guard_k:A', 'inheritance: CREATE TABLE ... INHERITS gets the trigger');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: rows inserted into the children directly');
sq(q{CREATE TABLE ih_c3 (k text);
	INSERT INTO ih_c3 SELECT 'ihc3-' || i FROM generate_series(1, 1000) i;
	ALTER TABLE ih_c3 INHERIT ih;});
is(guard_trigger_list($node, $db, 'ih_c3'), 'bloom_guard_k:A', 'inheritance: ALTER TABLE ... INHERIT gets the trigger');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: at once after ALTER TABLE ... INHERIT with rows');
wait_ready($node, $db, $I, 'inheritance after INHERIT');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: rebuilt after INHERIT');
sq(q{CREATE TABLE ih_g () INHERITS (ih_c1);
	INSERT INTO ih_g SELECT 'ihg-' || i FROM generate_series(1, 300) i;
	INSERT INTO ih_c3 SELECT 'ihc3-after' || i FROM generate_series(1, 300) i;});
is(guard_trigger_list($node, $db, 'ih_g'), 'bloom_guard_k:A', 'inheritance: a grandchild gets the trigger');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: grandchild rows');
# A child's guard trigger dropped: suspended until the child has one again.
($st, $err) = run(q{DROP TRIGGER bloom_guard_k ON ih_c2});
is($st, 'OK', 'inheritance: DROP TRIGGER of a child\'s guard trigger') or diag($err);
suspended($I, 'inheritance: a child without its guard trigger');
all_maybe($I, 'inheritance: a child without its guard trigger');
sq(q{INSERT INTO ih_c2 SELECT 'ihc2-untriggered' || i FROM generate_series(1, 300) i});
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: rows written to the child without trigger');
($st, $err) = run(q{CREATE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON ih_c2
	FOR EACH ROW EXECUTE FUNCTION public.bloom_shared_trigger('public.ih.k')});
is($st, 'OK', 'inheritance: the child\'s guard trigger created again by hand') or diag($err);
is(guard_trigger_list($node, $db, 'ih_c2'), 'bloom_guard_k:A', 'inheritance: the re-created child trigger is ALWAYS');
wait_ready($node, $db, $I, 'inheritance: child trigger re-created');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: child trigger re-created, rebuilt');
sq("SELECT bloom_shared_rebuild('$I')");
wait_ready($node, $db, $I, 'inheritance, rebuilt');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'inheritance: bloom_shared_rebuild scans the whole tree');
my $share = sq("SELECT avg(bloom_shared_contains('$I', 'absent' || i)::int) FROM generate_series(1, 5000) i");
cmp_ok($share, '<', 0.05, "inheritance: the rebuilt filter answers (absent keys \"maybe\" share $share)");

# =========================================================== partitions ====
sq(q{CREATE TABLE pt (g int, k text) PARTITION BY LIST (g);
	CREATE TABLE pt0 PARTITION OF pt FOR VALUES IN (0);
	CREATE TABLE pt1 PARTITION OF pt FOR VALUES IN (1);
	INSERT INTO pt SELECT i % 2, 'pt' || i FROM generate_series(1, 2000) i;
	SELECT bloom_guard('pt', 'k');});
my $P = 'public.pt.k';
wait_ready($node, $db, $P, 'partitioned');
sq(q{CREATE TABLE pt2 PARTITION OF pt FOR VALUES IN (2);
	INSERT INTO pt2 SELECT 2, 'pt2-' || i FROM generate_series(1, 300) i;
	INSERT INTO pt0 SELECT 0, 'pt0-direct' || i FROM generate_series(1, 300) i;});
is(guard_trigger_list($node, $db, 'pt2') =~ /:A$/ ? 'A' : 'none', 'A', 'partitions: PARTITION OF gets the cloned trigger, ALWAYS');
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partitions: rows inserted into a new partition and directly');
sq(q{CREATE TABLE pt3 (g int, k text);
	INSERT INTO pt3 SELECT 3, 'pt3-' || i FROM generate_series(1, 1000) i;
	ALTER TABLE pt ATTACH PARTITION pt3 FOR VALUES IN (3);});
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partitions: at once after ATTACH PARTITION with rows');
sq(q{CREATE TABLE pt4 (g int, k text) PARTITION BY LIST (k);
	CREATE TABLE pt4d PARTITION OF pt4 DEFAULT;
	INSERT INTO pt4 SELECT 4, 'pt4-' || i FROM generate_series(1, 1000) i;
	ALTER TABLE pt ATTACH PARTITION pt4 FOR VALUES IN (4);});
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partitions: at once after attaching a sub-partitioned table with rows');
wait_ready($node, $db, $P, 'partitions after ATTACH');
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partitions: rebuilt after ATTACH');
sq(q{INSERT INTO pt4d SELECT 4, 'pt4d-direct' || i FROM generate_series(1, 300) i;
	ALTER TABLE pt DETACH PARTITION pt1;
	INSERT INTO pt1 SELECT 1, 'pt1-detached' || i FROM generate_series(1, 300) i;
	INSERT INTO pt SELECT 3, 'pt-after-detach' || i FROM generate_series(1, 300) i;});
is(guard_trigger_list($node, $db, 'pt1'), '', 'partitions: a detached partition loses the guard trigger');
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partitions: after DETACH');
wait_ready($node, $db, $P, 'partitions after DETACH');
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partitions: after DETACH, ready');

# =========================================================== DISABLE ====
my $D = guarded('t_dis', 'dis', 2000);
my @enable = ('ENABLE TRIGGER ALL', 'ENABLE TRIGGER bloom_guard_k', 'ENABLE REPLICA TRIGGER bloom_guard_k');
my $n = 0;
for my $how ('DISABLE TRIGGER bloom_guard_k', 'DISABLE TRIGGER ALL', 'DISABLE TRIGGER USER')
{
	my $en = $enable[$n++];
	($st, $err) = run("ALTER TABLE t_dis $how");
	is($st, 'OK', "ALTER TABLE ... $how succeeds") or diag($err);
	suspended($D, $how);
	all_maybe($D, $how);
	sq(qq{INSERT INTO t_dis (k) SELECT 'dis$n-' || i FROM generate_series(1, 300) i;
		SET session_replication_role = replica; INSERT INTO t_dis (k) VALUES ('dis$n-replica');});
	no_false_negatives($node, $db, $D, 'SELECT k FROM t_dis', "$how: rows written while disabled");
	($st, $err) = run("ALTER TABLE t_dis $en");
	is($st, 'OK', "ALTER TABLE ... $en") or diag($err);
	is(guard_trigger_list($node, $db, 't_dis'), 'bloom_guard_k:A', "$en: the guard trigger fires ALWAYS again");
	wait_ready($node, $db, $D, "$how, then $en");
	no_false_negatives($node, $db, $D, 'SELECT k FROM t_dis', "$how, then $en: rows written while disabled are found");
}
# disabled and enabled in one transaction, with writes in between (what
# pg_restore --disable-triggers --single-transaction does)
sq(q{BEGIN; ALTER TABLE t_dis DISABLE TRIGGER ALL;
	INSERT INTO t_dis (k) SELECT 'dis-xact' || i FROM generate_series(1, 300) i;
	ALTER TABLE t_dis ENABLE TRIGGER ALL; COMMIT;});
is(guard_trigger_list($node, $db, 't_dis'), 'bloom_guard_k:A', 'disabled and enabled in one transaction: ALWAYS');
no_false_negatives($node, $db, $D, 'SELECT k FROM t_dis', 'disabled and enabled in one transaction: at once');
wait_ready($node, $db, $D, 'disabled and enabled in one transaction');
no_false_negatives($node, $db, $D, 'SELECT k FROM t_dis', 'disabled and enabled in one transaction');
# on a partition and on an inheritance child
for my $case ([ 'pt0', $P, 'SELECT k FROM pt', '0, ' ], [ 'ih_c1', $I, 'SELECT k FROM ih', '' ])
{
	my ($part, $name, $keys, $g) = @$case;
	for my $how ('DISABLE TRIGGER ALL', 'DISABLE TRIGGER USER')
	{
		($st, $err) = run("ALTER TABLE $part $how");
		is($st, 'OK', "$part: $how") or diag($err);
		suspended($name, "$part: $how");
		all_maybe($name, "$part: $how");
		sq(qq{INSERT INTO $part SELECT ${g}'$part-dis-' || i FROM generate_series(1, 300) i});
		no_false_negatives($node, $db, $name, $keys, "$part: $how, rows written meanwhile");
		sq("ALTER TABLE $part ENABLE TRIGGER ALL");
		like(guard_trigger_list($node, $db, $part), qr/^[^,]*:A$/, "$part: ENABLE TRIGGER ALL: ALWAYS again");
		wait_ready($node, $db, $name, "$part: $how, enabled again");
		no_false_negatives($node, $db, $name, $keys, "$part: $how, enabled again");
	}
}

# ============================================================ rewrites ====
my $W = guarded('t_rw', 'rw', 2000);
($st, $err) = run(q{ALTER TABLE t_rw ALTER COLUMN k TYPE text USING k || '!'});
is($st, 'OK', 'ALTER COLUMN TYPE ... USING (a rewrite changing every key)') or diag($err);
no_false_negatives($node, $db, $W, 'SELECT k FROM t_rw', 'rewrite with USING: at once');
wait_ready($node, $db, $W, 'rewrite with USING');
no_false_negatives($node, $db, $W, 'SELECT k FROM t_rw', 'rewrite with USING: rebuilt');

# ================================================== rolled-back DDL ====
# DDL that suspends or removes a guard, rolled back (whole transaction or
# savepoint): the guard must come back by itself (ready, every key found),
# never stay suspended for good, never answer "no".
my $RB = guarded('t_rb', 'rb', 2000);
for my $case (
	[ 'DISABLE TRIGGER ALL, ROLLBACK', q{BEGIN; ALTER TABLE t_rb DISABLE TRIGGER ALL; ROLLBACK;} ],
	[ 'DROP TRIGGER, ROLLBACK', q{BEGIN; DROP TRIGGER bloom_guard_k ON t_rb; ROLLBACK;} ],
	[ 'CREATE OR REPLACE TRIGGER to another function, ROLLBACK', q{BEGIN;
		CREATE OR REPLACE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON t_rb FOR EACH ROW EXECUTE FUNCTION noop_trg();
		ROLLBACK;} ],
	[ 'DISABLE TRIGGER in a savepoint rolled back', q{BEGIN; SAVEPOINT a; ALTER TABLE t_rb DISABLE TRIGGER bloom_guard_k;
		ROLLBACK TO SAVEPOINT a; INSERT INTO t_rb (k) VALUES ('rb-in-xact'); COMMIT;} ],
	[ 'ALTER COLUMN TYPE ... USING, ROLLBACK', q{BEGIN; ALTER TABLE t_rb ALTER COLUMN k TYPE text USING k || '?'; ROLLBACK;} ],
	[ 'DROP TABLE, ROLLBACK', q{BEGIN; DROP TABLE t_rb; ROLLBACK;} ])
{
	my ($what, $sql) = @$case;
	($st, $err) = run($sql);
	is($st, 'OK', "$what: runs") or diag($err);
	sq(q{INSERT INTO t_rb (k) SELECT 'rb-after-' || i || '-' || clock_timestamp() FROM generate_series(1, 100) i});
	no_false_negatives($node, $db, $RB, 'SELECT k FROM t_rb', "$what: at once");
	is(guard_trigger_list($node, $db, 't_rb'), 'bloom_guard_k:A', "$what: the guard trigger is as it was");
	wait_ready($node, $db, $RB, "$what: ready again by itself");
	no_false_negatives($node, $db, $RB, 'SELECT k FROM t_rb', "$what: ready again");
}
# suspended, then an ENABLE rolled back: still suspended, checks "maybe"
sq(q{ALTER TABLE t_rb DISABLE TRIGGER bloom_guard_k});
suspended($RB, 'suspended before an ENABLE rolled back');
($st, $err) = run(q{BEGIN; ALTER TABLE t_rb ENABLE TRIGGER bloom_guard_k; ROLLBACK;});
sq(q{INSERT INTO t_rb (k) SELECT 'rb-suspended' || i FROM generate_series(1, 100) i});
all_maybe($RB, 'ENABLE rolled back');
no_false_negatives($node, $db, $RB, 'SELECT k FROM t_rb', 'ENABLE rolled back');
sq(q{ALTER TABLE t_rb ENABLE TRIGGER bloom_guard_k});
wait_ready($node, $db, $RB, 'enabled for real');
no_false_negatives($node, $db, $RB, 'SELECT k FROM t_rb', 'enabled for real');

# ====================================================== more manoeuvres ====
# bloom_unguard after the guard trigger was renamed: the renamed trigger goes
# too (triggers are identified by function and argument, not by name).
my $U2 = guarded('t_ug', 'ug', 500);
sq(q{ALTER TRIGGER bloom_guard_k ON t_ug RENAME TO renamed_guard});
($st, $err) = run(q{SELECT bloom_unguard('t_ug', 'k')});
is($st, 'OK', 'bloom_unguard after ALTER TRIGGER RENAME') or diag($err);
is(guard_trigger_list($node, $db, 't_ug'), '', 'bloom_unguard removed the renamed guard trigger');
($st, $err) = run(q{SELECT bloom_guard('t_ug', 'k')});
is($st, 'OK', 'guard again after that') or diag($err);
wait_ready($node, $db, $U2, 'guarded again');
no_false_negatives($node, $db, $U2, 'SELECT k FROM t_ug', 'guarded again');
# two guards on one table: DISABLE TRIGGER ALL suspends both, ENABLE rebuilds both
sq(q{ALTER TABLE t_ug ADD COLUMN k2 text; UPDATE t_ug SET k2 = 'second-' || k; SELECT bloom_guard('t_ug', 'k2');});
wait_ready($node, $db, 'public.t_ug.k2', 'second guard on the table');
sq(q{ALTER TABLE t_ug DISABLE TRIGGER ALL});
suspended($U2, 'two guards, DISABLE TRIGGER ALL: first');
suspended('public.t_ug.k2', 'two guards, DISABLE TRIGGER ALL: second');
sq(q{INSERT INTO t_ug (k, k2) SELECT 'ug-dis' || i, 'ug2-dis' || i FROM generate_series(1, 200) i;
	ALTER TABLE t_ug ENABLE TRIGGER ALL;});
is(guard_trigger_list($node, $db, 't_ug'), 'bloom_guard_k:A,bloom_guard_k2:A', 'two guards: both ALWAYS again');
wait_ready($node, $db, $U2, 'two guards enabled: first');
wait_ready($node, $db, 'public.t_ug.k2', 'two guards enabled: second');
no_false_negatives($node, $db, $U2, 'SELECT k FROM t_ug', 'two guards enabled: first');
no_false_negatives($node, $db, 'public.t_ug.k2', 'SELECT k2 FROM t_ug', 'two guards enabled: second');
# disabled, then dropped: removed
sq(q{ALTER TABLE t_ug DISABLE TRIGGER bloom_guard_k2});
($st, $err) = run(q{DROP TRIGGER bloom_guard_k2 ON t_ug});
is($st, 'OK', 'DROP TRIGGER of a disabled guard trigger') or diag($err);
removed('public.t_ug.k2', 'disabled, then dropped');
# ALTER TABLE ... SET SCHEMA: followed by OID
sq(q{CREATE SCHEMA moved; ALTER TABLE t_ug SET SCHEMA moved;
	INSERT INTO moved.t_ug (k) SELECT 'ug-moved' || i FROM generate_series(1, 200) i;});
no_false_negatives($node, $db, $U2, 'SELECT k FROM moved.t_ug', 'ALTER TABLE ... SET SCHEMA: rows found under the old name');
is(sq(q{SELECT rel::regclass::text FROM bloom_shared_definitions WHERE name = 'public.t_ug.k'}), 'moved.t_ug',
	'ALTER TABLE ... SET SCHEMA: the definition follows the table');
# rewrites that keep the keys: SET UNLOGGED / LOGGED, VACUUM FULL, CLUSTER
sq(q{ALTER TABLE moved.t_ug SET UNLOGGED; ALTER TABLE moved.t_ug SET LOGGED; VACUUM FULL moved.t_ug;
	INSERT INTO moved.t_ug (k) SELECT 'ug-rewritten' || i FROM generate_series(1, 200) i;});
no_false_negatives($node, $db, $U2, 'SELECT k FROM moved.t_ug', 'SET UNLOGGED / LOGGED / VACUUM FULL');
wait_ready($node, $db, $U2, 'after the rewrites');
no_false_negatives($node, $db, $U2, 'SELECT k FROM moved.t_ug', 'after the rewrites, ready');
# NO INHERIT: the former child leaves the tree; dropping its trigger then
# neither removes nor suspends the parent's guard for good
sq(q{ALTER TABLE ih_c3 NO INHERIT ih});
($st, $err) = run(q{DROP TRIGGER IF EXISTS bloom_guard_k ON ih_c3});
is($st, 'OK', 'NO INHERIT, then DROP TRIGGER on the former child') or diag($err);
is(sq(q{SELECT count(*) FROM bloom_shared_definitions WHERE name = 'public.ih.k'}), '1',
	'the parent\'s guard is still defined');
wait_ready($node, $db, $I, 'parent after a former child lost its trigger');
no_false_negatives($node, $db, $I, 'SELECT k FROM ih', 'parent after a former child lost its trigger');
# DETACH PARTITION CONCURRENTLY (two transactions)
($st, $err) = run(q{ALTER TABLE pt DETACH PARTITION pt2 CONCURRENTLY});
is($st, 'OK', 'DETACH PARTITION CONCURRENTLY') or diag($err);
sq(q{INSERT INTO pt SELECT 0, 'pt-after-concurrent-detach' || i FROM generate_series(1, 200) i});
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'after DETACH PARTITION CONCURRENTLY');
wait_ready($node, $db, $P, 'after DETACH PARTITION CONCURRENTLY');
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'after DETACH PARTITION CONCURRENTLY, ready');
# a partition's cloned trigger disabled by name
sq(q{ALTER TABLE pt0 DISABLE TRIGGER bloom_guard_k});
suspended($P, 'a partition\'s guard trigger disabled by name');
sq(q{INSERT INTO pt0 SELECT 0, 'pt0-disabled-by-name' || i FROM generate_series(1, 200) i;
	ALTER TABLE pt0 ENABLE TRIGGER bloom_guard_k;});
wait_ready($node, $db, $P, 'partition trigger enabled by name');
no_false_negatives($node, $db, $P, 'SELECT k FROM pt', 'partition trigger disabled and enabled by name');
# the longest names: 63 double quotes each (quote_ident doubles them)
{
	my $q63 = '"' x 63;
	my $id = '"' . ('""' x 63) . '"';
	($st, $err) = run(qq{CREATE SCHEMA $id; CREATE TABLE $id.$id ($id text);
		INSERT INTO $id.$id SELECT 'long' || i FROM generate_series(1, 500) i;});
	is($st, 'OK', 'schema, table and column named with 63 double quotes') or diag($err);
	my ($gs, $ge, $gname) = run(qq{SELECT bloom_guard('$id.$id', '$q63')});
	is($gs, 'OK', 'guard of the longest quoted names') or diag($ge);
	is($gname, "$id.$id.$id", 'the name is quote_ident of each part (386 characters)');
	wait_ready($node, $db, $gname, 'longest names') if $gs eq 'OK';
	no_false_negatives($node, $db, $gname, "SELECT $id FROM $id.$id", 'longest names');
}

# ====================================================== key conversion ====
my $long = "\x{e9}" x 50;    # 50 x U+00E9 = 100 bytes in UTF-8
# (in a UTF8 database: name clipping at a character boundary)
sq(q{CREATE DATABASE kdb TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'});
$db = 'kdb';
sq(q{CREATE EXTENSION bloomfilter; CREATE TABLE kc (c char(5), n name, o oid, v varchar(10), nu numeric(5,2))});
{
	use utf8;
	my $sql = "INSERT INTO kc VALUES ('ab', " . lit($long) . ", 4294967295, 'xy', 123.45), "
	  . "('cd  ', 'short', 42, 'zz  ', 1.5), ('e', 'é', 0, 'e', 999.99);";
	utf8::encode($sql);
	sq($sql);
}
for my $col ('c', 'n', 'o', 'v', 'nu')
{
	sq("SELECT bloom_guard('kc', '$col')");
}
wait_ready($node, $db, "public.kc.$_", "key conversion: column $_") for ('c', 'n', 'o', 'v', 'nu');
my $long_lit = lit($long);
utf8::encode($long_lit);
my @probes = (
	[ 'c', q{'ab'} ], [ 'c', q{'ab '} ], [ 'c', q{'ab     '} ], [ 'c', q{'ab'::varchar} ], [ 'c', q{'ab '::varchar} ],
	[ 'c', q{'ab'::bpchar} ], [ 'c', q{'ab'::char(2)} ], [ 'c', q{'cd'} ], [ 'c', q{'cd   '::varchar} ],
	[ 'n', $long_lit ], [ 'n', q{'short'} ], [ 'n', q{'short'::name} ],
	[ 'o', q{-1} ], [ 'o', q{'-1'} ], [ 'o', q{4294967295} ], [ 'o', q{42} ], [ 'o', q{42::int8} ], [ 'o', q{'42'} ],
	[ 'o', q{0} ],
	[ 'v', q{'xy'} ], [ 'v', q{'zz  '} ], [ 'v', q{'xy'::char(2)}, 'may refuse' ],
	[ 'nu', q{'123.45'} ], [ 'nu', q{123.45} ], [ 'nu', q{123.450} ], [ 'nu', q{'1.50'} ],
	[ 'nu', q{999.99} ], [ 'nu', q{1.5::float4::numeric} ]);
for my $p (@probes)
{
	my ($col, $lit, $may_refuse) = @$p;
	my ($ws, $we, $where) = run("SELECT EXISTS (SELECT 1 FROM kc WHERE $col = $lit)");
	my ($cs, $ce, $got) = run("SELECT bloom_shared_contains('public.kc.$col', $lit)");
	my $shown = $lit;
	utf8::decode($shown);
	$shown = "<100-byte multibyte string>" if length($shown) > 40;
	if ($ws ne 'OK')
	{
		note("kc.$col = $shown: WHERE fails ($ws), check gives $cs " . ($got // ''));
		next;
	}
	# A key whose "=" with the column would compare in the key's type
	# (char(n) against varchar: the column is converted) may be refused
	# with 42804 rather than answered.
	if ($may_refuse && $cs eq '42804')
	{
		pass("key conversion kc.$col, probe $shown: refused with 42804 (WHERE compares as the key's type)");
		next;
	}
	is($cs, 'OK', "key conversion kc.$col, probe $shown: the check answers (WHERE: $where)") or diag($ce);
	ok($where ne 't' || ($got // '') eq 't', "key conversion kc.$col, probe $shown: WHERE finds it ($where), so the filter says true ($got)");
}
# a nondeterministic collation on the check: refused (0A000), never a "no"
# where WHERE (under that collation) finds a row
if (sq(q{SELECT count(*) > 0 FROM pg_collation WHERE collprovider = 'i'}) eq 't')
{
	sq(q{CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)});
	my ($cw) = sq(q{SELECT EXISTS (SELECT 1 FROM kc WHERE v = 'XY' COLLATE ci)});
	my ($cs2, $ce2, $cg) = run(q{SELECT bloom_shared_contains('public.kc.v', 'XY' COLLATE ci)});
	ok($cs2 eq '0A000' || ($cs2 eq 'OK' && ($cw ne 't' || $cg eq 't')),
		"a check under a nondeterministic collation: refused (0A000) or consistent with WHERE ($cs2, WHERE $cw)")
	  or diag($ce2);
}
($ns, $ne, my $nout) = run(q{SELECT bloom_shared_contains('public.kc.nu', '12345.678')});
is("$ns $nout", 'OK f', q{numeric(5,2) probed with '12345.678': false, no error (like WHERE)}) or diag($ne);
is(sq(q{SELECT EXISTS (SELECT 1 FROM kc WHERE nu = '12345.678')}), 'f', q{... and WHERE nu = '12345.678' finds nothing});

server_intact($node, $watch, 'end of 108');
$node->stop;
done_testing();
