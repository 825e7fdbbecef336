--
-- roundtrip.sql — a filter survives every way out of and back into the
-- server unchanged: text output/input, the bytea casts, bloomfilter_send and
-- binary COPY (recv), text COPY.  Both layouts; empty filters (several target
-- rates, to exercise the shortest-decimal target_fpr), one-key filters of
-- every key kind, and full 10,000-key filters.
--
-- The COPY files are written in the server's data directory (COPY TO refuses a
-- relative path) and overwritten on every run; the session must be superuser.
--
BEGIN;
SELECT plan(19);

CREATE TEMP TABLE rt_src (id int PRIMARY KEY, descr text NOT NULL, bf bloomfilter);

INSERT INTO rt_src (id, descr, bf)
SELECT row_number() OVER (ORDER BY l.o, c.o), l.layout || ': ' || c.descr, c.bf
FROM unnest(ARRAY['blocked', 'classic']) WITH ORDINALITY AS l(layout, o)
CROSS JOIN LATERAL (
	VALUES
	(1, 'empty, capacity 1000, fpr 0.01', bloom_empty(1000, 0.01, l.layout)),
	(2, 'empty, capacity 1, fpr 0.5', bloom_empty(1, 0.5, l.layout)),
	(3, 'empty, capacity 12345, fpr 0.1', bloom_empty(12345, 0.1, l.layout)),
	(4, 'empty, capacity 777, fpr 1e-9', bloom_empty(777, 1e-9, l.layout)),
	(5, 'empty, capacity 100, fpr 1/3', bloom_empty(100, 1.0 / 3, l.layout)),
	(6, 'one text key', bloom_add(bloom_empty(1000, 0.01, l.layout), 'ключ 🔑'::text)),
	(7, 'one empty-string key', bloom_add(bloom_empty(1000, 0.01, l.layout), ''::text)),
	(8, 'one integer key', bloom_add(bloom_empty(1000, 0.01, l.layout), 42)),
	(9, 'one bytea key', bloom_add(bloom_empty(1000, 0.01, l.layout), '\xdeadbeef'::bytea)),
	(10, 'one uuid key',
	 bloom_add(bloom_empty(1000, 0.01, l.layout), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid)),
	(11, 'full, 10,000 text keys',
	 (SELECT bloom_agg('key ' || i, 10000, 0.01, l.layout) FROM generate_series(1, 10000) i)),
	(12, 'full, 10,000 integer keys at 0.1%',
	 (SELECT bloom_agg(i, 10000, 0.001, l.layout) FROM generate_series(1, 10000) i)),
	(13, 'union of two 5,000-key halves',
	 (SELECT bloom_agg(i, 10000, 0.01, l.layout) FILTER (WHERE i <= 5000)
		   | bloom_agg(i, 10000, 0.01, l.layout) FILTER (WHERE i > 5000)
	  FROM generate_series(1, 10000) i))
) AS c(o, descr, bf);

-- Failing rows are listed by description; '{}' means none.
SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE (bf::text::bloomfilter = bf) IS NOT TRUE), '{}'),
		  '{}'::text[], 'text round trip: bf::text::bloomfilter = bf')
FROM rt_src;

SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE bf::text::bloomfilter::text IS DISTINCT FROM bf::text), '{}'),
		  '{}'::text[], 'text round trip: the text form reads back to the same text')
FROM rt_src;

SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE bf::text !~ ('^version=2 layout=(blocked|classic) hashes=[1-9][0-9]* '
											  'key_kind=[a-z]+ bits=[1-9][0-9]* capacity=[1-9][0-9]* '
											  'target_fpr=[0-9.e+-]+ added=(0|[1-9][0-9]*) '
											  'data=([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$')),
				   '{}'),
		  '{}'::text[], 'text form: one line, header fields in the documented order, base64 payload')
FROM rt_src;

SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE (bf::text ~ (' target_fpr=' || (bloom_info(bf)->>'target_fpr')::float8 || ' ')) IS NOT TRUE), '{}'),
		  '{}'::text[], 'text form: target_fpr is the shortest decimal of the target')
FROM rt_src;

SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE (bf::bytea::bloomfilter = bf) IS NOT TRUE), '{}'),
		  '{}'::text[], 'bytea round trip: bf::bytea::bloomfilter = bf')
FROM rt_src;

SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE bf::bytea::bloomfilter::bytea IS DISTINCT FROM bf::bytea), '{}'),
		  '{}'::text[], 'bytea round trip: the bytes read back to the same bytes')
FROM rt_src;

SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE bloomfilter_send(bf) IS DISTINCT FROM bf::bytea), '{}'),
		  '{}'::text[], 'bloomfilter_send(bf) = bf::bytea')
FROM rt_src;

SELECT is(coalesce(array_agg(descr ORDER BY id)
				   FILTER (WHERE bloom_to_bytea(bf) IS DISTINCT FROM bf::bytea
							  OR bloom_from_bytea(bf::bytea) IS DISTINCT FROM bf), '{}'),
		  '{}'::text[], 'bloom_to_bytea / bloom_from_bytea are the casts')
FROM rt_src;

-- The byte format (little-endian header, then the bits) agrees with bloom_info.
CREATE FUNCTION pg_temp.u64le(b bytea, off int) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
	SELECT sum(get_byte(b, off + j)::numeric * 256::numeric ^ j) FROM generate_series(0, 7) j
$$;

SELECT is(coalesce(array_agg(descr ORDER BY id) FILTER (WHERE NOT (
			  substring(b FROM 1 FOR 4) = 'BLMF'::bytea
			  AND get_byte(b, 4) = 2						-- version
			  AND get_byte(b, 5) = 1						-- family: bloom
			  AND get_byte(b, 6) = CASE i->>'layout' WHEN 'blocked' THEN 1 WHEN 'classic' THEN 2 END
			  AND get_byte(b, 7) = CASE i->>'key_kind' WHEN 'none' THEN 0 WHEN 'integer' THEN 1
									   WHEN 'text' THEN 2 WHEN 'bytea' THEN 3 WHEN 'uuid' THEN 4 END
			  AND get_byte(b, 8) + 256 * get_byte(b, 9) = (i->>'hashes')::int
			  AND get_byte(b, 10) = 0 AND get_byte(b, 11) = 0	-- flags
			  AND get_byte(b, 12) + 256 * get_byte(b, 13) = 1	-- layers
			  AND get_byte(b, 14) = 0 AND get_byte(b, 15) = 0
			  AND pg_temp.u64le(b, 16) = (i->>'bits')::numeric
			  AND pg_temp.u64le(b, 24) = (i->>'capacity')::numeric
			  AND float8send((i->>'target_fpr')::float8)
				  = (SELECT string_agg(substring(b FROM 33 + 7 - j FOR 1), ''::bytea ORDER BY j)
					 FROM generate_series(0, 7) j)	-- float8send is big-endian
			  AND pg_temp.u64le(b, 40) = (i->>'added')::numeric
			  AND substring(b FROM 49 FOR 16) = '\x00000000000000000000000000000000'::bytea
			  AND octet_length(b) = (i->>'bytes')::int		-- bytes: the whole value
			  AND (octet_length(b) - 64)::bigint * 8 = (i->>'bits')::bigint
			  AND bit_count(substring(b FROM 65)) = (i->>'bits_set')::bigint)), '{}'),
		  '{}'::text[], 'the bytea form is the documented header followed by the bits')
FROM (SELECT id, descr, bf::bytea AS b, bloom_info(bf) AS i FROM rt_src) s;

-- = tells different filters apart, and <> is its negation.
SELECT is(count(*), 0::bigint, 'no two different filters of the set compare equal')
FROM rt_src a JOIN rt_src b ON a.id < b.id
WHERE a.bf = b.bf;

SELECT is(count(*), 0::bigint, '<> is the negation of = on every pair')
FROM rt_src a, rt_src b
WHERE (a.bf <> b.bf) IS NOT DISTINCT FROM (a.bf = b.bf);

--
-- Binary COPY (send and recv) and text COPY through files.
--
CREATE TEMP TABLE rt_bin (LIKE rt_src);
CREATE TEMP TABLE rt_txt (LIKE rt_src);
CREATE TEMP TABLE rt_csv (LIKE rt_src);

-- COPY refuses a relative path for writing, so the files go into the data
-- directory by its absolute path.
DO $$
DECLARE
	dir text := current_setting('data_directory') || '/bloomfilter_pgtap_roundtrip';
BEGIN
	EXECUTE format('COPY rt_src TO %L (FORMAT binary)', dir || '.bin');
	EXECUTE format('COPY rt_src TO %L (FORMAT text)', dir || '.txt');
	EXECUTE format('COPY rt_src TO %L (FORMAT csv)', dir || '.csv');
	EXECUTE format('COPY rt_bin FROM %L (FORMAT binary)', dir || '.bin');
	EXECUTE format('COPY rt_txt FROM %L (FORMAT text)', dir || '.txt');
	EXECUTE format('COPY rt_csv FROM %L (FORMAT csv)', dir || '.csv');
END
$$;

SELECT is((SELECT count(*) FROM rt_bin), (SELECT count(*) FROM rt_src),
		  'binary COPY: every row read back');
SELECT is(coalesce(array_agg(s.descr ORDER BY s.id)
				   FILTER (WHERE (d.bf = s.bf) IS NOT TRUE), '{}'),
		  '{}'::text[], 'binary COPY round trip: every filter equal')
FROM rt_src s LEFT JOIN rt_bin d USING (id);

SELECT is((SELECT count(*) FROM rt_txt), (SELECT count(*) FROM rt_src),
		  'text COPY: every row read back');
SELECT is(coalesce(array_agg(s.descr ORDER BY s.id)
				   FILTER (WHERE (d.bf = s.bf) IS NOT TRUE), '{}'),
		  '{}'::text[], 'text COPY round trip: every filter equal')
FROM rt_src s LEFT JOIN rt_txt d USING (id);

SELECT is(coalesce(array_agg(s.descr ORDER BY s.id)
				   FILTER (WHERE (d.bf = s.bf) IS NOT TRUE), '{}'),
		  '{}'::text[], 'csv COPY round trip: every filter equal')
FROM rt_src s LEFT JOIN rt_csv d USING (id);

-- The copied full filters still hold every key (not only compare equal).
SELECT is(count(*), 0::bigint, 'binary COPY: the copied 10,000-key filters hold every key')
FROM rt_bin d, generate_series(1, 10000) i
WHERE d.descr LIKE '%full, 10,000 text keys'
  AND (d.bf @> ('key ' || i)) IS NOT TRUE;

SELECT is(count(*), 0::bigint, 'binary COPY: the copied one-key filters hold their key')
FROM rt_bin d
WHERE (CASE regexp_replace(d.descr, '^[a-z]+: ', '')
		   WHEN 'one text key' THEN d.bf @> 'ключ 🔑'::text
		   WHEN 'one empty-string key' THEN d.bf @> ''::text
		   WHEN 'one integer key' THEN d.bf @> 42::int8
		   WHEN 'one bytea key' THEN d.bf @> '\xdeadbeef'::bytea
		   WHEN 'one uuid key' THEN d.bf @> 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid
		   ELSE true
	   END) IS NOT TRUE;

-- A value read through recv can be stored and changed like any other.
SELECT ok((SELECT bloom_add(bf, 'another'::text) FROM rt_bin WHERE descr = 'blocked: one text key')
		  = (SELECT bloom_add(bf, 'another'::text) FROM rt_src WHERE descr = 'blocked: one text key'),
		  'a filter read by binary COPY accepts adds like the original');

SELECT * FROM finish();
ROLLBACK;
