--
-- fuzz_sql.sql — hostile input at the SQL level: ≥ 10,000 mutated values of
-- valid filters go through text input (::bloomfilter of text), the bytea cast
-- (bytea::bloomfilter) and recv (binary COPY FROM a file).  Each must either
-- fail cleanly with the SQLSTATE of its path (text: 22P02 or 54000; bytea and
-- recv: 22P03), or succeed with a value that round-trips exactly:
--
--	text in:   v::text = the input (text in reproduces it byte for byte)
--	bytea in:  v::bytea = the input bytes
--	recv:      the same outcome as the bytea cast (same validation), equal value
--	and for every accepted v: v::text::bloomfilter = v, v::bytea::bloomfilter = v,
--	bloom_info, bloom_cardinality and bloom_fpr work (estimates finite, fpr in
--	[0, 1]), v | v = v except for added (counting: (v | v) & v = v), and a key
--	added to v is found.
--
-- Mutations (deterministic: setseed): bit flips and byte overwrites in the
-- header and anywhere, header fields set to edge values (scalable values:
-- also growth, ratio, the layers and a layer's header), truncations,
-- extensions, resizes that keep the length consistent (so that some random
-- values are accepted); for text, character replacements, insertions and
-- deletions, field values replaced by edge and non-canonical values, payload
-- resizes.  The libFuzzer harnesses in test/fuzz go much deeper on the
-- parsers; this checks the SQL layer around them: palloc sizes, error codes,
-- and that the server survives (it does if this file finishes).
--
-- recv is driven through a file in the data directory (COPY TO/FROM a file:
-- the session must be superuser), for every fourth bytea mutation.
--
BEGIN;
SELECT plan(9);
SELECT setseed(0.4242);

CREATE TEMP TABLE fz_base (id int PRIMARY KEY, bf bloomfilter NOT NULL);
INSERT INTO fz_base
SELECT row_number() OVER (), bf FROM (
	SELECT bloom_empty(1, 0.5, l) AS bf FROM unnest('{blocked,classic,counting}'::text[]) l
	UNION ALL
	SELECT bloom_empty(100, 0.01, l) FROM unnest('{blocked,classic,counting}'::text[]) l
	UNION ALL
	SELECT (SELECT bloom_agg('k' || i, 50, 0.01, l) FROM generate_series(1, 30) i)
	FROM unnest('{blocked,classic,counting}'::text[]) l
	UNION ALL
	SELECT (SELECT bloom_agg(i, 20, 1e-6, l) FROM generate_series(1, 25) i)
	FROM unnest('{blocked,classic,counting}'::text[]) l
	UNION ALL
	SELECT (SELECT bloom_agg(('\x' || lpad(to_hex(i), 4, '0'))::bytea, 10, 0.3, l)
			FROM generate_series(1, 5) i)
	FROM unnest('{blocked,classic,counting}'::text[]) l
	UNION ALL					-- scalable (family 4): one layer, and grown
	SELECT bloom_empty_scalable(10, 0.1)
	UNION ALL
	SELECT bloom_add_all(bloom_empty_scalable(4, 0.01), ARRAY(SELECT 'k' || i FROM generate_series(1, 40) i))
	UNION ALL
	SELECT bloom_add_all(bloom_empty_scalable(3, 0.05, 3, 0.25, 'classic'), ARRAY(SELECT generate_series(1, 30)))
) s;

-- ---------------------------------------------------------------- helpers

CREATE FUNCTION pg_temp.rnd(n int) RETURNS int LANGUAGE sql VOLATILE
AS $$ SELECT floor(random() * n)::int $$;

CREATE FUNCTION pg_temp.rand_bytes(n int) RETURNS bytea LANGUAGE sql VOLATILE
AS $$
	SELECT coalesce(decode(string_agg(lpad(to_hex(floor(random() * 256)::int), 2, '0'), ''), 'hex'), '')
	FROM generate_series(1, n)
$$;

-- base64 without the line breaks encode() inserts
CREATE FUNCTION pg_temp.b64(b bytea) RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT translate(encode(b, 'base64'), E'\n', '') $$;

-- n (0 <= n < 2^64) as nbytes little-endian bytes
CREATE FUNCTION pg_temp.le(v numeric, nbytes int) RETURNS bytea LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	r bytea := '';
BEGIN
	FOR i IN 1 .. nbytes LOOP
		r := r || decode(lpad(to_hex(mod(v, 256)::int), 2, '0'), 'hex');
		v := div(v, 256);
	END LOOP;
	RETURN r;
END $$;

-- a float8 as little-endian IEEE-754 bytes
CREATE FUNCTION pg_temp.f64le(d float8) RETURNS bytea LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
	be bytea := float8send(d);
	r bytea := '';
BEGIN
	FOR i IN REVERSE 7 .. 0 LOOP
		r := r || substring(be FROM i + 1 FOR 1);
	END LOOP;
	RETURN r;
END $$;

CREATE FUNCTION pg_temp.pick(a text[]) RETURNS text LANGUAGE sql VOLATILE
AS $$ SELECT a[1 + floor(random() * cardinality(a))::int] $$;

-- ------------------------------------------------------- byte mutations

CREATE FUNCTION pg_temp.mutate_bytes(b bytea) RETURNS bytea LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	n int;
	off int;
	len int;
	field int;
	payload int;
BEGIN
	FOR step IN 1 .. 1 + pg_temp.rnd(3) LOOP
		len := length(b);
		CASE pg_temp.rnd(8)
		WHEN 0 THEN				-- flip one bit, in the header half the time
			IF len > 0 THEN
				off := CASE WHEN random() < 0.5 THEN pg_temp.rnd(least(len, 64))
							ELSE pg_temp.rnd(len) END;
				off := off * 8 + pg_temp.rnd(8);
				b := set_bit(b, off, 1 - get_bit(b, off));
			END IF;
		WHEN 1 THEN				-- overwrite a byte at a header offset or anywhere
			IF len > 0 THEN
				off := CASE WHEN random() < 0.6 THEN pg_temp.rnd(least(len, 64))
							ELSE pg_temp.rnd(len) END;
				b := set_byte(b, off, (ARRAY[0, 1, 2, 3, 10, 11, 64, 65, 127, 128, 255,
											  pg_temp.rnd(256)])[1 + pg_temp.rnd(12)]);
			END IF;
		WHEN 2 THEN				-- a header field set to an edge value
			IF len >= 64 THEN
				field := pg_temp.rnd(12);
				IF field = 0 THEN		-- version, family, layout, key kind
					b := set_byte(b, 4 + pg_temp.rnd(4), (ARRAY[0, 1, 2, 3, 10, 11, 255])[1 + pg_temp.rnd(7)]);
				ELSIF field = 1 THEN	-- hashes
					b := overlay(b PLACING pg_temp.le((ARRAY[0, 1, 7, 64, 65, 256, 65535,
						pg_temp.rnd(65536)])[1 + pg_temp.rnd(8)], 2) FROM 9);
				ELSIF field = 2 THEN	-- flags
					b := overlay(b PLACING pg_temp.le((ARRAY[0, 1, 32768])[1 + pg_temp.rnd(3)], 2) FROM 11);
				ELSIF field = 3 THEN	-- layers
					b := overlay(b PLACING pg_temp.le((ARRAY[0, 1, 2, 4294967295])[1 + pg_temp.rnd(4)], 4) FROM 13);
				ELSIF field = 4 THEN	-- bit count
					b := overlay(b PLACING pg_temp.le((ARRAY[0, 1, 64, 448, 512, 1024,
						(len - 64) * 8, (len - 64) * 8 + 512, (len - 64) * 8 - 64,
						2305843009213693952, 9223372036854775808, 18446744073709551552,
						18446744073709551104, 18446744073709551615,
						pg_temp.rnd(2147483647)::numeric * 64])[1 + pg_temp.rnd(15)], 8) FROM 17);
				ELSIF field = 5 THEN	-- capacity
					b := overlay(b PLACING pg_temp.le((ARRAY[0, 1, 100, 18446744073709551615,
						pg_temp.rnd(2147483647)])[1 + pg_temp.rnd(5)], 8) FROM 25);
				ELSIF field = 6 THEN	-- target rate
					b := overlay(b PLACING pg_temp.f64le((ARRAY['0', '-0', '1', '0.5', '1e-300',
						'4.9406564584124654e-324', 'NaN', 'Infinity', '-Infinity', '-0.5',
						'0.9999999999999999', '2', random()::text])[1 + pg_temp.rnd(13)]::float8) FROM 33);
				ELSIF field = 7 THEN	-- added
					b := overlay(b PLACING pg_temp.le((ARRAY[0, 1, 18446744073709551615,
						pg_temp.rnd(2147483647)])[1 + pg_temp.rnd(4)], 8) FROM 41);
				ELSIF field = 8 THEN	-- a reserved byte (scalable: growth, ratio)
					b := set_byte(b, 48 + pg_temp.rnd(16), 1 + pg_temp.rnd(255));
				ELSIF field = 9 THEN	-- scalable: growth
					b := overlay(b PLACING pg_temp.le((ARRAY[0, 1, 2, 3, 100, 101, 4294967295])[1 + pg_temp.rnd(7)], 4) FROM 49);
				ELSIF field = 10 THEN	-- scalable: ratio
					b := overlay(b PLACING pg_temp.f64le((ARRAY['0', '1', '0.5', '1e-300', 'NaN', '-0.5',
						'0.9999999999999999', random()::text])[1 + pg_temp.rnd(8)]::float8) FROM 57);
				ELSIF len >= 128 THEN	-- scalable: a field of the first layer's header
					b := set_byte(b, 64 + pg_temp.rnd(64), (ARRAY[0, 1, 2, 4, 255, pg_temp.rnd(256)])[1 + pg_temp.rnd(6)]);
				END IF;
			END IF;
		WHEN 3 THEN				-- truncate
			b := substring(b FROM 1 FOR CASE WHEN random() < 0.3 THEN pg_temp.rnd(65)
											ELSE pg_temp.rnd(len + 1) END);
		WHEN 4 THEN				-- extend
			b := b || CASE WHEN random() < 0.5 THEN pg_temp.rand_bytes(1 + pg_temp.rnd(80))
						   ELSE decode(repeat('00', (ARRAY[1, 8, 63, 64, 128])[1 + pg_temp.rnd(5)]), 'hex') END;
		WHEN 5, 6 THEN			-- resize with a consistent bit count: often valid
			IF len >= 64 THEN
				IF get_byte(b, 6) = 2 THEN
					payload := 8 * (1 + pg_temp.rnd(40));		-- classic: 64-bit units
				ELSE
					payload := 64 * (1 + pg_temp.rnd(6));		-- blocked: 512-bit blocks
				END IF;
				b := substring(b FROM 1 FOR 16) || pg_temp.le(payload * 8, 8)
					 || substring(b FROM 25 FOR 40)
					 || substring(substring(b FROM 65) || pg_temp.rand_bytes(payload) FROM 1 FOR payload);
			END IF;
		ELSE					-- random bits in the payload: valid
			IF len > 64 THEN
				n := 1 + pg_temp.rnd(4);
				FOR i IN 1 .. n LOOP
					off := 64 + pg_temp.rnd(len - 64);
					b := set_byte(b, off, pg_temp.rnd(256));
				END LOOP;
			END IF;
		END CASE;
	END LOOP;
	RETURN b;
END $$;

-- ------------------------------------------------------- text mutations

CREATE FUNCTION pg_temp.mutate_text(t text) RETURNS text LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	alphabet CONSTANT text := 'AZaz09+/= .-e_xé' || chr(9) || chr(127);
	len int;
	pos int;
	field text;
	val text;
	bits bigint;
	payload int;
	fields CONSTANT text[] := '{version,layout,hashes,key_kind,bits,capacity,target_fpr,added,data,family,layers,growth,ratio}';
BEGIN
	FOR step IN 1 .. 1 + pg_temp.rnd(2) LOOP
		len := length(t);
		CASE pg_temp.rnd(9)
		WHEN 0 THEN				-- replace a character
			IF len > 0 THEN
				pos := 1 + pg_temp.rnd(len);
				t := overlay(t PLACING substr(alphabet, 1 + pg_temp.rnd(length(alphabet)), 1) FROM pos FOR 1);
			END IF;
		WHEN 1 THEN				-- insert a character
			pos := 1 + pg_temp.rnd(len + 1);
			t := overlay(t PLACING substr(alphabet, 1 + pg_temp.rnd(length(alphabet)), 1) FROM pos FOR 0);
		WHEN 2 THEN				-- delete a character
			IF len > 0 THEN
				t := overlay(t PLACING '' FROM 1 + pg_temp.rnd(len) FOR 1);
			END IF;
		WHEN 3 THEN				-- truncate or append
			IF random() < 0.5 THEN
				t := substr(t, 1, pg_temp.rnd(len + 1));
			ELSE
				t := t || pg_temp.pick('{" ", "=", "A", "AAAA", "==", " x=1", "é"}');
			END IF;
		WHEN 4, 5 THEN			-- a field set to an edge or non-canonical value
			field := fields[1 + pg_temp.rnd(13)];
			val := CASE field
				WHEN 'version' THEN pg_temp.pick('{0,2,01,"",+1,18446744073709551617}')
				WHEN 'layout' THEN pg_temp.pick('{blocked,classic,Blocked,"",none,classic2}')
				WHEN 'hashes' THEN pg_temp.pick('{0,1,7,64,65,65536,007,-1,18446744073709551616}')
				WHEN 'key_kind' THEN pg_temp.pick('{none,integer,text,bytea,uuid,boolean,float,numeric,date,timestamp,timestamptz,Text,"",unknown}')
				WHEN 'bits' THEN pg_temp.pick('{0,64,512,1000,1024,00,18446744073709551104,18446744073709551615,18446744073709551616,2305843009213693952}')
				WHEN 'capacity' THEN pg_temp.pick('{0,1,18446744073709551615,18446744073709551616,1e3}')
				WHEN 'target_fpr' THEN pg_temp.pick(ARRAY['0.01', '0.010', '1e-05', '1e-5', '0', '1', 'nan', 'inf',
					'-0', '0.5', '4.9406564584124654e-324', '5e-324', '.01', '1e+00', '0x1p-3',
					random()::text, (random() / 1000)::text])
				WHEN 'added' THEN pg_temp.pick('{0,18446744073709551615,18446744073709551616,-1,01}')
				WHEN 'family' THEN pg_temp.pick('{scalable,bloom,cuckoo,"",Scalable,4}')
				WHEN 'layers' THEN pg_temp.pick('{0,1,2,3,64,65,4294967296,01}')
				WHEN 'growth' THEN pg_temp.pick('{0,1,2,3,100,101,02,4294967297}')
				WHEN 'ratio' THEN pg_temp.pick(ARRAY['0.5', '0.50', '0', '1', 'nan', '0.25', '1e-300', random()::text])
				ELSE pg_temp.pick('{"",=,AAAA,AAA=,AA==,A===}')
			END;
			t := regexp_replace(t, '(^| )' || field || '=[^ ]*', '\1' || field || '=' || val);
		WHEN 6 THEN				-- resize with a consistent payload: often valid
			bits := CASE WHEN t LIKE '%layout=classic%' THEN 64 * (1 + pg_temp.rnd(40))
						 ELSE 512 * (1 + pg_temp.rnd(6)) END;
			t := regexp_replace(regexp_replace(t, ' bits=[^ ]*', ' bits=' || bits),
								' data=.*$', ' data=' || pg_temp.b64(pg_temp.rand_bytes((bits / 8)::int)));
		ELSE					-- a base64 character of the payload changed: mostly valid
			pos := strpos(t, ' data=');
			IF pos > 0 AND len > pos + 6 THEN
				pos := pos + 6 + pg_temp.rnd(len - pos - 5);
				t := overlay(t PLACING substr('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 1 + pg_temp.rnd(64), 1)
							 FROM pos FOR 1);
			END IF;
		END CASE;
	END LOOP;
	RETURN t;
END $$;

-- ------------------------------------------------------------- checks

-- Checks on an accepted value; '' if all hold, else what failed.
CREATE FUNCTION pg_temp.check_value(v bloomfilter) RETURNS text LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	info jsonb := bloom_info(v);
	card float8 := bloom_cardinality(v);
	fpr float8 := bloom_fpr(v);
	kind text := info->>'key_kind';
BEGIN
	IF v::text::bloomfilter <> v THEN RETURN 'v::text::bloomfilter <> v'; END IF;
	IF v::bytea::bloomfilter <> v THEN RETURN 'v::bytea::bloomfilter <> v'; END IF;
	IF info IS NULL OR (info->>'bytes')::bigint <> length(v::bytea) THEN RETURN 'bloom_info'; END IF;
	IF card IS NULL OR card IN ('NaN', 'Infinity') OR card < 0 THEN RETURN 'bloom_cardinality ' || card; END IF;
	IF fpr IS NULL OR NOT (fpr BETWEEN 0 AND 1) THEN RETURN 'bloom_fpr ' || fpr; END IF;
	IF info->>'family' = 'scalable' THEN
		-- scalable: the union of a filter with itself sets no new bit in any
		-- layer; an add may need a layer that cannot be made (54000)
		IF (SELECT array_agg(l->'bits_set') FROM jsonb_array_elements(bloom_info(v | v)->'layers') l)
		   IS DISTINCT FROM (SELECT array_agg(l->'bits_set') FROM jsonb_array_elements(info->'layers') l) THEN
			RETURN 'v | v';
		END IF;
		BEGIN
			IF kind IN ('none', 'text') AND NOT bloom_add(v, 'fz'::text) @> 'fz'::text THEN
				RETURN 'text key added and not found';
			END IF;
			IF kind = 'integer' AND NOT bloom_add(v, 42) @> 42 THEN
				RETURN 'integer key added and not found';
			END IF;
		EXCEPTION WHEN program_limit_exceeded THEN
			NULL;
		END;
		RETURN '';
	END IF;
	IF bloom_info(v)->>'layout' = 'counting' THEN
		-- counting: the union sums counters, the intersection takes the
		-- minimum; both write format version 2 (= compares bytes, version too)
		IF overlay(((v | v) & v)::bytea PLACING '\x02'::bytea FROM 5 FOR 1)
		   <> overlay(v::bytea PLACING '\x02'::bytea FROM 5 FOR 1) THEN
			RETURN '(v | v) & v';
		END IF;
	ELSIF substring((v | v)::bytea FROM 65) <> substring(v::bytea FROM 65) THEN
		RETURN 'v | v';
	END IF;
	IF kind IN ('none', 'text') AND NOT bloom_add(v, 'fz'::text) @> 'fz'::text THEN
		RETURN 'text key added and not found';
	END IF;
	IF kind = 'integer' AND NOT bloom_add(v, 42) @> 42 THEN
		RETURN 'integer key added and not found';
	END IF;
	RETURN '';
END $$;

-- Text input: 'ok', 'err <sqlstate>' (expected), or 'UNEXPECTED ...'.
CREATE FUNCTION pg_temp.try_text(t text) RETURNS text LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v bloomfilter;
	bad text;
BEGIN
	BEGIN
		v := t::bloomfilter;
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE IN ('22P02', '54000') THEN
			RETURN 'err ' || SQLSTATE;
		END IF;
		RETURN 'UNEXPECTED text ' || SQLSTATE || ': ' || SQLERRM || ' <- ' || left(t, 200);
	END;
	IF v::text IS DISTINCT FROM t THEN
		RETURN 'UNEXPECTED text in -> out differs: ' || left(t, 200);
	END IF;
	BEGIN
		bad := pg_temp.check_value(v);
	EXCEPTION WHEN OTHERS THEN
		bad := SQLSTATE || ': ' || SQLERRM;
	END;
	IF bad <> '' THEN
		RETURN 'UNEXPECTED text accepted, ' || bad || ' <- ' || left(t, 200);
	END IF;
	RETURN 'ok';
END $$;

-- The bytea cast, and recv (through binary COPY) when with_recv.
CREATE FUNCTION pg_temp.try_bytea(b bytea, with_recv bool) RETURNS text LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	v bloomfilter;
	r bloomfilter;
	outcome text;
	recv_outcome text;
	bad text;
	f CONSTANT text := current_setting('data_directory') || '/bf_fuzz_recv.bin';
BEGIN
	BEGIN
		v := b::bloomfilter;
		outcome := 'ok';
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> '22P03' THEN
			RETURN 'UNEXPECTED bytea ' || SQLSTATE || ': ' || SQLERRM || ' <- ' || left(encode(b, 'hex'), 200);
		END IF;
		outcome := 'err ' || SQLSTATE;
	END;

	IF with_recv THEN
		-- a binary COPY field of a bytea is its bytes: what recv reads
		EXECUTE format('COPY (SELECT %L::bytea) TO %L (FORMAT binary)', b, f);
		TRUNCATE fz_recv;
		BEGIN
			EXECUTE format('COPY fz_recv FROM %L (FORMAT binary)', f);
			recv_outcome := 'ok';
			SELECT bf INTO r FROM fz_recv;
		EXCEPTION WHEN OTHERS THEN
			recv_outcome := 'err ' || SQLSTATE;
		END;
		IF recv_outcome <> outcome THEN
			RETURN 'UNEXPECTED recv gives ' || recv_outcome || ', the bytea cast ' || outcome
				|| ' <- ' || left(encode(b, 'hex'), 200);
		END IF;
		IF outcome = 'ok' AND r::bytea <> b THEN
			RETURN 'UNEXPECTED recv value differs <- ' || left(encode(b, 'hex'), 200);
		END IF;
	END IF;

	IF outcome <> 'ok' THEN
		RETURN outcome;
	END IF;
	IF v::bytea <> b THEN
		RETURN 'UNEXPECTED bytea in -> out differs <- ' || left(encode(b, 'hex'), 200);
	END IF;
	BEGIN
		bad := pg_temp.check_value(v);
	EXCEPTION WHEN OTHERS THEN
		bad := SQLSTATE || ': ' || SQLERRM;
	END;
	IF bad <> '' THEN
		RETURN 'UNEXPECTED bytea accepted, ' || bad || ' <- ' || left(encode(b, 'hex'), 200);
	END IF;
	RETURN 'ok';
END $$;

CREATE TEMP TABLE fz_recv (bf bloomfilter);

-- ---------------------------------------------------------------- run

CREATE TEMP TABLE fz_result (path text, outcome text);

DO $$
DECLARE
	bases bytea[];
	texts text[];
	nb int;
	b bytea;
	res text[] := '{}';
	paths text[] := '{}';
BEGIN
	SELECT array_agg(bf::bytea ORDER BY id), array_agg(bf::text ORDER BY id)
	INTO bases, texts FROM fz_base;
	nb := cardinality(bases);
	FOR i IN 1 .. 6000 LOOP
		b := pg_temp.mutate_bytes(bases[1 + (i % nb)]);
		paths := paths || CASE WHEN i % 4 = 0 THEN 'bytea+recv' ELSE 'bytea' END;
		res := res || pg_temp.try_bytea(b, i % 4 = 0);
	END LOOP;
	FOR i IN 1 .. 6000 LOOP
		paths := paths || 'text'::text;
		res := res || pg_temp.try_text(pg_temp.mutate_text(texts[1 + (i % nb)]));
	END LOOP;
	INSERT INTO fz_result SELECT * FROM unnest(paths, res);
END $$;

-- ------------------------------------------------------------- verdict

SELECT diag(path || ': ' || string_agg(outcome || ' ' || n, ', ' ORDER BY outcome))
FROM (SELECT path, CASE WHEN outcome LIKE 'UNEXPECTED%' THEN 'UNEXPECTED' ELSE outcome END AS outcome,
			 count(*) AS n
	  FROM fz_result GROUP BY 1, 2) s
GROUP BY path ORDER BY path;

SELECT cmp_ok(count(*), '>=', 10000::bigint, 'at least 10,000 mutated values were tried')
FROM fz_result;

SELECT is(coalesce(array_agg(outcome) FILTER (WHERE outcome LIKE 'UNEXPECTED%'), '{}'),
		  '{}'::text[], 'text input: every mutated value fails with 22P02/54000 or round-trips exactly')
FROM fz_result WHERE path = 'text';

SELECT is(coalesce(array_agg(outcome) FILTER (WHERE outcome LIKE 'UNEXPECTED%'), '{}'),
		  '{}'::text[], 'bytea cast: every mutated value fails with 22P03 or round-trips exactly')
FROM fz_result WHERE path LIKE 'bytea%';

SELECT cmp_ok(count(*), '>=', 1000::bigint,
			  'recv (binary COPY): ≥ 1,000 values, each with the outcome and value of the bytea cast')
FROM fz_result WHERE path = 'bytea+recv' AND outcome NOT LIKE 'UNEXPECTED%';

-- Both outcomes must be common, or the mutations test little.
SELECT cmp_ok(count(*) FILTER (WHERE outcome = 'ok'), '>=', 500::bigint,
			  'text input: ≥ 500 mutated values accepted (and round-tripped)')
FROM fz_result WHERE path = 'text';
SELECT cmp_ok(count(*) FILTER (WHERE outcome LIKE 'err%'), '>=', 2000::bigint,
			  'text input: ≥ 2,000 mutated values refused')
FROM fz_result WHERE path = 'text';
SELECT cmp_ok(count(*) FILTER (WHERE outcome = 'ok'), '>=', 500::bigint,
			  'bytea cast: ≥ 500 mutated values accepted (and round-tripped)')
FROM fz_result WHERE path LIKE 'bytea%';
SELECT cmp_ok(count(*) FILTER (WHERE outcome LIKE 'err%'), '>=', 2000::bigint,
			  'bytea cast: ≥ 2,000 mutated values refused')
FROM fz_result WHERE path LIKE 'bytea%';

SELECT pass('the server survived every mutated value');

SELECT * FROM finish();
ROLLBACK;
