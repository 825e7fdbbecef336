--
-- fpr.sql — the false-positive rate and the sizing.
--
-- A filter of capacity 100,000 is filled with exactly 100,000 distinct keys
-- and checked against 1,000,000 keys that were never added, at 1% and 0.1%,
-- in both layouts (integer keys at 1%, text keys at 0.1%).  At 0.1% the
-- standard deviation of the measured rate is about 3.2% of the target, so the
-- band [0.8, 1.1] x target is more than 3 standard deviations wide on each side.
--
-- Bits per key are compared with the optimum of each layout:
--   classic: -log2(p) / ln 2        9.585 at 1%, 14.378 at 0.1%
--   blocked: the fewest bits (in 512-bit blocks, best k) whose Poisson-mixture
--            FPR  sum_i Pois(i; 512 n/m) (1 - (1 - 1/512)^(k i))^k  is <= p
--            at n = 100,000: 989,696 bits, k = 6 at 1% (9.897 bits per key)
--            and 1,549,312 bits, k = 9 at 0.1% (15.493 bits per key),
--            computed independently of the extension.
--
BEGIN;
SELECT plan(32);

CREATE TEMP TABLE fpr_case (ord int, layout text, target float8, keys text, optimum float8);
INSERT INTO fpr_case VALUES
	(1, 'blocked', 0.01,  'integer', 9.897),
	(2, 'classic', 0.01,  'integer', 9.585),
	(3, 'blocked', 0.001, 'text',    15.493),
	(4, 'classic', 0.001, 'text',    14.378);

CREATE TEMP TABLE fpr_res (
	ord int, layout text, target float8, keys text, optimum float8,
	measured float8, est_fpr float8, est_card float8, info jsonb, popcount bigint,
	payload_bytes int);

CREATE FUNCTION pg_temp.fpr_measure(c fpr_case) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
	f	bloomfilter;
	fp	bigint;
BEGIN
	IF c.keys = 'integer' THEN
		SELECT bloom_agg(i::int8, 100000, c.target, c.layout) INTO f
		FROM generate_series(1, 100000) AS i;
		SELECT count(*) FILTER (WHERE f @> i::int8) INTO fp
		FROM generate_series(100001, 1100000) AS i;
	ELSE
		SELECT bloom_agg('present:' || i, 100000, c.target, c.layout) INTO f
		FROM generate_series(1, 100000) AS i;
		SELECT count(*) FILTER (WHERE f @> ('absent:' || i)) INTO fp
		FROM generate_series(1, 1000000) AS i;
	END IF;
	INSERT INTO fpr_res VALUES (c.ord, c.layout, c.target, c.keys, c.optimum,
		fp / 1e6, bloom_fpr(f), bloom_cardinality(f), bloom_info(f),
		bit_count(substring(f::bytea FROM 65)), octet_length(f::bytea) - 64);
END
$fn$;

DO $$ BEGIN PERFORM pg_temp.fpr_measure(c) FROM fpr_case c ORDER BY ord; END $$;

-- For the record (shown by pg_prove -v).
SELECT diag(format('%s %s%%: measured FPR %s (%s x target), bloom_fpr %s, cardinality %s, bits %s, hashes %s, bits/key %s (optimum %s)',
				   layout, target * 100, measured, round((measured / target)::numeric, 3),
				   round(est_fpr::numeric, 6), round(est_card::numeric, 1),
				   info->>'bits', info->>'hashes',
				   round((info->>'bits')::numeric / 100000, 3), optimum))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- Measured FPR within [0.8, 1.1] x target.
SELECT ok(measured BETWEEN 0.8 * target AND 1.1 * target,
		  format('%s %s%%: measured FPR %s over 1,000,000 absent %s keys is within [0.8, 1.1] x target',
				 layout, target * 100, measured, keys))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- bloom_fpr (from the bits) within [0.8, 1.25] x measured.
SELECT ok(est_fpr BETWEEN 0.8 * measured AND 1.25 * measured,
		  format('%s %s%%: bloom_fpr %s is within [0.8, 1.25] x the measured %s',
				 layout, target * 100, est_fpr, measured))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- bloom_cardinality within 5% of the 100,000 keys added.
SELECT ok(abs(est_card - 100000) <= 5000,
		  format('%s %s%%: bloom_cardinality %s is within 5%% of 100000',
				 layout, target * 100, est_card))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- Bits per key within 3% of the layout's optimum.
SELECT ok(abs((info->>'bits')::float8 / 100000 / optimum - 1) <= 0.03,
		  format('%s %s%%: %s bits per key is within 3%% of the optimum %s',
				 layout, target * 100, (info->>'bits')::float8 / 100000, optimum))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- The predicted FPR at capacity, from the recorded bits and hashes, does not
-- exceed the target (the sizing meets its own promise).
SELECT ok(CASE layout
			  WHEN 'classic' THEN
				  power(1 - exp(-(info->>'hashes')::float8 * 100000 / (info->>'bits')::float8),
						(info->>'hashes')::float8)
			  ELSE (SELECT sum(exp(-lam + j * ln(lam) - lgam)
							   * power(1 - power(1 - 1.0 / 512, (info->>'hashes')::float8 * j),
									   (info->>'hashes')::float8))
					FROM (SELECT 512.0 * 100000 / (info->>'bits')::float8 AS lam) l,
						 LATERAL (SELECT j, sum(ln(greatest(j, 1))) OVER (ORDER BY j) AS lgam
								  FROM generate_series(0, 400) AS j) g)
		  END <= target * 1.000001,
		  format('%s %s%%: the predicted FPR at capacity for bits=%s, hashes=%s is at most the target',
				 layout, target * 100, info->>'bits', info->>'hashes'))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- The header fields of bloom_info.
SELECT is(jsonb_build_object('version', info->'version', 'layout', info->'layout',
							 'capacity', info->'capacity', 'target_fpr', info->'target_fpr',
							 'added', info->'added', 'key_kind', info->'key_kind'),
		  jsonb_build_object('version', 2, 'layout', layout, 'capacity', 100000,
							 'target_fpr', target, 'added', 100000, 'key_kind', keys),
		  format('%s %s%%: bloom_info header fields', layout, target * 100))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- The derived fields of bloom_info agree with the bits and the functions.
SELECT is(jsonb_build_object(
			  'bytes = 64 + bits / 8 = length of the value',
			  (info->>'bytes')::bigint = 64 + (info->>'bits')::bigint / 8
			  AND (info->>'bits')::bigint % 8 = 0 AND payload_bytes * 8 = (info->>'bits')::bigint,
			  'bits_set = popcount of the payload', (info->>'bits_set')::bigint = popcount,
			  'fill = bits_set / bits', abs((info->>'fill')::float8
											- popcount::float8 / (info->>'bits')::float8) < 1e-9,
			  'estimated_fpr = bloom_fpr', abs((info->>'estimated_fpr')::float8 - est_fpr)
										   <= 1e-9 * est_fpr,
			  'estimated_cardinality = bloom_cardinality',
			  abs((info->>'estimated_cardinality')::float8 - est_card) <= 1e-6 * est_card),
		  jsonb_build_object(
			  'bytes = 64 + bits / 8 = length of the value', true,
			  'bits_set = popcount of the payload', true,
			  'fill = bits_set / bits', true,
			  'estimated_fpr = bloom_fpr', true,
			  'estimated_cardinality = bloom_cardinality', true),
		  format('%s %s%%: bloom_info derived fields agree with the bits', layout, target * 100))
FROM (SELECT * FROM fpr_res ORDER BY ord) r;

-- An empty filter: no bits set, estimates zero.
SELECT is(bloom_cardinality(bloom_empty(100000, 0.01, l)), 0::float8,
		  l || ': bloom_cardinality of an empty filter is 0')
FROM unnest(ARRAY['blocked', 'classic']) AS l;
SELECT is(bloom_fpr(bloom_empty(100000, 0.01, l)), 0::float8,
		  l || ': bloom_fpr of an empty filter is 0')
FROM unnest(ARRAY['blocked', 'classic']) AS l;

SELECT * FROM finish();
ROLLBACK;
