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

CREATE FUNCTION bloom_guard_changes(guard regclass, since text,
	OUT version text, OUT whole boolean, OUT byte_offset bigint, OUT bytes bytea)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bloom_guard_changes'
	LANGUAGE C VOLATILE PARALLEL SAFE ROWS 3;
COMMENT ON FUNCTION bloom_guard_changes(regclass, text) IS
	'the filter of a guard index for a copy kept outside the server: with since NULL (or too old) one row, whole, holding the value as bloom_guard_filter returns it; else the byte ranges of the value that changed since the copy of that version (the headers and the changed pages); version is the new copy''s; needs SELECT on the column';

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

--
-- 1.1's shared guards become guard indexes.
--
-- Each guard of bloom_shared_definitions becomes a guard index on its column,
-- with its false-positive rate and capacity (on every table of an inheritance
-- tree; a partitioned table's index covers its partitions).  CREATE INDEX
-- holds a SHARE lock on each table while its guard is built from the rows:
-- writes to it wait, reads go on.  Counting and cuckoo guards become plain
-- guards.  A definition whose table or column is gone, or whose column has a
-- guard index already, makes none.  Then the guard triggers, the event
-- triggers, the definitions table and the functions of the shared tier go;
-- bloom_guard, bloom_unguard, bloom_shared_contains, bloom_shared_get,
-- bloom_shared_wait, bloom_shared_rebuild and the view bloom_shared_filters
-- stay, as wrappers over guard indexes (their C code is 2.0's).
--
DROP EVENT TRIGGER bloom_shared_sql_drop;
DROP EVENT TRIGGER bloom_shared_ddl_command_end;
DROP FUNCTION bloom_shared_ddl();

DO $$
DECLARE
	d record;
	t record;
BEGIN
	FOR t IN SELECT tg.tgname, tg.tgrelid::pg_catalog.regclass AS rel
			   FROM pg_catalog.pg_trigger tg
			  WHERE tg.tgfoid OPERATOR(pg_catalog.=) 'bloom_shared_trigger()'::pg_catalog.regprocedure
				AND NOT tg.tgisinternal
				AND tg.tgparentid OPERATOR(pg_catalog.=) 0::pg_catalog.oid
	LOOP
		EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', t.tgname, t.rel);
	END LOOP;
	-- parents first: a guard on a parent guards its children too
	FOR d IN SELECT def.rel, def.column_name, def.fpr, def.capacity
			   FROM bloom_shared_definitions def
			   JOIN pg_catalog.pg_attribute a
				 ON a.attrelid OPERATOR(pg_catalog.=) def.rel
				AND a.attname OPERATOR(pg_catalog.=) def.column_name
				AND NOT a.attisdropped
			  ORDER BY (WITH RECURSIVE up(r) AS (
							SELECT def.rel::pg_catalog.oid
							UNION
							SELECT h.inhparent FROM pg_catalog.pg_inherits h, up
							 WHERE h.inhrelid OPERATOR(pg_catalog.=) up.r)
						SELECT pg_catalog.count(*) FROM up),
					   def.id
	LOOP
		-- (a column guarded meanwhile, by its parent's guard or by hand, keeps that guard)
		CONTINUE WHEN EXISTS (
			SELECT FROM pg_catalog.pg_index i
			  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.indexrelid
			  JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) c.relam
			  JOIN pg_catalog.pg_attribute a
				ON a.attrelid OPERATOR(pg_catalog.=) i.indrelid
			   AND a.attnum OPERATOR(pg_catalog.=) i.indkey[0]
			 WHERE i.indrelid OPERATOR(pg_catalog.=) d.rel
			   AND am.amname OPERATOR(pg_catalog.=) 'bloomguard'
			   AND i.indnatts OPERATOR(pg_catalog.=) 1
			   AND a.attname OPERATOR(pg_catalog.=) d.column_name);
		-- 1.1 took rates up to 1 and bigint capacities; a guard index takes
		-- rates up to 0.5 and int capacities
		IF d.fpr OPERATOR(pg_catalog.>) 0.5::float8
		   OR d.capacity OPERATOR(pg_catalog.>) 2147483647::bigint THEN
			RAISE NOTICE 'guard of column % of %: rate % and capacity % limited to 0.5 and 2147483647',
				d.column_name, d.rel, d.fpr, d.capacity;
		END IF;
		PERFORM bloom_guard(d.rel, d.column_name,
							LEAST(d.fpr, 0.5::float8),
							-- (LEAST ignores NULL: a NULL capacity, sized from the table, stays NULL)
							CASE WHEN d.capacity IS NOT NULL
								 THEN LEAST(d.capacity, 2147483647::bigint) END);
	END LOOP;
END $$;

DROP FUNCTION bloom_shared_trigger();

-- One row per guard index (a partitioned table's: the sums over its
-- partitions' guards); the statistics of guards the role may not check
-- (SELECT on the column, no row-level security) are NULL.
CREATE OR REPLACE VIEW bloom_shared_filters AS
	SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) COLLATE pg_catalog."default" AS name,
		   i.indrelid::pg_catalog.regclass AS "table",
		   a.attname AS "column",
		   CASE WHEN i.indisvalid THEN 'ready' ELSE 'building' END AS state,
		   g.capacity,
		   g.bits,
		   g.layers,
		   g.added AS keys_added,
		   g.estimated_fpr,
		   g.bytes AS memory_bytes,
		   pg_catalog.pg_stat_get_numscans(i.indexrelid) AS checks,
		   NULL::bigint AS negatives,
		   NULL::float8 AS negative_ratio,
		   NULL::timestamptz AS last_build,
		   NULL::text AS last_error,
		   NULL::timestamptz AS next_try,
		   'blocked'::text AS layout,
		   NULL::bigint AS keys_removed,
		   0::bigint AS removals_pending,
		   0::bigint AS removals_dropped,
		   NULL::bigint AS skipped_scans,
		   g.partitions
	  FROM pg_catalog.pg_index i
	  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.indexrelid
	  JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) c.relam
	  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
	  JOIN pg_catalog.pg_attribute a
		ON a.attrelid OPERATOR(pg_catalog.=) i.indrelid
	   AND a.attnum OPERATOR(pg_catalog.=) i.indkey[0]
	  LEFT JOIN LATERAL (
		SELECT pg_catalog.sum(f.capacity)::bigint AS capacity,
			   (pg_catalog.sum(f.bytes) OPERATOR(pg_catalog.*) 8)::bigint AS bits,
			   pg_catalog.max(f.layers) AS layers,
			   pg_catalog.sum(f.added)::bigint AS added,
			   pg_catalog.max(f.estimated_fpr) AS estimated_fpr,
			   pg_catalog.sum(f.bytes)::bigint AS bytes,
			   CASE WHEN c.relkind OPERATOR(pg_catalog.=) 'I'
					THEN pg_catalog.count(*)::int END AS partitions
		  FROM (SELECT t.relid FROM pg_catalog.pg_partition_tree(i.indexrelid) t
				 WHERE t.isleaf AND c.relkind OPERATOR(pg_catalog.=) 'I'
				UNION ALL
				SELECT i.indexrelid WHERE c.relkind OPERATOR(pg_catalog.=) 'i') p
		  JOIN pg_catalog.pg_index li ON li.indexrelid OPERATOR(pg_catalog.=) p.relid,
			   -- each guard read is its table's: the role may read it
			   LATERAL (SELECT * FROM bloom_guard_info(p.relid)
						 WHERE pg_catalog.has_column_privilege(li.indrelid, li.indkey[0], 'SELECT')
						   AND NOT pg_catalog.row_security_active(li.indrelid)) f
		 WHERE pg_catalog.has_column_privilege(i.indrelid, a.attnum, 'SELECT')
		   AND NOT pg_catalog.row_security_active(i.indrelid)) g ON true
	 WHERE am.amname OPERATOR(pg_catalog.=) 'bloomguard'
	   AND i.indnatts OPERATOR(pg_catalog.=) 1
	   AND NOT c.relispartition;
COMMENT ON VIEW bloom_shared_filters IS
	'1.1''s view of guards, over guard indexes: one row per guard index (name: the index''s), ready or building (an index being built CONCURRENTLY), its layers, capacity, keys set, size, estimated rate and checks (index scans); a partitioned table''s sums over its partitions'' guards (partitions); the 1.1 columns that have no meaning for an index are NULL or 0';

DROP FUNCTION bloom_shared_filters_info();
DROP FUNCTION bloom_shared_skipped_scans(bigint);
DROP FUNCTION bloom_shared_gate(bigint, anyelement);
DROP FUNCTION bloom_shared_gate_any(bigint, anyarray);
DROP FUNCTION bloom_shared_gate(bigint, regclass, anyelement);
DROP FUNCTION bloom_shared_gate_any(bigint, regclass, anyarray);
DROP FUNCTION bloom_shared_gate_elements(bigint, anyarray);
DROP FUNCTION bloom_shared_gate_elements(bigint, regclass, anyarray);
DROP FUNCTION bloom_shared_add(text, anycompatible);
DROP TABLE bloom_shared_definitions;

ALTER FUNCTION bloom_guard(regclass, name, float8, bigint, text) PARALLEL UNSAFE;
COMMENT ON FUNCTION bloom_guard(regclass, name, float8, bigint, text) IS
	'1.1''s form of CREATE INDEX ... USING bloomguard (column) WITH (fpr, capacity): a guard index on the column (and on each inheritance child''s); returns the index''s name; layouts counting and cuckoo make a plain guard';
COMMENT ON FUNCTION bloom_unguard(regclass, name) IS
	'1.1''s form of DROP INDEX: drops the guard indexes of the column (and of each inheritance child''s)';
ALTER FUNCTION bloom_shared_contains(text, anycompatible) STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_contains(text, anycompatible) IS
	'1.1''s form of bloom_guard_contains: the guard named by its index''s name or as schema.table.column (resolved at each call; a table with inheritance children: theirs too); needs SELECT on the column';
ALTER FUNCTION bloom_shared_get(text) PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_get(text) IS
	'1.1''s form of bloom_guard_filter: the guard''s filter as a value, the guard named as for bloom_shared_contains';
ALTER FUNCTION bloom_shared_wait(text, int) PARALLEL SAFE;
COMMENT ON FUNCTION bloom_shared_wait(text, int) IS
	'true once the named guard index is valid (at once, unless it is being built CONCURRENTLY), false after the timeout';
COMMENT ON FUNCTION bloom_shared_rebuild(text) IS
	'1.1''s form of REINDEX INDEX: rebuilds the named guard (writes to the table wait meanwhile), forgetting the keys of deleted rows';

--
-- ==== The stored-filter cache: its entries ====
--
CREATE FUNCTION bloom_cache_entries(OUT toast_relid oid, OUT value_id oid,
									OUT bytes bigint, OUT in_use boolean,
									OUT kept boolean)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bloom_cache_entries'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_cache_entries() IS
	'this backend''s cache of stored filters, one row per filter: its toast relation and value id, the bytes of its copy, whether a running query uses it, whether it is kept between statements (checked again before its next use)';

CREATE VIEW bloom_cache AS
	SELECT c.oid::pg_catalog.regclass AS table_name, e.value_id, e.bytes,
		   e.in_use, e.kept
	  FROM bloom_cache_entries() e
	  LEFT JOIN pg_catalog.pg_class c ON c.reltoastrelid = e.toast_relid;
GRANT SELECT ON bloom_cache TO PUBLIC;
COMMENT ON VIEW bloom_cache IS
	'this backend''s cache of stored filters (bloomfilter.cache_size): one row per filter, with the table whose column holds it, its value id, the bytes of its copy, whether a running query uses it and whether it is kept between statements';
