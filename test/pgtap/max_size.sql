-- max_size.sql: the largest filter (the README's maximum, 868,029,507 keys
-- at 1%, blocked: a value of 1,073,741,760 bytes) stored in a table works
-- with every function: read whole (through the backend cache, whose copy
-- with its alignment slack is a huge allocation), sliced, merged, cast and
-- sent.  Text output of it is refused with 54000 (base64 would exceed
-- 1 GB).  About 1.5 minutes and up to 3 GB of memory (a union holds its
-- result, its first argument and the cached second one).
BEGIN;
SELECT plan(19);

SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL jit = off;

SELECT throws_ok($$SELECT bloom_empty(868029508, 0.01)$$, '54000',
                 'bloomfilter capacity 868029508 is too large at false-positive rate 0.01',
                 'one key more than the maximum does not fit');

CREATE TABLE maxf AS
SELECT bloom_add_all(bloom_empty(868029507, 0.01),
                     ARRAY(SELECT 'k' || i FROM generate_series(1, 1000) i)) AS bf;
SELECT is(pg_column_size(bf), 1073741760, 'the maximum filter is stored whole (1,073,741,760 bytes, uncompressed)')
FROM maxf;

SELECT is((bloom_info(bf)->>'bytes')::bigint, 1073741760::bigint, 'bloom_info')
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

SELECT is((bloom_info(bloom_empty(868029507, 0.01) | bf)->>'added')::bigint, 1000::bigint,
          '| with the stored filter as the second argument') FROM maxf;
SELECT is((bloom_info(bf | bf)->>'added')::bigint, 2000::bigint, '| of the stored filter with itself')
FROM maxf;
SELECT ok((bf & bf) @> 'k500'::text AND (bloom_info(bf & bf)->>'added')::bigint = 1000,
          '& of the stored filter with itself') FROM maxf;
SELECT ok(bf = bf, '= of the stored filter with itself') FROM maxf;

SELECT is(octet_length(bf::bytea), 1073741760, 'the cast to bytea') FROM maxf;
SELECT is(octet_length(bloomfilter_send(bf)), 1073741760, 'send') FROM maxf;
SELECT throws_ok($$SELECT bf::text FROM maxf$$, '54000',
                 'bloomfilter of 8589933568 bits is too large for text output',
                 'text output: 54000, not an allocation failure');
SELECT throws_ok($$SELECT bloomfilter_out(bf) IS NULL FROM maxf$$, '54000',
                 'bloomfilter of 8589933568 bits is too large for text output',
                 'bloomfilter_out: 54000');

SELECT * FROM finish();
ROLLBACK;
