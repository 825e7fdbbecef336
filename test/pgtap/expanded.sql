--
-- expanded.sql — in-place adds to PL/pgSQL variables (expanded objects).
--
-- "f := bloom_add(f, k)", "f := f || k" and "f := bloom_add_all(f, arr)" keep
-- f as an expanded object and add in place (src/bf_expanded.c).  Checked
-- here for correctness only (the speed is the benchmark's business): 100,000
-- adds to a ~10 MB filter give every key, added = 100,000 and the value of
-- bloom_add_all over the same keys, for both layouts and the three forms;
-- checks inside the loop see the variable as it is; copy semantics
-- ("a := b; a := bloom_add(a, x)" and "a := bloom_add(b, x)" leave b
-- unchanged, whether b is expanded or not, and later adds to either never
-- show in the other); a function parameter is the caller's copy; storing
-- the variable flattens it; RETURN of an expanded variable; an exception in
-- the middle of a loop, or raised by bloom_add itself, leaves the variable
-- as PL/pgSQL assigned it; plain SQL never modifies its input; and every
-- expanded object and shared buffer is freed at the end of its statement.
--
-- Expanded objects are visible in pg_backend_memory_contexts: one context
-- "expanded bloomfilter" per object, one "bloomfilter bits" per buffer of
-- bits (shared by objects that have the same bits).
--
BEGIN;
SELECT plan(76);

CREATE FUNCTION pg_temp.n_buffers() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
	SELECT count(*) FROM pg_backend_memory_contexts WHERE name = 'bloomfilter bits'
$$;

CREATE FUNCTION pg_temp.n_objects() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
	SELECT count(*) FROM pg_backend_memory_contexts WHERE name = 'expanded bloomfilter'
$$;

CREATE FUNCTION pg_temp.added(f bloomfilter) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT (bloom_info(f)->>'added')::bigint $$;

-- A plain (never expanded) filter of capacity 1000 holding keys, in order.
CREATE FUNCTION pg_temp.ref(layout text, keys text[]) RETURNS bloomfilter
LANGUAGE sql IMMUTABLE AS $$
	SELECT bloom_add_all(bloom_empty(1000, 0.01, layout), keys)
$$;

CREATE TEMP TABLE ex_keys AS
SELECT array_agg('key-' || i ORDER BY i) AS keys FROM generate_series(1, 100000) i;

--
-- 100,000 adds to a ~10 MB filter (capacity 8,000,000 at 1%): 4 tests per
-- form and layout, 24 in all.
--
CREATE FUNCTION pg_temp.big_loop(how text, layout text) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	what	text := how || ', ' || layout || ': ';
	keys	text[] := (SELECT keys FROM ex_keys);
	f		bloomfilter := bloom_empty(8000000, 0.01, layout);
	nbuf	bigint;
BEGIN
	IF how = 'bloom_add' THEN
		FOR i IN 1..100000 LOOP
			f := bloom_add(f, keys[i]);
		END LOOP;
	ELSIF how = '||' THEN
		FOR i IN 1..100000 LOOP
			f := f || keys[i];
		END LOOP;
	ELSE
		FOR i IN 0..999 LOOP
			f := bloom_add_all(f, keys[i * 100 + 1:i * 100 + 100]);
		END LOOP;
	END IF;
	nbuf := pg_temp.n_buffers();

	RETURN NEXT is(nbuf, 1::bigint,
				   what || 'the variable holds one expanded object');
	RETURN NEXT is(pg_temp.added(f), 100000::bigint,
				   what || '100,000 adds: added = 100,000');
	RETURN NEXT ok(bloom_contains_all(f, keys),
				   what || 'every key added is found');
	RETURN NEXT ok(f = bloom_add_all(bloom_empty(8000000, 0.01, layout), keys),
				   what || 'the value equals bloom_add_all of the same keys');
END
$fn$;

SELECT * FROM pg_temp.big_loop('bloom_add', 'blocked');
SELECT * FROM pg_temp.big_loop('||', 'blocked');
SELECT * FROM pg_temp.big_loop('bloom_add_all', 'blocked');
SELECT * FROM pg_temp.big_loop('bloom_add', 'classic');
SELECT * FROM pg_temp.big_loop('||', 'classic');
SELECT * FROM pg_temp.big_loop('bloom_add_all', 'classic');

--
-- Checks inside the loop see the variable as it is now: 5 tests per layout.
--
CREATE FUNCTION pg_temp.checks_in_loop(layout text) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	what		text := layout || ': ';
	f			bloomfilter := bloom_empty(100000, 0.01, layout);
	bad_has		int := 0;
	bad_added	int := 0;
	bad_all		int := 0;
	bad_info	int := 0;
	bad_eq		int := 0;
BEGIN
	FOR i IN 1..3000 LOOP
		f := bloom_add(f, i);
		IF NOT (f @> i AND i <@ f AND bloom_contains(f, i)) THEN
			bad_has := bad_has + 1;
		END IF;
		IF pg_temp.added(f) <> i THEN
			bad_added := bad_added + 1;
		END IF;
		IF NOT bloom_contains_all(f, ARRAY[1, i / 2 + 1, i]) OR
		   NOT bloom_contains_any(f, ARRAY[i]) THEN
			bad_all := bad_all + 1;
		END IF;
		IF (bloom_info(f)->>'bits_set')::bigint = 0 OR bloom_cardinality(f) <= 0 THEN
			bad_info := bad_info + 1;
		END IF;
		IF i IN (1, 1000, 3000) AND
		   f <> (SELECT bloom_add_all(bloom_empty(100000, 0.01, layout), array_agg(j ORDER BY j))
				 FROM generate_series(1, i) j) THEN
			bad_eq := bad_eq + 1;
		END IF;
	END LOOP;
	RETURN NEXT is(bad_has, 0, what || '@>, <@, bloom_contains find each key right after it is added');
	RETURN NEXT is(bad_added, 0, what || 'bloom_info(f)->>''added'' counts every add so far');
	RETURN NEXT is(bad_all, 0, what || 'bloom_contains_all / _any see the keys added so far');
	RETURN NEXT is(bad_info, 0, what || 'bloom_info and bloom_cardinality see the bits set so far');
	RETURN NEXT is(bad_eq, 0, what || 'in a query (not a simple expression) the variable equals a filter of the keys so far');
END
$fn$;

SELECT * FROM pg_temp.checks_in_loop('blocked');
SELECT * FROM pg_temp.checks_in_loop('classic');

--
-- Copy semantics: 14 tests per layout.
--
CREATE FUNCTION pg_temp.add_in_callee(p bloomfilter) RETURNS bloomfilter
LANGUAGE plpgsql AS $fn$
BEGIN
	FOR i IN 1..10 LOOP
		p := bloom_add(p, 'callee' || i);
	END LOOP;
	RETURN p;
END
$fn$;

CREATE FUNCTION pg_temp.copies(layout text) RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	what	text := layout || ': ';
	a		bloomfilter;
	b		bloomfilter;
	c		bloomfilter;
	ka		text[] := '{}';
	kb		text[] := '{}';
	callee	text[] := (SELECT array_agg('callee' || i ORDER BY i) FROM generate_series(1, 10) i);
BEGIN
	-- b not expanded
	b := pg_temp.ref(layout, '{b1}');
	RETURN NEXT is(pg_temp.n_objects(), 0::bigint,
				   what || 'a filter from a plain expression is not expanded');
	a := b;
	a := bloom_add(a, 'x');
	RETURN NEXT ok(b = pg_temp.ref(layout, '{b1}') AND a = pg_temp.ref(layout, '{b1,x}'),
				   what || 'b plain: a := b; a := bloom_add(a, ''x'') changes a, not b');

	-- b expanded
	b := bloom_add(b, 'b2');
	RETURN NEXT is(pg_temp.n_objects(), 2::bigint,
				   what || 'after f := bloom_add(f, k) both variables are expanded');
	a := b;
	a := bloom_add(a, 'x');
	RETURN NEXT ok(b = pg_temp.ref(layout, '{b1,b2}') AND a = pg_temp.ref(layout, '{b1,b2,x}'),
				   what || 'b expanded: a := b; a := bloom_add(a, ''x'') changes a, not b');
	b := bloom_add(b, 'y');
	RETURN NEXT ok(b = pg_temp.ref(layout, '{b1,b2,y}') AND a = pg_temp.ref(layout, '{b1,b2,x}'),
				   what || '... and a later add to b does not show in a');

	-- a := bloom_add(b, ...): a shares b's bits until either changes
	a := bloom_add(b, 'x');
	RETURN NEXT ok(b = pg_temp.ref(layout, '{b1,b2,y}'),
				   what || 'a := bloom_add(b, ''x'') leaves b unchanged');
	RETURN NEXT ok(a @> 'x'::text AND a = pg_temp.ref(layout, '{b1,b2,y,x}'),
				   what || '... and a holds b''s keys and x');
	c := bloom_add(a, 'z');
	RETURN NEXT ok(c = pg_temp.ref(layout, '{b1,b2,y,x,z}') AND a = pg_temp.ref(layout, '{b1,b2,y,x}')
				   AND b = pg_temp.ref(layout, '{b1,b2,y}'),
				   what || 'c := bloom_add(a, ''z'') changes neither a nor b');
	ka := '{b1,b2,y,x}';
	kb := '{b1,b2,y}';
	FOR i IN 1..100 LOOP
		IF i % 3 = 0 THEN
			a := bloom_add(a, 'a' || i);
			ka := ka || ('a' || i);
		ELSE
			b := bloom_add(b, 'b' || i);
			kb := kb || ('b' || i);
		END IF;
		IF i = 50 THEN
			c := b;
		END IF;
	END LOOP;
	RETURN NEXT ok(a = pg_temp.ref(layout, ka) AND b = pg_temp.ref(layout, kb)
				   AND c = pg_temp.ref(layout, kb[1:37]),
				   what || 'interleaved adds to a and b (and c := b midway) keep them apart');

	-- a parameter is the callee's own copy
	c := pg_temp.add_in_callee(b);
	RETURN NEXT ok(b = pg_temp.ref(layout, kb) AND c = pg_temp.ref(layout, kb || callee),
				   what || 'adds to a parameter of an expanded argument do not change the caller''s variable');

	-- bloom_add_all of more keys than kept pending on a shared value
	c := bloom_add_all(b, callee || (SELECT array_agg('many' || i) FROM generate_series(1, 300) i));
	RETURN NEXT ok(b = pg_temp.ref(layout, kb) AND
				   c = pg_temp.ref(layout, kb || callee || (SELECT array_agg('many' || i) FROM generate_series(1, 300) i)),
				   what || 'bloom_add_all of 310 keys to a shared value: right result, input unchanged');

	-- a NULL key or array keeps the variable as it is
	c := b;
	b := bloom_add(b, NULL::text);
	b := bloom_add_all(b, NULL::text[]);
	RETURN NEXT ok(b = c AND b = pg_temp.ref(layout, kb),
				   what || 'adding a NULL key or array leaves an expanded variable unchanged');

	-- dynamic SQL: the variable as a statement parameter
	EXECUTE 'SELECT bloom_add($1, ''dyn'')' INTO c USING b;
	RETURN NEXT ok(b = pg_temp.ref(layout, kb) AND c = pg_temp.ref(layout, kb || '{dyn}'::text[]),
				   what || 'EXECUTE ... USING b: the result has the key, b is unchanged');

	-- two variables: 4 objects at most (a, b, c and none left behind)
	RETURN NEXT cmp_ok(pg_temp.n_objects(), '<=', 3::bigint,
					   what || 'no expanded object is left behind by reassignments');
END
$fn$;

SELECT * FROM pg_temp.copies('blocked');
SELECT * FROM pg_temp.copies('classic');

--
-- Storing, returning, exceptions: 10 tests.
--
CREATE TEMP TABLE ex_store (id int PRIMARY KEY, bf bloomfilter);

CREATE FUNCTION pg_temp.build(n int) RETURNS bloomfilter
LANGUAGE plpgsql AS $fn$
DECLARE
	f	bloomfilter := bloom_empty(800000, 0.01);
BEGIN
	FOR i IN 1..n LOOP
		f := f || i;
	END LOOP;
	RETURN f;
END
$fn$;

CREATE FUNCTION pg_temp.store_and_fail() RETURNS SETOF text
LANGUAGE plpgsql AS $fn$
DECLARE
	f		bloomfilter := bloom_empty(800000, 0.01);
	g		bloomfilter;
	ref		bloomfilter;
	snap	bytea;
BEGIN
	FOR i IN 1..20000 LOOP
		f := bloom_add(f, i);
	END LOOP;
	INSERT INTO ex_store VALUES (1, f);
	f := bloom_add(f, 20001);
	ref := (SELECT bloom_add_all(bloom_empty(800000, 0.01), array_agg(i)) FROM generate_series(1, 20000) i);
	RETURN NEXT ok((SELECT bf FROM ex_store WHERE id = 1) = ref,
				   'a stored variable reads back equal, unchanged by a later add to the variable');
	UPDATE ex_store SET bf = f WHERE id = 1;
	RETURN NEXT ok((SELECT bf::bytea FROM ex_store WHERE id = 1) = f::bytea,
				   'UPDATE ... SET bf = f stores the variable as it is');
	RETURN NEXT is((SELECT pg_column_size(bf) FROM ex_store WHERE id = 1),
				   octet_length(f::bytea),
				   'the stored value is flat: stored out of line, uncompressed, the format''s bytes');

	-- RETURN of an expanded variable
	g := pg_temp.build(5000);
	RETURN NEXT ok(g = (SELECT bloom_add_all(bloom_empty(800000, 0.01), array_agg(i)) FROM generate_series(1, 5000) i),
				   'RETURN of an expanded variable gives its value');
	g := bloom_add(g, 5001);
	RETURN NEXT ok(g = (SELECT bloom_add_all(bloom_empty(800000, 0.01), array_agg(i)) FROM generate_series(1, 5001) i),
				   '... which takes further adds');

	-- an exception in the middle of a loop: adds made before it stay
	f := bloom_empty(800000, 0.01);
	BEGIN
		FOR i IN 1..1000 LOOP
			f := bloom_add(f, i);
			IF i = 500 THEN
				RAISE EXCEPTION 'stop at %', i;
			END IF;
		END LOOP;
	EXCEPTION WHEN raise_exception THEN
		NULL;
	END;
	RETURN NEXT ok(f = (SELECT bloom_add_all(bloom_empty(800000, 0.01), array_agg(i)) FROM generate_series(1, 500) i)
				   AND pg_temp.added(f) = 500,
				   'an exception in the middle of a loop leaves the variable with the adds made before it');
	FOR i IN 501..1000 LOOP
		f := bloom_add(f, i);
	END LOOP;
	RETURN NEXT ok(f = (SELECT bloom_add_all(bloom_empty(800000, 0.01), array_agg(i)) FROM generate_series(1, 1000) i),
				   '... and the variable takes further adds');

	-- an error raised by bloom_add / bloom_add_all: the variable is unchanged
	snap := f::bytea;
	BEGIN
		f := bloom_add(f, 'text key');
	EXCEPTION WHEN datatype_mismatch THEN
		NULL;
	END;
	RETURN NEXT is(f::bytea, snap, 'a failed f := bloom_add(f, k) leaves f unchanged');
	BEGIN
		g := bloom_add(f, 1001);
		f := bloom_add_all(f, ARRAY['a', 'b']);
	EXCEPTION WHEN datatype_mismatch THEN
		NULL;
	END;
	RETURN NEXT is(f::bytea, snap, 'a failed f := bloom_add_all(f, arr) on a shared value leaves f unchanged');
	f := bloom_add(f, 1001);
	RETURN NEXT ok(f = g AND g @> 1001,
				   '... and both f and a value derived from it take further adds');
END
$fn$;

SELECT * FROM pg_temp.store_and_fail();

--
-- Plain SQL, and cleanup: 4 tests.
--
SELECT ok(s.bf::bytea = (SELECT bf::bytea FROM ex_store WHERE id = 1) AND
		  s.added @> 99999999 AND s.added <> s.bf,
		  'plain SQL: bloom_add(bf, k) over a stored value returns a new value, the input unchanged')
FROM (SELECT bf, bloom_add(bf, 99999999) AS added FROM ex_store WHERE id = 1) s;

UPDATE ex_store SET bf = bf || 99999999 WHERE id = 1;
SELECT ok((SELECT bf @> 99999999 AND pg_temp.added(bf) = 20002 FROM ex_store WHERE id = 1),
		  'plain SQL: UPDATE ... SET bf = bf || k stores the key');

SELECT is(pg_temp.n_objects(), 0::bigint, 'no expanded object outlives its statement');
SELECT is(pg_temp.n_buffers(), 0::bigint, 'no buffer of bits outlives its statement');

SELECT * FROM finish();
ROLLBACK;
