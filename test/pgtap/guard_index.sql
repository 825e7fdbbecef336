--
-- guard_index.sql — guard indexes (USING bloomguard) over many keys: no
-- false negatives for every key kind, for keys the build read and keys
-- inserted later, in a guard sized for the table and in one that grew from
-- 1000 keys to many layers; the filter's export answers as the index does;
-- the measured false-positive rate over absent keys is at or below the
-- target and near what the guard's fill predicts (bloom_guard_info).
--
BEGIN;
SELECT plan(43);

-- ck: i = 1..100,000; pg_temp.key_expr(kind): a key of each kind from i
\ir include/keys.sql

CREATE FUNCTION pg_temp.kinds() RETURNS SETOF text LANGUAGE sql AS $$
	SELECT unnest('{integer,text,bytea,uuid,boolean,float,numeric,date,timestamp,timestamptz}'::text[])
$$;

-- A table of the kind's keys for i in 1..100,000 in a random order: half of
-- them before the guards are built, half inserted after; two guards, one
-- sized from the table, one WITH (capacity = 1000).
CREATE FUNCTION pg_temp.setup(kind text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	e text := pg_temp.key_expr(kind);
BEGIN
	EXECUTE format('CREATE TEMP TABLE %I AS SELECT i, %s AS k FROM ck WHERE i %% 2 = 0 ORDER BY random()',
				   'gk_' || kind, e);
	EXECUTE format('CREATE INDEX %I ON %I USING bloomguard (k)', 'gk_' || kind || '_sized', 'gk_' || kind);
	EXECUTE format('CREATE INDEX %I ON %I USING bloomguard (k) WITH (capacity = 1000)',
				   'gk_' || kind || '_grown', 'gk_' || kind);
	EXECUTE format('INSERT INTO %I SELECT i, %s FROM ck WHERE i %% 2 = 1 ORDER BY random()',
				   'gk_' || kind, e);
END $$;

SELECT setseed(0.25);
SELECT pg_temp.setup(k) FROM pg_temp.kinds() k;

-- 1-20: every key of the table answers "maybe", in both guards
CREATE FUNCTION pg_temp.missing(kind text, which text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	total bigint;
BEGIN
	EXECUTE format('SELECT count(*) FILTER (WHERE NOT bloom_guard_contains(%L, k)), count(*) FROM %I',
				   'gk_' || kind || '_' || which, 'gk_' || kind) INTO n, total;
	IF total <> 100000 THEN
		RAISE EXCEPTION '% rows, expected 100000', total;
	END IF;
	RETURN n;
END $$;

SELECT is(pg_temp.missing(k, w), 0::bigint,
		  format('%s guard of %s keys: all 100,000 keys found (half built, half inserted)', w, k))
FROM pg_temp.kinds() k, unnest('{sized,grown}'::text[]) w;

-- 21-22: the guard that started at 1000 keys grew by layers; the sized one did not
SELECT ok((SELECT layers FROM bloom_guard_info('gk_text_grown')) >= 6,
		  'a guard of capacity 1000 holding 100,000 keys has grown to 6 layers or more');
SELECT ok((SELECT layers FROM bloom_guard_info('gk_text_sized')) <= 2,
		  'a guard sized from its table (50,000 rows, then 100,000) holds them in one or two layers');

-- 23-32: the exported filter answers as the index does, for present and absent keys
CREATE FUNCTION pg_temp.export_disagrees(kind text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	e text := pg_temp.key_expr(kind);
	n bigint;
BEGIN
	EXECUTE format(
		'SELECT count(*) FROM (SELECT bloom_guard_filter(%L) f) s, generate_series(1, 200000, 7) g(i)
		 WHERE bloom_contains(f, %s) IS DISTINCT FROM bloom_guard_contains(%L, %s)',
		'gk_' || kind || '_grown', e, 'gk_' || kind || '_grown', e) INTO n;
	RETURN n;
END $$;

SELECT is(pg_temp.export_disagrees(k), 0::bigint,
		  format('%s: bloom_guard_filter answers as bloom_guard_contains for 28,572 keys, half absent', k))
FROM pg_temp.kinds() k;

-- 33-42: over 100,000 absent keys, the rate is at or below the 1% target,
-- and near the rate the guard's fill predicts (estimated_fpr)
CREATE FUNCTION pg_temp.fpr_check(kind text, which text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	e text := pg_temp.key_expr(kind);
	g text := 'gk_' || kind || '_' || which;
	measured float8;
	predicted float8;
BEGIN
	EXECUTE format('SELECT avg(bloom_guard_contains(%L, %s)::int) FROM generate_series(100001, 200000) g(i)', g, e)
		INTO measured;
	SELECT estimated_fpr INTO predicted FROM bloom_guard_info(g);
	IF measured <= 0.01 AND measured BETWEEN 0.6 * predicted AND 1.5 * predicted THEN
		RETURN 'ok';
	END IF;
	RETURN format('measured %s, predicted %s', measured, predicted);
END $$;

SELECT is(pg_temp.fpr_check(k, w), 'ok',
		  format('%s guard of %s keys: measured rate at or below 1%% and within [0.6, 1.5] x the predicted rate', w, k))
FROM unnest('{integer,text,uuid,numeric,timestamptz}'::text[]) k, unnest('{sized,grown}'::text[]) w;

-- 43: boolean keys: both values present, nothing else to test
SELECT is((SELECT count(*) FROM (VALUES (true), (false)) v(b) WHERE bloom_guard_contains('gk_boolean_sized', b)),
		  2::bigint, 'boolean: both values found');

SELECT * FROM finish();
ROLLBACK;
