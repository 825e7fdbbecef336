-- test/bench/scalable.sql — run by test/bench/scalable.sh (psql variables n,
-- load).  For each target rate and layout: a scalable filter of initial
-- capacity n/100 (defaults growth 2, ratio 0.5, and growth 4, ratio 0.8)
-- after n keys, and a filter sized in advance for n keys at the same rate:
-- layers, bits per key, the measured false-positive rate over n absent
-- keys, false negatives, and the ratios scalable / sized in advance.
\set ON_ERROR_STOP on
\pset footer off
\echo load average at the start: :load
SET max_parallel_workers_per_gather = 0;

CREATE TABLE k AS SELECT 'key-' || i AS key FROM generate_series(1, :n) i;
CREATE TABLE a AS SELECT 'absent-' || i AS key FROM generate_series(1, :n) i;

CREATE TABLE cases (ord int, fpr float8, layout text, growth int, ratio float8);
INSERT INTO cases VALUES
	(1, 0.01, 'blocked', 2, 0.5), (2, 0.01, 'blocked', 4, 0.8),
	(3, 0.001, 'blocked', 2, 0.5), (4, 0.001, 'blocked', 4, 0.8),
	(5, 0.01, 'classic', 2, 0.5);

CREATE TABLE built AS
SELECT c.*,
	   (SELECT bloom_add_all(bloom_empty_scalable(:n / 100, c.fpr, c.growth, c.ratio, c.layout),
							 array_agg(key)) FROM k) AS s,
	   (SELECT bloom_agg(key, :n, c.fpr, c.layout) FROM k) AS f
FROM cases c;

CREATE TABLE measured AS
SELECT ord, fpr, layout, growth, ratio,
	   jsonb_array_length(bloom_info(s)->'layers') AS layers,
	   length(s::bytea) * 8.0 / :n AS s_bits_per_key,
	   length(f::bytea) * 8.0 / :n AS f_bits_per_key,
	   (bloom_info(s)->>'predicted_fpr')::float8 AS s_predicted,
	   (SELECT count(*) FROM a WHERE s @> key)::float8 / :n AS s_fpr,
	   (SELECT count(*) FROM a WHERE f @> key)::float8 / :n AS f_fpr,
	   (SELECT count(*) FROM k WHERE NOT s @> key) AS s_false_negatives
FROM built;

SELECT format('%s%%', fpr * 100) AS target, layout, growth, ratio, layers,
	   round(s_bits_per_key, 2) AS "bits/key scalable",
	   round(f_bits_per_key, 2) AS "bits/key sized",
	   round(s_bits_per_key / f_bits_per_key, 2) || '×' AS "bits ×",
	   round(s_fpr::numeric * 100, 4) || '%' AS "FPR scalable",
	   round((s_fpr / fpr)::numeric, 3) || '×' AS "× target",
	   round((s_fpr / s_predicted)::numeric, 3) || '×' AS "× predicted",
	   round(f_fpr::numeric * 100, 4) || '%' AS "FPR sized",
	   s_false_negatives AS "false neg."
FROM measured ORDER BY ord;
