--
-- aggregates: bloom_agg, bloom_union_agg, bloom_intersect_agg
--
CREATE TABLE names AS
SELECT i AS id, 'name' || i AS name, i % 4 AS grp FROM generate_series(1, 20000) i;

SELECT bloom_info(bloom_agg(name, 20000)) - 'estimated_cardinality' - 'estimated_fpr' - 'bits_set' - 'fill'
FROM names;
SELECT bloom_agg(name, 20000) = bloom_agg(name, 20000, 0.01) AS default_fpr,
       bloom_agg(name, 20000, 0.01) = bloom_agg(name, 20000, 0.01, 'blocked') AS default_layout,
       bloom_info(bloom_agg(name, 20000, 0.05, 'classic'))->>'layout' AS classic
FROM names;

-- no false negatives
SELECT count(*) AS misses
FROM names, (SELECT bloom_agg(name, 20000, 0.01, 'classic') AS bf FROM names) f
WHERE NOT f.bf @> names.name;

-- one filter per group, and unions of them
CREATE TABLE per_group AS
SELECT grp, bloom_agg(name, 20000) AS bf FROM names GROUP BY grp;
SELECT bloom_union_agg(bf) = (SELECT bloom_agg(name, 20000) FROM names) AS union_equals_whole
FROM per_group;
SELECT bloom_info(bloom_intersect_agg(bf))->'added' AS intersect_added,
       bloom_intersect_agg(bf) @> 'name1'::text AS name1
FROM per_group WHERE grp IN (1, 2);
SELECT bloom_union_agg(bf) IS NULL AS union_of_nothing FROM per_group WHERE grp > 10;

-- NULL keys are skipped; zero rows or only NULL keys give NULL
SELECT bloom_agg(NULL::text, 10) IS NULL AS all_null;
SELECT bloom_agg(name, 10) IS NULL AS zero_rows FROM names WHERE false;
SELECT bloom_agg(x, 10) @> 1 AS has_one FROM (VALUES (1), (NULL), (NULL)) v(x);
-- only NULL keys: the sizing arguments are checked all the same (valid ones
-- give NULL), and must not change on a NULL key's row either
SELECT bloom_agg(NULL::int, 10, 'NaN');
SELECT bloom_agg(NULL::int, 0, 0.01);
SELECT bloom_agg(NULL::int, 10, 0.01, 'nope');
SELECT bloom_agg(NULL::int, NULL, 0.01);
SELECT bloom_agg(NULL::int, 10, NULL);
SELECT bloom_agg(NULL::int, 9000000000, 0.01);
SELECT bloom_agg(x, 10, 0.01) IS NULL AS null_keys_valid,
       bloom_agg(x, 10, 0.001, 'classic') IS NULL AS null_keys_valid_classic
FROM (VALUES (NULL::int), (NULL)) v(x);
SELECT bloom_agg(x, 10, CASE WHEN x IS NULL THEN 0.02 ELSE 0.01 END)
FROM (VALUES (1), (NULL)) v(x);
SELECT bloom_agg(x, 10, 0.01, CASE WHEN x IS NULL THEN 'classic' ELSE 'blocked' END)
FROM (VALUES (1), (NULL)) v(x);

-- parallel plans combine partial states
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE names SET (parallel_workers = 2);
EXPLAIN (COSTS OFF) SELECT bloom_agg(name, 20000) FROM names;
SELECT bloom_agg(name, 20000) AS par FROM names \gset
SET max_parallel_workers_per_gather = 0;
SELECT bloom_agg(name, 20000) = :'par'::bloomfilter AS parallel_equals_serial FROM names;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- as a window function every row sees its own state
SELECT id, bloom_info(bloom_agg(id, 10) OVER (ORDER BY id))->'added' AS added
FROM generate_series(1, 3) id;

-- bad arguments
SELECT bloom_agg(name, 0) FROM names;
SELECT bloom_agg(name, 100, 2) FROM names;
SELECT bloom_agg(name, 100, 0.01, 'nope') FROM names;
SELECT bloom_agg(name, NULL) FROM names;
SELECT bloom_agg(name, id) FROM names;
SELECT bloom_agg(x, 10) FROM (VALUES ('1 day'::interval)) v(x);
SELECT bloom_union_agg(bf) FROM (VALUES (bloom_empty(10)), (bloom_empty(20))) v(bf);
SELECT bloom_intersect_agg(bf) FROM (VALUES (bloom_empty(10) || 1), (bloom_empty(10) || 'a'::text)) v(bf);

DROP TABLE names, per_group;

-- over capacity: a NOTICE once the predicted rate passes twice the target,
-- with the capacity to use (at the end of a self-sizing-form build) or a
-- lower bound (while a sized build goes on); none within capacity
SELECT bloom_agg(i, 500) IS NOT NULL FROM generate_series(1, 1000) i;
SELECT bloom_agg(i, 600, 0.01) IS NOT NULL FROM generate_series(1, 2000) i;
SELECT bloom_agg(i % 100, 500) IS NOT NULL FROM generate_series(1, 100000) i;
SELECT bloom_agg(i, 1000, 0.01) IS NOT NULL FROM generate_series(1, 1000) i;
-- once per query, not once per group
SELECT count(*) FROM (SELECT bloom_agg(i, 100, 0.01) IS NOT NULL AS built
                       FROM generate_series(1, 10000) i GROUP BY i % 10) s WHERE built;

-- A filter of 512 kB or more, in a plain or sorted aggregation, adds its keys
-- in batches (the state is an expanded object with pending hashes): every
-- way of reading the result sees them all, and the value is byte for byte
-- the one a hashed aggregation (unbatched) builds.
CREATE TABLE big_keys AS
	SELECT g % 2 AS part, 'k' || g AS k FROM generate_series(1, 100000) g;
CREATE TEMP TABLE big_builds (how text, f bloomfilter);
INSERT INTO big_builds SELECT 'plain', bloom_agg(k, 450000, 0.01) FROM big_keys;
INSERT INTO big_builds SELECT 'classic', bloom_agg(k, 450000, 0.001, 'classic') FROM big_keys;
INSERT INTO big_builds SELECT 'counting', bloom_agg(k, 450000, 0.01, 'counting') FROM big_keys;
SET enable_sort = off;
INSERT INTO big_builds
	SELECT 'hashed ' || part, bloom_agg(k, 450000, 0.01) FROM big_keys GROUP BY part;
INSERT INTO big_builds
	SELECT 'hashed', bloom_agg(k, 450000, 0.01) FROM big_keys GROUP BY part / 2;
RESET enable_sort;
SET enable_hashagg = off;
INSERT INTO big_builds
	SELECT 'sorted ' || part, bloom_agg(k, 450000, 0.01) FROM big_keys GROUP BY part;
RESET enable_hashagg;
SELECT octet_length(f::bytea) >= 512 * 1024 AS batched_size,
       (SELECT f FROM big_builds WHERE how = 'hashed') = f AS same_as_hashed,
       bloom_info(f)->'added' AS added
FROM big_builds WHERE how = 'plain';
SELECT s.how, s.f = h.f AS same_as_hashed
FROM big_builds s JOIN big_builds h ON h.how = 'hashed ' || substr(s.how, 8)
WHERE s.how LIKE 'sorted %' ORDER BY 1;
-- a sorted ROLLUP feeds each row to two batched states of one call site in
-- turn (the group's and the total): both are the hashed builds' values
SET enable_hashagg = off;
SELECT r.part, r.f = coalesce(h.f, (SELECT f FROM big_builds WHERE how = 'hashed')) AS same_as_hashed
FROM (SELECT part, bloom_agg(k, 450000, 0.01) AS f FROM big_keys GROUP BY ROLLUP (part)) r
LEFT JOIN big_builds h ON h.how = 'hashed ' || r.part ORDER BY 1;
RESET enable_hashagg;
-- a batched state whose sizing changes on a later row
SELECT bloom_agg(k, CASE WHEN k = 'k50000' THEN 460000 ELSE 450000 END, 0.01) FROM big_keys;
-- every key of each build answers "maybe", read by an operator in place
SELECT b.how,
       (SELECT count(*) FROM big_keys k
        WHERE (b.how NOT LIKE '% %' OR b.how LIKE '% ' || k.part) AND
              NOT b.f @> k.k) AS false_negatives
FROM big_builds b ORDER BY 1;
-- the result of the aggregate used as it is (an expanded object), not stored
SELECT count(*) FILTER (WHERE NOT s.f @> k.k) AS false_negatives,
       count(*) FILTER (WHERE NOT bloom_contains(s.f, k.k)) AS false_negatives_fn
FROM (SELECT bloom_agg(k, 450000, 0.01) AS f FROM big_keys) s, big_keys k;
SELECT md5(bloom_agg(k, 450000, 0.01)::bytea) = (SELECT md5(f::bytea) FROM big_builds WHERE how = 'plain') AS cast_sees_all
FROM big_keys;
-- a partial aggregation: each worker's batched state reaches the leader whole
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE big_keys SET (parallel_workers = 2);
SELECT bloom_agg(k, 450000, 0.01) = (SELECT f FROM big_builds WHERE how = 'plain') AS parallel_same
FROM big_keys;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- over capacity: the NOTICE estimates from the bits, pending keys set first
SELECT bloom_info(bloom_agg('x' || g, 120000, 0.000001))->'added' AS added
FROM generate_series(1, 400000) g;
DROP TABLE big_keys;
