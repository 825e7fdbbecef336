--
-- In PL/pgSQL, f := bloom_add(f, k), f := f || k and f := bloom_add_all(f, a)
-- add to the variable in place (an expanded object), with the semantics of
-- a copy: other variables and stored values never change.
--
CREATE FUNCTION expanded_demo() RETURNS TABLE (what text, ok boolean)
LANGUAGE plpgsql AS $$
DECLARE
	f	bloomfilter := bloom_empty(100000, 0.01);
	g	bloomfilter;
	h	bloomfilter;
BEGIN
	FOR i IN 1..10000 LOOP
		f := f || i;
	END LOOP;
	f := bloom_add_all(f, ARRAY[10001, 10002]);
	f := bloom_add(f, 10003);
	RETURN QUERY SELECT 'loop of adds = bloom_agg', f = bloom_agg(i, 100000)
		FROM generate_series(1, 10003) i;
	RETURN QUERY SELECT 'added', (bloom_info(f)->>'added')::int = 10003;

	g := f;							-- a copy
	g := bloom_add(g, -1);
	h := bloom_add(f, -2);			-- a new value; f unchanged
	RETURN QUERY SELECT 'g has -1, f does not change',
		g @> -1 AND (bloom_info(f)->>'added')::int = 10003 AND f <> g;
	RETURN QUERY SELECT 'h has -2, g does not', h @> -2 AND h <> g;

	CREATE TEMP TABLE expanded_t AS SELECT f AS bf;
	f := bloom_add(f, -3);
	RETURN QUERY SELECT 'stored value: unchanged by later adds',
		(SELECT bf FROM expanded_t) = bloom_agg(i, 100000)
		FROM generate_series(1, 10003) i;
END
$$;

SELECT * FROM expanded_demo();

-- Plain SQL returns a new value and never changes its input.
SELECT bf @> -4 AS stored_has_key, (bf || -4) @> -4 AS result_has_key
FROM expanded_t;

DROP TABLE expanded_t;
DROP FUNCTION expanded_demo();
