--
-- setops.sql — union and intersection.
--
-- Per layout: A holds the integers 1..60,000, B 40,001..100,000, C the
-- multiples of 3 in 1..100,000; all sized for 100,000 keys at 1%.  Checked:
-- a union holds every key of both sides, an intersection every key present in
-- both; the operators, the functions and the aggregates agree; union and
-- intersection are commutative (and union associative); the union's bits are
-- the bitwise OR of the inputs' bits and the intersection's the bitwise AND
-- (checked independently with varbit); a union with an empty filter of the
-- same parameters is the identity; the added counts sum; unions of partial
-- aggregates equal the aggregate over everything.
--
BEGIN;
SELECT plan(44);

CREATE TEMP TABLE so_f (layout text, name text, bf bloomfilter, PRIMARY KEY (layout, name));

INSERT INTO so_f
SELECT l, 'A', bloom_agg(i, 100000, 0.01, l) FILTER (WHERE i <= 60000)
FROM unnest(ARRAY['blocked', 'classic']) l, generate_series(1, 100000) i GROUP BY l
UNION ALL
SELECT l, 'B', bloom_agg(i, 100000, 0.01, l) FILTER (WHERE i > 40000)
FROM unnest(ARRAY['blocked', 'classic']) l, generate_series(1, 100000) i GROUP BY l
UNION ALL
SELECT l, 'C', bloom_agg(i, 100000, 0.01, l) FILTER (WHERE i % 3 = 0)
FROM unnest(ARRAY['blocked', 'classic']) l, generate_series(1, 100000) i GROUP BY l
UNION ALL
SELECT l, 'E', bloom_empty(100000, 0.01, l)
FROM unnest(ARRAY['blocked', 'classic']) l;

-- The bits of a filter as a bit string (bit order is irrelevant to OR/AND).
CREATE FUNCTION pg_temp.payload_bits(f bloomfilter) RETURNS varbit
LANGUAGE sql IMMUTABLE AS $$
	SELECT ('x' || encode(substring(f::bytea FROM 65), 'hex'))::varbit
$$;

CREATE FUNCTION pg_temp.added(f bloomfilter) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT (bloom_info(f)->>'added')::bigint $$;

CREATE FUNCTION pg_temp.setops(layout text) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	what	text := layout || ': ';
	a		bloomfilter;
	b		bloomfilter;
	c		bloomfilter;
	e		bloomfilter;
	u		bloomfilter;
	x		bloomfilter;
	n		bigint;
BEGIN
	SELECT bf INTO a FROM so_f f WHERE f.layout = setops.layout AND f.name = 'A';
	SELECT bf INTO b FROM so_f f WHERE f.layout = setops.layout AND f.name = 'B';
	SELECT bf INTO c FROM so_f f WHERE f.layout = setops.layout AND f.name = 'C';
	SELECT bf INTO e FROM so_f f WHERE f.layout = setops.layout AND f.name = 'E';
	u := a | b;
	x := a & b;

	-- Union.
	SELECT count(*) INTO n FROM generate_series(1, 100000) i WHERE (u @> i) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'A | B holds every key of A and of B');

	SELECT count(*) INTO n
	FROM (SELECT f.bf | g.bf AS u FROM so_f f, so_f g
		  WHERE f.layout = setops.layout AND f.name = 'A'
			AND g.layout = setops.layout AND g.name = 'B' OFFSET 0) s,
		 generate_series(1, 100000) i
	WHERE (s.u @> i) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'stored A | stored B holds every key of A and of B');

	RETURN NEXT ok(bloom_union(a, b) = u, what || 'bloom_union(A, B) = A | B');
	RETURN NEXT ok((b | a) = u, what || 'union is commutative: B | A = A | B');
	RETURN NEXT ok(((a | b) | c) = (a | (b | c)), what || 'union is associative');
	RETURN NEXT ok(pg_temp.payload_bits(u) = (pg_temp.payload_bits(a) | pg_temp.payload_bits(b)),
				   what || 'the bits of A | B are the bitwise OR of the bits of A and B');
	RETURN NEXT is(pg_temp.added(u), pg_temp.added(a) + pg_temp.added(b),
				   what || 'added of A | B is added of A + added of B');

	RETURN NEXT ok((SELECT bloom_union_agg(bf) FROM so_f f
					WHERE f.layout = setops.layout AND f.name IN ('A', 'B')) = u,
				   what || 'bloom_union_agg over A, B = A | B');
	RETURN NEXT ok((SELECT bloom_union_agg(bf) FROM so_f f
					WHERE f.layout = setops.layout AND f.name IN ('A', 'B', 'C', 'E')) = (a | b | c),
				   what || 'bloom_union_agg over A, B, C, empty = A | B | C');

	-- Identity: the empty filter of the same parameters.
	RETURN NEXT ok(pg_temp.payload_bits(a | e) = pg_temp.payload_bits(a),
				   what || 'A | empty has the bits of A');
	RETURN NEXT ok((a | e) = a, what || 'A | empty = A');
	RETURN NEXT ok((e | a) = a, what || 'empty | A = A');
	RETURN NEXT ok(pg_temp.payload_bits(a | a) = pg_temp.payload_bits(a),
				   what || 'A | A has the bits of A');

	-- Intersection.
	SELECT count(*) INTO n FROM generate_series(40001, 60000) i WHERE (x @> i) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'A & B holds every key present in both');

	RETURN NEXT ok(bloom_intersect(a, b) = x, what || 'bloom_intersect(A, B) = A & B');
	RETURN NEXT ok((b & a) = x, what || 'intersection is commutative: B & A = A & B');
	RETURN NEXT ok(pg_temp.payload_bits(x) = (pg_temp.payload_bits(a) & pg_temp.payload_bits(b)),
				   what || 'the bits of A & B are the bitwise AND of the bits of A and B');
	RETURN NEXT ok(pg_temp.payload_bits(a & a) = pg_temp.payload_bits(a),
				   what || 'A & A has the bits of A');
	RETURN NEXT ok(pg_temp.payload_bits(a & e) = pg_temp.payload_bits(e),
				   what || 'A & empty has no bits set');

	RETURN NEXT ok((SELECT bloom_intersect_agg(bf) FROM so_f f
					WHERE f.layout = setops.layout AND f.name IN ('A', 'B')) = x,
				   what || 'bloom_intersect_agg over A, B = A & B');

	SELECT count(*) INTO n
	FROM generate_series(40001, 60000) i,
		 (SELECT bloom_intersect_agg(bf) AS bf FROM so_f f
		  WHERE f.layout = setops.layout AND f.name IN ('A', 'B', 'C')) s
	WHERE i % 3 = 0 AND (s.bf @> i) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint,
				   what || 'bloom_intersect_agg over A, B, C holds every key present in all three');

	-- Aggregating in parts and uniting the parts is aggregating everything.
	RETURN NEXT ok((SELECT bloom_union_agg(p) FROM
						(SELECT bloom_agg(i, 100000, 0.01, layout) AS p
						 FROM generate_series(1, 100000) i GROUP BY i % 7) s)
				   = (SELECT bloom_agg(i, 100000, 0.01, layout) FROM generate_series(1, 100000) i),
				   what || 'the union of bloom_agg over 7 parts = bloom_agg over all keys');
END
$fn$;

SELECT * FROM pg_temp.setops('blocked');
SELECT * FROM pg_temp.setops('classic');

SELECT * FROM finish();
ROLLBACK;
