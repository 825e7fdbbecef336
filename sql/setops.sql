--
-- setops: union, intersection, equality
--
CREATE TABLE s AS
SELECT bloom_add_all(bloom_empty(1000), ARRAY['a', 'b', 'c']) AS x,
       bloom_add_all(bloom_empty(1000), ARRAY['c', 'd']) AS y;

SELECT (x | y) @> 'a'::text AS a, (x | y) @> 'd'::text AS d,
       bloom_union(x, y) = (x | y) AS fn_op, (x | y) = (y | x) AS commutes,
       bloom_info(x | y)->'added' AS added
FROM s;
SELECT (x & y) @> 'c'::text AS c, bloom_intersect(x, y) = (x & y) AS fn_op,
       (x & y) = (y & x) AS commutes, bloom_info(x & y)->'added' AS added
FROM s;
-- with an empty filter of the same parameters
SELECT (x | bloom_empty(1000)) = x AS union_identity,
       bloom_info(x & bloom_empty(1000))->'bits_set' AS intersect_empty_bits
FROM s;

SELECT x = x AS eq, x <> y AS ne, x = y AS eq_xy, NOT (x <> x) AS not_ne FROM s;

-- different parameters
SELECT x | bloom_empty(2000) FROM s;
SELECT x & bloom_empty(1000, 0.02) FROM s;
SELECT x | bloom_empty(1000, 0.01, 'classic') FROM s;
-- different key kinds
SELECT x | (bloom_empty(1000) || 1) FROM s;
SELECT x & (bloom_empty(1000) || 1) FROM s;

DROP TABLE s;
