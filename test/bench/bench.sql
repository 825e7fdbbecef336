-- test/bench/bench.sql — the bloomfilter benchmark, run by test/bench.sh on a
-- throwaway server in an empty database, as a superuser:
--     psql -X -q -v ON_ERROR_STOP=1 -d bench -f test/bench/bench.sql
-- (sizes as psql variables; test/bench.sh passes them, defaults below).
--
-- Measures side by side, in one run, the five figures of the performance budget (README, Performance) and
-- prints them as one table: measurement, value, unit, compared to, ratio,
-- target (DESIGN §9), meets.  A feature that is not there (self-sizing
-- bloom_agg, in-place PL/pgSQL adds) prints "n/a" or "timeout", never fails
-- the run.
--
-- Timings: queries run under EXPLAIN (ANALYZE, TIMING OFF) and their
-- "Execution Time" is taken, best of 5 after a warm-up (best of 3, no
-- warm-up, for the 10M-row builds: the table is warm); single calls run as distinct EXECUTEd statements (a new
-- plan, so a new call site, each time), averaged over many calls, best of 3.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

\if :{?n_s}
\else
\set n_s 100000
\endif
\if :{?n_m}
\else
\set n_m 1000000
\endif
\if :{?n_l}
\else
\set n_l 10000000
\endif
\if :{?n_big}
\else
\set n_big 50000000
\endif
\if :{?n_cand}
\else
\set n_cand 500000
\endif
\if :{?n_absent}
\else
\set n_absent 1000000
\endif
\if :{?n_calls}
\else
\set n_calls 2000
\endif
\if :{?n_detoast}
\else
\set n_detoast 10
\endif
\if :{?n_adds}
\else
\set n_adds 100000
\endif
\if :{?add_capacity}
\else
\set add_capacity 8000000
\endif
\if :{?add_timeout}
\else
\set add_timeout 20
\endif
\if :{?quick}
\else
\set quick 0
\endif
\if :{?lat_l}
\else
\set lat_l ''
\endif
\if :{?lat_big}
\else
\set lat_big ''
\endif
\if :{?load_start}
\else
\set load_start '?'
\endif

CREATE EXTENSION bloomfilter;
CREATE EXTENSION hll;

-- Only the final table goes to stdout; progress goes to stderr (INFO).
\o /dev/null

SELECT clock_timestamp() AS bench_t0 \gset

-----------------------------------------------------------------------------
-- Helpers
-----------------------------------------------------------------------------
CREATE TABLE bench_results (
	ord serial,
	measurement text,
	value text,
	unit text,
	compared_to text,
	ratio text,
	target text,
	meets text
);

-- A number to n significant digits, as text; NULL as 'n/a'.
CREATE FUNCTION sig(x float8, n int DEFAULT 3) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN x IS NULL OR x = 'NaN'::float8 THEN 'n/a'
		WHEN x = 0 THEN '0'
		ELSE round(x::numeric,
			greatest(0, n - 1 - floor(log(abs(x)::numeric))::int))::text
	END
$$;

CREATE FUNCTION yesno(b boolean) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN b THEN 'yes' WHEN NOT b THEN 'NO' ELSE '-' END
$$;

CREATE FUNCTION res(measurement text, value text, unit text, compared_to text,
					ratio text, target text, meets boolean) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO bench_results (measurement, value, unit, compared_to, ratio, target, meets)
	VALUES (measurement, coalesce(value, 'n/a'), unit, compared_to,
			coalesce(ratio, 'n/a'), target, yesno(meets))
$$;

CREATE FUNCTION progress(msg text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	RAISE INFO '% [%]', msg,
		to_char(clock_timestamp() - current_setting('bench.t0')::timestamptz, 'MI:SS');
END $$;
SELECT set_config('bench.t0', :'bench_t0', false);

-- One EXPLAIN (ANALYZE, TIMING OFF) run of q: its JSON plan.
CREATE FUNCTION bench_explain(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
	RETURN j::jsonb -> 0;
END $$;

-- Best "Execution Time" (ms) of `runs` runs after `warmup` runs, the number
-- of parallel workers launched, and the plan's node types.
CREATE FUNCTION bench_ms(q text, runs int DEFAULT 3, warmup int DEFAULT 1,
						 OUT ms float8, OUT workers int, OUT nodes text)
LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
	t float8;
BEGIN
	ms := 'Infinity';
	FOR i IN 1 .. warmup LOOP
		PERFORM bench_explain(q);
	END LOOP;
	FOR i IN 1 .. runs LOOP
		j := bench_explain(q);
		t := (j ->> 'Execution Time')::float8;
		IF t < ms THEN ms := t; END IF;
	END LOOP;
	workers := coalesce(jsonb_path_query_first(j, '$.**."Workers Launched"')::int, 0);
	-- node types, with EXPLAIN's text names for partial aggregation
	-- ("Partial Mode" in JSON: "Partial Aggregate", "Finalize Aggregate")
	SELECT string_agg(DISTINCT n, ', ') INTO nodes
	FROM (SELECT CASE WHEN x ->> 'Partial Mode' IN ('Partial', 'Finalize')
					  THEN (x ->> 'Partial Mode') || ' ' || (x ->> 'Node Type')
					  ELSE x ->> 'Node Type' END
		  FROM jsonb_path_query(j, 'strict $.**') AS x
		  WHERE jsonb_typeof(x) = 'object' AND x ? 'Node Type') AS s(n);
END $$;

-- Microseconds per call of a single-row statement, each call a distinct
-- statement (tmpl with a random number for %s) run by EXECUTE: a new plan,
-- so a new call site with an empty cache, each time.  Average over n calls,
-- best of `runs`, after one warm-up call.
CREATE FUNCTION bench_call_us(tmpl text, n int, runs int DEFAULT 3) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
	best float8 := 'Infinity';
	d text;
BEGIN
	EXECUTE format(tmpl, 0) INTO d;
	FOR r IN 1 .. runs LOOP
		t0 := clock_timestamp();
		FOR i IN 1 .. n LOOP
			EXECUTE format(tmpl, (random() * 1e9)::bigint) INTO d;
		END LOOP;
		best := least(best, extract(epoch FROM clock_timestamp() - t0)::float8 * 1e6 / n);
	END LOOP;
	RETURN best;
END $$;

-- The same for two templates, alternately (so that other work on the
-- machine weighs on both alike): best of `rounds` for each.
CREATE FUNCTION bench_call_pair_us(tmpl1 text, tmpl2 text, n int, rounds int DEFAULT 5,
								   OUT us1 float8, OUT us2 float8)
LANGUAGE plpgsql AS $$
BEGIN
	us1 := 'Infinity';
	us2 := 'Infinity';
	FOR r IN 1 .. rounds LOOP
		us1 := least(us1, bench_call_us(tmpl1, n, 1));
		us2 := least(us2, bench_call_us(tmpl2, n, 1));
	END LOOP;
END $$;

-- n PL/pgSQL adds, f := bloom_add(f, 'k' || i), to an empty filter of the
-- given capacity at 1%: seconds (the filter's creation not included).
CREATE FUNCTION bench_adds(n int, capacity bigint) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	f bloomfilter := bloom_empty(capacity, 0.01);
	t0 timestamptz := clock_timestamp();
BEGIN
	FOR i IN 1 .. n LOOP
		f := bloom_add(f, 'k' || i);
	END LOOP;
	IF NOT (f @> ('k' || n) AND f @> 'k1') THEN
		RAISE EXCEPTION 'bench_adds: false negative';
	END IF;
	RETURN extract(epoch FROM clock_timestamp() - t0)::float8;
END $$;

-- bench_adds, NULL when cancelled by statement_timeout.
CREATE FUNCTION bench_adds_guarded(n int, capacity bigint) RETURNS float8
LANGUAGE plpgsql AS $$
BEGIN
	RETURN bench_adds(n, capacity);
EXCEPTION WHEN query_canceled THEN
	RETURN NULL;
END $$;

-----------------------------------------------------------------------------
-- Data.  Text keys 'key1' .. 'keyN' (COLLATE "C": the fastest B-tree, so the
-- comparison does not flatter the filter); candidates in random order, 1%
-- present (keys of the smallest set, so present in every filter), 99% absent.
-----------------------------------------------------------------------------
SELECT progress('setup: key tables and B-tree indexes (' || :n_s || ', ' || :n_m || ', ' || :n_l || ' rows)');
CREATE UNLOGGED TABLE keys_s (k text COLLATE "C" NOT NULL);
CREATE UNLOGGED TABLE keys_m (k text COLLATE "C" NOT NULL);
CREATE UNLOGGED TABLE keys_l (k text COLLATE "C" NOT NULL);
INSERT INTO keys_s SELECT 'key' || g FROM generate_series(1, :n_s) g;
INSERT INTO keys_m SELECT 'key' || g FROM generate_series(1, :n_m) g;
INSERT INTO keys_l SELECT 'key' || g FROM generate_series(1, :n_l) g;
CREATE INDEX keys_s_k ON keys_s (k);
CREATE INDEX keys_m_k ON keys_m (k);
CREATE INDEX keys_l_k ON keys_l (k);
VACUUM (FREEZE, ANALYZE) keys_s, keys_m, keys_l;

CREATE UNLOGGED TABLE cand AS
SELECT ('key' || ki) COLLATE "C" AS k, ki
FROM (SELECT CASE WHEN g % 100 = 0 THEN (g / 100 * 7919) % :n_s + 1
				  ELSE 1000000000 + g END::bigint AS ki
	  FROM generate_series(1, :n_cand) g) s
ORDER BY random();
-- Twice as many candidates (the same, and as many new absent ones): the
-- difference between the two is the steady per-row cost, without the
-- query's first read of the filter.
CREATE UNLOGGED TABLE cand2 AS
SELECT k, ki
FROM (SELECT k, ki FROM cand
	  UNION ALL
	  SELECT ('key' || (3000000000 + g)) COLLATE "C", 3000000000 + g
	  FROM generate_series(1, :n_cand) g) s
ORDER BY random();
CREATE UNLOGGED TABLE absent AS
SELECT ('key' || (2000000000 + g)) COLLATE "C" AS k
FROM generate_series(1, :n_absent) g;
VACUUM (FREEZE, ANALYZE) cand, cand2, absent;

SELECT progress('setup: stored filters');
CREATE TABLE filters (name text PRIMARY KEY, bf bloomfilter);
INSERT INTO filters SELECT 's', bloom_agg(k, :n_s, 0.01) FROM keys_s;
INSERT INTO filters SELECT 'm', bloom_agg(k, :n_m, 0.01) FROM keys_m;
INSERT INTO filters SELECT 'l', bloom_agg(k, :n_l, 0.01) FROM keys_l;

SELECT progress('setup: the ' || :n_big || '-key filter');
SELECT clock_timestamp() AS t_big \gset
INSERT INTO filters
SELECT 'big', bloom_agg(g, :n_big, 0.01)
FROM (SELECT generate_series(1, :n_big)::bigint AS g) s;
SELECT extract(epoch FROM clock_timestamp() - :'t_big')::float8 AS big_build_s \gset
VACUUM ANALYZE filters;
SELECT (bloom_info(bf) ->> 'bytes')::float8 / 1e6 AS big_mb FROM filters WHERE name = 'big' \gset

-----------------------------------------------------------------------------
-- 1. Candidate checks inside a query, serial: ns/row added over a plain scan
--    of the candidates, against a warm B-tree probe per candidate (nested
--    loop, index only scan) on the same keys.
-----------------------------------------------------------------------------
SELECT progress('1. ' || :n_cand || ' candidate checks');
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_hashagg = off;

SELECT (bench_ms('SELECT count(*) FROM cand WHERE k IS NOT NULL', 5)).ms AS base_ms \gset
SELECT (bench_ms('SELECT count(*) FROM cand WHERE ki IS NOT NULL', 5)).ms AS base_int_ms \gset
SELECT (bench_ms('SELECT count(*) FROM cand2 WHERE k IS NOT NULL', 5)).ms AS base2_ms \gset
SELECT (bench_ms('SELECT count(*) FROM cand2 WHERE ki IS NOT NULL', 5)).ms AS base2_int_ms \gset

CREATE FUNCTION bench_checks(fname text, keys_table text, nkeys bigint, ncand bigint,
							 base_ms float8, base2_ms float8) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	bloom record;
	btree record;
	mb float8;
	bloom_ns float8;
	btree_ns float8;
	label text;
	target_ns float8;
	detoast_ms float8;
	steady_ns float8;
BEGIN
	SELECT (bloom_info(bf) ->> 'bytes')::float8 / 1e6 INTO mb FROM filters WHERE name = fname;
	bloom := bench_ms(format('SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = %L) @> k', fname), 5);
	btree := bench_ms(format('SELECT count(*) FROM cand c WHERE EXISTS (SELECT 1 FROM %I t WHERE t.k = c.k)', keys_table), 5);
	-- The query detoasts the filter once (then checks its cached copy): for
	-- a large filter that is a visible part of the per-row figure.
	detoast_ms := (bench_ms(format('SELECT octet_length(bf::bytea) FROM filters WHERE name = %L', fname))).ms;
	bloom_ns := (bloom.ms - base_ms) * 1e6 / ncand;
	btree_ns := (btree.ms - base_ms) * 1e6 / ncand;
	label := format('1. check in a query, %s-key filter (%s MB)',
					to_char(nkeys, 'FM999,999,999'), sig(mb, 2));
	-- DESIGN §9: ≤ 60 ns/row for a cache-resident filter, ≤ 250 ns/row for a
	-- 60 MB one; a filter larger than a core's L2 (2 MB here) is held to
	-- the latter.
	target_ns := CASE WHEN mb <= 2 THEN 60 ELSE 250 END;
	PERFORM res(label, sig(bloom_ns), 'ns/row',
		format('B-tree probe %s ns/row (%s)%s', sig(btree_ns),
			   CASE WHEN btree.nodes LIKE '%Nested Loop%' AND btree.nodes LIKE '%Index%'
					THEN 'nested loop, ' || CASE WHEN btree.nodes LIKE '%Index Only Scan%'
												 THEN 'index only scan' ELSE 'index scan' END
					ELSE 'plan: ' || btree.nodes END,
			   CASE WHEN mb > 2 THEN format('; incl. the first read (one full detoast: %s ms = %s ns/row)',
											sig(detoast_ms, 2), sig(detoast_ms * 1e6 / ncand, 2))
					ELSE '' END),
		CASE WHEN bloom_ns > 0 THEN sig(btree_ns / bloom_ns) || '×' ELSE 'n/a (below noise)' END,
		format('≤ %s ns/row (%s); ≥ 10× B-tree', target_ns,
			   CASE WHEN target_ns = 60 THEN 'cache-resident' ELSE 'larger than L2' END),
		bloom_ns <= target_ns AND (bloom_ns <= 0 OR btree_ns / bloom_ns >= 10));
	IF mb > 2 THEN
		steady_ns := ((bench_ms(format('SELECT count(*) FROM cand2 WHERE (SELECT bf FROM filters WHERE name = %L) @> k', fname), 5)).ms
					  - base2_ms - (bloom.ms - base_ms)) * 1e6 / ncand;
		PERFORM res(format('1. the same, steady state (rows after the first read)'),
					sig(steady_ns), 'ns/row',
					format('B-tree probe %s ns/row', sig(btree_ns)),
					CASE WHEN steady_ns > 0 THEN sig(btree_ns / steady_ns) || '×' END,
					format('≤ %s ns/row; ≥ 10× B-tree', target_ns),
					steady_ns <= target_ns AND (steady_ns <= 0 OR btree_ns / steady_ns >= 10));
	END IF;
END $$;

SELECT bench_checks('s', 'keys_s', :n_s, :n_cand, :base_ms, :base2_ms);
SELECT bench_checks('m', 'keys_m', :n_m, :n_cand, :base_ms, :base2_ms);
SELECT bench_checks('l', 'keys_l', :n_l, :n_cand, :base_ms, :base2_ms);
SELECT res(format('1. (machine) one random memory read in %s MB', sig(:n_l * 9.896 / 8e6, 2)),
		   sig(nullif(:'lat_l', '')::float8), 'ns', 'a dependent chain in C (test/bench/memlat.c)',
		   NULL, NULL, NULL);

-- The big filter (integer keys, no table of its keys): no B-tree to compare.
SELECT (bench_ms('SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = ''big'') @> ki', 5)).ms
	AS big_ms \gset
SELECT (bench_ms('SELECT octet_length(bf::bytea) FROM filters WHERE name = ''big''')).ms
	AS big_detoast_ms \gset
SELECT res(format('1. check in a query, %s-key filter (%s MB, bigint)',
				  to_char(:n_big, 'FM999,999,999'), sig(:big_mb, 2)),
		   sig(ns), 'ns/row',
		   format('no B-tree (no table of its keys); incl. the first read (one full detoast: %s ms = %s ns/row)',
				  sig(:big_detoast_ms, 2), sig(:big_detoast_ms * 1e6 / :n_cand, 2)),
		   NULL,
		   '≤ 250 ns/row (60 MB filter)', ns <= 250)
FROM (SELECT (:big_ms - :base_int_ms) * 1e6 / :n_cand AS ns) s;
SELECT (bench_ms('SELECT count(*) FROM cand2 WHERE (SELECT bf FROM filters WHERE name = ''big'') @> ki', 5)).ms
	AS big2_ms \gset
SELECT res('1. the same, steady state (rows after the first read)', sig(ns), 'ns/row',
		   'the same query over twice the candidates, less the first', NULL,
		   '≤ 250 ns/row (60 MB filter)', ns <= 250)
FROM (SELECT ((:big2_ms - :base2_int_ms) - (:big_ms - :base_int_ms)) * 1e6 / :n_cand AS ns) s;
SELECT res(format('1. (machine) one random memory read in %s MB', sig(:big_mb, 2)),
		   sig(nullif(:'lat_big', '')::float8), 'ns', 'a dependent chain in C (test/bench/memlat.c)',
		   NULL, NULL, NULL);

RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;
RESET enable_hashagg;

-----------------------------------------------------------------------------
-- 2. One check of the stored big filter per statement: µs per call, against
--    the same statement that detoasts the whole value.
-----------------------------------------------------------------------------
SELECT progress('2. single checks of the ' || :n_big || '-key filter');
SELECT us1 AS call_us, us2 AS bare_us
FROM bench_call_pair_us('SELECT bf @> %s::bigint FROM filters WHERE name = ''big''',
						'SELECT %s::bigint > 0 FROM filters WHERE name = ''big''', :n_calls) \gset
SELECT bench_call_us('SELECT octet_length(bf::bytea) + %s FROM filters WHERE name = ''big''', :n_detoast) AS detoast_us \gset

SELECT res(format('2. one check of a stored %s-key filter (%s MB)',
				  to_char(:n_big, 'FM999,999,999'), sig(:big_mb, 2)),
		   sig(:call_us), 'µs/call',
		   format('full detoast (octet_length(bf::bytea)) %s µs/call', sig(:detoast_us)),
		   sig(:detoast_us / :call_us) || '× less',
		   'µs, not ms (fresh call site)', :call_us < 1000);
SELECT res('2. the same statement without the check', sig(:bare_us), 'µs/call',
		   'the check itself: ' || sig(:call_us - :bare_us) || ' µs', NULL, NULL, NULL);
SELECT res(format('2. (setup) bloom_agg over %s integers', to_char(:n_big, 'FM999,999,999')),
		   sig(:big_build_s), 's', NULL, NULL, NULL, NULL);

-----------------------------------------------------------------------------
-- 3. Building over the n_l text rows: bloom_agg serial and with 2 workers,
--    against hll_add_agg(hll_hash_text(x)) over the same rows.
-----------------------------------------------------------------------------
SELECT progress('3. builds over ' || :n_l || ' text rows');
ALTER TABLE keys_l SET (parallel_workers = 2);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = on;

SELECT to_regprocedure('bloom_agg(anyelement)') IS NOT NULL AS have_selfsize \gset

CREATE TABLE builds (what text, workers int, ms float8, launched int, nodes text);

-- Best of 3 builds with max_parallel_workers_per_gather = workers (the
-- table is warm: it was just scanned by the B-tree comparison and the
-- filter builds).
CREATE FUNCTION bench_build(what text, workers int, q text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
	PERFORM set_config('max_parallel_workers_per_gather', workers::text, true);
	r := bench_ms(q, 3, 0);
	INSERT INTO builds VALUES (what, workers, r.ms, r.workers, r.nodes);
END $$;

SELECT bench_build('bloom', 0, format('SELECT bloom_agg(k, %s, 0.01) FROM keys_l', :n_l));
SELECT bench_build('bloom', 2, format('SELECT bloom_agg(k, %s, 0.01) FROM keys_l', :n_l));
SELECT bench_build('hll', 0, 'SELECT hll_add_agg(hll_hash_text(k)) FROM keys_l');
SELECT bench_build('hll', 2, 'SELECT hll_add_agg(hll_hash_text(k)) FROM keys_l');
\if :have_selfsize
SELECT bench_build('self', 0, 'SELECT bloom_agg(k) FROM keys_l');
SELECT bench_build('self', 2, 'SELECT bloom_agg(k) FROM keys_l');
\endif
RESET max_parallel_workers_per_gather;

CREATE FUNCTION bench_build_rows(what text, label text, nrows bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	s record;
	p record;
	hs record;
	hp record;
BEGIN
	SELECT * INTO s FROM builds b WHERE b.what = bench_build_rows.what AND b.workers = 0;
	SELECT * INTO p FROM builds b WHERE b.what = bench_build_rows.what AND b.workers = 2;
	SELECT * INTO hs FROM builds b WHERE b.what = 'hll' AND b.workers = 0;
	SELECT * INTO hp FROM builds b WHERE b.what = 'hll' AND b.workers = 2;
	IF s IS NULL THEN
		PERFORM res(format('3. build %s rows: %s, serial', to_char(nrows, 'FM999,999,999'), label),
					NULL, 's', 'not available in this build', NULL, '≤ hll_add_agg', NULL);
		PERFORM res(format('3. build %s rows: %s, 2 workers', to_char(nrows, 'FM999,999,999'), label),
					NULL, 's', 'not available in this build', NULL, '≤ hll_add_agg; scales', NULL);
		RETURN;
	END IF;
	PERFORM res(format('3. build %s rows: %s, serial', to_char(nrows, 'FM999,999,999'), label),
				sig(s.ms / 1000), 's',
				format('hll_add_agg(hll_hash_text(x)) serial %s s', sig(hs.ms / 1000)),
				sig(s.ms / hs.ms, 2) || '×', '≤ 1× hll', s.ms <= hs.ms);
	PERFORM res(format('3. build %s rows: %s, %s workers launched',
					   to_char(nrows, 'FM999,999,999'), label, p.launched),
				sig(p.ms / 1000), 's',
				format('hll_add_agg, %s workers %s s', hp.launched, sig(hp.ms / 1000)),
				sig(p.ms / hp.ms, 2) || '×', '≤ 1× hll', p.ms <= hp.ms);
	PERFORM res(format('3. speed-up with workers: %s', label),
				sig(s.ms / p.ms, 2), '×',
				format('hll_add_agg speed-up %s×', sig(hs.ms / hp.ms, 2)),
				NULL, 'scales (≥ 1.3× on 2 cores)',
				s.ms / p.ms >= 1.3 AND p.nodes LIKE '%Partial Aggregate%');
END $$;

SELECT bench_build_rows('bloom', format('bloom_agg(x, %s, 0.01)', :n_l), :n_l);
SELECT bench_build_rows('self', 'bloom_agg(x) self-sizing', :n_l);
SELECT res('3. (plan) ' || what || ', 2 workers', NULL, NULL, 'nodes: ' || nodes, NULL, NULL, NULL)
FROM builds WHERE workers = 2 AND nodes NOT LIKE '%Partial Aggregate%' ORDER BY what;

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-----------------------------------------------------------------------------
-- 4. PL/pgSQL adds to a 10 MB filter, capped by statement_timeout.
-----------------------------------------------------------------------------
SELECT progress('4. ' || :n_adds || ' PL/pgSQL adds (timeout ' || :add_timeout || ' s)');
SELECT (bloom_info(bloom_empty(:add_capacity, 0.01)) ->> 'bytes')::float8 / 1e6 AS add_mb \gset
SELECT bench_adds(10, :add_capacity) AS warm \gset
SELECT set_config('statement_timeout', (:add_timeout * 1000)::text, false);
SELECT coalesce(bench_adds_guarded(:n_adds, :add_capacity)::text, '') AS adds_s \gset
RESET statement_timeout;

SELECT :'adds_s' = '' AS adds_timed_out \gset
\if :adds_timed_out
-- Not in place: time a few adds to show the cost of one.
SELECT set_config('statement_timeout', (:add_timeout * 1000)::text, false);
SELECT coalesce(bench_adds_guarded(200, :add_capacity)::text, '') AS few_s \gset
RESET statement_timeout;
SELECT res(format('4. %s PL/pgSQL adds f := bloom_add(f, k), %s MB filter',
				  to_char(:n_adds, 'FM999,999,999'), sig(:add_mb, 2)),
		   'timeout', format('> %s s', :add_timeout),
		   CASE WHEN :'few_s' = '' THEN 'even 200 adds timed out'
				ELSE format('200 adds: %s ms/add (a copy per add?): %s s per %s',
							sig(:'few_s'::float8 * 1000 / 200),
							sig(:'few_s'::float8 / 200 * :n_adds),
							to_char(:n_adds, 'FM999,999,999')) END,
		   NULL, '< 1 s (in place)', false);
\else
SELECT res(format('4. %s PL/pgSQL adds f := bloom_add(f, k), %s MB filter',
				  to_char(:n_adds, 'FM999,999,999'), sig(:add_mb, 2)),
		   sig(:'adds_s'::float8), 's',
		   format('%s µs/add; a 10 MB copy per add would be ~1 ms',
				  sig(:'adds_s'::float8 * 1e6 / :n_adds)),
		   NULL, '< 1 s (in place)', :'adds_s'::float8 < 1);
\endif

-----------------------------------------------------------------------------
-- 5. Bits per key against the layout's optimum, and the measured FPR on
--    n_absent absent keys against the target, for every layout.  Optimum:
--    classic -ln(p)/ln(2)^2; blocked the fewest bits per key whose Poisson
--    mixture prediction (DESIGN §4, k chosen freely) is ≤ p, computed
--    independently: 9.896 at 1%, 15.488 at 0.1%.
-----------------------------------------------------------------------------
SELECT progress('5. size and false-positive rate');
SELECT res(format('5. bits/key, %s at %s%%', layout, p * 100),
		   sig(bpk, 4), 'bits/key',
		   format('optimum %s', sig(opt, 4)), sig(bpk / opt, 4) || '×',
		   '≤ 1.03× optimum', bpk / opt <= 1.03)
FROM (SELECT layout, p, opt,
			 (bloom_info(bloom_empty(:n_m, p, layout)) ->> 'bits')::float8 / :n_m AS bpk
	  FROM (VALUES ('blocked', 0.01::float8, 9.8959),
				   ('blocked', 0.001, 15.4883),
				   ('classic', 0.01, 9.5851),
				   ('classic', 0.001, 14.3776)) AS v(layout, p, opt)) s;

CREATE FUNCTION bench_fpr(label text, build text, p float8, nabsent bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	f bloomfilter;
	fp bigint;
	fnr bigint;
	bpk float8;
	rate float8;
BEGIN
	EXECUTE build INTO f;
	SELECT count(*) INTO fp FROM absent WHERE f @> k;
	SELECT count(*) INTO fnr FROM keys_m WHERE NOT (f @> k);
	IF fnr > 0 THEN
		RAISE EXCEPTION 'false negatives: % (%)', fnr, label;
	END IF;
	bpk := (bloom_info(f) ->> 'bits')::float8 / (SELECT count(*) FROM keys_m);
	rate := fp::float8 / nabsent;
	PERFORM res(label, sig(rate * 100, 3), '% FP',
				format('target %s%% (%s bits/key; %s of %s absent)', p * 100, sig(bpk, 3),
					   fp, to_char(nabsent, 'FM999,999,999')),
				sig(rate / p, 3) || '×', '0.8–1.1× target',
				rate / p BETWEEN 0.8 AND 1.1);
END $$;

SELECT bench_fpr(format('5. measured FPR, %s at %s%%, %s keys', layout, p * 100,
						to_char(:n_m, 'FM999,999,999')),
				 format('SELECT bloom_agg(k, %s, %s, %L) FROM keys_m', :n_m, p, layout),
				 p, :n_absent)
FROM (VALUES ('blocked', 0.01::float8), ('blocked', 0.001),
			 ('classic', 0.01), ('classic', 0.001),
			 ('counting', 0.01), ('counting', 0.001)) AS v(layout, p);

-- the counting layout's memory: 4-bit counters in 128-counter blocks
SELECT res(format('5. bits/key, counting at %s%%', p * 100),
		   sig(cnt, 4), 'bits/key', format('blocked %s bits/key', sig(blk, 4)),
		   sig(cnt / blk, 3) || '×', '≈ 4× blocked (4-bit counters)', cnt / blk BETWEEN 4 AND 5.5)
FROM (SELECT p, (bloom_info(bloom_empty(:n_m, p, 'counting')) ->> 'bits')::float8 / :n_m AS cnt,
			 (bloom_info(bloom_empty(:n_m, p, 'blocked')) ->> 'bits')::float8 / :n_m AS blk
	  FROM (VALUES (0.01::float8), (0.001)) AS v(p)) s;

SELECT to_regprocedure('bloom_agg(anyelement, float8)') IS NOT NULL AS have_selfsize_fpr \gset
\if :have_selfsize_fpr
SELECT bench_fpr(format('5. measured FPR, bloom_agg(x, %s) self-sized', p),
				 format('SELECT bloom_agg(k, %s::float8) FROM keys_m', p), p, :n_absent)
FROM (VALUES (0.01::float8), (0.001)) AS v(p);
\elif :have_selfsize
SELECT bench_fpr('5. measured FPR, bloom_agg(x) self-sized',
				 'SELECT bloom_agg(k) FROM keys_m', 0.01, :n_absent);
\else
SELECT res('5. measured FPR, bloom_agg(x) self-sized', NULL, '% FP', 'not available in this build',
		   NULL, '0.8–1.1× target', NULL);
\endif

-----------------------------------------------------------------------------
-- The table.
-----------------------------------------------------------------------------
SELECT progress('done');
\o
\pset footer off
\pset tuples_only on
\pset format unaligned
SELECT '';
SELECT '=== bloomfilter benchmark (bash test/bench.sh) ===';
SELECT format('PostgreSQL %s; shared_buffers %s; jit %s; load average at start %s; %s candidates, %s-row build, %s-key big filter%s',
			  current_setting('server_version'), current_setting('shared_buffers'),
			  current_setting('jit'), :'load_start',
			  to_char(:n_cand, 'FM999,999,999'), to_char(:n_l, 'FM999,999,999'),
			  to_char(:n_big, 'FM999,999,999'),
			  CASE WHEN :quick = 1 THEN ' — QUICK RUN: not the sizes of DESIGN §9' ELSE '' END);
\pset tuples_only off
\pset format aligned
\pset border 2
SELECT measurement, value, unit, compared_to AS "compared to", ratio,
	   target AS "target (DESIGN §9)", meets
FROM bench_results
ORDER BY ord;
\pset tuples_only on
\pset format unaligned
SELECT format('bench.sql took %s s', round(extract(epoch FROM clock_timestamp() - :'bench_t0')::numeric));
