-- max_size.sql: the largest filter (doc/format.md's maximum, 867,181,822 keys
-- at 1%, blocked: a value of 1,072,693,184 bytes, 1 MB under PostgreSQL's
-- allocation limit so that its row can be formed) stored in a table works
-- with every function: read whole (through the backend cache, whose copy
-- with its alignment slack is a huge allocation), sliced, merged, cast and
-- sent.  Text output of it is refused with 54000 (base64 would exceed
-- 1 GB).  About 1.5 minutes and up to 3 GB of memory (a union holds its
-- result, its first argument and the cached second one).
BEGIN;
SELECT plan(23);

SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL jit = off;

SELECT throws_ok($$SELECT bloom_empty(867181823, 0.01)$$, '54000',
                 'bloomfilter capacity 867181823 is too large at false-positive rate 0.01',
                 'one key more than the maximum does not fit');

CREATE TABLE maxf AS
SELECT bloom_add_all(bloom_empty(867181822, 0.01),
                     ARRAY(SELECT 'k' || i FROM generate_series(1, 1000) i)) AS bf;
SELECT is(pg_column_size(bf), 1072693184, 'the maximum filter is stored whole (1,072,693,184 bytes, uncompressed)')
FROM maxf;

SELECT is((bloom_info(bf)->>'bytes')::bigint, 1072693184::bigint, 'bloom_info')
FROM maxf;
SELECT cmp_ok(bloom_fpr(bf), '<', 1e-10::float8, 'bloom_fpr') FROM maxf;
SELECT ok(bloom_cardinality(bf) BETWEEN 990 AND 1010, 'bloom_cardinality') FROM maxf;
SELECT is(bloom_maybe(bf, ARRAY(SELECT 'k' || i FROM generate_series(1, 2000) i)),
          ARRAY(SELECT 'k' || i FROM generate_series(1, 1000) i),
          'bloom_maybe over 2,000 candidates (read whole)')
FROM maxf;
SELECT is(bloom_maybe(bf, ARRAY['k7', 'absent']), ARRAY['k7'], 'bloom_maybe over 2 candidates (sliced)')
FROM maxf;
SELECT ok(bloom_contains_all(bf, ARRAY(SELECT 'k' || i FROM generate_series(1, 1000) i)),
          'bloom_contains_all') FROM maxf;
SELECT ok(NOT bloom_contains_any(bf, ARRAY(SELECT 'x' || i FROM generate_series(1, 1000) i)),
          'bloom_contains_any') FROM maxf;
SELECT is(count(*), 100000::bigint, '@> for 100,000 keys at one call site (slices, then read whole)')
FROM maxf, generate_series(1, 100000) i WHERE bf @> ('k' || (i % 1000 + 1));
SELECT is(count(*), 0::bigint, '@> for 10,000 absent keys')
FROM maxf, generate_series(1, 10000) i WHERE bf @> ('x' || i);

SELECT is((bloom_info(bloom_empty(867181822, 0.01) | bf)->>'added')::bigint, 1000::bigint,
          '| with the stored filter as the second argument') FROM maxf;
SELECT is((bloom_info(bf | bf)->>'added')::bigint, 2000::bigint, '| of the stored filter with itself')
FROM maxf;
SELECT ok((bf & bf) @> 'k500'::text AND (bloom_info(bf & bf)->>'added')::bigint = 1000,
          '& of the stored filter with itself') FROM maxf;
SELECT ok(bf = bf, '= of the stored filter with itself') FROM maxf;

SELECT is(octet_length(bf::bytea), 1072693184, 'the cast to bytea') FROM maxf;
SELECT is(octet_length(bloomfilter_send(bf)), 1072693184, 'send') FROM maxf;
SELECT throws_ok($$SELECT bf::text FROM maxf$$, '54000',
                 'bloomfilter of 8581544960 bits is too large for text output',
                 'text output: 54000, not an allocation failure');
SELECT throws_ok($$SELECT bloomfilter_out(bf) IS NULL FROM maxf$$, '54000',
                 'bloomfilter of 8581544960 bits is too large for text output',
                 'bloomfilter_out: 54000');

-- The largest classic and cuckoo filters are stored beside other columns
-- (a value of nearly MaxAllocSize could be made but not stored: the row is
-- formed in one allocation before it is toasted).
SELECT throws_ok($$SELECT bloom_empty(894567489, 0.01, 'classic')$$, '54000',
                 'bloomfilter capacity 894567489 is too large at false-positive rate 0.01',
                 'classic: one key more than the maximum does not fit');
SELECT throws_ok($$SELECT cuckoo_empty(815300000, 0.01)$$, '54000',
                 'cuckoofilter capacity 815300000 is too large at false-positive rate 0.01',
                 'cuckoo: a filter of 1 GB less 1 MB does not fit');
CREATE TABLE maxrow (id bigint, note text, bf bloomfilter, cf cuckoofilter);
SELECT lives_ok($$INSERT INTO maxrow VALUES (1, repeat('n', 100000),
                                             bloom_empty(894567488, 0.01, 'classic'), NULL)$$,
                'the largest classic filter is stored with other columns');
SELECT lives_ok($$INSERT INTO maxrow VALUES (2, repeat('n', 100000), NULL,
                                             cuckoo_empty(815200000, 0.01))$$,
                'the largest cuckoo filter is stored with other columns');

SELECT * FROM finish();
ROLLBACK;
