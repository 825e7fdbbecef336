--
-- aggregates_auto: bloom_agg(key) and bloom_agg(key, capacity_or_fpr), the
-- internal-state forms (self-sizing, or sized for a capacity at fpr 0.01)
--
-- 20,000 rows, 5,000 distinct names, every name 4 times
CREATE TABLE auto_names AS
SELECT i AS id, 'name' || (i % 5000) AS name, i % 4 AS grp
FROM generate_series(1, 20000) i;
ALTER TABLE auto_names SET (parallel_workers = 2);
ANALYZE auto_names;

-- sized for exactly the distinct keys at 0.01; added counts the rows
SELECT bloom_info(bloom_agg(name)) - 'estimated_cardinality' - 'estimated_fpr' - 'bits_set' - 'fill'
FROM auto_names;
-- the same value as bloom_agg(key, n, fpr) with n the distinct count
SELECT bloom_agg(name) = bloom_agg(name, 5000, 0.01) AS one_arg,
       bloom_agg(name, 0.001) = bloom_agg(name, 5000, 0.001) AS fpr_0_001,
       bloom_agg(name, 0.25) = bloom_agg(name, 5000, 0.25) AS fpr_0_25,
       bloom_agg(id, 0.01) = bloom_agg(id, 20000, 0.01) AS all_distinct
FROM auto_names;
SELECT (SELECT bloom_agg(name, 0.05) FROM auto_names)
     = (SELECT bloom_agg(name, (SELECT count(DISTINCT name) FROM auto_names), 0.05)
        FROM auto_names) AS exact_distinct_count;

-- a whole number >= 1 is a capacity at fpr 0.01: the value of the sized form
SELECT bloom_agg(name, 20000) = bloom_agg(name, 20000, 0.01) AS capacity_int,
       bloom_agg(name, 20000::bigint) = bloom_agg(name, 20000, 0.01) AS capacity_bigint,
       bloom_agg(name, 20000.0) = bloom_agg(name, 20000, 0.01) AS capacity_numeric,
       bloom_agg(name, 1) = bloom_agg(name, 1, 0.01) AS capacity_one
FROM auto_names;
SELECT bloom_info(bloom_agg(name, 20000))->'capacity' AS capacity,
       bloom_info(bloom_agg(name, 20000))->'target_fpr' AS target_fpr,
       bloom_info(bloom_agg(name, 0.02))->'capacity' AS self_sized_capacity,
       bloom_info(bloom_agg(name, 0.02))->'target_fpr' AS self_sized_fpr
FROM auto_names;

-- no false negatives
SELECT count(*) AS misses
FROM auto_names, (SELECT bloom_agg(name) AS bf FROM auto_names) f
WHERE NOT f.bf @> auto_names.name;

-- other key kinds; duplicates by canonical bytes (42::int4 is 42::int8)
SELECT bloom_agg(x) = bloom_agg(x, 3, 0.01) AS int4_keys
FROM (VALUES (1), (2), (3), (2), (1)) v(x);
SELECT bloom_agg(x::int8) = bloom_agg(x, 3, 0.01) AS int8_equals_int4
FROM (VALUES (1), (2), (3), (2), (1)) v(x);
SELECT bloom_agg(x) = bloom_agg(x, 2, 0.01) AS char_n_trailing_blanks
FROM (VALUES ('a'::char(3)), ('a  '), ('b')) v(x);
SELECT bloom_agg(x) @> 'ab'::bytea AS bytea_keys
FROM (VALUES ('ab'::bytea), ('cd')) v(x);

-- one filter per group
SELECT grp, bloom_agg(name) = bloom_agg(name, 1250, 0.01) AS sized_per_group,
       bloom_info(bloom_agg(name))->'added' AS added
FROM auto_names GROUP BY grp ORDER BY grp;

-- NULL keys are skipped; zero rows or only NULL keys give NULL
SELECT bloom_agg(NULL::text) IS NULL AS all_null_1,
       bloom_agg(NULL::text, 0.01) IS NULL AS all_null_2,
       bloom_agg(NULL::text, 10) IS NULL AS all_null_3;
SELECT bloom_agg(name) IS NULL AS zero_rows, bloom_agg(name, 0.1) IS NULL AS zero_rows_fpr
FROM auto_names WHERE false;
SELECT bloom_info(bloom_agg(x))->'capacity' AS capacity,
       bloom_info(bloom_agg(x))->'added' AS added,
       bloom_agg(x) @> 1 AS has_one
FROM (VALUES (1), (NULL), (NULL), (1)) v(x);
-- only NULL keys: the second argument is checked all the same (a valid one
-- gives NULL), and must not change on a NULL key's row either
SELECT bloom_agg(x, -1) FROM (VALUES (NULL::int)) v(x);
SELECT bloom_agg(NULL::int, 'NaN');
SELECT bloom_agg(NULL::int, 'Infinity');
SELECT bloom_agg(NULL::int, 1.5);
SELECT bloom_agg(NULL::int, NULL::float8);
SELECT bloom_agg(NULL::int, 1e30);
SELECT bloom_agg(NULL::int, 1e-300);
SELECT bloom_agg(x, 0.5) IS NULL AS null_keys_valid_fpr,
       bloom_agg(x, 1000) IS NULL AS null_keys_valid_capacity
FROM (VALUES (NULL::int), (NULL)) v(x);
SELECT bloom_agg(x, CASE WHEN x IS NULL THEN 0.02 ELSE 0.01 END)
FROM (VALUES (1), (NULL)) v(x);

-- parallel plans combine serialized partial states (both modes)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_agg(name) FROM auto_names;
EXPLAIN (COSTS OFF) SELECT bloom_agg(name, 0.001), bloom_agg(name, 20000) FROM auto_names;
SELECT bloom_agg(name) AS p1, bloom_agg(name, 0.001) AS p2, bloom_agg(name, 20000) AS p3
FROM auto_names \gset
SET max_parallel_workers_per_gather = 0;
SELECT bloom_agg(name) = :'p1'::bloomfilter AS self_sized_parallel_equals_serial,
       bloom_agg(name, 0.001) = :'p2'::bloomfilter AS fpr_parallel_equals_serial,
       bloom_agg(name, 20000) = :'p3'::bloomfilter AS capacity_parallel_equals_serial
FROM auto_names;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- as a window function every row sees its own filter
SELECT id, bloom_info(bloom_agg(id % 2) OVER (ORDER BY id))->'capacity' AS capacity,
       bloom_info(bloom_agg(id % 2) OVER (ORDER BY id))->'added' AS added,
       bloom_info(bloom_agg(id, 10) OVER (ORDER BY id))->'added' AS capacity_mode_added
FROM generate_series(1, 4) id;

-- the catalog: the anyelement forms keep an internal state (combine and
-- (de)serialization); the forms for keys of a fixed type keep a real type
-- (bloom_agg_state, bloomfilter) with a combine function, so that Citus
-- pushes them down; all parallel safe
SELECT a.aggfnoid::regprocedure AS aggregate, a.aggtranstype::regtype AS state,
       a.aggcombinefn, a.aggserialfn <> 0 AS serial, p.proparallel
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE p.proname = 'bloom_agg' AND p.proargtypes[0] = 'anyelement'::regtype
ORDER BY p.pronargs;
SELECT p.pronargs, a.aggtranstype::regtype AS state, a.aggcombinefn,
       a.aggserialfn <> 0 AS serial, p.proparallel,
       string_agg(format_type(p.proargtypes[0], NULL), ', '
                  ORDER BY format_type(p.proargtypes[0], NULL)) AS key_types
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE p.proname = 'bloom_agg' AND p.proargtypes[0] <> 'anyelement'::regtype
GROUP BY 1, 2, 3, 4, 5 ORDER BY 1;

-- bad arguments
SELECT bloom_agg(name, NULL) FROM auto_names;
SELECT bloom_agg(name, 0) FROM auto_names;
SELECT bloom_agg(name, -3) FROM auto_names;
SELECT bloom_agg(name, -0.5) FROM auto_names;
SELECT bloom_agg(name, 1.5) FROM auto_names;
SELECT bloom_agg(name, 'NaN') FROM auto_names;
SELECT bloom_agg(name, 'Infinity') FROM auto_names;
SELECT bloom_agg(name, '-Infinity') FROM auto_names;
SELECT bloom_agg(name, 1e19) FROM auto_names;
SELECT bloom_agg(name, 1e-70) FROM auto_names;
SELECT bloom_agg(name, CASE WHEN id < 10 THEN 0.01 ELSE 0.02 END) FROM auto_names;
SELECT bloom_agg(name, CASE WHEN id < 10 THEN 0.01 ELSE 100 END) FROM auto_names;
SELECT bloom_agg(name, CASE WHEN id < 10 THEN 100 ELSE 0.01 END) FROM auto_names;
SELECT bloom_agg(x) FROM (VALUES ('1 day'::interval)) v(x);
SELECT bloom_agg(x, 0.01) FROM (VALUES (bloom_empty(10))) v(x);
-- past the cap: at 1e-52 a filter of 1 GB holds only 7 keys (raised when the
-- hash array is first compacted, or at the end)
SELECT bloom_agg(id, 1e-52) FROM auto_names;
SELECT bloom_agg(x, 1e-52) FROM generate_series(1, 10) x;
-- bloomfilter.agg_max_distinct lowers the cap
SET bloomfilter.agg_max_distinct = 100;
SELECT bloom_agg(x) FROM generate_series(1, 1000) x;
SELECT bloom_agg(x, 0.001) IS NOT NULL AS below_the_cap FROM generate_series(1, 90) x;
RESET bloomfilter.agg_max_distinct;

-- a compaction sorts the hashes added since the last one and merges them
-- with those sorted before: a key repeated across compactions counts once
SELECT bloom_agg(k) = bloom_agg(k, 30001, 0.01) AS repeats_across_compactions
FROM (SELECT 'r' || ((g::bigint * 7919) % 30001) AS k
      FROM generate_series(1, 200000) g) s;
SELECT bloom_agg(k) = bloom_agg(k, 1, 0.01) AS one_key_many_rows
FROM (SELECT 'same'::text AS k FROM generate_series(1, 10000)) s;

DROP TABLE auto_names;
