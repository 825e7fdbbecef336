-- test/bench/planner_guards.sql — the planner-guard benchmark's SQL, run by
-- test/bench/planner_guards.sh with -v step=setup|report (and users, events).

\if :{?step}
\else
\echo 'run through test/bench/planner_guards.sh'
\quit
\endif

SELECT :'step' = 'setup' AS is_setup \gset
\if :is_setup
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;

-- 1. users: 1M names, a unique index
CREATE TABLE users (id bigserial PRIMARY KEY, username text NOT NULL UNIQUE);
INSERT INTO users (username) SELECT 'user' || i FROM generate_series(1, :users) i;

-- 2. events: range-partitioned by day into 64 partitions, looked up by
-- event_id (not the partition key; an index per partition)
CREATE TABLE events (event_id bigint NOT NULL, day int NOT NULL, payload text)
	PARTITION BY RANGE (day);
SELECT format('CREATE TABLE events_%s PARTITION OF events FOR VALUES FROM (%s) TO (%s)',
			  d, d, d + 1)
  FROM generate_series(0, 63) d \gexec
INSERT INTO events SELECT i, i % 64, 'event ' || i FROM generate_series(1, :events) i;
CREATE INDEX ON events (event_id);

-- 3. the same lookups through a PL/pgSQL function, and a trigger that skips
-- duplicates (BEFORE INSERT: an existing event_id is not inserted again)
CREATE FUNCTION event_exists(id bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	RETURN EXISTS (SELECT 1 FROM events WHERE event_id = id);
END $$;
CREATE FUNCTION events_skip_duplicate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM events WHERE event_id = NEW.event_id) THEN
		RETURN NULL;
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER events_skip_duplicate BEFORE INSERT ON events
	FOR EACH ROW EXECUTE FUNCTION events_skip_duplicate();

VACUUM ANALYZE;
SELECT bloom_guard('users', 'username') \gset
SELECT bloom_guard('events', 'event_id') \gset
SELECT bloom_shared_wait('public.users.username', 600000) AND
	   bloom_shared_wait('public.events.event_id', 600000) AS ready \gset
\if :ready
\else
\echo 'the filters did not get ready'
\quit
\endif

CREATE TABLE bench_runs (scenario text, clients int, mode text, round int,
	tps float8, tx bigint, blocks bigint, blocks_read bigint);
\endif

SELECT :'step' = 'report' AS is_report \gset
\if :is_report
\pset footer off
SELECT scenario, clients,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE mode = 'off')::numeric, 0)
		   || ' (' || round(min(tps) FILTER (WHERE mode = 'off')) || '-'
		   || round(max(tps) FILTER (WHERE mode = 'off')) || ')' AS "TPS unguarded, median (min-max)",
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE mode = 'on')::numeric, 0)
		   || ' (' || round(min(tps) FILTER (WHERE mode = 'on')) || '-'
		   || round(max(tps) FILTER (WHERE mode = 'on')) || ')' AS "TPS guarded, median (min-max)",
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE mode = 'on')
			  / percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE mode = 'off'))::numeric, 2) AS "ratio of medians",
	   round((sum(blocks) FILTER (WHERE mode = 'off')::numeric / sum(tx) FILTER (WHERE mode = 'off')), 2) AS "blocks/lookup unguarded",
	   round((sum(blocks) FILTER (WHERE mode = 'on')::numeric / sum(tx) FILTER (WHERE mode = 'on')), 2) AS "blocks/lookup guarded",
	   round((sum(blocks_read) FILTER (WHERE mode = 'off')::numeric / sum(tx) FILTER (WHERE mode = 'off')), 3) AS "reads/lookup unguarded",
	   round((sum(blocks_read) FILTER (WHERE mode = 'on')::numeric / sum(tx) FILTER (WHERE mode = 'on')), 3) AS "reads/lookup guarded"
  FROM bench_runs
 GROUP BY scenario, clients
 ORDER BY min(ctid), clients;
SELECT name, keys_added, memory_bytes, checks, negatives, skipped_scans
  FROM bloom_shared_filters ORDER BY name;
\endif
