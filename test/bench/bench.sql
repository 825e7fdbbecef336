-- test/bench/bench.sql — the bloomfilter benchmark, run by test/bench.sh on a
-- throwaway server in an empty database, as a superuser:
--     psql -X -q -v ON_ERROR_STOP=1 -d bench -f test/bench/bench.sql
-- (sizes as psql variables; test/bench.sh passes them, defaults below).
--
-- Measures side by side, in one run, each target of the performance budget
-- (doc/performance.md) and prints them as one table:
-- measurement, value, unit, compared to, ratio, target, meets.  A feature
-- that is not there (self-sizing bloom_agg, in-place PL/pgSQL adds) prints
-- "n/a" or "timeout", never fails the run.
--
-- Timings: queries run under EXPLAIN (ANALYZE, TIMING OFF).  A per-row
-- cost is a query less its baseline (the same scan without the check), both
-- serial, run alternately, timed as the backend's time on a CPU (Linux
-- schedstat: on a busy machine the wait for a CPU is left out), best of 5
-- each after a warm-up, over n_cand5 (5M) candidates for the checks; a
-- difference within the spread of the baseline's runs is printed as "below
-- noise", never as a figure.  Builds (parallel workers: their CPU time is
-- not the backend's): "Execution Time", wall clock, best of 3, no warm-up
-- (the table is warm).  Single calls run as distinct EXECUTEd statements (a new plan, so a
-- new call site, each time), averaged over many calls, best of 5.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

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
\if :{?n_cand5}
\else
\set n_cand5 5000000
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
\if :{?ncpu}
\else
\set ncpu '?'
\endif
\if :{?quick}
\else
\set quick 0
\endif
\if :{?lat_m}
\else
\set lat_m ''
\endif
\if :{?lat_l}
\else
\set lat_l ''
\endif
\if :{?lat_big}
\else
\set lat_big ''
\endif
\if :{?hlat_m}
\else
\set hlat_m ''
\endif
\if :{?hlat_l}
\else
\set hlat_l ''
\endif
\if :{?hlat_big}
\else
\set hlat_big ''
\endif

CREATE EXTENSION bloomfilter;
CREATE EXTENSION hll;
-- The budget's checks are of filters a backend keeps: room for the 62 MB
-- one (the default, sized for many connections, keeps none that large;
-- test/bench/cache_pool.sh measures that).
SET bloomfilter.cache_size = '1GB';

-- Only the final table goes to stdout; progress goes to stderr (INFO).
\o /dev/null

SELECT clock_timestamp() AS bench_t0 \gset
-- load average (1, 5, 15 minutes) at the start and the end of the run
SELECT array_to_string((string_to_array(pg_read_file('/proc/loadavg'), ' '))[1:3], ' ') AS load_start \gset

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

-- This backend's time on a CPU so far, in nanoseconds (Linux schedstat:
-- time waiting for a CPU, which the other work on a busy machine adds to
-- wall-clock times, is not in it); NULL where it cannot be read.
CREATE FUNCTION cpu_ns() RETURNS float8 LANGUAGE plpgsql AS $$
BEGIN
	RETURN split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8;
EXCEPTION WHEN OTHERS THEN
	RETURN NULL;
END $$;

-- One EXPLAIN (ANALYZE, TIMING OFF) run of q: its JSON plan.
CREATE FUNCTION bench_explain(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO j;
	RETURN j::jsonb -> 0;
END $$;

-- Best "Execution Time" (ms, wall clock) of `runs` runs after `warmup`
-- runs, the best time the backend spent on a CPU for the statement (ms; the
-- wall clock where schedstat is missing: a serial plan's cost without the
-- waits for a CPU), the number of parallel workers launched, and the plan's
-- node types.
CREATE FUNCTION bench_ms(q text, runs int DEFAULT 3, warmup int DEFAULT 1,
						 OUT ms float8, OUT workers int, OUT nodes text,
						 OUT cpu_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
	t float8;
	c0 float8;
	c float8;
BEGIN
	ms := 'Infinity';
	cpu_ms := 'Infinity';
	FOR i IN 1 .. warmup LOOP
		PERFORM bench_explain(q);
	END LOOP;
	FOR i IN 1 .. runs LOOP
		c0 := cpu_ns();
		j := bench_explain(q);
		t := (j ->> 'Execution Time')::float8;
		c := coalesce((cpu_ns() - c0) / 1e6, t);
		IF t < ms THEN ms := t; END IF;
		IF c < cpu_ms THEN cpu_ms := c; END IF;
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
	c0 float8;
	best float8 := 'Infinity';
	d text;
BEGIN
	EXECUTE format(tmpl, 0) INTO d;
	FOR r IN 1 .. runs LOOP
		t0 := clock_timestamp();
		c0 := cpu_ns();
		FOR i IN 1 .. n LOOP
			EXECUTE format(tmpl, (random() * 1e9)::bigint) INTO d;
		END LOOP;
		-- on-CPU time where schedstat is readable, else the wall clock
		best := least(best, coalesce((cpu_ns() - c0) / 1e3,
									 extract(epoch FROM clock_timestamp() - t0)::float8 * 1e6) / n);
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
-- comparison does not flatter the filter), bigint keys 1 .. n_big; candidates
-- in random order, 1% present (keys of the 1M set, so present in every
-- filter), 99% absent.  cand: n_cand rows (the B-tree probes, and the first
-- read of the 62 MB filter, target 3); cand5: n_cand5 rows (per-row checks).
-----------------------------------------------------------------------------
SELECT progress('setup: key tables and B-tree indexes (' || :n_m || ', ' || :n_l || ', ' || :n_big || ' rows)');
CREATE UNLOGGED TABLE keys_m (k text COLLATE "C" NOT NULL);
CREATE UNLOGGED TABLE keys_l (k text COLLATE "C" NOT NULL);
CREATE UNLOGGED TABLE keys_big (k bigint NOT NULL);
INSERT INTO keys_m SELECT 'key' || g FROM generate_series(1, :n_m) g;
INSERT INTO keys_l SELECT 'key' || g FROM generate_series(1, :n_l) g;
INSERT INTO keys_big SELECT g FROM generate_series(1, :n_big) g;
CREATE INDEX keys_m_k ON keys_m (k);
CREATE INDEX keys_l_k ON keys_l (k);
CREATE INDEX keys_big_k ON keys_big (k);
VACUUM (ANALYZE) keys_m, keys_l, keys_big;

CREATE FUNCTION make_cand(n bigint) RETURNS TABLE (k text, ki bigint, part int)
LANGUAGE sql AS $$
	SELECT ('key' || ki) COLLATE "C", ki, (ki % 4)::int
	FROM (SELECT CASE WHEN g % 100 = 0 THEN (g / 100 * 7919) % (SELECT count(*) FROM keys_m) + 1
					  ELSE 1000000000 + g END::bigint AS ki
		  FROM generate_series(1, n) g) s
	ORDER BY random()
$$;
CREATE UNLOGGED TABLE cand AS SELECT * FROM make_cand(:n_cand);
CREATE UNLOGGED TABLE cand5 AS SELECT * FROM make_cand(:n_cand5);
CREATE UNLOGGED TABLE absent AS
SELECT ('key' || (2000000000 + g)) COLLATE "C" AS k
FROM generate_series(1, :n_absent) g;
VACUUM (ANALYZE) cand, cand5, absent;

SELECT progress('setup: stored filters');
CREATE TABLE filters (name text PRIMARY KEY, bf bloomfilter);
INSERT INTO filters SELECT 'm', bloom_agg(k, :n_m, 0.01) FROM keys_m;
INSERT INTO filters SELECT 'l', bloom_agg(k, :n_l, 0.01) FROM keys_l;
-- one block (64 bytes): a check of it never misses the L1 cache (target 2's
-- floor); the keys are those of keys_m's first ten rows, as text and bigint
INSERT INTO filters SELECT 'tiny', bloom_agg(k, 10, 0.01) FROM (SELECT k FROM keys_m LIMIT 10) s;
INSERT INTO filters SELECT 'tinyi', bloom_agg(ki, 10, 0.01) FROM generate_series(1::bigint, 10) ki;
SELECT clock_timestamp() AS t_big \gset
INSERT INTO filters SELECT 'big', bloom_agg(k, :n_big, 0.01) FROM keys_big;
SELECT extract(epoch FROM clock_timestamp() - :'t_big')::float8 AS big_build_s \gset
-- per-partition filters (target 5): the 1M keys split four ways by key % 4
CREATE TABLE pfilters (part int PRIMARY KEY, bf bloomfilter);
INSERT INTO pfilters
SELECT substr(k, 4)::bigint % 4, bloom_agg(k, :n_m / 4, 0.01) FROM keys_m GROUP BY 1;
VACUUM ANALYZE filters, pfilters;

-----------------------------------------------------------------------------
-- Per-row costs: a query and its baseline (the same scan without the
-- check), serial, run alternately, so that other work on the machine weighs
-- on both alike; the backend's time on a CPU, best of `runs` each after a
-- warm-up of each.  The noise of a best
-- of n is how far the second best is from it: a difference within the sum
-- of the two noises is not a figure ("below noise").
-----------------------------------------------------------------------------
CREATE TABLE bench_figures (what text, ns float8, noise_ns float8);

CREATE FUNCTION bench_diff(what text, q text, base text, nrows bigint, runs int DEFAULT 5,
						   OUT ns float8, OUT q_ms float8, OUT base_ms float8,
						   OUT noise_ns float8, OUT nodes text)
LANGUAGE plpgsql AS $$
DECLARE
	a record;
	b record;
	qs float8[] := '{}';
	bs float8[] := '{}';
BEGIN
	PERFORM bench_explain(base);
	PERFORM bench_explain(q);
	FOR i IN 1 .. runs LOOP
		b := bench_ms(base, 1, 0);
		a := bench_ms(q, 1, 0);
		bs := bs || b.cpu_ms;
		qs := qs || a.cpu_ms;
		nodes := a.nodes;
	END LOOP;
	SELECT array_agg(x ORDER BY x) INTO bs FROM unnest(bs) x;
	SELECT array_agg(x ORDER BY x) INTO qs FROM unnest(qs) x;
	q_ms := qs[1];
	base_ms := bs[1];
	ns := (q_ms - base_ms) * 1e6 / nrows;
	noise_ns := ((qs[2] - qs[1]) + (bs[2] - bs[1])) * 1e6 / nrows;
	INSERT INTO bench_figures VALUES (what, ns, noise_ns);
END $$;

-- A per-row figure as text: never negative, never within the noise.
CREATE FUNCTION ns_text(ns float8, noise_ns float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN ns > noise_ns THEN sig(ns)
				ELSE format('below noise (%s ± %s)', sig(ns, 2), sig(noise_ns, 2)) END
$$;

CREATE FUNCTION ratio_text(x float8, y float8, suffix text DEFAULT '×') RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN x > 0 AND y > 0 THEN sig(x / y) || suffix END
$$;

SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_hashagg = off;

-----------------------------------------------------------------------------
-- Target 2. A check inside a query against a warm B-tree probe (nested loop,
-- index only scan) at 1M, 10M and 50M keys, and against the machine's random
-- read at the filter's size.  Checks: n_cand5 candidates, the one read of
-- the stored filter included; B-tree probes: n_cand candidates.
-----------------------------------------------------------------------------
CREATE FUNCTION bench_checks(fname text, keys_table text, nkeys bigint, key_col text,
							 lat4k float8, lathuge float8) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	ncand5 bigint := (SELECT count(*) FROM cand5);
	ncand bigint := (SELECT count(*) FROM cand);
	bloom record;
	plain record;
	btree record;
	mb float8;
	lat float8;
	label text;
	detoast_ms float8;
BEGIN
	PERFORM progress(format('target 2: checks of the %s-key filter', nkeys));
	SELECT (bloom_info(bf) ->> 'bytes')::float8 / 1e6 INTO mb FROM filters WHERE name = fname;
	bloom := bench_diff('2. check ' || fname,
		format('SELECT count(*) FROM cand5 WHERE (SELECT bf FROM filters WHERE name = %L) @> %I', fname, key_col),
		format('SELECT count(*) FROM cand5 WHERE %I IS NOT NULL', key_col), ncand5);
	-- the same checks without BloomBatch, side by side
	PERFORM set_config('bloomfilter.batch_checks', 'off', false);
	plain := bench_diff('2. check unbatched ' || fname,
		format('SELECT count(*) FROM cand5 WHERE (SELECT bf FROM filters WHERE name = %L) @> %I', fname, key_col),
		format('SELECT count(*) FROM cand5 WHERE %I IS NOT NULL', key_col), ncand5);
	PERFORM set_config('bloomfilter.batch_checks', 'on', false);
	btree := bench_diff('2. B-tree ' || keys_table,
		format('SELECT count(*) FROM cand c WHERE EXISTS (SELECT 1 FROM %I t WHERE t.k = c.%I)', keys_table, key_col),
		format('SELECT count(*) FROM cand WHERE %I IS NOT NULL', key_col), ncand);
	detoast_ms := (bench_ms(format('SELECT octet_length(bf::bytea) FROM filters WHERE name = %L', fname))).cpu_ms;
	-- the cached copy of a filter of 4 MB or more is in huge pages
	lat := CASE WHEN mb >= 4.2 THEN lathuge ELSE lat4k END;
	label := format('2. check in a query, %s-key filter (%s MB%s)', to_char(nkeys, 'FM999,999,999'),
					sig(mb, 2), CASE WHEN key_col = 'ki' THEN ', bigint' ELSE '' END);
	PERFORM res(label, ns_text(bloom.ns, bloom.noise_ns), 'ns/row',
		format('B-tree probe %s ns/row (%s); checks over %s rows incl. one full read (%s ms = %s ns/row)',
			   ns_text(btree.ns, btree.noise_ns),
			   CASE WHEN btree.nodes LIKE '%Nested Loop%' AND btree.nodes LIKE '%Index Only Scan%'
					THEN 'nested loop, index only scan' ELSE 'plan: ' || btree.nodes END,
			   to_char(ncand5, 'FM999,999,999'), sig(detoast_ms, 2), sig(detoast_ms * 1e6 / ncand5, 2)),
		ratio_text(btree.ns, bloom.ns, '× cheaper'),
		'≥ 10× cheaper than the B-tree',
		bloom.ns > bloom.noise_ns AND btree.ns / bloom.ns >= 10);
	PERFORM res(format('2. the same without BloomBatch (bloomfilter.batch_checks off), %s MB', sig(mb, 2)),
		ns_text(plain.ns, plain.noise_ns), 'ns/row',
		format('BloomBatch %s ns/row (%s)', ns_text(bloom.ns, bloom.noise_ns),
			   CASE WHEN mb < 2.1 THEN 'the plain scan under 2 MB' ELSE 'batches of 32 rows prefetched' END),
		ratio_text(plain.ns, bloom.ns, '× the batched cost'),
		'BloomBatch never slower (within the noise)',
		bloom.ns <= plain.ns + bloom.noise_ns + plain.noise_ns);
	PERFORM res(format('2. the same against one random read in %s MB', sig(mb, 2)),
		ns_text(bloom.ns, bloom.noise_ns), 'ns/row',
		format('random read (test/bench/memlat.c) %s ns in %s pages as the copy (4 kB pages %s ns, huge pages %s ns)',
			   sig(lat), CASE WHEN mb >= 4.2 THEN 'huge' ELSE '4 kB' END, sig(lat4k), sig(lathuge)),
		ratio_text(bloom.ns, lat, '× the read'),
		'≤ 1.5× the random read',
		bloom.ns > bloom.noise_ns AND bloom.ns / lat <= 1.5);
END $$;

SELECT bench_checks('m', 'keys_m', :n_m, 'k', nullif(:'lat_m', '')::float8, nullif(:'hlat_m', '')::float8);
SELECT bench_checks('l', 'keys_l', :n_l, 'k', nullif(:'lat_l', '')::float8, nullif(:'hlat_l', '')::float8);
SELECT bench_checks('big', 'keys_big', :n_big, 'ki', nullif(:'lat_big', '')::float8, nullif(:'hlat_big', '')::float8);

-- What a check costs when its line is always in the L1 cache: the call, the
-- key's hash and the test, with no miss (the floor under each figure above).
CREATE FUNCTION bench_check_floor(key_col text, lat float8) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	f record;
	p record;
	fname text := CASE WHEN key_col = 'ki' THEN 'tinyi' ELSE 'tiny' END;
BEGIN
	PERFORM progress('target 2: checks of a 64-byte filter, key ' || key_col);
	-- the check alone: no BloomBatch node above the scan
	PERFORM set_config('bloomfilter.batch_checks', 'off', false);
	f := bench_diff('2. floor ' || key_col,
		format('SELECT count(*) FROM cand5 WHERE (SELECT bf FROM filters WHERE name = %L) @> %I', fname, key_col),
		format('SELECT count(*) FROM cand5 WHERE %I IS NOT NULL', key_col),
		(SELECT count(*) FROM cand5));
	PERFORM set_config('bloomfilter.batch_checks', 'on', false);
	IF key_col = 'k' THEN
		-- what BloomBatch costs over a filter too small to batch: the node
		-- returns the plain scan's rows (a call and a copy per row returned)
		p := bench_diff('2. pass-through ' || key_col,
			format('SELECT count(*) FROM cand5 WHERE (SELECT bf FROM filters WHERE name = %L) @> %I', fname, key_col),
			format('SELECT count(*) FROM cand5 WHERE %I IS NOT NULL', key_col),
			(SELECT count(*) FROM cand5));
		PERFORM res('2. BloomBatch over a 64-byte filter (the plain scan chosen), over the check without it',
			ns_text(p.ns - f.ns, p.noise_ns + f.noise_ns), 'ns/row',
			format('the check without BloomBatch %s ns/row, with it %s ns/row (plan: %s): a call and a copy per row returned',
				   ns_text(f.ns, f.noise_ns), ns_text(p.ns, p.noise_ns), p.nodes),
			ratio_text(p.ns, f.ns, '× without'), '', NULL);
	END IF;
	PERFORM res(format('2. why: a check of a 64-byte filter (never a miss, no BloomBatch), %s key',
					   CASE WHEN key_col = 'ki' THEN 'bigint' ELSE 'text' END),
		ns_text(f.ns, f.noise_ns), 'ns/row',
		format('the fixed cost of a check in a query (call, hash, test); random read in 1.2 MB %s ns',
			   sig(lat)),
		ratio_text(f.ns, lat, '× that read'), NULL, NULL);
END $$;
SELECT bench_check_floor('k', nullif(:'lat_m', '')::float8);
SELECT bench_check_floor('ki', nullif(:'lat_m', '')::float8);

-----------------------------------------------------------------------------
-- Target 3. The 62 MB stored filter over n_cand candidates, its first read
-- included (bloomfilter.cache_size 0: no copy is kept from one run to the
-- next, so each reads the filter); the same statement repeated in one REPEATABLE READ
-- transaction (the copy lasts for the transaction: no second read); one
-- check per statement (a fresh call site reads a slice, not the value).
-----------------------------------------------------------------------------
SELECT progress('target 3: the ' || :n_big || '-key stored filter');
SET bloomfilter.cache_size = 0;
SELECT (bench_diff('3. first read', 'SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = ''big'') @> ki',
				   'SELECT count(*) FROM cand WHERE ki IS NOT NULL', :n_cand)).* \gset big_
SET bloomfilter.batch_checks = off;
SELECT (bench_diff('3. first read, unbatched', 'SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = ''big'') @> ki',
				   'SELECT count(*) FROM cand WHERE ki IS NOT NULL', :n_cand)).* \gset bigplain_
RESET bloomfilter.batch_checks;
SET bloomfilter.cache_size = '1GB';
SELECT (bench_ms('SELECT octet_length(bf::bytea) FROM filters WHERE name = ''big''', 5)).cpu_ms AS big_detoast_ms \gset
SELECT (bloom_info(bf) ->> 'bytes')::float8 / 1e6 AS big_mb FROM filters WHERE name = 'big' \gset
SELECT res(format('3. check in a query, %s-key stored filter (%s MB), %s candidates, fresh statements',
				  to_char(:n_big, 'FM999,999,999'), sig(:big_mb, 2), to_char(:n_cand, 'FM999,999,999')),
		   ns_text(:big_ns, :big_noise_ns), 'ns/row',
		   format('incl. its one full read per statement: %s ms (octet_length(bf::bytea)) = %s ns/row',
				  sig(:big_detoast_ms, 3), sig(:big_detoast_ms * 1e6 / :n_cand, 3)),
		   ratio_text(:big_ns, 250, '× the budget'), '≤ 250 ns/row incl. the first read',
		   :big_ns > :big_noise_ns AND :big_ns <= 250);

SELECT res('3. the same without BloomBatch (bloomfilter.batch_checks off)',
		   ns_text(:bigplain_ns, :bigplain_noise_ns), 'ns/row',
		   format('BloomBatch %s ns/row', ns_text(:big_ns, :big_noise_ns)),
		   ratio_text(:bigplain_ns, :big_ns, '× the batched cost'), '', NULL);

-- The statement 4 times in one REPEATABLE READ transaction: reads counts
-- the full reads (bloom_cache_stats): at most the first statement's, none
-- when the copy kept from the statements before is still valid.
CREATE FUNCTION bench_repeat_rr(OUT first_ms float8, OUT again_ms float8, OUT reads bigint)
LANGUAGE plpgsql AS $$
DECLARE
	r0 bigint;
	q text := 'SELECT count(*) FROM cand WHERE (SELECT bf FROM filters WHERE name = ''big'') @> ki';
BEGIN
	SELECT s.reads INTO r0 FROM bloom_cache_stats() s;
	first_ms := (bench_ms(q, 1, 0)).cpu_ms;
	again_ms := (bench_ms(q, 3, 0)).cpu_ms;
	SELECT s.reads - r0 INTO reads FROM bloom_cache_stats() s;
END $$;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT first_ms AS rr_first_ms, again_ms AS rr_again_ms, reads AS rr_reads FROM bench_repeat_rr() \gset
COMMIT;
SELECT res('3. the same statement repeated in one REPEATABLE READ transaction',
		   ns_text((:rr_again_ms - :big_base_ms) * 1e6 / :n_cand, :big_noise_ns), 'ns/row',
		   format('its first statement %s ns/row; full reads in the transaction: %s for 4 statements',
				  sig((:rr_first_ms - :big_base_ms) * 1e6 / :n_cand), :rr_reads),
		   ratio_text(:rr_first_ms - :big_base_ms, :rr_again_ms - :big_base_ms, '× cheaper'),
		   'no full read again', :rr_reads <= 1);

SELECT us1 AS call_us, us2 AS bare_us
FROM bench_call_pair_us('SELECT bf @> %s::bigint FROM filters WHERE name = ''big''',
						'SELECT %s::bigint > 0 FROM filters WHERE name = ''big''', :n_calls) \gset
SELECT res(format('3. one check per statement, stored %s MB filter (a fresh call site)', sig(:big_mb, 2)),
		   sig(:call_us), 'µs/call',
		   format('the statement without the check %s µs; a full read %s µs',
				  sig(:bare_us), sig(:big_detoast_ms * 1000)),
		   ratio_text(:big_detoast_ms * 1000, :call_us, '× less than a read'),
		   'µs, not ms', :call_us < 1000);

-----------------------------------------------------------------------------
-- Target 4 (1.1's shared filter, now a guard index).  bloom_guard_contains
-- in a query, a guard index on keys_m (its pages in shared buffers), against
-- the B-tree probe of the same keys (target 2) and the stored filter: a
-- check reads two buffers (metapage, one data page) where the B-tree reads
-- three or four, and the stored filter's check none.  The guard is created here, after
-- target 2, so that the planner does not gate target 2's B-tree probes of
-- keys_m, and dropped after.
-----------------------------------------------------------------------------
SELECT progress('target 4: guard index checks (a guard index on keys_m, ' || :n_m || ' keys)');
-- capacity n_m, the stored filter's (a guard's first layer is sized at 40%
-- of the rate: about 1.5 MB against the stored filter's 1.2 MB)
CREATE INDEX keys_m_g ON keys_m USING bloomguard (k) WITH (fpr = 0.01, capacity = :n_m);
SELECT (bench_diff('4. guard index', 'SELECT count(*) FROM cand5 WHERE bloom_guard_contains(''keys_m_g'', k)',
				   'SELECT count(*) FROM cand5 WHERE k IS NOT NULL', :n_cand5)).* \gset gi_
SELECT ns AS m_ns, noise_ns AS m_noise_ns FROM bench_figures WHERE what = '2. check m' \gset
SELECT ns AS bt_ns FROM bench_figures WHERE what = '2. B-tree keys_m' \gset
SELECT layers AS gi_layers, bytes AS gi_bytes, estimated_fpr AS gi_fpr FROM bloom_guard_info('keys_m_g') \gset
SELECT res(format('4. bloom_guard_contains in a query, %s-key guard index (%s MB, %s layer(s)), %s rows',
				  to_char(:n_m, 'FM999,999,999'), sig(:gi_bytes / 1e6, 2), :gi_layers,
				  to_char(:n_cand5, 'FM999,999,999')),
		   ns_text(:gi_ns, :gi_noise_ns), 'ns/row',
		   format('the B-tree probe of the same keys %s ns/row; the stored filter (bf @> k) %s ns/row; guard''s estimated FPR %s%%',
				  sig(:bt_ns), ns_text(:m_ns, :m_noise_ns), sig(:gi_fpr * 100, 2)),
		   ratio_text(:bt_ns, :gi_ns, '× cheaper than the B-tree'), '≥ 1.5× cheaper than the B-tree probe',
		   :gi_ns > :gi_noise_ns AND :bt_ns >= 1.5 * :gi_ns);
-- 1.1's form, the guard named by text (resolved at each call)
SELECT (bench_diff('4. shared', 'SELECT count(*) FROM cand5 WHERE bloom_shared_contains(''keys_m_g'', k)',
				   'SELECT count(*) FROM cand5 WHERE k IS NOT NULL', :n_cand5)).* \gset sh_
SELECT res(format('4. bloom_shared_contains (1.1''s form: the guard named by text), the same guard, %s rows',
				  to_char(:n_cand5, 'FM999,999,999')),
		   ns_text(:sh_ns, :sh_noise_ns), 'ns/row',
		   format('bloom_guard_contains %s ns/row; the B-tree probe %s ns/row (three or four buffers)',
				  ns_text(:gi_ns, :gi_noise_ns), sig(:bt_ns)),
		   ratio_text(:sh_ns, :gi_ns, '× bloom_guard_contains'), '≤ 60 ns/row', :sh_ns <= 60);
SELECT res('4. why: a check by function reads two index buffers per call, each pinned and share-locked (the metapage for the layers, the key''s data page), as the B-tree probe reads its three or four',
		   sig(:gi_ns / 2), 'ns/buffer',
		   format('the B-tree probe %s ns/row; the stored filter''s check reads no buffer: %s ns/row', sig(:bt_ns), ns_text(:m_ns, :m_noise_ns)),
		   ratio_text(:bt_ns / 3.0, :gi_ns / 2, '× the B-tree per buffer'), '', NULL);
DROP INDEX keys_m_g;

-----------------------------------------------------------------------------
-- Target 5. One call site alternating between four stored filters (a hash
-- join against a table of per-partition filters: the partition changes from
-- row to row), against the same join on one partition's filter.
-----------------------------------------------------------------------------
SELECT progress('target 5: alternating filters');
RESET enable_hashjoin;
SET enable_nestloop = off;
CREATE FUNCTION bench_alternating(OUT alt_ns float8, OUT alt_noise float8, OUT one_ns float8,
								  OUT one_noise float8, OUT reads bigint, OUT nodes text)
LANGUAGE plpgsql AS $$
DECLARE
	ncand5 bigint := (SELECT count(*) FROM cand5);
	r0 bigint;
	a record;
	o record;
BEGIN
	SELECT s.reads INTO r0 FROM bloom_cache_stats() s;
	a := bench_diff('5. alternating',
		'SELECT count(*) FROM cand5 c JOIN pfilters f ON f.part = c.part WHERE f.bf @> c.k',
		'SELECT count(*) FROM cand5 c JOIN pfilters f ON f.part = c.part', ncand5);
	SELECT s.reads - r0 INTO reads FROM bloom_cache_stats() s;
	o := bench_diff('5. one filter',
		'SELECT count(*) FROM cand5 c JOIN pfilters f ON f.part = 0 WHERE f.bf @> c.k',
		'SELECT count(*) FROM cand5 c JOIN pfilters f ON f.part = 0', ncand5);
	alt_ns := a.ns;
	alt_noise := a.noise_ns;
	one_ns := o.ns;
	one_noise := o.noise_ns;
	nodes := a.nodes;
END $$;
SELECT * FROM bench_alternating() \gset
RESET enable_nestloop;
SELECT res(format('5. one call site alternating between 4 stored filters (%s MB each), %s rows',
				  sig((SELECT avg((bloom_info(bf) ->> 'bytes')::float8) / 1e6 FROM pfilters), 2),
				  to_char(:n_cand5, 'FM999,999,999')),
		   ns_text(:alt_ns, :alt_noise), 'ns/row',
		   format('the same join on one filter %s ns/row; full reads: %s in 6 statements (plan: %s)',
				  ns_text(:one_ns, :one_noise), :reads, :'nodes'),
		   ratio_text(:alt_ns, :one_ns, '× one filter'),
		   'no read per switch (≤ 4 reads per statement)', :reads <= 4 * 6);

-----------------------------------------------------------------------------
-- Target 5b. The filter taken from its table by a join (a nested loop, the
-- filter's row outer, the candidates inner) against the scalar subquery of
-- the same 10M-key filter, and the scalar form without BloomBatch.  The
-- join's check is moved into a scan of the candidates parameterized by the
-- filter's row, which BloomBatch batches as the scalar form's.
-----------------------------------------------------------------------------
SELECT progress('target 5b: the filter joined, not a scalar subquery');
SET enable_hashjoin = off;
SELECT (bench_diff('5b. joined', 'SELECT count(*) FROM filters f JOIN cand5 c ON f.bf @> c.k WHERE f.name = ''l''',
				   'SELECT count(*) FROM filters f JOIN cand5 c ON c.k IS NOT NULL WHERE f.name = ''l''', :n_cand5)).* \gset jn_
SELECT (bench_diff('5b. scalar', 'SELECT count(*) FROM cand5 WHERE (SELECT bf FROM filters WHERE name = ''l'') @> k',
				   'SELECT count(*) FROM cand5 WHERE k IS NOT NULL', :n_cand5)).* \gset sc_
SET bloomfilter.batch_checks = off;
SELECT (bench_diff('5b. scalar unbatched', 'SELECT count(*) FROM cand5 WHERE (SELECT bf FROM filters WHERE name = ''l'') @> k',
				   'SELECT count(*) FROM cand5 WHERE k IS NOT NULL', :n_cand5)).* \gset scu_
RESET bloomfilter.batch_checks;
RESET enable_hashjoin;
SELECT res(format('5b. the %s MB filter joined from its table (nested loop, filter outer), %s rows; plan: %s',
				  sig((SELECT (bloom_info(bf) ->> 'bytes')::float8 / 1e6 FROM filters WHERE name = 'l'), 2),
				  to_char(:n_cand5, 'FM999,999,999'), :'jn_nodes'),
		   ns_text(:jn_ns, :jn_noise_ns), 'ns/row',
		   format('the scalar subquery %s ns/row (plan: %s)', ns_text(:sc_ns, :sc_noise_ns), :'sc_nodes'),
		   ratio_text(:jn_ns, :sc_ns, '× the scalar form'), 'the cost of the scalar form (≤ 1.1×)',
		   :jn_ns <= 1.1 * :sc_ns);
SELECT res('5b. the scalar form without BloomBatch (the checks'' cache misses not overlapped)',
		   ns_text(:scu_ns, :scu_noise_ns), 'ns/row',
		   format('joined %s ns/row', ns_text(:jn_ns, :jn_noise_ns)),
		   ratio_text(:jn_ns, :scu_ns, '× unbatched'), '', NULL);

RESET enable_mergejoin;
RESET enable_memoize;
RESET enable_hashagg;

-----------------------------------------------------------------------------
-- Target 1. Building over the n_l text rows: bloom_agg serial and with 2
--    workers, against hll_add_agg(hll_hash_text(x)) over the same rows.
-----------------------------------------------------------------------------
SELECT progress('target 1: builds over ' || :n_l || ' text rows');
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
-- What the misses are made of, measured here too: the same build into a
-- filter a tenth the size (it stays in the CPU's caches, so the build is the
-- per-row work without the misses of setting bits in memory), and the
-- speed-up this machine gives with 1 and 2 workers: bloom_agg, hll_add_agg
-- and a plain aggregate over the same rows, sum(length(x)).
SELECT bench_build('cached', 0, format('SELECT bloom_agg(k, %s, 0.01) FROM keys_l', :n_l / 10));
SELECT bench_build('bloom', 1, format('SELECT bloom_agg(k, %s, 0.01) FROM keys_l', :n_l));
SELECT bench_build('hll', 1, 'SELECT hll_add_agg(hll_hash_text(k)) FROM keys_l');
SELECT bench_build('scan', 0, 'SELECT sum(length(k)) FROM keys_l');
SELECT bench_build('scan', 1, 'SELECT sum(length(k)) FROM keys_l');
SELECT bench_build('scan', 2, 'SELECT sum(length(k)) FROM keys_l');
RESET max_parallel_workers_per_gather;

CREATE FUNCTION bench_build_rows(what text, label text, nrows bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	s record;
	p record;
	hs record;
	hp record;
	lim float8;
BEGIN
	SELECT * INTO s FROM builds b WHERE b.what = bench_build_rows.what AND b.workers = 0;
	SELECT * INTO p FROM builds b WHERE b.what = bench_build_rows.what AND b.workers = 2;
	SELECT * INTO hs FROM builds b WHERE b.what = 'hll' AND b.workers = 0;
	SELECT * INTO hp FROM builds b WHERE b.what = 'hll' AND b.workers = 2;
	-- the self-sizing aggregate may take 1.2 times hll_add_agg
	lim := CASE WHEN what = 'self' THEN 1.2 ELSE 1.0 END;
	IF s IS NULL THEN
		PERFORM res(format('1. build %s rows: %s, serial', to_char(nrows, 'FM999,999,999'), label),
					NULL, 's', 'not available in this build', NULL, '≤ hll_add_agg', NULL);
		PERFORM res(format('1. build %s rows: %s, 2 workers', to_char(nrows, 'FM999,999,999'), label),
					NULL, 's', 'not available in this build', NULL, '≤ hll_add_agg; scales', NULL);
		RETURN;
	END IF;
	PERFORM res(format('1. build %s rows: %s, serial', to_char(nrows, 'FM999,999,999'), label),
				sig(s.ms / 1000), 's',
				format('hll_add_agg(hll_hash_text(x)) serial %s s', sig(hs.ms / 1000)),
				sig(s.ms / hs.ms, 2) || '×', format('≤ %s× hll', lim), s.ms <= lim * hs.ms);
	PERFORM res(format('1. build %s rows: %s, %s workers launched',
					   to_char(nrows, 'FM999,999,999'), label, p.launched),
				sig(p.ms / 1000), 's',
				format('hll_add_agg, %s workers %s s', hp.launched, sig(hp.ms / 1000)),
				sig(p.ms / hp.ms, 2) || '×', format('≤ %s× hll', lim), p.ms <= lim * hp.ms);
	PERFORM res(format('1. speed-up with workers: %s', label),
				sig(s.ms / p.ms, 2), '×',
				format('hll_add_agg speed-up %s×', sig(hs.ms / hp.ms, 2)),
				NULL, 'scales (≥ 1.3× on 2 cores)',
				s.ms / p.ms >= 1.3 AND p.nodes LIKE '%Partial Aggregate%');
END $$;

SELECT bench_build_rows('bloom', format('bloom_agg(x, %s, 0.01)', :n_l), :n_l);
SELECT bench_build_rows('self', 'bloom_agg(x) self-sizing', :n_l);
CREATE FUNCTION bench_build_reasons(nrows bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	c record;
	b record;
	hs record;
	sp record;
	sp_ratio text;
BEGIN
	SELECT * INTO c FROM builds WHERE what = 'cached' AND workers = 0;
	SELECT * INTO b FROM builds WHERE what = 'bloom' AND workers = 0;
	SELECT * INTO hs FROM builds WHERE what = 'hll' AND workers = 0;
	PERFORM res(format('1. why: bloom_agg(x, %s, 0.01), a tenth the size (in the L2/L3 caches), serial',
					   to_char(nrows / 10, 'FM999,999,999')),
				sig(c.ms / 1000), 's',
				format('hll_add_agg serial %s s; the sized build %s s (%s)',
					   sig(hs.ms / 1000), sig(b.ms / 1000),
					   CASE WHEN c.ms IS NULL OR b.ms IS NULL THEN 'n/a'
							WHEN b.ms > c.ms
							THEN sig((b.ms - c.ms) / 1000) || ' s more: its misses in memory, and 12 MB to allocate'
							ELSE 'no slower: no misses to speak of' END),
				sig(c.ms / hs.ms, 2) || '× hll', NULL, NULL);
	SELECT * INTO sp FROM builds WHERE what = 'self' AND workers = 0;
	IF sp IS NOT NULL THEN
		PERFORM res('1. why: bloom_agg(x) self-sizing, serial, over the sized build',
					sig((sp.ms - b.ms) / 1000), 's',
					format('the sized build %s s; the difference: keeping, sorting and deduplicating each row''s hash to count the distinct keys, less the misses its adds in block order avoid',
						   sig(b.ms / 1000)),
					sig(sp.ms / b.ms, 2) || '× the sized build', NULL, NULL);
	END IF;
	-- speed-ups with 1 and 2 workers: bloom_agg, hll_add_agg, sum(length(x))
	SELECT string_agg(format('%s %s× / %s× (%s / %s launched)', w.label,
							 sig(s0.ms / s1.ms, 2), sig(s0.ms / s2.ms, 2),
							 s1.launched, s2.launched), '; ' ORDER BY w.ord)
	INTO sp_ratio
	FROM (VALUES (1, 'bloom', 'bloom_agg sized'), (2, 'hll', 'hll_add_agg'),
				 (3, 'scan', 'sum(length(x))')) AS w(ord, what, label)
	JOIN builds s0 ON s0.what = w.what AND s0.workers = 0
	JOIN builds s1 ON s1.what = w.what AND s1.workers = 1
	JOIN builds s2 ON s2.what = w.what AND s2.workers = 2;
	SELECT * INTO sp FROM builds WHERE what = 'scan' AND workers = 2;
	PERFORM res('1. why: this machine''s speed-up, sum(length(x)) over the same rows, 2 workers',
				sig((SELECT ms FROM builds WHERE what = 'scan' AND workers = 0) / sp.ms, 2), '×',
				'the leader with 1 worker / with 2 workers: ' || sp_ratio, NULL, NULL, NULL);
END $$;
SELECT bench_build_reasons(:n_l);
SELECT res('1. (plan) ' || what || ', 2 workers', NULL, NULL, 'nodes: ' || nodes, NULL, NULL, NULL)
FROM builds WHERE workers = 2 AND nodes NOT LIKE '%Partial Aggregate%' ORDER BY what;

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-----------------------------------------------------------------------------
-- Other figures (not targets of the budget): PL/pgSQL adds to a 10 MB
-- filter, capped by statement_timeout; sizes and false-positive rates.
-----------------------------------------------------------------------------
SELECT progress('other: ' || :n_adds || ' PL/pgSQL adds (timeout ' || :add_timeout || ' s)');
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
SELECT res(format('other. %s PL/pgSQL adds f := bloom_add(f, k), %s MB filter',
				  to_char(:n_adds, 'FM999,999,999'), sig(:add_mb, 2)),
		   'timeout', format('> %s s', :add_timeout),
		   CASE WHEN :'few_s' = '' THEN 'even 200 adds timed out'
				ELSE format('200 adds: %s ms/add (a copy per add?): %s s per %s',
							sig(:'few_s'::float8 * 1000 / 200),
							sig(:'few_s'::float8 / 200 * :n_adds),
							to_char(:n_adds, 'FM999,999,999')) END,
		   NULL, '< 1 s (in place)', false);
\else
SELECT res(format('other. %s PL/pgSQL adds f := bloom_add(f, k), %s MB filter',
				  to_char(:n_adds, 'FM999,999,999'), sig(:add_mb, 2)),
		   sig(:'adds_s'::float8), 's',
		   format('%s µs/add; a 10 MB copy per add would be ~1 ms',
				  sig(:'adds_s'::float8 * 1e6 / :n_adds)),
		   NULL, '< 1 s (in place)', :'adds_s'::float8 < 1);
\endif

-----------------------------------------------------------------------------
-- Bits per key against the layout's optimum, and the measured FPR on
--    n_absent absent keys against the target, for every layout.  Optimum:
--    classic -ln(p)/ln(2)^2; blocked the fewest bits per key whose Poisson
--    mixture prediction (k chosen freely) is ≤ p, computed
--    independently: 9.896 at 1%, 15.488 at 0.1%.
-----------------------------------------------------------------------------
SELECT progress('other: size and false-positive rate');
SELECT res(format('other. bits/key, %s at %s%%', layout, p * 100),
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

SELECT bench_fpr(format('other. measured FPR, %s at %s%%, %s keys', layout, p * 100,
						to_char(:n_m, 'FM999,999,999')),
				 format('SELECT bloom_agg(k, %s, %s, %L) FROM keys_m', :n_m, p, layout),
				 p, :n_absent)
FROM (VALUES ('blocked', 0.01::float8), ('blocked', 0.001),
			 ('classic', 0.01), ('classic', 0.001),
			 ('counting', 0.01), ('counting', 0.001)) AS v(layout, p);

-- the counting layout's memory: 4-bit counters in 128-counter blocks
SELECT res(format('other. bits/key, counting at %s%%', p * 100),
		   sig(cnt, 4), 'bits/key', format('blocked %s bits/key', sig(blk, 4)),
		   sig(cnt / blk, 3) || '×', '≈ 4× blocked (4-bit counters)', cnt / blk BETWEEN 4 AND 5.5)
FROM (SELECT p, (bloom_info(bloom_empty(:n_m, p, 'counting')) ->> 'bits')::float8 / :n_m AS cnt,
			 (bloom_info(bloom_empty(:n_m, p, 'blocked')) ->> 'bits')::float8 / :n_m AS blk
	  FROM (VALUES (0.01::float8), (0.001)) AS v(p)) s;

SELECT to_regprocedure('bloom_agg(anyelement, float8)') IS NOT NULL AS have_selfsize_fpr \gset
\if :have_selfsize_fpr
SELECT bench_fpr(format('other. measured FPR, bloom_agg(x, %s) self-sized', p),
				 format('SELECT bloom_agg(k, %s::float8) FROM keys_m', p), p, :n_absent)
FROM (VALUES (0.01::float8), (0.001)) AS v(p);
\elif :have_selfsize
SELECT bench_fpr('other. measured FPR, bloom_agg(x) self-sized',
				 'SELECT bloom_agg(k) FROM keys_m', 0.01, :n_absent);
\else
SELECT res('other. measured FPR, bloom_agg(x) self-sized', NULL, '% FP', 'not available in this build',
		   NULL, '0.8–1.1× target', NULL);
\endif

-----------------------------------------------------------------------------
-- The table.
-----------------------------------------------------------------------------
-----------------------------------------------------------------------------
-- Target 6: no figure negative or within the noise.
-----------------------------------------------------------------------------
SELECT res('6. per-row figures below noise or negative',
		   count(*) FILTER (WHERE ns <= noise_ns)::text, 'figures',
		   format('of %s per-row differences, each over ≥ %s rows, best of 5 alternating with its baseline (noise: second best less best, both)',
				  count(*), to_char(:n_cand, 'FM999,999,999')),
		   NULL, 'none', count(*) FILTER (WHERE ns <= noise_ns) = 0)
FROM bench_figures;

SELECT progress('done');
SELECT array_to_string((string_to_array(pg_read_file('/proc/loadavg'), ' '))[1:3], ' ') AS load_end \gset
\o
\pset footer off
\pset tuples_only on
\pset format unaligned
SELECT '';
SELECT '=== bloomfilter benchmark (bash test/bench.sh) ===';
SELECT format('PostgreSQL %s; shared_buffers %s; jit %s; %s CPUs; load average at start %s, at end %s; %s and %s candidates, %s-row build, %s-key big filter%s',
			  current_setting('server_version'), current_setting('shared_buffers'),
			  current_setting('jit'), :'ncpu', :'load_start', :'load_end',
			  to_char(:n_cand5, 'FM999,999,999'), to_char(:n_cand, 'FM999,999,999'),
			  to_char(:n_l, 'FM999,999,999'), to_char(:n_big, 'FM999,999,999'),
			  CASE WHEN :quick = 1 THEN ' — QUICK RUN: not the sizes of the budget' ELSE '' END);
\pset tuples_only off
\pset format aligned
\pset border 2
SELECT measurement, value, unit, compared_to AS "compared to", ratio,
	   target, meets
FROM bench_results
ORDER BY CASE WHEN measurement ~ '^[0-9]' THEN substring(measurement FROM '^[0-9]+')::int ELSE 99 END, ord;
\pset tuples_only on
\pset format unaligned
SELECT format('bench.sql took %s s', round(extract(epoch FROM clock_timestamp() - :'bench_t0')::numeric));
