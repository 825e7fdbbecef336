--
-- cuckoo.sql — the cuckoofilter type over many keys: no false negatives for
-- every key kind (before and after removals), the measured false-positive
-- rate against the prediction and the target, the load reached before the
-- filter is full, a full add that changes nothing, removal and counts,
-- round trips, and golden vectors of the format derived independently by
-- test/reader/bloomfilter_reader.py.
--
BEGIN;
SELECT plan(33);

-- ck: i = 1..100,000; pg_temp.key_expr(kind): a key of each kind from i
\ir include/keys.sql

-- 1-10: 100,000 keys of each kind (boolean: 200 of them, 100 copies of each
-- value would not fit: 8 per key at most), all found; then 500 removed one
-- by one and every other key still found
CREATE FUNCTION pg_temp.no_false_negatives(kind text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	e text := pg_temp.key_expr(kind);
	n_keys int := CASE kind WHEN 'boolean' THEN 8 ELSE 100000 END;
	f cuckoofilter;
	missing bigint;
	missing_after bigint;
BEGIN
	EXECUTE format('SELECT cuckoo_agg(%s, 100000, 0.01) FROM ck WHERE i <= %s', e, n_keys) INTO f;
	EXECUTE format('SELECT count(*) FROM ck WHERE i <= %s AND NOT $1 @> (%s)', n_keys, e)
		INTO missing USING f;
	FOR n IN 1 .. least(500, n_keys / 200 + 1) LOOP
		EXECUTE format('SELECT cuckoo_remove($1, %s) FROM (SELECT $2 * 200 AS i) s', e)
			INTO f USING f, n;
	END LOOP;
	EXECUTE format('SELECT count(*) FROM ck WHERE i <= %s AND i %% 200 <> 0 AND NOT $1 @> (%s)', n_keys, e)
		INTO missing_after USING f;
	RETURN format('%s missing, %s missing after removals', missing, missing_after);
END $$;

SELECT is(pg_temp.no_false_negatives(k), '0 missing, 0 missing after removals',
		  'cuckoo/' || k || ': every key found, and the kept ones after removals')
FROM unnest('{integer,text,bytea,uuid,boolean,float,numeric,date,timestamp,timestamptz}'::text[]) k;

-- 11-16: measured rate at full capacity (95% load): within [0.8, 1.1] x the
-- prediction 1 - (1 - 1/(2^f - 1))^(8 load), and at most the target
CREATE TEMP TABLE fprs AS
SELECT p, f, (cuckoo_info(f)->>'estimated_fpr')::float8 AS predicted,
	   (SELECT count(*) FROM generate_series(1, 1000000) a WHERE f @> ('absent-' || a))::float8 / 1000000 AS measured
FROM (SELECT p, (SELECT cuckoo_agg('key-' || i, 100000, p) FROM ck) AS f
	  FROM unnest('{0.01,0.001,0.0001}'::float8[]) p) s;
SELECT ok(measured / predicted BETWEEN 0.8 AND 1.1,
		  format('cuckoo at %s%%: measured %s, %s x predicted', p * 100, measured, round((measured / predicted)::numeric, 3)))
FROM fprs ORDER BY p DESC;
SELECT ok(measured <= p * 1.1, format('cuckoo at %s%%: measured %s x target', p * 100, round((measured / p)::numeric, 3)))
FROM fprs ORDER BY p DESC;

-- 17-19: full only past 95% load; the refused add leaves the value as it was
CREATE FUNCTION pg_temp.fill(f cuckoofilter) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n int := 0;
	before bytea;
BEGIN
	LOOP
		before := f::bytea;
		f := f || ('more-' || n);
		n := n + 1;
	END LOOP;
EXCEPTION WHEN program_limit_exceeded THEN
	RETURN format('%s|%s|%s', (cuckoo_info(f)->>'load')::float8 >= 0.95, f::bytea = before,
				  (SELECT count(*) FROM generate_series(0, n - 1) i WHERE NOT f @> ('more-' || i)));
END $$;
SELECT is(split_part(pg_temp.fill(cuckoo_empty(2000, 0.01)), '|', 1), 't', 'full only at a load of 95% or more');
SELECT is(split_part(pg_temp.fill(cuckoo_empty(2000, 0.01)), '|', 2), 't', 'the refused add leaves the value unchanged');
SELECT is(split_part(pg_temp.fill(cuckoo_empty(2000, 0.01)), '|', 3), '0', 'and every key added before is found');

-- 20-23: duplicates, counts, removal of absent keys
SELECT is(cuckoo_count(cuckoo_empty(100) || 'x' || 'x' || 'x', 'x'), 3, 'count: three adds');
SELECT is(cuckoo_count((cuckoo_empty(100) || 'x' || 'x' || 'x') - 'x', 'x'), 2, 'count: one removal');
SELECT throws_ok($$SELECT ((cuckoo_empty(100) || 'x') - 'x') - 'x'$$, '22023',
				 'cannot remove a key that is not in the cuckoo filter', 'a second removal is an error');
SELECT throws_ok($$SELECT cuckoo_agg(i, 10, 0.01) FROM generate_series(1, 100) i$$, '54000',
				 'cuckoofilter is full', 'cuckoo_agg past the slots is an error');

-- 24-26: round trips (text, bytea, binary COPY)
CREATE TEMP TABLE rt (id int, f cuckoofilter);
INSERT INTO rt SELECT 1, f FROM fprs WHERE p = 0.01;
INSERT INTO rt SELECT 2, cuckoo_empty(1, 0.5);
INSERT INTO rt SELECT 3, cuckoo_empty(10) || 'a' || 'a';
SELECT is((SELECT count(*) FROM rt WHERE f::text::cuckoofilter::bytea = f::bytea), 3::bigint, 'text round trips');
SELECT is((SELECT count(*) FROM rt WHERE f::bytea::cuckoofilter::bytea = f::bytea), 3::bigint, 'bytea round trips');
CREATE TEMP TABLE rt2 (LIKE rt);
DO $$
DECLARE
	f CONSTANT text := current_setting('data_directory') || '/bf_cuckoo_rt.bin';
BEGIN
	EXECUTE format('COPY rt TO %L WITH (FORMAT binary)', f);
	EXECUTE format('COPY rt2 FROM %L WITH (FORMAT binary)', f);
END $$;
SELECT is((SELECT count(*) FROM rt JOIN rt2 USING (id) WHERE rt.f::bytea = rt2.f::bytea), 3::bigint,
		  'binary COPY (send/recv) round trips');

-- 27-31: golden vectors.  cuckoo_empty(100, 0.01): f = 10 bits, 27 buckets
-- (ceil(100 / 3.8)), 108 slots, 135 bytes.  'alice': XXH3-64
-- 0x4da10dd61a0116b0, fingerprint 0x2b0 = 688 (the low 10 bits), bucket
-- i1 = (0x4da10dd6 * 27) >> 32 = 8, i2 = 24; 'bob': 0x1403c0c40f49b8e5,
-- fingerprint 229, buckets 2 and 12.  Slot j holds bits 10j .. 10j + 9.
SELECT is(substring(cuckoo_empty(100, 0.01)::bytea FROM 1 FOR 64),
		  '\x424c4d46020301000a000000010000001b0000000000000064000000000000007b14ae47e17a843f'
		  '000000000000000000000000000000000000000000000000',
		  'header of cuckoo_empty(100, 0.01): family 3, layout 1, f 10, 27 buckets');
SELECT is(encode(substring((cuckoo_empty(100, 0.01) || 'alice' || 'bob' || 'bob')::bytea FROM 65), 'hex'),
		  '00000000000000000000e59403000000000000000000000000000000000000000000000000000000b002'
		  || repeat('0', 186),
		  'payload: bob in slots 8 and 9 (bucket 2), alice in slot 32 (bucket 8)');
SELECT is(octet_length(cuckoo_empty(100, 0.01)::bytea), 64 + 135, 'size: header and ceil(108 * 10 / 8) bytes');
SELECT is((cuckoo_empty(10) || 'a')::text,
		  'version=2 family=cuckoo fingerprint_bits=10 key_kind=text buckets=3 capacity=10 target_fpr=0.01 count=1 data=AAAAAAAAAAAAAB8CAAAA',
		  'text form');
SELECT is(cuckoo_count(cuckoo_empty(100, 0.01) || 'alice' || 'bob' || 'bob', 'bob'), 2, 'bob twice');

-- 32-33: mutated values (bit flips, byte overwrites, truncations, header
-- fields) through the bytea cast and text input: each fails cleanly with the
-- path's SQLSTATE, or is accepted and round-trips exactly
SELECT setseed(0.2718);
CREATE FUNCTION pg_temp.mutate_bytes(b bytea) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
	r float8 := random();
	off int := floor(random() * octet_length(b))::int;
BEGIN
	IF r < 0.4 THEN
		RETURN set_byte(b, off, get_byte(b, off) # (1 << floor(random() * 8)::int));
	ELSIF r < 0.6 THEN
		RETURN set_byte(b, floor(random() * 64)::int, floor(random() * 256)::int);
	ELSIF r < 0.75 THEN
		RETURN substring(b FROM 1 FOR floor(random() * octet_length(b))::int);
	ELSIF r < 0.85 THEN
		RETURN b || '\x00'::bytea;
	END IF;
	RETURN set_byte(b, 64 + floor(random() * (octet_length(b) - 64))::int, floor(random() * 256)::int);
END $$;
CREATE FUNCTION pg_temp.mutate_text(t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r float8 := random();
	pos int := 1 + floor(random() * length(t))::int;
	ch text := substr('0123456789=abcdefxyz+/ -.e', 1 + floor(random() * 26)::int, 1);
BEGIN
	IF r < 0.5 THEN
		RETURN overlay(t PLACING ch FROM pos FOR 1);
	ELSIF r < 0.75 THEN
		RETURN overlay(t PLACING ch FROM pos FOR 0);
	END IF;
	RETURN overlay(t PLACING '' FROM pos FOR 1);
END $$;
CREATE FUNCTION pg_temp.fuzz(kind text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	bases cuckoofilter[] := ARRAY[cuckoo_empty(1, 0.5), cuckoo_empty(10) || 'a' || 'b',
								  (SELECT cuckoo_agg(i, 40, 1e-6) FROM generate_series(1, 40) i),
								  (SELECT cuckoo_agg('k' || i, 100, 0.3) FROM generate_series(1, 90) i)];
	base cuckoofilter;
	b bytea;
	t text;
	v cuckoofilter;
	ok int := 0;
	refused int := 0;
	bad text[] := '{}';
BEGIN
	FOR i IN 1 .. n LOOP
		base := bases[1 + (i % 4)];
		BEGIN
			IF kind = 'bytea' THEN
				b := pg_temp.mutate_bytes(base::bytea);
				v := b::cuckoofilter;
				IF v::bytea <> b OR v::text::cuckoofilter::bytea <> b THEN
					bad := bad || ('accepted, no round trip: ' || encode(b, 'hex'));
				END IF;
			ELSE
				t := pg_temp.mutate_text(base::text);
				v := t::cuckoofilter;
				IF v::text <> t OR v::bytea::cuckoofilter::text <> t THEN
					bad := bad || ('accepted, no round trip: ' || t);
				END IF;
			END IF;
			PERFORM cuckoo_info(v), v @> 'x'::text;
			ok := ok + 1;
		EXCEPTION
			WHEN invalid_binary_representation OR invalid_text_representation OR program_limit_exceeded THEN
				refused := refused + 1;
			WHEN datatype_mismatch THEN
				ok := ok + 1;		-- a valid filter of another key kind than text
			WHEN OTHERS THEN
				bad := bad || (SQLSTATE || ' ' || SQLERRM);
		END;
	END LOOP;
	RAISE NOTICE '%: % accepted, % refused', kind, ok, refused;
	RETURN array_to_string(bad[1:5], '; ');
END $$;
SELECT is(pg_temp.fuzz('bytea', 2000), '', '2,000 mutated values through the bytea cast: clean errors or exact round trips');
SELECT is(pg_temp.fuzz('text', 2000), '', '2,000 mutated texts through text input: clean errors or exact round trips');

SELECT * FROM finish();
ROLLBACK;
