-- upgrade.sql: the update path from the first released version (1.0) to the
-- default version keeps stored filters readable and identical.  With one
-- version it checks the update machinery; each later version adds its
-- bloomfilter--A--B.sql script and this test covers the chain.
BEGIN;
SELECT plan(9);

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

ALTER EXTENSION bloomfilter UPDATE;
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
SELECT is((SELECT rel FROM bloom_shared_definitions WHERE name = 'up s.Up t.k'),
          '"up s"."Up t"'::regclass, 'a 1.0 definition names its table by OID after the update');
SELECT is((SELECT count(*) FROM bloom_shared_definitions WHERE name = 'public.gone.k'), 0::bigint,
          'a 1.0 definition whose table is gone is dropped by the update');
SELECT is((SELECT array_agg(attname ORDER BY attname) FROM pg_attribute
            WHERE attrelid = 'bloom_shared_definitions'::regclass AND attnum > 0 AND NOT attisdropped),
          '{capacity,column_name,fpr,id,name,rel}'::name[], 'the definitions table has the 1.1 columns');

SELECT * FROM finish();
ROLLBACK;
