--
-- nulls.sql — NULL keys, NULL filters, NULL array elements.
--
-- Adding NULL leaves a filter unchanged; checking NULL returns NULL;
-- bloom_contains_all / bloom_contains_any treat NULL elements exactly as
-- "true = ALL (...)" / "true = ANY (...)" over the per-element checks (the
-- install script's documented semantics); the aggregates skip NULL inputs and
-- return NULL when there is nothing to aggregate.
--
BEGIN;
SELECT plan(69);

DO $$ BEGIN PERFORM setseed(0.1717); END $$;

-- Per layout: f holds the integers 1..1000; absent lists keys that f
-- definitely does not hold (checked, so no false positive can blur a case).
CREATE TEMP TABLE nl_f AS
SELECT l AS layout, bloom_agg(i, 1000, 0.01, l) AS f
FROM unnest(ARRAY['blocked', 'classic']) l, generate_series(1, 1000) i
GROUP BY l;

CREATE TEMP TABLE nl_absent AS
SELECT n.layout, array_agg(a ORDER BY a) AS keys
FROM nl_f n, generate_series(1000001, 1002000) a
WHERE NOT n.f @> a
GROUP BY n.layout;

CREATE FUNCTION pg_temp.f(l text) RETURNS bloomfilter
LANGUAGE sql STABLE AS $$ SELECT f FROM nl_f WHERE layout = l $$;

--
-- Adding NULL leaves the filter unchanged.
--
SELECT ok(bloom_add(pg_temp.f(l), NULL::int) = pg_temp.f(l),
		  l || ': bloom_add(f, NULL) = f')
FROM unnest(ARRAY['blocked', 'classic']) l;

SELECT ok((pg_temp.f(l) || NULL::int8) = pg_temp.f(l),
		  l || ': f || NULL = f')
FROM unnest(ARRAY['blocked', 'classic']) l;

SELECT ok(bloom_add(bloom_empty(100), NULL::text) = bloom_empty(100),
		  'bloom_add(empty filter, NULL) = the empty filter');
SELECT is(bloom_info(bloom_add(bloom_empty(100), NULL::text))->>'key_kind', 'none',
		  'bloom_add(empty filter, NULL) leaves the key kind unset');
SELECT is(bloom_info(bloom_add(pg_temp.f('blocked'), NULL::int))->>'added', '1000',
		  'bloom_add(f, NULL) does not count an add');

SELECT ok(bloom_add_all(pg_temp.f('blocked'), ARRAY[NULL, NULL]::int[]) = pg_temp.f('blocked'),
		  'bloom_add_all(f, {NULL,NULL}) = f');
SELECT ok(bloom_add_all(pg_temp.f('classic'), ARRAY[5, NULL, 2000, NULL]::int[])
		  = bloom_add_all(pg_temp.f('classic'), ARRAY[5, 2000]::int[]),
		  'bloom_add_all(f, {5,NULL,2000,NULL}) = bloom_add_all(f, {5,2000})');
SELECT ok(bloom_add_all(pg_temp.f('blocked'), '{}'::int[]) = pg_temp.f('blocked'),
		  'bloom_add_all(f, {}) = f');
SELECT ok(bloom_add_all(pg_temp.f('blocked'), NULL::int[]) = pg_temp.f('blocked'),
		  'bloom_add_all(f, NULL array) = f (a NULL array has no keys to add)');

-- The expanded (in-place) path in PL/pgSQL.
CREATE FUNCTION pg_temp.loop_with_nulls(l text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
	f	bloomfilter := bloom_empty(1000, 0.01, l);
	k	int;
BEGIN
	f := bloom_add(f, NULL::int);
	FOR k IN 1 .. 1000 LOOP
		f := bloom_add(f, k);
		f := bloom_add(f, NULL::int);
		f := f || NULL::int;
	END LOOP;
	RETURN f = pg_temp.f(l);
END
$fn$;

SELECT ok(pg_temp.loop_with_nulls(l),
		  l || ': adding NULLs between the keys in a PL/pgSQL loop changes nothing')
FROM unnest(ARRAY['blocked', 'classic']) l;

--
-- Checking NULL returns NULL.
--
SELECT is(bloom_contains(pg_temp.f('blocked'), NULL::int), NULL, 'bloom_contains(f, NULL) is NULL');
SELECT is(pg_temp.f('classic') @> NULL::int8, NULL, 'f @> NULL is NULL');
SELECT is(NULL::int2 <@ pg_temp.f('blocked'), NULL, 'NULL <@ f is NULL');
SELECT is(bloom_contains(bloom_empty(10), NULL::text), NULL,
		  'bloom_contains(empty filter, NULL) is NULL');
SELECT is(bloom_contains(NULL::bloomfilter, 1), NULL, 'bloom_contains(NULL filter, key) is NULL');
SELECT is(bloom_contains_all(pg_temp.f('blocked'), NULL::int[]), NULL,
		  'bloom_contains_all(f, NULL array) is NULL');
SELECT is(bloom_contains_any(pg_temp.f('blocked'), NULL::int[]), NULL,
		  'bloom_contains_any(f, NULL array) is NULL');

--
-- bloom_contains_all / _any: the truth table of = ALL / = ANY.
-- p is a key the filter holds, a one it definitely does not hold.
--
CREATE TEMP TABLE nl_tt (ord serial, fn text, descr text, arr int8[], want boolean);
INSERT INTO nl_tt (fn, descr, arr, want)
SELECT fn, descr, arr, want
FROM (SELECT 1::int8 AS p, (SELECT keys[1] FROM nl_absent WHERE layout = 'blocked') AS a) k,
LATERAL (VALUES
	('all', '{}',               '{}'::int8[],                    true),
	('all', '{p}',              ARRAY[p],                         true),
	('all', '{p,p}',            ARRAY[p, p],                      true),
	('all', '{a}',              ARRAY[a],                         false),
	('all', '{p,a}',            ARRAY[p, a],                      false),
	('all', '{NULL}',           ARRAY[NULL]::int8[],              NULL),
	('all', '{p,NULL}',         ARRAY[p, NULL],                   NULL),
	('all', '{a,NULL}',         ARRAY[a, NULL],                   false),
	('all', '{NULL,a}',         ARRAY[NULL, a],                   false),
	('all', '{{p,NULL},{p,p}}', ARRAY[[p, NULL], [p, p]],         NULL),
	('all', '{{p,p},{p,a}}',    ARRAY[[p, p], [p, a]],            false),
	('any', '{}',               '{}'::int8[],                    false),
	('any', '{p}',              ARRAY[p],                         true),
	('any', '{a}',              ARRAY[a],                         false),
	('any', '{a,p}',            ARRAY[a, p],                      true),
	('any', '{NULL}',           ARRAY[NULL]::int8[],              NULL),
	('any', '{p,NULL}',         ARRAY[p, NULL],                   true),
	('any', '{NULL,p}',         ARRAY[NULL, p],                   true),
	('any', '{a,NULL}',         ARRAY[a, NULL],                   NULL),
	('any', '{{a,NULL},{a,a}}', ARRAY[[a, NULL], [a, a]],         NULL),
	('any', '{{a,a},{a,p}}',    ARRAY[[a, a], [a, p]],            true)
) AS t(fn, descr, arr, want);

SELECT is(CASE fn WHEN 'all' THEN bloom_contains_all(pg_temp.f('blocked'), arr)
				  ELSE bloom_contains_any(pg_temp.f('blocked'), arr) END,
		  want, format('bloom_contains_%s(f, %s) is %s', fn, descr, coalesce(want::text, 'NULL')))
FROM (SELECT * FROM nl_tt ORDER BY ord) t;

-- The same over 3,000 random arrays per layout, against the reference
-- expressions true = ALL / ANY (the per-element checks).
CREATE TEMP TABLE nl_rand AS
SELECT n.layout, r.id, r.arr
FROM nl_f n
CROSS JOIN LATERAL (
	SELECT id, ARRAY(
		SELECT CASE WHEN x < 0.15 THEN NULL
					WHEN x < 0.55 THEN 1 + floor(random() * 1000)::int8
					ELSE (SELECT keys[1 + floor(y * array_length(keys, 1))::int]
						  FROM nl_absent b WHERE b.layout = n.layout)
			   END
		FROM (SELECT random() AS x, random() AS y, j
			  FROM generate_series(1, (id % 7)) j) e
		ORDER BY j) AS arr
	FROM generate_series(1, 3000) id
) r;

SELECT is(n, 0::bigint,
		  layout || ': bloom_contains_all(f, arr) is true = ALL (f @> each element) for 3,000 random arrays')
FROM (SELECT l.layout, coalesce(m.n, 0) AS n
	  FROM unnest(ARRAY['blocked', 'classic']) AS l(layout)
	  LEFT JOIN (SELECT r.layout, count(*) AS n
				 FROM nl_rand r
				 WHERE bloom_contains_all(pg_temp.f(r.layout), r.arr)
					   IS DISTINCT FROM (true = ALL (SELECT pg_temp.f(r.layout) @> e
												   FROM unnest(r.arr) e))
				 GROUP BY r.layout) m USING (layout)
	  ORDER BY l.layout) s;

SELECT is(n, 0::bigint,
		  layout || ': bloom_contains_any(f, arr) is true = ANY (f @> each element) for 3,000 random arrays')
FROM (SELECT l.layout, coalesce(m.n, 0) AS n
	  FROM unnest(ARRAY['blocked', 'classic']) AS l(layout)
	  LEFT JOIN (SELECT r.layout, count(*) AS n
				 FROM nl_rand r
				 WHERE bloom_contains_any(pg_temp.f(r.layout), r.arr)
					   IS DISTINCT FROM (true = ANY (SELECT pg_temp.f(r.layout) @> e
												   FROM unnest(r.arr) e))
				 GROUP BY r.layout) m USING (layout)
	  ORDER BY l.layout) s;

-- The random arrays do cover every outcome.
SELECT is(array_agg(DISTINCT coalesce(bloom_contains_all(pg_temp.f(layout), arr)::text, 'NULL')
					ORDER BY coalesce(bloom_contains_all(pg_temp.f(layout), arr)::text, 'NULL')),
		  ARRAY['NULL', 'false', 'true'], 'the random arrays give true, false and NULL')
FROM nl_rand;

--
-- Aggregates skip NULL inputs.
--
SELECT ok((SELECT bloom_agg(CASE WHEN i % 4 = 0 THEN NULL ELSE i END, 1000, 0.01, l)
		   FROM generate_series(1, 1000) i)
		  = (SELECT bloom_agg(i, 1000, 0.01, l) FROM generate_series(1, 1000) i WHERE i % 4 <> 0),
		  l || ': bloom_agg over keys with NULLs = bloom_agg over the non-NULL keys')
FROM unnest(ARRAY['blocked', 'classic']) l;

SELECT ok((SELECT bloom_agg(k, 10 ORDER BY o)
		   FROM (VALUES (1, NULL::text), (2, NULL), (3, 'x'), (4, NULL), (5, 'y')) v(o, k))
		  = (SELECT bloom_agg(k, 10) FROM (VALUES ('x'::text), ('y')) v(k)),
		  'bloom_agg whose first keys are NULL = bloom_agg over the non-NULL keys');

SELECT is((SELECT bloom_info(bloom_agg(CASE WHEN i % 3 = 0 THEN NULL ELSE i END, 1000))->>'added'
		   FROM generate_series(1, 999) i),
		  '666', 'bloom_agg counts only the non-NULL keys as added');

SELECT is((SELECT bloom_agg(i, 1000) FROM generate_series(1, 10) i WHERE false), NULL,
		  'bloom_agg(key, capacity) over zero rows is NULL');
SELECT is((SELECT bloom_agg(i, 1000, 0.001) FROM generate_series(1, 10) i WHERE false), NULL,
		  'bloom_agg(key, capacity, fpr) over zero rows is NULL');
SELECT is((SELECT bloom_agg(i, 1000, 0.01, 'classic') FROM generate_series(1, 10) i WHERE false),
		  NULL, 'bloom_agg(key, capacity, fpr, layout) over zero rows is NULL');
SELECT is((SELECT bloom_info(bloom_agg(NULL::int, 1000)) FROM generate_series(1, 10) i), NULL,
		  'bloom_agg over only NULL keys is NULL (as over zero rows)');

CREATE TEMP TABLE nl_fs AS
SELECT l AS layout, o, CASE o WHEN 2 THEN bloom_agg(i, 1000, 0.01, l) FILTER (WHERE i <= 600)
							  WHEN 4 THEN bloom_agg(i, 1000, 0.01, l) FILTER (WHERE i > 400)
							  ELSE NULL END AS bf
FROM unnest(ARRAY['blocked', 'classic']) l, generate_series(1, 5) o, generate_series(1, 1000) i
GROUP BY l, o;

SELECT ok((SELECT bloom_union_agg(bf ORDER BY o) FROM nl_fs WHERE layout = l)
		  = (SELECT a.bf | b.bf FROM nl_fs a, nl_fs b
			 WHERE a.layout = l AND b.layout = l AND a.o = 2 AND b.o = 4),
		  l || ': bloom_union_agg(NULL, A, NULL, B, NULL) = A | B')
FROM unnest(ARRAY['blocked', 'classic']) l;

SELECT ok((SELECT bloom_intersect_agg(bf ORDER BY o) FROM nl_fs WHERE layout = l)
		  = (SELECT a.bf & b.bf FROM nl_fs a, nl_fs b
			 WHERE a.layout = l AND b.layout = l AND a.o = 2 AND b.o = 4),
		  l || ': bloom_intersect_agg(NULL, A, NULL, B, NULL) = A & B')
FROM unnest(ARRAY['blocked', 'classic']) l;

SELECT is((SELECT bloom_union_agg(bf) FROM nl_fs WHERE false), NULL,
		  'bloom_union_agg over zero rows is NULL');
SELECT is((SELECT bloom_union_agg(bf) FROM nl_fs WHERE bf IS NULL), NULL,
		  'bloom_union_agg over only NULL filters is NULL');
SELECT is((SELECT bloom_intersect_agg(bf) FROM nl_fs WHERE false), NULL,
		  'bloom_intersect_agg over zero rows is NULL');
SELECT is((SELECT bloom_intersect_agg(bf) FROM nl_fs WHERE bf IS NULL), NULL,
		  'bloom_intersect_agg over only NULL filters is NULL');

--
-- The other functions are strict.
--
SELECT is(bloom_union(pg_temp.f('blocked'), NULL), NULL, 'bloom_union(f, NULL) is NULL');
SELECT is(pg_temp.f('blocked') | NULL::bloomfilter, NULL, 'f | NULL is NULL');
SELECT is(pg_temp.f('blocked') & NULL::bloomfilter, NULL, 'f & NULL is NULL');
SELECT is(pg_temp.f('blocked') = NULL::bloomfilter, NULL, 'f = NULL is NULL');
SELECT is(bloom_info(NULL), NULL, 'bloom_info(NULL) is NULL');
SELECT is(bloom_cardinality(NULL), NULL, 'bloom_cardinality(NULL) is NULL');
SELECT is(NULL::bloomfilter::bytea, NULL, 'NULL::bloomfilter::bytea is NULL');

SELECT * FROM finish();
ROLLBACK;
