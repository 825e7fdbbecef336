-- The randomized equivalence harness (test/tap/116_planner_guards.pl):
-- templates of queries with one parameter $1, each run with planner guards
-- on (with the value as a literal, through a generic prepared statement,
-- through PL/pgSQL's cached plans) and compared with the same query planned
-- with planner guards off, in the same snapshot.  Each template returns its
-- rows as one sorted text[].
CREATE TABLE eq_templates (id int PRIMARY KEY, argtype text NOT NULL, body text NOT NULL);
INSERT INTO eq_templates VALUES
 (1,  'text',    'SELECT id FROM users WHERE username = $1'),
 (2,  'text',    'SELECT id FROM users WHERE username = lower($1)'),
 (3,  'text',    'SELECT id, n FROM users WHERE username = $1 || ''''' ),
 (4,  'int8',    'SELECT id FROM users WHERE n = $1'),
 (5,  'int4',    'SELECT id FROM users WHERE n = $1'),
 (6,  'numeric', 'SELECT id FROM users WHERE n = $1'),
 (7,  'text',    'SELECT id FROM users WHERE tag = $1'),
 (8,  'int8',    'SELECT event_id, day FROM events WHERE event_id = $1'),
 (9,  'int8[]',  'SELECT id FROM users WHERE n = ANY ($1)'),
 (10, 'text[]',  'SELECT id FROM users WHERE username = ANY ($1)'),
 (11, 'text',    'SELECT id FROM users WHERE username IN (''user7'', $1, ''nobody'')'),
 (12, 'int8',    'SELECT u.id, e.day FROM users u JOIN events e ON e.event_id = u.n WHERE e.event_id = $1'),
 (13, 'int8',    'SELECT u.id, e.day FROM users u LEFT JOIN events e ON e.event_id = u.n AND e.event_id = $1 WHERE u.id <= 40'),
 (14, 'int8[]',  'SELECT x, (SELECT count(*) FROM users WHERE n = x) FROM unnest($1) x'),
 (15, 'int8',    'SELECT id FROM users WHERE n = $1 AND username LIKE ''user%'''),
 (16, 'text',    'SELECT id FROM users WHERE username = $1 COLLATE "C"'),
 (17, 'int8',    'SELECT event_id FROM events WHERE day = 3 AND event_id = $1'),
 (18, 'text',    'SELECT id FROM users WHERE username = $1 OR n = 6'),
 (19, 'int8',    'SELECT id FROM users WHERE n = $1 + 0'),
 (20, 'int8',    'SELECT id FROM users WHERE n = (SELECT $1)'),
 (21, 'text',    'SELECT id FROM users WHERE username = current_setting(''eq.key'')'),
 (22, 'text',    'SELECT id FROM users WHERE username = nullif($1, ''user1'')'),
 (23, 'text',    'SELECT o.k, u.id FROM other o LEFT JOIN users u ON u.username = $1 AND u.username = o.k'),
 (24, 'int8',    'SELECT e.event_id, u.id FROM events e JOIN users u ON u.n = e.event_id WHERE e.event_id = $1 AND u.n = $1'),
 (25, 'text',    'SELECT id FROM users WHERE username = $1 UNION ALL SELECT event_id FROM events WHERE payload = $1'),
 (26, 'int8',    'SELECT count(*) FROM events WHERE event_id = $1'),
 (27, 'text',    'SELECT k FROM other WHERE EXISTS (SELECT 1 FROM users WHERE username = $1)'),
 (28, 'int8',    'SELECT id FROM users WHERE n = $1 FOR UPDATE');

CREATE TABLE eq_failures (template int, mode text, value text, got text[], want text[]);

-- A random value of a type: present keys, keys just inserted by the
-- concurrent writers, absent keys, NULL.
CREATE FUNCTION eq_value(argtype text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r float8 := random();
	hi int8 := (SELECT last_value FROM users_more) + 5;
	ehi int8 := (SELECT last_value FROM events_more) + 5;
BEGIN
	IF argtype LIKE '%[]' THEN
		RETURN '{' || (SELECT string_agg(coalesce(eq_value(rtrim(argtype, '[]')), 'NULL'), ',')
					   FROM generate_series(1, 1 + (random() * 3)::int)) || '}';
	END IF;
	IF r < 0.04 THEN
		RETURN NULL;
	END IF;
	IF argtype = 'text' THEN
		RETURN CASE WHEN r < 0.35 THEN 'user' || (1 + (random() * (hi - 1))::int8)
					WHEN r < 0.45 THEN 'tag' || (random() * 600)::int
					WHEN r < 0.5 THEN 'p' || (random() * ehi)::int8
					ELSE 'nouser' || (random() * 1e6)::int END;
	END IF;
	-- numbers: users.n = 3 * id, events.event_id = 1 .. ehi
	RETURN CASE WHEN r < 0.4 THEN (3 * (1 + (random() * (hi - 1))::int8))::text
				WHEN r < 0.7 THEN (1 + (random() * (ehi - 1))::int8)::text
				ELSE (1 + (random() * 5e6)::int8)::text END;
END $$;

CREATE FUNCTION eq_sql(t eq_templates, v text) RETURNS text LANGUAGE sql AS $$
	SELECT 'SELECT coalesce(array_agg(r::text ORDER BY r::text), ''{}'') FROM ('
		   || replace(t.body, '$1', coalesce(quote_literal(v), 'NULL') || '::' || t.argtype)
		   || ') r'
$$;

-- Static SQL in PL/pgSQL: cached plans with parameters.
CREATE FUNCTION eq_static(tid int, v text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
	res text[];
BEGIN
	IF tid = 1 THEN
		SELECT coalesce(array_agg(r::text ORDER BY r::text), '{}') INTO res
		  FROM (SELECT id FROM users WHERE username = v) r;
	ELSIF tid = 4 THEN
		SELECT coalesce(array_agg(r::text ORDER BY r::text), '{}') INTO res
		  FROM (SELECT id FROM users WHERE n = v::int8) r;
	ELSIF tid = 8 THEN
		SELECT coalesce(array_agg(r::text ORDER BY r::text), '{}') INTO res
		  FROM (SELECT event_id, day FROM events WHERE event_id = v::int8) r;
	END IF;
	RETURN res;
END $$;

-- Prepare every template (generic plans: plan_cache_mode is set by the caller).
CREATE FUNCTION eq_prepare() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	t eq_templates;
BEGIN
	FOR t IN SELECT * FROM eq_templates LOOP
		EXECUTE format('PREPARE eq_p%s(%s) AS SELECT coalesce(array_agg(r::text ORDER BY r::text), ''{}'') FROM (%s) r',
					   t.id, t.argtype, t.body);
	END LOOP;
END $$;

-- n random queries; returns the number of comparisons made.  Mismatches go
-- to eq_failures.
CREATE FUNCTION eq_run(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	t eq_templates;
	v text;
	want text[];
	got text[];
	compared int := 0;
BEGIN
	FOR i IN 1 .. n LOOP
		SELECT * INTO t FROM eq_templates ORDER BY random() LIMIT 1;
		v := eq_value(t.argtype);
		PERFORM set_config('eq.key', coalesce(v, ''), true);
		PERFORM set_config('bloomfilter.planner_guards', 'off', true);
		EXECUTE eq_sql(t, v) INTO want;
		PERFORM set_config('bloomfilter.planner_guards', 'on', true);
		EXECUTE eq_sql(t, v) INTO got;
		compared := compared + 1;
		IF got IS DISTINCT FROM want THEN
			INSERT INTO eq_failures VALUES (t.id, 'literal', v, got, want);
		END IF;
		EXECUTE format('EXECUTE eq_p%s(%s)', t.id,
					   coalesce(quote_literal(v), 'NULL')) INTO got;
		compared := compared + 1;
		IF got IS DISTINCT FROM want THEN
			INSERT INTO eq_failures VALUES (t.id, 'generic', v, got, want);
		END IF;
		IF t.id IN (1, 4, 8) THEN
			got := eq_static(t.id, v);
			compared := compared + 1;
			IF got IS DISTINCT FROM want THEN
				INSERT INTO eq_failures VALUES (t.id, 'plpgsql', v, got, want);
			END IF;
		END IF;
	END LOOP;
	RETURN compared;
END $$;
