--
-- cache_kept: stored filters stay in the backend's cache across statements
-- and transactions, and a kept copy is checked before each new statement
-- uses it.  Another session (dblink) changes the filters between
-- statements; every statement here is its own transaction unless BEGIN.
--
CREATE EXTENSION IF NOT EXISTS dblink;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
CREATE FUNCTION pg_temp.other(q text) RETURNS text LANGUAGE sql AS $$
	SELECT dblink_exec(format('dbname=%s port=%s host=%s', current_database(),
							  current_setting('port'),
							  split_part(current_setting('unix_socket_directories'), ',', 1)),
					   q)
$$;
-- no autovacuum: its relcache invalidations would drop kept entries at random
CREATE TABLE kf (name text PRIMARY KEY, bf bloomfilter)
	WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
CREATE TEMP TABLE r (r0 bigint);
INSERT INTO r SELECT reads FROM bloom_cache_stats();
-- stored values read whole since the last call
CREATE FUNCTION pg_temp.new_reads() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	was bigint;
	now bigint;
BEGIN
	SELECT r0 INTO was FROM r;
	SELECT reads INTO now FROM bloom_cache_stats();
	UPDATE r SET r0 = now;
	RETURN now - was;
END $$;
-- keys prefix1..prefix2000 found in filter `name`
CREATE FUNCTION pg_temp.found(name text, prefix text) RETURNS bigint
LANGUAGE sql AS $$
	SELECT count(*) FROM kf, generate_series(1, 2000) i
	WHERE kf.name = found.name AND bf @> (prefix || i)
$$;
-- keys prefix1..prefix2000 for which the filter also says yes to a key it
-- was never given: 0 unless a stale copy answers
CREATE FUNCTION pg_temp.stale(name text, prefix text) RETURNS bigint
LANGUAGE sql AS $$
	SELECT count(*) FROM kf, generate_series(1, 2000) i
	WHERE kf.name = stale.name AND bf @> (prefix || i) AND bf @> (prefix || 'x' || i)
$$;
INSERT INTO kf SELECT p, bloom_add_all(bloom_empty(20000),
	(SELECT array_agg(p || '-' || i) FROM generate_series(1, 2000) i))
FROM unnest(ARRAY['a', 'b', 'c']) p;
SELECT pg_temp.new_reads() >= 0 AS ok;
-- read once, then kept: the next statements do not read it again
SELECT pg_temp.found('a', 'a-');
SELECT pg_temp.new_reads();
SELECT pg_temp.found('a', 'a-');
SELECT pg_temp.found('a', 'a-');
SELECT pg_temp.new_reads();
SELECT entries, pinned FROM bloom_cache_stats();
-- one call site alternating between three filters, in two statements: b
-- and c read once (a is kept already), nothing read by the second
SELECT count(*) FROM (SELECT p, i FROM unnest(ARRAY['b', 'c', 'a']) WITH ORDINALITY u(p, o),
                                    generate_series(1, 2000) i ORDER BY i, o OFFSET 0) k
CROSS JOIN LATERAL (SELECT bf FROM kf WHERE kf.name = k.p) f
WHERE f.bf @> (k.p || '-' || k.i);
SELECT pg_temp.new_reads();
SELECT count(*) FROM (SELECT p, i FROM unnest(ARRAY['b', 'c', 'a']) WITH ORDINALITY u(p, o),
                                    generate_series(1, 2000) i ORDER BY i, o OFFSET 0) k
CROSS JOIN LATERAL (SELECT bf FROM kf WHERE kf.name = k.p) f
WHERE f.bf @> (k.p || '-' || k.i);
SELECT pg_temp.new_reads();
-- an UPDATE by another session: the new value is read
SELECT pg_temp.other($$UPDATE kf SET bf = bf || 'a-new'::text WHERE name = 'a'$$);
SELECT pg_temp.found('a', 'a-'), bf @> 'a-new'::text AS new_key FROM kf WHERE name = 'a';
SELECT pg_temp.new_reads();
-- an UPDATE rolled back by another session: the kept copy is still good
SELECT pg_temp.other($$BEGIN; UPDATE kf SET bf = bf || 'a-gone'::text WHERE name = 'a'; ROLLBACK$$);
SELECT pg_temp.found('a', 'a-'), bf @> 'a-gone'::text AS gone_key FROM kf WHERE name = 'a';
SELECT pg_temp.new_reads();
-- DELETE and INSERT by another session
SELECT pg_temp.other($$DELETE FROM kf WHERE name = 'b'$$);
SELECT pg_temp.other($$INSERT INTO kf SELECT 'b', bloom_add_all(bloom_empty(20000),
	(SELECT array_agg('b2-' || i) FROM generate_series(1, 2000) i))$$);
SELECT pg_temp.found('b', 'b2-'), pg_temp.stale('b', 'b-');
SELECT pg_temp.new_reads();
-- DELETE, VACUUM (the old value's chunks removed, its id free) and INSERT
SELECT pg_temp.other($$DELETE FROM kf WHERE name = 'b'$$);
SELECT pg_temp.other($$VACUUM kf$$);
SELECT pg_temp.other($$INSERT INTO kf SELECT 'b', bloom_add_all(bloom_empty(20000),
	(SELECT array_agg('b3-' || i) FROM generate_series(1, 2000) i))$$);
SELECT pg_temp.found('b', 'b3-'), pg_temp.stale('b', 'b2-');
SELECT pg_temp.new_reads() > 0 AS read_again;
-- VACUUM FULL keeps the value ids but moves the chunks: read again
SELECT pg_temp.found('c', 'c-');
SELECT pg_temp.new_reads() >= 0 AS ok;
SELECT pg_temp.other($$VACUUM FULL kf$$);
SELECT pg_temp.found('c', 'c-');
SELECT pg_temp.new_reads();
-- a frozen value is kept too
SELECT pg_temp.other($$VACUUM FREEZE kf$$);
SELECT pg_temp.found('c', 'c-');
SELECT pg_temp.new_reads();
SELECT pg_temp.found('c', 'c-');
SELECT pg_temp.new_reads();
-- TRUNCATE and INSERT by another session
SELECT pg_temp.other($$TRUNCATE kf$$);
SELECT pg_temp.other($$INSERT INTO kf SELECT p, bloom_add_all(bloom_empty(20000),
	(SELECT array_agg(p || '-t-' || i) FROM generate_series(1, 2000) i))
	FROM unnest(ARRAY['a', 'b', 'c']) p$$);
SELECT pg_temp.found('c', 'c-t-'), pg_temp.stale('c', 'c-');
SELECT pg_temp.new_reads();
-- this session's UPDATE rolled back: the value read in the aborted
-- transaction never answers for the old one
SELECT pg_temp.found('a', 'a-t-');
BEGIN;
UPDATE kf SET bf = bf || 'a-own'::text WHERE name = 'a';
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-own'::text AS own_key FROM kf WHERE name = 'a';
ROLLBACK;
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-own'::text AS own_key FROM kf WHERE name = 'a';
-- and rolled back to a savepoint
BEGIN;
SAVEPOINT s;
UPDATE kf SET bf = bf || 'a-sp'::text WHERE name = 'a';
SELECT bf @> 'a-sp'::text AS sp_key FROM kf WHERE name = 'a';
ROLLBACK TO s;
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-sp'::text AS sp_key FROM kf WHERE name = 'a';
COMMIT;
-- READ COMMITTED: another session's UPDATE between two statements of one
-- transaction is seen by the second
BEGIN;
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-rc'::text AS rc_key FROM kf WHERE name = 'a';
SELECT pg_temp.other($$UPDATE kf SET bf = bf || 'a-rc'::text WHERE name = 'a'$$);
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-rc'::text AS rc_key FROM kf WHERE name = 'a';
COMMIT;
-- REPEATABLE READ: the transaction's snapshot keeps the value it saw, the
-- next transaction sees the new one
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-rr'::text AS rr_key FROM kf WHERE name = 'a';
SELECT pg_temp.other($$UPDATE kf SET bf = bf || 'a-rr'::text WHERE name = 'a'$$);
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-rr'::text AS rr_key FROM kf WHERE name = 'a';
COMMIT;
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-rr'::text AS rr_key FROM kf WHERE name = 'a';
SELECT pg_temp.new_reads() >= 0 AS ok;
SELECT pg_temp.found('a', 'a-t-'), bf @> 'a-rr'::text AS rr_key FROM kf WHERE name = 'a';
SELECT pg_temp.new_reads();
-- kept copies stay within bloomfilter.cache_size
SET bloomfilter.cache_size = 0;
SELECT pg_temp.found('a', 'a-t-');
SELECT entries, bytes FROM bloom_cache_stats();
RESET bloomfilter.cache_size;
-- the default is sized for many connections: each backend has its own
SHOW bloomfilter.cache_size;
-- the view of the cache: one row per filter, with its table; a copy no
-- query uses is kept between statements
SELECT pg_temp.found('a', 'a-t-');
SELECT table_name, bytes > 2000 * 9 / 8 AS sized, in_use, kept FROM bloom_cache;
-- in use while a query checks it
SELECT DISTINCT c.table_name, c.in_use, c.kept
FROM kf CROSS JOIN LATERAL (SELECT * FROM bloom_cache) c
WHERE kf.name = 'a' AND bf @> 'a-rr'::text;
-- a copy under 4 MB is memory of the cache's memory context (a larger one is
-- a mapping of its own, given back when freed)
SELECT (SELECT sum(total_bytes) FROM pg_backend_memory_contexts
		WHERE name IN ('bloomfilter cache', 'bloomfilter cache entry')) >=
	   (SELECT sum(bytes) FROM bloom_cache) AS counted;
-- a volatile function takes a new snapshot per statement: the copy is
-- checked again under each (no new read) and answers for the value the
-- statement sees, also when another session replaces it in between
CREATE FUNCTION pg_temp.twice(key text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	first boolean;
	second boolean;
BEGIN
	SELECT bf @> key INTO first FROM kf WHERE name = 'a';
	PERFORM pg_temp.other(format('UPDATE kf SET bf = bf || %L::text WHERE name = %L', key, 'a'));
	SELECT bf @> key INTO second FROM kf WHERE name = 'a';
	RETURN format('%s then %s', first, second);
END $$;
SELECT pg_temp.found('a', 'a-t-');
SELECT pg_temp.new_reads() >= 0 AS ok;
SELECT pg_temp.twice('a-new');
SELECT pg_temp.new_reads();
SELECT sum(pg_temp.found('a', 'a-t-')) FROM generate_series(1, 5);
SELECT pg_temp.new_reads();
-- a VOLATILE function checking a filter it was given, many times in one
-- statement (each of its statements takes a snapshot): the copy answers
-- without a check per call, and the statement's memory does not grow
CREATE FUNCTION pg_temp.loop_m(v bloomfilter, n int) RETURNS text VOLATILE LANGUAGE plpgsql AS $$
DECLARE
	c int := 0;
	m0 bigint := (SELECT total_bytes FROM pg_backend_memory_contexts WHERE name = 'PortalContext');
	m1 bigint;
BEGIN
	FOR i IN 1 .. n LOOP
		IF v @> ('a-t-' || (i % 2000 + 1)) AND clock_timestamp() IS NOT NULL THEN
			c := c + 1;
		END IF;
	END LOOP;
	m1 := (SELECT total_bytes FROM pg_backend_memory_contexts WHERE name = 'PortalContext');
	RETURN format('%s found, memory grew %s', c, CASE WHEN m1 - m0 < 65536 THEN 'under 64 kB' ELSE (m1 - m0)::text END);
END $$;
SELECT pg_temp.loop_m(bf, 20000) FROM kf WHERE name = 'a';
-- a rule's second statement runs under the same, updated, active snapshot
CREATE TABLE rt (k text);
CREATE TABLE rlog (k text);
CREATE RULE rt_log AS ON INSERT TO rt DO ALSO INSERT INTO rlog VALUES (NEW.k);
INSERT INTO rt SELECT 'a-t-' || i FROM kf, generate_series(1, 2000) i
WHERE name = 'a' AND bf @> ('a-t-' || i);
SELECT (SELECT count(*) FROM rt) AS rt, (SELECT count(*) FROM rlog) AS rlog;
DROP TABLE rt, rlog;
-- an idle session holds back no VACUUM: after a check, in and out of a
-- READ COMMITTED transaction; a REPEATABLE READ transaction holds its own
-- snapshot until it ends
SELECT dblink_connect('idle', format('dbname=%s port=%s host=%s', current_database(),
	current_setting('port'), split_part(current_setting('unix_socket_directories'), ',', 1)));
CREATE TEMP TABLE idle_pid AS SELECT * FROM dblink('idle', 'SELECT pg_backend_pid()') t(pid int);
CREATE FUNCTION pg_temp.idle_xmin() RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(a.backend_xmin::text, 'none') FROM pg_stat_activity a JOIN idle_pid USING (pid)
$$;
SELECT * FROM dblink('idle', $$SELECT count(*) FROM kf, generate_series(1, 2000) i
	WHERE name = 'a' AND bf @> ('a-t-' || i)$$) t(n bigint);
SELECT pg_temp.idle_xmin();
SELECT dblink_exec('idle', 'BEGIN');
SELECT * FROM dblink('idle', $$SELECT count(*) FROM kf, generate_series(1, 2000) i
	WHERE name = 'a' AND bf @> ('a-t-' || i)$$) t(n bigint);
SELECT pg_temp.idle_xmin();
SELECT dblink_exec('idle', 'COMMIT');
SELECT dblink_exec('idle', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
SELECT * FROM dblink('idle', $$SELECT count(*) FROM kf, generate_series(1, 2000) i
	WHERE name = 'a' AND bf @> ('a-t-' || i)$$) t(n bigint);
SELECT pg_temp.idle_xmin() <> 'none' AS held;
SELECT dblink_exec('idle', 'COMMIT');
SELECT pg_temp.idle_xmin();
SELECT * FROM dblink('idle', $$SELECT count(*) FROM bloom_cache WHERE kept$$) t(n bigint);
SELECT dblink_disconnect('idle');
SELECT count(*) FROM bloom_cache;
-- a smaller bloomfilter.cache_size lets go of kept copies at once
SET bloomfilter.cache_size = 0;
SELECT count(*) FROM bloom_cache;
RESET bloomfilter.cache_size;
SELECT pg_temp.found('a', 'a-t-');
SELECT count(*) FROM bloom_cache;
-- DISCARD ALL (a pooler resetting the session) empties it
DISCARD ALL;
SELECT count(*) FROM bloom_cache;
SELECT entries, bytes, pinned FROM bloom_cache_stats();
DROP TABLE kf;
