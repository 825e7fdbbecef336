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

DROP TABLE f;
