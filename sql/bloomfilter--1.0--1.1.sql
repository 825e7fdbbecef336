-- bloomfilter 1.0 -> 1.1
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.1'" to load this file. \quit

--
-- Shared filters: a definition names its table by OID (regclass), so renames
-- of the table or its schema need no chasing; the view shows why a build
-- failed and when it is retried; the DDL event trigger also follows
-- CREATE TABLE, CREATE TRIGGER and ALTER TRIGGER.
--
DROP VIEW bloom_shared_filters;
ALTER TABLE bloom_shared_definitions ADD COLUMN rel regclass;
UPDATE bloom_shared_definitions d SET rel = c.oid
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
 WHERE n.nspname OPERATOR(pg_catalog.=) d.schema_name
   AND c.relname OPERATOR(pg_catalog.=) d.table_name;
-- a definition whose table is gone guards nothing
DELETE FROM bloom_shared_definitions WHERE rel IS NULL;
ALTER TABLE bloom_shared_definitions ALTER COLUMN rel SET NOT NULL;
ALTER TABLE bloom_shared_definitions DROP COLUMN schema_name, DROP COLUMN table_name;
ALTER TABLE bloom_shared_definitions ADD UNIQUE (rel, column_name);
COMMENT ON TABLE bloom_shared_definitions IS
	'definitions of the shared bloom filters (managed by bloom_guard and bloom_unguard; rel: the guarded table by OID; capacity NULL: sized from the table)';

DROP FUNCTION bloom_shared_filters_info();
CREATE FUNCTION bloom_shared_filters_info(
	OUT name text, OUT definition_id bigint, OUT state text,
	OUT capacity bigint, OUT bits bigint, OUT hashes int, OUT keys_added bigint,
	OUT estimated_fpr float8, OUT memory_bytes bigint, OUT checks bigint,
	OUT negatives bigint, OUT last_build timestamptz, OUT last_error text,
	OUT next_try timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bloom_shared_filters_info'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_shared_filters_info() IS
	'the shared filters of this database as held in shared memory (see the view bloom_shared_filters)';

CREATE VIEW bloom_shared_filters AS
	SELECT d.name,
		   d.rel AS "table",
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
		   CASE WHEN i.checks OPERATOR(pg_catalog.>) 0
				THEN i.negatives::float8 OPERATOR(pg_catalog./) i.checks END AS negative_ratio,
		   i.last_build,
		   i.last_error,
		   i.next_try
	  FROM bloom_shared_definitions d
	  LEFT JOIN bloom_shared_filters_info() i
		ON i.definition_id OPERATOR(pg_catalog.=) d.id;
COMMENT ON VIEW bloom_shared_filters IS
	'shared filters: state (building, ready, rebuilding, suspended, failed, not loaded, standby), size, keys added, estimated FPR, checks and "no" answers (negative_ratio: the share of lookups that never reached the table), the last build error and when the build is retried';
GRANT SELECT ON bloom_shared_filters TO PUBLIC;

COMMENT ON FUNCTION bloom_guard(regclass, name, float8, bigint) IS
	'guard a column with a shared filter (table owner only): defines it, creates its trigger, builds it in the background without blocking writers; returns its name "schema"."table"."column"';
COMMENT ON FUNCTION bloom_shared_trigger() IS
	'AFTER INSERT OR UPDATE ... FOR EACH ROW trigger adding the row''s key to a shared filter (argument: the filter name); created by bloom_guard on the guarded table and its inheritance children';
COMMENT ON FUNCTION bloom_shared_ddl() IS
	'event trigger: keeps guards sound through DDL (drops, renames, type changes, partitions and inheritance children, the guard triggers themselves)';

DROP EVENT TRIGGER bloom_shared_alter_table;
CREATE EVENT TRIGGER bloom_shared_ddl_command_end ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE', 'CREATE TRIGGER', 'ALTER TRIGGER')
	EXECUTE FUNCTION bloom_shared_ddl();
ALTER EVENT TRIGGER bloom_shared_ddl_command_end ENABLE ALWAYS;

-- one signature per function: anycompatible keeps a value's own type (a
-- char(n) value used to reach the text overload with its trailing blanks
-- removed), and still reads a string literal as text
DROP FUNCTION bloom_shared_contains(text, anyelement);
DROP FUNCTION bloom_shared_contains(text, text);
DROP FUNCTION bloom_shared_add(text, anyelement);
DROP FUNCTION bloom_shared_add(text, text);
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
