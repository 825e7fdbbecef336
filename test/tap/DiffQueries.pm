# Helpers of test/tap/135_guard_index_differential.pl: the schema, a seeded generator of
# random queries (one sub per query shape, sh_*), a psql session that runs
# scripts and returns their rows and errors, and the comparison of a script
# run with bloomfilter.planner_guards and bloomfilter.batch_checks on and off.
#
# A case is a hash: name (the shape), body (SQL statements; no BEGIN/COMMIT:
# the runner wraps them), settings (SET commands of the planner, the same
# for both runs), tx (the body needs a transaction: DML, cursors, FOR
# UPDATE; it is rolled back), ordered (compare the rows in order, else
# sorted), readonly (no writes: usable next to the concurrent writer).
package DiffQueries;

use strict;
use warnings;
use Exporter 'import';
use Digest::MD5 qw(md5_hex);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

our @EXPORT = qw(schema_sql gen_case run_case outcome_text explain_markers
  writer_script);

# ------------------------------------------------------------------ RNG ----
# A generator of its own (not Perl's rand, which other code may draw from),
# so that a seed always gives the same queries.
my $state = 1;

sub seed { $state = ($_[0] % 2147483647) || 1; return; }

sub rnd
{
	my ($n) = @_;
	$state = ($state * 48271) % 2147483647;
	return $state % $n;
}
sub pick { return $_[ rnd(scalar @_) ]; }
sub chance { return rnd(1000) < $_[0] * 1000; }

# ------------------------------------------------------------- the data ----
# Tables, each with its key columns; "family" names the rows' formulas
# (the same for a parent and its children).
my %cols = (
	pt => [qw(k4 k8 kt ku kv v)],
	ih => [qw(k4 kt v)],
	pp => [qw(k8 kt v)],
	pc => [qw(k8 kt v)],
	pe => [qw(k4 kt v)],
);
my %type = (k4 => 'int4', k8 => 'int8', kt => 'text', ku => 'uuid', kv => 'varchar', v => 'int4');
# readable tables of each family
my %tables = (
	pt => [qw(pt)],
	ih => ['ih', 'ONLY ih', 'ih_c1', 'ih_c2'],
	pp => [qw(pp pp_0 pp_1 pp_1a pp_d)],
	pc => [qw(pc)],
	pe => [qw(pe)],
);
# the concurrent writer inserts rows up to these ids
my %max_id = (pt => 3400, ih => 2300, pp => 4400, pc => 2400, pe => 1);

sub uuid_of
{
	my $h = md5_hex($_[0]);
	return join('-', substr($h, 0, 8), substr($h, 8, 4), substr($h, 12, 4), substr($h, 16, 4), substr($h, 20));
}

# A key of row $i of $fam.$col as a literal, and one no row holds.
sub present_key
{
	my ($fam, $col, $i) = @_;
	return {
		pt => { k4 => ($i % 2000) * 3, k8 => $i * 1000003, kt => "'key-" . ($i * 7) . "'",
				kv => "'key-" . ($i * 7) . "'", ku => "'" . uuid_of("u$i") . "'", v => $i % 50 },
		ih => { k4 => $i * 2, kt => "'t$i'", v => $i % 50 },
		pp => { k8 => $i * 11, kt => "'p$i'", v => $i % 50 },
		pc => { k8 => $i * 13, kt => "'c$i'", v => $i % 50 },
		pe => { k4 => $i, kt => "'e$i'", v => $i },
	}->{$fam}{$col};
}

sub absent_key
{
	my ($fam, $col, $i) = @_;
	return {
		pt => { k4 => pick($i * 3 + 1, 100000 + $i, -$i), k8 => $i * 1000003 + 1,
				kt => pick("'key-" . ($i * 7 + 3) . "'", "'nokey-$i'", "''"),
				kv => "'nokey-$i'", ku => "'" . uuid_of("x$i") . "'", v => 50 + $i % 50 },
		ih => { k4 => $i * 2 + 1, kt => "'t" . ($i + 5000) . "'", v => 50 + $i },
		pp => { k8 => $i * 11 + 5, kt => "'q$i'", v => 50 + $i },
		pc => { k8 => $i * 13 + 1, kt => "'c" . ($i + 9000) . "'", v => 50 + $i },
		pe => { k4 => $i, kt => "'e$i'", v => $i },
	}->{$fam}{$col};
}

# A random key of $fam.$col: present, absent or NULL.
sub key
{
	my ($fam, $col) = @_;
	my $r = rnd(100);
	return 'NULL' if $r < 8;
	my $i = 1 + rnd($max_id{$fam});
	return $r < 55 ? present_key($fam, $col, $i) : absent_key($fam, $col, $i);
}

# The key cast to the column's type (for arrays of a type and PREPARE).
sub typed
{
	my ($k, $col) = @_;
	return "${k}::$type{$col}";
}

# An array literal '{...}' of $n keys (with duplicates, NULLs, maybe empty).
sub array_literal
{
	my ($fam, $col, $n) = @_;
	my @e;
	for (1 .. $n)
	{
		my $k = key($fam, $col);
		$k =~ s/^'(.*)'$/"$1"/;
		push @e, $k;
		push @e, $k if chance(0.1);
	}
	return "'{" . join(',', @e) . "}'::$type{$col}\[\]";
}

# A condition on $a.$col that a gate may use (or a near miss of one).
sub pred
{
	my ($fam, $col, $a) = @_;
	my $c = $a ? "$a.$col" : $col;
	my $r = rnd(100);
	my $n = 1 + rnd(5);
	return "$c = " . key($fam, $col) if $r < 35;
	return "$c IN (" . join(', ', map { key($fam, $col) } 1 .. $n) . ')' if $r < 50;
	return "$c = ANY (" . array_literal($fam, $col, $n) . ')' if $r < 62;
	return "$c = ANY ('{}')" if $r < 65;
	return "$c = ANY (ARRAY[" . join(', ', map { typed(key($fam, $col), $col) } 1 .. $n) . '])' if $r < 72;
	return "($c = " . key($fam, $col) . " OR $c = " . key($fam, $col) . ')' if $r < 78;
	return "$c = " . cross_type_key($fam, $col) if $r < 86;
	return "$c = " . stable_key($fam, $col) if $r < 94;
	return "$c IS NULL" if $r < 96;
	return "${c}::text = " . key($fam, $col) . '::text' if $r < 98;
	return "$c <> " . key($fam, $col);
}

# A key of another type that = still compares within the key kind.
sub cross_type_key
{
	my ($fam, $col) = @_;
	my $k = key($fam, $col);
	my $t = $type{$col};
	return "${k}::int8" if $t eq 'int4';
	return "${k}::int2" if $t eq 'int8' && $k ne 'NULL' && $k < 32768 && chance(0.5);
	return "${k}::int4" if $t eq 'int8' && $k ne 'NULL' && $k < 2**31;
	return pick("${k}::varchar", "$k COLLATE \"C\"", "${k}::name") if $t eq 'text';
	return pick("${k}::text", "$k COLLATE \"C\"") if $t eq 'varchar';
	return "${k}::uuid";
}

# A key computed by a stable or immutable expression.
sub stable_key
{
	my ($fam, $col) = @_;
	my $k = key($fam, $col);
	my $t = $type{$col};
	return "current_setting('bf.key')::$t" if $t =~ /^int/ && chance(0.2);
	return "abs($k)" if $t =~ /^int/ && $k ne 'NULL';
	return "($k + 0)" if $t =~ /^int/;
	return "lower(upper($k))" if $t eq 'text' || $t eq 'varchar';
	return "(${k}::text)::uuid";
}

# ------------------------------------------------------------ the tables ----
sub table_of
{
	my ($fam) = @_;
	return pick(@{ $tables{$fam} });
}

# A random (family, table, key column), most often a guarded one.
sub target
{
	my $fam = pick(qw(pt pt pt ih ih pp pp pp pc pe));
	my $col = pick(@{ $cols{$fam} });
	return ($fam, table_of($fam), $col);
}

# The column of src that holds keys of a column's type.
sub src_col
{
	return { int4 => 'a4', int8 => 'a8', text => 'at', varchar => 'at', uuid => 'au' }->{ $type{ $_[0] } };
}

sub src_table { return pick('src', 'src', 'src', 'nothing', '(SELECT * FROM src ORDER BY id LIMIT 3)'); }

sub schema_sql
{
	# src: a few rows holding keys of every family, present and absent
	my $save = $state;
	seed(4242);
	my @src;
	for my $i (1 .. 40)
	{
		my $f4 = pick(qw(pt ih pe));
		my $f8 = pick(qw(pt pp pc));
		my $ft = pick(qw(pt ih pp pc));
		push @src, sprintf('(%d, %s, %s, %s, %s)', $i, key($f4, 'k4'), key($f8, 'k8'),
			key($ft, 'kt'), key('pt', 'ku') eq 'NULL' ? 'NULL' : key('pt', 'ku'));
	}
	$state = $save;
	my $src_values = join(",\n", @src);
	return qq{
CREATE TABLE pt (id int PRIMARY KEY, k4 int4, k8 int8, kt text, ku uuid, kv varchar(40), v int4);
INSERT INTO pt SELECT i, CASE WHEN i % 23 <> 0 THEN (i % 2000) * 3 END, i * 1000003::int8,
	CASE WHEN i % 19 <> 0 THEN 'key-' || i * 7 END, md5('u' || i)::uuid,
	CASE WHEN i % 17 <> 0 THEN 'key-' || i * 7 END, i % 50
FROM generate_series(1, 3000) i;
CREATE INDEX pt_k4 ON pt (k4);
CREATE INDEX pt_kt ON pt (kt);
CREATE INDEX pt_ku ON pt USING hash (ku);

CREATE TABLE ih (id int, k4 int4, kt text, v int4);
CREATE TABLE ih_c1 (e text) INHERITS (ih);
CREATE TABLE ih_c2 () INHERITS (ih);
INSERT INTO ih SELECT i, CASE WHEN i % 29 <> 0 THEN i * 2 END, 't' || i, i % 50 FROM generate_series(1, 500) i;
INSERT INTO ih_c1 SELECT i, CASE WHEN i % 29 <> 0 THEN i * 2 END, 't' || i, i % 50, 'e' FROM generate_series(501, 1500) i;
INSERT INTO ih_c2 SELECT i, CASE WHEN i % 29 <> 0 THEN i * 2 END, CASE WHEN i % 31 <> 0 THEN 't' || i END, i % 50 FROM generate_series(1501, 2000) i;
CREATE INDEX ON ih_c1 (k4);
CREATE INDEX ON ih_c2 (kt);

CREATE TABLE pp (id int, k8 int8, kt text, v int4, d int) PARTITION BY RANGE (d);
CREATE TABLE pp_0 PARTITION OF pp FOR VALUES FROM (0) TO (10);
CREATE TABLE pp_1 PARTITION OF pp FOR VALUES FROM (10) TO (20) PARTITION BY HASH (id);
CREATE TABLE pp_1a PARTITION OF pp_1 FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE pp_1b PARTITION OF pp_1 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE pp_d PARTITION OF pp DEFAULT;
INSERT INTO pp SELECT i, CASE WHEN i % 37 <> 0 THEN i * 11 END, 'p' || i, i % 50, i % 30 FROM generate_series(1, 4000) i;
CREATE INDEX ON pp (k8);
CREATE INDEX ON pp_0 (kt);

CREATE TABLE pc (id int, k8 int8, kt text, v int4);
INSERT INTO pc SELECT i, i * 13, 'c' || i, i % 50 FROM generate_series(1, 2000) i;
CREATE INDEX ON pc (k8);

CREATE TABLE pe (id int, k4 int4, kt text, v int4);

CREATE TABLE src (id int, a4 int4, a8 int8, at text, au uuid);
INSERT INTO src VALUES $src_values;
CREATE TABLE nothing (LIKE src);

-- stored filters for BloomBatch: large ones (batched), small ones, NULL
CREATE TABLE fl (name text PRIMARY KEY, bf bloomfilter);
INSERT INTO fl SELECT 'pt.k4.big', bloom_agg(k4, 2000000, 0.01) FROM pt WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pt.kt.big', bloom_agg(kt, 2000000, 0.01) FROM pt WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pp.k8.big', bloom_agg(k8, 2000000, 0.01) FROM pp WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pt.k8.small', bloom_agg(k8, 1000, 0.01) FROM pt WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pt.ku.small', bloom_agg(ku, 1000, 0.01) FROM pt WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pt.v.small', bloom_agg(v, 1000, 0.01) FROM pt WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pt.kv.small', bloom_agg(kv::text, 1000, 0.01) FROM pt WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'ih.k4.small', bloom_agg(k4, 1000, 0.01) FROM ih WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'ih.kt.big', bloom_agg(kt, 2000000, 0.01) FROM ih WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pp.kt.small', bloom_agg(kt, 1000, 0.01) FROM pp WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pc.k8.counting', bloom_agg(k8, 100000, 0.01, 'counting') FROM pc WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pc.kt.small', bloom_agg(kt, 1000, 0.01) FROM pc WHERE id % 3 <> 0;
INSERT INTO fl SELECT 'pe.k4.small', bloom_agg(k, 1000, 0.01) FROM generate_series(1, 10) k;
INSERT INTO fl SELECT 'pe.kt.small', bloom_agg(k::text, 1000, 0.01) FROM generate_series(1, 10) k;
INSERT INTO fl SELECT 'pe.v.small', bloom_agg(k, 1000, 0.01) FROM generate_series(1, 10) k;
INSERT INTO fl SELECT 'ih.v.small', bloom_agg(v, 1000, 0.01) FROM ih;
INSERT INTO fl SELECT 'pp.v.small', bloom_agg(v, 1000, 0.01) FROM pp;
INSERT INTO fl SELECT 'pc.v.small', bloom_agg(v, 1000, 0.01) FROM pc;
INSERT INTO fl VALUES ('null', NULL);

-- PL/pgSQL and SQL functions doing lookups
CREATE FUNCTION f_pt_k4(k int4) RETURNS SETOF int LANGUAGE plpgsql AS \$\$
BEGIN RETURN QUERY SELECT id FROM pt WHERE k4 = k; END \$\$;
CREATE FUNCTION f_pt_kt_exists(k text) RETURNS bool LANGUAGE plpgsql AS \$\$
BEGIN IF EXISTS (SELECT 1 FROM pt WHERE kt = k) THEN RETURN true; END IF; RETURN false; END \$\$;
CREATE FUNCTION f_pp_count(ks int8[]) RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE n bigint; BEGIN SELECT count(*) INTO n FROM pp WHERE k8 = ANY (ks); RETURN n; END \$\$;
CREATE FUNCTION f_ih_loop(lo int, hi int) RETURNS int LANGUAGE plpgsql AS \$\$
DECLARE c int := 0; BEGIN
	FOR i IN lo .. hi LOOP
		PERFORM 1 FROM ih WHERE k4 = i;
		IF FOUND THEN c := c + 1; END IF;
	END LOOP;
	RETURN c;
END \$\$;
CREATE FUNCTION f_dyn(tab text, col text, k int8) RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE n bigint; BEGIN
	EXECUTE format('SELECT count(*) FROM %s WHERE %I = \$1', tab, col) INTO n USING k;
	RETURN n;
END \$\$;
CREATE FUNCTION f_sql_pc(k int8) RETURNS SETOF int LANGUAGE sql STABLE AS \$\$
	SELECT id FROM pc WHERE k8 = k \$\$;
CREATE FUNCTION f_batch(fname text, lo int) RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE f bloomfilter; n bigint; BEGIN
	SELECT bf INTO f FROM fl WHERE name = fname;
	SELECT count(*) INTO n FROM pt WHERE f @> kt AND id >= lo;
	RETURN n;
END \$\$;
-- WHERE CURRENT OF a PL/pgSQL cursor over a lookup
CREATE FUNCTION f_current_of(k int4) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE cur CURSOR FOR SELECT id FROM pt WHERE k4 = k ORDER BY id FOR UPDATE; r record; out text := ''; BEGIN
	OPEN cur;
	LOOP
		FETCH cur INTO r;
		EXIT WHEN NOT FOUND;
		UPDATE pt SET v = v + 1000 WHERE CURRENT OF cur;
		out := out || r.id || ',';
	END LOOP;
	CLOSE cur;
	RETURN out;
END \$\$;
CREATE FUNCTION f_current_of_nolock(k int4) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE cur CURSOR FOR SELECT id FROM pt WHERE k4 = k; r record; out text := ''; BEGIN
	OPEN cur;
	FETCH cur INTO r;
	IF FOUND THEN
		UPDATE pt SET v = v + 1000 WHERE CURRENT OF cur;
		out := r.id::text;
	END IF;
	CLOSE cur;
	RETURN out;
END \$\$;

ANALYZE;
${\ guard_sql()}};
}

# The guards of schema_sql.
sub guard_sql
{
	# an inheritance child guarded on one column only; pc's guards small
	# enough to grow layers under the concurrent writer
	return q{
CREATE INDEX pt_k4_g ON pt USING bloomguard (k4);
CREATE INDEX pt_k8_g ON pt USING bloomguard (k8);
CREATE INDEX pt_kt_g ON pt USING bloomguard (kt);
CREATE INDEX pt_ku_g ON pt USING bloomguard (ku);
CREATE INDEX pt_kv_g ON pt USING bloomguard (kv);
CREATE INDEX ih_k4_g ON ih USING bloomguard (k4);
CREATE INDEX ih_kt_g ON ih USING bloomguard (kt);
CREATE INDEX ih_c1_k4_g ON ih_c1 USING bloomguard (k4);
CREATE INDEX ih_c1_kt_g ON ih_c1 USING bloomguard (kt);
CREATE INDEX ih_c2_k4_g ON ih_c2 USING bloomguard (k4);
CREATE INDEX pp_k8_g ON pp USING bloomguard (k8);
CREATE INDEX pp_0_kt_g ON pp_0 USING bloomguard (kt);
CREATE INDEX pp_1a_kt_g ON pp_1a USING bloomguard (kt);
CREATE INDEX pc_k8_g ON pc USING bloomguard (k8) WITH (capacity = 1000);
CREATE INDEX pc_kt_g ON pc USING bloomguard (kt) WITH (capacity = 1000, fpr = 0.05);
CREATE INDEX pe_k4_g ON pe USING bloomguard (k4);
CREATE INDEX pe_kt_g ON pe USING bloomguard (kt);
};
}

# --------------------------------------------------------- query shapes ----
# Each returns a case (see the top); gen_case adds the planner settings.

sub out_cols
{
	my ($a, $col) = @_;
	my $p = $a ? "$a." : '';
	return pick("${p}id", "${p}id, ${p}$col", "${p}id, ${p}v", "${p}id, ${p}$col, ${p}tableoid::regclass");
}

sub sh_point
{
	my ($fam, $t, $col) = target();
	my $extra = chance(0.3) ? ' AND id % ' . (2 + rnd(5)) . ' = 0' : '';
	return { body => "SELECT " . out_cols('', $col) . " FROM $t WHERE " . pred($fam, $col) . "$extra;" };
}

sub sh_in_list
{
	my ($fam, $t, $col) = target();
	my $n = pick(0, 1, 2, 3, 8, 20);
	my $arr = array_literal($fam, $col, $n);
	$arr = "'{}'::$type{$col}\[\]" if $n == 0;
	my $w = pick("$col = ANY ($arr)", "$col IN (" . join(', ', map { key($fam, $col) } 1 .. ($n || 1)) . ')',
		"$col = ANY ($arr) AND $col IS NOT NULL", "NOT ($col = ANY ($arr))",
		"$col = ANY (" . array_literal($fam, $col, 2) . ") AND $col = ANY ($arr)");
	return { body => "SELECT " . out_cols('', $col) . " FROM $t WHERE $w;" };
}

sub sh_exists
{
	my ($fam, $t, $col) = target();
	my $not = chance(0.4) ? 'NOT ' : '';
	my $sc = src_col($col);
	my $inner = "x.$col = s.$sc";
	$inner .= ' AND ' . pred($fam, $col, 'x') if chance(0.3);
	my $top = chance(0.3) ? 'WHERE' : 'WHERE s.id > 0 AND';
	return { body => "SELECT s.id FROM " . src_table() . " s $top ${not}EXISTS (SELECT 1 FROM $t x WHERE $inner);" };
}

sub sh_correlated
{
	my ($fam, $t, $col) = target();
	my $sc = src_col($col);
	my $agg = pick('count(*)', 'max(x.id)', 'sum(x.v)', 'array_agg(x.id ORDER BY x.id)');
	my $sub = "(SELECT $agg FROM $t x WHERE x.$col = s.$sc)";
	$sub = "(SELECT x.id FROM $t x WHERE x.$col = s.$sc ORDER BY x.id LIMIT 1)" if chance(0.3);
	my $w = chance(0.3) ? " WHERE $sub IS NOT NULL" : '';
	return { body => "SELECT s.id, $sub FROM " . src_table() . " s$w;" };
}

sub sh_join
{
	my ($fam, $t, $col) = target();
	my $sc = src_col($col);
	my $kind = pick('JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN', 'CROSS JOIN');
	my $rhs = chance(0.5) ? "$t x" : "(SELECT * FROM $t WHERE " . pred($fam, $col) . ") x";
	my $on = "x.$col = s.$sc";
	$on .= ' AND ' . pred($fam, $col, 'x') if chance(0.5);
	if ($kind eq 'CROSS JOIN')
	{
		return { body => "SELECT s.id, x.id FROM " . src_table() . " s CROSS JOIN $rhs WHERE $on;" };
	}
	# RIGHT and FULL joins of a whole table: keep the table's side small
	$rhs = "(SELECT * FROM $t WHERE " . pred($fam, $col) . ") x" if $kind =~ /RIGHT|FULL/;
	my $w = chance(0.3) ? " WHERE x.id IS NULL OR x.id % 2 = 0" : '';
	return { body => "SELECT s.id, x.id, x.$col FROM " . src_table() . " s $kind $rhs ON $on$w;" };
}

sub sh_self_join
{
	# an equality the planner derives: y.c = x.c AND x.c = key
	my ($fam, $t, $col) = target();
	my $t2 = table_of($fam);
	my $k = key($fam, $col);
	return { body => "SELECT x.id, y.id FROM $t x JOIN $t2 y ON y.$col = x.$col WHERE x.$col = $k AND x.id <= y.id;" };
}

sub sh_values_join
{
	my ($fam, $t, $col) = target();
	my $vals = join(', ', map { '(' . typed(key($fam, $col), $col) . ')' } 1 .. (1 + rnd(4)));
	my $kind = pick('JOIN', 'LEFT JOIN');
	return { body => "SELECT v.k, x.id FROM (VALUES $vals) v(k) $kind $t x ON x.$col = v.k;" };
}

sub sh_in_subquery
{
	my ($fam, $t, $col) = target();
	my $sc = src_col($col);
	my $w = pick("$col IN (SELECT $sc FROM src WHERE id % 3 = 0)",
		"$col = (SELECT $sc FROM src WHERE id = " . (1 + rnd(40)) . ")",
		"$col = ANY (ARRAY(SELECT $sc FROM src WHERE id < 10))",
		"$col NOT IN (SELECT $sc FROM src WHERE $sc IS NOT NULL) AND " . pred($fam, $col));
	return { body => "SELECT id FROM $t WHERE $w;" };
}

sub sh_lateral
{
	my ($fam, $t, $col) = target();
	my $sc = src_col($col);
	my $lim = pick('', ' LIMIT 1', ' LIMIT 2', ' LIMIT 0', ' OFFSET 1');
	my $lat = "LATERAL (SELECT x.id FROM $t x WHERE x.$col = s.$sc ORDER BY x.id$lim) l";
	my $from = chance(0.5) ? "s, $lat" : "s LEFT JOIN $lat ON true";
	return { body => "SELECT s.id, l.id FROM " . src_table() . " $from;" };
}

sub sh_union
{
	my @parts;
	for (1 .. 2 + rnd(2))
	{
		my ($fam, $t, $col) = target();
		push @parts, "SELECT id, '$t' FROM $t WHERE " . pred($fam, $col);
	}
	my $op = pick('UNION ALL', 'UNION ALL', 'UNION', 'EXCEPT', 'INTERSECT');
	return { body => join(" $op ", @parts) . ';' };
}

sub sh_cte
{
	my ($fam, $t, $col) = target();
	my $mat = pick('', 'MATERIALIZED ', 'NOT MATERIALIZED ');
	my $sc = src_col($col);
	my $main = pick("SELECT * FROM c", "SELECT s.id, c.id FROM src s JOIN c ON c.$col = s.$sc",
		"SELECT count(*) FROM c a, c b WHERE a.id = b.id",
		"SELECT id FROM c WHERE id IN (SELECT id FROM c WHERE id % 2 = 0)");
	return { body => "WITH c AS ${mat}(SELECT id, $col FROM $t WHERE " . pred($fam, $col) . ") $main;" };
}

sub sh_window
{
	my ($fam, $t, $col) = target();
	my $w = pick('row_number() OVER (ORDER BY id)', 'count(*) OVER ()', 'sum(v) OVER (PARTITION BY v % 3)',
		'lag(id) OVER (ORDER BY id)', 'rank() OVER (PARTITION BY ' . $col . ' ORDER BY id)');
	return { body => "SELECT id, $w FROM $t WHERE " . pred($fam, $col) . ";" };
}

sub sh_limit
{
	my ($fam, $t, $col) = target();
	my $lim = pick('LIMIT 0', 'LIMIT 1', 'LIMIT 3', 'LIMIT ALL', 'LIMIT 2 OFFSET 1', 'OFFSET 2', 'LIMIT 0 OFFSET 5');
	my $dir = pick('', ' DESC');
	if (chance(0.3))
	{
		# without ORDER BY: only the count is determined
		return { body => "SELECT count(*) FROM (SELECT id FROM $t WHERE " . pred($fam, $col) . " $lim) q;" };
	}
	return { body => "SELECT id, $col FROM $t WHERE " . pred($fam, $col) . " ORDER BY id$dir, $col $lim;", ordered => 1 };
}

sub sh_agg
{
	my ($fam, $t, $col) = target();
	my ($g, $sel) = @{ pick([ '', '' ], [ ' GROUP BY v % 4', 'v % 4, ' ], [ " GROUP BY $col", "$col, " ],
		[ ' GROUP BY v % 4 HAVING count(*) > 1', 'v % 4, ' ]) };
	return { body => "SELECT ${sel}count(*), count($col), sum(id), min(id), max(id) FROM $t WHERE " . pred($fam, $col) . "$g;" };
}

sub sh_cursor
{
	my ($fam, $t, $col) = target();
	my $scroll = chance(0.6);
	my $q = "SELECT id, $col FROM $t WHERE " . pred($fam, $col) . " ORDER BY id";
	my @f = ('FETCH 2 FROM c;');
	push @f, pick('FETCH ALL FROM c;', 'FETCH 1 FROM c;', 'MOVE 1 IN c;');
	push @f, pick('FETCH BACKWARD 3 FROM c;', 'FETCH FIRST FROM c;', 'FETCH LAST FROM c;',
		'FETCH BACKWARD ALL FROM c;', 'FETCH ABSOLUTE 2 FROM c;', 'FETCH RELATIVE -1 FROM c;') if $scroll;
	push @f, 'FETCH ALL FROM c;';
	my $s = $scroll ? 'SCROLL ' : '';
	my $hold = chance(0.2) ? ' WITH HOLD' : '';
	return { body => "DECLARE c ${s}CURSOR$hold FOR $q; " . join(' ', @f) . ' CLOSE c;', tx => 1, ordered => 1 };
}

sub sh_prepared
{
	my ($fam, $t, $col) = target();
	my $generic = chance(0.5);
	my $ty = $type{$col};
	my ($decl, $w, $arg);
	my $r = rnd(4);
	if ($r == 0)
	{
		($decl, $w, $arg) = ("$ty\[\]", "$col = ANY (\$1)", sub { array_literal($fam, $col, 1 + rnd(4)) });
	}
	elsif ($r == 1)
	{
		($decl, $w, $arg) = ("$ty, $ty", "$col IN (\$1, \$2)", sub { typed(key($fam, $col), $col) . ', ' . typed(key($fam, $col), $col) });
	}
	elsif ($r == 2 && $ty =~ /^int/)
	{
		# a key computed from the parameter; a LIMIT parameter
		($decl, $w, $arg) = ("$ty, int", "$col = \$1 + 0 ORDER BY id LIMIT \$2", sub { typed(key($fam, $col), $col) . ', ' . pick(0, 1, 5) });
	}
	else
	{
		($decl, $w, $arg) = ($ty, "$col = \$1", sub { typed(key($fam, $col), $col) });
	}
	my $body = ($generic ? 'SET plan_cache_mode = force_generic_plan; ' : '')
	  . "PREPARE p($decl) AS SELECT id FROM $t WHERE $w; ";
	$body .= "EXECUTE p(" . $arg->() . "); " for 1 .. ($generic ? 3 : 7);
	$body .= 'DEALLOCATE p;';
	return { body => $body };
}

sub sh_plpgsql
{
	my $r = rnd(7);
	my $body;
	if ($r == 0) { $body = 'SELECT * FROM f_pt_k4(' . key('pt', 'k4') . ');' }
	elsif ($r == 1) { $body = 'SELECT f_pt_kt_exists(' . key('pt', 'kt') . '), f_pt_kt_exists(' . key('pt', 'kt') . ');' }
	elsif ($r == 2) { $body = 'SELECT f_pp_count(' . array_literal('pp', 'k8', 1 + rnd(5)) . ');' }
	elsif ($r == 3) { my $lo = rnd(4200); $body = "SELECT f_ih_loop($lo, " . ($lo + rnd(40)) . ');' }
	elsif ($r == 4)
	{
		my ($fam, $t, $col) = target();
		$col = pick('k4', 'v') if $fam eq 'ih' || $fam eq 'pe';
		$col = pick('k8', 'v') unless $type{$col} =~ /^int/;
		my $k = key($fam, $col);
		$body = "SELECT f_dyn('$t', '$col', $k);";
	}
	elsif ($r == 5) { $body = 'SELECT s.id, (SELECT count(*) FROM f_sql_pc(s.a8)) FROM src s;' }
	else { $body = 'SELECT s.id, f_pt_kt_exists(s.at) FROM ' . src_table() . ' s;' }
	# executed often enough for PL/pgSQL's generic plans
	$body = "$body $body $body $body $body $body" if chance(0.3);
	return { body => $body };
}

sub sh_dml
{
	my ($fam, $t, $col) = target();
	$t = 'ih' if $t eq 'ONLY ih' && chance(0.5);
	my $r = rnd(4);
	my $p = pred($fam, $col);
	my $body;
	if ($r == 0) { $body = "UPDATE $t SET v = v + 1 WHERE $p RETURNING id, v;" }
	elsif ($r == 1) { $body = "DELETE FROM $t WHERE $p RETURNING id, $col;" }
	elsif ($r == 2 && $fam eq 'pp') { $body = "UPDATE $t SET d = (d + 10) % 30 WHERE $p RETURNING id, d, tableoid::regclass;" }
	else { $body = "UPDATE $t SET $col = NULL WHERE $p RETURNING id;" }
	# then look up the changed keys in the same transaction
	$body .= " SELECT id, v FROM $t WHERE " . pred($fam, $col) . ';' if chance(0.5);
	return { body => $body, tx => 1 };
}

sub sh_insert_lookup
{
	# rows this transaction wrote, looked up in it (and in a later statement)
	my ($fam, $t, $col) = target();
	$t = $fam if $t =~ /ONLY|^pp/;
	$col = 'kt' if $col eq 'v';
	my $k = absent_key($fam, $col, 1 + rnd(3000));
	my $cols = $fam eq 'pp' ? "id, $col, v, d" : "id, $col, v";
	my $vals = $fam eq 'pp' ? "-1, $k, 0, " . rnd(30) : "-1, $k, 0";
	my $body = "INSERT INTO $t ($cols) VALUES ($vals) RETURNING id; SELECT id, v FROM $t WHERE $col = $k;";
	$body .= " UPDATE $t SET $col = $k WHERE " . pred($fam, $col) . " RETURNING id; SELECT id FROM $t WHERE $col = $k;" if chance(0.5);
	$body .= " SELECT count(*) FROM $t WHERE $col = ANY (ARRAY[" . typed($k, $col) . ', ' . typed(key($fam, $col), $col) . ']);';
	$body = "INSERT INTO $t ($cols) SELECT $vals WHERE EXISTS (SELECT 1 FROM $t WHERE $col = $k) RETURNING id;" if chance(0.1);
	return { body => $body, tx => 1 };
}

sub sh_merge
{
	my ($fam, $t, $col) = target();
	$t = $fam if $t =~ /ONLY|^pp/;
	$col = 'kt' if $col eq 'v';
	my @k = map { typed(key($fam, $col), $col) } 1 .. (1 + rnd(4));
	my $n = 0;
	my $vals = join(', ', map { $n++; "($_, -$n)" } @k);
	my $ins = $fam eq 'pp' ? "INSERT (id, $col, v, d) VALUES (s.n, s.k, -1, 3)" : "INSERT (id, $col, v) VALUES (s.n, s.k, -1)";
	my $matched = pick('WHEN MATCHED THEN UPDATE SET v = x.v + 100', 'WHEN MATCHED AND x.id % 2 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = -5',
		'WHEN MATCHED THEN DELETE');
	my $nm = chance(0.6) ? " WHEN NOT MATCHED THEN $ins" : '';
	my $body = "MERGE INTO $t x USING (VALUES $vals) s(k, n) ON x.$col = s.k $matched$nm; "
	  . "SELECT id, v FROM $t WHERE $col IN (" . join(', ', @k) . ") OR id < 0;";
	return { body => $body, tx => 1 };
}

sub sh_for_update
{
	my ($fam, $t, $col) = target();
	$t = 'pt' if $t eq 'ONLY ih';
	my $lock = pick('FOR UPDATE', 'FOR SHARE', 'FOR NO KEY UPDATE', 'FOR KEY SHARE');
	my $wait = pick('', '', ' SKIP LOCKED', ' NOWAIT');
	if (chance(0.3))
	{
		my $sc = src_col($col);
		return { body => "SELECT s.id, x.id FROM src s JOIN $t x ON x.$col = s.$sc WHERE " . pred($fam, $col, 'x') . " $lock OF x$wait;", tx => 1 };
	}
	return { body => "SELECT id FROM $t WHERE " . pred($fam, $col) . " ORDER BY id $lock$wait;", tx => 1 };
}

sub sh_current_of
{
	# known bug 5: WHERE CURRENT OF a cursor over a gated lookup
	my $col = pick('k4', 'kt', 'k8');
	my $k = chance(0.8) ? present_key('pt', $col, 1 + rnd(3000)) : key('pt', $col);
	if (chance(0.3))
	{
		return { body => 'SELECT ' . pick('f_current_of', 'f_current_of_nolock') . '(' . present_key('pt', 'k4', 1 + rnd(3000)) . ');', tx => 1 };
	}
	my $fu = chance(0.3) ? ' FOR UPDATE' : '';
	return { body => "DECLARE c CURSOR FOR SELECT id FROM pt WHERE $col = $k$fu; FETCH 1 FROM c; "
		  . "UPDATE pt SET v = v + 1000 WHERE CURRENT OF c RETURNING id, v; CLOSE c;", tx => 1 };
}

sub sh_batch
{
	my ($fam, $t, $col) = target();
	$col = 'kt' if $col eq 'kv';
	my @f = grep { /^\Q$fam.$col.\E/ } fl_names();
	my $fname = @f ? pick(@f) : 'null';
	$fname = 'null' if chance(0.1);
	my $f = "(SELECT bf FROM fl WHERE name = '$fname')";
	my $cond = chance(0.5) ? "$f @> $col" : "$col <@ $f";
	$cond .= ' AND ' . pred($fam, $col) if chance(0.3);
	$cond = "id % 3 = 1 AND $cond" if chance(0.3);
	my $r = rnd(5);
	return { body => "SELECT count(*), sum(id) FROM $t WHERE $cond;" } if $r == 0;
	return { body => "SELECT id, $col FROM $t WHERE $cond ORDER BY id LIMIT " . (1 + rnd(5)) . ';', ordered => 1 } if $r == 1;
	return { body => "SELECT f_batch('" . pick('pt.kt.big', 'null', 'pc.kt.small') . "', " . rnd(3000) . ');' } if $r == 2;
	return { body => "SELECT bf IS NULL FROM fl WHERE name = '$fname'; SELECT id, v * 2 FROM $t WHERE $cond;" } if $r == 3;
	return { body => "SELECT count(*) FROM $t WHERE $cond AND (v > 10 OR $col IS NULL);" };
}

sub fl_names
{
	return ('pt.k4.big', 'pt.kt.big', 'pp.k8.big', 'pt.k8.small', 'pt.ku.small', 'pt.v.small',
		'ih.k4.small', 'ih.kt.big', 'pp.kt.small', 'pc.k8.counting', 'pc.kt.small', 'pe.k4.small',
		'pe.kt.small', 'pe.v.small', 'ih.v.small', 'pp.v.small', 'pc.v.small');
}

sub sh_start_errors
{
	# known bug 3: a key that fails to evaluate where the scan never runs
	my $r = pick(0, 0, 0, 1, 2, 3, 4, 4, 5);
	my $t = pick('pe', 'pe', 'pt', 'pp');
	my ($col) = $t eq 'pp' ? 'k8' : 'k4';
	my $lim = pick('LIMIT 0', 'LIMIT 1', '');
	if ($r == 0)
	{
		return { body => "SET plan_cache_mode = force_generic_plan; PREPARE p(text) AS SELECT id FROM $t WHERE $col = \$1::int $lim; "
			  . "EXECUTE p('" . pick('abc', 'abc', '12', '') . "'); DEALLOCATE p;" };
	}
	return { body => "SELECT id FROM $t WHERE $col = 10 / " . pick(0, 1, 2) . " $lim;" } if $r == 1;
	return { body => "SELECT s.id FROM nothing s, LATERAL (SELECT id FROM $t WHERE $col = 10 / s.a4) l;" } if $r == 2;
	return { body => "SELECT id FROM $t WHERE $col = ('1' || " . pick("'x'", "'2'") . ")::int $lim;" } if $r == 3;
	if ($r == 4)
	{
		return { body => "SET plan_cache_mode = force_generic_plan; PREPARE p(int, int) AS SELECT id FROM $t WHERE $col = 10 / \$1 LIMIT \$2; "
			  . "EXECUTE p(" . pick(0, 5) . ', ' . pick(0, 1) . '); DEALLOCATE p;' };
	}
	return { body => "SELECT count(*) FROM src s WHERE s.id < 0 AND EXISTS (SELECT 1 FROM $t WHERE $col = 10 / (s.id - s.id));" };
}

sub sh_shared_contains
{
	# 1.1's bloom_shared_contains (by name, over the guard indexes) in a scan;
	# known bug 4 of 1.1 (with parallel settings)
	my ($fam, $t, $col) = target();
	$col = { pt => 'k4', ih => 'k4', pp => 'k8', pc => 'k8', pe => 'k4' }->{$fam} if $col eq 'v' || $fam eq 'pp';
	my $name = "public.$fam.$col";
	my $w = chance(0.5) ? '' : ' WHERE ' . pred($fam, $col);
	my $par = 'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET min_parallel_index_scan_size = 0;'
	  . ' SET enable_indexscan = off; SET enable_bitmapscan = off;';
	return { body => "SELECT count(*) FILTER (WHERE bloom_shared_contains('$name', $col)), count(*) FROM $t$w;",
		settings => chance(0.7) ? $par : undef, fresh => chance(0.5) };
}

# [ weight, shape, readonly ]
my @shapes = (
	[ 10, \&sh_point, 1 ], [ 8, \&sh_in_list, 1 ], [ 7, \&sh_exists, 1 ],
	[ 5, \&sh_correlated, 1 ], [ 8, \&sh_join, 1 ], [ 3, \&sh_self_join, 1 ],
	[ 3, \&sh_values_join, 1 ], [ 3, \&sh_in_subquery, 1 ], [ 5, \&sh_lateral, 1 ],
	[ 4, \&sh_union, 1 ], [ 4, \&sh_cte, 1 ], [ 3, \&sh_window, 1 ], [ 5, \&sh_limit, 1 ],
	[ 4, \&sh_agg, 1 ], [ 5, \&sh_cursor, 1 ], [ 6, \&sh_prepared, 1 ], [ 5, \&sh_plpgsql, 1 ],
	[ 5, \&sh_dml, 0 ], [ 3, \&sh_insert_lookup, 0 ], [ 3, \&sh_merge, 0 ], [ 3, \&sh_for_update, 0 ],
	[ 3, \&sh_current_of, 0 ], [ 6, \&sh_batch, 1 ], [ 5, \&sh_start_errors, 1 ],
	[ 2, \&sh_shared_contains, 1 ],
);
my %shape_name;
{
	no strict 'refs';
	for my $name (grep { /^sh_/ } keys %DiffQueries::)
	{
		$shape_name{ \&{"DiffQueries::$name"} } = $name =~ s/^sh_//r;
	}
}

# The planner settings of a case (the same with guards on and off).
sub planner_settings
{
	my $r = rnd(100);
	my $par = 'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET min_parallel_index_scan_size = 0;';
	return '' if $r < 45;
	return $par if $r < 58;
	return "$par SET enable_seqscan = off;" if $r < 64;
	return "$par SET enable_seqscan = off; SET enable_bitmapscan = off;" if $r < 68;
	return "$par SET parallel_leader_participation = off; SET enable_seqscan = off;" if $r < 70;
	return "$par SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;" if $r < 73;
	return 'SET enable_seqscan = off;' if $r < 79;
	return 'SET enable_seqscan = off; SET enable_indexscan = off;' if $r < 84;
	return 'SET enable_seqscan = off; SET enable_bitmapscan = off;' if $r < 88;
	return 'SET enable_hashjoin = off; SET enable_mergejoin = off;' if $r < 93;
	return 'SET enable_nestloop = off;' if $r < 96;
	return 'SET enable_indexscan = off; SET enable_bitmapscan = off;';
}

# A random case; readonly: only shapes that do not write.
sub gen_case
{
	my (%opt) = @_;
	my @s = grep { !$opt{readonly} || $_->[2] } @shapes;
	my $total = 0;
	$total += $_->[0] for @s;
	my $r = rnd($total);
	my $sh;
	for (@s)
	{
		$sh = $_;
		last if ($r -= $_->[0]) < 0;
	}
	my $case = $sh->[1]->();
	$case->{name} = $shape_name{ $sh->[1] };
	$case->{settings} = ($case->{settings} // planner_settings()) . " SET bf.key = '" . (3 * rnd(2000)) . "';";
	return $case;
}

# ------------------------------------------------------- the test driver ----
# The phases of a differential run against $node, whose schema_sql is
# loaded (see 135_guard_index_differential.pl): %opt has name (for the log files), seed,
# queries, started (the time the test started) and markers (plan markers
# some sampled plan must have).
sub drive
{
	my ($node, %opt) = @_;
	my ($seed, $queries, $started) = @opt{qw(seed queries started)};
	seed($seed);
	my $mismatch_file = "$PostgreSQL::Test::Utils::log_path/$opt{name}_mismatches.txt";
	open(my $mfh, '>', $mismatch_file) or die "$mismatch_file: $!";
	my (%gated_by, $sampled, $gated);
	my $total_cases = 0;

	# Run $count cases; returns (cases run, mismatches, cases with rows).
	# $level: undef (READ COMMITTED, no transaction of the runner's), or an
	# isolation level for transactions of $group cases each.
	my $phase = sub
	{
		my ($name, $count, %opt) = @_;
		my $t0 = time;
		my $sess = DiffQueries::Session->new($node, 'postgres');
		my $mode = $opt{level} ? 'sub' : 'rc';
		my ($ran, $skipped, $with_rows, @mism, %by_shape) = (0, 0, 0);
		my $in_tx = 0;
		for my $i (1 .. $count)
		{
			my $case = gen_case(readonly => $opt{readonly});
			if ($opt{level} && !$in_tx)
			{
				$sess->run("BEGIN ISOLATION LEVEL $opt{level}; SELECT 1 FROM src LIMIT 1;");
				$in_tx = 1;
			}
			my ($rep, $o) = eval { run_case($sess, $case, $mode, again => $opt{again}) };
			if (!$o)
			{
				$rep = "shape $case->{name}: $@\nsettings: $case->{settings}\nbody:\n$case->{body}\n";
				$in_tx = 0;
			}
			if ($rep && $opt{transient} && $rep =~ /errors: \[[^\]]*(40001|40P01|55P03|57014)/)
			{
				# a lock or serialization failure of the concurrent phase
				$skipped++;
				$rep = undef;
			}
			$ran++;
			print $mfh "-- case $i ($case->{name}) errors [$o->[0][1]{errors}] $o->[0][1]{msg}\n$case->{settings}\n$case->{body}\n"
			  if $ENV{BF_DIFF_DUMP} && $o;
			if ($rep)
			{
				push @mism, $rep;
				$by_shape{ $case->{name} }++;
			}
			elsif ($o && $o->[0][1]{nrows} > 0 && $o->[0][1]{errors} eq '')
			{
				$with_rows++;
			}
			if ($i % 5 == 0)
			{
				my ($m, $eo) = eval { explain_markers($sess, $case, $mode) };
				if ($m)
				{
					$sampled++;
					$gated++ if %$m;
					$gated_by{$_}++ for keys %$m;
				}
			}
			if ($in_tx && ($i % ($opt{group} // 4) == 0 || $i == $count))
			{
				$sess->run('COMMIT;');
				$in_tx = 0;
			}
			$sess->reconnect if $opt{reconnect} && $i % $opt{reconnect} == 0;
		}
		$sess->quit;
		$total_cases += $ran;
		my $secs = time - $t0;
		note sprintf('%s: %d cases in %.1f s (%.1f ms each), %d with rows, %d skipped, %d mismatches',
			$name, $ran, $secs, 1000 * $secs / ($ran || 1), $with_rows, $skipped, scalar @mism);
		print $mfh "==================== $name: " . scalar(@mism) . " mismatches\n";
		print $mfh "$_\n" for @mism;
		is(scalar @mism, 0, "$name: no mismatch")
		  or diag("$name mismatches by shape: " . join(', ', map { "$_=$by_shape{$_}" } sort keys %by_shape)
			  . "\n(all of them in $mismatch_file)");
		my $shown = 0;
		for (@mism)
		{
			last if ++$shown > ($ENV{BF_DIFF_SHOW} // 25);
			diag("$name mismatch $shown:\n$_");
		}
		cmp_ok($ran, '>=', $count, "$name: every case ran");
		cmp_ok($with_rows, '>=', $ran / 4, "$name: at least a quarter of the cases returned rows");
		return;
	};

	$phase->('read committed', $queries, again => 1, reconnect => 100);
	$phase->('repeatable read', int($queries / 2), level => 'REPEATABLE READ');
	$phase->('serializable', int($queries / 3), level => 'SERIALIZABLE');

	# 4. A concurrent writer, the reader in REPEATABLE READ transactions
	my $wfile = "$PostgreSQL::Test::Utils::tmp_check/$opt{name}_writer.sql";
	PostgreSQL::Test::Utils::append_to_file($wfile, writer_script(20000));
	my ($wout, $werr) = ("$PostgreSQL::Test::Utils::tmp_check/$opt{name}_writer.out", "$PostgreSQL::Test::Utils::tmp_check/$opt{name}_writer.err");
	my $writer = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0', '-d', $node->connstr('postgres'), '-f', $wfile ],
		'>', $wout, '2>', $werr);
	$phase->('repeatable read with a concurrent writer', int($queries / 3), level => 'REPEATABLE READ',
		readonly => 1, transient => 1);
	$writer->kill_kill;
	my $wtext = PostgreSQL::Test::Utils::slurp_file($wout);
	my $ops = () = $wtext =~ /^op$/mg;
	my $wlog = PostgreSQL::Test::Utils::slurp_file($werr);
	my %werrs;
	$werrs{$1}++ while $wlog =~ /ERROR:\s+([^\n]*)/g;
	note "the writer ran $ops operations; its errors: " . join('; ', map { "$werrs{$_}x $_" } sort keys %werrs);
	cmp_ok($ops, '>=', 50, 'the concurrent writer ran');

	# not vacuous: plans with gates and batches
	note "gated plans: $gated of $sampled sampled cases; markers: " . join(', ', map { "$_=$gated_by{$_}" } sort keys %gated_by);
	cmp_ok($gated // 0, '>=', ($sampled // 0) * 0.3, 'at least 30% of the sampled cases had a gate or a batch in a plan');
	ok(($gated_by{$_} // 0) > 0, "some plans had $_") for @{ $opt{markers} };

	close $mfh;
	diag(sprintf('%d cases in %.0f s (seed %s)', $total_cases, time - $started, $seed));
		return;
}

# ------------------------------------------------------------ a session ----
package DiffQueries::Session;

use strict;
use warnings;

# A psql reading scripts from its stdin; errors do not stop it.
sub new
{
	my ($class, $node, $db) = @_;
	my $self = bless { node => $node, db => $db, in => '', out => '', err => '', n => 0 }, $class;
	$self->start;
	return $self;
}

sub start
{
	my ($self) = @_;
	$self->{in} = $self->{out} = $self->{err} = '';
	$self->{timer} = IPC::Run::timeout(180);
	$self->{h} = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0', '-d', $self->{node}->connstr($self->{db}), '-f', '-' ],
		'<', \$self->{in}, '>', \$self->{out}, '2>', \$self->{err}, $self->{timer});
	$self->run("\\set VERBOSITY verbose\nSET client_min_messages = error;");
	return;
}

# Run $sql; returns (stdout, stderr), or dies on a timeout or a dead psql.
sub run
{
	my ($self, $sql) = @_;
	my $n = ++$self->{n};
	my $banner = "DIFF_BANNER_$n";
	$self->{out} = $self->{err} = '';
	$self->{in} .= "$sql\n;\n\\echo '$banner'\n\\warn '$banner'\n";
	$self->{timer}->start(180);
	eval {
		$self->{h}->pump until $self->{out} =~ /$banner\n/ && $self->{err} =~ /$banner\n/;
		1;
	} or do {
		my $e = $@;
		$self->{h}->kill_kill;
		$self->start;
		die "session lost: $e";
	};
	my ($out, $err) = ($self->{out}, $self->{err});
	$out =~ s/$banner\n//;
	$err =~ s/$banner\n//;
	return ($out, $err);
}

sub reconnect
{
	my ($self) = @_;
	$self->{in} .= "\\q\n";
	$self->{h}->finish;
	$self->start;
	return;
}

sub quit
{
	my ($self) = @_;
	$self->{in} .= "\\q\n";
	$self->{h}->finish;
	return;
}

package DiffQueries;

# ---------------------------------------------------------- the runner ----
my $on = 'SET bloomfilter.planner_guards = on; SET bloomfilter.batch_checks = on;';
my $off = 'SET bloomfilter.planner_guards = off; SET bloomfilter.batch_checks = off;';

# The outcome of one run: rows (sorted unless the case is ordered) and the
# SQLSTATEs of the errors, plus the first error message (not compared).
sub outcome
{
	my ($case, $out, $err) = @_;
	my @rows = split /\n/, $out;
	@rows = sort @rows unless $case->{ordered};
	my @states = $err =~ /ERROR:\s+([0-9A-Z]{5}):/g;
	my ($msg) = $err =~ /(ERROR:[^\n]*)/;
	return { rows => join("\n", @rows), errors => join(',', @states), msg => $msg // '', nrows => scalar @rows };
}

sub same { return $_[0]{rows} eq $_[1]{rows} && $_[0]{errors} eq $_[1]{errors}; }

sub outcome_text
{
	my ($o) = @_;
	my $rows = $o->{rows};
	$rows = substr($rows, 0, 1500) . "\n... (" . $o->{nrows} . ' rows)' if length($rows) > 1500;
	return "errors: [$o->{errors}] $o->{msg}\nrows:\n$rows";
}

# The SQL of one run of $case in mode rc (its own transaction, or none) or
# sub (a savepoint in the caller's transaction).
sub script
{
	my ($case, $guards, $mode, $extra) = @_;
	$extra //= '';
	if ($mode eq 'sub')
	{
		my $set = $guards =~ s/SET /SET LOCAL /gr;
		my $s = $case->{settings} =~ s/SET /SET LOCAL /gr;
		return "SAVEPOINT diff; $set $s $extra DISCARD PLANS;\n$case->{body}\nROLLBACK TO SAVEPOINT diff; RELEASE SAVEPOINT diff; DEALLOCATE ALL;";
	}
	my $body = $case->{tx} ? "BEGIN;\n$case->{body}\nROLLBACK;" : $case->{body};
	return "$guards $case->{settings} $extra DISCARD PLANS;\n$body\nROLLBACK; CLOSE ALL; DEALLOCATE ALL; RESET ALL; SET client_min_messages = error;";
}

# Run $case with the features on, off (and on again when $again); returns
# (mismatch report or undef, the outcomes).
sub run_case
{
	my ($sess, $case, $mode, %opt) = @_;
	my @runs = ([ 'on', $on ], [ 'off', $off ]);
	push @runs, [ 'on again', $on ] if $opt{again};
	my @o;
	for my $r (@runs)
	{
		$sess->reconnect if $case->{fresh} && $mode eq 'rc';
		my ($out, $err) = $sess->run(script($case, $r->[1], $mode));
		push @o, [ $r->[0], outcome($case, $out, $err) ];
	}
	my $ref = $o[1][1];
	my @bad = grep { !same($_->[1], $ref) } @o;
	# an internal error (XX000 ...) is a failure even when both runs raise it
	my @internal = grep { $_->[1]{errors} =~ /XX\d\d\d/ } @o;
	return (undef, \@o) unless @bad || @internal;
	my $rep = (@bad ? '' : 'internal error in both runs: ') . "shape $case->{name} ($mode)\nsettings: $case->{settings}\nbody:\n$case->{body}\n";
	$rep .= "--- $_->[0]:\n" . outcome_text($_->[1]) . "\n" for @o;
	return ($rep, \@o);
}

# The gate and batch markers in the plans of $case's statements (auto_explain
# at NOTICE, nested statements too), with the features on; and the outcome.
sub explain_markers
{
	my ($sess, $case, $mode) = @_;
	my $ae = q{LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_level = notice;
		SET auto_explain.log_nested_statements = on; SET client_min_messages = notice;};
	$ae =~ s/SET /SET LOCAL /g if $mode eq 'sub';
	my ($out, $err) = $sess->run(script($case, $on, $mode, $ae));
	my %m;
	$m{$1}++ while $err =~ /(BloomGuard|bloom_guard_elements|BloomGate|BloomAppend|BloomBatch|bloom_shared_gate_elements|bloom_shared_gate_any|bloom_shared_gate)\b/g;
	return (\%m, outcome($case, $out, $err));
}

# ------------------------------------------------------ concurrent writer ----
# A psql script of $n writes: inserts of new keys, deletes, updates,
# rollbacks, index DDL, guarding and unguarding a second column; each
# followed by a short sleep and a line "op" on stdout.
sub writer_script
{
	my ($n) = @_;
	my @ops;
	my $id = { pt => 3001, ih => 2001, pp => 4001, pc => 2001 };
	for my $i (1 .. $n)
	{
		my $r = rnd(100);
		my $op;
		my $pi = $id->{pt}++;
		if ($r < 20)
		{
			$op = "INSERT INTO pt VALUES ($pi, " . (($pi % 2000) * 3) . ", $pi * 1000003::int8, 'key-' || $pi * 7, md5('u$pi')::uuid, 'key-' || $pi * 7, $pi % 50);";
		}
		elsif ($r < 30)
		{
			my $j = $id->{pp}++;
			$op = "INSERT INTO pp VALUES ($j, $j * 11, 'p$j', $j % 50, $j % 30);";
		}
		elsif ($r < 38)
		{
			my $j = $id->{pc}++;
			$op = "INSERT INTO pc VALUES ($j, $j * 13, 'c$j', $j % 50);";
		}
		elsif ($r < 44)
		{
			my $j = $id->{ih}++;
			$op = "INSERT INTO ih_c" . (1 + $j % 2) . " (id, k4, kt, v) VALUES ($j, $j * 2, 't$j', $j % 50);";
		}
		elsif ($r < 56)
		{
			my $t = pick(qw(pt pc pc pp ih));
			$op = "DELETE FROM $t WHERE id IN (" . join(', ', map { 1 + rnd(3000) } 1 .. 3) . ");";
		}
		elsif ($r < 64)
		{
			$op = "UPDATE pp SET d = (d + 7) % 30, k8 = k8 + 0 WHERE id = " . (1 + rnd(4000)) . ";"
			  . " UPDATE pc SET k8 = k8 + 1 WHERE id = " . (1 + rnd(2000)) . ";";
		}
		elsif ($r < 72)
		{
			$op = "BEGIN; INSERT INTO pt VALUES ($pi, 7, 8, 'rolled-back-$pi', NULL, NULL, 1); DELETE FROM pc WHERE id = "
			  . (1 + rnd(2000)) . "; ROLLBACK;";
		}
		elsif ($r < 78)
		{
			$op = pick('CREATE INDEX IF NOT EXISTS pt_k8 ON pt (k8);', 'DROP INDEX IF EXISTS pt_k8;',
				'CREATE INDEX IF NOT EXISTS pc_kt ON pc (kt);', 'DROP INDEX IF EXISTS pc_kt;',
				'CREATE INDEX IF NOT EXISTS pp_v ON pp (v);', 'DROP INDEX IF EXISTS pp_v;');
		}
		elsif ($r < 84)
		{
			$op = pick(q{CREATE INDEX IF NOT EXISTS pt_v_g ON pt USING bloomguard (v);}, q{DROP INDEX IF EXISTS pt_v_g;},
				q{CREATE INDEX CONCURRENTLY IF NOT EXISTS pt_v_g ON pt USING bloomguard (v);},
				q{DROP INDEX CONCURRENTLY IF EXISTS pt_v_g;},
				q{CREATE INDEX IF NOT EXISTS pp_v_g ON pp USING bloomguard (v);}, q{DROP INDEX IF EXISTS pp_v_g;},
				q{ALTER TABLE pp DETACH PARTITION pp_d; INSERT INTO pp_d VALUES (9000, 99000, 'pdet', 1, 40); ALTER TABLE pp ATTACH PARTITION pp_d DEFAULT;});
		}
		elsif ($r < 88)
		{
			$op = pick(q{REINDEX INDEX pt_k4_g;}, q{REINDEX INDEX CONCURRENTLY pc_k8_g;}, q{REINDEX TABLE pc;});
		}
		elsif ($r < 94)
		{
			$op = 'CREATE TABLE IF NOT EXISTS ih_c3 () INHERITS (ih); INSERT INTO ih_c3 VALUES (' . (5000 + $i) . ', ' . (2 * rnd(2000)) . ", 'tnew', 1);";
		}
		else
		{
			$op = pick('DROP TABLE IF EXISTS ih_c3;', 'VACUUM pc;', 'ANALYZE pt;');
		}
		push @ops, "$op\nSELECT pg_sleep(0.02);\n\\echo op\n";
	}
	return "SET lock_timeout = '2s';\n" . join('', @ops);
}

1;
