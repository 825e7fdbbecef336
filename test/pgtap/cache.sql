-- cache.sql: the backend cache of stored filters under READ COMMITTED.
--  - one copy for many call sites: 30 checks of a 6 MB stored filter in one
--    query read it once and add about its size to the backend's memory;
--  - a call site alternating between stored filters (a join against
--    per-partition filters) reads each once;
--  - entries outlive the statement that read them, unpinned; no false
--    negative after an UPDATE of the filter, within a statement or across
--    statements (sql/cache_kept.sql checks kept entries further);
--  - a cursor holding a cached entry while another session deletes the
--    row, vacuums and inserts a new filter: the new filter's keys are all
--    found, the cursor answers for the value it read;
--  - an aborted subtransaction drops the entries it read.
-- Under READ COMMITTED, an entry holds back the xmin only while the portal
-- that read or checked it runs; then it is kept, checked before its next use.
-- The filters are created and changed by a second session (dblink), so
-- that they are committed and the other session's VACUUM is real; table cf
-- stays in this test's database.
BEGIN;
SELECT plan(22);

CREATE EXTENSION IF NOT EXISTS dblink;
CREATE FUNCTION pg_temp.other(q text) RETURNS text LANGUAGE sql AS $$
	SELECT dblink_exec(format('dbname=%s port=%s host=%s', current_database(),
							  current_setting('port'),
							  split_part(current_setting('unix_socket_directories'), ',', 1)),
					   q)
$$;
CREATE FUNCTION pg_temp.rss_anon_kb() RETURNS bigint LANGUAGE sql VOLATILE AS $$
	SELECT (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\s+(\d+) kB'))[1]::bigint
$$;
CREATE FUNCTION pg_temp.reads() RETURNS bigint LANGUAGE sql VOLATILE AS $$
	SELECT reads FROM bloom_cache_stats()
$$;
SET LOCAL jit = off;
SET LOCAL max_parallel_workers_per_gather = 0;

SELECT pg_temp.other($$
	DROP TABLE IF EXISTS cf;
	CREATE TABLE cf (name text PRIMARY KEY, bf bloomfilter);
	INSERT INTO cf SELECT 'big', bloom_add_all(bloom_empty(5000000),
		(SELECT array_agg('k' || i) FROM generate_series(1, 30000) i));
	INSERT INTO cf SELECT p, bloom_add_all(bloom_empty(cap),
		(SELECT array_agg(p || '-' || i) FROM generate_series(1, 2000) i))
	FROM (VALUES ('p1', 250000), ('p2', 250000), ('p3', 250000),
	             ('q1', 20000), ('q2', 20000), ('q3', 20000)) v(p, cap);
	ANALYZE cf$$);

SELECT ok(pg_column_size(bf) > 6000000, 'big: a 6 MB filter, stored out of line')
FROM cf WHERE name = 'big';

-- 30 call sites, one filter: read once, one copy.  The memory is read in
-- the outer query, while the inner query's executor state still exists.
CREATE TEMP TABLE m (step text, kb bigint, reads bigint);
INSERT INTO m SELECT 'before', pg_temp.rss_anon_kb(), pg_temp.reads();
INSERT INTO m SELECT 'during', pg_temp.rss_anon_kb(), pg_temp.reads()
FROM (SELECT count(*) AS n FROM cf, generate_series(1, 20000) g
      WHERE name = 'big'
        AND bf @> ('k' || (g + 1)) AND bf @> ('k' || (g + 2)) AND bf @> ('k' || (g + 3))
        AND bf @> ('k' || (g + 4)) AND bf @> ('k' || (g + 5)) AND bf @> ('k' || (g + 6))
        AND bf @> ('k' || (g + 7)) AND bf @> ('k' || (g + 8)) AND bf @> ('k' || (g + 9))
        AND bf @> ('k' || (g + 10)) AND bf @> ('k' || (g + 11)) AND bf @> ('k' || (g + 12))
        AND bf @> ('k' || (g + 13)) AND bf @> ('k' || (g + 14)) AND bf @> ('k' || (g + 15))
        AND bf @> ('k' || (g + 16)) AND bf @> ('k' || (g + 17)) AND bf @> ('k' || (g + 18))
        AND bf @> ('k' || (g + 19)) AND bf @> ('k' || (g + 20)) AND bf @> ('k' || (g + 21))
        AND bf @> ('k' || (g + 22)) AND bf @> ('k' || (g + 23)) AND bf @> ('k' || (g + 24))
        AND bf @> ('k' || (g + 25)) AND bf @> ('k' || (g + 26)) AND bf @> ('k' || (g + 27))
        AND bf @> ('k' || (g + 28)) AND bf @> ('k' || (g + 29)) AND bf @> ('k' || (g + 30))) s
WHERE s.n = 20000;
SELECT is((SELECT count(*) FROM m WHERE step = 'during'), 1::bigint,
          '30 call sites: every key found');
SELECT is((SELECT reads FROM m WHERE step = 'during') - (SELECT reads FROM m WHERE step = 'before'),
          1::bigint, '30 call sites: the stored filter is read whole once');
SELECT cmp_ok((SELECT kb FROM m WHERE step = 'during') - (SELECT kb FROM m WHERE step = 'before'),
              '<', 16384::bigint,
              '30 call sites: the query adds less than 16 MB (one 6 MB copy, not 30)');

-- the statement is over: its entry is kept, unpinned, and not read again
SELECT is((SELECT (entries, pinned)::text FROM bloom_cache_stats()), '(1,0)',
          'READ COMMITTED: the entry outlives the statement that read it, unpinned');
UPDATE m SET reads = pg_temp.reads() WHERE step = 'during';
SELECT is(count(*), 2000::bigint, 'the next statement: every key found') FROM cf, generate_series(1, 2000) i
WHERE name = 'big' AND bf @> ('k' || i);
SELECT is(pg_temp.reads() - (SELECT reads FROM m WHERE step = 'during'), 0::bigint,
          'the next statement uses the kept entry: no read');

-- one call site alternating between six stored filters, row by row (the
-- join's outer side is ordered so that the filter changes on every row)
SELECT is(pg_temp.reads(), pg_temp.reads(), 'reads() is stable');
CREATE TEMP TABLE alt AS SELECT pg_temp.reads() AS r0;
SELECT is(count(*), 12000::bigint,
          'alternating between six filters at one call site: every key found')
FROM (SELECT p, i FROM unnest(ARRAY['p1', 'q1', 'p2', 'q2', 'p3', 'q3']) WITH ORDINALITY u(p, o),
                       generate_series(1, 2000) i
      ORDER BY i, o OFFSET 0) k
CROSS JOIN LATERAL (SELECT bf FROM cf WHERE cf.name = k.p) c
WHERE c.bf @> (k.p || '-' || k.i);
-- the three small ones are read at once; the three large ones are sliced
-- until slices would cost as much as a read, then read once
SELECT cmp_ok(pg_temp.reads() - (SELECT r0 FROM alt), '<=', 6::bigint,
              'alternating between six filters: each read at most once (not once per switch)');

-- an UPDATE of the stored filter between statements
SELECT is(count(*), 2000::bigint, 'q1: all keys found (read whole)')
FROM cf, generate_series(1, 2000) i WHERE name = 'q1' AND bf @> ('q1-' || i);
SELECT pg_temp.other($$UPDATE cf SET bf = bf || 'q1-new'::text WHERE name = 'q1'$$);
SELECT is(count(*), 2001::bigint, 'q1 after an UPDATE by another session: the new key and the old ones found')
FROM cf, (SELECT 'q1-' || i AS k FROM generate_series(1, 2000) i UNION ALL SELECT 'q1-new') k
WHERE name = 'q1' AND bf @> k.k;

-- an UPDATE within one statement: the cached old value is still in use by
-- the statement, the new value is another entry
CREATE FUNCTION pg_temp.update_within() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	PERFORM count(*) FROM cf, generate_series(1, 2000) i WHERE name = 'q2' AND bf @> ('q2-' || i);
	UPDATE cf SET bf = bf || 'q2-new'::text WHERE name = 'q2';
	SELECT count(*) INTO n
	FROM cf, (SELECT 'q2-' || i AS k FROM generate_series(1, 2000) i UNION ALL SELECT 'q2-new') k
	WHERE name = 'q2' AND bf @> k.k;
	RETURN n;
END $$;
SELECT is(pg_temp.update_within(), 2001::bigint,
          'q2 updated within the statement that cached it: the new key and the old ones found');

-- a cursor holds a cached entry; another session deletes the row, vacuums,
-- inserts a new filter under the same name
DECLARE c CURSOR FOR
	SELECT i, bf @> ('q3-' || i) AS found FROM cf, generate_series(1, 2000) i
	WHERE name = 'q3' ORDER BY i;
MOVE FORWARD 1000 IN c;
SELECT is((SELECT pinned FROM bloom_cache_stats()), 1::bigint,
          'the open cursor pins its cached filter');
SELECT pg_temp.other($$DELETE FROM cf WHERE name = 'q3'$$);
SELECT pg_temp.other($$VACUUM cf$$);
SELECT pg_temp.other($$INSERT INTO cf SELECT 'q3', bloom_add_all(bloom_empty(20000),
	(SELECT array_agg('q3b-' || i) FROM generate_series(1, 2000) i))$$);
SELECT is(count(*), 2000::bigint,
          'q3 deleted, vacuumed and inserted anew while a cursor holds the old one: every new key found')
FROM cf, generate_series(1, 2000) i WHERE name = 'q3' AND bf @> ('q3b-' || i);
SELECT is(count(*), 0::bigint, 'q3: the new filter holds none of the old keys (no stale copy answered)')
FROM cf, generate_series(1, 2000) i WHERE name = 'q3' AND bf @> ('q3-' || i) AND bf @> ('q3-x' || i);
CREATE FUNCTION pg_temp.found_in_rest() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	cur refcursor := 'c';
	r record;
	n bigint := 0;
BEGIN
	LOOP
		FETCH cur INTO r;
		EXIT WHEN NOT FOUND;
		IF r.found THEN
			n := n + 1;
		END IF;
	END LOOP;
	RETURN n;
END $$;
SELECT is(pg_temp.found_in_rest(), 1000::bigint,
          'the cursor still answers for the value it read: every old key found');
CLOSE c;
SELECT is((SELECT pinned FROM bloom_cache_stats()), 0::bigint,
          'closing the cursor unpins its entry');

-- an aborted subtransaction drops the entries it read (filters r1 and r2
-- are read for the first time in it)
SELECT pg_temp.other($$INSERT INTO cf SELECT r, bloom_add_all(bloom_empty(20000),
	(SELECT array_agg(r || '-' || i) FROM generate_series(1, 2000) i))
	FROM unnest(ARRAY['r1', 'r2']) r$$);
CREATE FUNCTION pg_temp.entries_after_abort(r text, do_abort boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	e0 bigint := (SELECT entries FROM bloom_cache_stats());
BEGIN
	BEGIN
		PERFORM count(*) FROM cf, generate_series(1, 2000) i WHERE name = r AND bf @> (r || '-' || i);
		IF do_abort THEN
			RAISE EXCEPTION 'abort';
		END IF;
	EXCEPTION WHEN raise_exception THEN
		NULL;
	END;
	RETURN (SELECT entries FROM bloom_cache_stats()) - e0;
END $$;
SELECT is(pg_temp.entries_after_abort('r1', false), 1::bigint,
          'a committed subtransaction keeps the entry it read');
SELECT is(pg_temp.entries_after_abort('r2', true), 0::bigint,
          'an aborted subtransaction drops the entry it read');

-- a stored filter larger than bloomfilter.cache_size is still read (and
-- shared) while in use, and freed as soon as no call site uses it
SET LOCAL bloomfilter.cache_size = 1;
SELECT is(count(*), 2000::bigint, 'cache_size 1MB: a 6 MB filter is read and used all the same')
FROM cf, generate_series(1, 2000) i WHERE name = 'big' AND bf @> ('k' || i) AND bf @> ('k' || (i + 1));
CREATE FUNCTION pg_temp.bytes_after_use() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	PERFORM count(*) FROM cf, generate_series(1, 20000) i WHERE name = 'big' AND bf @> ('k' || i);
	RETURN (SELECT bytes FROM bloom_cache_stats());
END $$;
SELECT is(pg_temp.bytes_after_use(), 0::bigint,
          'cache_size 1MB: the 6 MB copy is freed once its query has ended');

SELECT * FROM finish();
ROLLBACK;
