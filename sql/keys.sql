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

-- Keys agree with PostgreSQL's =: whenever k1 = k2 is true, a filter holding
-- k1 answers "maybe" for k2, or the combination is an error.

-- citext compares case-insensitively: refused however it reaches a filter
-- (its implicit cast to text never picks a text variant), domains included
CREATE EXTENSION IF NOT EXISTS citext;
SELECT 'Alice'::citext = 'ALICE'::citext AS citext_equal;
SELECT bloom_add(bloom_empty(100), 'Alice'::citext);
SELECT bloom_empty(100) || 'Alice'::citext;
SELECT bloom_empty(100) @> 'Alice'::citext;
SELECT 'Alice'::citext <@ bloom_empty(100);
SELECT bloom_contains(bloom_empty(100) || 'alice', 'Alice'::citext);
SELECT bloom_contained('Alice'::citext, bloom_empty(100) || 'alice');
SELECT bloom_add_all(bloom_empty(100), ARRAY['Alice'::citext]);
CREATE DOMAIN ci_name AS citext;
SELECT bloom_empty(100) || 'Alice'::ci_name;
CREATE TABLE ci (name citext);
INSERT INTO ci VALUES ('Alice');
-- bloom_agg's text overloads see the citext column through its implicit cast
-- to text, and refuse it too (a citext constant is folded to a text constant
-- by the planner before any function sees it: that one is a text key)
SELECT bloom_agg(name) FROM ci;
SELECT bloom_agg(name, 0.01) FROM ci;
SELECT bloom_agg(name, 10, 0.01) FROM ci;
SELECT bloom_agg(name, 10, 0.01, 'classic') FROM ci;
-- as window functions too (a window aggregate has no Aggref to look at)
SELECT bloom_agg(name) OVER () FROM ci;
SELECT bloom_agg(name, 0.01) OVER (ORDER BY name) FROM ci;
SELECT bloom_agg(name, 10, 0.01) OVER () FROM ci;
SELECT bloom_agg(name, 10, 0.01, 'classic') OVER (PARTITION BY name) FROM ci;
SELECT (bloom_empty(100) || 'alice') @> name FROM ci;
-- the ways out the hint gives: exact, or case-insensitive by lower()
SELECT (bloom_empty(100) || 'Alice'::citext::text) @> 'Alice'::citext::text AS exact,
       (bloom_empty(100) || lower('Alice'::citext::text)) @> lower('ALICE'::citext::text) AS folded;
DROP TABLE ci;
DROP DOMAIN ci_name;

-- string literals, untyped parameters and text values are text keys
SELECT (bloom_empty(100) || 'alice') @> 'alice'::text AS literal_is_text,
       (bloom_empty(100) || 'alice'::text) @> 'alice' AS text_finds_literal,
       'alice' <@ (bloom_empty(100) || 'alice'::varchar) AS contained,
       bloom_contains(bloom_empty(100) || 'alice'::name, 'alice') AS fn;
PREPARE untyped AS SELECT (bloom_empty(100) || $1) @> $2;
EXECUTE untyped('alice', 'alice');
DEALLOCATE untyped;
SELECT pg_typeof(x) FROM (SELECT 'alice'::bloom_literal) v(x);

-- int2/int4 = oid reads the integer's 32 bits as an oid: -1 = 4294967295
SELECT (-1)::int4 = 4294967295::oid AS i4_eq_oid, (-1)::int2 = 4294967295::oid AS i2_eq_oid;
SELECT (bloom_empty(100) || (-1)::int4) @> 4294967295::oid AS oid_finds_int4,
       (bloom_empty(100) || 4294967295::oid) @> (-1)::int4 AS int4_finds_oid,
       (bloom_empty(100) || 4294967295::oid) @> (-1)::int2 AS int2_finds_oid,
       (bloom_empty(100) || (-2147483648)::int4) @> 2147483648::oid AS int4_min,
       bloom_contains_all(bloom_empty(100) || (-7)::int2, ARRAY[4294967289::oid]) AS batch;
-- and still: the oid 4294967295 is the bigint 4294967295, not -1
SELECT (bloom_empty(100) || 4294967295::int8) @> 4294967295::oid AS oid_finds_int8,
       bloom_info(bloom_empty(100) || 4294967295::oid)->>'key_kind' AS kind;

-- varchar = char(n) ignores trailing blanks; varchar = text does not
SELECT 'ab '::varchar = 'ab'::char(3) AS vc_eq_bpchar, 'ab '::varchar = 'ab'::text AS vc_eq_text;
SELECT (bloom_empty(100) || 'ab '::varchar) @> 'ab'::char(3) AS bpchar_finds_varchar,
       (bloom_empty(100) || 'ab'::char(3)) @> 'ab '::varchar AS varchar_finds_bpchar,
       (bloom_empty(100) || 'ab'::char(3)) @> 'ab   '::varchar AS more_blanks,
       (bloom_empty(100) || 'ab '::varchar) @> 'ab '::text AS text_finds_varchar,
       (bloom_empty(100) || 'ab '::text) @> 'ab '::varchar AS varchar_finds_text,
       (bloom_empty(100) || 'ab '::varchar) @> 'ab '::name AS name_finds_varchar,
       bloom_maybe(bloom_empty(100) || 'ab'::char(3), ARRAY['ab '::varchar, 'x '::varchar]) AS maybe;
-- a varchar key is added without its trailing blanks (as a char(n) key)
SELECT bloom_empty(100) || 'ab '::varchar = bloom_empty(100) || 'ab'::char(3) AS same_bits;
-- a key stored with its blank (a text key; varchar keys were so in 1.0) is
-- found by varchar and text checks of it
SELECT bf @> 'ab '::varchar AS old_varchar, bf @> 'ab '::text AS old_text
FROM (SELECT bloom_empty(100) || 'ab '::text AS bf) AS built_as_10;

-- a string literal compared with a column is read as the column's type:
-- as char(n) without its trailing blanks, as name clipped to 63 bytes
SELECT 'ab  ' = 'ab'::char(4) AS lit_eq_bpchar,
       (bloom_empty(100) || 'ab  ') @> 'ab'::char(4) AS bpchar_finds_literal,
       (bloom_empty(100) || 'ab'::char(4)) @> 'ab  ' AS literal_finds_bpchar,
       'ab  '::text = 'ab'::char(4) AS text_eq_bpchar;
SELECT 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' = repeat('x', 70)::name AS lit_eq_name,
       (bloom_empty(100) || 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')
           @> repeat('x', 70)::name AS name_finds_literal,
       (bloom_empty(100) || repeat('x', 70)::name)
           @> 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' AS literal_finds_name,
       octet_length(repeat('é', 40)::name) AS clipped_bytes;
-- clipped at a character boundary: 31 two-byte characters
SELECT 'éééééééééééééééééééééééééééééééééééééééé' = repeat('é', 40)::name AS mb_lit_eq_name,
       (bloom_empty(100) || 'éééééééééééééééééééééééééééééééééééééééé') @> repeat('é', 40)::name AS mb_name_finds_literal,
       bloom_add(bloom_empty(100), repeat('é', 40)::name) @> 'éééééééééééééééééééééééééééééééééééééééé' AS mb_literal_finds_name,
       bloom_add(bloom_empty(100), repeat('é', 31)::name) @> repeat('é', 40) AS mb_text_finds_name;
-- a text key gets those forms set too (a filter of 1.0 lacks them)
SELECT bloom_info(bloom_empty(100) || 'ab')->>'bits_set' AS short_key,
       bloom_info(bloom_empty(100) || 'ab  ')->>'bits_set' AS blanks,
       bloom_info(bloom_empty(100) || repeat('x', 70))->>'bits_set' AS long_key,
       bloom_info(bloom_empty(100) || 'ab  '::varchar)->>'bits_set' AS varchar_key,
       bloom_info(bloom_empty(100) || repeat('x', 70)::name)->>'bits_set' AS name_key,
       bloom_info(bloom_empty(100) || repeat('x', 70))->>'added' AS added;
-- a filter as 1.0 built it from the text key 'ab  ' (the bits of those
-- bytes only, as a name key sets them): found by itself, not by char(n)
SELECT bf @> 'ab  ' AS finds_itself, bf @> 'ab'::char(4) AS bpchar_not_found
FROM (SELECT bloom_empty(100) || 'ab  '::name AS bf) AS built_by_10;

-- "char" keys are refused (0A000): a literal compared with one keeps its
-- first byte ('a'::"char" = 'abc'), and its text form changed across
-- major versions; key::text is the way
SELECT 'a'::"char" = 'abc' AS char_eq_literal;
SELECT bloom_empty(100) || 'x'::"char";
SELECT bloom_add(bloom_empty(100), 'x'::"char");
SELECT (bloom_empty(100) || 'x'::text) @> 'x'::"char";
SELECT 'x'::"char" <@ bloom_empty(100);
SELECT bloom_add_all(bloom_empty(100), ARRAY['x'::"char"]);
SELECT bloom_contains_any(bloom_empty(100) || 'x', ARRAY['x'::"char"]);
SELECT bloom_agg(c) FROM (VALUES ('x'::"char")) AS v(c);
SELECT bloom_agg(c, 100, 0.01) FROM (VALUES ('x'::"char")) AS v(c);
SELECT (bloom_empty(100) || 'x'::"char"::text) @> 'x' AS cast_to_text;

-- bloom_literal values are text keys, in arrays too
SELECT bloom_contains_any(bloom_empty(100) || 'a', ARRAY['a'::bloom_literal]) AS any_literal,
       bloom_contains_all(bloom_empty(100) || 'a', ARRAY['a', 'b']::bloom_literal[]) AS all_literal,
       bloom_maybe(bloom_empty(100) || 'a', ARRAY['a', 'b']::bloom_literal[]) AS maybe_literal,
       bloom_add_all(bloom_empty(100), ARRAY['a'::bloom_literal]) = bloom_empty(100) || 'a' AS add_all_literal,
       (SELECT bloom_agg(k) FROM (VALUES ('a'::bloom_literal)) AS v(k)) @> 'a' AS agg_literal;

-- numbers, dates and times of different kinds are equal under = but never
-- mix: an error, never a silent "no"
SELECT 1::int4 = 1.0::numeric AS int_eq_numeric, '2024-01-01'::date = '2024-01-01'::timestamp AS date_eq_ts;
SELECT (bloom_empty(100) || 1::int4) @> 1.0::numeric;
SELECT (bloom_empty(100) || 1.0::float8) @> 1::int4;
SELECT (bloom_empty(100) || '2024-01-01'::date) @> '2024-01-01'::timestamp;
SELECT (bloom_empty(100) || 42) @> '42';

DROP TABLE k;
DROP DOMAIN username;
DROP COLLATION case_insensitive;
