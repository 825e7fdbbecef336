--
-- 1.1's guard functions in 2.0: wrappers over guard indexes, and the update
-- from 1.1 that turns 1.1's guards into guard indexes.
--
\set VERBOSITY default
CREATE TABLE compat_t (id int, username text);
INSERT INTO compat_t SELECT g, 'user' || g FROM generate_series(1, 1000) g;

-- bloom_guard creates the index and returns its name
SELECT bloom_guard('compat_t', 'username');
\d compat_t
-- names: the index's, qualified or not, or 1.1's schema.table.column
SELECT bloom_shared_contains('public.compat_t_username_idx', 'user1') AS by_index,
       bloom_shared_contains('compat_t_username_idx', 'nobody') AS absent,
       bloom_shared_contains('"public"."compat_t"."username"', 'user2') AS by_column,
       bloom_shared_contains('public.compat_t.username', 'nobody') AS absent_too;
-- resolved at each call: renames follow
ALTER TABLE compat_t RENAME TO compat_u;
SELECT bloom_shared_contains('public.compat_u.username', 'user3');
ALTER TABLE compat_u RENAME TO compat_t;
SELECT bloom_shared_contains('public.compat_u.username', 'user3');
-- NULLs: NULL (the functions are strict)
SELECT bloom_shared_contains(NULL, 'user1'), bloom_shared_contains('compat_t_username_idx', NULL::text);
SELECT bloom_shared_wait('public.compat_t.username'),
       bloom_cardinality(bloom_shared_get('compat_t_username_idx')) BETWEEN 950 AND 1050 AS about_1000;
SELECT bloom_shared_rebuild('public.compat_t.username');
SELECT name, "table", "column", state, layers, keys_added, layout FROM bloom_shared_filters;
-- errors
SELECT bloom_guard('compat_t', 'username');
SELECT bloom_guard('compat_t', 'nocolumn');
SELECT bloom_guard('compat_t', 'id', layout => 'classic');
SELECT bloom_guard(NULL, 'id');
SELECT bloom_guard('compat_t', 'id', fpr => 2);
SELECT bloom_guard('compat_t', 'id', capacity => 0);
SELECT bloom_guard('compat_t', 'id', capacity => 3000000000);
SELECT bloom_shared_contains('public.compat_t.id', 1);
SELECT bloom_shared_contains('compat_t', 1);
SELECT bloom_shared_contains('no.such.thing.here', 1);
SELECT bloom_unguard('compat_t', 'id');
-- layouts counting and cuckoo make plain guards
SELECT bloom_guard('compat_t', 'id', 0.001, 5000, 'counting');
SELECT bloom_unguard('compat_t', 'id');
SELECT bloom_unguard('compat_t', 'username');
SELECT count(*) FROM bloom_shared_filters;

-- an inheritance tree: a guard on every table, checked together
CREATE TABLE compat_p (k int);
CREATE TABLE compat_c () INHERITS (compat_p);
INSERT INTO compat_p VALUES (1);
INSERT INTO compat_c VALUES (2);
SELECT bloom_guard('compat_p', 'k');
SELECT bloom_shared_contains('public.compat_p.k', 2), bloom_shared_contains('public.compat_p.k', 3);
SELECT bloom_shared_get('public.compat_p.k');
-- a role that may read the parent checks through it, as it queries it
CREATE ROLE compat_reader;
GRANT SELECT ON compat_p TO compat_reader;
ALTER TABLE compat_c ENABLE ROW LEVEL SECURITY;
SET ROLE compat_reader;
SELECT bloom_shared_contains('public.compat_p.k', 2) AS through_parent;
SELECT bloom_shared_contains('public.compat_c.k', 2) AS child_itself;
RESET ROLE;
ALTER TABLE compat_c DISABLE ROW LEVEL SECURITY;
-- a child without a guard: every key "maybe"
DROP INDEX compat_c_k_idx;
SELECT bloom_shared_contains('public.compat_p.k', 3);
SELECT bloom_unguard('compat_p', 'k');
-- a partitioned table: one partitioned index
CREATE TABLE compat_r (k int) PARTITION BY RANGE (k);
CREATE TABLE compat_r1 PARTITION OF compat_r FOR VALUES FROM (0) TO (100);
CREATE TABLE compat_r2 PARTITION OF compat_r FOR VALUES FROM (100) TO (200);
INSERT INTO compat_r SELECT generate_series(0, 199);
SELECT bloom_guard('compat_r', 'k');
SELECT bloom_shared_contains('public.compat_r.k', 150), bloom_shared_contains('public.compat_r.k', 1500);
SELECT name, state, keys_added, partitions FROM bloom_shared_filters;
-- a role that may read the partitioned table sees its guard in the view
GRANT SELECT ON compat_r TO compat_reader;
SET ROLE compat_reader;
SELECT name, state, keys_added, partitions FROM bloom_shared_filters;
RESET ROLE;
-- a partition's guard belongs to the partitioned table's
SELECT bloom_unguard('compat_r1', 'k');
SELECT bloom_unguard('compat_r', 'k');
SELECT count(*) FROM pg_indexes WHERE tablename LIKE 'compat_r%';
-- the functions 2.0 dropped are gone
SELECT bloom_shared_add('public.compat_t.username', 'x');
DROP TABLE compat_t, compat_p, compat_c, compat_r;
DROP ROLE compat_reader;

--
-- The update from 1.1: its guards become guard indexes.  (A 1.1 database
-- meeting the 2.0 library: the guard trigger does nothing, so writes go on,
-- and the other functions say to update.)
--
\set VERBOSITY terse
SET client_min_messages = warning;
DROP EXTENSION bloomfilter CASCADE;
RESET client_min_messages;
CREATE EXTENSION bloomfilter VERSION '1.1';
CREATE TABLE up_t (id int, k text);
INSERT INTO up_t SELECT g, 'k' || g FROM generate_series(1, 1000) g;
CREATE TABLE up_p (k int);
CREATE TABLE up_c () INHERITS (up_p);
INSERT INTO up_c VALUES (2);
CREATE TABLE up_gone (k int);
INSERT INTO bloom_shared_definitions (name, rel, column_name, fpr, capacity, layout) VALUES
	('"public"."up_t"."k"', 'up_t', 'k', 0.01, NULL, 'blocked'),
	('"public"."up_p"."k"', 'up_p', 'k', 0.001, 5000, 'counting'),
	('"public"."up_gone"."k"', 'up_gone', 'k', 0.01, NULL, 'blocked'),
	-- 1.1 took a child guarded beside its parent, and rates and capacities a
	-- guard index does not
	('"public"."up_c"."k"', 'up_c', 'k', 0.6, 3000000000, 'blocked');
CREATE TRIGGER bloom_guard_k AFTER INSERT OR UPDATE ON up_t
	FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('"public"."up_t"."k"');
DROP TABLE up_gone;
CREATE VIEW up_view AS SELECT name, state FROM bloom_shared_filters;
INSERT INTO up_t VALUES (1001, 'k1001');
SELECT bloom_shared_contains('"public"."up_t"."k"', 'k1'::text);
SELECT bloom_guard('up_t', 'id');
ALTER EXTENSION bloomfilter UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter';
SELECT indexrelid::regclass AS guard, indrelid::regclass AS "table",
	   (SELECT capacity FROM bloom_guard_info(indexrelid)), (SELECT target_fpr FROM bloom_guard_info(indexrelid))
  FROM pg_index WHERE indrelid::regclass::text LIKE 'up_%' ORDER BY 1;
SELECT * FROM up_view ORDER BY 1;
SELECT count(*) AS guard_triggers FROM pg_trigger WHERE NOT tgisinternal;
SELECT bloom_shared_contains('"public"."up_t"."k"', 'k1001'::text) AS written_before,
	   bloom_shared_contains('public.up_t.k', 'nope'::text) AS absent,
	   bloom_shared_contains('public.up_p.k', 2) AS child;
SELECT to_regclass('bloom_shared_definitions') AS definitions_table;
DROP VIEW up_view;
DROP TABLE up_t, up_p, up_c;
