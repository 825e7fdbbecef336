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

-- 1. users: 1M names (the number's digits: pgbench passes them whole as
-- the parameter), a unique index
CREATE TABLE users (id bigserial PRIMARY KEY, username text NOT NULL UNIQUE);
INSERT INTO users (username) SELECT i::text FROM generate_series(1, :users) i;

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
-- 4. the guard indexes (after ANALYZE: without a capacity a guard is sized
-- for twice the rows the planner estimates); events' is a partitioned
-- index, one guard per partition
CREATE INDEX users_username_guard ON users USING bloomguard (username);
CREATE INDEX events_event_id_guard ON events USING bloomguard (event_id);

CREATE TABLE bench_runs (scenario text, clients int, mode text, round int,
	tps float8, tx bigint, blocks bigint, blocks_read bigint, guard_blocks bigint);
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
	   round((sum(blocks_read) FILTER (WHERE mode = 'on')::numeric / sum(tx) FILTER (WHERE mode = 'on')), 3) AS "reads/lookup guarded",
	   round((sum(guard_blocks) FILTER (WHERE mode = 'off')::numeric / sum(tx) FILTER (WHERE mode = 'off')), 2) AS "guard blocks/lookup unguarded",
	   round((sum(guard_blocks) FILTER (WHERE mode = 'on')::numeric / sum(tx) FILTER (WHERE mode = 'on')), 2) AS "guard blocks/lookup guarded"
  FROM bench_runs
 GROUP BY scenario, clients
 ORDER BY min(ctid), clients;
-- the guards: a partitioned index's figures summed over its partitions'
-- guards (layers and estimated rate: the largest); checks: idx_scan of the
-- guard indexes (each check of a gate counts one)
SELECT g.indexrelid::regclass AS guard, count(*) AS guards,
	   max(f.layers) AS layers, sum(f.capacity) AS capacity, sum(f.added) AS keys_added,
	   pg_size_pretty(sum(f.bytes)) AS size,
	   round(100 * max(f.estimated_fpr)::numeric, 3) || '%' AS "estimated FPR",
	   sum(pg_stat_get_numscans(l.relid)) AS checks
  FROM pg_index g
  JOIN pg_class c ON c.oid = g.indexrelid
  JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomguard'
  CROSS JOIN LATERAL (SELECT t.relid FROM pg_partition_tree(g.indexrelid) t
					   WHERE t.isleaf AND c.relkind = 'I'
					  UNION ALL SELECT g.indexrelid WHERE c.relkind = 'i') l
  CROSS JOIN LATERAL bloom_guard_info(l.relid) f
 WHERE NOT c.relispartition
 GROUP BY g.indexrelid
 ORDER BY g.indexrelid::regclass::text;
\endif
