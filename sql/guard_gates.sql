--
-- The planner's gates on guard indexes: a scan whose condition compares a
-- guarded column with a value known before the scan is planned under a
-- BloomGuard node, which checks the guard and skips the scan on "no".
--
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE gg (id int PRIMARY KEY, k int4, k8 int8, s text, v varchar(20));
INSERT INTO gg SELECT g, g * 2, g * 3, 'u' || g, 'v' || g FROM generate_series(1, 2000) g;
CREATE INDEX gg_k ON gg USING bloomguard (k);
CREATE INDEX gg_k8 ON gg USING bloomguard (k8);
CREATE INDEX gg_s ON gg USING bloomguard (s);
CREATE INDEX gg_v ON gg USING bloomguard (v);
ANALYZE gg;
-- EXPLAIN ANALYZE without what varies between runs and versions
CREATE FUNCTION gg_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
		CONTINUE WHEN l ~ '^\s*Index Searches: ';	-- PostgreSQL 18
		RETURN NEXT regexp_replace(l, 'rows=(\d+)\.00', 'rows=\1', 'g');
	END LOOP;
END $$;

-- a point lookup: the guard first, the scan under it
EXPLAIN (COSTS OFF) SELECT * FROM gg WHERE k = 7;
-- "no": the scan is never run
SELECT gg_explain($q$SELECT * FROM gg WHERE k = 7$q$);
-- "maybe": the scan runs
SELECT gg_explain($q$SELECT * FROM gg WHERE k = 8$q$);
SELECT * FROM gg WHERE k = 8;
SELECT * FROM gg WHERE k = 7;
-- every guarded clause is checked; one "no" is enough
EXPLAIN (COSTS OFF) SELECT id FROM gg WHERE k = 8 AND s = 'nobody';
SELECT id FROM gg WHERE k = 8 AND s = 'nobody';
SELECT id FROM gg WHERE k = 8 AND s = 'u4';
-- IN lists and = ANY: "no" when no key may be there; NULL elements match nothing
EXPLAIN (COSTS OFF) SELECT id FROM gg WHERE k IN (1, 3, 5);
SELECT id FROM gg WHERE k IN (1, 3, 5);
SELECT id FROM gg WHERE k IN (1, 4, NULL) ORDER BY id;
SELECT id FROM gg WHERE k = ANY ('{}');
SELECT id FROM gg WHERE k = ANY (NULL::int[]);
-- an IN list under a gate, searched in an index: only for the "maybe" keys
CREATE INDEX gg_k_btree ON gg (k);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM gg WHERE k IN (3, 4, 5, 6);
SELECT gg_explain($q$SELECT id FROM gg WHERE k IN (3, 4, 5, 6)$q$);
SELECT id FROM gg WHERE k IN (3, 4, 5, 6, NULL) ORDER BY id;
SET enable_indexscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT id FROM gg WHERE k IN (3, 4, 5, 6);
SELECT id FROM gg WHERE k IN (3, 4, 5, 6) ORDER BY id;
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP INDEX gg_k_btree;
-- the function itself: NULL elements stay; a role that may not check the
-- guard, another index, a multidimensional array: the keys unchanged
SELECT bloom_guard_elements('gg_k', '{3,4,5,6,NULL}'::int4[]);
SELECT bloom_guard_elements('gg_k', '{3,4,5,6}'::int8[]);
SELECT bloom_guard_elements('gg_k', '{{3,4},{5,6}}'::int4[]);
SELECT bloom_guard_elements('gg_pkey', '{3,4,5,6}'::int4[]);
CREATE ROLE bf_gg_nobody;
SET ROLE bf_gg_nobody;
SELECT bloom_guard_elements('gg_k', '{3,4,5,6}'::int4[]);
RESET ROLE;
DROP ROLE bf_gg_nobody;
-- cross-type keys of the same kind, strings as the column's type
EXPLAIN (COSTS OFF) SELECT id FROM gg WHERE k8 = 9::int4;
SELECT id FROM gg WHERE k8 = 9::int4;
SELECT id FROM gg WHERE k = 8::int8;
SELECT id FROM gg WHERE v = 'v5'::text;
SELECT id FROM gg WHERE v = 'v5 ';
-- a parameter: custom and generic plans alike
PREPARE p(int) AS SELECT id FROM gg WHERE k = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE p(4);
EXECUTE p(4);
EXECUTE p(5);
RESET plan_cache_mode;
DEALLOCATE p;
-- an outer query's value, checked on each rescan
EXPLAIN (COSTS OFF)
SELECT x, (SELECT count(*) FROM gg WHERE k = x) FROM generate_series(1, 5) x;
SELECT x, (SELECT count(*) FROM gg WHERE k = x) FROM generate_series(1, 5) x;
-- a join's inner side: the restriction on the inner relation is gated
SELECT a.id, b.id FROM gg a JOIN gg b ON b.k8 = a.k8 WHERE b.k = 10 ORDER BY 1;

-- No gate where the key may fail to evaluate where the scan would not
-- evaluate it: a cast, arithmetic (the scan of an empty table succeeds)
CREATE TABLE gg_empty (k int4);
CREATE INDEX ON gg_empty USING bloomguard (k);
PREPARE q(text) AS SELECT * FROM gg_empty WHERE k = $1::int4;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE q('1');
EXECUTE q('abc');
PREPARE r(int) AS SELECT * FROM gg_empty WHERE k = 10 / $1;
EXECUTE r(0);
RESET plan_cache_mode;
DEALLOCATE q;
DEALLOCATE r;
-- a gate that answers "no" at the start raises nothing either
SELECT * FROM gg_empty WHERE k = 5 LIMIT 0;
-- a PL/pgSQL record's field is a parameter computed when read: unassigned,
-- without the field or of another type it would fail, and then is not
-- checked (the scan, under a false one-time filter or a false condition
-- first, never reads it); assigned, it is checked
CREATE FUNCTION gg_field(flag bool, fill bool) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	r record;
	n bigint;
BEGIN
	IF fill THEN
		SELECT 5 AS k INTO r;
	END IF;
	SELECT count(*) INTO n FROM gg_empty WHERE flag AND k = r.k;
	RETURN n;
END $$;
SET plan_cache_mode = force_generic_plan;
SELECT gg_field(true, true), gg_field(false, false), gg_field(false, true);
-- and BloomBatch does not prefetch with a filter argument read so (a 3.7 MB
-- filter: batched otherwise), which the checks never read here
CREATE TABLE gg_cand (id int, k int);
INSERT INTO gg_cand SELECT g, g FROM generate_series(1, 2000) g;
CREATE TABLE gg_filt (bf bloomfilter);
INSERT INTO gg_filt SELECT bloom_add_all(bloom_empty(3000000, 0.01), array_agg(g))
  FROM generate_series(2, 2000, 2) g;
ANALYZE gg_cand;
DO $$
DECLARE
	r record;
	n bigint;
BEGIN
	FOR i IN 1..8 LOOP
		IF i < 8 THEN
			SELECT bf INTO r FROM gg_filt;
		ELSE
			r := NULL;
		END IF;
		SELECT count(*) INTO n FROM gg_cand WHERE id < 0 AND r.bf @> k;
		IF n <> 0 THEN
			RAISE EXCEPTION 'iteration %: % rows', i, n;
		END IF;
	END LOOP;
END $$;
DROP TABLE gg_cand, gg_filt;
RESET plan_cache_mode;
DROP FUNCTION gg_field(bool, bool);

-- A cursor's plan is gated, and WHERE CURRENT OF finds the row in the gate
BEGIN;
EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR SELECT id, s FROM gg WHERE k = 8;
DECLARE c CURSOR FOR SELECT id, s FROM gg WHERE k = 8;
FETCH c;
UPDATE gg SET s = s || '!' WHERE CURRENT OF c;
SELECT s FROM gg WHERE id = 4;
ROLLBACK;

-- No gate: the setting off, TABLESAMPLE, row-level security
SET bloomfilter.planner_guards = off;
EXPLAIN (COSTS OFF) SELECT * FROM gg WHERE k = 7;
RESET bloomfilter.planner_guards;
EXPLAIN (COSTS OFF) SELECT * FROM gg TABLESAMPLE bernoulli (50) WHERE k = 7;
CREATE TABLE gg_rls (k int4);
CREATE INDEX ON gg_rls USING bloomguard (k);
ALTER TABLE gg_rls ENABLE ROW LEVEL SECURITY;
EXPLAIN (COSTS OFF) SELECT * FROM gg_rls WHERE k = 7;
DROP TABLE gg_rls;
-- a guard not yet valid is not used (indisvalid false, as after a failed
-- CREATE INDEX CONCURRENTLY)
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'gg_k'::regclass;
EXPLAIN (COSTS OFF) SELECT * FROM gg WHERE k = 7;
UPDATE pg_index SET indisvalid = true WHERE indexrelid = 'gg_k'::regclass;

-- A row written in the same transaction, statement or function is found
BEGIN;
INSERT INTO gg VALUES (5001, 7, 0, 'new', 'new');
SELECT id FROM gg WHERE k = 7;
ROLLBACK;
WITH ins AS (INSERT INTO gg VALUES (5002, 11, 0, 'w', 'w') RETURNING id)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM gg WHERE k = 11);
SELECT id FROM gg WHERE k = 11;
DELETE FROM gg WHERE id = 5002;

-- Partitions: a guard per partition (a partitioned index); a lookup by a
-- key that is not the partition key skips the partitions that cannot hold it
CREATE TABLE gp (id int, k int8, d int) PARTITION BY RANGE (d);
CREATE TABLE gp_0 PARTITION OF gp FOR VALUES FROM (0) TO (10);
CREATE TABLE gp_1 PARTITION OF gp FOR VALUES FROM (10) TO (20);
CREATE TABLE gp_2 PARTITION OF gp FOR VALUES FROM (20) TO (30);
INSERT INTO gp SELECT g, g * 7, g % 30 FROM generate_series(1, 3000) g;
CREATE INDEX gp_k ON gp USING bloomguard (k);
ANALYZE gp;
SELECT gg_explain($q$SELECT id, d FROM gp WHERE k = 70$q$);
SELECT id, d FROM gp WHERE k = 70;
-- a partition attached later gets its guard from the partitioned index
CREATE TABLE gp_3 (id int, k int8, d int);
INSERT INTO gp_3 VALUES (9001, 5, 35);
ALTER TABLE gp ATTACH PARTITION gp_3 FOR VALUES FROM (30) TO (40);
SELECT id, d FROM gp WHERE k = 5;
EXPLAIN (COSTS OFF) SELECT id FROM gp WHERE k = 5;
-- inheritance: each child by its own guard; a child without one is scanned
CREATE TABLE gi (k int4);
CREATE TABLE gi_c1 () INHERITS (gi);
CREATE TABLE gi_c2 () INHERITS (gi);
INSERT INTO gi_c1 VALUES (1), (2);
INSERT INTO gi_c2 VALUES (3);
CREATE INDEX ON gi USING bloomguard (k);
CREATE INDEX ON gi_c1 USING bloomguard (k);
EXPLAIN (COSTS OFF) SELECT * FROM gi WHERE k = 3;
SELECT * FROM gi WHERE k = 3;

-- Join clauses: the inner side of a nested loop, given the outer row's key,
-- is gated on each outer row (EXISTS made a semi join, NOT EXISTS an anti
-- join); not for an expression of the outer column
CREATE TABLE gj (name int4);
INSERT INTO gj VALUES (10), (20), (31), (NULL), (10000);
CREATE INDEX gg_k_probe ON gg (k);
ANALYZE gj;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF) SELECT name FROM gj WHERE EXISTS (SELECT 1 FROM gg WHERE gg.k = gj.name);
SELECT name FROM gj WHERE EXISTS (SELECT 1 FROM gg WHERE gg.k = gj.name) ORDER BY 1;
SELECT name FROM gj WHERE NOT EXISTS (SELECT 1 FROM gg WHERE gg.k = gj.name) ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT name FROM gj WHERE EXISTS (SELECT 1 FROM gg WHERE gg.k = gj.name + 1);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
DROP INDEX gg_k_probe;

-- Checks count as scans of the guard
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS counted FROM pg_stat_user_indexes WHERE indexrelname = 'gg_k';

DROP TABLE gg, gg_empty, gp, gi, gj CASCADE;
DROP FUNCTION gg_explain(text);
RESET client_min_messages;
RESET max_parallel_workers_per_gather;
