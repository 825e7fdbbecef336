--
-- counting: the counting layout (4-bit counters), bloom_remove and -
--

-- sizing and the header: family 2, layout 3, four bits per counter
SELECT bloom_info(bloom_empty(1000, 0.01, 'counting'));
SELECT substr(bloom_empty(10, 0.1, 'counting')::bytea, 1, 16) AS header;
SELECT (bloom_info(bloom_empty(100000, 0.01, 'counting'))->>'bytes')::float8 /
       (bloom_info(bloom_empty(100000, 0.01))->>'bytes')::float8 BETWEEN 4 AND 5
       AS four_to_five_times_blocked;

-- add, check, remove
CREATE TABLE c AS SELECT bloom_add_all(bloom_empty(100, 0.01, 'counting'),
                                      ARRAY['a', 'b', 'c']) AS f;
SELECT f @> 'a' AS a, f @> 'b' AS b, f @> 'zzz' AS zzz, bloom_info(f)->'added' AS added FROM c;
SELECT (f - 'a') @> 'a' AS a_after_remove, (f - 'a') @> 'b' AS b_kept,
       bloom_remove(f, 'a') = (f - 'a') AS fn_op,
       bloom_info(f - 'a')->'added' AS added,
       (f - 'a' - 'b' - 'c') = (bloom_empty(100, 0.01, 'counting') || 'x') - 'x' AS all_removed_is_empty
FROM c;
-- a key added twice needs two removals
SELECT ((f || 'a') - 'a') @> 'a' AS still_there, ((f || 'a') - 'a' - 'a') @> 'a' AS gone FROM c;
-- typed keys and the anyelement variant
SELECT ((bloom_empty(100, 0.01, 'counting') || 42) - 42) @> 42 AS int_removed,
       ((bloom_empty(100, 0.01, 'counting') || 42 || 43) - 42) @> 43 AS other_kept;
-- a NULL key leaves the filter unchanged; a NULL filter gives NULL
SELECT (f - NULL::text) = f AS null_key, bloom_remove(NULL::bloomfilter, 'a') IS NULL AS null_filter FROM c;
-- removing a key the filter says is absent is an error, and leaves nothing changed
SELECT f - 'zzz' FROM c;
SELECT f - 'a' - 'a' FROM c;
SELECT bloom_empty(10, 0.1, 'counting') - 'a';
SELECT f - 1 FROM c;
-- only the counting layout removes
-- (- binds tighter than ||: parenthesize)
SELECT (bloom_empty(10, 0.1) || 'a'::text) - 'a';
SELECT (bloom_empty(10, 0.1, 'classic') || 'a'::text) - 'a';

-- saturation: a counter stays at 15 and is never decremented
CREATE TABLE sat AS
SELECT (SELECT bloom_agg('k'::text, 10, 0.1, 'counting') FROM generate_series(1, 20)) AS f;
SELECT bloom_info(f)->'counters_saturated' AS saturated, bloom_info(f)->'added' AS added FROM sat;
CREATE FUNCTION remove_n(f bloomfilter, n int) RETURNS bloomfilter
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		f := f - 'k'::text;
	END LOOP;
	RETURN f;
END $$;
SELECT remove_n(f, 100) @> 'k' AS saturated_key_stays,
       bloom_info(remove_n(f, 100))->'counters_saturated' AS still_saturated FROM sat;
DROP FUNCTION remove_n(bloomfilter, int);

-- union sums the counters (saturating), intersection takes the minimum
CREATE TABLE u AS
SELECT bloom_empty(100, 0.01, 'counting') || 'a' || 'b' AS x,
       bloom_empty(100, 0.01, 'counting') || 'b' || 'c' AS y;
SELECT (x | y) @> 'a' AS a, ((x | y) - 'b') @> 'b' AS b_twice, ((x | y) - 'b' - 'b') @> 'b' AS b_gone,
       (x & y) @> 'b' AS both_b, (x & y) @> 'a' AS only_x_a,
       (x | y) = (x - 'a' | y - 'c') || 'a' || 'c' AS sum_is_adds
FROM u;
SELECT x | bloom_empty(100, 0.01) FROM u;
SELECT bloom_union_agg(f) @> 'a' AS agg_union FROM (SELECT x AS f FROM u UNION ALL SELECT y FROM u) s;

-- text, bytea and binary forms
SELECT (bloom_empty(10, 0.1, 'counting') || 'a'::text)::text;
SELECT f::text::bloomfilter = f AS text_rt, f::bytea::bloomfilter = f AS bytea_rt,
       bloomfilter_send(f) = f::bytea AS send_is_bytea FROM c;
-- the family byte and the layout byte must agree
SELECT overlay(f::bytea PLACING '\x01'::bytea FROM 6 FOR 1)::bloomfilter FROM c;
SELECT overlay(f::bytea PLACING '\x03'::bytea FROM 6 FOR 1)::bloomfilter FROM c;
SELECT 'version=1 layout=counting hashes=4 key_kind=none bits=500 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;

-- estimates
SELECT round(bloom_cardinality(f)) AS cardinality, bloom_fpr(f) > 0 AS fpr_positive FROM c;

-- in PL/pgSQL, adds in a loop then removes
DO $$
DECLARE
	f bloomfilter := bloom_empty(1000, 0.01, 'counting');
BEGIN
	FOR i IN 1 .. 500 LOOP
		f := f || i;
	END LOOP;
	FOR i IN 1 .. 250 LOOP
		f := f - i;
	END LOOP;
	RAISE NOTICE 'kept % of 250, added %', (SELECT count(*) FROM generate_series(251, 500) i WHERE f @> i),
		bloom_info(f)->'added';
END $$;

DROP TABLE c, sat, u;

-- A removal undoes its add exactly, for every form of a text key: 'ab  '
-- is added as 'ab  ' and 'ab', a 70-byte key also clipped to 63 bytes.
SELECT f @> 'ab  '::text AS key, f @> 'ab'::text AS trimmed, bloom_info(f) ->> 'added' AS added,
	   bloom_info(f) ->> 'counters_set' AS counters_set
FROM (SELECT bloom_remove(bloom_add(bloom_empty(100, 0.01, 'counting'), 'ab  '::text), 'ab  '::text) AS f) s;
SELECT bloom_remove(bloom_remove(bloom_add(bloom_empty(100, 0.01, 'counting'), 'ab  '::text), 'ab  '::text), 'ab  '::text);
SELECT bloom_info(f) ->> 'counters_set' AS counters_set, f @> repeat('x', 69) AS trimmed, f @> repeat('x', 63) AS clipped
FROM (SELECT bloom_remove(bloom_add(bloom_empty(100, 0.01, 'counting'), repeat('x', 69) || ' '), repeat('x', 69) || ' ') AS f) s;
-- a key whose forms coincide ('x' x 63 and a blank: trimmed = clipped) raises them twice, and its removal lowers them twice
SELECT bloom_info(a) ->> 'counters_set' AS counters_set_added, bloom_info(f) ->> 'counters_set' AS counters_set, f @> repeat('x', 63) AS found
FROM (SELECT a, bloom_remove(a, repeat('x', 63) || ' ') AS f
	  FROM (SELECT bloom_add(bloom_empty(100, 0.01, 'counting'), repeat('x', 63) || ' ') AS a) s) s;
