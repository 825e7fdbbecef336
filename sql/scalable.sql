--
-- scalable: scalable Bloom filters (format family 4), bloom_empty_scalable
--
\set VERBOSITY default

-- an empty filter: one layer of the initial capacity at fpr * (1 - ratio)
SELECT bloom_info(bloom_empty_scalable(1000, 0.01));
SELECT bloom_empty_scalable() = bloom_empty_scalable(1000, 0.01, 2, 0.5, 'blocked') AS defaults;
SELECT substr(bloom_empty_scalable(10, 0.1)::bytea, 1, 64) AS outer_header;
SELECT bloom_info(bloom_empty_scalable(100, 0.001, 4, 0.25, 'classic')) - 'layers' AS classic;

-- adds grow it: a new layer of growth times the capacity when the last is full
CREATE TABLE s AS
SELECT bloom_add_all(bloom_empty_scalable(10, 0.01), ARRAY(SELECT 'k' || i FROM generate_series(1, 100) i)) AS f;
SELECT l->'capacity' AS capacity, l->'target_fpr' AS target_fpr, l->'added' AS added,
       l->'bits' AS bits, l->'hashes' AS hashes
FROM s, jsonb_array_elements(bloom_info(f)->'layers') l;
SELECT bloom_info(f)->'added' AS added, bloom_info(f)->'bits' AS bits, bloom_info(f)->'bytes' AS bytes,
       (bloom_info(f)->>'bytes')::int = length(f::bytea) AS bytes_is_length,
       (bloom_info(f)->>'predicted_fpr')::float8 < 0.01 AS predicted_below_target
FROM s;
-- every key is found; absent keys mostly not
SELECT count(*) FILTER (WHERE f @> ('k' || i)) AS found,
       count(*) FILTER (WHERE f @> ('absent' || i)) < 5 AS few_false_positives
FROM s, generate_series(1, 100) i;
-- a key that tests positive sets nothing: only the count of adds moves
SELECT substring((f || 'k1')::bytea FROM 65) = substring(f::bytea FROM 65) AS unchanged_layers,
       bloom_info(f || 'k1')->'added' AS added
FROM s;
-- the other functions take it
SELECT bloom_contains(f, 'k5') AS contains, 'k5' <@ f AS contained,
       bloom_contains_all(f, ARRAY['k1', 'k99']) AS all_, bloom_contains_any(f, ARRAY['x', 'k2']) AS any_,
       bloom_maybe(f, ARRAY['k3', 'nope-1', 'k4']) AS maybe,
       round(bloom_cardinality(f)) AS cardinality, bloom_fpr(f) < 0.01 AS fpr_below_target
FROM s;
SELECT f::text::bloomfilter = f AS text_round_trip, f::bytea::bloomfilter = f AS bytea_round_trip,
       bloom_from_bytea(bloom_to_bytea(f)) = f AS functions
FROM s;
SELECT left(f::text, 112) AS text_form FROM s;
-- typed keys, and one kind per filter
SELECT (bloom_empty_scalable(2, 0.01) || 1 || 2 || 3 || 4 || 5) @> 5 AS int_found;
SELECT (bloom_empty_scalable(2, 0.01) || 1) @> 'a';
SELECT bloom_empty_scalable(2, 0.01) || 1 || 'a'::text;

-- in place in PL/pgSQL, also across growth; g := f copies
DO $$
DECLARE
	f bloomfilter := bloom_empty_scalable(10, 0.01);
	g bloomfilter;
BEGIN
	FOR i IN 1 .. 1000 LOOP
		f := f || i;
		IF i = 15 THEN g := f; END IF;
	END LOOP;
	RAISE NOTICE 'layers %, added %, g layers %, g added %',
		jsonb_array_length(bloom_info(f)->'layers'), bloom_info(f)->'added',
		jsonb_array_length(bloom_info(g)->'layers'), bloom_info(g)->'added';
	RAISE NOTICE 'same as in SQL: %',
		f = bloom_add_all(bloom_empty_scalable(10, 0.01), ARRAY(SELECT generate_series(1, 1000)));
END $$;

-- union: layer by layer, the shorter one taking the other's extra layers
SELECT (a | b) @> 'a50' AND (a | b) @> 'b5' AS both_found,
       jsonb_array_length(bloom_info(a | b)->'layers') AS layers,
       bloom_info(a | b)->'added' AS added,
       (a | b) = (b | a) AS commutes
FROM (SELECT bloom_add_all(bloom_empty_scalable(10, 0.01), ARRAY(SELECT 'a' || i FROM generate_series(1, 50) i)) AS a,
             bloom_add_all(bloom_empty_scalable(10, 0.01), ARRAY(SELECT 'b' || i FROM generate_series(1, 5) i)) AS b) x;
SELECT bloom_union_agg(f) @> 'k7' AS union_agg FROM (SELECT f FROM s UNION ALL SELECT f FROM s) x;
-- a filter of key kind none may hold layers (a value from elsewhere): the
-- layers a union copies from it take the result's key kind
CREATE TABLE none2 AS
SELECT overlay(overlay(overlay((bloom_empty_scalable(1, 0.01) || 'a' || 'b')::bytea
       PLACING '\x00'::bytea FROM 8) PLACING '\x00'::bytea FROM 72) PLACING '\x00'::bytea FROM 200)::bloomfilter AS f;
SELECT bloom_info(f)->'key_kind' AS key_kind, jsonb_array_length(bloom_info(f)->'layers') AS layers FROM none2;
SELECT u::bytea::bloomfilter = u AS valid, u @> 'x' AS found, bloom_info(u)->'key_kind' AS key_kind,
       jsonb_array_length(bloom_info(u)->'layers') AS layers
FROM (SELECT (bloom_empty_scalable(1, 0.01) || 'x') | f AS u FROM none2) x;
SELECT u::bytea::bloomfilter = u AS valid, u @> 'x' AS found
FROM (SELECT bloom_union_agg(f) AS u
      FROM (SELECT bloom_empty_scalable(1, 0.01) || 'x' UNION ALL SELECT f FROM none2) v(f)) x;
-- anything else is an error
SELECT bloom_empty_scalable(10, 0.01) | bloom_empty_scalable(20, 0.01);
SELECT bloom_empty_scalable(10, 0.01) | bloom_empty_scalable(10, 0.01, 3);
SELECT bloom_empty_scalable(10, 0.01) | bloom_empty(10, 0.01);
SELECT bloom_empty(10, 0.01) | bloom_empty_scalable(10, 0.01);
SELECT (bloom_empty_scalable(10, 0.01) || 1) | (bloom_empty_scalable(10, 0.01) || 'a'::text);
SELECT bloom_empty_scalable(10, 0.01) & bloom_empty_scalable(10, 0.01);
SELECT bloom_intersect_agg(f) FROM (SELECT f FROM s UNION ALL SELECT f FROM s) x;
SELECT bloom_remove(f, 'k1') FROM s;
SELECT f - 'k1' FROM s;
SELECT bloom_agg_transfn(f, 'x'::text, 10, 0.01) FROM s;

-- bad parameters
SELECT bloom_empty_scalable(0);
SELECT bloom_empty_scalable(-5, 0.01);
SELECT bloom_empty_scalable(10, 0);
SELECT bloom_empty_scalable(10, 1);
SELECT bloom_empty_scalable(10, 'NaN');
SELECT bloom_empty_scalable(10, 0.01, 1);
SELECT bloom_empty_scalable(10, 0.01, 101);
SELECT bloom_empty_scalable(10, 0.01, -2);
SELECT bloom_empty_scalable(10, 0.01, 2, 0);
SELECT bloom_empty_scalable(10, 0.01, 2, 1);
SELECT bloom_empty_scalable(10, 0.01, 2, 'Infinity');
SELECT bloom_empty_scalable(10, 0.01, 2, 0.5, 'counting');
SELECT bloom_empty_scalable(10, 0.01, 2, 0.5, 'cuckoo');
SELECT bloom_empty_scalable(10, 1e-300);
SELECT bloom_empty_scalable(1000000000, 0.01);
SELECT bloom_empty_scalable(NULL) IS NULL AS strict;
-- a layer that cannot be made: its rate underflows, or its size passes 1 GB
SELECT bloom_empty_scalable(1, 0.01, 2, 1e-300) || 1 || 2;
-- (a 7 MB first layer of 20,000,000 keys, its added count set to 20,000,000
-- (little-endian at byte 104): the next layer, of 2,000,000,000 keys,
-- would pass 1 GB)
SELECT overlay(bloom_empty_scalable(20000000, 0.5, 100, 0.5)::bytea
               PLACING '\x002d310100000000'::bytea FROM 105)::bloomfilter || 1;
-- or the filter has 64 layers (a value from elsewhere: capacity 1, growth 2,
-- layers of 512 bits; the last, of capacity 2^63, holds 2^63 - 1 keys): the
-- add that needs layer 64 fails, in SQL and in PL/pgSQL, and the filter is
-- unchanged
CREATE FUNCTION pg_temp.le(b bytea) RETURNS bytea LANGUAGE sql AS
$$ SELECT string_agg(substring(b FROM i FOR 1), ''::bytea ORDER BY i DESC) FROM generate_series(1, length(b)) i $$;
CREATE TABLE l64 AS
SELECT ('BLMF'::bytea || '\x01040102000000004000000000800000000000000100000000000000'::bytea
        || pg_temp.le(float8send(0.01)) || '\x00000000000000000200000000000000000000000000e03f'::bytea
        || string_agg('BLMF'::bytea || '\x0101010201000000010000000002000000000000'::bytea
                      || CASE WHEN i = 63 THEN '\x0000000000000080'::bytea
                              ELSE pg_temp.le(int8send((2::numeric ^ i)::bigint)) END
                      || pg_temp.le(float8send(0.005::float8 / 2::float8 ^ i))
                      || CASE WHEN i = 63 THEN '\xffffffffffffff7f'::bytea ELSE '\x0000000000000000'::bytea END
                      || decode(repeat('00', 16 + 64), 'hex'), ''::bytea ORDER BY i))::bloomfilter AS f
FROM generate_series(0, 63) i;
SELECT jsonb_array_length(bloom_info(f)->'layers') AS layers, bloom_info(f)->'layers'->63->'capacity' AS last_capacity
FROM l64;
SELECT f || 'a' @> 'a' AS one_more_fits FROM l64;
SELECT bloom_add_all(f, ARRAY['a', 'b']) FROM l64;
DO $$
DECLARE
	f bloomfilter := (SELECT f FROM l64);
	g bloomfilter := f;
BEGIN
	BEGIN
		f := bloom_add_all(f, ARRAY['a', 'b']);
	EXCEPTION WHEN program_limit_exceeded THEN
		RAISE NOTICE 'caught: %', SQLERRM;
	END;
	RAISE NOTICE 'unchanged: %, a absent: %', f = g, NOT f @> 'a';
	f := f || 'a';
	BEGIN
		f := f || 'b';
	EXCEPTION WHEN program_limit_exceeded THEN
		RAISE NOTICE 'caught: %', SQLERRM;
	END;
	RAISE NOTICE 'a kept: %, b absent: %', f @> 'a', NOT f @> 'b';
END $$;

-- hostile values: text input
SELECT 'version=1 family=scalable layout=blocked key_kind=none layers=65 bits=512 capacity=10 target_fpr=0.01 growth=2 ratio=0.5 added=0 data='::bloomfilter;
SELECT 'version=1 family=scalable layout=blocked key_kind=none layers=1 bits=512 capacity=10 target_fpr=0.01 growth=1 ratio=0.5 added=0 data='::bloomfilter;
SELECT 'version=1 family=scalable layout=blocked key_kind=none layers=1 bits=512 capacity=10 target_fpr=0.01 growth=2 ratio=1 added=0 data='::bloomfilter;
SELECT 'version=1 family=scalable layout=counting key_kind=none layers=1 bits=512 capacity=10 target_fpr=0.01 growth=2 ratio=0.5 added=0 data='::bloomfilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=0 data='::bloomfilter;
SELECT 'version=1 family=scalable layout=blocked key_kind=none layers=1 bits=512 capacity=10 target_fpr=0.01 growth=2 ratio=0.50 added=0 data='::bloomfilter;
SELECT 'version=1 family=scalable layout=blocked key_kind=none layers=1 bits=512 capacity=10 target_fpr=0.01 growth=2 ratio=0.5 added=0 data=AAAA'::bloomfilter;
-- the layer inside must agree with the outer header
SELECT replace(bloom_empty_scalable(10, 0.1)::text, 'capacity=10', 'capacity=11')::bloomfilter;
-- binary: every field, and each layer, validated
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x4100'::bytea FROM 13)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x0700'::bytea FROM 9)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x01000000'::bytea FROM 49)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x01'::bytea FROM 53)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x000000000000f03f'::bytea FROM 57)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x02'::bytea FROM 13)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x04'::bytea FROM 70)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x01'::bytea FROM 72)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x0b'::bytea FROM 89)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x00'::bytea FROM 97)::bloomfilter;
SELECT overlay(bloom_empty_scalable(10, 0.1)::bytea PLACING '\x0004'::bytea FROM 81)::bloomfilter;
SELECT (bloom_empty_scalable(10, 0.1)::bytea || '\x00'::bytea)::bloomfilter;
SELECT substring(bloom_empty_scalable(10, 0.1)::bytea FROM 1 FOR 100)::bloomfilter;
SELECT (substring(bloom_empty_scalable(10, 0.1)::bytea FROM 1 FOR 64) || bloom_empty(10, 0.1)::bytea)::bloomfilter;
