-- agg_cap_parallel.sql: a self-sizing bloom_agg past its cap of distinct
-- keys fails with the same documented error (54000) in a parallel plan as in
-- a serial one, wherever the cap is noticed: in a worker while it collects
-- keys, in a worker when it serializes its partial state, or in the leader
-- when it combines partial states.  The cap is lowered with
-- bloomfilter.agg_max_distinct (the default, 100 million, is too costly to
-- exceed in a test); the deserializer treats a partial state over the cap
-- as corrupt, as it did at the default cap, so a partial state past the cap
-- that reached the leader would show as XX000.
--
-- The tables are regular ones (temporary tables are never scanned in
-- parallel) created in this transaction; parallel workers share it.
BEGIN;
SELECT plan(11);

SET LOCAL bloomfilter.agg_max_distinct = 1000;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_leader_participation = off;

-- 1,010 distinct keys: past the cap of 1,000, but a partial state holding
-- them all has not compacted its hash array since 512 (it has 1,024 slots),
-- so only the serialization notices.  To have one partial state hold them
-- all, no worker is allowed to start (max_parallel_workers = 0 below): the
-- leader runs the parallel plan's Partial Aggregate alone, and serializes
-- its state for the Finalize Aggregate as a worker would.
CREATE TABLE cap_one (i int8);
INSERT INTO cap_one SELECT generate_series(1, 1010);
ALTER TABLE cap_one SET (parallel_workers = 2);
-- the same keys over two workers: each holds about half, the leader's
-- combine notices
CREATE TABLE cap_two (i int8);
INSERT INTO cap_two SELECT generate_series(1, 1010);
ALTER TABLE cap_two SET (parallel_workers = 2);
-- 100,000 keys over two workers: each notices while collecting
CREATE TABLE cap_many (i int8);
INSERT INTO cap_many SELECT generate_series(1, 100000);
ALTER TABLE cap_many SET (parallel_workers = 2);
ANALYZE cap_one;
ANALYZE cap_two;
ANALYZE cap_many;

CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	l text;
	r text := '';
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		r := r || l || E'\n';
	END LOOP;
	RETURN r;
END
$$;

SELECT matches(pg_temp.plan_of('SELECT bloom_agg(i) FROM ' || t),
               'Partial Aggregate', t || ': the plan is parallel (Partial Aggregate under Gather)')
FROM unnest(ARRAY['cap_one', 'cap_two', 'cap_many']) t;

SELECT throws_ok('SELECT bloom_agg(i) FROM ' || t, '54000',
                 'bloom_agg without a capacity can size a filter for at most 1000 distinct keys',
                 t || ': bloom_agg(key) past the cap, parallel: 54000')
FROM unnest(ARRAY['cap_two', 'cap_many']) t;

SET LOCAL max_parallel_workers = 0;
SELECT throws_ok('SELECT bloom_agg(i) FROM cap_one', '54000',
                 'bloom_agg without a capacity can size a filter for at most 1000 distinct keys',
                 'cap_one: bloom_agg(key) past the cap, one partial state: 54000');
SELECT throws_ok('SELECT bloom_agg(i, 0.001) FROM cap_one', '54000',
                 'bloom_agg without a capacity can size a filter for at most 1000 distinct keys',
                 'cap_one: bloom_agg(key, fpr) past the cap, one partial state: 54000');
RESET max_parallel_workers;

-- the serial plan gives the same error
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT throws_ok('SELECT bloom_agg(i) FROM ' || t, '54000',
                 'bloom_agg without a capacity can size a filter for at most 1000 distinct keys',
                 t || ': bloom_agg(key) past the cap, serial: 54000')
FROM unnest(ARRAY['cap_one', 'cap_many']) t;

-- at the cap exactly, both plans build the same filter
SET LOCAL bloomfilter.agg_max_distinct = 1010;
SET LOCAL max_parallel_workers_per_gather = 2;
CREATE TEMP TABLE at_cap AS SELECT bloom_agg(i) AS par FROM cap_one;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT is((SELECT par FROM at_cap), (SELECT bloom_agg(i) FROM cap_one),
          'at the cap: the parallel filter equals the serial one');
SELECT is((SELECT bloom_info(par)->>'capacity' FROM at_cap), '1010',
          'at the cap: sized for the 1,010 distinct keys');

SELECT * FROM finish();
ROLLBACK;
