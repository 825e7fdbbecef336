--
-- parallel.sql — a parallel aggregate gives the same filter as a serial one.
--
-- A regular (not temporary: temporary tables are never scanned in parallel)
-- table of 240,000 rows is created inside this transaction; parallel workers
-- share the leader's transaction and see it.  Parallelism is forced with zero
-- parallel costs, parallel_workers = 2 on the tables and no leader
-- participation (so that the workers, not the leader, aggregate every row and
-- the Finalize Aggregate really combines partial states).  Each parallel result
-- is produced by EXPLAIN ANALYZE CREATE TEMP TABLE ... AS, so the compared
-- value is the very one the shown plan computed.
--
-- bloom_union_agg and bloom_intersect_agg run over a table of 4,000 filters
-- per layout (a table of 240,000 non-trivial filters would be gigabytes).
--
BEGIN;
SELECT plan(35);

CREATE TABLE bf_par_keys AS
SELECT i::int8 AS i, 'key-' || i || '-ключ' AS t, md5(i::text)::uuid AS u
FROM generate_series(1, 240000) AS i;
ALTER TABLE bf_par_keys SET (parallel_workers = 2);

-- Filters of capacity 4,000 (about 5 KB; STORAGE main keeps them compressed
-- in the heap pages, so the workers share the scan of the values themselves):
-- each holds its own key g and 20 common keys.
CREATE TABLE bf_par_filters (layout text, g int, bf bloomfilter);
ALTER TABLE bf_par_filters ALTER COLUMN bf SET STORAGE main;
INSERT INTO bf_par_filters
SELECT l, g, bloom_add_all(bloom_empty(4000, 0.01, l),
						   array_append(ARRAY(SELECT 'common ' || c FROM generate_series(1, 20) c),
										'own ' || g))
FROM unnest(ARRAY['blocked', 'classic']) l, generate_series(1, 4000) g;
ALTER TABLE bf_par_filters SET (parallel_workers = 2);
ANALYZE bf_par_keys;
ANALYZE bf_par_filters;

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

-- The aggregates compared: name, aggregate expression, source.
CREATE TEMP TABLE par_case (ord int, name text, agg text, src text);
INSERT INTO par_case VALUES
	(1, 'bloom_agg(int8, 240000)', 'bloom_agg(i, 240000)', 'bf_par_keys'),
	(2, 'bloom_agg(text, 240000, 0.001, classic)', 'bloom_agg(t, 240000, 0.001, ''classic'')', 'bf_par_keys'),
	(3, 'bloom_agg(uuid, 240000, 0.01, blocked)', 'bloom_agg(u, 240000, 0.01, ''blocked'')', 'bf_par_keys'),
	(4, 'bloom_union_agg (blocked)', 'bloom_union_agg(bf)', 'bf_par_filters WHERE layout = ''blocked'''),
	(5, 'bloom_union_agg (classic)', 'bloom_union_agg(bf)', 'bf_par_filters WHERE layout = ''classic'''),
	(6, 'bloom_intersect_agg (blocked)', 'bloom_intersect_agg(bf)', 'bf_par_filters WHERE layout = ''blocked''');

CREATE TEMP TABLE par_res (ord int, mode text, plan text, bf bloomfilter);

-- Run every case in the current mode; the plan is EXPLAIN ANALYZE's.
CREATE FUNCTION pg_temp.par_run(mode text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
	c	par_case;
	p	text;
BEGIN
	FOR c IN SELECT * FROM par_case ORDER BY ord LOOP
		SELECT string_agg(l, E'\n') INTO p
		FROM pg_temp.explain_lines(format(
			'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) '
			'CREATE TEMP TABLE %I AS SELECT %s AS bf FROM %s',
			'par_out_' || mode || c.ord, c.agg, c.src)) l;
		EXECUTE format('INSERT INTO par_res SELECT $1, $2, $3, bf FROM %I',
					   'par_out_' || mode || c.ord)
			USING c.ord, mode, p;
	END LOOP;
END
$fn$;

SET LOCAL max_parallel_workers_per_gather = 0;
DO $$ BEGIN PERFORM pg_temp.par_run('serial'); END $$;

SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL min_parallel_index_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_leader_participation = off;
DO $$ BEGIN PERFORM pg_temp.par_run('parallel'); END $$;
RESET max_parallel_workers_per_gather;

CREATE TEMP VIEW par_cmp AS
SELECT c.ord, c.name, s.plan AS serial_plan, p.plan AS parallel_plan,
	   s.bf AS serial_bf, p.bf AS parallel_bf
FROM par_case c
JOIN par_res s ON s.ord = c.ord AND s.mode = 'serial'
JOIN par_res p ON p.ord = c.ord AND p.mode = 'parallel'
ORDER BY c.ord;

SELECT doesnt_match(serial_plan, 'Gather|Partial', name || ': the serial plan is serial')
FROM par_cmp;

SELECT matches(parallel_plan, 'Partial Aggregate', name || ': the parallel plan shows Partial Aggregate')
FROM par_cmp;

SELECT matches(parallel_plan, 'Gather \(actual rows=[2-9]',
			   name || ': the Finalize Aggregate combined partial states of two or more workers')
FROM par_cmp;

SELECT ok(parallel_bf IS NOT NULL AND parallel_bf = serial_bf,
		  name || ': the parallel result = the serial result')
FROM par_cmp;

-- Beyond equality: the parallel results hold every key and count every add.
SELECT is(count(*), 0::bigint, 'parallel bloom_agg(int8): every key found')
FROM bf_par_keys k, (SELECT bf FROM par_res WHERE ord = 1 AND mode = 'parallel') r
WHERE (r.bf @> k.i) IS NOT TRUE;

SELECT is(count(*), 0::bigint, 'parallel bloom_agg(text, classic): every key found')
FROM bf_par_keys k, (SELECT bf FROM par_res WHERE ord = 2 AND mode = 'parallel') r
WHERE (r.bf @> k.t) IS NOT TRUE;

SELECT is(count(*), 0::bigint, 'parallel bloom_agg(uuid): every key found')
FROM bf_par_keys k, (SELECT bf FROM par_res WHERE ord = 3 AND mode = 'parallel') r
WHERE (r.bf @> k.u) IS NOT TRUE;

SELECT is((SELECT (bloom_info(bf)->>'added')::bigint FROM par_res WHERE ord = o AND mode = 'parallel'),
		  240000::bigint, format('parallel case %s: added counts all 240,000 rows', o))
FROM generate_series(1, 3) o;

SELECT is((SELECT count(*) FROM generate_series(1, 4000) g, par_res r
		   WHERE r.ord = o AND r.mode = 'parallel'
			 AND ((r.bf @> ('own ' || g)) IS NOT TRUE)),
		  0::bigint, format('parallel bloom_union_agg case %s: holds the keys of every filter', o))
FROM generate_series(4, 5) o;

SELECT is((SELECT count(*) FROM generate_series(1, 20) c, par_res r
		   WHERE r.ord = 6 AND r.mode = 'parallel'
			 AND ((r.bf @> ('common ' || c)) IS NOT TRUE)),
		  0::bigint, 'parallel bloom_intersect_agg: holds the keys common to every filter');

SELECT is((SELECT (bloom_info(bf)->>'added')::bigint FROM par_res WHERE ord = 4 AND mode = 'parallel'),
		  4000 * 21::bigint, 'parallel bloom_union_agg: added is the sum over the 4,000 filters');

-- The union of the single filters is the filter of all their keys.
SELECT ok((SELECT bf FROM par_res WHERE ord = 4 AND mode = 'parallel')
		  = (SELECT bloom_add_all(bloom_empty(4000, 0.01, 'blocked'), array_agg(k ORDER BY o, k))
			 FROM (SELECT g AS o, unnest(array_append(ARRAY(SELECT 'common ' || c
															 FROM generate_series(1, 20) c),
													   'own ' || g)) AS k
				   FROM generate_series(1, 4000) g) s),
		  'parallel bloom_union_agg = bloom_add_all of every key of every filter');

SELECT * FROM finish();
ROLLBACK;
