-- test/demo.sql — the bloomfilter demo, run by test/demo.sh on a throwaway
-- server in an empty database, as a superuser:
--     psql -X -q -v ON_ERROR_STOP=1 -d demo -f test/demo.sql
--
-- 1,000,000 users with unique usernames; a filter over them built by one
-- aggregate query; a guarded lookup function that asks the filter first and
-- touches the table only on "maybe"; 100,000 candidate names (90% new, 10%
-- taken) looked up through it.  Reports how many lookups reached the table,
-- the measured false-positive rate, the filter's size against the index's,
-- and what a check costs against an index probe.  Exits non-zero if a taken
-- name was ever answered "no" (a false negative).

\set ON_ERROR_STOP on
\pset tuples_only on
\pset format unaligned
\pset null '(null)'
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 2;
CREATE EXTENSION IF NOT EXISTS bloomfilter;

\set n_users 1000000
\set target_fpr 0.01
\set n_new 90000
\set n_taken 10000

SELECT clock_timestamp() AS demo_t0 \gset

-- Report helpers.
CREATE FUNCTION demo_n(numeric) RETURNS text IMMUTABLE LANGUAGE sql
	AS $$ SELECT to_char($1, 'FM999,999,999,990') $$;

-- Best of `runs` wall-clock timings (ms) of a query, after one warm-up run.
CREATE FUNCTION demo_ms(q text, runs int DEFAULT 5) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
	best float8 := 'Infinity';
	dummy bigint;
BEGIN
	EXECUTE q INTO dummy;
	FOR i IN 1 .. runs LOOP
		t0 := clock_timestamp();
		EXECUTE q INTO dummy;
		best := least(best, 1000 * extract(epoch FROM clock_timestamp() - t0)::float8);
	END LOOP;
	RETURN best;
END $$;

CREATE FUNCTION demo_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		RETURN NEXT '       ' || l;
	END LOOP;
END $$;

SELECT '';
SELECT '=== bloomfilter demo ==========================================================';

-----------------------------------------------------------------------------
-- 1. Users: realistic-looking names ("mary.smith", "jsmith7", "silverfox311",
--    "mary_smith1987", ...) drawn at random from a few styles, deduplicated.
-----------------------------------------------------------------------------
SELECT clock_timestamp() AS t0 \gset

-- IMMUTABLE constant lists, folded into the plan; demo_username() is a
-- single expression, so it is inlined into the query that calls it.
CREATE FUNCTION demo_first() RETURNS text[] IMMUTABLE LANGUAGE sql
	AS $$ SELECT '{
		james, mary, john, patricia, robert, jennifer, michael, linda,
		william, elizabeth, david, barbara, richard, susan, joseph, jessica,
		thomas, sarah, charles, karen, christopher, nancy, daniel, lisa,
		matthew, betty, anthony, margaret, mark, sandra, donald, ashley,
		steven, kimberly, paul, emily, andrew, donna, joshua, michelle,
		kenneth, carol, kevin, amanda, brian, dorothy, george, melissa,
		timothy, deborah, ronald, stephanie, edward, rebecca, jason, sharon,
		jeffrey, laura, ryan, cynthia, jacob, kathleen, gary, amy, nicholas,
		angela, eric, shirley, jonathan, anna, stephen, brenda, larry, pamela,
		justin, emma, scott, nicole, brandon, helen, benjamin, samantha,
		samuel, katherine, gregory, christine, alexander, debra, frank,
		rachel, patrick, carolyn, raymond, janet, jack, catherine, dennis,
		maria, jerry, heather, tyler, diane, aaron, ruth, jose, julie, adam,
		olivia, nathan, joyce, henry, virginia, douglas, victoria, zachary,
		kelly, peter, lauren, kyle, christina}'::text[] $$;
CREATE FUNCTION demo_last() RETURNS text[] IMMUTABLE LANGUAGE sql
	AS $$ SELECT '{
		smith, johnson, williams, brown, jones, garcia, miller, davis,
		rodriguez, martinez, hernandez, lopez, gonzalez, wilson, anderson,
		thomas, taylor, moore, jackson, martin, lee, perez, thompson, white,
		harris, sanchez, clark, ramirez, lewis, robinson, walker, young,
		allen, king, wright, scott, torres, nguyen, hill, flores, green,
		adams, nelson, baker, hall, rivera, campbell, mitchell, carter,
		roberts, gomez, phillips, evans, turner, diaz, parker, cruz, edwards,
		collins, reyes, stewart, morris, morales, murphy, cook, rogers,
		gutierrez, ortiz, morgan, cooper, peterson, bailey, reed, kelly,
		howard, ramos, kim, cox, ward, richardson, watson, brooks, chavez,
		wood, james, bennett, gray, mendoza, ruiz, hughes, price, alvarez,
		castillo, sanders, patel, myers, long, ross, foster, jimenez, powell,
		jenkins, perry, russell, sullivan, bell, coleman, butler, henderson,
		barnes, gonzales, fisher, vasquez, simmons, romero, jordan, patterson,
		alexander, hamilton, graham}'::text[] $$;
CREATE FUNCTION demo_adj() RETURNS text[] IMMUTABLE LANGUAGE sql
	AS $$ SELECT '{
		silver, golden, dark, red, blue, green, iron, crazy, happy, lucky,
		wild, little, big, cool, night, shadow, crystal, cosmic, electric,
		frozen, mighty, quiet, rapid, sunny, stormy, misty, lazy, brave,
		clever, swift}'::text[] $$;
CREATE FUNCTION demo_noun() RETURNS text[] IMMUTABLE LANGUAGE sql
	AS $$ SELECT '{
		fox, wolf, tiger, dragon, eagle, hawk, panda, bear, otter, falcon,
		raven, shark, lion, cat, owl, moon, star, river, storm, pixel, ninja,
		pilot, rider, coder, gamer, wizard, knight, monkey, phoenix, comet}'::text[] $$;

CREATE FUNCTION demo_username() RETURNS text VOLATILE LANGUAGE sql AS $$
SELECT CASE width_bucket(random(), '{0.02,0.30,0.45,0.60,0.78,0.92,0.98}'::float8[])
	WHEN 0 THEN (demo_first())[1 + floor(random() * 120)::int] || '.'
	         || (demo_last())[1 + floor(random() * 120)::int]
	WHEN 1 THEN (demo_first())[1 + floor(random() * 120)::int]
	         || (demo_last())[1 + floor(random() * 120)::int]
	         || floor(random() * 1000)::int
	WHEN 2 THEN chr(97 + floor(random() * 26)::int)
	         || (demo_last())[1 + floor(random() * 120)::int]
	         || floor(random() * 100)::int
	WHEN 3 THEN (demo_first())[1 + floor(random() * 120)::int] || '_'
	         || (demo_last())[1 + floor(random() * 120)::int]
	         || (1955 + floor(random() * 58)::int)
	WHEN 4 THEN (demo_adj())[1 + floor(random() * 30)::int]
	         || (demo_noun())[1 + floor(random() * 30)::int]
	         || floor(random() * 1000)::int
	WHEN 5 THEN (demo_first())[1 + floor(random() * 120)::int]
	         || floor(random() * 10000)::int
	WHEN 6 THEN (demo_last())[1 + floor(random() * 120)::int] || '.'
	         || (demo_first())[1 + floor(random() * 120)::int]
	         || floor(random() * 100)::int
	ELSE        (demo_adj())[1 + floor(random() * 30)::int] || '_'
	         || (demo_first())[1 + floor(random() * 120)::int]
END
$$;

SELECT setseed(0.4242) \gset ignored_

CREATE TABLE users (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	username   text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);

-- Draw 30% more than needed and keep n_users distinct names, in random order.
INSERT INTO users (username)
SELECT username
FROM (SELECT DISTINCT demo_username() AS username
      FROM generate_series(1, :n_users * 13 / 10)) d
ORDER BY random()
LIMIT :n_users;

ALTER TABLE users ADD CONSTRAINT users_username_key UNIQUE (username);
VACUUM ANALYZE users;

SELECT count(*) = :n_users AS users_ok FROM users \gset
\if :users_ok
\else
	SELECT 'demo: could not draw ' || :n_users || ' distinct usernames';
	SELECT 1 / 0 AS abort;
\endif

SELECT format(E'\n1. users: %s unique usernames, unique B-tree index users_username_key (%s s)',
              demo_n(count(*)),
              round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 1))
FROM users;
SELECT '     e.g. ' || string_agg(username, ', ' ORDER BY id)
FROM users WHERE id <= 8;

-----------------------------------------------------------------------------
-- 2. The filter: one aggregate over the table, kept in a table.
-----------------------------------------------------------------------------
CREATE TABLE filters (
	name text PRIMARY KEY,
	bf   bloomfilter NOT NULL
);

SELECT format(E'\n2. filter: bloom_agg(username, %s, %s) over users; plan:',
              demo_n(:n_users), :target_fpr);
SELECT demo_plan(format('SELECT bloom_agg(username, %s, %s) FROM users',
                        :n_users, :target_fpr));

SELECT clock_timestamp() AS t0 \gset
INSERT INTO filters (name, bf)
SELECT 'users', bloom_agg(username, :n_users, :target_fpr) FROM users;
SELECT round(1000 * extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric) AS build_ms \gset

SELECT format('     built in %s ms: layout %s, %s bits, k = %s hashes, %s keys added, fill %s, estimated FPR %s%%',
              :build_ms, i->>'layout', demo_n((i->>'bits')::numeric), i->>'hashes',
              demo_n((i->>'added')::numeric), round((i->>'fill')::numeric, 3),
              round(100 * (i->>'estimated_fpr')::numeric, 3))
FROM (SELECT bloom_info(bf) AS i FROM filters WHERE name = 'users') s;

-----------------------------------------------------------------------------
-- 3. The guarded lookup.
--
-- username_taken(name) asks the filter first and reads users only when the
-- filter says "maybe".  It is one expression with no sub-select, so the
-- planner inlines it into the calling query.  The filter is read through
-- users_filter(): a STABLE function, evaluated per call (so a rebuilt filter
-- is seen by the next statement, never a stale copy), that returns the stored
-- value's TOAST pointer; the check caches the detoasted filter per call site,
-- keyed by that pointer, so the 1.2 MB value is read once per query, not
-- once per row.  (Writing the filter as a sub-select inside username_taken
-- would block inlining: each call would then run its own little plan and
-- detoast the whole filter again.)  A missing filter row gives NULL: "maybe".
-----------------------------------------------------------------------------
CREATE FUNCTION users_filter() RETURNS bloomfilter
	LANGUAGE sql STABLE PARALLEL SAFE
	AS $$ SELECT bf FROM filters WHERE name = 'users' $$;

-- The table probe the filter saves: an index lookup on users_username_key.
CREATE FUNCTION username_in_table(name text) RETURNS boolean
	LANGUAGE sql STABLE PARALLEL SAFE
	AS $$ SELECT EXISTS (SELECT 1 FROM users u WHERE u.username = $1) $$;

CREATE FUNCTION username_taken(name text) RETURNS boolean
	LANGUAGE sql STABLE PARALLEL SAFE
	AS $$ SELECT CASE WHEN NOT (users_filter() @> $1) THEN false
	                  ELSE username_in_table($1) END $$;

SELECT E'\n3. guarded lookup: username_taken(name) = CASE WHEN NOT users_filter() @> name'
       || E'\n     THEN false ELSE username_in_table(name) END  (the table only on "maybe")';

-----------------------------------------------------------------------------
-- 4. Candidates: 90,000 new names (drawn like the users, absent from the
--    table) and 10,000 taken ones, shuffled.  in_table is the ground truth.
-----------------------------------------------------------------------------
SELECT setseed(0.777) \gset ignored_

CREATE TABLE candidates AS
WITH drawn AS (
	SELECT DISTINCT demo_username() AS name FROM generate_series(1, :n_new * 2)
), fresh AS (
	SELECT name FROM drawn d
	WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.username = d.name)
	LIMIT :n_new
), taken AS (
	SELECT username AS name FROM users WHERE id % (:n_users / :n_taken) = 0
), all_names AS (
	SELECT name FROM fresh UNION ALL SELECT name FROM taken
)
SELECT (row_number() OVER (ORDER BY random()))::int AS id, name
FROM all_names;

ALTER TABLE candidates ADD COLUMN in_table boolean;
UPDATE candidates c SET in_table = EXISTS (SELECT 1 FROM users u WHERE u.username = c.name);
ALTER TABLE candidates ADD PRIMARY KEY (id);
VACUUM ANALYZE candidates;

SELECT count(*) FILTER (WHERE NOT in_table) = :n_new AND count(*) FILTER (WHERE in_table) = :n_taken
       AS cand_ok,
       count(*) AS n_cand
FROM candidates \gset
\if :cand_ok
\else
	SELECT 'demo: could not draw the candidates';
	SELECT 1 / 0 AS abort;
\endif

-----------------------------------------------------------------------------
-- 4b. All candidates through the guarded function, in one backend (the
--     counts below are this transaction's own statistics).
-----------------------------------------------------------------------------
SET max_parallel_workers_per_gather = 0;
SET track_functions = 'all';
-- Flush this backend's pending statistics at the next idle point, so that
-- the pg_stat_xact_* views below count this transaction alone.
SELECT pg_stat_force_next_flush() \gset ignored_
BEGIN;
CREATE TABLE answers AS
SELECT c.id, c.name, c.in_table, username_taken(c.name) AS taken
FROM candidates c;
SELECT coalesce((SELECT sum(calls) FROM pg_stat_xact_user_functions
                 WHERE funcname = 'users_filter'), 0) AS filter_reads,
       coalesce((SELECT sum(calls) FROM pg_stat_xact_user_functions
                 WHERE funcname = 'username_in_table'), 0) AS table_lookups,
       coalesce((SELECT idx_scan FROM pg_stat_xact_user_tables
                 WHERE relid = 'users'::regclass), 0) AS idx_scans,
       coalesce((SELECT seq_scan FROM pg_stat_xact_user_tables
                 WHERE relid = 'users'::regclass), 0) AS seq_scans \gset
COMMIT;

SELECT count(*) AS n,
       count(*) FILTER (WHERE in_table) AS n_present,
       count(*) FILTER (WHERE NOT in_table) AS n_absent,
       count(*) FILTER (WHERE f.bf @> a.name) AS maybes,
       count(*) FILTER (WHERE NOT f.bf @> a.name) AS nos,
       count(*) FILTER (WHERE in_table AND f.bf @> a.name) AS true_pos,
       count(*) FILTER (WHERE NOT in_table AND f.bf @> a.name) AS false_pos,
       count(*) FILTER (WHERE in_table AND NOT f.bf @> a.name) AS false_neg,
       count(*) FILTER (WHERE in_table AND taken IS DISTINCT FROM true) AS taken_said_free,
       count(*) FILTER (WHERE taken IS DISTINCT FROM in_table) AS wrong,
       (SELECT bloom_fpr(bf) FROM filters WHERE name = 'users') AS est_fpr
FROM answers a, filters f
WHERE f.name = 'users' \gset

SELECT format(E'\n4. %s candidate names through username_taken(name): %s new, %s taken',
              demo_n(:n), demo_n(:n_absent), demo_n(:n_present));
SELECT format('     answered by the filter alone ("definitely not"): %s  (%s%%)',
              lpad(demo_n(:nos), 7), round(100.0 * :nos / :n, 1));
SELECT format('     reached the users table ("maybe"):               %s  (%s%%)',
              lpad(demo_n(:maybes), 7), round(100.0 * :maybes / :n, 1));
SELECT format('       of which taken names %s, new names (false positives) %s',
              demo_n(:true_pos), demo_n(:false_pos));
SELECT format('       measured: users_filter() read %s times, username_in_table() called %s times;',
              demo_n(:filter_reads), demo_n(:table_lookups));
SELECT format('                 %s index scans and %s sequential scans on users',
              demo_n(:idx_scans), demo_n(:seq_scans));
SELECT format('     false-positive rate: %s / %s = %s%%   (target %s%%, estimated from the bits %s%%)',
              demo_n(:false_pos), demo_n(:n_absent),
              round(100.0 * :false_pos / :n_absent, 3),
              round(100 * :target_fpr::numeric, 3), round(100 * :est_fpr::numeric, 3));
SELECT format('     false negatives (taken names the filter answered "no"): %s  %s',
              :false_neg, CASE WHEN :false_neg = 0 THEN '(must be 0: OK)' ELSE '*** MUST BE 0: FAILED ***' END);
SELECT format('     username_taken() answers differing from the table: %s  %s',
              :wrong, CASE WHEN :wrong = 0 THEN '(OK)' ELSE '*** FAILED ***' END);

-----------------------------------------------------------------------------
-- 5. Sizes.
-----------------------------------------------------------------------------
SELECT pg_column_size(bf) AS bf_bytes,
       (bloom_info(bf)->>'bits')::numeric / :n_users AS bits_per_key,
       pg_relation_size('users_username_key') AS idx_bytes,
       pg_relation_size('users') AS tbl_bytes
FROM filters WHERE name = 'users' \gset

SELECT E'\n5. size';
SELECT format('     filter  (bloomfilter value, %s bits per username): %s bytes',
              round(:bits_per_key, 2), lpad(demo_n(:bf_bytes), 11));
SELECT format('     index   users_username_key (B-tree):               %s bytes  (%s x the filter)',
              lpad(demo_n(:idx_bytes), 11), round(:idx_bytes::numeric / :bf_bytes, 1));
SELECT format('     table   users (heap):                              %s bytes',
              lpad(demo_n(:tbl_bytes), 11));

-----------------------------------------------------------------------------
-- 6. Cost per lookup: a filter check against an index probe, over the same
--    100,000 candidates, warm, best of 5 runs, one backend, each minus the
--    bare scan of the candidates.
-----------------------------------------------------------------------------
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;      -- force one index probe per candidate:
SET enable_mergejoin = off;     -- a nested loop into users_username_key

SELECT demo_ms($q$SELECT count(*) FILTER (WHERE c.name IS NOT NULL) FROM candidates c$q$)
       AS base_ms,
       demo_ms($q$SELECT count(*) FILTER (WHERE (SELECT bf FROM filters WHERE name = 'users') @> c.name)
                  FROM candidates c$q$) AS check_ms,
       demo_ms($q$SELECT count(*) FROM candidates c
                  WHERE EXISTS (SELECT 1 FROM users u WHERE u.username = c.name)$q$) AS probe_ms,
       demo_ms($q$SELECT count(*) FILTER (WHERE username_taken(c.name)) FROM candidates c$q$, 3)
       AS guarded_ms,
       demo_ms($q$SELECT count(*) FILTER (WHERE username_in_table(c.name)) FROM candidates c$q$, 3)
       AS unguarded_ms \gset

SELECT greatest(:check_ms - :base_ms, 0) * 1e6 / :n AS check_ns,
       greatest(:probe_ms - :base_ms, 0) * 1e6 / :n AS probe_ns \gset

SELECT format(E'\n6. cost per lookup over the %s candidates (warm, best of 5, one backend)', demo_n(:n));
SELECT format('     bare scan of the candidates (baseline):        %s ms', lpad(round(:base_ms::numeric, 1)::text, 8));
SELECT format('     + filter check  bf @> name:                    %s ms  = %s ns per check',
              lpad(round(:check_ms::numeric, 1)::text, 8), lpad(demo_n(round(:check_ns::numeric)), 6));
SELECT format('     + index probe   nested loop into the B-tree:   %s ms  = %s ns per probe',
              lpad(round(:probe_ms::numeric, 1)::text, 8), lpad(demo_n(round(:probe_ns::numeric)), 6));
SELECT format('     => a check costs %s of an index probe (%s x cheaper)',
              CASE WHEN :probe_ns > 0 THEN round(100 * :check_ns::numeric / :probe_ns::numeric, 1) || '%' ELSE 'n/a' END,
              CASE WHEN :check_ns > 0 THEN round(:probe_ns::numeric / :check_ns::numeric, 1)::text ELSE 'many' END);
SELECT '     the index probe plan:';
SELECT demo_plan($q$SELECT count(*) FROM candidates c
                    WHERE EXISTS (SELECT 1 FROM users u WHERE u.username = c.name)$q$);
SELECT format('     per call, function overhead included: username_taken(name) %s us (guarded),',
              round(1000 * :guarded_ms::numeric / :n, 2));
SELECT format('                                           username_in_table(name) %s us (unguarded)',
              round(1000 * :unguarded_ms::numeric / :n, 2));
SELECT '     (most of a guarded call is SQL-function overhead: users_filter() reads the';
SELECT '      filters row on every call; the check itself is the line above)';
RESET enable_hashjoin;
RESET enable_mergejoin;

-----------------------------------------------------------------------------
-- The invariant: no false negatives.
-----------------------------------------------------------------------------
SELECT format(E'\n=== demo finished in %s s ==================================================',
              round(extract(epoch FROM clock_timestamp() - :'demo_t0'::timestamptz)::numeric));
DO $$
DECLARE fn bigint; wrong bigint;
BEGIN
	SELECT count(*) FILTER (WHERE a.in_table AND NOT f.bf @> a.name),
	       count(*) FILTER (WHERE a.taken IS DISTINCT FROM a.in_table)
	INTO fn, wrong
	FROM answers a, filters f WHERE f.name = 'users';
	IF fn <> 0 OR wrong <> 0 THEN
		RAISE EXCEPTION 'demo failed: % false negatives, % wrong answers', fn, wrong;
	END IF;
END $$;
