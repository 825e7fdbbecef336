/* bloomfilter--1.1.sql */

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
	RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
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
-- String literals and text keys (since 1.1).  A bare string literal
-- ('alice') has no type of its own, so it cannot resolve an anyelement
-- argument: these overloads take it, an untyped parameter and a text value
-- as a text key.  Their type, bloom_literal, is the preferred type of the
-- string category, so a literal and a text value choose these overloads over
-- anyelement (and over the built-in anynonarray || text); it has one cast,
-- the implicit binary one from text.  PostgreSQL never chains two implicit
-- casts, so a value of another type with an implicit cast to text, such as
-- citext, cannot reach these overloads: it takes the anyelement variants and
-- is judged by its own type ('Alice'::citext is refused, never hashed as the
-- text 'Alice').  1.0 had text overloads here, which citext reached.
--
CREATE TYPE bloom_literal;

CREATE FUNCTION bloom_literal_in(cstring) RETURNS bloom_literal
	AS 'textin'
	LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_literal_in(cstring) IS
	'input function of bloom_literal (as text''s)';

CREATE FUNCTION bloom_literal_out(bloom_literal) RETURNS cstring
	AS 'textout'
	LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_literal_out(bloom_literal) IS
	'output function of bloom_literal (as text''s)';

CREATE FUNCTION bloom_literal_recv(internal) RETURNS bloom_literal
	AS 'textrecv'
	LANGUAGE internal STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_literal_recv(internal) IS
	'binary input function of bloom_literal (as text''s)';

CREATE FUNCTION bloom_literal_send(bloom_literal) RETURNS bytea
	AS 'textsend'
	LANGUAGE internal STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_literal_send(bloom_literal) IS
	'binary output function of bloom_literal (as text''s)';

CREATE TYPE bloom_literal (
	INPUT = bloom_literal_in,
	OUTPUT = bloom_literal_out,
	RECEIVE = bloom_literal_recv,
	SEND = bloom_literal_send,
	LIKE = text,
	CATEGORY = 'S',
	PREFERRED = true,
	COLLATABLE = true
);
COMMENT ON TYPE bloom_literal IS
	'a string literal or text value given as a bloomfilter key (a text key); only literals, untyped parameters and text become one';

CREATE CAST (text AS bloom_literal) WITHOUT FUNCTION AS IMPLICIT;
COMMENT ON CAST (text AS bloom_literal) IS
	'a text value as a bloomfilter key (the only cast to bloom_literal: citext and other types do not reach it)';

CREATE FUNCTION bloom_add(bloomfilter, bloom_literal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_add_literal'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_add(bloomfilter, bloom_literal) IS
	'the filter with the string literal added as a text key (a NULL key leaves it unchanged)';

CREATE FUNCTION bloom_contains(bloomfilter, bloom_literal) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contains_literal'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contains(bloomfilter, bloom_literal) IS
	'false if the string literal (a text key) was definitely never added, true if it may have been';

CREATE FUNCTION bloom_contained(bloom_literal, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_contained_literal'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_contained(bloom_literal, bloomfilter) IS
	'bloom_contains with the arguments swapped (the <@ operator)';

CREATE OPERATOR || (
	LEFTARG = bloomfilter, RIGHTARG = bloom_literal,
	FUNCTION = bloom_add
);
COMMENT ON OPERATOR || (bloomfilter, bloom_literal) IS 'add a string literal as a text key (bloom_add)';

CREATE OPERATOR @> (
	LEFTARG = bloomfilter, RIGHTARG = bloom_literal,
	FUNCTION = bloom_contains,
	COMMUTATOR = <@,
	RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR @> (bloomfilter, bloom_literal) IS 'may contain the string literal (bloom_contains)';

CREATE OPERATOR <@ (
	LEFTARG = bloom_literal, RIGHTARG = bloomfilter,
	FUNCTION = bloom_contained,
	COMMUTATOR = @>,
	RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR <@ (bloom_literal, bloomfilter) IS 'string literal may be in the filter (bloom_contained)';

--
-- Ordering and hashing of values (since 1.1), for DISTINCT, GROUP BY,
-- ORDER BY, = on arrays of filters, hash and merge joins, indexes and hash
-- partitions.  The order is that of the bytes of the portable format (the
-- value as stored), unsigned, a prefix first; equal exactly when = is true
-- (byte identity).  The hash is PostgreSQL's hash of those bytes.
--
CREATE FUNCTION bloom_lt(bloomfilter, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_lt'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_lt(bloomfilter, bloomfilter) IS
	'true if the first value sorts before the second (bytewise order of the portable format)';

CREATE FUNCTION bloom_le(bloomfilter, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_le'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_le(bloomfilter, bloomfilter) IS
	'true if the first value sorts before the second or is identical to it';

CREATE FUNCTION bloom_gt(bloomfilter, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_gt'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_gt(bloomfilter, bloomfilter) IS
	'true if the first value sorts after the second (bytewise order of the portable format)';

CREATE FUNCTION bloom_ge(bloomfilter, bloomfilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_ge'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_ge(bloomfilter, bloomfilter) IS
	'true if the first value sorts after the second or is identical to it';

CREATE FUNCTION bloom_cmp(bloomfilter, bloomfilter) RETURNS integer
	AS 'MODULE_PATHNAME', 'bloom_cmp'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_cmp(bloomfilter, bloomfilter) IS
	'-1, 0 or 1 as the first value sorts before, with or after the second (btree support function)';

CREATE FUNCTION bloom_hash(bloomfilter) RETURNS integer
	AS 'MODULE_PATHNAME', 'bloom_hash'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_hash(bloomfilter) IS
	'a hash of the value''s bytes (hash support function; not stable across PostgreSQL versions)';

CREATE FUNCTION bloom_hash_extended(bloomfilter, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME', 'bloom_hash_extended'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION bloom_hash_extended(bloomfilter, bigint) IS
	'a seeded 64-bit hash of the value''s bytes (hash support function)';

CREATE OPERATOR < (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_lt,
	COMMUTATOR = >, NEGATOR = >=,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
COMMENT ON OPERATOR < (bloomfilter, bloomfilter) IS 'sorts before (bloom_lt)';

CREATE OPERATOR <= (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_le,
	COMMUTATOR = >=, NEGATOR = >,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
COMMENT ON OPERATOR <= (bloomfilter, bloomfilter) IS 'sorts before or is identical (bloom_le)';

CREATE OPERATOR > (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_gt,
	COMMUTATOR = <, NEGATOR = <=,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
COMMENT ON OPERATOR > (bloomfilter, bloomfilter) IS 'sorts after (bloom_gt)';

CREATE OPERATOR >= (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloom_ge,
	COMMUTATOR = <=, NEGATOR = <,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);
COMMENT ON OPERATOR >= (bloomfilter, bloomfilter) IS 'sorts after or is identical (bloom_ge)';

CREATE OPERATOR CLASS bloomfilter_ops
	DEFAULT FOR TYPE bloomfilter USING btree AS
		OPERATOR 1 <,
		OPERATOR 2 <=,
		OPERATOR 3 =,
		OPERATOR 4 >=,
		OPERATOR 5 >,
		FUNCTION 1 bloom_cmp(bloomfilter, bloomfilter);
COMMENT ON OPERATOR CLASS bloomfilter_ops USING btree IS
	'bytewise order of the portable format; = is byte identity';
COMMENT ON OPERATOR FAMILY bloomfilter_ops USING btree IS
	'the family of the btree operator class bloomfilter_ops';

CREATE OPERATOR CLASS bloomfilter_ops
	DEFAULT FOR TYPE bloomfilter USING hash AS
		OPERATOR 1 =,
		FUNCTION 1 bloom_hash(bloomfilter),
		FUNCTION 2 bloom_hash_extended(bloomfilter, bigint);
COMMENT ON OPERATOR CLASS bloomfilter_ops USING hash IS
	'hash of the value''s bytes; = is byte identity';
COMMENT ON OPERATOR FAMILY bloomfilter_ops USING hash IS
	'the family of the hash operator class bloomfilter_ops';

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
-- (src/bf_agg_auto.c), serialized for parallel query.  The anyelement forms
-- (these two and the two sized ones below) serve key types without
-- overloads of their own (every supported key type has them, further
-- below); they do not push down to Citus workers.  A second
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

--
-- bloom_agg for keys of each supported type: one overload of each form per
-- type, on the same C functions, the key's own type chosen (a domain takes
-- its base type's).  A distributed planner (Citus) calls a transition
-- function without the call's expression and requires an aggregate's
-- declared argument types to be the actual ones; these take the key type
-- from their declaration.  The self-sizing forms keep their state in the
-- type bloom_agg_state (src/bf_agg_state.c): a real type with text and
-- binary I/O, whose partial states a distributed planner can ship and
-- combine.  Types without an overload (unsupported ones, bloom_literal) use
-- the anyelement forms above.
--
CREATE TYPE bloom_agg_state;

CREATE FUNCTION bloom_agg_state_in(cstring)
	RETURNS bloom_agg_state
	AS 'MODULE_PATHNAME', 'bloom_agg_state_in'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_in(cstring) IS
	'input function of bloom_agg_state (base64)';

CREATE FUNCTION bloom_agg_state_out(bloom_agg_state)
	RETURNS cstring
	AS 'MODULE_PATHNAME', 'bloom_agg_state_out'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_out(bloom_agg_state) IS
	'output function of bloom_agg_state (base64)';

CREATE FUNCTION bloom_agg_state_recv(internal)
	RETURNS bloom_agg_state
	AS 'MODULE_PATHNAME', 'bloom_agg_state_recv'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_recv(internal) IS
	'binary input function of bloom_agg_state';

CREATE FUNCTION bloom_agg_state_send(bloom_agg_state)
	RETURNS bytea
	AS 'MODULE_PATHNAME', 'bloom_agg_state_send'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_send(bloom_agg_state) IS
	'binary output function of bloom_agg_state';

CREATE TYPE bloom_agg_state (
	INPUT = bloom_agg_state_in,
	OUTPUT = bloom_agg_state_out,
	RECEIVE = bloom_agg_state_recv,
	SEND = bloom_agg_state_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = external
);
COMMENT ON TYPE bloom_agg_state IS
	'partial state of the self-sizing bloom_agg: the distinct key hashes, or a filter sized for a capacity';

CREATE FUNCTION bloom_agg_state_combinefn(bloom_agg_state, bloom_agg_state)
	RETURNS bloom_agg_state
	AS 'MODULE_PATHNAME', 'bloom_agg_state_combinefn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_combinefn(bloom_agg_state, bloom_agg_state) IS
	'combine function of the self-sizing bloom_agg with a bloom_agg_state';

CREATE FUNCTION bloom_agg_state_finalfn(bloom_agg_state)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_agg_state_finalfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_finalfn(bloom_agg_state) IS
	'final function of the self-sizing bloom_agg with a bloom_agg_state: the filter, sized for the distinct keys when no capacity was given';

-- The overloads: the same eight definitions (four transition functions, four
-- aggregates) for every key type of the list, %1$s standing for the type.
-- The list is fixed here, and a regtype prints as a valid, quoted type name,
-- so the statements are these definitions and nothing else.  Objects an
-- extension script creates this way are members of the extension.  "char"
-- has overloads so that it is refused as such (bf_key_check_value), not cast.
DO $overloads$
DECLARE
	key_type regtype;
BEGIN
	FOREACH key_type IN ARRAY ARRAY[
		'smallint', 'integer', 'bigint', 'oid',
		'text', 'character varying', 'character', 'name', '"char"',
		'bytea', 'uuid', 'boolean', 'real', 'double precision', 'numeric',
		'date', 'timestamp without time zone', 'timestamp with time zone']::regtype[]
	LOOP
		EXECUTE format($ddl$
CREATE FUNCTION bloom_agg_state_transfn(bloom_agg_state, %1$s)
	RETURNS bloom_agg_state
	AS 'MODULE_PATHNAME', 'bloom_agg_state_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_transfn(bloom_agg_state, %1$s) IS
	'transition function of bloom_agg(key)';

CREATE FUNCTION bloom_agg_state_transfn(bloom_agg_state, %1$s, float8)
	RETURNS bloom_agg_state
	AS 'MODULE_PATHNAME', 'bloom_agg_state_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_state_transfn(bloom_agg_state, %1$s, float8) IS
	'transition function of bloom_agg(key, capacity_or_fpr)';

CREATE FUNCTION bloom_agg_transfn(bloomfilter, %1$s, bigint, float8)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_agg_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_transfn(bloomfilter, %1$s, bigint, float8) IS
	'transition function of bloom_agg(key, capacity, fpr)';

CREATE FUNCTION bloom_agg_transfn(bloomfilter, %1$s, bigint, float8, text)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_agg_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_agg_transfn(bloomfilter, %1$s, bigint, float8, text) IS
	'transition function of bloom_agg(key, capacity, fpr, layout)';

CREATE AGGREGATE bloom_agg(%1$s) (
	SFUNC = bloom_agg_state_transfn,
	STYPE = bloom_agg_state,
	FINALFUNC = bloom_agg_state_finalfn,
	COMBINEFUNC = bloom_agg_state_combinefn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(%1$s) IS
	'a filter of the non-NULL keys, sized for exactly their distinct count at fpr 0.01 (blocked layout)';

CREATE AGGREGATE bloom_agg(%1$s, capacity_or_fpr float8) (
	SFUNC = bloom_agg_state_transfn,
	STYPE = bloom_agg_state,
	FINALFUNC = bloom_agg_state_finalfn,
	COMBINEFUNC = bloom_agg_state_combinefn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(%1$s, float8) IS
	'a filter of the non-NULL keys (blocked layout): a value in (0, 1) is the false-positive rate, the filter sized for exactly the distinct keys; a whole number >= 1 is the capacity, at fpr 0.01';

CREATE AGGREGATE bloom_agg(%1$s, capacity bigint, fpr float8) (
	SFUNC = bloom_agg_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(%1$s, bigint, float8) IS
	'a filter of the non-NULL keys, sized for capacity keys at false-positive rate fpr (blocked layout)';

CREATE AGGREGATE bloom_agg(%1$s, capacity bigint, fpr float8, layout text) (
	SFUNC = bloom_agg_transfn,
	STYPE = bloomfilter,
	COMBINEFUNC = bloom_union_transfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bloom_agg(%1$s, bigint, float8, text) IS
	'a filter of the non-NULL keys, sized for capacity keys at false-positive rate fpr in the given layout';
$ddl$, key_type);
	END LOOP;
END
$overloads$;

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
	rel regclass NOT NULL,
	column_name name NOT NULL,
	fpr float8 NOT NULL
		CHECK (fpr OPERATOR(pg_catalog.>) 0::float8 AND fpr OPERATOR(pg_catalog.<) 1::float8),
	capacity bigint CHECK (capacity OPERATOR(pg_catalog.>) 0::bigint),
	layout text NOT NULL DEFAULT 'blocked'
		CHECK (layout OPERATOR(pg_catalog.=) ANY (ARRAY['blocked'::text, 'counting'::text, 'cuckoo'::text])),
	UNIQUE (rel, column_name)
);
COMMENT ON TABLE bloom_shared_definitions IS
	'definitions of the shared bloom filters (managed by bloom_guard and bloom_unguard; rel: the guarded table by OID; capacity NULL: sized from the table; layout blocked, or counting or cuckoo: keys of deleted rows are removed)';
SELECT pg_catalog.pg_extension_config_dump('bloom_shared_definitions', '');
SELECT pg_catalog.pg_extension_config_dump('bloom_shared_definitions_id_seq', '');
GRANT SELECT ON bloom_shared_definitions TO PUBLIC;

CREATE FUNCTION bloom_guard(rel regclass, col name, fpr float8 DEFAULT 0.01,
							capacity bigint DEFAULT NULL, layout text DEFAULT 'blocked')
	RETURNS text
	AS 'MODULE_PATHNAME', 'bloom_guard'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_guard(regclass, name, float8, bigint, text) IS
	'guard a column with a shared filter (table owner only): defines it, creates its trigger, builds it in the background without blocking writers; layouts counting and cuckoo also remove the keys of deleted rows; returns its name "schema"."table"."column"';

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

CREATE FUNCTION bloom_shared_contains(name text, key anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_contains'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_contains(text, anycompatible) IS
	'false if no committed row holds the key (agreeing with WHERE column = key); true ("maybe") otherwise, and whenever the filter is not ready; needs SELECT on the column';

CREATE FUNCTION bloom_shared_add(name text, key anycompatible) RETURNS void
	AS 'MODULE_PATHNAME', 'bloom_shared_add'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_add(text, anycompatible) IS
	'add a key to a loaded shared filter (table owner only); lost at the next rebuild unless the key is in the table';

CREATE FUNCTION bloom_shared_get(name text) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_shared_get'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_get(text) IS
	'a snapshot of a ready shared filter as a value; needs SELECT on the column';

CREATE FUNCTION bloom_shared_filters_info(
	OUT name text, OUT definition_id bigint, OUT state text,
	OUT capacity bigint, OUT bits bigint, OUT hashes int, OUT keys_added bigint,
	OUT estimated_fpr float8, OUT memory_bytes bigint, OUT checks bigint,
	OUT negatives bigint, OUT last_build timestamptz, OUT last_error text,
	OUT next_try timestamptz, OUT keys_removed bigint, OUT removals_pending bigint,
	OUT removals_dropped bigint, OUT layers int, OUT partition regclass)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bloom_shared_filters_info'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_filters_info() IS
	'the shared filters of this database as held in shared memory, one row per filter (a table guarded per partition has one per partition: partition; see the view bloom_shared_filters)';

CREATE FUNCTION bloom_shared_gate(definition_id bigint, key anyelement) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_gate'
	LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_gate(bigint, anyelement) IS
	'planner guard: false when the shared filter of the definition certainly holds no key equal to key, true ("maybe") otherwise and whenever it cannot be sure (added by the planner as a One-Time Filter; see bloomfilter.planner_guards)';

CREATE FUNCTION bloom_shared_gate_any(definition_id bigint, keys anyarray) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_gate_any'
	LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_gate_any(bigint, anyarray) IS
	'planner guard for column = ANY (keys): false when the shared filter of the definition certainly holds none of the keys, true ("maybe") otherwise';

CREATE FUNCTION bloom_shared_gate(definition_id bigint, partition regclass, key anyelement)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_gate'
	LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_gate(bigint, regclass, anyelement) IS
	'planner guard of a partition of a table guarded per partition: false when that partition''s shared filter certainly holds no key equal to key, true ("maybe") otherwise';

CREATE FUNCTION bloom_shared_gate_any(definition_id bigint, partition regclass, keys anyarray)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'bloom_shared_gate_any'
	LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_gate_any(bigint, regclass, anyarray) IS
	'planner guard of a partition of a table guarded per partition, for column = ANY (keys): false when that partition''s shared filter certainly holds none of the keys, true ("maybe") otherwise';

CREATE FUNCTION bloom_shared_gate_elements(definition_id bigint, keys anyarray) RETURNS anyarray
	AS 'MODULE_PATHNAME', 'bloom_shared_gate_elements'
	LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_gate_elements(bigint, anyarray) IS
	'planner guard for an index condition column = ANY (keys): the keys without those the shared filter of the definition certainly does not hold, all keys whenever it cannot be sure (added by the planner under a gate; see bloomfilter.planner_guards)';

CREATE FUNCTION bloom_shared_gate_elements(definition_id bigint, partition regclass, keys anyarray)
	RETURNS anyarray
	AS 'MODULE_PATHNAME', 'bloom_shared_gate_elements'
	LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_gate_elements(bigint, regclass, anyarray) IS
	'planner guard of a partition of a table guarded per partition, for an index condition column = ANY (keys): the keys without those that partition''s shared filter certainly does not hold';

CREATE FUNCTION bloom_shared_skipped_scans(definition_id bigint) RETURNS bigint
	AS 'MODULE_PATHNAME', 'bloom_shared_skipped_scans'
	LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_skipped_scans(bigint) IS
	'scans skipped by planner guards on the definition''s filter since it was loaded (see the view bloom_shared_filters)';

CREATE VIEW bloom_shared_filters AS
	SELECT d.name,
		   d.rel AS "table",
		   d.column_name AS "column",
		   CASE WHEN i.state OPERATOR(pg_catalog.=) ANY (ARRAY['ready', 'rebuilding', 'rebuild failed'])
					 AND i.partitions OPERATOR(pg_catalog.<)
						 (SELECT pg_catalog.count(*) FROM pg_catalog.pg_partition_tree(d.rel) t
						   WHERE t.isleaf)
				THEN 'incomplete'
				ELSE coalesce(i.state, CASE WHEN pg_catalog.pg_is_in_recovery() THEN 'standby'
											ELSE 'not loaded' END) END AS state,
		   coalesce(i.capacity, d.capacity) AS capacity,
		   i.bits,
		   i.layers,
		   i.keys_added,
		   i.estimated_fpr,
		   coalesce(i.memory_bytes, 0) AS memory_bytes,
		   coalesce(i.checks, 0) AS checks,
		   coalesce(i.negatives, 0) AS negatives,
		   CASE WHEN i.checks OPERATOR(pg_catalog.>) 0
				THEN i.negatives::float8 OPERATOR(pg_catalog./) i.checks END AS negative_ratio,
		   i.last_build,
		   i.last_error,
		   i.next_try,
		   d.layout,
		   i.keys_removed,
		   coalesce(i.removals_pending, 0) AS removals_pending,
		   coalesce(i.removals_dropped, 0) AS removals_dropped,
		   bloom_shared_skipped_scans(d.id) AS skipped_scans,
		   i.partitions
	  FROM bloom_shared_definitions d
	  LEFT JOIN (
		SELECT f.definition_id,
			   CASE WHEN pg_catalog.count(f.partition) OPERATOR(pg_catalog.=) 0
						THEN pg_catalog.min(f.state)
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'hidden') THEN 'hidden'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'standby') THEN 'standby'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'suspended') THEN 'suspended'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'failed') THEN 'failed'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'full') THEN 'full'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'building') THEN 'building'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'not loaded') THEN 'not loaded'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'rebuild failed') THEN 'rebuild failed'
					WHEN pg_catalog.bool_or(f.state OPERATOR(pg_catalog.=) 'rebuilding') THEN 'rebuilding'
					ELSE 'ready' END AS state,
			   pg_catalog.sum(f.capacity)::bigint AS capacity,
			   pg_catalog.sum(f.bits)::bigint AS bits,
			   pg_catalog.max(f.layers) AS layers,
			   pg_catalog.max(f.hashes) AS hashes,
			   pg_catalog.sum(f.keys_added)::bigint AS keys_added,
			   pg_catalog.max(f.estimated_fpr) AS estimated_fpr,
			   pg_catalog.sum(f.memory_bytes)::bigint AS memory_bytes,
			   pg_catalog.sum(f.checks)::bigint AS checks,
			   pg_catalog.sum(f.negatives)::bigint AS negatives,
			   pg_catalog.max(f.last_build) AS last_build,
			   pg_catalog.max(f.last_error) AS last_error,
			   pg_catalog.min(f.next_try) AS next_try,
			   pg_catalog.sum(f.keys_removed)::bigint AS keys_removed,
			   pg_catalog.sum(f.removals_pending)::bigint AS removals_pending,
			   pg_catalog.sum(f.removals_dropped)::bigint AS removals_dropped,
			   NULLIF(pg_catalog.count(f.partition), 0)::int AS partitions
		  FROM bloom_shared_filters_info() f
		 GROUP BY f.definition_id) i
		ON i.definition_id OPERATOR(pg_catalog.=) d.id;
COMMENT ON VIEW bloom_shared_filters IS
	'shared filters: state (building, ready, rebuilding, rebuild failed, incomplete (partitions without a filter), suspended, full, failed, not loaded, standby), size (layers: the most of a guard''s filters, 1, one more per growth without a rebuild), keys added, estimated FPR, checks and "no" answers (negative_ratio: the share of lookups that never reached the table), the last build error and when the build is retried; for a counting or cuckoo filter, keys removed, removals waiting for their transactions and the xmin horizon, and removals dropped (their keys stay); scans skipped by planner guards (of the whole guard); for a table guarded per partition, the sum (the highest rate, the worst state) over its partitions'' filters (partitions; one row each in bloom_shared_filters_info())';
GRANT SELECT ON bloom_shared_filters TO PUBLIC;

CREATE FUNCTION bloom_shared_trigger() RETURNS trigger
	AS 'MODULE_PATHNAME', 'bloom_shared_trigger'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_trigger() IS
	'AFTER INSERT OR UPDATE [OR DELETE] ... FOR EACH ROW trigger adding the row''s key to a shared filter (argument: the filter name), and for a counting filter queuing the removal of a deleted or changed key; created by bloom_guard on the guarded table and its inheritance children';

CREATE FUNCTION bloom_shared_ddl() RETURNS event_trigger
	AS 'MODULE_PATHNAME', 'bloom_shared_ddl'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_shared_ddl() IS
	'event trigger: keeps guards sound through DDL (drops, renames, type changes, partitions and inheritance children, the guard triggers themselves)';

CREATE EVENT TRIGGER bloom_shared_sql_drop ON sql_drop
	EXECUTE FUNCTION bloom_shared_ddl();
CREATE EVENT TRIGGER bloom_shared_ddl_command_end ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE', 'CREATE FOREIGN TABLE',
				 'ALTER FOREIGN TABLE', 'CREATE TRIGGER', 'ALTER TRIGGER')
	EXECUTE FUNCTION bloom_shared_ddl();
-- they guard the filters in every session, replication ones included
ALTER EVENT TRIGGER bloom_shared_sql_drop ENABLE ALWAYS;
COMMENT ON EVENT TRIGGER bloom_shared_sql_drop IS
	'removes the guards of dropped tables and columns, reviews the guards whose triggers were dropped (see bloom_shared_ddl)';
ALTER EVENT TRIGGER bloom_shared_ddl_command_end ENABLE ALWAYS;
COMMENT ON EVENT TRIGGER bloom_shared_ddl_command_end IS
	'reviews the guards a command touched: repairs, suspends, removes or refuses (see bloom_shared_ddl)';


--
-- The backend-local cache of stored filters (src/bf_cache.c).
--
CREATE FUNCTION bloom_cache_stats(OUT entries bigint, OUT bytes bigint,
								  OUT pinned bigint, OUT reads bigint,
								  OUT shared_hits bigint)
	AS 'MODULE_PATHNAME', 'bloom_cache_stats'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_cache_stats() IS
	'this backend''s cache of stored filters: entries and their bytes now, entries in use by a call site, and since the backend started the stored filters read whole into it and the times a call site found one another had read';

--
-- ==== Counting filters (layout 'counting'): removing keys ====
--
COMMENT ON FUNCTION bloom_empty(bigint, float8, text) IS
	'an empty filter sized for capacity keys at false-positive rate fpr; layout blocked (default), classic, or counting (4-bit counters: keys can be removed)';

CREATE FUNCTION bloom_remove(bloomfilter, anyelement) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_remove'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_remove(bloomfilter, anyelement) IS
	'the counting filter with one occurrence of the key removed (a NULL key leaves it unchanged); an error for a key the filter says is absent';

CREATE FUNCTION bloom_remove(bloomfilter, bloom_literal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_remove_literal'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_remove(bloomfilter, bloom_literal) IS
	'the counting filter with one occurrence of the string literal (a text key) removed';

CREATE OPERATOR - (
	LEFTARG = bloomfilter, RIGHTARG = anyelement,
	FUNCTION = bloom_remove
);
COMMENT ON OPERATOR - (bloomfilter, anyelement) IS 'remove a key from a counting filter (bloom_remove)';

CREATE OPERATOR - (
	LEFTARG = bloomfilter, RIGHTARG = bloom_literal,
	FUNCTION = bloom_remove
);
COMMENT ON OPERATOR - (bloomfilter, bloom_literal) IS 'remove a string literal (a text key) from a counting filter (bloom_remove)';

--
-- ==== Cuckoo filters (type cuckoofilter): membership with removal and counts ====
--
CREATE TYPE cuckoofilter;

CREATE FUNCTION cuckoofilter_in(cstring) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoofilter_in'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoofilter_in(cstring) IS 'text input of a cuckoofilter (every field validated)';
CREATE FUNCTION cuckoofilter_out(cuckoofilter) RETURNS cstring
	AS 'MODULE_PATHNAME', 'cuckoofilter_out'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoofilter_out(cuckoofilter) IS 'text output of a cuckoofilter';
CREATE FUNCTION cuckoofilter_recv(internal) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoofilter_recv'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoofilter_recv(internal) IS 'binary input of a cuckoofilter (the portable format, validated)';
CREATE FUNCTION cuckoofilter_send(cuckoofilter) RETURNS bytea
	AS 'MODULE_PATHNAME', 'cuckoofilter_send'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoofilter_send(cuckoofilter) IS 'binary output of a cuckoofilter (the portable format)';

CREATE TYPE cuckoofilter (
	INPUT = cuckoofilter_in,
	OUTPUT = cuckoofilter_out,
	RECEIVE = cuckoofilter_recv,
	SEND = cuckoofilter_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = int4,
	STORAGE = external
);
COMMENT ON TYPE cuckoofilter IS
	'A cuckoo filter: "definitely not" or "maybe" for set membership, with removal and counts';

CREATE FUNCTION cuckoo_to_bytea(cuckoofilter) RETURNS bytea
	AS 'MODULE_PATHNAME', 'cuckoo_to_bytea'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_to_bytea(cuckoofilter) IS 'the portable byte format of a cuckoofilter';
CREATE FUNCTION cuckoo_from_bytea(bytea) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoo_from_bytea'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_from_bytea(bytea) IS 'a cuckoofilter from the portable byte format (every field validated)';
CREATE CAST (cuckoofilter AS bytea) WITH FUNCTION cuckoo_to_bytea(cuckoofilter);
COMMENT ON CAST (cuckoofilter AS bytea) IS 'the portable byte format';
CREATE CAST (bytea AS cuckoofilter) WITH FUNCTION cuckoo_from_bytea(bytea);
COMMENT ON CAST (bytea AS cuckoofilter) IS 'a cuckoofilter from the portable byte format';

CREATE FUNCTION cuckoo_empty(capacity bigint, fpr float8 DEFAULT 0.01) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoo_empty'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_empty(bigint, float8) IS
	'an empty cuckoo filter for capacity keys (at 95% load) whose fingerprints give at most rate fpr';

CREATE FUNCTION cuckoo_add(cuckoofilter, anyelement) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoo_add'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_add(cuckoofilter, anyelement) IS
	'the filter with one more copy of the key (a NULL key leaves it unchanged); an error when it is full';
CREATE FUNCTION cuckoo_add(cuckoofilter, bloom_literal) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoo_add_literal'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_add(cuckoofilter, bloom_literal) IS
	'the filter with the string literal added as a text key';
CREATE FUNCTION cuckoo_remove(cuckoofilter, anyelement) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoo_remove'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_remove(cuckoofilter, anyelement) IS
	'the filter with one copy of the key removed (a NULL key leaves it unchanged); an error when it has none';
CREATE FUNCTION cuckoo_remove(cuckoofilter, bloom_literal) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoo_remove_literal'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_remove(cuckoofilter, bloom_literal) IS
	'the filter with one copy of the string literal (a text key) removed';
CREATE FUNCTION cuckoo_contains(cuckoofilter, anyelement) RETURNS boolean
	AS 'MODULE_PATHNAME', 'cuckoo_contains'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_contains(cuckoofilter, anyelement) IS
	'false if the key is definitely not in the filter, true if it may be';
CREATE FUNCTION cuckoo_contains(cuckoofilter, bloom_literal) RETURNS boolean
	AS 'MODULE_PATHNAME', 'cuckoo_contains_literal'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_contains(cuckoofilter, bloom_literal) IS
	'false if the string literal (a text key) is definitely not in the filter, true if it may be';
CREATE FUNCTION cuckoo_contained(anyelement, cuckoofilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'cuckoo_contained'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_contained(anyelement, cuckoofilter) IS 'cuckoo_contains with the arguments swapped (the <@ operator)';
CREATE FUNCTION cuckoo_contained(bloom_literal, cuckoofilter) RETURNS boolean
	AS 'MODULE_PATHNAME', 'cuckoo_contained_literal'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_contained(bloom_literal, cuckoofilter) IS 'cuckoo_contains with the arguments swapped (the <@ operator)';
CREATE FUNCTION cuckoo_count(cuckoofilter, anyelement) RETURNS integer
	AS 'MODULE_PATHNAME', 'cuckoo_count'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_count(cuckoofilter, anyelement) IS
	'copies of the key''s fingerprint in its buckets: the times it was added less removed (more for a false positive)';
CREATE FUNCTION cuckoo_count(cuckoofilter, bloom_literal) RETURNS integer
	AS 'MODULE_PATHNAME', 'cuckoo_count_literal'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_count(cuckoofilter, bloom_literal) IS
	'copies of the string literal''s fingerprint (a text key)';
CREATE FUNCTION cuckoo_info(cuckoofilter) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'cuckoo_info'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_info(cuckoofilter) IS
	'fingerprint bits, buckets, slots, bytes, key kind, capacity, target rate, count, load and the estimated rate';

CREATE OPERATOR || (LEFTARG = cuckoofilter, RIGHTARG = anyelement, FUNCTION = cuckoo_add);
COMMENT ON OPERATOR || (cuckoofilter, anyelement) IS 'add a key (cuckoo_add)';
CREATE OPERATOR || (LEFTARG = cuckoofilter, RIGHTARG = bloom_literal, FUNCTION = cuckoo_add);
COMMENT ON OPERATOR || (cuckoofilter, bloom_literal) IS 'add a string literal as a text key (cuckoo_add)';
CREATE OPERATOR - (LEFTARG = cuckoofilter, RIGHTARG = anyelement, FUNCTION = cuckoo_remove);
COMMENT ON OPERATOR - (cuckoofilter, anyelement) IS 'remove a key (cuckoo_remove)';
CREATE OPERATOR - (LEFTARG = cuckoofilter, RIGHTARG = bloom_literal, FUNCTION = cuckoo_remove);
COMMENT ON OPERATOR - (cuckoofilter, bloom_literal) IS 'remove a string literal (a text key) (cuckoo_remove)';
CREATE OPERATOR @> (
	LEFTARG = cuckoofilter, RIGHTARG = anyelement, FUNCTION = cuckoo_contains,
	COMMUTATOR = <@, RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR @> (cuckoofilter, anyelement) IS 'may contain the key (cuckoo_contains)';
CREATE OPERATOR <@ (
	LEFTARG = anyelement, RIGHTARG = cuckoofilter, FUNCTION = cuckoo_contained,
	COMMUTATOR = @>, RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR <@ (anyelement, cuckoofilter) IS 'key may be in the filter (cuckoo_contained)';
CREATE OPERATOR @> (
	LEFTARG = cuckoofilter, RIGHTARG = bloom_literal, FUNCTION = cuckoo_contains,
	COMMUTATOR = <@, RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR @> (cuckoofilter, bloom_literal) IS 'may contain the string literal (cuckoo_contains)';
CREATE OPERATOR <@ (
	LEFTARG = bloom_literal, RIGHTARG = cuckoofilter, FUNCTION = cuckoo_contained,
	COMMUTATOR = @>, RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR <@ (bloom_literal, cuckoofilter) IS 'string literal may be in the filter (cuckoo_contained)';

CREATE FUNCTION cuckoo_agg_transfn(cuckoofilter, anyelement, bigint, float8) RETURNS cuckoofilter
	AS 'MODULE_PATHNAME', 'cuckoo_agg_transfn'
	LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION cuckoo_agg_transfn(cuckoofilter, anyelement, bigint, float8) IS
	'transition function of cuckoo_agg (not for direct use)';
CREATE AGGREGATE cuckoo_agg(key anyelement, capacity bigint, fpr float8) (
	SFUNC = cuckoo_agg_transfn,
	STYPE = cuckoofilter,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE cuckoo_agg(anyelement, bigint, float8) IS
	'a cuckoo filter of the non-NULL keys, sized for capacity at fpr; an error if it fills up; no rows give NULL';

-- scalable Bloom filters (format family 4)
CREATE FUNCTION bloom_empty_scalable(initial_capacity bigint DEFAULT 1000,
									 fpr float8 DEFAULT 0.01,
									 growth int DEFAULT 2,
									 ratio float8 DEFAULT 0.5,
									 layout text DEFAULT 'blocked')
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bloom_empty_scalable'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_empty_scalable(bigint, float8, int, float8, text) IS
	'an empty scalable filter: a layer of initial_capacity keys, and a new layer of growth times the capacity and ratio times the rate whenever the last is full, so that its false-positive rate stays below fpr; layout blocked (default) or classic';
