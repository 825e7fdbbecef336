-- memory.sql: no memory leak per row.  A 10M-row aggregate and 10M checks
-- leave the backend's private memory (RssAnon) within 24 MB of what 1M rows
-- leave: a leak of even 3 bytes per row would show.  And no leak per
-- statement of the cache's copies of 4 MB or more (mappings of their own):
-- 20 statements that each read a 6 MB stored filter whole
-- (bloomfilter.cache_size 1MB: no copy kept) leave memory within 24 MB of
-- one.  The memory is read in
-- the outer query, while the inner query's executor state (aggregate state,
-- per-call-site caches) still exists.  Rows come from a cross join of two
-- small generate_series, so no input grows with the row count.
BEGIN;
SELECT plan(7);

CREATE FUNCTION pg_temp.rss_anon_kb() RETURNS bigint LANGUAGE sql VOLATILE AS $$
	SELECT (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\s+(\d+) kB'))[1]::bigint
$$;

SET LOCAL work_mem = '4MB';
SET LOCAL max_parallel_workers_per_gather = 0;

CREATE TEMP TABLE peaks (step text, kb bigint);

-- bloom_agg into the same 12 MB filter (capacity 10M): 1M, then 10M rows
INSERT INTO peaks SELECT 'agg_1m', pg_temp.rss_anon_kb()
FROM (SELECT bloom_agg('k' || (a * 10000 + b), 10000000) AS f
      FROM generate_series(1, 100) a, generate_series(1, 10000) b) s
WHERE s.f IS NOT NULL;
INSERT INTO peaks SELECT 'agg_10m', pg_temp.rss_anon_kb()
FROM (SELECT bloom_agg('k' || (a * 10000 + b), 10000000) AS f
      FROM generate_series(1, 1000) a, generate_series(1, 10000) b) s
WHERE s.f IS NOT NULL;
SELECT cmp_ok((SELECT kb FROM peaks WHERE step = 'agg_10m') - (SELECT kb FROM peaks WHERE step = 'agg_1m'),
              '<', 24576::bigint, 'bloom_agg: 10M rows leave memory within 24 MB of 1M rows');

-- checks against a stored (TOASTed, cached per call site) filter
CREATE TEMP TABLE mf AS SELECT bloom_agg('k' || i, 1000000) AS bf FROM generate_series(1, 1000000) i;
INSERT INTO peaks SELECT 'check_1m', pg_temp.rss_anon_kb()
FROM (SELECT count(*) AS n FROM mf, generate_series(1, 100) a, generate_series(1, 10000) b
      WHERE mf.bf @> ('k' || (a * 10000 + b))) s;
INSERT INTO peaks SELECT 'check_10m', pg_temp.rss_anon_kb()
FROM (SELECT count(*) AS n FROM mf, generate_series(1, 1000) a, generate_series(1, 10000) b
      WHERE mf.bf @> ('k' || (a * 10000 + b))) s;
SELECT cmp_ok((SELECT kb FROM peaks WHERE step = 'check_10m') - (SELECT kb FROM peaks WHERE step = 'check_1m'),
              '<', 24576::bigint, '@>: 10M checks leave memory within 24 MB of 1M checks');

-- batch checks: 1M, then 10M array elements
INSERT INTO peaks SELECT 'batch_1m', pg_temp.rss_anon_kb()
FROM (SELECT count(*) AS n FROM mf, generate_series(1, 1000) j
      WHERE bloom_contains_any(mf.bf, ARRAY(SELECT 'x' || (j * 1000 + g) FROM generate_series(1, 1000) g))) s;
INSERT INTO peaks SELECT 'batch_10m', pg_temp.rss_anon_kb()
FROM (SELECT count(*) AS n FROM mf, generate_series(1, 10000) j
      WHERE bloom_contains_any(mf.bf, ARRAY(SELECT 'x' || (j * 1000 + g) FROM generate_series(1, 1000) g))) s;
SELECT cmp_ok((SELECT kb FROM peaks WHERE step = 'batch_10m') - (SELECT kb FROM peaks WHERE step = 'batch_1m'),
              '<', 24576::bigint, 'bloom_contains_any: 10M elements leave memory within 24 MB of 1M');

-- a 6 MB stored filter (capacity 5M), read whole by each statement (2,000
-- checks: slices would cost more) and dropped at its end: a cache of 1 MB
-- keeps no copy once the statement is over
SET LOCAL bloomfilter.cache_size = 1;
CREATE TEMP TABLE bigf AS SELECT bloom_agg('k' || i, 5000000) AS bf FROM generate_series(1, 1000) i;
CREATE TEMP TABLE reads0 AS SELECT reads FROM bloom_cache_stats();
SELECT count(*) FROM bigf, generate_series(1, 2000) g WHERE bigf.bf @> ('k' || g);
INSERT INTO peaks SELECT 'copies_1', pg_temp.rss_anon_kb();
SELECT 'SELECT count(*) FROM bigf, generate_series(1, 2000) g WHERE bigf.bf @> (''k'' || g)'
FROM generate_series(1, 20) \gexec
INSERT INTO peaks SELECT 'copies_21', pg_temp.rss_anon_kb();
SELECT is((SELECT reads FROM bloom_cache_stats()) - (SELECT reads FROM reads0), 21::bigint,
          'each of the 21 statements read the 6 MB filter whole');
SELECT cmp_ok((SELECT kb FROM peaks WHERE step = 'copies_21') - (SELECT kb FROM peaks WHERE step = 'copies_1'),
              '<', 24576::bigint, '20 statements reading a 6 MB filter whole leave memory within 24 MB of one');

-- with room in the cache, the copy is kept: 20 more statements, no read
SET LOCAL bloomfilter.cache_size = 64;
UPDATE reads0 SET reads = (SELECT reads FROM bloom_cache_stats());
SELECT 'SELECT count(*) FROM bigf, generate_series(1, 2000) g WHERE bigf.bf @> (''k'' || g)'
FROM generate_series(1, 20) \gexec
SELECT is((SELECT reads FROM bloom_cache_stats()) - (SELECT reads FROM reads0), 1::bigint,
          'cache_size 64MB: 20 statements read the 6 MB filter whole once');

SELECT is((SELECT count(*) FROM peaks WHERE kb > 0), 8::bigint, 'memory was read eight times');

SELECT * FROM finish();
ROLLBACK;
