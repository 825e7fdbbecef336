--
-- keys.sql — included (\ir) by counting.sql, cuckoo.sql and scalable.sql,
-- not a test itself: the temporary table ck of i = 1..100,000, and
-- pg_temp.key_expr(kind), the SQL expression in i that gives a key of each
-- key kind (distinct for distinct i; boolean: both values).
--
CREATE TEMP TABLE ck (i int PRIMARY KEY);
INSERT INTO ck SELECT generate_series(1, 100000);

CREATE FUNCTION pg_temp.key_expr(kind text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE kind
		WHEN 'integer' THEN 'i::int8 * 7919'
		WHEN 'text' THEN '''key-'' || i'
		WHEN 'bytea' THEN 'convert_to(''b'' || i, ''UTF8'')'
		WHEN 'uuid' THEN 'md5(i::text)::uuid'
		WHEN 'boolean' THEN '(i % 2 = 0)'
		WHEN 'float' THEN 'i::float8 / 7'
		WHEN 'numeric' THEN 'i::numeric / 100'
		WHEN 'date' THEN 'date ''1900-01-01'' + i'
		WHEN 'timestamp' THEN 'timestamp ''2000-01-01'' + i * interval ''1 second'''
		WHEN 'timestamptz' THEN 'timestamptz ''2000-01-01 00:00:00+00'' + i * interval ''1 minute'''
	END
$$;
