-- upgrade.sql: the update path from the first released version (1.0) to the
-- default version keeps stored filters readable and identical, and turns
-- 1.0's guards into guard indexes.  With one
-- version it checks the update machinery; each later version adds its
-- bloomfilter--A--B.sql script and this test covers the chain.
BEGIN;
SELECT plan(19);

DROP EXTENSION bloomfilter CASCADE;
CREATE EXTENSION bloomfilter VERSION '1.0';
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'), '1.0',
          'installed the first released version');

CREATE TABLE up (id int, bf bloomfilter, digest text);
INSERT INTO up (id, bf) VALUES
	(1, bloom_empty(10)),
	(2, (SELECT bloom_agg('k' || i, 10000) FROM generate_series(1, 10000) i)),
	(3, (SELECT bloom_agg(i, 100000, 0.001, 'classic') FROM generate_series(1, 100000) i));
UPDATE up SET digest = md5(bf::bytea);
-- shared-filter definitions of 1.0 named their table; 1.1 holds its OID
CREATE SCHEMA "up s";
CREATE TABLE "up s"."Up t" (k text);
INSERT INTO bloom_shared_definitions (name, schema_name, table_name, column_name, fpr)
VALUES ('up s.Up t.k', 'up s', 'Up t', 'k', 0.01),
       ('public.gone.k', 'public', 'gone', 'k', 0.01);

CREATE TEMP TABLE catalog_10 AS
SELECT pg_describe_object(classid, objid, 0) AS object
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter');

-- a view using 1.0's text overloads (a string literal key) stops the update
CREATE VIEW up_literal AS SELECT id, bf @> 'k1' AS has_k1 FROM up WHERE id = 2;
SELECT throws_ok('ALTER EXTENSION bloomfilter UPDATE', '2BP01',
                 'cannot update bloomfilter to 1.1 while other objects use its text variants of bloom_add, bloom_contains, bloom_contained, ||, @> or <@, or bloom_shared_contains or bloom_shared_add',
                 'a view using the 1.0 text overloads stops the update, with a message naming it');
DROP VIEW up_literal;

ALTER EXTENSION bloomfilter UPDATE;
CREATE VIEW up_literal AS SELECT id, bf @> 'k1' AS has_k1 FROM up WHERE id = 2;
SELECT is((SELECT has_k1 FROM up_literal), true, 'the view created again after the update works');
DROP VIEW up_literal;
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'),
          (SELECT default_version FROM pg_available_extensions WHERE name = 'bloomfilter'),
          'updated to the default version');

SELECT is((SELECT count(*) FROM up WHERE md5(bf::bytea) = digest), 3::bigint,
          'stored filters are byte-identical after the update');
SELECT is((SELECT count(*) FROM up, generate_series(1, 10000) i WHERE id = 2 AND NOT bf @> ('k' || i)),
          0::bigint, 'text filter: no false negatives after the update');
SELECT is((SELECT count(*) FROM up, generate_series(1, 100000) i WHERE id = 3 AND NOT bf @> i),
          0::bigint, 'classic integer filter: no false negatives after the update');
SELECT ok((SELECT bf::text::bloomfilter = bf FROM up WHERE id = 2), 'text round trip after the update');
-- 2.0: 1.0's guards became guard indexes, and the definitions table is gone
SELECT is((SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             JOIN pg_am am ON am.oid = c.relam
            WHERE i.indrelid = '"up s"."Up t"'::regclass AND am.amname = 'bloomguard'), 1::bigint,
          'a 1.0 guard is a guard index on its column after the update');
SELECT is(bloom_shared_contains('"up s"."Up t"."k"', 'x'::text), false,
          'the 1.0 name of the guard checks the index (an empty table: "no")');
SELECT is((SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             JOIN pg_am am ON am.oid = c.relam WHERE am.amname = 'bloomguard'), 1::bigint,
          'a 1.0 definition whose table is gone makes no index');
SELECT is(to_regclass('bloom_shared_definitions'), NULL, 'the definitions table is gone');

-- 1.1: the text overloads (which citext reached) are gone, the bloom_literal
-- ones, the ordering and the hashing are there, as in a fresh install
SELECT is((SELECT count(*) FROM pg_proc
           WHERE proname IN ('bloom_add', 'bloom_contains', 'bloom_contained')
             AND 'text'::regtype = ANY (proargtypes::oid[])), 0::bigint,
          'updated: no text overloads left');
SELECT is((SELECT bf @> 'k1' AND bf @> 'k1'::text AND 'k2' <@ bf AND NOT bf @> 'k10001' FROM up WHERE id = 2), true,
          'updated: string literals and text keys find the stored text keys');
SELECT is((SELECT count(DISTINCT bf) FROM up), 3::bigint, 'updated: DISTINCT on filters');
CREATE TEMP TABLE catalog_updated AS
SELECT pg_describe_object(classid, objid, 0) AS object,
       obj_description(objid, (SELECT relname FROM pg_class WHERE oid = classid)) AS comment
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter');
CREATE TEMP TABLE operators_updated AS
SELECT oprname, oprleft::regtype::text AS l, oprright::regtype::text AS r, oprcanhash, oprcanmerge,
       oprcom::regoperator::text AS com, oprnegate::regoperator::text AS neg,
       oprrest::text AS rest, oprjoin::text AS j
  FROM pg_operator
 WHERE 'bloomfilter'::regtype IN (oprleft, oprright);
CREATE TEMP TABLE functions_updated AS
SELECT p.oid::regprocedure::text AS f, provolatile, proisstrict, proparallel, proleakproof, prosrc,
       obj_description(p.oid, 'pg_proc') AS comment
  FROM pg_proc p
 WHERE p.pronamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'bloomfilter');

SELECT is((SELECT string_agg(object, ', ') FROM catalog_updated
           WHERE comment IS NULL AND object NOT IN (SELECT object FROM catalog_10)
             -- PostgreSQL 18 makes a type's implicit array type a member too,
             -- and a view's row type (its comment is the view's)
             AND object NOT LIKE 'type %[]'
             AND object NOT IN (SELECT pg_describe_object('pg_type'::regclass, t.oid, 0)
                                  FROM pg_type t JOIN pg_class c ON c.oid = t.typrelid
                                 WHERE c.relkind = 'v')), NULL,
          'every object the updates add has a comment');

DROP EXTENSION bloomfilter CASCADE;
CREATE EXTENSION bloomfilter;
SELECT set_eq($$SELECT pg_describe_object(classid, objid, 0),
                       obj_description(objid, (SELECT relname FROM pg_class WHERE oid = classid))
                  FROM pg_depend
                WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
                  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter')$$,
              $$SELECT object, comment FROM catalog_updated$$,
              'the updated extension has the objects of a fresh install, with the same comments');
SELECT set_eq($$SELECT oprname, oprleft::regtype::text, oprright::regtype::text, oprcanhash, oprcanmerge,
                       oprcom::regoperator::text, oprnegate::regoperator::text, oprrest::text, oprjoin::text
                  FROM pg_operator WHERE 'bloomfilter'::regtype IN (oprleft, oprright)$$,
              $$SELECT * FROM operators_updated$$,
              'the updated operators are those of a fresh install (hashes, merges, commutators, selectivity)');
SELECT set_eq($$SELECT p.oid::regprocedure::text, provolatile, proisstrict, proparallel, proleakproof, prosrc,
                       obj_description(p.oid, 'pg_proc')
                  FROM pg_proc p
                 WHERE p.pronamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'bloomfilter')$$,
              $$SELECT * FROM functions_updated$$,
              'the updated functions are those of a fresh install (volatility, strictness, parallel safety, comments)');

SELECT * FROM finish();
ROLLBACK;
