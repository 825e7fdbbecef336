--
-- Shared filters without shared_preload_libraries (the regression server
-- does not preload bloomfilter): every shared function fails with a hint,
-- the value tier and DDL on other tables keep working.
--
\set VERBOSITY default
CREATE TABLE shared_t (id int, username text);
INSERT INTO shared_t VALUES (1, 'alice'), (2, 'bob');

SELECT bloom_guard('shared_t', 'username');
SELECT bloom_guard('shared_t', 'username', layout => 'counting');
SELECT bloom_unguard('shared_t', 'username');
SELECT bloom_shared_rebuild('public.shared_t.username');
SELECT bloom_shared_wait('public.shared_t.username', 10);
SELECT bloom_shared_contains('public.shared_t.username', 'alice');
SELECT bloom_shared_contains('public.shared_t.username', 1);
SELECT bloom_shared_add('public.shared_t.username', 'carol');
SELECT bloom_shared_get('public.shared_t.username');
SELECT * FROM bloom_shared_filters;
-- planner gates answer "maybe" (true): nothing is planned with them here
SELECT bloom_shared_gate(1, 'alice'::text), bloom_shared_gate(1, NULL::text),
       bloom_shared_gate_any(1, ARRAY['alice', 'bob']), bloom_shared_skipped_scans(1);
-- and so do the gates of a partition's own filter, also given NULLs
SELECT bloom_shared_gate(1, 'pg_class'::regclass, 'alice'::text),
       bloom_shared_gate(1, NULL, 'alice'::text),
       bloom_shared_gate_any(1, 'pg_class'::regclass, ARRAY['alice', NULL]);
EXPLAIN (COSTS OFF) SELECT * FROM shared_t WHERE username = 'alice';

-- the configuration table exists and is empty
SELECT count(*) FROM bloom_shared_definitions;

-- the trigger does nothing without shared memory (a dumped guard restored
-- on a server without preload must not block writes)
CREATE TRIGGER shared_t_guard AFTER INSERT OR UPDATE OF username ON shared_t
	FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.shared_t.username');
INSERT INTO shared_t VALUES (3, 'carol');
-- it refuses BEFORE
CREATE TRIGGER shared_t_before BEFORE INSERT ON shared_t
	FOR EACH ROW EXECUTE FUNCTION bloom_shared_trigger('public.shared_t.username');
INSERT INTO shared_t VALUES (4, 'dave');
DROP TRIGGER shared_t_before ON shared_t;

-- the value tier is unaffected
SELECT bloom_contains(bloom_agg(username, 100, 0.01), 'alice') AS has_alice FROM shared_t;

-- the event trigger lets DROP pass
ALTER TABLE shared_t ADD COLUMN extra int;
ALTER TABLE shared_t DROP COLUMN extra;
DROP TABLE shared_t;
