-- Where the planner adds a gate (test/tap/116_planner_guards.pl compares
-- the output with explain.out).  Guards: users.username (1), users.n (2),
-- users.tag (3), events.event_id (4).
SET plan_cache_mode = force_generic_plan;
-- a gate: constants, parameters, cross-type integers, varchar as text,
-- arrays; not a function of a constant (a gate must not evaluate what can
-- fail where the scan would not)
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'user1';
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE 'user1' = username;
PREPARE p_name(text) AS SELECT * FROM users WHERE username = $1;
EXPLAIN (COSTS OFF) EXECUTE p_name('user1');
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE n = 3::int4;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE tag = 'tag1';
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = current_setting('application_name');
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE n IN (3, 6, 9);
-- an index condition under a gate searches the "maybe" keys only (the
-- Index Keys line; a Result gate narrows them too but does not say so)
EXPLAIN (COSTS OFF) SELECT * FROM events WHERE event_id IN (42, 43) AND day < 2;
-- a partitioned table: each partition's scan is gated
EXPLAIN (COSTS OFF) SELECT * FROM events WHERE event_id = 42 AND day < 2;
-- a partition queried directly: its ancestor's guard
EXPLAIN (COSTS OFF) SELECT * FROM events_3 WHERE event_id = 42;
-- a join: the constant reaches both sides through the equivalence
EXPLAIN (COSTS OFF) SELECT * FROM users u JOIN events e ON e.event_id = u.n
	WHERE u.n = 42 AND e.day = 1;
-- UPDATE and DELETE scans are gated too
EXPLAIN (COSTS OFF) UPDATE users SET tag = 'x' WHERE username = 'nobody';
-- no gate: numeric comparison (the column is cast), an expression of the
-- column, another column, OR, a volatile value, a Var on both sides,
-- <>, no guard on the column, a join clause
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE n = 3.0;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE lower(username) = 'user1';
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE id = 1;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'user1' OR n = 3;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'user' || (random() * 10)::int;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = tag;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username <> 'user1';
EXPLAIN (COSTS OFF) SELECT * FROM other WHERE k = 'user1';
EXPLAIN (COSTS OFF) SELECT * FROM other o JOIN users u ON u.username = o.k;
-- the BloomGate node checks a gate on constants and parameters as the
-- query starts (121_partition_filters.pl: EXPLAIN ANALYZE); a gate on a
-- stable expression (above) or on a correlated subquery's outer value keeps
-- a Result, checked on its first row
EXPLAIN (COSTS OFF) SELECT (SELECT count(*) FROM users u WHERE u.username = o.k) FROM other o;
-- the GUC turns it off
SET bloomfilter.planner_guards = off;
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE username = 'user1';
RESET bloomfilter.planner_guards;
