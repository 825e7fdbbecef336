--
-- counting.sql — the counting layout (4-bit counters, bloom_remove) over
-- many keys: no false negatives for every key kind, measured false-positive
-- rate, removal at scale, saturation, round trips, and golden vectors of the
-- format (counter positions and nibble order), derived independently by
-- test/reader/bloomfilter_reader.py.
--
BEGIN;
SELECT plan(39);

-- ck: i = 1..100,000; pg_temp.key_expr(kind): a key of each kind from i
\ir include/keys.sql

-- 1-10: no false negatives: an aggregate of 100,000 keys, every key found;
-- then half removed, and every key of the other half still found
CREATE FUNCTION pg_temp.no_false_negatives(kind text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	e text := pg_temp.key_expr(kind);
	f bloomfilter;
	missing bigint;
	missing_after bigint;
BEGIN
	EXECUTE format('SELECT bloom_agg(%s, 100000, 0.01, ''counting'') FROM ck', e) INTO f;
	EXECUTE format('SELECT count(*) FROM ck WHERE NOT $1 @> (%s)', e) INTO missing USING f;
	IF kind <> 'boolean' THEN
		-- remove the keys of every 200th i one by one (each removal copies the
		-- 0.55 MB filter), then check the others
		FOR n IN 1 .. 500 LOOP
			EXECUTE format('SELECT bloom_remove($1, %s) FROM (SELECT $2 * 200 AS i) s', e)
				INTO f USING f, n;
		END LOOP;
		EXECUTE format('SELECT count(*) FROM ck WHERE i %% 200 <> 0 AND NOT $1 @> (%s)', e)
			INTO missing_after USING f;
	ELSE
		missing_after := 0;
	END IF;
	RETURN format('%s missing, %s missing after removals', missing, missing_after);
END $$;

SELECT is(pg_temp.no_false_negatives(k), '0 missing, 0 missing after removals',
		  'counting/' || k || ': 100,000 keys all found, and the kept ones after 500 removals')
FROM unnest('{integer,text,bytea,uuid,boolean,float,numeric,date,timestamp,timestamptz}'::text[]) k;

-- 11-12: the measured false-positive rate at 1% and 0.1% is within [0.8, 1.1] x target
CREATE FUNCTION pg_temp.measured_fpr(target float8) RETURNS float8 LANGUAGE sql AS $$
	SELECT count(*) FILTER (WHERE f @> ('absent-' || a))::float8 / 1000000
	FROM (SELECT bloom_agg('key-' || i, 100000, target, 'counting') AS f FROM ck) s,
		 generate_series(1, 1000000) a
$$;
SELECT ok(r BETWEEN 0.8 AND 1.1, format('counting at 1%%: measured rate %s x target', round(r::numeric, 3)))
FROM (SELECT pg_temp.measured_fpr(0.01) / 0.01 AS r) s;
SELECT ok(r BETWEEN 0.8 AND 1.1, format('counting at 0.1%%: measured rate %s x target', round(r::numeric, 3)))
FROM (SELECT pg_temp.measured_fpr(0.001) / 0.001 AS r) s;

-- 13-15: removals cancel adds exactly: 100,000 adds of every key then the
-- same 100,000 removals (through the union of a filter with its keys
-- removed, as counting union sums) give the empty filter
CREATE TEMP TABLE halves AS
SELECT bloom_agg('key-' || i, 100000, 0.01, 'counting') FILTER (WHERE i % 2 = 0) AS even,
	   bloom_agg('key-' || i, 100000, 0.01, 'counting') FILTER (WHERE i % 2 = 1) AS odd,
	   bloom_agg('key-' || i, 100000, 0.01, 'counting') AS whole
FROM ck;
SELECT ok((even | odd) = whole, 'union of the even and odd halves = the filter of all keys (counters add)') FROM halves;
SELECT is((WITH h AS MATERIALIZED (SELECT whole & odd AS x FROM halves)
		   SELECT count(*) FROM ck, h WHERE i % 2 = 1 AND NOT x @> ('key-' || i)), 0::bigint,
		  'the intersection with the odd half finds every odd key');
SELECT ok((bloom_info(even & odd)->>'counters_set')::int < (bloom_info(even)->>'counters_set')::int,
		  'the intersection of the halves holds fewer counters than either') FROM halves;

-- 16-19: duplicates and absent keys
SELECT ok(((bloom_empty(10, 0.01, 'counting') || 'x' || 'x') - 'x') @> 'x', 'a key added twice survives one removal');
SELECT ok(NOT (((bloom_empty(10, 0.01, 'counting') || 'x' || 'x') - 'x') - 'x') @> 'x', 'and not two');
SELECT throws_ok($$SELECT ((bloom_empty(10, 0.01, 'counting') || 'x') - 'x') - 'x'$$, '22023',
				 'cannot remove a key that is not in the bloom filter', 'a third removal is an error');
SELECT throws_ok($$SELECT bloom_agg('key-' || i, 1000, 0.01, 'blocked') - 'key-1' FROM generate_series(1, 10) i$$,
				 '0A000', 'cannot remove a key from a bloom filter of layout blocked', 'blocked filters do not remove');

-- 20-22: saturation: 40 adds of one key saturate its counters; 100 removals leave it
CREATE TEMP TABLE sat AS
SELECT (SELECT bloom_agg('s'::text, 10, 0.01, 'counting') FROM generate_series(1, 40)) AS f;
SELECT ok((bloom_info(f)->>'counters_saturated')::int > 0, 'counters saturate at 15') FROM sat;
CREATE FUNCTION pg_temp.remove_many(f bloomfilter, n int) RETURNS bloomfilter LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP f := f - 's'::text; END LOOP;
	RETURN f;
END $$;
SELECT ok(pg_temp.remove_many(f, 100) @> 's', 'a saturated key survives any number of removals') FROM sat;
SELECT is(bloom_info(pg_temp.remove_many(f, 100))->'counters_saturated', bloom_info(f)->'counters_saturated',
		  'saturated counters are never decremented') FROM sat;

-- 23-26: round trips: text, bytea, binary COPY (send/recv)
CREATE TEMP TABLE rt (id int, f bloomfilter);
INSERT INTO rt SELECT 1, whole FROM halves;
INSERT INTO rt SELECT 2, bloom_empty(1, 0.5, 'counting');
INSERT INTO rt SELECT 3, f FROM sat;
SELECT is((SELECT count(*) FROM rt WHERE f::text::bloomfilter = f), 3::bigint, 'text round trips');
SELECT is((SELECT count(*) FROM rt WHERE f::bytea::bloomfilter = f), 3::bigint, 'bytea round trips');
CREATE TEMP TABLE rt2 (LIKE rt);
DO $$
DECLARE
	f CONSTANT text := current_setting('data_directory') || '/bf_counting_rt.bin';
BEGIN
	EXECUTE format('COPY rt TO %L WITH (FORMAT binary)', f);
	EXECUTE format('COPY rt2 FROM %L WITH (FORMAT binary)', f);
END $$;
SELECT is((SELECT count(*) FROM rt JOIN rt2 USING (id) WHERE rt.f = rt2.f), 3::bigint,
		  'binary COPY (send/recv) round trips');
SELECT ok((SELECT bool_and(bloomfilter_send(f) = f::bytea) FROM rt), 'send gives the portable bytes');

-- 27-33: golden vectors.  bloom_empty(100, 0.01, 'counting'): m = 4608 bits
-- (1152 counters, 9 blocks of 128), k = 6.  'alice' (XXH3-64 of its UTF-8
-- bytes) takes counters 334, 309, 294, 294, 374, 366 (294 twice: counter 2);
-- 'bob' takes 60, 97, 116, 79, 83, 56.  Counter c is the low nibble of
-- payload byte c / 2 when c is even, the high one when odd.
SELECT is(substring(bloom_empty(100, 0.01, 'counting')::bytea FROM 1 FOR 64),
		  '\x424c4d46020203000600000001000000001200000000000064000000000000007b14ae47e17a843f'
		  '000000000000000000000000000000000000000000000000',
		  'header of bloom_empty(100, 0.01, ''counting''): family 2, layout 3, k 6, m 4608');
SELECT is(rtrim(encode(substring((bloom_empty(100, 0.01, 'counting') || 'alice' || 'bob' || 'bob')::bytea FROM 65), 'hex'), '0'),
		  '0000000000000000000000000000000000000000000000000000000002000200000000000000002000200000'
		  '0000000020000000000000000000020000000000000000000000000000000000000000000000000000000000'
		  '0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000'
		  '0000000000000000000000000000000200000000000010000000000000000000000000010000000000000000'
		  '000000000000000100000001',
		  'payload of alice, bob, bob: bob''s six counters at 2, alice''s at 1 and counter 294 at 2');
SELECT is(get_byte((bloom_empty(100, 0.01, 'counting') || 'alice')::bytea, 64 + 147), 2,
		  'counter 294 (even): low nibble of byte 147 holds 2');
SELECT is(get_byte((bloom_empty(100, 0.01, 'counting') || 'alice')::bytea, 64 + 154), 16,
		  'counter 309 (odd): high nibble of byte 154 holds 1');
SELECT is(octet_length(bloom_empty(100, 0.01, 'counting')::bytea), 64 + 576, 'size: header and m / 8 bytes');
SELECT is(bloom_empty(10, 0.1, 'counting')::text,
		  'version=2 layout=counting hashes=6 key_kind=none bits=512 capacity=10 target_fpr=0.1 added=0 data='
		  || repeat('A', 86) || '==', 'text form of an empty counting filter');
SELECT is(encode(substring(((bloom_empty(100, 0.01, 'counting') || 'alice') - 'alice')::bytea FROM 65), 'hex'),
		  repeat('00', 576), 'removing the only key clears every counter');

-- 34-35: a large stored (TOASTed) counting filter checked by single
-- statements, where a bit layout would be read in slices: read whole, and
-- every key found, absent keys mostly not
CREATE TEMP TABLE stored AS SELECT whole AS f FROM halves;
SELECT is((SELECT count(*) FROM generate_series(1, 2000) i
		   WHERE (SELECT f FROM stored) @> ('key-' || (i * 50))), 2000::bigint,
		  'a stored counting filter finds its keys from fresh call sites');
SELECT cmp_ok((SELECT count(*) FROM generate_series(1, 2000) i
			   WHERE (SELECT f FROM stored) @> ('absent-' || i)), '<', 100::bigint,
			  'and answers "no" for absent keys (about 1% "maybe")');

-- 36-39: an add and its removal are exact inverses, for every form of a key.
-- 300 random text keys, a third ending in blanks and a third longer than 63
-- bytes (multibyte characters at the cut), some added twice, and 200
-- integers, negative ones included (their oid form is only checked): after
-- every key is removed as often as it was added, in another order, every
-- counter is zero again; each removal before then keeps every key still
-- added found.
CREATE TEMP TABLE inv_keys AS
SELECT i, CASE i % 3
		  WHEN 0 THEN substr(md5(i::text), 1, 1 + i % 7) || repeat(' ', 1 + i % 3)
		  WHEN 1 THEN md5(i::text) || repeat('é', 20 + i % 30)
		  ELSE md5(i::text) END AS k,
	   1 + (i % 5 = 0)::int AS times
FROM generate_series(1, 300) i;
CREATE TEMP TABLE inv_f AS
SELECT bloom_add_all(bloom_empty(1000, 0.01, 'counting'),
					 ARRAY(SELECT k FROM inv_keys, generate_series(1, times) ORDER BY i)) AS f;
SELECT ok((SELECT bool_and(f @> k) FROM inv_f, inv_keys), 'inverse: every text key added is found');
DO $$
DECLARE
	r record;
	g bloomfilter := (SELECT f FROM inv_f);
BEGIN
	FOR r IN SELECT k FROM inv_keys, generate_series(1, times) ORDER BY md5(k || times) LOOP
		g := bloom_remove(g, r.k);
	END LOOP;
	UPDATE inv_f SET f = g;
END $$;
SELECT is((SELECT encode(substring(f::bytea FROM 65), 'hex') FROM inv_f),
		  (SELECT encode(substring(bloom_empty(1000, 0.01, 'counting')::bytea FROM 65), 'hex')),
		  'inverse: after removing every text key as often as it was added, every counter is zero');
CREATE TEMP TABLE inv_int AS
SELECT bloom_add_all(bloom_empty(500, 0.01, 'counting'),
					 ARRAY(SELECT (i * 7919 % 1000) - 500 FROM generate_series(1, 200) i)::int4[]) AS f;
SELECT ok((SELECT bool_and(f @> ((i * 7919 % 1000) - 500)::int4) FROM inv_int, generate_series(1, 200) i),
		  'inverse: every integer key added is found');
DO $$
DECLARE
	g bloomfilter := (SELECT f FROM inv_int);
BEGIN
	FOR i IN REVERSE 200..1 LOOP
		g := bloom_remove(g, ((i * 7919 % 1000) - 500)::int4);
	END LOOP;
	UPDATE inv_int SET f = g;
END $$;
SELECT is((SELECT encode(substring(f::bytea FROM 65), 'hex') FROM inv_int),
		  (SELECT encode(substring(bloom_empty(500, 0.01, 'counting')::bytea FROM 65), 'hex')),
		  'inverse: after removing every integer key, every counter is zero');

SELECT * FROM finish();
ROLLBACK;
