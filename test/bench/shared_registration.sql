-- test/bench/shared_registration.sql — the shared-filter benchmark, run by
-- test/bench/shared_registration.sh on a throwaway server started with
-- shared_preload_libraries = 'bloomfilter', in an empty database:
--     psql -X -q -v ON_ERROR_STOP=1 -v step=setup  -v rows=N -f ...
--     (the script runs pgbench and fills bench_runs)
--     psql -X -q -v ON_ERROR_STOP=1 -v step=report -f ...
--
-- step=setup: two identical users tables of :rows names ('user1' ...) with a
-- unique B-tree index on username; users_guarded gets bloom_guard (timed,
-- until bloom_shared_wait); the two lookup functions of the README guide;
-- then server-side lookups (no client round trip): :n_server absent names
-- and :n_server present names through each function, in one statement,
-- EXPLAIN (ANALYZE, TIMING OFF) execution time, best of 3 after a warm-up.
--
-- Then the same absent names without the function wrapper: a bare
-- bloom_shared_contains against a bare EXISTS index probe.
--
-- step=report: one table, unguarded and guarded side by side, as ratios.
-- A measurement, never a test: nothing here fails on a figure.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

\if :{?step}
\else
\set step setup
\endif
\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?n_server}
\else
\set n_server 200000
\endif
SELECT :'step' = 'setup' AS step_setup, :'step' = 'report' AS step_report \gset

\if :step_setup
-- ------------------------------------------------------------- setup ----
CREATE EXTENSION bloomfilter;

CREATE TABLE bench_runs (variant text, round int, tps float8, latency_ms float8,
	transactions bigint, failed bigint, checks bigint, negatives bigint);
CREATE TABLE bench_server (variant text, what text, value float8);
-- A number to n significant digits, as text.
CREATE FUNCTION sig(x float8, n int DEFAULT 3) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN x IS NULL OR x = 'NaN'::float8 THEN NULL
		WHEN x = 0 THEN '0'
		ELSE round(x::numeric, greatest(0, n - 1 - floor(log(abs(x)::numeric))::int))::text
	END
$$;

CREATE TABLE users_plain (id bigserial PRIMARY KEY, username text NOT NULL UNIQUE);
CREATE TABLE users_guarded (id bigserial PRIMARY KEY, username text NOT NULL UNIQUE);
SELECT clock_timestamp() AS t0 \gset
INSERT INTO users_plain (username) SELECT 'user' || i FROM generate_series(1, :rows) i;
INSERT INTO users_guarded (username) SELECT username FROM users_plain ORDER BY id;
SELECT setval('users_guarded_id_seq', :rows) AS ignored \gset
VACUUM ANALYZE users_plain;
VACUUM ANALYZE users_guarded;
CREATE SEQUENCE reg_plain;
CREATE SEQUENCE reg_guarded;
INSERT INTO bench_server VALUES ('both', 'load_s', extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));

-- The guard, built in the background; timed until ready.
SELECT clock_timestamp() AS t0 \gset
SELECT bloom_guard('users_guarded', 'username') AS guard_name \gset
SELECT bloom_shared_wait(:'guard_name', 3600000) AS ready \gset
INSERT INTO bench_server VALUES ('guarded', 'build_s', extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
INSERT INTO bench_server VALUES ('guarded', 'ready', :'ready'::boolean::int);

-- The lookups of the README guide: the filter first, the table only on
-- "maybe"; and the plain index lookup.
CREATE FUNCTION username_taken(candidate text) RETURNS boolean
LANGUAGE sql AS $$
	SELECT CASE
		WHEN NOT bloom_shared_contains('public.users_guarded.username', candidate) THEN false
		ELSE EXISTS (SELECT 1 FROM users_guarded WHERE username = candidate)
	END
$$;
CREATE FUNCTION username_taken_plain(candidate text) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT EXISTS (SELECT 1 FROM users_plain WHERE username = candidate)
$$;

-- Nanoseconds per lookup: best of 3 runs (after a warm-up) of a statement
-- making n lookups.
CREATE FUNCTION bench_ns(q text, n int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	j json;
	best float8 := 'Infinity';
	t float8;
BEGIN
	FOR i IN 0 .. 3 LOOP
		EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
		t := (j -> 0 ->> 'Execution Time')::float8;
		IF i > 0 AND t < best THEN best := t; END IF;
	END LOOP;
	RETURN best * 1e6 / n;
END $$;

SELECT format('SELECT count(*) FILTER (WHERE %s(%s)) FROM generate_series(1, %s) i',
	'%s', '%s', :n_server) AS tmpl \gset
INSERT INTO bench_server
SELECT v, w, bench_ns(format(:'tmpl', f, k), :n_server)
FROM (VALUES
	('plain', 'absent_ns', 'username_taken_plain', $$'new' || i$$),
	('guarded', 'absent_ns', 'username_taken', $$'new' || i$$),
	('plain', 'present_ns', 'username_taken_plain', format($k$'user' || (i * 7 %% %s + 1)$k$, :rows)),
	('guarded', 'present_ns', 'username_taken', format($k$'user' || (i * 7 %% %s + 1)$k$, :rows))
) AS c(v, w, f, k);
-- The same absent names without the function wrapper: the bare check
-- against the bare index probe.
SELECT format('SELECT count(*) FROM generate_series(1, %s) i WHERE %%s', :n_server) AS tmpl2 \gset
INSERT INTO bench_server
SELECT v, 'bare_absent_ns', bench_ns(format(:'tmpl2', cond), :n_server)
FROM (VALUES
	('plain', $c$EXISTS (SELECT 1 FROM users_plain WHERE username = 'new' || i)$c$),
	('guarded', $c$bloom_shared_contains('public.users_guarded.username', 'new' || i)$c$)
) AS c(v, cond);
\endif

\if :step_report
-- ------------------------------------------------------------ report ----
\pset footer off
\pset null 'n/a'
CREATE TEMP VIEW r AS
SELECT variant, avg(tps) AS tps, min(tps) AS tps_min, max(tps) AS tps_max,
	   avg(latency_ms) AS lat, sum(transactions) AS tx, sum(failed) AS failed,
	   sum(checks) AS checks, sum(negatives) AS negatives
FROM bench_runs GROUP BY variant;
CREATE TEMP VIEW s AS
SELECT max(value) FILTER (WHERE variant = 'plain' AND what = 'absent_ns') AS p_abs,
	   max(value) FILTER (WHERE variant = 'guarded' AND what = 'absent_ns') AS g_abs,
	   max(value) FILTER (WHERE variant = 'plain' AND what = 'present_ns') AS p_pre,
	   max(value) FILTER (WHERE variant = 'guarded' AND what = 'present_ns') AS g_pre,
	   max(value) FILTER (WHERE variant = 'plain' AND what = 'bare_absent_ns') AS p_bare,
	   max(value) FILTER (WHERE variant = 'guarded' AND what = 'bare_absent_ns') AS g_bare,
	   max(value) FILTER (WHERE what = 'build_s') AS build_s,
	   max(value) FILTER (WHERE what = 'load_s') AS load_s
FROM bench_server;
CREATE TEMP VIEW f AS
SELECT capacity, keys_added, bits, memory_bytes, estimated_fpr, state
FROM bloom_shared_filters WHERE name = 'public.users_guarded.username';

SELECT m AS measurement, u AS unguarded, g AS guarded, ratio AS "guarded / unguarded"
FROM (
	SELECT 1 AS o, 'pgbench TPS (mean of rounds; min–max)' AS m,
		   sig(p.tps) || ' (' || sig(p.tps_min) || '–' || sig(p.tps_max) || ')' AS u,
		   sig(g.tps) || ' (' || sig(g.tps_min) || '–' || sig(g.tps_max) || ')' AS g,
		   sig(g.tps / p.tps) || '×' AS ratio
	FROM r p, r g WHERE p.variant = 'plain' AND g.variant = 'guarded'
	UNION ALL
	SELECT 2, 'pgbench latency average, ms', sig(p.lat), sig(g.lat), sig(g.lat / p.lat) || '×'
	FROM r p, r g WHERE p.variant = 'plain' AND g.variant = 'guarded'
	UNION ALL
	SELECT 3, 'transactions (failed)', p.tx || ' (' || p.failed || ')', g.tx || ' (' || g.failed || ')', NULL
	FROM r p, r g WHERE p.variant = 'plain' AND g.variant = 'guarded'
	UNION ALL
	SELECT 4, 'lookups that reached the table (checks of new names)', '100%',
		   sig(100 * (1 - g.negatives::float8 / nullif(g.checks, 0))) || '% (' || (g.checks - g.negatives)
		   || ' of ' || g.checks || ' checks; view: negatives/checks)',
		   sig(1 - g.negatives::float8 / nullif(g.checks, 0)) || '×'
	FROM r g WHERE g.variant = 'guarded'
	UNION ALL
	SELECT 5, 'server-side lookup of an absent name (SQL function), ns', sig(p_abs), sig(g_abs), sig(g_abs / p_abs) || '×' FROM s
	UNION ALL
	SELECT 6, 'server-side lookup of a present name (SQL function), ns', sig(p_pre), sig(g_pre), sig(g_pre / p_pre) || '×' FROM s
	UNION ALL
	SELECT 6.5, 'bare: index probe vs bloom_shared_contains, absent name, ns', sig(p_bare), sig(g_bare),
		   sig(g_bare / p_bare) || '×' FROM s
	UNION ALL
	SELECT 7, 'memory: B-tree on username vs shared filter, MB',
		   sig(pg_relation_size('users_plain_username_key') / 1048576.0),
		   sig(f.memory_bytes / 1048576.0) || ' (pool bloomfilter.shared_memory = '
		   || current_setting('bloomfilter.shared_memory') || ')',
		   sig(f.memory_bytes::float8 / pg_relation_size('users_plain_username_key')) || '×'
	FROM f
	UNION ALL
	SELECT 8, 'filter: state, capacity, keys added, bits/key, estimated FPR', NULL,
		   f.state || ', ' || f.capacity || ', ' || f.keys_added || ', '
		   || sig(f.bits::float8 / nullif(f.keys_added, 0)) || ', ' || sig(100 * f.estimated_fpr) || '%', NULL
	FROM f
	UNION ALL
	SELECT 9, 'build of the filter (bloom_guard until ready), s', NULL, sig(build_s), NULL FROM s
	UNION ALL
	SELECT 10, 'rows at the end', (SELECT count(*) FROM users_plain)::text,
		   (SELECT count(*) FROM users_guarded)::text, NULL
) AS t ORDER BY o;
\endif
