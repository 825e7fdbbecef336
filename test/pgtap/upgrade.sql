-- upgrade.sql: the update path from the first released version (1.0) to the
-- default version keeps stored filters readable and identical.  With one
-- version it checks the update machinery; each later version adds its
-- bloomfilter--A--B.sql script and this test covers the chain.
BEGIN;
SELECT plan(6);

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

SELECT * FROM finish();
ROLLBACK;
