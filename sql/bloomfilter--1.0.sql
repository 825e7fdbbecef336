/* bloomfilter--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bloomfilter" to load this file. \quit

--
-- The type
--
CREATE TYPE bloomfilter;

CREATE FUNCTION bloomfilter_in(cstring) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloomfilter_in'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomfilter_out(bloomfilter) RETURNS cstring
	AS 'MODULE_PATHNAME', 'bloomfilter_out'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomfilter_recv(internal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloomfilter_recv'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloomfilter_send(bloomfilter) RETURNS bytea
	AS 'MODULE_PATHNAME', 'bloomfilter_send'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The bits are incompressible: external storage skips a futile compression
-- attempt and lets a check read only the slice of a large value it needs.
CREATE TYPE bloomfilter (
	INPUT = bloomfilter_in,
	OUTPUT = bloomfilter_out,
	RECEIVE = bloomfilter_recv,
	SEND = bloomfilter_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = int4,
	STORAGE = external
);

COMMENT ON TYPE bloomfilter IS
	'A Bloom filter: answers "definitely not" or "maybe" for set membership';

--
-- Construction
--
CREATE FUNCTION bloom_empty(capacity bigint, fpr float8 DEFAULT 0.01,
							layout text DEFAULT 'blocked')
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_empty'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty(bigint, float8, text) IS
	'an empty filter sized for capacity keys at false-positive rate fpr; layout blocked (default) or classic';

CREATE FUNCTION bloom_add(bloomfilter, anyelement) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_add'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add(bloomfilter, anyelement) IS
	'the filter with the key added (a NULL key leaves it unchanged)';

-- text overloads: a bare string literal ('alice') has no type of its own, so
-- it cannot resolve an anyelement argument; these accept it as text, and win
-- over the built-in anynonarray || text.
CREATE FUNCTION bloom_add(bloomfilter, text) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_add'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add(bloomfilter, text) IS
	'the filter with the text key added (a NULL key leaves it unchanged)';

CREATE FUNCTION bloom_add_all(bloomfilter, anyarray) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_add_all'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add_all(bloomfilter, anyarray) IS
	'the filter with every non-NULL element of the array added';

--
-- Membership
--
CREATE FUNCTION bloom_contains(bloomfilter, anyelement) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloomfilter, anyelement) IS
	'false if the key was definitely never added, true if it may have been';

CREATE FUNCTION bloom_contained(anyelement, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contained'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contained(anyelement, bloomfilter) IS
	'bloom_contains with the arguments swapped (the <@ operator)';

CREATE FUNCTION bloom_contains(bloomfilter, text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloomfilter, text) IS
	'false if the text key was definitely never added, true if it may have been';

CREATE FUNCTION bloom_contained(text, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contained'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contained(text, bloomfilter) IS
	'bloom_contains with the arguments swapped (the <@ operator)';

CREATE FUNCTION bloom_contains_all(bloomfilter, anyarray) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains_all'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_all(bloomfilter, anyarray) IS
	'true if every element may be in the filter, false if one definitely is not (NULL elements as in = ALL)';

CREATE FUNCTION bloom_contains_any(bloomfilter, anyarray) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains_any'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains_any(bloomfilter, anyarray) IS
	'true if some element may be in the filter, false if none is (NULL elements as in = ANY)';

CREATE FUNCTION bloom_maybe(bloomfilter, anyarray) RETURNS anyarray
	AS 'MODULE_PATHNAME', 'bloom_maybe'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_maybe(bloomfilter, anyarray) IS
	'the elements of the array that may be in the filter, in order, NULLs left out: those that still need a table check';

--
-- Combination and comparison
--
CREATE FUNCTION bloom_union(bloomfilter, bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_union'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_union(bloomfilter, bloomfilter) IS
	'a filter holding the keys of both (same layout, bits, hashes, capacity and fpr required)';

CREATE FUNCTION bloom_intersect(bloomfilter, bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_intersect'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_intersect(bloomfilter, bloomfilter) IS
	'a filter holding (at least) the keys present in both (same parameters required)';

CREATE FUNCTION bloom_eq(bloomfilter, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_eq'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_eq(bloomfilter, bloomfilter) IS
	'true if the two values are identical (parameters, key kind, added count and bits)';

CREATE FUNCTION bloom_ne(bloomfilter, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_ne'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_ne(bloomfilter, bloomfilter) IS
	'true if the two values differ';

--
-- Inspection
--
CREATE FUNCTION bloom_info(bloomfilter) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'bloom_info'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_info(bloomfilter) IS
	'the header fields and estimates of a filter as jsonb';

CREATE FUNCTION bloom_cardinality(bloomfilter) RETURNS float8
	AS 'MODULE_PATHNAME', 'bloom_cardinality'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_cardinality(bloomfilter) IS
	'the number of distinct keys added, estimated from the bits';

CREATE FUNCTION bloom_fpr(bloomfilter) RETURNS float8
	AS 'MODULE_PATHNAME', 'bloom_fpr'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_fpr(bloomfilter) IS
	'the false-positive rate of the filter as it is now, estimated from the bits';

--
-- The portable byte format
--
CREATE FUNCTION bloom_to_bytea(bloomfilter) RETURNS bytea
	AS 'MODULE_PATHNAME', 'bloom_to_bytea'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_to_bytea(bloomfilter) IS
	'the filter in the portable byte format (as the bytea cast)';

CREATE FUNCTION bloom_from_bytea(bytea) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_from_bytea'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_from_bytea(bytea) IS
	'a filter read from the portable byte format, every field validated (as the bytea cast)';

CREATE CAST (bloomfilter AS bytea) WITH FUNCTION bloom_to_bytea(bloomfilter);
COMMENT ON CAST (bloomfilter AS bytea) IS 'the portable byte format';
CREATE CAST (bytea AS bloomfilter) WITH FUNCTION bloom_from_bytea(bytea);
COMMENT ON CAST (bytea AS bloomfilter) IS 'a filter from the portable byte format, validated';

--
-- Operators
--
CREATE OPERATOR || (
	LEFTARG = bloomfilter, RIGHTARG = anyelement,
	FUNCTION = bloom_add
);
COMMENT ON OPERATOR || (bloomfilter, anyelement) IS 'add a key (bloom_add)';

CREATE OPERATOR @> (
	LEFTARG = bloomfilter, RIGHTARG = anyelement,
	FUNCTION = bloom_contains,
	COMMUTATOR = <@,
	RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR @> (bloomfilter, anyelement) IS 'may contain the key (bloom_contains)';

CREATE OPERATOR <@ (
	LEFTARG = anyelement, RIGHTARG = bloomfilter,
	FUNCTION = bloom_contained,
	COMMUTATOR = @>,
	RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR <@ (anyelement, bloomfilter) IS 'key may be in the filter (bloom_contained)';

CREATE OPERATOR || (
	LEFTARG = bloomfilter, RIGHTARG = text,
	FUNCTION = bloom_add
);
COMMENT ON OPERATOR || (bloomfilter, text) IS 'add a text key (bloom_add)';

CREATE OPERATOR @> (
	LEFTARG = bloomfilter, RIGHTARG = text,
	FUNCTION = bloom_contains,
	COMMUTATOR = <@,
	RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR @> (bloomfilter, text) IS 'may contain the text key (bloom_contains)';

CREATE OPERATOR <@ (
	LEFTARG = text, RIGHTARG = bloomfilter,
	FUNCTION = bloom_contained,
	COMMUTATOR = @>,
	RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR <@ (text, bloomfilter) IS 'text key may be in the filter (bloom_contained)';

CREATE OPERATOR | (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_union,
	COMMUTATOR = |
);
COMMENT ON OPERATOR | (bloomfilter, bloomfilter) IS 'union (bloom_union)';

CREATE OPERATOR & (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_intersect,
	COMMUTATOR = &
);
COMMENT ON OPERATOR & (bloomfilter, bloomfilter) IS 'intersection (bloom_intersect)';

CREATE OPERATOR = (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel
);
COMMENT ON OPERATOR = (bloomfilter, bloomfilter) IS 'identical values (bloom_eq)';

CREATE OPERATOR <> (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);
COMMENT ON OPERATOR <> (bloomfilter, bloomfilter) IS 'different values (bloom_ne)';

--
-- Aggregates.  With a capacity (3 and 4 arguments) and for unions and
-- intersections, the state is a bloomfilter updated in place in the
-- aggregate's memory context; partial states combine by bitwise OR, so these
-- aggregates run in parallel and push down to distributed workers.
--
CREATE FUNCTION bloom_agg_transfn(bloomfilter, anyelement, bigint, float8)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_agg_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_transfn(bloomfilter, anyelement, bigint, float8) IS
	'transition function of bloom_agg';

CREATE FUNCTION bloom_agg_transfn(bloomfilter, anyelement, bigint, float8, text)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_agg_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_transfn(bloomfilter, anyelement, bigint, float8, text) IS
	'transition function of bloom_agg';

CREATE FUNCTION bloom_union_transfn(bloomfilter, bloomfilter)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_union_transfn'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_union_transfn(bloomfilter, bloomfilter) IS
	'transition and combine function of bloom_union_agg, combine function of bloom_agg';

CREATE FUNCTION bloom_intersect_transfn(bloomfilter, bloomfilter)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_intersect_transfn'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_intersect_transfn(bloomfilter, bloomfilter) IS
	'transition and combine function of bloom_intersect_agg';

--
-- bloom_agg(key) and bloom_agg(key, capacity_or_fpr): an internal state
-- (src/bf_agg_auto.c), serialized for parallel query, so these two do not
-- push down to Citus workers (the other aggregates do).  A second
-- argument in (0, 1) is a false-positive rate; a whole number >= 1 a
-- capacity at fpr 0.01 (one float8 argument: an integer literal would
-- otherwise resolve to the float8 variant, not to bigint).  Without a
-- capacity the state collects the keys' 64-bit hashes (at most 16 bytes per
-- distinct key, at most 100 million distinct keys) and the final function
-- sizes the filter for exactly the number of distinct keys.
--
CREATE FUNCTION bloom_agg_auto_transfn(internal, anyelement)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_auto_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_auto_transfn(internal, anyelement) IS
	'transition function of bloom_agg(anyelement)';

CREATE FUNCTION bloom_agg_auto_transfn(internal, anyelement, float8)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_auto_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_auto_transfn(internal, anyelement, float8) IS
	'transition function of bloom_agg(anyelement, float8)';

CREATE FUNCTION bloom_agg_auto_finalfn(internal)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_agg_auto_finalfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_auto_finalfn(internal) IS
	'final function of bloom_agg(anyelement) and bloom_agg(anyelement, float8): the filter, sized for the distinct keys when no capacity was given';

CREATE FUNCTION bloom_agg_auto_combinefn(internal, internal)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_auto_combinefn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_auto_combinefn(internal, internal) IS
	'combine function of bloom_agg(anyelement) and bloom_agg(anyelement, float8)';

CREATE FUNCTION bloom_agg_auto_serialfn(internal)
	RETURNS bytea
	AS 'MODULE_PATHNAME', 'bloom_agg_auto_serialfn'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_auto_serialfn(internal) IS
	'serialization function of bloom_agg(anyelement) and bloom_agg(anyelement, float8)';

CREATE FUNCTION bloom_agg_auto_deserialfn(bytea, internal)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'bloom_agg_auto_deserialfn'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_auto_deserialfn(bytea, internal) IS
	'deserialization function of bloom_agg(anyelement) and bloom_agg(anyelement, float8)';

CREATE AGGREGATE bloom_agg(anyelement) (
	SFUNC = bloom_agg_auto_transfn,
	STYPE = internal,
	FINALFUNC = bloom_agg_auto_finalfn,
	COMBINEFUNC = bloom_agg_auto_combinefn,
	SERIALFUNC = bloom_agg_auto_serialfn,
	DESERIALFUNC = bloom_agg_auto_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement) IS
	'a filter of the non-NULL keys, sized for exactly their distinct count at fpr 0.01 (blocked layout)';

CREATE AGGREGATE bloom_agg(anyelement, capacity_or_fpr float8) (
	SFUNC = bloom_agg_auto_transfn,
	STYPE = internal,
	FINALFUNC = bloom_agg_auto_finalfn,
	COMBINEFUNC = bloom_agg_auto_combinefn,
	SERIALFUNC = bloom_agg_auto_serialfn,
	DESERIALFUNC = bloom_agg_auto_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, float8) IS
	'a filter of the non-NULL keys (blocked layout): a value in (0, 1) is the false-positive rate, the filter sized for exactly the distinct keys; a whole number >= 1 is the capacity, at fpr 0.01';

CREATE AGGREGATE bloom_agg(anyelement, capacity bigint, fpr float8) (
	SFUNC = bloom_agg_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, bigint, float8) IS
	'a filter of the non-NULL keys, sized for capacity keys at false-positive rate fpr (blocked layout)';

CREATE AGGREGATE bloom_agg(anyelement, capacity bigint, fpr float8, layout text) (
	SFUNC = bloom_agg_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(anyelement, bigint, float8, text) IS
	'a filter of the non-NULL keys, sized for capacity keys at false-positive rate fpr in the given layout';

CREATE AGGREGATE bloom_union_agg(bloomfilter) (
	SFUNC = bloom_union_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_union_agg(bloomfilter) IS
	'the union of the non-NULL filters';

CREATE AGGREGATE bloom_intersect_agg(bloomfilter) (
	SFUNC = bloom_intersect_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_intersect_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_intersect_agg(bloomfilter) IS
	'the intersection of the non-NULL filters';

--
-- Shared filters (server-resident, kept current by triggers)
--
-- Need shared_preload_libraries = 'bloomfilter'; without it every function
-- below raises SQLSTATE 55000 with a hint (the trigger and the event trigger
-- then do nothing).  Definitions live in the configuration table below (so
-- pg_dump keeps them); the bits live in shared memory and are rebuilt in the
-- background after a restart.
--
CREATE TABLE bloom_shared_definitions (
	id bigserial PRIMARY KEY,
	name text NOT NULL UNIQUE,
	schema_name name NOT NULL,
	table_name name NOT NULL,
	column_name name NOT NULL,
	fpr float8 NOT NULL
		CHECK (fpr OPERATOR(pg_catalog.>) 0::float8 AND fpr OPERATOR(pg_catalog.<) 1::float8),
	capacity bigint CHECK (capacity OPERATOR(pg_catalog.>) 0::bigint),
	UNIQUE (schema_name, table_name, column_name)
);
COMMENT ON TABLE bloom_shared_definitions IS
	'definitions of the shared bloom filters (managed by bloom_guard and bloom_unguard; capacity NULL: sized from the table)';
SELECT pg_catalog.pg_extension_config_dump('bloom_shared_definitions', '');
SELECT pg_catalog.pg_extension_config_dump('bloom_shared_definitions_id_seq', '');
GRANT SELECT ON bloom_shared_definitions TO PUBLIC;

CREATE FUNCTION bloom_guard(rel regclass, col name, fpr float8 DEFAULT 0.01,
							capacity bigint DEFAULT NULL)
	RETURNS text
	AS 'MODULE_PATHNAME', 'bloom_guard'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_guard(regclass, name, float8, bigint) IS
	'guard a column with a shared filter (table owner only): defines it, creates its trigger, builds it in the background without blocking writers; returns its name schema.table.column';

CREATE FUNCTION bloom_unguard(rel regclass, col name) RETURNS void
	AS 'MODULE_PATHNAME', 'bloom_unguard'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_unguard(regclass, name) IS
	'remove the shared filter of a column: its trigger, definition and memory (table owner only)';

CREATE FUNCTION bloom_shared_rebuild(name text) RETURNS void
	AS 'MODULE_PATHNAME', 'bloom_shared_rebuild'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_rebuild(text) IS
	'rebuild a shared filter in the background (table owner only); checks keep answering from the current filter meanwhile; restores the false-positive rate after deletes';

CREATE FUNCTION bloom_shared_wait(name text, timeout_ms int DEFAULT 60000)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_wait'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_wait(text, int) IS
	'wait until the shared filter is ready with no build pending (true) or the timeout passes (false); call it after the transaction that guarded or rebuilt it committed';

CREATE FUNCTION bloom_shared_contains(name text, key anyelement) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_contains'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_contains(text, anyelement) IS
	'false if the key is definitely not in the guarded column; true ("maybe") otherwise, and whenever the filter is not ready; needs SELECT on the column';

CREATE FUNCTION bloom_shared_contains(name text, key text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_contains_text'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_contains(text, text) IS
	'bloom_shared_contains for a string literal (read as the column''s type when the column is not text)';

CREATE FUNCTION bloom_shared_add(name text, key anyelement) RETURNS void
	AS 'MODULE_PATHNAME', 'bloom_shared_add'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_add(text, anyelement) IS
	'add a key to a loaded shared filter (table owner only); lost at the next rebuild unless the key is in the table';

CREATE FUNCTION bloom_shared_add(name text, key text) RETURNS void
	AS 'MODULE_PATHNAME', 'bloom_shared_add_text'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_add(text, text) IS
	'bloom_shared_add for a string literal';

CREATE FUNCTION bloom_shared_get(name text) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_shared_get'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_get(text) IS
	'a snapshot of a ready shared filter as a value; needs SELECT on the column';

CREATE FUNCTION bloom_shared_filters_info(
	OUT name text, OUT definition_id bigint, OUT state text,
	OUT capacity bigint, OUT bits bigint, OUT hashes int, OUT keys_added bigint,
	OUT estimated_fpr float8, OUT memory_bytes bigint, OUT checks bigint,
	OUT negatives bigint, OUT last_build timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bloom_shared_filters_info'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_filters_info() IS
	'the shared filters of this database as held in shared memory (see the view bloom_shared_filters)';

CREATE VIEW bloom_shared_filters AS
	SELECT d.name,
		   pg_catalog.to_regclass(pg_catalog.format('%I.%I', d.schema_name, d.table_name)) AS "table",
		   d.column_name AS "column",
		   coalesce(i.state, CASE WHEN pg_catalog.pg_is_in_recovery() THEN 'standby'
								  ELSE 'not loaded' END) AS state,
		   coalesce(i.capacity, d.capacity) AS capacity,
		   i.bits,
		   i.keys_added,
		   i.estimated_fpr,
		   coalesce(i.memory_bytes, 0) AS memory_bytes,
		   coalesce(i.checks, 0) AS checks,
		   coalesce(i.negatives, 0) AS negatives,
		   CASE WHEN i.checks > 0 THEN i.negatives::float8 / i.checks END AS negative_ratio,
		   i.last_build
	  FROM bloom_shared_definitions d
	  LEFT JOIN bloom_shared_filters_info() i
		ON i.name = d.name AND i.definition_id = d.id;
COMMENT ON VIEW bloom_shared_filters IS
	'shared filters: state (building, ready, rebuilding, not loaded, standby), size, keys added, estimated FPR, checks and "no" answers (negative_ratio: the share of lookups that never reached the table)';
GRANT SELECT ON bloom_shared_filters TO PUBLIC;

CREATE FUNCTION bloom_shared_trigger() RETURNS trigger
	AS 'MODULE_PATHNAME', 'bloom_shared_trigger'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_trigger() IS
	'AFTER INSERT OR UPDATE ... FOR EACH ROW trigger adding the row''s key to a shared filter (argument: the filter name); only on the guarded table or its partitions';

CREATE FUNCTION bloom_shared_ddl() RETURNS event_trigger
	AS 'MODULE_PATHNAME', 'bloom_shared_ddl'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_ddl() IS
	'event trigger: drops the shared filters of dropped tables and columns, follows renames, rebuilds after a column type change';

CREATE EVENT TRIGGER bloom_shared_sql_drop ON sql_drop
	EXECUTE FUNCTION bloom_shared_ddl();
CREATE EVENT TRIGGER bloom_shared_alter_table ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE')
	EXECUTE FUNCTION bloom_shared_ddl();
-- they guard the filters in every session, replication ones included
ALTER EVENT TRIGGER bloom_shared_sql_drop ENABLE ALWAYS;
ALTER EVENT TRIGGER bloom_shared_alter_table ENABLE ALWAYS;
