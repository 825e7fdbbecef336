--
-- Keys as a table hands them over: short and 4-byte headers, compressed in
-- line, out of line (TOAST pointers, compressed or not).  Every path that
-- adds or checks a key reads its value, never its pointer: the filters are
-- byte for byte the ones built from in-memory copies (key || ''), and every
-- key is found.
--
CREATE TABLE stored_keys (how text, k text, v varchar);
ALTER TABLE stored_keys ALTER k SET STORAGE EXTERNAL, ALTER v SET STORAGE EXTERNAL;
INSERT INTO stored_keys
SELECT 'out of line', repeat(md5(g::text), 100), repeat(md5(g::text), 100)
FROM generate_series(1, 40) g;
ALTER TABLE stored_keys ALTER k SET STORAGE EXTENDED, ALTER v SET STORAGE EXTENDED;
ALTER TABLE stored_keys ALTER k SET COMPRESSION pglz, ALTER v SET COMPRESSION pglz;
INSERT INTO stored_keys
SELECT 'out of line, pglz', string_agg(md5(g::text || i::text) || repeat('q', 32), ''),
       string_agg(md5(g::text || i::text) || repeat('q', 32), '')
FROM generate_series(41, 60) g, generate_series(1, 400) i GROUP BY g;
INSERT INTO stored_keys
SELECT 'in line, pglz', repeat('x', 3000) || g, repeat('x', 3000) || g
FROM generate_series(61, 70) g;
INSERT INTO stored_keys
SELECT CASE WHEN g < 120 THEN 'in line, 1-byte header' ELSE 'in line, 4-byte header' END,
       'key ' || g || repeat('z', g), 'key ' || g || repeat('z', g)
FROM generate_series(1, 200) g WHERE g > 70;
-- where each key is stored
SELECT how, count(*),
       bool_and(pg_column_size(k) = octet_length(k) + 1) AS one_byte_header,
       bool_and(pg_column_size(k) < octet_length(k)) AS compressed
FROM stored_keys GROUP BY how ORDER BY how;

CREATE TABLE stored_ref AS
SELECT bloom_agg(k || '', 1000, 0.01) AS small,
       bloom_agg(k || '', 1000000, 0.01) AS large,
       bloom_agg(k || '') AS auto,
       cuckoo_agg(k || '', 1000, 0.01) AS cuckoo
FROM stored_keys;

-- built from the stored keys: the same bytes
SELECT (SELECT bloom_agg(k, 1000, 0.01) FROM stored_keys) = small AS agg,
       (SELECT bloom_agg(k, 1000000, 0.01) FROM stored_keys) = large AS agg_batched,
       (SELECT bloom_agg(k) FROM stored_keys) = auto AS agg_self_sizing,
       (SELECT bloom_agg(k, 1000, 0.01 ORDER BY k) FROM stored_keys) = small AS agg_ordered
FROM stored_ref;
SELECT bloom_add(bloom_add(bloom_empty(1000), s.k), s.v) = bloom_add(bloom_add(bloom_empty(1000), s.k || ''), s.v || '') AS bloom_add,
       count(*)
FROM stored_keys s GROUP BY 1;

-- checked with the stored keys: every key found, as text and as varchar
SELECT s.how,
       count(*) FILTER (WHERE NOT r.small @> s.k) AS small_text,
       count(*) FILTER (WHERE NOT r.small @> s.v) AS small_varchar,
       count(*) FILTER (WHERE NOT s.k <@ r.large) AS large_text,
       count(*) FILTER (WHERE NOT bloom_contains(r.auto, s.v)) AS auto_varchar,
       count(*) FILTER (WHERE NOT r.cuckoo @> s.k) AS cuckoo_text
FROM stored_keys s, stored_ref r GROUP BY s.how ORDER BY s.how;
DROP TABLE stored_keys, stored_ref;
