--
-- keys: key kinds and their canonical forms
--
CREATE TABLE k (bf bloomfilter);

-- integers: a key added as one integer type is found as any other
INSERT INTO k VALUES (bloom_empty(100) || 42::int8 || (-7)::int2 || 3000000000::int8);
SELECT bf @> 42::int2 AS i2, bf @> 42::int4 AS i4, bf @> 42::int8 AS i8,
       bf @> 42::oid AS o, bf @> (-7)::int4 AS neg, bf @> 3000000000::oid AS big_oid,
       bf @> 43 AS other, bloom_info(bf)->>'key_kind' AS kind
FROM k;

-- text: text, varchar, char (trailing blanks ignored) and name are one kind
UPDATE k SET bf = bloom_empty(100) || 'abc'::text || ''::text || 'ключ'::text || '鍵🔑'::text;
SELECT bf @> 'abc'::varchar AS vc, bf @> 'abc'::char(6) AS bpchar, bf @> 'abc'::name AS nm,
       bf @> ''::text AS empty, bf @> 'ключ'::text AS cyrillic, bf @> '鍵🔑'::text AS cjk,
       bf @> 'abc '::text AS trailing_blank_text, bf @> 'ABC'::text AS upper
FROM k;

-- bytea
UPDATE k SET bf = bloom_empty(100) || '\x0001ff'::bytea || ''::bytea;
SELECT bf @> '\x0001ff'::bytea AS b1, bf @> ''::bytea AS b_empty, bf @> '\x0001'::bytea AS b_prefix
FROM k;

-- uuid
UPDATE k SET bf = bloom_empty(100) || 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
SELECT bf @> 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid AS u,
       bf @> '00000000-0000-0000-0000-000000000000'::uuid AS nil
FROM k;

-- boolean
UPDATE k SET bf = bloom_empty(10) || true;
SELECT bf @> true AS t, bf @> false AS f FROM k;

-- float: -0 equals 0, float4 widens exactly, every NaN is one key
UPDATE k SET bf = bloom_empty(100) || 0.0::float8 || 'NaN'::float8 || 1.5::float4 || 'Infinity'::float8;
SELECT bf @> '-0'::float8 AS neg_zero, bf @> 'NaN'::float4 AS nan, bf @> 1.5::float8 AS widened,
       bf @> 'Infinity'::float4 AS inf, bf @> 2.5::float8 AS other
FROM k;

-- numeric: equal values with different scales are one key
UPDATE k SET bf = bloom_empty(100) || 1.50::numeric || 100::numeric || 'NaN'::numeric || (-0.0)::numeric;
SELECT bf @> 1.5::numeric AS scale, bf @> 1.500000::numeric AS more_scale,
       bf @> 100.0::numeric AS hundred, bf @> 1::numeric AS one, bf @> 'NaN'::numeric AS nan,
       bf @> 0::numeric AS zero
FROM k;

-- date, timestamp, timestamptz
UPDATE k SET bf = bloom_empty(100) || '2024-02-29'::date;
SELECT bf @> '2024-02-29'::date AS d, bf @> '2024-03-01'::date AS other FROM k;
UPDATE k SET bf = bloom_empty(100) || '2024-02-29 12:00'::timestamp;
SELECT bf @> '2024-02-29 12:00:00.000'::timestamp AS ts FROM k;
SET timezone = 'UTC';
UPDATE k SET bf = bloom_empty(100) || '2024-02-29 12:00+00'::timestamptz;
SELECT bf @> '2024-02-29 14:00+02'::timestamptz AS same_instant FROM k;
RESET timezone;

-- domains use their base type
CREATE DOMAIN username AS text CHECK (VALUE <> '');
UPDATE k SET bf = bloom_empty(100) || 'alice'::username;
SELECT bf @> 'alice'::text AS from_domain, bf @> 'alice'::username AS domain FROM k;

-- a key of another kind than the filter holds is an error, not a silent "no"
SELECT bf @> 42 FROM k;
SELECT bf || 42 FROM k;
SELECT bloom_contains_any(bf, ARRAY[1, 2]) FROM k;
SELECT bloom_add_all(bf, ARRAY[1.5]) FROM k;

-- unsupported key types
SELECT bloom_empty(10) || '1 day'::interval;
SELECT bloom_empty(10) @> ARRAY[1, 2];
SELECT bloom_empty(10) @> point(1, 2);
SELECT bloom_empty(10) || bloom_empty(10);
-- the hint's way out: cast to text
SELECT (bloom_empty(10) || '1 day'::interval::text) @> '1 day'::interval::text AS cast_ok;

-- text under a nondeterministic collation
CREATE COLLATION case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT bloom_empty(10) || ('A' COLLATE case_insensitive);
SELECT bloom_empty(10) @> ('A' COLLATE case_insensitive);
SELECT bloom_agg(x COLLATE case_insensitive, 10) FROM (VALUES ('a')) v(x);
-- normalized and with COLLATE "C" it is accepted
SELECT (bloom_empty(10) || lower('A' COLLATE case_insensitive) COLLATE "C") @> 'a'::text AS normalized;

DROP TABLE k;
DROP DOMAIN username;
DROP COLLATION case_insensitive;
