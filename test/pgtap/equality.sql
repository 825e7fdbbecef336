-- equality.sql: keys agree with PostgreSQL's =.  For every ordered pair of
-- types (A, B) among the supported key types, their common neighbours and
-- domains over them, for which "a = b" resolves (whatever operator and
-- implicit casts PostgreSQL chooses), and for many random values with
-- a = b true: a filter holding a answers "maybe" for b, or the add or the
-- check raises an error with a hint (42804 key kind mismatch, 0A000
-- unsupported type) — never a silent "no".  Each pair goes through several
-- paths: operators on table columns, functions, the aggregates, arrays, and
-- constants (which the planner folds, implicit casts included).
BEGIN;
SELECT * FROM no_plan();

CREATE EXTENSION IF NOT EXISTS citext;
CREATE DOMAIN eq_int AS integer;
CREATE DOMAIN eq_text AS text;
CREATE DOMAIN eq_varchar AS varchar(20);
CREATE DOMAIN eq_bpchar AS char(6);
CREATE DOMAIN eq_citext AS citext;
CREATE DOMAIN eq_numeric AS numeric;
CREATE DOMAIN eq_ts AS timestamp;

-- type names as spelled (typmods included)
CREATE TEMP TABLE eq_typenames (name text PRIMARY KEY);
INSERT INTO eq_typenames VALUES
	('smallint'), ('integer'), ('bigint'), ('oid'),
	('text'), ('varchar'), ('varchar(4)'), ('bpchar'), ('char(4)'), ('name'), ('citext'), ('"char"'),
	('numeric'), ('real'), ('double precision'),
	('date'), ('timestamp'), ('timestamptz'),
	('bytea'), ('uuid'), ('boolean'),
	('eq_int'), ('eq_text'), ('eq_varchar'), ('eq_bpchar'), ('eq_citext'), ('eq_numeric'), ('eq_ts');

-- random values as text, reproducible
SELECT setseed(0.4242);
CREATE TEMP TABLE eq_pool (c text);
INSERT INTO eq_pool
SELECT (floor(random() * 200) - 100)::bigint::text FROM generate_series(1, 12)
UNION ALL SELECT (floor(random() * 65536) - 32768)::bigint::text FROM generate_series(1, 6)
UNION ALL SELECT (floor(random() * 4294967296) - 2147483648)::bigint::text FROM generate_series(1, 10)
UNION ALL SELECT (-1 - floor(random() * 100))::bigint::text FROM generate_series(1, 4)
UNION ALL SELECT (2147483648 + floor(random() * 2147483648))::bigint::text FROM generate_series(1, 6)
UNION ALL SELECT (floor(random() * 9e15) * (CASE WHEN random() < 0.5 THEN -1 ELSE 1 END))::bigint::text
	FROM generate_series(1, 4)
UNION ALL SELECT v FROM unnest(ARRAY['0', '-1', '4294967295', '2147483648', '-2147483648', '65535', '-32768',
	'1.50', '1.5', '0.0', '-0', '-0.00', '100', '100.0', '1e3', 'NaN', 'Infinity', '-Infinity',
	'0.1', '2.5', '3.25000', '-7.125', '123456789.123456789']) v
UNION ALL SELECT round((random() * 2000 - 1000)::numeric, (random() * 6)::int)::text FROM generate_series(1, 10)
UNION ALL SELECT ((random() * 2000 - 1000)::real)::text FROM generate_series(1, 5)
UNION ALL SELECT ((random() * 2 - 1) * 1e6)::float8::text FROM generate_series(1, 5)
-- strings: mixed case, non-ASCII, trailing (and leading) blanks, empty
UNION ALL SELECT v FROM unnest(ARRAY['', ' ', '  ', 'a', 'A', 'ab', 'ab ', 'ab  ', 'Ab', ' ab', 'x',
	'Alice', 'ALICE', 'alice ', 'émile', 'ÉMILE', 'ß', 'straße', 'ключ', 'КЛЮЧ', '鍵🔑', 't', 'f', 'true', 'no', '1']) v
UNION ALL
SELECT string_agg(substr('aAbBzZé ', 1 + floor(random() * 8)::int, 1), '') || repeat(' ', floor(random() * 3)::int)
FROM generate_series(1, 30) g, generate_series(1, 5) l
WHERE l <= 1 + g % 6
GROUP BY g
-- dates and times (midnights meet dates)
UNION ALL SELECT ('2000-01-01'::date + floor(random() * 20000 - 10000)::int)::text FROM generate_series(1, 8)
UNION ALL SELECT (('2000-01-01'::date + floor(random() * 20000 - 10000)::int) + make_interval(secs => floor(random() * 86400)))::timestamp::text
	FROM generate_series(1, 6)
UNION ALL SELECT v FROM unnest(ARRAY['2024-02-29', '2024-02-29 00:00:00', '2024-02-29 12:00:00', '2024-02-29 12:00:00+00',
	'2024-02-29 14:00:00+02', 'infinity', '-infinity', 'epoch']) v
-- bytea, uuid
UNION ALL SELECT v FROM unnest(ARRAY['\x', '\x00', '\x00ff', '\xDEADBEEF']) v
UNION ALL SELECT '\x' || substr(md5(random()::text), 1, floor(random() * 12)::int * 2) FROM generate_series(1, 4)
UNION ALL SELECT md5(random()::text)::uuid::text FROM generate_series(1, 4)
UNION ALL SELECT v FROM unnest(ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'yes', 'off']) v;

-- each value with the variants that may be equal to it in another type
CREATE TEMP TABLE eq_cand AS
SELECT DISTINCT c, d FROM eq_pool,
LATERAL (VALUES (c), (upper(c)), (lower(c)), (c || ' '), (c || '   '), (rtrim(c)), (ltrim(c)),
	(CASE WHEN c ~ '^-?[0-9]{1,15}$' THEN (c::numeric + 4294967296)::text END),
	(CASE WHEN c ~ '^-?[0-9]{1,15}$' THEN (c::numeric - 4294967296)::text END),
	(CASE WHEN c ~ '^-?[0-9]+$' THEN c || '.000' END),
	(CASE WHEN c ~ '^-?[0-9]+\.[0-9]+$' THEN c || '00' END),
	(CASE WHEN c ~ '^-?[0-9]+\.[0-9]+$' THEN rtrim(rtrim(c, '0'), '.') END),
	(CASE WHEN c ~ '^\d{4}-\d\d-\d\d$' THEN c || ' 00:00:00' END),
	(CASE WHEN c ~ '^\d{4}-\d\d-\d\d ' THEN substr(c, 1, 10) END)) v(d)
WHERE d IS NOT NULL;

-- which texts each type accepts
CREATE TEMP TABLE eq_valid (t text, c text);
DO $$
DECLARE
	tn text;
	v text;
BEGIN
	FOR tn IN SELECT name FROM eq_typenames LOOP
		FOR v IN SELECT DISTINCT d FROM eq_cand LOOP
			BEGIN
				EXECUTE format('SELECT %L::%s', v, tn);
				INSERT INTO eq_valid VALUES (tn, v);
			EXCEPTION WHEN OTHERS THEN
				NULL;
			END;
		END LOOP;
	END LOOP;
END $$;

-- the pairs of types for which "a = b" resolves
CREATE TEMP TABLE eq_pairs (ta text, tb text);
DO $$
DECLARE
	a text;
	b text;
BEGIN
	FOR a, b IN SELECT x.name, y.name FROM eq_typenames x, eq_typenames y LOOP
		BEGIN
			EXECUTE format('SELECT NULL::%s = NULL::%s', a, b);
			INSERT INTO eq_pairs VALUES (a, b);
		EXCEPTION WHEN undefined_function OR ambiguous_function THEN
			NULL;
		END;
	END LOOP;
END $$;

-- One outcome per path: 'maybe' (every b found), 'refused' (an error with a
-- hint and one of the two SQLSTATEs), or a failure description.
CREATE FUNCTION pg_temp.eq_outcome(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	misses bigint;
	st text;
	msg text;
	hint text;
BEGIN
	EXECUTE q INTO misses;
	IF misses = 0 THEN
		RETURN 'maybe';
	END IF;
	RETURN format('%s silent "no" answers: %s', misses, q);
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
	IF st IN ('42804', '0A000') AND hint <> '' THEN
		RETURN 'refused';
	END IF;
	RETURN format('error %s without a hint or of another kind: %s (%s)', st, msg, q);
END $$;

CREATE TEMP TABLE eq_results (ta text, tb text, npairs int, outcomes text[]);

DO $$
DECLARE
	r record;
	n int;
	outcomes text[];
	ex record;
	i int;
BEGIN
	FOR r IN SELECT ta, tb FROM eq_pairs ORDER BY 1, 2 LOOP
		EXECUTE format('CREATE TEMP TABLE eq_p (a %s, b %s)', r.ta, r.tb);
		-- the value pairs with a = b true (an = that raises, such as
		-- bigint = oid for a negative bigint, is no "true": skipped)
		FOR ex IN
			SELECT DISTINCT va.c AS ca, vb.c AS cb
			FROM eq_cand JOIN eq_valid va ON va.t = r.ta AND va.c = eq_cand.c
			JOIN eq_valid vb ON vb.t = r.tb AND vb.c = eq_cand.d
			UNION
			SELECT DISTINCT va.c, vb.c
			FROM eq_cand JOIN eq_valid va ON va.t = r.ta AND va.c = eq_cand.d
			JOIN eq_valid vb ON vb.t = r.tb AND vb.c = eq_cand.c
		LOOP
			BEGIN
				EXECUTE format('INSERT INTO eq_p SELECT a, b FROM (SELECT %L::%s AS a, %L::%s AS b) v WHERE a = b',
							   ex.ca, r.ta, ex.cb, r.tb);
			EXCEPTION WHEN OTHERS THEN
				NULL;
			END;
		END LOOP;
		SELECT count(*) INTO n FROM eq_p;
		outcomes := ARRAY[
			-- operators on columns (no constant folding)
			pg_temp.eq_outcome('SELECT count(*) FROM eq_p WHERE NOT ((bloom_empty(1000) || a) @> b)'),
			pg_temp.eq_outcome('SELECT count(*) FROM eq_p WHERE NOT (b <@ bloom_add(bloom_empty(1000, 0.01, ''classic''), a))'),
			pg_temp.eq_outcome('SELECT count(*) FROM eq_p WHERE NOT bloom_contains(bloom_empty(1000) || a, b)'),
			-- one filter of every a, built by each aggregate and by bloom_add_all
			pg_temp.eq_outcome('SELECT count(*) FROM eq_p WHERE NOT ((SELECT bloom_agg(a, 1000, 0.01) FROM eq_p) @> b)'),
			pg_temp.eq_outcome('SELECT count(*) FROM eq_p WHERE NOT ((SELECT bloom_agg(a) FROM eq_p) @> b)'),
			pg_temp.eq_outcome('SELECT count(*) FROM eq_p WHERE NOT coalesce(bloom_contains_any((SELECT bloom_add_all(bloom_empty(1000), array_agg(a)) FROM eq_p), ARRAY[b]), true)'),
			pg_temp.eq_outcome('SELECT CASE WHEN bloom_contains_all((SELECT bloom_add_all(bloom_empty(1000), array_agg(a)) FROM eq_p), (SELECT array_agg(b) FROM eq_p)) IS FALSE THEN 1 ELSE 0 END'),
			pg_temp.eq_outcome('SELECT count(*) - coalesce(array_length(bloom_maybe((SELECT bloom_agg(a, 1000, 0.01, ''classic'') FROM eq_p), array_agg(b)), 1), 0) FROM eq_p')];
		-- constants: the planner folds them, and the implicit casts with them
		i := 0;
		FOR ex IN SELECT a::text AS ca, b::text AS cb FROM eq_p LIMIT 6 LOOP
			outcomes := outcomes || pg_temp.eq_outcome(format(
				'SELECT CASE WHEN (bloom_empty(100) || %L::%s) @> %L::%s THEN 0 ELSE 1 END',
				ex.ca, r.ta, ex.cb, r.tb));
			outcomes := outcomes || pg_temp.eq_outcome(format(
				'SELECT CASE WHEN %L::%s <@ bloom_add(bloom_empty(100), %L::%s) THEN 0 ELSE 1 END',
				ex.cb, r.tb, ex.ca, r.ta));
		END LOOP;
		INSERT INTO eq_results VALUES (r.ta, r.tb, n, outcomes);
		DROP TABLE eq_p;
	END LOOP;
END $$;

-- one test per pair of types
SELECT ok(NOT EXISTS (SELECT 1 FROM unnest(outcomes) o WHERE o NOT IN ('maybe', 'refused')),
          format('%s = %s: %s pairs of equal values; %s', ta, tb, npairs,
                 (SELECT string_agg(DISTINCT o, ', ') FROM unnest(outcomes) o)))
FROM eq_results ORDER BY ta, tb;

-- the enumeration covers what it should
SELECT cmp_ok((SELECT count(*) FROM eq_results), '>=', 200::bigint, 'at least 200 pairs of types have an =');
SELECT cmp_ok((SELECT sum(npairs) FROM eq_results), '>=', 20000::bigint, 'at least 20,000 pairs of equal values');
SELECT ok((SELECT bool_and(npairs >= 10) FROM eq_results
           WHERE (ta, tb) IN (('integer', 'oid'), ('oid', 'smallint'), ('varchar', 'bpchar'), ('bpchar', 'varchar'),
                              ('citext', 'citext'), ('text', 'citext'), ('varchar(4)', 'char(4)'),
                              ('eq_varchar', 'eq_bpchar'), ('numeric', 'eq_numeric'), ('date', 'timestamp'),
                              ('real', 'double precision'), ('name', 'bpchar'), ('"char"', 'text'))),
          'the known disagreements are among the pairs tested, with values');
SELECT is((SELECT count(*) FROM eq_results WHERE (ta, tb) IN (('integer', 'oid'), ('oid', 'integer'))
             AND 'maybe' = ALL (outcomes) AND npairs > 0), 2::bigint,
          'int4 and oid mix, and agree');
SELECT is((SELECT count(*) FROM eq_results WHERE (ta, tb) IN (('varchar', 'bpchar'), ('bpchar', 'varchar'))
             AND 'maybe' = ALL (outcomes)), 2::bigint,
          'varchar and char(n) mix, and agree');
SELECT is((SELECT count(*) FROM eq_results WHERE 'citext' IN (ta, tb) AND 'maybe' = ANY (outcomes)), 0::bigint,
          'citext is refused on every path');

SELECT * FROM finish();
ROLLBACK;
