--
-- agg_auto.sql — self-sizing builds: bloom_agg(key) and bloom_agg(key, fpr).
--
-- 300,000 rows hold 100,000 distinct keys (each three times, in an order that
-- mixes them) and 3,000 NULLs.  A self-sized filter must:
--   * hold every key (no false negatives);
--   * have exactly the bits and hashes of bloom_empty(n, fpr) for the true
--     distinct count n, and be the very value bloom_agg(key, n, fpr) gives
--     (same header, bits, key kind, and added = the 300,000 non-NULL rows);
--   * measure a false-positive rate within [0.8, 1.1] x target over 500,000
--     absent keys (at 1%: about 5,000 expected, sd 1.4%; at 0.1%: about 500
--     expected, sd 4.5%: the band is more than 4 sd wide on each side);
--   * be the same value when built by a parallel plan (Partial Aggregate
--     under Gather, two workers, no leader participation, so the Finalize
--     Aggregate combines serialized partial states) as when built serially.
-- The capacity mode of bloom_agg(key, capacity_or_fpr) gives the value of
-- bloom_agg(key, capacity, 0.01), serially and in parallel.
--
BEGIN;
SELECT plan(21);

CREATE TABLE bf_auto_keys AS
SELECT t, i
FROM (SELECT n, 'key-' || j AS t, j * 3 AS i
	  FROM (SELECT n, n * 7919 % 100000 AS j FROM generate_series(1::int8, 300000) AS n) s
	  UNION ALL
	  SELECT n * 100 + 50, NULL, NULL FROM generate_series(1::int8, 3000) AS n) u
ORDER BY n;
ALTER TABLE bf_auto_keys SET (parallel_workers = 2);
ANALYZE bf_auto_keys;

SELECT is((SELECT count(DISTINCT t) FROM bf_auto_keys), 100000::bigint,
		  'the input holds 100,000 distinct text keys');
SELECT is((SELECT count(t) FROM bf_auto_keys), 300000::bigint,
		  'the input holds 300,000 non-NULL text keys (duplicates)');

CREATE FUNCTION pg_temp.explain_lines(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE q LOOP
		RETURN NEXT l;
	END LOOP;
END
$$;

-- The cases: the aggregate expression, and the sized form it must equal.
CREATE TEMP TABLE auto_case (ord int, name text, agg text, sized text, target float8);
INSERT INTO auto_case VALUES
	(1, 'bloom_agg(text)', 'bloom_agg(t)', 'bloom_agg(t, 100000, 0.01)', 0.01),
	(2, 'bloom_agg(int8, 0.001)', 'bloom_agg(i, 0.001)', 'bloom_agg(i, 100000, 0.001)', 0.001),
	(3, 'bloom_agg(text, 150000) (capacity)', 'bloom_agg(t, 150000)', 'bloom_agg(t, 150000, 0.01)', 0.01);

CREATE TEMP TABLE auto_res (ord int, mode text, plan text, bf bloomfilter, sized bloomfilter);

CREATE FUNCTION pg_temp.auto_run(mode text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
	c	auto_case;
	p	text;
BEGIN
	FOR c IN SELECT * FROM auto_case ORDER BY ord LOOP
		SELECT string_agg(l, E'\n') INTO p
		FROM pg_temp.explain_lines(format(
			'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) '
			'CREATE TEMP TABLE %I AS SELECT %s AS bf, %s AS sized FROM bf_auto_keys',
			'auto_out_' || mode || c.ord, c.agg, c.sized)) l;
		EXECUTE format('INSERT INTO auto_res SELECT $1, $2, $3, bf, sized FROM %I',
					   'auto_out_' || mode || c.ord)
			USING c.ord, mode, p;
	END LOOP;
END
$fn$;

SET LOCAL max_parallel_workers_per_gather = 0;
DO $$ BEGIN PERFORM pg_temp.auto_run('serial'); END $$;

SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_leader_participation = off;
DO $$ BEGIN PERFORM pg_temp.auto_run('parallel'); END $$;
RESET max_parallel_workers_per_gather;

CREATE TEMP VIEW auto_cmp AS
SELECT c.ord, c.name, c.target, s.plan AS serial_plan, p.plan AS parallel_plan,
	   s.bf AS serial_bf, p.bf AS parallel_bf, s.sized AS serial_sized
FROM auto_case c
JOIN auto_res s ON s.ord = c.ord AND s.mode = 'serial'
JOIN auto_res p ON p.ord = c.ord AND p.mode = 'parallel'
ORDER BY c.ord;

-- equal to the sized form (same header and bits), serially
SELECT ok(serial_bf IS NOT NULL AND serial_bf = serial_sized,
		  name || ': the filter = ' || (SELECT sized FROM auto_case a WHERE a.ord = auto_cmp.ord))
FROM auto_cmp;

-- parallel = serial, from a real parallel plan
SELECT matches(parallel_plan, 'Partial Aggregate', name || ': the parallel plan shows Partial Aggregate')
FROM auto_cmp;
SELECT matches(parallel_plan, 'Gather \(actual rows=[2-9]',
			   name || ': the Finalize Aggregate combined partial states of two or more workers')
FROM auto_cmp;
SELECT ok(parallel_bf IS NOT NULL AND parallel_bf = serial_bf,
		  name || ': the parallel result = the serial result')
FROM auto_cmp;

-- the self-sized filters have the bits and hashes of bloom_empty(n, fpr)
SELECT is(ARRAY[bloom_info(serial_bf)->'bits', bloom_info(serial_bf)->'hashes',
				bloom_info(serial_bf)->'capacity', bloom_info(serial_bf)->'added'],
		  ARRAY[bloom_info(bloom_empty(100000, target))->'bits',
				bloom_info(bloom_empty(100000, target))->'hashes',
				'100000'::jsonb, '300000'::jsonb],
		  name || ': bits and hashes of bloom_empty(100000, fpr), capacity 100,000, added 300,000')
FROM auto_cmp WHERE ord IN (1, 2);

-- no false negatives
SELECT is((SELECT count(*) FROM bf_auto_keys k
		   WHERE k.t IS NOT NULL AND (r.bf @> k.t) IS NOT TRUE), 0::bigint,
		  'bloom_agg(text): every key found')
FROM auto_res r WHERE r.ord = 1 AND r.mode = 'parallel';
SELECT is((SELECT count(*) FROM bf_auto_keys k
		   WHERE k.i IS NOT NULL AND (r.bf @> k.i) IS NOT TRUE), 0::bigint,
		  'bloom_agg(int8, 0.001): every key found')
FROM auto_res r WHERE r.ord = 2 AND r.mode = 'parallel';

-- the measured false-positive rate meets the target
CREATE TEMP TABLE auto_fpr AS
SELECT 1 AS ord, count(*) FILTER (WHERE r.bf @> ('absent-' || a)) / 500000.0 AS measured
FROM auto_res r, generate_series(1, 500000) a
WHERE r.ord = 1 AND r.mode = 'serial'
UNION ALL
-- keys i * 3 + 1 were never added (added keys are multiples of 3)
SELECT 2, count(*) FILTER (WHERE r.bf @> (a * 3 + 1)::int8) / 500000.0
FROM auto_res r, generate_series(1, 500000) a
WHERE r.ord = 2 AND r.mode = 'serial';

SELECT diag(format('%s: measured FPR %s (%s x target %s), bits/key %s',
				   c.name, f.measured, round(f.measured / c.target::numeric, 3), c.target,
				   round((bloom_info(r.bf)->>'bits')::numeric / 100000, 3)))
FROM auto_fpr f JOIN auto_case c USING (ord)
JOIN auto_res r ON r.ord = f.ord AND r.mode = 'serial' ORDER BY f.ord;

SELECT ok(f.measured BETWEEN 0.8 * c.target AND 1.1 * c.target,
		  format('%s: measured FPR %s within [0.8, 1.1] x %s', c.name, f.measured, c.target))
FROM auto_fpr f JOIN auto_case c USING (ord) ORDER BY ord;

-- a group by: one self-sized filter per group, each its sized equivalent
SELECT is((SELECT count(*) FROM (
			SELECT s.g, bloom_agg(s.t) = bloom_agg(s.t, d.n, 0.01) AS eq
			FROM (SELECT t, length(t) % 3 AS g FROM bf_auto_keys) s
			JOIN (SELECT length(t) % 3 AS g, count(DISTINCT t) AS n
				  FROM bf_auto_keys GROUP BY 1) d ON d.g = s.g
			GROUP BY s.g, d.n) x WHERE eq), 3::bigint,
		  'GROUP BY: every group''s self-sized filter = bloom_agg(t, its distinct count, 0.01)');

SELECT * FROM finish();
ROLLBACK;
