--
-- Guard indexes (USING bloomguard): a Bloom filter of a column, kept by
-- PostgreSQL's index maintenance; checked with bloom_guard_contains.
--
SET client_min_messages = warning;

-- the operator classes are valid, one default per supported type
SELECT opcname, opcintype::regtype, opcdefault, amvalidate(oid)
FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomguard')
ORDER BY opcname;

CREATE TABLE gt (id int PRIMARY KEY, i2 int2, i4 int4, i8 int8, o oid,
	t text, v varchar(20), c char(8), nm name, b bytea, u uuid, bo bool,
	f4 float4, f8 float8, nu numeric, d date, ts timestamp, tz timestamptz);
INSERT INTO gt
SELECT i, i::int2, i, i * 1000000000::int8, i::oid,
	'key' || i, 'v' || i, 'c' || i, 'n' || i, ('\x' || lpad(to_hex(i), 8, '0'))::bytea,
	('00000000-0000-0000-0000-' || lpad(to_hex(i), 12, '0'))::uuid, i % 2 = 0,
	i / 4.0, i / 8.0, i / 10.0, date '2024-01-01' + i,
	timestamp '2024-01-01' + i * interval '1 minute',
	timestamptz '2024-01-01 00:00+00' + i * interval '1 second'
FROM generate_series(1, 2000) i;

-- one guard per column type (every column but the key)
DO $$
DECLARE col text;
BEGIN
	FOREACH col IN ARRAY ARRAY['i2', 'i4', 'i8', 'o', 't', 'v', 'c', 'nm', 'b',
		'u', 'f4', 'f8', 'nu', 'd', 'ts', 'tz']
	LOOP
		EXECUTE format('CREATE INDEX %I ON gt USING bloomguard (%I)', 'gt_' || col || '_g', col);
	END LOOP;
END $$;

-- no false negative: every row's key answers true
SELECT count(*) AS rows,
	count(*) FILTER (WHERE bloom_guard_contains('gt_i2_g', i2)) AS i2,
	count(*) FILTER (WHERE bloom_guard_contains('gt_i4_g', i4)) AS i4,
	count(*) FILTER (WHERE bloom_guard_contains('gt_i8_g', i8)) AS i8,
	count(*) FILTER (WHERE bloom_guard_contains('gt_o_g', o)) AS o,
	count(*) FILTER (WHERE bloom_guard_contains('gt_t_g', t)) AS t,
	count(*) FILTER (WHERE bloom_guard_contains('gt_v_g', v)) AS v,
	count(*) FILTER (WHERE bloom_guard_contains('gt_c_g', c)) AS c,
	count(*) FILTER (WHERE bloom_guard_contains('gt_nm_g', nm)) AS nm,
	count(*) FILTER (WHERE bloom_guard_contains('gt_b_g', b)) AS b,
	count(*) FILTER (WHERE bloom_guard_contains('gt_u_g', u)) AS u,
	count(*) FILTER (WHERE bloom_guard_contains('gt_f4_g', f4)) AS f4,
	count(*) FILTER (WHERE bloom_guard_contains('gt_f8_g', f8)) AS f8,
	count(*) FILTER (WHERE bloom_guard_contains('gt_nu_g', nu)) AS nu,
	count(*) FILTER (WHERE bloom_guard_contains('gt_d_g', d)) AS d,
	count(*) FILTER (WHERE bloom_guard_contains('gt_ts_g', ts)) AS ts,
	count(*) FILTER (WHERE bloom_guard_contains('gt_tz_g', tz)) AS tz
FROM gt;

-- absent keys mostly answer false (target 1%)
SELECT count(*) FILTER (WHERE bloom_guard_contains('gt_i4_g', i)) < 100 AS i4_few,
	count(*) FILTER (WHERE bloom_guard_contains('gt_t_g', 'nokey' || i)) < 100 AS t_few
FROM generate_series(100001, 110000) i;

-- keys of other types compare as "=" does
SELECT bloom_guard_contains('gt_i8_g', 5000000000::int8) AS int8,
	bloom_guard_contains('gt_i4_g', 5::int2) AS int2_for_int4,
	bloom_guard_contains('gt_i4_g', 5::int8) AS int8_for_int4,
	bloom_guard_contains('gt_i4_g', '5') AS literal,
	bloom_guard_contains('gt_f8_g', 0.625::float4) AS float4_for_float8,
	bloom_guard_contains('gt_c_g', 'c5') AS char_literal,
	bloom_guard_contains('gt_c_g', 'c5   '::char(8)) AS char_blanks,
	bloom_guard_contains('gt_v_g', 'v5'::text) AS text_for_varchar,
	bloom_guard_contains('gt_nu_g', 0.50::numeric) AS numeric_scale,
	bloom_guard_contains('gt_d_g', '2024-01-06') AS date_literal;
SELECT bloom_guard_contains('gt_i4_g', NULL::int4) AS null_key,
	bloom_guard_contains(NULL, 5) AS null_guard;

-- the errors
SELECT bloom_guard_contains('gt_i4_g', 5.5::numeric);
SELECT bloom_guard_contains('gt_i4_g', 'x');
SELECT bloom_guard_contains('gt_t_g', 'key5'::text COLLATE "C");
SELECT bloom_guard_contains('gt', 5);
SELECT bloom_guard_contains('gt_pkey', 5);
SELECT bloom_guard_contains(0, 5);
CREATE INDEX ON gt USING bloomguard (i4, i8);
CREATE UNIQUE INDEX ON gt USING bloomguard (i4);
CREATE INDEX ON gt USING bloomguard (i4) WITH (fpr = 0);
CREATE INDEX ON gt USING bloomguard (i4) WITH (fpr = 0.9);
CREATE INDEX ON gt USING bloomguard (i4) WITH (capacity = -1);
CREATE INDEX ON gt USING bloomguard (i4) WITH (layout = 'classic');
CREATE INDEX ON gt USING bloomguard ((t::jsonb));
CREATE INDEX ON gt USING bloomguard (i4) WITH (capacity = 2000000000, fpr = 0.000000000001);
CREATE COLLATION bf_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE INDEX ON gt USING bloomguard ((t COLLATE bf_ci));
CREATE TABLE colt (t text COLLATE bf_ci);
CREATE INDEX ON colt USING bloomguard (t COLLATE "C");
CREATE INDEX colt_lower_g ON colt USING bloomguard ((lower(t) COLLATE "C"));
DROP TABLE colt;
DROP COLLATION bf_ci;
-- the planner never scans a guard
EXPLAIN (COSTS OFF) SELECT id FROM gt WHERE i4 = 5;

-- writes are followed: insert, update of the key, COPY; TRUNCATE empties
INSERT INTO gt (id, i4, t) VALUES (5001, 5001, 'inserted');
UPDATE gt SET t = 'updated' WHERE id = 1;
COPY gt (id, i4, t) FROM stdin;
5002	5002	copied
\.
SELECT bloom_guard_contains('gt_t_g', 'inserted') AS inserted,
	bloom_guard_contains('gt_t_g', 'updated') AS updated,
	bloom_guard_contains('gt_t_g', 'copied') AS copied,
	bloom_guard_contains('gt_i4_g', 5002) AS copied_i4;

-- growth: a guard sized for 1000 keys grows by layers
CREATE TABLE grow (k int8);
CREATE INDEX grow_g ON grow USING bloomguard (k) WITH (capacity = 1000, fpr = 0.01);
SELECT layers, capacity, added, target_fpr FROM bloom_guard_info('grow_g');
INSERT INTO grow SELECT i FROM generate_series(1, 50000) i;
SELECT layers > 1 AS grew, added BETWEEN 49000 AND 50000 AS added,
	estimated_fpr < 0.01 AS under_target
FROM bloom_guard_info('grow_g');
SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('grow_g', k)) AS false_negatives FROM grow;
SELECT count(*) FILTER (WHERE bloom_guard_contains('grow_g', i)) < 100 AS few_false_positives
FROM generate_series(100001, 110000) i;
-- the filter as a value answers the same
SELECT bloom_info(bloom_guard_filter('grow_g'))->>'family' AS family,
	(SELECT count(*) FROM grow WHERE NOT bloom_contains(f, k)) AS false_negatives
FROM (SELECT bloom_guard_filter('grow_g') f) s;
REINDEX INDEX grow_g;
SELECT layers > 1 AS layers, added BETWEEN 49000 AND 50000 AS added FROM bloom_guard_info('grow_g');
TRUNCATE grow;
SELECT layers, added FROM bloom_guard_info('grow_g');
SELECT bloom_guard_contains('grow_g', 1::int8) AS after_truncate;

-- renames follow (the guard is named by regclass); ALTER COLUMN TYPE rebuilds
CREATE SCHEMA s1;
CREATE TABLE s1.t (k text);
INSERT INTO s1.t VALUES ('a'), ('b');
CREATE INDEX t_k_g ON s1.t USING bloomguard (k);
ALTER SCHEMA s1 RENAME TO s2;
ALTER TABLE s2.t RENAME TO t2;
ALTER INDEX s2.t_k_g RENAME TO t2_k_g;
SELECT bloom_guard_contains('s2.t2_k_g', 'a') AS a, bloom_guard_contains('s2.t2_k_g', 'zzz') AS zzz;
ALTER TABLE s2.t2 ALTER COLUMN k TYPE int8 USING length(k) * 10;
SELECT bloom_guard_contains('s2.t2_k_g', 10) AS ten, bloom_guard_contains('s2.t2_k_g', 11) AS eleven;

-- an expression guard; no partial guard (its "no" would cover only some rows)
CREATE TABLE e (email text, active bool);
INSERT INTO e VALUES ('Alice@Example.com', true), ('bob@example.com', false);
CREATE INDEX e_lower_g ON e USING bloomguard (lower(email));
CREATE INDEX e_active_g ON e USING bloomguard (email) WHERE active;
SELECT bloom_guard_contains('e_lower_g', 'alice@example.com') AS lower_alice,
	bloom_guard_contains('e_lower_g', 'Alice@Example.com') AS mixed_case;

-- a guard that is not valid answers "maybe"; its filter cannot be had
CREATE TABLE inv (k int) PARTITION BY RANGE (k);
CREATE TABLE inv1 PARTITION OF inv FOR VALUES FROM (0) TO (100);
INSERT INTO inv VALUES (5);
CREATE INDEX inv_g ON ONLY inv USING bloomguard (k);
SELECT bloom_guard_contains('inv_g', 5) AS not_valid, bloom_guard_contains('inv_g', 6) AS not_valid_absent;
CREATE INDEX inv1_g ON inv1 USING bloomguard (k);
ALTER INDEX inv_g ATTACH PARTITION inv1_g;
SELECT bloom_guard_contains('inv_g', 5) AS valid, bloom_guard_contains('inv_g', 6) AS valid_absent;
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'inv1_g'::regclass;
SELECT bloom_guard_contains('inv1_g', 6) AS leaf_not_valid;
SELECT bloom_guard_filter('inv1_g');
DROP TABLE inv;

-- a partitioned guard answers for its partitions
CREATE TABLE p (k int, part int) PARTITION BY LIST (part);
CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1);
CREATE TABLE p2 PARTITION OF p FOR VALUES IN (2);
CREATE INDEX p_k_g ON p USING bloomguard (k);
INSERT INTO p SELECT i, 1 + i % 2 FROM generate_series(1, 1000) i;
CREATE TABLE p3 (k int, part int);
INSERT INTO p3 VALUES (7777, 3);
ALTER TABLE p ATTACH PARTITION p3 FOR VALUES IN (3);
SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('p_k_g', k)) AS false_negatives,
	bloom_guard_contains('p_k_g', 7777) AS attached, bloom_guard_contains('p_k_g', 99999) AS absent
FROM p;
SELECT bloom_guard_filter('p_k_g');
SELECT indexrelid::regclass, indrelid::regclass FROM pg_index
WHERE indrelid IN ('p1'::regclass, 'p2'::regclass, 'p3'::regclass) ORDER BY 1;

-- who may check: SELECT on the column, no row-level security
CREATE ROLE bf_guard_reader;
CREATE TABLE sec (k int, secret int);
INSERT INTO sec VALUES (1, 1);
CREATE INDEX sec_k_g ON sec USING bloomguard (k);
CREATE INDEX sec_secret_g ON sec USING bloomguard (secret);
GRANT SELECT (k) ON sec TO bf_guard_reader;
SET ROLE bf_guard_reader;
SELECT bloom_guard_contains('sec_k_g', 1) AS granted_column;
SELECT bloom_guard_contains('sec_secret_g', 1);
SELECT bloom_guard_filter('sec_secret_g');
RESET ROLE;
GRANT SELECT ON sec TO bf_guard_reader;
ALTER TABLE sec ENABLE ROW LEVEL SECURITY;
CREATE POLICY none ON sec USING (false);
SET ROLE bf_guard_reader;
SELECT bloom_guard_contains('sec_k_g', 1);
RESET ROLE;
SELECT bloom_guard_contains('sec_k_g', 1) AS owner_bypasses;

-- unlogged tables: the guard has an init fork
CREATE UNLOGGED TABLE ul (k int);
CREATE INDEX ul_g ON ul USING bloomguard (k);
INSERT INTO ul VALUES (42);
SELECT bloom_guard_contains('ul_g', 42) AS unlogged;
SELECT pg_relation_size('ul_g', 'init') > 0 AS has_init_fork;

-- deletes: VACUUM builds the guard again once it holds twice as many keys
-- as the table has rows; a VACUUM with fewer deleted keys leaves it
CREATE TABLE churn (id int, k text) WITH (autovacuum_enabled = off);
INSERT INTO churn SELECT g, 'key' || g FROM generate_series(1, 20000) g;
CREATE INDEX churn_g ON churn USING bloomguard (k);
DELETE FROM churn WHERE id <= 8000;
VACUUM churn;
SELECT layers, capacity, added FROM bloom_guard_info('churn_g');
DELETE FROM churn WHERE id <= 15000;
INSERT INTO churn SELECT g, 'key' || g FROM generate_series(20001, 22000) g;
VACUUM churn;
SELECT layers, capacity, added FROM bloom_guard_info('churn_g');
SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('churn_g', k)) AS false_negatives,
       count(*) AS keys FROM churn;
SELECT count(*) FILTER (WHERE bloom_guard_contains('churn_g', 'key' || g)) < 300 AS deleted_forgotten
  FROM generate_series(1, 15000) g;
-- then it grows from there, and the gates use it
INSERT INTO churn SELECT g, 'key' || g FROM generate_series(22001, 40000) g;
SELECT layers, count(*) FILTER (WHERE NOT bloom_guard_contains('churn_g', k)) AS false_negatives
  FROM churn, bloom_guard_info('churn_g') GROUP BY layers;
SELECT * FROM churn WHERE k = 'key1';
SELECT * FROM churn WHERE k = 'key39999';

-- ALTER COLUMN TYPE between text and varchar keeps the index (one operator
-- class): its keys, trailing blanks and all, are still found
CREATE TABLE av (id int, k varchar);
INSERT INTO av SELECT g, 'k' || g || ' ' FROM generate_series(1, 1000) g;
CREATE INDEX av_g ON av USING bloomguard (k);
SELECT pg_relation_filenode('av_g') AS before_alter \gset
ALTER TABLE av ALTER COLUMN k TYPE text;
SELECT pg_relation_filenode('av_g') = :before_alter AS same_file,
       bloom_guard_contains('av_g', 'k5 '::text) AS k5,
       count(*) FILTER (WHERE NOT bloom_guard_contains('av_g', k)) AS false_negatives
  FROM av;
ALTER TABLE av ALTER COLUMN k TYPE varchar;
INSERT INTO av VALUES (1001, 'k1001 ');
SELECT bloom_guard_contains('av_g', 'k5 '::varchar) AS k5,
       count(*) FILTER (WHERE NOT bloom_guard_contains('av_g', k)) AS false_negatives
  FROM av;
DROP TABLE av;

-- bloom_guard_changes: the whole filter (since NULL), then only what
-- changed: the outer and each layer's header, and each changed page's bits
CREATE TABLE chg (k text);
INSERT INTO chg SELECT 'k' || g FROM generate_series(1, 5000) g;
CREATE INDEX chg_g ON chg USING bloomguard (k);
SELECT version AS v0 FROM bloom_guard_changes('chg_g', NULL) \gset
SELECT whole, byte_offset, length(bytes) AS length,
       bytes = bloom_guard_filter('chg_g')::bytea AS the_filter
  FROM bloom_guard_changes('chg_g', NULL);
SELECT whole, byte_offset, length(bytes) AS length FROM bloom_guard_changes('chg_g', :'v0');
INSERT INTO chg VALUES ('new');
SELECT whole, byte_offset, length(bytes) AS length, version <> :'v0' AS new_version
  FROM bloom_guard_changes('chg_g', :'v0');
-- a rewrite (another file) or another system's version: the whole filter
REINDEX INDEX chg_g;
SELECT whole, count(*) FROM bloom_guard_changes('chg_g', :'v0') GROUP BY whole;
SELECT whole FROM bloom_guard_changes('chg_g', '1/1/1/1/1/0/1/p');
-- no guard: no rows; a version that is not one; a partitioned guard; access
SELECT count(*) FROM bloom_guard_changes(NULL, NULL);
SELECT * FROM bloom_guard_changes('chg_g', 'yesterday');
SELECT * FROM bloom_guard_changes('chg_g', '1/1/1/1/1/0/1/p trailing');
SELECT * FROM bloom_guard_changes('chg_g', '1/1/1/0/1');
SELECT * FROM bloom_guard_changes('chg_g', '1/1/1/0/1/x');
SELECT * FROM bloom_guard_changes('chg_g', '1/+1/1/1/1/0/1/p');
SELECT * FROM bloom_guard_changes('chg_g', '1/01/1/1/1/0/1/p');
SELECT * FROM bloom_guard_changes('chg_g', '1/4294967296/1/1/1/0/1/p');
SELECT * FROM bloom_guard_changes('chg_g', '1/1/1/1/1/0/1a/p');
SELECT * FROM bloom_guard_changes('chg_g', '1/1/1/1/1/123456789/1/p');
SELECT * FROM bloom_guard_changes('p_k_g', NULL);
SET ROLE bf_guard_reader;
SELECT * FROM bloom_guard_changes('chg_g', NULL);
RESET ROLE;
-- a version taken when the last WAL record filled its page (the next record
-- would start past the next page's header, which no flush reaches): WAL is
-- padded with messages up to a page's end, then a version is taken
CREATE FUNCTION versions_at_page_end(guard regclass) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	fixed int;				-- a message record's size less its content
	room int;
	pos pg_lsn;
	taken int := 0;
BEGIN
	-- the least of three (the first may include other WAL: the plan's)
	FOR i IN 1..3 LOOP
		pos := pg_current_wal_insert_lsn();
		PERFORM pg_logical_emit_message(false, 'bf', repeat('x', 304));
		fixed := least(fixed, ((pg_current_wal_insert_lsn() - pos) - 304)::int);
	END LOOP;
	FOR i IN 1..40 LOOP
		pos := pg_current_wal_insert_lsn();
		room := 8192 - ((pos - '0/0') % 8192)::int;
		IF room < fixed + 256 THEN
			PERFORM pg_logical_emit_message(false, 'bf', repeat('x', 512));
			CONTINUE;
		END IF;
		PERFORM pg_logical_emit_message(false, 'bf', repeat('x', room - fixed));
		CONTINUE WHEN ((pg_current_wal_insert_lsn() - '0/0') % 8192)::int
			NOT IN (24, 40);
		PERFORM count(*) FROM bloom_guard_changes(guard, NULL);
		taken := taken + 1;
	END LOOP;
	RETURN taken;
END
$$;
SELECT versions_at_page_end('chg_g') >= 10 AS taken_at_page_ends;
DROP FUNCTION versions_at_page_end(regclass);
DROP TABLE chg;

-- psql and the catalogs see an index like any other
\d grow
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'e' ORDER BY 1;

DROP TABLE gt, grow, s2.t2, e, p, sec, ul, churn;
DROP SCHEMA s2;
DROP ROLE bf_guard_reader;
