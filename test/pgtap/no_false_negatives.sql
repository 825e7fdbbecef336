--
-- no_false_negatives.sql — the invariant: every key that was added is found.
--
-- For each key kind (integer, text, bytea, uuid) and both layouts, about
-- 100,000 deterministic keys are added through bloom_agg and bloom_add_all and
-- checked with @>, <@, bloom_contains and bloom_contains_all, against the
-- filter held in memory, stored in a table (TOASTed, the cached/sliced detoast
-- path) and looked up one key per statement (a fresh call site each time).
-- A smaller set is added by bloom_add / || in a PL/pgSQL loop (the expanded
-- object path).  Integer keys are mixed int2/int4/int8 and must be found
-- whatever width they are checked with; text keys are also checked as
-- varchar, bpchar and name.  Also: 50 different stored filters checked at one
-- call site, bloom_agg as a running window aggregate and per group in a
-- spilling hash aggregate.  Every count of misses must be 0.
--
-- Tests: 4 (many stored filters) + 4 (window, groups) + 5 (storage forms)
-- + 64 (per kind and layout) + 32 (loops) + 16 (integer widths)
-- + 10 (text types) + 2 (|| text).
--
BEGIN;
SELECT plan(137);

DO $$ BEGIN PERFORM setseed(0.4242); END $$;

--
-- Keys.  i numbers the keys; w (integers only) is the narrowest integer type
-- that holds the key.
--
CREATE TEMP TABLE nfn_int AS
SELECT i, k,
	   CASE WHEN k BETWEEN -32768 AND 32767 THEN 'int2'
			WHEN k BETWEEN -2147483648 AND 2147483647 THEN 'int4'
			ELSE 'int8' END AS w
FROM (
	SELECT i,
		   CASE i % 3
			   WHEN 0 THEN floor(random() * 65536)::int8 - 32768
			   WHEN 1 THEN floor(random() * 4294967296)::int8 - 2147483648
			   ELSE (floor(random() * 4294967296)::int8 - 2147483648) * 4294967296
					+ floor(random() * 4294967296)::int8
		   END AS k
	FROM generate_series(1, 100000) AS i
	UNION ALL
	SELECT 100000 + o, x
	FROM unnest(ARRAY[0, 1, -1, 255, 256, -32768, 32767, -32769, 32768,
					  -2147483648, 2147483647, -2147483649, 2147483648,
					  -9223372036854775808, 9223372036854775807]::int8[])
		 WITH ORDINALITY AS u(x, o)
) s;

CREATE TEMP TABLE nfn_text AS
SELECT i,
	   CASE i % 8
		   WHEN 0 THEN i::text
		   WHEN 1 THEN 'ключ-' || i
		   WHEN 2 THEN '鍵' || i
		   WHEN 3 THEN '🔑' || i || '🗝️'
		   WHEN 4 THEN md5(i::text)
		   WHEN 5 THEN repeat('é', i % 40) || i || repeat(' ', i % 3)
		   WHEN 6 THEN chr(19968 + i % 20000) || chr(128512 + i % 80) || i
		   ELSE ' ' || i || E'\t'
	   END AS k
FROM generate_series(1, 100000) AS i
UNION ALL
SELECT 100000 + o, x
FROM unnest(ARRAY['', ' ', '  ', 'ключ', '鍵', '🔑', '👩‍👩‍👧', 'a', 'A'])
	 WITH ORDINALITY AS u(x, o)
UNION ALL	-- long, compressible keys: stored compressed in the table
SELECT 100100 + i, repeat('ключ', 800) || i FROM generate_series(1, 100) AS i
UNION ALL
SELECT 100200 + i, repeat(md5(i::text), 100) FROM generate_series(1, 100) AS i;

CREATE TEMP TABLE nfn_bytea AS
SELECT i,
	   substr(sha256(int8send(i)) || sha256(int8send(-i)) || sha512(int8send(i)),
			  1, (i * 7919) % 129) AS k		-- 0 .. 128 bytes
FROM generate_series(1, 100000) AS i
UNION ALL
SELECT 100000 + o, x
FROM unnest(ARRAY['\x'::bytea, '\x00', '\x0000', '\xff', '\x00000000000000000000'])
	 WITH ORDINALITY AS u(x, o)
UNION ALL	-- long, compressible keys
SELECT 100100 + i, decode(repeat('ab', 3000), 'hex') || int8send(i)
FROM generate_series(1, 100) AS i;

CREATE TEMP TABLE nfn_uuid AS
SELECT i, md5('uuid' || i)::uuid AS k
FROM generate_series(1, 100000) AS i
UNION ALL
SELECT 100000 + o, x
FROM unnest(ARRAY['00000000-0000-0000-0000-000000000000'::uuid,
				  'ffffffff-ffff-ffff-ffff-ffffffffffff'])
	 WITH ORDINALITY AS u(x, o);

-- Filters stored in a table: large enough to be TOASTed out of line.
CREATE TEMP TABLE nfn_stored (kind text, layout text, bf bloomfilter);

--
-- The same checks for every key kind and layout (8 tests).  proto is a NULL
-- of the key type: PL/pgSQL compiles a polymorphic function once per
-- argument type, so the cached plans never see a key of another type.
--
CREATE FUNCTION pg_temp.nfn_checks(kind text, layout text, proto anyelement) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	tbl		text := 'nfn_' || kind;
	what	text := kind || '/' || layout || ': ';
	agg		bloomfilter;
	allk	bloomfilter;
	n		bigint;
	b		boolean;
	r		record;
BEGIN
	EXECUTE format('SELECT bloom_agg(k, 100000, 0.01, %L) FROM %I', layout, tbl)
		INTO agg;
	EXECUTE format('SELECT bloom_add_all(bloom_empty(100000, 0.01, %L), array_agg(k ORDER BY i)) FROM %I',
				   layout, tbl)
		INTO allk;

	RETURN NEXT ok(allk = agg,
		what || 'bloom_add_all of every key gives the same filter as bloom_agg');

	EXECUTE format('SELECT count(*) FROM %I WHERE ($1 @> k) IS NOT TRUE', tbl)
		INTO n USING agg;
	RETURN NEXT is(n, 0::bigint, what || 'bloom_agg filter: every key found by @>');

	EXECUTE format('SELECT count(*) FROM %I WHERE (k <@ $1) IS NOT TRUE', tbl)
		INTO n USING agg;
	RETURN NEXT is(n, 0::bigint, what || 'bloom_agg filter: every key found by <@');

	EXECUTE format('SELECT count(*) FROM %I WHERE bloom_contains($1, k) IS NOT TRUE', tbl)
		INTO n USING allk;
	RETURN NEXT is(n, 0::bigint, what || 'bloom_add_all filter: every key found by bloom_contains');

	EXECUTE format('SELECT count(*) FROM (SELECT array_agg(k) AS a FROM %I GROUP BY i / 1000) c '
				   'WHERE bloom_contains_all($1, a) IS NOT TRUE', tbl)
		INTO n USING agg;
	RETURN NEXT is(n, 0::bigint,
		what || 'bloom_contains_all is true for every chunk of 1,000 keys');

	EXECUTE format('SELECT bloom_contains_all($1, array_agg(k)) FROM %I', tbl)
		INTO b USING allk;
	RETURN NEXT is(b, true, what || 'bloom_contains_all of all keys in one array is true');

	-- Stored: the value is TOASTed; checked in a join (one call site, many rows).
	INSERT INTO nfn_stored VALUES (kind, layout, agg);
	EXECUTE format('SELECT count(*) FROM %I t, nfn_stored s '
				   'WHERE s.kind = $1 AND s.layout = $2 AND (s.bf @> t.k) IS NOT TRUE', tbl)
		INTO n USING kind, layout;
	RETURN NEXT is(n, 0::bigint, what || 'stored filter: every key found by @> in a join');

	-- Stored, one key per statement: every lookup is the first call at its
	-- call site (the sliced detoast path).  2,000 keys spread over the set.
	n := 0;
	FOR r IN EXECUTE format('SELECT k FROM %I WHERE i %% 50 = 7 OR i > 100000 ORDER BY i', tbl)
	LOOP
		EXECUTE 'SELECT s.bf @> $1 FROM nfn_stored s WHERE s.kind = $2 AND s.layout = $3'
			INTO b USING r.k, kind, layout;
		IF b IS NOT TRUE THEN
			n := n + 1;
		END IF;
	END LOOP;
	RETURN NEXT is(n, 0::bigint,
		what || 'stored filter: every key found by @>, one lookup per statement');
END
$fn$;

--
-- bloom_add / || in a PL/pgSQL loop over the first 5,000 keys (4 tests).
-- Integers are added as their narrowest type.
--
CREATE FUNCTION pg_temp.nfn_loop(kind text, layout text, proto anyelement) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	tbl		text := 'nfn_' || kind;
	what	text := kind || '/' || layout || ': loop: ';
	f		bloomfilter;
	g		bloomfilter;
	want	bloomfilter;
	half	bloomfilter;
	n		bigint;
	cnt		int := 0;
	r		record;
BEGIN
	f := bloom_empty(5000, 0.01, layout);
	FOR r IN EXECUTE format('SELECT * FROM %I WHERE i <= 5000 ORDER BY i', tbl)
	LOOP
		cnt := cnt + 1;
		IF kind = 'int' THEN
			IF r.w = 'int2' THEN
				f := bloom_add(f, r.k::int2);
			ELSIF r.w = 'int4' THEN
				f := f || r.k::int4;
			ELSE
				f := bloom_add(f, r.k);
			END IF;
		ELSIF cnt % 2 = 0 THEN
			f := bloom_add(f, r.k);
		ELSIF kind = 'text' THEN
			-- || text: the bloom_literal overload (varchar would drop
			-- trailing blanks, giving another filter than bloom_agg(k))
			f := f || r.k;
		ELSE
			f := f || r.k;
		END IF;
		IF cnt = 2500 THEN
			g := f;				-- a copy; later adds to f must not reach it
		END IF;
	END LOOP;

	EXECUTE format('SELECT bloom_agg(k, 5000, 0.01, %L) FROM %I WHERE i <= 5000', layout, tbl)
		INTO want;
	EXECUTE format('SELECT bloom_agg(k, 5000, 0.01, %L) FROM %I WHERE i <= 2500', layout, tbl)
		INTO half;

	RETURN NEXT ok(f = want, what || '5,000 adds give the same filter as bloom_agg');

	EXECUTE format('SELECT count(*) FROM %I WHERE i <= 5000 AND ($1 @> k) IS NOT TRUE', tbl)
		INTO n USING f;
	RETURN NEXT is(n, 0::bigint, what || 'every key added in the loop is found');

	RETURN NEXT ok(g = half,
		what || 'a copy taken after 2,500 adds is not changed by later adds');

	INSERT INTO nfn_stored VALUES ('loop:' || kind, layout, f);
	RETURN NEXT ok((SELECT s.bf FROM nfn_stored s WHERE s.kind = 'loop:' || nfn_loop.kind
						AND s.layout = nfn_loop.layout) = want,
		what || 'the loop''s filter stored in a table equals bloom_agg');
END
$fn$;

--
-- Integers of mixed widths (8 tests).
--
CREATE FUNCTION pg_temp.nfn_int_widths(layout text) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	what	text := 'int/' || layout || ': ';
	f8		bloomfilter;
	fmix	bloomfilter;
	fall	bloomfilter;
	n		bigint;
	b		boolean;
BEGIN
	SELECT bloom_agg(k, 100000, 0.01, layout) INTO f8 FROM nfn_int;
	SELECT bloom_agg(k::int2, 100000, 0.01, layout) FILTER (WHERE w = 'int2')
		 | bloom_agg(k::int4, 100000, 0.01, layout) FILTER (WHERE w = 'int4')
		 | bloom_agg(k, 100000, 0.01, layout) FILTER (WHERE w = 'int8')
	INTO fmix FROM nfn_int;
	fall := bloom_add_all(bloom_add_all(bloom_add_all(bloom_empty(100000, 0.01, layout),
		(SELECT array_agg(k::int2) FROM nfn_int WHERE w = 'int2')),
		(SELECT array_agg(k::int4) FROM nfn_int WHERE w = 'int4')),
		(SELECT array_agg(k) FROM nfn_int WHERE w = 'int8'));

	RETURN NEXT ok(fmix = f8, what ||
		'keys added as int2/int4/int8 by range give the same filter as all added as int8');
	RETURN NEXT ok(fall = f8, what ||
		'bloom_add_all of int2[], int4[] and int8[] gives the same filter as int8 bloom_agg');

	SELECT count(*) INTO n FROM nfn_int
	WHERE w IN ('int2', 'int4') AND (f8 @> k::int4) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'added as int8, every int4-range key found as int4');

	SELECT count(*) INTO n FROM nfn_int
	WHERE w = 'int2' AND (k::int2 <@ f8) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'added as int8, every int2-range key found as int2');

	SELECT count(*) INTO n FROM nfn_int WHERE bloom_contains(fmix, k) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'added as int2/int4/int8, every key found as int8');

	SELECT count(*) INTO n FROM nfn_int
	WHERE w = 'int2' AND (fmix @> k::int4) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'added as int2, every key found as int4');

	SELECT bloom_contains_all(f8, array_agg(k::int4)) INTO b
	FROM nfn_int WHERE w IN ('int2', 'int4');
	RETURN NEXT is(b, true, what || 'bloom_contains_all(int8 filter, int4[]) is true');

	SELECT bloom_contains_all(fmix, array_agg(k::int2)) INTO b
	FROM nfn_int WHERE w = 'int2';
	RETURN NEXT is(b, true, what || 'bloom_contains_all(mixed filter, int2[]) is true');
END
$fn$;

--
-- Text checked as varchar, bpchar and name, and the reverse (5 tests).
-- bpchar ignores trailing blanks; name holds at most 63 bytes.
--
CREATE FUNCTION pg_temp.nfn_text_types(layout text) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	what	text := 'text/' || layout || ': ';
	ft		bloomfilter;
	fb		bloomfilter;
	fv		bloomfilter;
	n		bigint;
BEGIN
	SELECT bloom_agg(k, 100000, 0.01, layout) INTO ft FROM nfn_text;

	SELECT count(*) INTO n FROM nfn_text WHERE (ft @> k::varchar) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'every text key found as varchar');

	SELECT count(*) INTO n FROM nfn_text
	WHERE k !~ ' $' AND (ft @> (k || '   ')::bpchar) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint,
		what || 'every text key without trailing blanks found as blank-padded bpchar');

	SELECT count(*) INTO n FROM nfn_text
	WHERE octet_length(k) < 64 AND (ft @> k::name) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'every text key shorter than 64 bytes found as name');

	SELECT bloom_agg((k || '  ')::bpchar, 100000, 0.01, layout) INTO fb
	FROM nfn_text WHERE k !~ ' $';
	SELECT count(*) INTO n FROM nfn_text WHERE k !~ ' $' AND (fb @> k) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'keys added as padded bpchar are found as text');

	-- varchar = char(n) ignores trailing blanks: varchar keys are added
	-- without them (and checks of blank-ended strings test both forms)
	SELECT bloom_agg(k::varchar, 100000, 0.01, layout) INTO fv FROM nfn_text;
	RETURN NEXT ok(fv = (SELECT bloom_agg(rtrim(k, ' '), 100000, 0.01, layout) FROM nfn_text),
		what || 'keys added as varchar give the filter of the text keys without trailing blanks');
END
$fn$;

--
-- Many stored filters at one call site (2 tests per layout): 50 filters of 2,000 keys
-- (each about 2.5 KB, so stored out of line), checked row by row with the
-- filter changing on every row.  A call site that kept the bits of a previous
-- row's filter would miss keys, or find the keys of other filters.
--
CREATE TEMP TABLE nfn_many AS
SELECT l AS layout, j, bloom_agg('f' || j || ':' || i, 2000, 0.01, l) AS bf
FROM unnest(ARRAY['blocked', 'classic']) l, generate_series(1, 50) j, generate_series(1, 2000) i
GROUP BY l, j;

CREATE FUNCTION pg_temp.nfn_many(layout text) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	what	text := 'text/' || layout || ': 50 stored filters at one call site: ';
	n		bigint;
	fp		float8;
BEGIN
	SELECT count(*) INTO n
	FROM (SELECT j, 'f' || j || ':' || i AS k
		  FROM generate_series(1, 2000, 7) i, generate_series(1, 50) j
		  ORDER BY i, j) k
	JOIN nfn_many m ON m.j = k.j AND m.layout = nfn_many.layout
	WHERE (m.bf @> k.k) IS NOT TRUE;
	RETURN NEXT is(n, 0::bigint, what || 'every key found in its own filter');

	SELECT avg((m.bf @> k.k)::int) INTO fp
	FROM (SELECT j, 'f' || (j % 50 + 1) || ':' || i AS k
		  FROM generate_series(1, 2000, 7) i, generate_series(1, 50) j
		  ORDER BY i, j) k
	JOIN nfn_many m ON m.j = k.j AND m.layout = nfn_many.layout;
	RETURN NEXT ok(fp < 0.05,
		what || 'keys of the next filter are found at a false-positive rate (' || fp || ')');
END
$fn$;

SELECT * FROM pg_temp.nfn_many('blocked');
SELECT * FROM pg_temp.nfn_many('classic');

--
-- bloom_agg as a window function and per group (4 tests).  A running window
-- aggregate shows its state to every row, so an update in place would change
-- the filters already returned for earlier rows; a hash aggregate with a
-- tiny work_mem spills groups to disk and keeps many states at once.
--
SELECT is(w.n, 0::bigint,
		  l || ': running bloom_agg window: every row''s filter holds its key and the first key, and counts exactly the keys so far')
FROM unnest(ARRAY['blocked', 'classic']) l
CROSS JOIN LATERAL (
	SELECT count(*) AS n
	FROM (SELECT i, k, bloom_agg(k, 2000, 0.01, l) OVER (ORDER BY i) AS f
		  FROM nfn_text WHERE i <= 2000) r
	WHERE (r.f @> r.k) IS NOT TRUE
	   OR (r.f @> (SELECT k FROM nfn_text WHERE i = 1)) IS NOT TRUE
	   OR (bloom_info(r.f)->>'added')::bigint <> r.i
) w;

SET LOCAL work_mem = '64kB';
SET LOCAL enable_sort = off;
SELECT is(x.n, 0::bigint,
		  l || ': bloom_agg per group (2,000 groups, hash aggregate with a small work_mem): every key found in its group''s filter, added counts its keys')
FROM unnest(ARRAY['blocked', 'classic']) l
CROSS JOIN LATERAL (
	SELECT count(*) AS n
	FROM (SELECT grp, f, (bloom_info(f)->>'added')::bigint = cnt AS added_ok
		  FROM (SELECT i % 2000 AS grp, bloom_agg(k, 50, 0.01, l) AS f, count(*) AS cnt
				FROM nfn_text GROUP BY i % 2000) a
		  OFFSET 0) g
	JOIN nfn_text t ON t.i % 2000 = g.grp
	WHERE (g.f @> t.k) IS NOT TRUE OR NOT g.added_ok
) x;
RESET work_mem;
RESET enable_sort;

--
-- Filters stored in every form a value can take in a row (5 tests): tiny
-- filters with a 1-byte varlena header (classic, 64 bits), compressed inline
-- (STORAGE main) and compressed out of line (STORAGE extended).
--
CREATE TEMP TABLE nfn_tiny AS
SELECT i, 'tiny ' || i AS k, bloom_add(bloom_empty(3, 0.01, 'classic'), 'tiny ' || i) AS bf
FROM generate_series(1, 2000) i;

SELECT is(count(*), 0::bigint,
		  'classic: 2,000 one-key 64-bit filters (1-byte headers in the table): each holds its key')
FROM nfn_tiny WHERE (bf @> k) IS NOT TRUE;

CREATE TEMP TABLE nfn_comp (layout text, how text, bf bloomfilter);
ALTER TABLE nfn_comp ALTER COLUMN bf SET STORAGE main;
INSERT INTO nfn_comp
SELECT l, 'main', bloom_agg(k, 5000, 0.01, l) FROM unnest(ARRAY['blocked', 'classic']) l,
	   (SELECT k FROM nfn_text WHERE i <= 300) t GROUP BY l;
ALTER TABLE nfn_comp ALTER COLUMN bf SET STORAGE extended;
INSERT INTO nfn_comp
SELECT l, 'extended', bloom_agg(k, 200000, 0.01, l) FROM unnest(ARRAY['blocked', 'classic']) l,
	   (SELECT k FROM nfn_text WHERE i <= 5000) t GROUP BY l;

SELECT diag(format('%s STORAGE %s: %s bytes stored for a %s-byte value',
				   layout, how, pg_column_size(bf), octet_length(bf::bytea)))
FROM (SELECT * FROM nfn_comp ORDER BY how DESC, layout) c;

SELECT is(c.n, 0::bigint,
		  format('%s: filter compressed %s: every key found',
				 layout, CASE how WHEN 'main' THEN 'inline (STORAGE main)'
								  ELSE 'out of line (STORAGE extended)' END))
FROM (SELECT c.layout, c.how,
			 (SELECT count(*) FROM nfn_text t
			  WHERE t.i <= CASE c.how WHEN 'main' THEN 300 ELSE 5000 END
				AND (c.bf @> t.k) IS NOT TRUE) AS n
	  FROM nfn_comp c ORDER BY c.how DESC, c.layout) c;

-- 64 tests
SELECT * FROM pg_temp.nfn_checks('int', 'blocked', NULL::int8);
SELECT * FROM pg_temp.nfn_checks('int', 'classic', NULL::int8);
SELECT * FROM pg_temp.nfn_checks('text', 'blocked', NULL::text);
SELECT * FROM pg_temp.nfn_checks('text', 'classic', NULL::text);
SELECT * FROM pg_temp.nfn_checks('bytea', 'blocked', NULL::bytea);
SELECT * FROM pg_temp.nfn_checks('bytea', 'classic', NULL::bytea);
SELECT * FROM pg_temp.nfn_checks('uuid', 'blocked', NULL::uuid);
SELECT * FROM pg_temp.nfn_checks('uuid', 'classic', NULL::uuid);

-- 32 tests
SELECT * FROM pg_temp.nfn_loop('int', 'blocked', NULL::int8);
SELECT * FROM pg_temp.nfn_loop('int', 'classic', NULL::int8);
SELECT * FROM pg_temp.nfn_loop('text', 'blocked', NULL::text);
SELECT * FROM pg_temp.nfn_loop('text', 'classic', NULL::text);
SELECT * FROM pg_temp.nfn_loop('bytea', 'blocked', NULL::bytea);
SELECT * FROM pg_temp.nfn_loop('bytea', 'classic', NULL::bytea);
SELECT * FROM pg_temp.nfn_loop('uuid', 'blocked', NULL::uuid);
SELECT * FROM pg_temp.nfn_loop('uuid', 'classic', NULL::uuid);

-- 16 tests
SELECT * FROM pg_temp.nfn_int_widths('blocked');
SELECT * FROM pg_temp.nfn_int_widths('classic');

-- 10 tests
SELECT * FROM pg_temp.nfn_text_types('blocked');
SELECT * FROM pg_temp.nfn_text_types('classic');

-- 2 tests: || with a text key must resolve to bloom_add (the built-in
-- anynonarray || text is also a candidate).
SELECT lives_ok($$SELECT bloom_empty(100, 0.01, 'blocked') || 'ключ'::text$$,
				'bloomfilter || text resolves (blocked)');
SELECT lives_ok($$SELECT bloom_empty(100, 0.01, 'classic') || md5('x')$$,
				'bloomfilter || text resolves (classic)');

SELECT * FROM finish();
ROLLBACK;
