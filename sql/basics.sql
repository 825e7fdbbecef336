--
-- basics: construction, adding, checking, inspection, NULLs
--

-- an empty filter sized for 1000 keys at 1%
SELECT bloom_info(bloom_empty(1000));
SELECT bloom_info(bloom_empty(1000, 0.01, 'classic'));
SELECT bloom_info(bloom_empty(1000, 0.001))->>'hashes' AS hashes_at_0_1_pct;

-- add and check
SELECT bloom_contains(bloom_add(bloom_empty(100), 'alice'::text), 'alice'::text);
SELECT bloom_add(bloom_empty(100), 'alice'::text) @> 'alice'::text AS has_alice,
       bloom_add(bloom_empty(100), 'alice'::text) @> 'bob'::text AS has_bob;
SELECT 'alice'::text <@ (bloom_empty(100) || 'alice'::text) AS alice_in;
-- unknown literals resolve to text
SELECT (bloom_empty(100) || 'carol') @> 'carol' AS carol;

CREATE TABLE f (id int PRIMARY KEY, bf bloomfilter);
INSERT INTO f VALUES (1, bloom_add_all(bloom_empty(1000), ARRAY['a', 'b', 'c', NULL]));
SELECT bloom_contains_all(bf, ARRAY['a', 'b']) AS all_ab,
       bloom_contains_all(bf, ARRAY['a', 'zz']) AS all_azz,
       bloom_contains_any(bf, ARRAY['zz', 'b']) AS any_zzb,
       bloom_contains_any(bf, ARRAY['zz', 'yy']) AS any_zzyy
FROM f;
-- three-valued logic as in = ALL / = ANY
SELECT bloom_contains_all(bf, ARRAY['a', NULL]) AS all_a_null,
       bloom_contains_all(bf, ARRAY['zz', NULL]) AS all_zz_null,
       bloom_contains_any(bf, ARRAY['a', NULL]) AS any_a_null,
       bloom_contains_any(bf, ARRAY['zz', NULL]) AS any_zz_null,
       bloom_contains_all(bf, '{}'::text[]) AS all_empty,
       bloom_contains_any(bf, '{}'::text[]) AS any_empty
FROM f;
-- the elements that may be present, in order, NULLs left out
SELECT bloom_maybe(bf, ARRAY['zz', 'c', NULL, 'a', 'yy', 'c']) AS maybe,
       bloom_maybe(bf, '{}'::text[]) AS maybe_empty,
       bloom_maybe(bloom_empty(10), ARRAY[1, 2]) AS maybe_from_empty_filter
FROM f;
SELECT bloom_maybe(bf, ARRAY[1, 2]) FROM f;
-- the NULL element was skipped: three keys added
SELECT bloom_info(bf)->'added' AS added, bloom_info(bf)->>'key_kind' AS key_kind FROM f;

-- NULL: adding NULL leaves the filter unchanged, checking NULL gives NULL
SELECT bloom_add(bf, NULL::text) = bf AS unchanged FROM f;
SELECT (bf || NULL::text) = bf AS unchanged_op FROM f;
SELECT bloom_add_all(bf, NULL::text[]) = bf AS unchanged_all FROM f;
SELECT bloom_contains(bf, NULL::text) IS NULL AS null_key,
       (bf @> NULL::text) IS NULL AS null_key_op,
       bloom_contains(NULL::bloomfilter, 'a'::text) IS NULL AS null_filter,
       bloom_add(NULL::bloomfilter, 'a'::text) IS NULL AS add_to_null,
       bloom_contains_all(bf, NULL::text[]) IS NULL AS null_array
FROM f;

-- a filter that holds no key yet says "no" to every kind of key
SELECT bloom_empty(10) @> 42 AS int_in_empty, bloom_empty(10) @> 'x'::text AS text_in_empty;

-- adding keeps the earlier keys (no false negatives)
SELECT count(*) FILTER (WHERE NOT bf @> ('k' || i)) AS misses
FROM (SELECT bloom_add_all(bloom_empty(500), array_agg('k' || i)) AS bf
      FROM generate_series(1, 500) i) s, generate_series(1, 500) i;

-- checks in a query read a stored filter once per call site
UPDATE f SET bf = (SELECT bloom_agg('user' || i, 50000) FROM generate_series(1, 50000) i);
SELECT octet_length(bf::bytea) AS bytes FROM f;
SELECT count(*) AS found FROM f, generate_series(1, 50000) i WHERE f.bf @> ('user' || i);
SELECT count(*) AS found_subquery FROM generate_series(1, 50000) i
WHERE (SELECT bf FROM f WHERE id = 1) @> ('user' || i);
-- two stored filters in turn: the cached copy must follow the row
INSERT INTO f SELECT 2, bloom_agg('other' || i, 50000) FROM generate_series(1, 50000) i;
SELECT f.id, count(*) AS found
FROM generate_series(1, 50000) i, f
WHERE f.bf @> ('user' || i) OR f.bf @> ('other' || i)
GROUP BY f.id ORDER BY f.id;
-- a filter changed between statements
UPDATE f SET bf = bf || 'late' WHERE id = 1;
SELECT id, bf @> 'late'::text AS has_late FROM f ORDER BY id;

-- estimates
SELECT round(bloom_cardinality(bf)) BETWEEN 49000 AND 51000 AS cardinality_ok,
       bloom_fpr(bf) BETWEEN 0.005 AND 0.0105 AS fpr_ok,
       (bloom_info(bf)->>'fill')::float8 BETWEEN 0.4 AND 0.6 AS fill_ok
FROM f WHERE id = 1;

-- bad parameters
SELECT bloom_empty(0);
SELECT bloom_empty(-5);
SELECT bloom_empty(100, 0);
SELECT bloom_empty(100, 1);
SELECT bloom_empty(100, 1.5);
SELECT bloom_empty(100, 'NaN');
SELECT bloom_empty(100, 0.01, 'linear');
SELECT bloom_empty(10000000000, 0.01);
SELECT bloom_empty(10000000000, 0.01, 'classic');
SELECT bloom_empty(10, 1e-300);
-- the rate is printed so that it reads back as the value given (not "1")
SELECT bloom_empty(9223372036854775807, 0.9999999999999999);
SELECT bloom_empty(9223372036854775807, 0.1);

-- ordering and hashing of values: DISTINCT, GROUP BY, ORDER BY, arrays
CREATE TABLE cmp (id int, bf bloomfilter);
INSERT INTO cmp VALUES
	(1, bloom_empty(10) || 'a'), (2, bloom_empty(10) || 'a'), (3, bloom_empty(10) || 'b'),
	(4, bloom_empty(10)), (5, bloom_empty(20) || 'a'), (6, bloom_empty(10, 0.01, 'classic') || 'a'),
	(7, NULL);
SELECT count(DISTINCT bf) AS distinct_values, count(*) AS rows FROM cmp;
SELECT array_agg(id ORDER BY id) AS ids FROM cmp GROUP BY bf ORDER BY min(id);
SET enable_hashagg = off;
SELECT array_agg(id ORDER BY id) AS ids FROM cmp GROUP BY bf ORDER BY min(id);
RESET enable_hashagg;
SELECT bloom_union_agg(DISTINCT bf) = (bloom_empty(10) || 'a' || 'b') AS union_distinct,
       bloom_info(bloom_union_agg(DISTINCT bf))->>'added' AS added_once,
       bloom_info(bloom_union_agg(bf))->>'added' AS added_all
FROM cmp WHERE id <= 4;
SELECT ARRAY[bloom_empty(10) || 'a'] = ARRAY[bloom_empty(10) || 'a'] AS arrays_equal,
       ARRAY[bloom_empty(10) || 'a'] = ARRAY[bloom_empty(10) || 'b'] AS arrays_differ,
       ARRAY[bloom_empty(10)] < ARRAY[bloom_empty(10) || 'a'] AS arrays_ordered;
-- the order: bytes of the portable format, unsigned, a prefix first
SELECT a.id, b.id, a.bf < b.bf AS lt, a.bf <= b.bf AS le, a.bf = b.bf AS eq,
       a.bf >= b.bf AS ge, a.bf > b.bf AS gt, bloom_cmp(a.bf, b.bf) AS cmp,
       sign(bloom_cmp(a.bf, b.bf)) = sign(compare_bytes) AS bytewise
FROM cmp a, cmp b,
     LATERAL (SELECT CASE WHEN a.bf::bytea < b.bf::bytea THEN -1
                          WHEN a.bf::bytea > b.bf::bytea THEN 1 ELSE 0 END) c(compare_bytes)
WHERE a.id IN (1, 3, 4, 5) AND b.id IN (2, 3, 5)
ORDER BY a.id, b.id;
SELECT id FROM cmp ORDER BY bf, id;
-- equal values hash alike; hash and merge joins use =
SELECT bloom_hash(a.bf) = bloom_hash(b.bf) AS same_hash,
       bloom_hash_extended(a.bf, 7) = bloom_hash_extended(b.bf, 7) AS same_hash64,
       bloom_hash_extended(a.bf, 7) <> bloom_hash_extended(a.bf, 8) AS seeded
FROM cmp a, cmp b WHERE a.id = 1 AND b.id = 2;
SET enable_mergejoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM cmp a JOIN cmp b ON a.bf = b.bf AND a.id < b.id;
SELECT a.id, b.id FROM cmp a JOIN cmp b ON a.bf = b.bf AND a.id < b.id ORDER BY 1, 2;
RESET enable_mergejoin; SET enable_hashjoin = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM cmp a JOIN cmp b ON a.bf = b.bf AND a.id < b.id;
SELECT a.id, b.id FROM cmp a JOIN cmp b ON a.bf = b.bf AND a.id < b.id ORDER BY 1, 2;
RESET enable_hashjoin; RESET enable_nestloop;
-- indexes (the plans of a prepared statement's generic plan: the same output
-- on every PostgreSQL version, unlike an InitPlan's)
CREATE INDEX cmp_btree ON cmp (bf);
SET enable_seqscan = off; SET enable_bitmapscan = off; SET plan_cache_mode = force_generic_plan;
PREPARE cmp_eq(bloomfilter) AS SELECT id FROM cmp WHERE bf = $1;
EXPLAIN (COSTS OFF) EXECUTE cmp_eq(NULL);
SELECT id FROM cmp WHERE bf = (SELECT bf FROM cmp WHERE id = 1) ORDER BY id;
DROP INDEX cmp_btree;
CREATE INDEX cmp_hash ON cmp USING hash (bf);
EXPLAIN (COSTS OFF) EXECUTE cmp_eq(NULL);
SELECT id FROM cmp WHERE bf = (SELECT bf FROM cmp WHERE id = 1) ORDER BY id;
DEALLOCATE cmp_eq;
RESET enable_seqscan; RESET enable_bitmapscan; RESET plan_cache_mode;
SELECT opc.opcname, am.amname, opc.opcdefault
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opc.opcintype = 'bloomfilter'::regtype ORDER BY am.amname;
SELECT oprname, oprcanhash, oprcanmerge FROM pg_operator
WHERE oprleft = 'bloomfilter'::regtype AND oprright = 'bloomfilter'::regtype
  AND oprname IN ('=', '<', '<=', '>', '>=', '<>') ORDER BY oprname;
DROP TABLE cmp;

DROP TABLE f;
