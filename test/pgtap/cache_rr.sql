-- cache_rr.sql: the backend cache of stored filters under REPEATABLE READ,
-- where entries last the transaction: a stored filter is read once per
-- transaction, whatever the statements; an UPDATE, a DELETE and re-insert,
-- a rolled-back savepoint and a TRUNCATE never let a cached copy answer
-- for another value.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT plan(16);

CREATE FUNCTION pg_temp.reads() RETURNS bigint LANGUAGE sql VOLATILE AS $$
	SELECT reads FROM bloom_cache_stats()
$$;
SET LOCAL max_parallel_workers_per_gather = 0;

CREATE TABLE rf (name text PRIMARY KEY, bf bloomfilter);
INSERT INTO rf SELECT p, bloom_add_all(bloom_empty(cap),
	(SELECT array_agg(p || '-' || i) FROM generate_series(1, 2000) i))
FROM (VALUES ('a', 250000), ('b', 20000), ('c', 20000)) v(p, cap);
CREATE FUNCTION pg_temp.found(filter text, prefix text, n int) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
	SELECT count(*) FROM rf, generate_series(1, n) i
	WHERE name = filter AND bf @> (prefix || i)
$$;

CREATE TEMP TABLE r AS SELECT pg_temp.reads() AS r0;
SELECT is(pg_temp.found('a', 'a-', 2000), 2000::bigint, 'a: every key found');
SELECT is(pg_temp.found('b', 'b-', 2000), 2000::bigint, 'b: every key found');
SELECT is(pg_temp.reads() - (SELECT r0 FROM r), 2::bigint, 'a and b read whole once each');
SELECT is((SELECT entries FROM bloom_cache_stats()), 2::bigint,
          'REPEATABLE READ: the entries outlive the statements that read them');
UPDATE r SET r0 = pg_temp.reads();
SELECT is(pg_temp.found('a', 'a-', 2000) + pg_temp.found('b', 'b-', 2000), 4000::bigint,
          'a and b again, in later statements: every key found');
SELECT is(pg_temp.reads() - (SELECT r0 FROM r), 0::bigint,
          'a and b again: no new read (once per transaction)');

-- an UPDATE: a new value, never answered from the old copy
UPDATE rf SET bf = bf || 'b-new'::text WHERE name = 'b';
SELECT is(pg_temp.found('b', 'b-', 2000) + (SELECT count(*) FROM rf WHERE name = 'b' AND bf @> 'b-new'::text),
          2001::bigint, 'b after an UPDATE: the new key and the old ones found');

-- DELETE and re-insert under the same name, with other keys
DELETE FROM rf WHERE name = 'a';
INSERT INTO rf SELECT 'a', bloom_add_all(bloom_empty(250000),
	(SELECT array_agg('a2-' || i) FROM generate_series(1, 2000) i));
SELECT is(pg_temp.found('a', 'a2-', 2000), 2000::bigint,
          'a deleted and inserted anew: every new key found');
SELECT is(pg_temp.found('a', 'a-', 2000), (SELECT count(*) FROM rf, generate_series(1, 2000) i
                                            WHERE name = 'a' AND (bf::bytea::bloomfilter) @> ('a-' || i)),
          'a anew: the old keys answer as the new value does (not from the old copy)');

-- a savepoint rolled back drops what it read
SAVEPOINT s;
INSERT INTO rf SELECT 'tmp', bloom_add_all(bloom_empty(20000),
	(SELECT array_agg('t-' || i) FROM generate_series(1, 2000) i));
SELECT is(pg_temp.found('tmp', 't-', 2000), 2000::bigint, 'tmp (in a savepoint): every key found');
SELECT entries AS e0 FROM bloom_cache_stats() \gset
ROLLBACK TO SAVEPOINT s;
SELECT is((SELECT entries FROM bloom_cache_stats()), (:e0 - 1)::bigint,
          'ROLLBACK TO SAVEPOINT drops the entry read in it');
SELECT is((SELECT count(*) FROM rf WHERE name = 'tmp'), 0::bigint, 'tmp is gone');

-- TRUNCATE gives the toast relation new storage: its entries go
SELECT is(pg_temp.found('c', 'c-', 2000), 2000::bigint, 'c: every key found');
TRUNCATE rf;
SELECT is((SELECT entries FROM bloom_cache_stats()), 0::bigint,
          'TRUNCATE drops the entries of the table''s filters');
INSERT INTO rf SELECT 'c', bloom_add_all(bloom_empty(20000),
	(SELECT array_agg('c2-' || i) FROM generate_series(1, 2000) i));
SELECT is(pg_temp.found('c', 'c2-', 2000), 2000::bigint,
          'c inserted anew after TRUNCATE: every new key found');

-- cache_size 0: nothing is kept once unused
SET LOCAL bloomfilter.cache_size = 0;
SELECT is(pg_temp.found('c', 'c2-', 2000) * 0 + (SELECT entries FROM bloom_cache_stats()), 0::bigint,
          'cache_size 0: no entry is kept once its query has ended');

SELECT * FROM finish();
ROLLBACK;
