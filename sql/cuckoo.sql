--
-- cuckoo: the cuckoofilter type, its functions, operators, aggregate and
-- every error message
--

-- sizing: fingerprint bits from the rate, buckets for capacity at 95% load
SELECT cuckoo_empty(10);
SELECT cuckoo_info(cuckoo_empty(100000, 0.01));
SELECT p, cuckoo_info(cuckoo_empty(1000, p))->'fingerprint_bits' AS f
FROM unnest('{0.1,0.01,0.001,0.0001,1e-6}'::float8[]) p;
SELECT substr(cuckoo_empty(10)::bytea, 1, 16) AS header;

-- add, check, count, remove
CREATE TABLE c AS SELECT cuckoo_empty(100) || 'a' || 'b' || 'b' AS f;
SELECT f @> 'a' AS a, f @> 'zzz' AS zzz, 'b' <@ f AS b, cuckoo_contains(f, 'a') AS fn,
       cuckoo_count(f, 'a') AS count_a, cuckoo_count(f, 'b') AS count_b, cuckoo_count(f, 'zzz') AS count_zzz,
       cuckoo_info(f)->'count' AS count
FROM c;
SELECT (f - 'a') @> 'a' AS a_removed, cuckoo_count(f - 'b', 'b') AS b_once,
       cuckoo_remove(f, 'a')::bytea = (f - 'a')::bytea AS fn_op,
       (f - 'a' - 'b' - 'b')::bytea = ((cuckoo_empty(100) || 'x') - 'x')::bytea AS empty_again
FROM c;
SELECT (cuckoo_empty(100) || 42 || 43) @> 42 AS int_key, (cuckoo_empty(100) || 42) @> 42::int8 AS int8_key,
       ((cuckoo_empty(100) || 42) - 42) @> 42 AS int_removed;
-- NULLs
SELECT (f || NULL::text)::bytea = f::bytea AS add_null, (f - NULL::text)::bytea = f::bytea AS remove_null,
       cuckoo_add(NULL::cuckoofilter, 'a') IS NULL AS null_filter, (f @> NULL::text) IS NULL AS check_null
FROM c;
-- errors
SELECT f - 'zzz' FROM c;
SELECT cuckoo_empty(10) - 'a';
SELECT f || 1 FROM c;
SELECT f @> 1 FROM c;
SELECT cuckoo_empty(0);
SELECT cuckoo_empty(10, 0);
SELECT cuckoo_empty(10, 1e-12);
SELECT cuckoo_empty(10000000000, 0.01);
SELECT cuckoo_empty(10) || cuckoo_empty(10);

-- a full filter: an error that says what capacity to use, the value unchanged
CREATE TABLE full_f AS SELECT (SELECT cuckoo_agg(i, 8, 0.01) FROM generate_series(1, 8) i) AS f;
SELECT cuckoo_info(f)->'slots' AS slots, cuckoo_info(f)->'count' AS count FROM full_f;
DO $$
DECLARE
	f cuckoofilter := (SELECT f FROM full_f);
	before bytea := f::bytea;
	n int := 0;
BEGIN
	LOOP
		f := f || (1000 + n);
		n := n + 1;
	END LOOP;
EXCEPTION WHEN program_limit_exceeded THEN
	RAISE NOTICE 'full after % more adds; the value before the refused add is kept: %', n,
		(SELECT count(*) FROM generate_series(1000, 1000 + n - 1) i WHERE NOT f @> i) = 0;
END $$;
SELECT (SELECT cuckoo_agg(i, 8, 0.01) FROM generate_series(1, 100) i);

-- the aggregate
SELECT cuckoo_agg(x, 100, 0.01) @> 'b' AS b FROM (VALUES ('a'), ('b'), (NULL)) v(x);
SELECT cuckoo_agg(x, 100, 0.01) IS NULL AS no_rows FROM (SELECT 'a'::text WHERE false) v(x);
SELECT cuckoo_agg(x, n, 0.01) FROM (VALUES ('a', 100), ('b', 200)) v(x, n);
SELECT cuckoo_agg(x, NULL, 0.01) FROM (VALUES ('a')) v(x);

-- text, bytea and binary forms
SELECT (cuckoo_empty(10) || 'a')::text;
SELECT f::text::cuckoofilter::bytea = f::bytea AS text_rt, f::bytea::cuckoofilter::bytea = f::bytea AS bytea_rt,
       cuckoofilter_send(f) = f::bytea AS send_is_bytea FROM c;
CREATE TABLE cio (id int, f cuckoofilter);
INSERT INTO cio SELECT 1, f FROM c;
INSERT INTO cio SELECT 2, (SELECT cuckoo_agg(i, 100000, 0.001) FROM generate_series(1, 50000) i);
\copy cio TO 'results/cuckoo_io.bin' WITH (FORMAT binary)
CREATE TABLE cio2 (LIKE cio);
\copy cio2 FROM 'results/cuckoo_io.bin' WITH (FORMAT binary)
SELECT count(*) AS equal_after_binary_copy FROM cio JOIN cio2 USING (id) WHERE cio.f::bytea = cio2.f::bytea;
-- hostile input
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=0 data=AAAA'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=3 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=0 data=AAAAAAAAAAAAAAAAAAAA'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.010 count=0 data=AAAAAAAAAAAAAAAAAAAA'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=13 data=AAAAAAAAAAAAAAAAAAAA'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=nope buckets=3 capacity=10 target_fpr=0.01 count=0 data=AAAAAAAAAAAAAAAAAAAA'::cuckoofilter;
SELECT 'version=1 layout=blocked'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=0 data=AAAAAAAAAAAAAAAAAAA/'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=text buckets=3 capacity=10 target_fpr=0.01 count=1 data=AAAAAAAAAAAAAAAAAAA/'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=1 data=AAAAAAAAAAAAAAAAAAA/'::cuckoofilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=0 data=AAAAAAAAAAAAAAAAAAA='::cuckoofilter;
SELECT overlay(cuckoo_empty(10)::bytea PLACING '\x01'::bytea FROM 70 FOR 1)::cuckoofilter;
SELECT '\x00'::bytea::cuckoofilter;
SELECT bloom_empty(10)::bytea::cuckoofilter;
SELECT overlay(cuckoo_empty(10)::bytea PLACING '\x02'::bytea FROM 7 FOR 1)::cuckoofilter;
SELECT overlay(cuckoo_empty(10)::bytea PLACING '\x01'::bytea FROM 50 FOR 1)::cuckoofilter;
SELECT (cuckoo_empty(10)::bytea || '\x00'::bytea)::cuckoofilter;
SELECT cuckoo_empty(10)::bytea::bloomfilter;

DROP TABLE c, full_f, cio, cio2;

-- "char" keys are refused as by bloomfilter (a literal compared with a
-- "char" keeps its first byte); a key's equal check forms count once
SELECT cuckoo_empty(10) || 'a'::"char";
SELECT cuckoo_count(cuckoo_empty(10) || repeat('x', 63), (repeat('x', 63) || ' ')::text) AS count_once;
