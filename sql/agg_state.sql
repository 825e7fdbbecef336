--
-- bloom_agg for keys of a fixed type, and bloom_agg_state, the state of the
-- self-sizing forms (what Citus ships from its workers to the coordinator)
--

-- Every supported key type has overloads of its own, hashed as its type:
-- the filters equal those that bloom_add_all (polymorphic) builds from the
-- same keys, and a self-sizing build equals the sized build for the
-- distinct count.  (One query, a row per key type.)
CREATE TABLE st_keys (i int, s smallint, b bigint, o oid, t text, v varchar(20),
                      c char(8), n name, u uuid, y bytea, bo boolean, r real,
                      d double precision, nu numeric, dt date, ts timestamp,
                      tz timestamptz);
INSERT INTO st_keys
SELECT i, i, i::bigint * 1000003, i::bigint * 1000003, 'k' || i, 'v' || i || '  ',
       'c' || i, 'n' || i, md5(i::text)::uuid, sha256(i::text::bytea), i % 2 = 0,
       i / 4.0, i * 1.1, i / 7.0, date '2000-01-01' + i,
       timestamp '2000-01-01' + i * interval '1 hour',
       timestamptz '2000-01-01 00:00 UTC' + i * interval '1 minute'
FROM generate_series(1, 3000) i;
INSERT INTO st_keys (i) VALUES (NULL);
-- (in the list's order: the branches of a UNION ALL may run in parallel)
SELECT 'SELECT key, type, sized, classic, self_sizing, self_sizing_fpr, capacity FROM ('
       || string_agg(format($q$
SELECT %2$s AS ord, %1$L AS key, (SELECT pg_typeof(%1$s) FROM st_keys LIMIT 1) AS type,
       bloom_agg(%1$s, 3000, 0.01)
         = bloom_add_all(bloom_empty(3000, 0.01), array_agg(%1$s) FILTER (WHERE %1$s IS NOT NULL)) AS sized,
       bloom_agg(%1$s, 3000, 0.01, 'classic')
         = bloom_add_all(bloom_empty(3000, 0.01, 'classic'), array_agg(%1$s) FILTER (WHERE %1$s IS NOT NULL)) AS classic,
       bloom_agg(%1$s) = bloom_agg(%1$s, (SELECT count(DISTINCT %1$s) FROM st_keys), 0.01) AS self_sizing,
       bloom_agg(%1$s, 0.001) = bloom_agg(%1$s, (SELECT count(DISTINCT %1$s) FROM st_keys), 0.001) AS self_sizing_fpr,
       bloom_agg(%1$s, 4000) = bloom_agg(%1$s, 4000, 0.01) AS capacity
FROM st_keys$q$, col, o), E'\nUNION ALL' ORDER BY o) || ') u ORDER BY ord'
FROM unnest(ARRAY['s', 'i', 'b', 'o', 't', 'v', 'c', 'n', 'u', 'y',
                  'bo', 'r', 'd', 'nu', 'dt', 'ts', 'tz']) WITH ORDINALITY AS c(col, o) \gexec
-- zero false negatives, every form and key type (the filters of capacity 10
-- are crowded on purpose: their notices are not shown)
SET client_min_messages = warning;
SELECT 'SELECT * FROM (' || string_agg(format($q$
SELECT %1$L AS key,
       count(*) FILTER (WHERE NOT f1 @> %1$s) AS missed_auto,
       count(*) FILTER (WHERE NOT f2 @> %1$s) AS missed_fpr,
       count(*) FILTER (WHERE NOT f3 @> %1$s) AS missed_capacity,
       count(*) FILTER (WHERE NOT f4 @> %1$s) AS missed_sized
FROM st_keys,
     (SELECT bloom_agg(%1$s) f1, bloom_agg(%1$s, 0.2) f2, bloom_agg(%1$s, 10) f3,
             bloom_agg(%1$s, 10, 0.5, 'classic') f4 FROM st_keys) f
WHERE %1$s IS NOT NULL$q$, col), E'\nUNION ALL' ORDER BY o) || ') u ORDER BY key'
FROM unnest(ARRAY['s', 'i', 'b', 'o', 't', 'v', 'c', 'n', 'u', 'y',
                  'bo', 'r', 'd', 'nu', 'dt', 'ts', 'tz']) WITH ORDINALITY AS c(col, o) \gexec
RESET client_min_messages;
-- "char" keys are still refused (by their own overloads)
SELECT bloom_agg(x) FROM (VALUES ('x'::"char")) AS v(x);
SELECT bloom_agg(x, 100, 0.01) FROM (VALUES ('x'::"char")) AS v(x);
-- a domain takes its base type's overload; bloom_literal (text under
-- another name, without overloads) the anyelement forms, hashed as text
CREATE DOMAIN st_small AS smallint;
CREATE DOMAIN st_stamp AS timestamptz;
SELECT bloom_agg(s::st_small) = bloom_agg(s) AS domain_as_base,
       bloom_agg(tz::st_stamp, 0.001) = bloom_agg(tz, 0.001) AS domain_as_base_fpr,
       bloom_agg(t::bloom_literal) = bloom_agg(t) AS literal_as_text,
       bloom_agg(t::bloom_literal, 3000, 0.01) = bloom_agg(t, 3000, 0.01) AS literal_as_text_sized
FROM st_keys;
DROP DOMAIN st_small;
DROP DOMAIN st_stamp;
-- a regclass column reaches the oid overloads through its implicit cast,
-- and is refused as its own type (as the anyelement forms refuse it)
CREATE TABLE st_rel (r regclass);
INSERT INTO st_rel VALUES ('st_keys');
SELECT bloom_agg(r) FROM st_rel;
SELECT bloom_agg(r, 100, 0.01) FROM st_rel;
SELECT bloom_agg(r, 0.01) OVER () FROM st_rel;
SELECT bloom_info(bloom_agg(r::oid))->>'key_kind' AS cast_to_oid FROM st_rel;
DROP TABLE st_rel;

-- the parallel plan combines bloom_agg_state partials: the same filter
ALTER TABLE st_keys SET (parallel_workers = 2);
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT bloom_agg(t) FROM st_keys;
-- (text keys ending in blanks add two hashes each: more hashes than rows)
CREATE TEMP TABLE st_par AS
SELECT bloom_agg(t) AS bf, bloom_agg(t, 100) AS bf_cap,
       bloom_agg(t || repeat(' ', i % 3)) AS bf_blanks FROM st_keys;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SELECT bloom_agg(t) = (SELECT bf FROM st_par) AS parallel_equals_serial,
       bloom_agg(t, 100) = (SELECT bf_cap FROM st_par) AS parallel_equals_serial_capacity,
       bloom_agg(t || repeat(' ', i % 3)) = (SELECT bf_blanks FROM st_par) AS parallel_equals_serial_blanks
FROM st_keys;

-- bloom_agg_state's text form is its binary form in base64.  Self-sizing:
-- "BLMA", version 1, key kind, 2 zero bytes, the rate, the rows added, the
-- number of hashes, then the hashes, strictly increasing (little-endian).
CREATE FUNCTION st_u64(x bigint) RETURNS bytea LANGUAGE sql AS $$
	SELECT string_agg(set_byte('\x00'::bytea, 0, ((x >> (8 * i)) & 255)::int),
	                  ''::bytea ORDER BY i)
	FROM generate_series(0, 7) i
$$;
CREATE FUNCTION st_make(kind int, nrows bigint, hashes bigint[],
                        fpr_le bytea DEFAULT '\x7b14ae47e17a843f', -- 0.01
                        version int DEFAULT 1) RETURNS text
LANGUAGE sql AS $$
	SELECT translate(encode('BLMA'::bytea || set_byte('\x00'::bytea, 0, version)
		|| set_byte('\x00'::bytea, 0, kind) || '\x0000'::bytea || fpr_le
		|| st_u64(nrows) || st_u64(cardinality(hashes))
		|| coalesce((SELECT string_agg(st_u64(h), ''::bytea ORDER BY o)
		             FROM unnest(hashes) WITH ORDINALITY u(h, o)), ''::bytea),
		'base64'), E'\n', '')
$$;
SELECT st_make(1, 3, ARRAY[1, 2, 3]) AS three_hashes;
-- text round trip: output is the input
SELECT st_make(1, 3, ARRAY[1, 2, 3])::bloom_agg_state::text = st_make(1, 3, ARRAY[1, 2, 3]) AS round_trip;
SELECT st_make(2, 5, ARRAY[5, 1000, 1000000, 9000000000])::bloom_agg_state::text
       = st_make(2, 5, ARRAY[5, 1000, 1000000, 9000000000]) AS round_trip_text_kind;
-- binary form: the payload
SELECT bloom_agg_state_send(st_make(1, 3, ARRAY[1, 2, 3])::bloom_agg_state)
       = decode(st_make(1, 3, ARRAY[1, 2, 3]), 'base64') AS send_is_payload;
-- capacity mode: the state is the filter bloom_agg(key, capacity) builds
SELECT translate(encode(bloom_agg(t, 100, 0.01)::bytea, 'base64'), E'\n', '')::bloom_agg_state::text
       = translate(encode(bloom_agg(t, 100, 0.01)::bytea, 'base64'), E'\n', '') AS round_trip_capacity
FROM st_keys;
-- bad input: 22P02 with a DETAIL saying what is wrong (as soft errors on
-- PostgreSQL 16 and later: pg_input_is_valid)
SELECT ''::bloom_agg_state;
SELECT 'abc'::bloom_agg_state;
SELECT '!!!!'::bloom_agg_state;
SELECT 'QkxNQQ=='::bloom_agg_state;
CREATE FUNCTION st_try(t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	PERFORM t::bloom_agg_state;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || detail;
END $$;
SELECT what, st_try(t) FROM (VALUES
	('valid', st_make(1, 3, ARRAY[1, 2, 3])),
	('empty', ''),
	('not base64', '****'),
	('bad padding', 'QUJD=A=='),
	('short header', 'QkxNQQE='),
	('version 2', st_make(1, 3, ARRAY[1, 2, 3], version => 2)),
	('no hashes', st_make(1, 0, ARRAY[]::bigint[])),
	('3 hashes of 1 text row', st_make(1, 1, ARRAY[1, 2, 3])),
	('4 hashes of 1 row', st_make(1, 1, ARRAY[1, 2, 3, 4])),
	('no rows', st_make(1, 0, ARRAY[1])),
	('hashes not increasing', st_make(1, 3, ARRAY[1, 3, 2])),
	('duplicate hashes', st_make(1, 3, ARRAY[1, 2, 2])),
	('rate of 0', st_make(1, 3, ARRAY[1, 2, 3], fpr_le => '\x0000000000000000')),
	('rate of 1', st_make(1, 3, ARRAY[1, 2, 3], fpr_le => '\x000000000000f03f')),
	('key kind 99', st_make(99, 3, ARRAY[1, 2, 3])),
	('truncated', left(st_make(1, 3, ARRAY[1, 2, 3]), 44)),
	('classic filter', translate(encode(bloom_empty(100, 0.01, 'classic')::bytea, 'base64'), E'\n', '')),
	('filter at 0.05', translate(encode(bloom_empty(100, 0.05)::bytea, 'base64'), E'\n', '')),
	('corrupt filter', translate(encode(substr(bloom_empty(100)::bytea, 1, 40), 'base64'), E'\n', '')),
	('scalable filter', translate(encode(bloom_add(bloom_empty_scalable(10, 0.01), 1)::bytea, 'base64'), E'\n', '')),
	('counting filter', translate(encode(bloom_empty(100, 0.01, 'counting')::bytea, 'base64'), E'\n', ''))
) v(what, t);
-- reading a state does not depend on bloomfilter.agg_max_distinct (a dump
-- restored, or partial states read by a coordinator, under a lower cap): a
-- state over the session's cap is read, and a build from it stops with the
-- cap's error
CREATE AGGREGATE st_merge(bloom_agg_state) (
	SFUNC = bloom_agg_state_combinefn, STYPE = bloom_agg_state,
	FINALFUNC = bloom_agg_state_finalfn);
SET bloomfilter.agg_max_distinct = 2;
SELECT st_make(1, 3, ARRAY[1, 2, 3])::bloom_agg_state::text = st_make(1, 3, ARRAY[1, 2, 3]) AS read_over_cap;
SELECT st_merge(st_make(1, 3, ARRAY[1, 2, 3])::bloom_agg_state);
RESET bloomfilter.agg_max_distinct;
SELECT bloom_info(st_merge(st_make(1, 3, ARRAY[1, 2, 3])::bloom_agg_state))->'capacity' AS capacity;
DROP AGGREGATE st_merge(bloom_agg_state);
-- the support functions work only inside an aggregate
SELECT bloom_agg_state_finalfn(st_make(1, 3, ARRAY[1, 2, 3])::bloom_agg_state);
-- ... with SQLSTATE 0A000 (callable from SQL: not an internal error)
DO $$
DECLARE
	s bloom_agg_state := st_make(1, 3, ARRAY[1, 2, 3]);
BEGIN
	BEGIN
		PERFORM bloom_agg_state_finalfn(s);
	EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'finalfn: %', SQLSTATE;
	END;
	BEGIN
		PERFORM bloom_agg_state_combinefn(s, s);
	EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'combinefn: %', SQLSTATE;
	END;
	BEGIN
		PERFORM bloom_agg_state_transfn(s, 1);
	EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'transfn: %', SQLSTATE;
	END;
END $$;
DROP FUNCTION st_try(text);
DROP FUNCTION st_make(int, bigint, bigint[], bytea, int);
DROP FUNCTION st_u64(bigint);
DROP TABLE st_keys;
