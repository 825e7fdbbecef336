--
-- variants.sql — bloomfilter (blocked), counting and cuckoo filters side by
-- side at 1%, 0.1% and 0.01%: bits per key, measured false-positive rate,
-- and the cost of a check and of an add per key (test/bench/variants.sh).
--
-- :n keys are added ('k' || i), :n_absent absent keys ('a' || i) checked.
-- A check: a scan of the absent keys testing each against the filter (a
-- sub-select, read once), less the same scan without the test; best of 3.
-- An add: the aggregate over the keys (bloom_agg / cuckoo_agg with the
-- capacity), less count(*) over them; best of 3.
--
\set ON_ERROR_STOP 1
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE keys AS SELECT 'k' || i AS k FROM generate_series(1, :n) i;
CREATE TEMP TABLE absent AS SELECT 'a' || i AS k FROM generate_series(1, :n_absent) i;
ANALYZE keys, absent;

-- the run time of a statement in ms: best of 3
CREATE FUNCTION pg_temp.ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	best float8 := 'Infinity';
	t0 timestamptz;
BEGIN
	FOR i IN 1 .. 3 LOOP
		t0 := clock_timestamp();
		EXECUTE q;
		best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
	END LOOP;
	RETURN best;
END $$;

CREATE TEMP TABLE filters (variant text, p float8, bf bloomfilter, cf cuckoofilter);
INSERT INTO filters
SELECT v, p,
	   CASE WHEN v <> 'cuckoo' THEN (SELECT bloom_agg(k, :n, p, v) FROM keys) END,
	   CASE WHEN v = 'cuckoo' THEN (SELECT cuckoo_agg(k, :n, p) FROM keys) END
FROM unnest('{blocked,counting,cuckoo}'::text[]) v, unnest('{0.01,0.001,0.0001}'::float8[]) p;

CREATE TEMP TABLE results AS
SELECT variant, p,
	   8.0 * coalesce(octet_length(bf::bytea), octet_length(cf::bytea)) / :n AS bits_per_key,
	   CASE WHEN bf IS NOT NULL
			THEN (SELECT count(*) FROM absent WHERE (SELECT bf FROM filters f2 WHERE f2.variant = f.variant AND f2.p = f.p) @> k)
			ELSE (SELECT count(*) FROM absent WHERE (SELECT cf FROM filters f2 WHERE f2.variant = f.variant AND f2.p = f.p) @> k)
	   END::float8 / :n_absent AS measured_fpr,
	   CASE WHEN bf IS NOT NULL
			THEN (SELECT count(*) FROM keys WHERE NOT (SELECT bf FROM filters f2 WHERE f2.variant = f.variant AND f2.p = f.p) @> k)
			ELSE (SELECT count(*) FROM keys WHERE NOT (SELECT cf FROM filters f2 WHERE f2.variant = f.variant AND f2.p = f.p) @> k)
	   END AS false_negatives,
	   pg_temp.ms(format('SELECT count(*) FROM absent WHERE (SELECT %s FROM filters WHERE variant = %L AND p = %s) @> k',
						 CASE WHEN bf IS NULL THEN 'cf' ELSE 'bf' END, variant, p)) AS check_ms,
	   pg_temp.ms(CASE WHEN bf IS NULL THEN format('SELECT cuckoo_agg(k, %s, %s) FROM keys', :n, p)
				  ELSE format('SELECT bloom_agg(k, %s, %s, %L) FROM keys', :n, p, variant) END) AS add_ms
FROM filters f;
SELECT pg_temp.ms('SELECT count(*) FROM absent') AS scan_ms \gset
SELECT pg_temp.ms('SELECT count(*) FROM keys') AS keys_ms \gset

\pset footer off
SELECT format('=== variants: %s keys, %s absent; PostgreSQL %s; load average %s ===', :n, :n_absent,
			  current_setting('server_version'), :'load') AS " ";
SELECT r.variant, (r.p * 100)::text || '%' AS target,
	   round(r.bits_per_key::numeric, 2) AS "bits/key",
	   round((r.bits_per_key / b.bits_per_key)::numeric, 2) || '×' AS "× blocked",
	   round((r.measured_fpr * 100)::numeric, 4) || '%' AS "measured FPR",
	   round((r.measured_fpr / r.p)::numeric, 3) || '×' AS "× target",
	   r.false_negatives AS "false neg.",
	   round(((r.check_ms - :scan_ms) * 1e6 / :n_absent)::numeric, 0) AS "check ns",
	   round(((r.check_ms - :scan_ms) / (b.check_ms - :scan_ms))::numeric, 2) || '×' AS "check × blocked",
	   round(((r.add_ms - :keys_ms) * 1e6 / :n)::numeric, 0) AS "add ns",
	   round(((r.add_ms - :keys_ms) / (b.add_ms - :keys_ms))::numeric, 2) || '×' AS "add × blocked"
FROM results r JOIN results b ON b.variant = 'blocked' AND b.p = r.p
ORDER BY r.p DESC, r.variant;
