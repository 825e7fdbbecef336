-- Tables for the planner-guard tests (test/tap/116_planner_guards.pl).
CREATE TABLE users (id bigserial PRIMARY KEY, username text NOT NULL,
                    n int8, tag varchar(12));
INSERT INTO users (username, n, tag)
	SELECT 'user' || i, 3 * i, 'tag' || (i % 500) FROM generate_series(1, 20000) i;
CREATE INDEX ON users (username);
CREATE INDEX ON users (n);
CREATE SEQUENCE users_more START 20001;
CREATE TABLE events (event_id int8 NOT NULL, day int NOT NULL, payload text)
	PARTITION BY RANGE (day);
DO $$
BEGIN
	FOR d IN 0 .. 7 LOOP
		EXECUTE format('CREATE TABLE events_%s PARTITION OF events FOR VALUES FROM (%s) TO (%s)',
					   d, d, d + 1);
	END LOOP;
END $$;
INSERT INTO events SELECT i, i % 8, 'p' || i FROM generate_series(1, 40000) i;
CREATE INDEX ON events (event_id);
CREATE SEQUENCE events_more START 40001;
CREATE TABLE other (k text);
INSERT INTO other SELECT 'user' || i FROM generate_series(1, 100) i;
ANALYZE;
SELECT bloom_guard('users', 'username');
SELECT bloom_guard('users', 'n');
SELECT bloom_guard('users', 'tag');
SELECT bloom_guard('events', 'event_id');
