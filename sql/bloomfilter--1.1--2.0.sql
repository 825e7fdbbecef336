-- bloomfilter 1.1 -> 2.0
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '2.0'" to load this file. \quit

--
-- Guard indexes: the access method bloomguard, whose index is a Bloom filter
-- of its column, kept by PostgreSQL's index maintenance on every write path,
-- WAL-logged, replicated and followed by DDL.
--

CREATE FUNCTION bloomguard_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME', 'bloomguard_handler'
	LANGUAGE C STRICT;
COMMENT ON FUNCTION bloomguard_handler(internal) IS
	'the handler of the bloomguard index access method';

CREATE ACCESS METHOD bloomguard TYPE INDEX HANDLER bloomguard_handler;
COMMENT ON ACCESS METHOD bloomguard IS
	'guard indexes: a Bloom filter of a column, answering whether it may hold a key (never scanned)';

-- One operator family per key kind's equality: a key of any type of a family
-- is hashed by the same canonical bytes (int2, int4 and int8 as int64; float4
-- and float8 as float8).

CREATE OPERATOR FAMILY integer_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY integer_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of int2, int4, int8';
CREATE OPERATOR CLASS int2_bloomguard_ops DEFAULT FOR TYPE int2 USING bloomguard
	FAMILY integer_bloomguard_ops AS
	OPERATOR 1 = (int2, int2);
COMMENT ON OPERATOR CLASS int2_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of int2 columns';
CREATE OPERATOR CLASS int4_bloomguard_ops DEFAULT FOR TYPE int4 USING bloomguard
	FAMILY integer_bloomguard_ops AS
	OPERATOR 1 = (int4, int4);
COMMENT ON OPERATOR CLASS int4_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of int4 columns';
CREATE OPERATOR CLASS int8_bloomguard_ops DEFAULT FOR TYPE int8 USING bloomguard
	FAMILY integer_bloomguard_ops AS
	OPERATOR 1 = (int8, int8);
COMMENT ON OPERATOR CLASS int8_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of int8 columns';
ALTER OPERATOR FAMILY integer_bloomguard_ops USING bloomguard ADD
	OPERATOR 1 = (int2, int4),
	OPERATOR 1 = (int2, int8),
	OPERATOR 1 = (int4, int2),
	OPERATOR 1 = (int4, int8),
	OPERATOR 1 = (int8, int2),
	OPERATOR 1 = (int8, int4);

CREATE OPERATOR FAMILY oid_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY oid_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of oid';
CREATE OPERATOR CLASS oid_bloomguard_ops DEFAULT FOR TYPE oid USING bloomguard
	FAMILY oid_bloomguard_ops AS
	OPERATOR 1 = (oid, oid);
COMMENT ON OPERATOR CLASS oid_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of oid columns';

CREATE OPERATOR FAMILY text_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY text_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of text';
CREATE OPERATOR CLASS text_bloomguard_ops DEFAULT FOR TYPE text USING bloomguard
	FAMILY text_bloomguard_ops AS
	OPERATOR 1 = (text, text);
COMMENT ON OPERATOR CLASS text_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of text columns';

CREATE OPERATOR FAMILY bpchar_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY bpchar_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of bpchar';
CREATE OPERATOR CLASS bpchar_bloomguard_ops DEFAULT FOR TYPE bpchar USING bloomguard
	FAMILY bpchar_bloomguard_ops AS
	OPERATOR 1 = (bpchar, bpchar);
COMMENT ON OPERATOR CLASS bpchar_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of bpchar columns';

CREATE OPERATOR FAMILY name_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY name_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of name';
CREATE OPERATOR CLASS name_bloomguard_ops DEFAULT FOR TYPE name USING bloomguard
	FAMILY name_bloomguard_ops AS
	OPERATOR 1 = (name, name);
COMMENT ON OPERATOR CLASS name_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of name columns';

CREATE OPERATOR FAMILY bytea_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY bytea_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of bytea';
CREATE OPERATOR CLASS bytea_bloomguard_ops DEFAULT FOR TYPE bytea USING bloomguard
	FAMILY bytea_bloomguard_ops AS
	OPERATOR 1 = (bytea, bytea);
COMMENT ON OPERATOR CLASS bytea_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of bytea columns';

CREATE OPERATOR FAMILY uuid_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY uuid_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of uuid';
CREATE OPERATOR CLASS uuid_bloomguard_ops DEFAULT FOR TYPE uuid USING bloomguard
	FAMILY uuid_bloomguard_ops AS
	OPERATOR 1 = (uuid, uuid);
COMMENT ON OPERATOR CLASS uuid_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of uuid columns';

CREATE OPERATOR FAMILY bool_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY bool_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of bool';
CREATE OPERATOR CLASS bool_bloomguard_ops DEFAULT FOR TYPE bool USING bloomguard
	FAMILY bool_bloomguard_ops AS
	OPERATOR 1 = (bool, bool);
COMMENT ON OPERATOR CLASS bool_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of bool columns';

CREATE OPERATOR FAMILY float_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY float_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of float4, float8';
CREATE OPERATOR CLASS float4_bloomguard_ops DEFAULT FOR TYPE float4 USING bloomguard
	FAMILY float_bloomguard_ops AS
	OPERATOR 1 = (float4, float4);
COMMENT ON OPERATOR CLASS float4_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of float4 columns';
CREATE OPERATOR CLASS float8_bloomguard_ops DEFAULT FOR TYPE float8 USING bloomguard
	FAMILY float_bloomguard_ops AS
	OPERATOR 1 = (float8, float8);
COMMENT ON OPERATOR CLASS float8_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of float8 columns';
ALTER OPERATOR FAMILY float_bloomguard_ops USING bloomguard ADD
	OPERATOR 1 = (float4, float8),
	OPERATOR 1 = (float8, float4);

CREATE OPERATOR FAMILY numeric_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY numeric_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of numeric';
CREATE OPERATOR CLASS numeric_bloomguard_ops DEFAULT FOR TYPE numeric USING bloomguard
	FAMILY numeric_bloomguard_ops AS
	OPERATOR 1 = (numeric, numeric);
COMMENT ON OPERATOR CLASS numeric_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of numeric columns';

CREATE OPERATOR FAMILY date_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY date_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of date';
CREATE OPERATOR CLASS date_bloomguard_ops DEFAULT FOR TYPE date USING bloomguard
	FAMILY date_bloomguard_ops AS
	OPERATOR 1 = (date, date);
COMMENT ON OPERATOR CLASS date_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of date columns';

CREATE OPERATOR FAMILY timestamp_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY timestamp_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of timestamp';
CREATE OPERATOR CLASS timestamp_bloomguard_ops DEFAULT FOR TYPE timestamp USING bloomguard
	FAMILY timestamp_bloomguard_ops AS
	OPERATOR 1 = (timestamp, timestamp);
COMMENT ON OPERATOR CLASS timestamp_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of timestamp columns';

CREATE OPERATOR FAMILY timestamptz_bloomguard_ops USING bloomguard;
COMMENT ON OPERATOR FAMILY timestamptz_bloomguard_ops USING bloomguard IS
	'bloomguard: equality of timestamptz';
CREATE OPERATOR CLASS timestamptz_bloomguard_ops DEFAULT FOR TYPE timestamptz USING bloomguard
	FAMILY timestamptz_bloomguard_ops AS
	OPERATOR 1 = (timestamptz, timestamptz);
COMMENT ON OPERATOR CLASS timestamptz_bloomguard_ops USING bloomguard IS
	'bloomguard: guards of timestamptz columns';

CREATE FUNCTION bloom_guard_contains(guard regclass, key anyelement) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_guard_contains'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_guard_contains(regclass, anyelement) IS
	'false if no row of the table holds the key in the guarded column (agreeing with WHERE column = key), true ("maybe") otherwise; needs SELECT on the column';

CREATE FUNCTION bloom_guard_contains(guard regclass, key text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_guard_contains_text'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_guard_contains(regclass, text) IS
	'bloom_guard_contains for a string key, read as the guarded column''s type reads a literal';

CREATE FUNCTION bloom_guard_filter(guard regclass) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_guard_filter'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_guard_filter(regclass) IS
	'the filter of a guard index as a bloomfilter value (scalable, its layers the guard''s); needs SELECT on the column';

CREATE FUNCTION bloom_guard_info(guard regclass,
	OUT layers integer, OUT capacity bigint, OUT added bigint, OUT bytes bigint,
	OUT target_fpr double precision, OUT estimated_fpr double precision)
	AS 'MODULE_PATHNAME', 'bloom_guard_info'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_guard_info(regclass) IS
	'a guard index''s layers, first capacity, keys set, size in bytes, target rate and the rate its fill predicts';

CREATE FUNCTION bloom_guard_elements(guard regclass, keys anyarray) RETURNS anyarray
	AS 'MODULE_PATHNAME', 'bloom_guard_elements'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_guard_elements(regclass, anyarray) IS
	'the keys without those the guard certainly does not hold (NULL elements stay), the keys unchanged whenever it cannot answer or the caller may not check it; the planner puts it in the index condition of an IN list under a gate';
