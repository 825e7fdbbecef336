--
-- send: binary output in memory of its own.  array_send (and logical
-- replication in binary mode) free what the element type's send function
-- returns, so send (and the cast to bytea) must return a copy, never a
-- pointer into the array or row: inline, short-header and TOASTed filters
-- alike.
--

-- the statement that crashed the server when send returned its argument
SELECT octet_length(array_send(ARRAY[bloom_add(bloom_empty(1000), 'x'::text)])) AS bytes;

-- inline (4-byte header), short (1-byte header in the row) and TOASTed (about
-- 1 MB, default storage) filters
CREATE TABLE send_f (id int PRIMARY KEY, bf bloomfilter);
INSERT INTO send_f VALUES
	(1, bloom_add(bloom_empty(1000), 'x'::text)),
	(2, bloom_empty(1, 0.5, 'classic') || 7),
	(3, (SELECT bloom_agg(i, 800000, 0.01) FROM generate_series(1, 1000) i));
SELECT pg_relation_size(reltoastrelid) > 900000 AS toasted
FROM pg_class WHERE oid = 'send_f'::regclass;
SELECT id, pg_column_size(bf) AS stored, octet_length(bf::bytea) AS bytes
FROM send_f ORDER BY id;

-- the bytea cast: the portable format with a normal 4-byte header, the same
-- bytes as send; the cast back gives the value again
SELECT id, bf::bytea = bloomfilter_send(bf) AS cast_is_send,
       bf::bytea::bloomfilter = bf AS bytea_rt,
       substr(bf::bytea, 1, 4) AS magic,
       octet_length(bf::bytea) = (bloom_info(bf)->>'bytes')::int AS full_length
FROM send_f ORDER BY id;

-- array_send of a one-element array: 20 bytes of array header, the element's
-- length, then exactly the bytes of the bytea cast
SELECT id, octet_length(array_send(ARRAY[bf])) - 24 = octet_length(bf::bytea) AS length_ok,
       substr(array_send(ARRAY[bf]), 25) = bf::bytea AS element_is_bytea
FROM send_f ORDER BY id;

-- bloomfilter[] stored in a table (the 1 MB ones TOASTed), with NULL elements
-- and two dimensions
CREATE TABLE send_a (id int PRIMARY KEY, bfs bloomfilter[]);
INSERT INTO send_a SELECT id, ARRAY[bf] FROM send_f;
INSERT INTO send_a SELECT 4, array_agg(bf ORDER BY id) || NULL::bloomfilter FROM send_f;
INSERT INTO send_a SELECT 5, ARRAY[[bf, NULL], [bf, bf]] FROM send_f WHERE id = 1;
INSERT INTO send_a VALUES (6, '{}'), (7, NULL);
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted
FROM pg_class WHERE oid = 'send_a'::regclass;
SELECT id, array_dims(bfs) AS dims, octet_length(array_send(bfs)) AS bytes
FROM send_a ORDER BY id;
SELECT id, substr(array_send(bfs), 25) = bfs[1]::bytea AS element_is_bytea
FROM send_a WHERE id <= 3 ORDER BY id;

-- record_send of rows holding filters: the same bytes after the column header
SELECT id, octet_length(record_send(ROW(id, bf))) - 24 = octet_length(bf::bytea) AS length_ok,
       substr(record_send(ROW(id, bf)), 25) = bf::bytea AS column_is_bytea
FROM send_f ORDER BY id;
SELECT id, octet_length(record_send(ROW(id, bfs))) > 0 AS record_ok
FROM send_a WHERE bfs IS NOT NULL ORDER BY id;

-- binary COPY of bloomfilter[] (array_send out, array_recv in) and of
-- bloomfilter: byte-identical afterwards
\copy send_a TO 'results/bloomfilter_send_a.bin' WITH (FORMAT binary)
CREATE TABLE send_a2 (LIKE send_a);
\copy send_a2 FROM 'results/bloomfilter_send_a.bin' WITH (FORMAT binary)
SELECT a.id, array_dims(b.bfs) AS dims,
       array_send(a.bfs) = array_send(b.bfs) AS same_bytes,
       (SELECT bool_and(x::bytea IS NOT DISTINCT FROM y::bytea)
        FROM unnest(a.bfs, b.bfs) AS u(x, y)) AS same_elements
FROM send_a a JOIN send_a2 b USING (id) ORDER BY a.id;
SELECT b.bfs[2][2] @> 'x'::text AS found, b.bfs[1][2] IS NULL AS null_kept
FROM send_a2 b WHERE id = 5;

\copy send_f TO 'results/bloomfilter_send_f.bin' WITH (FORMAT binary)
CREATE TABLE send_f2 (LIKE send_f);
\copy send_f2 FROM 'results/bloomfilter_send_f.bin' WITH (FORMAT binary)
SELECT id, a.bf::bytea = b.bf::bytea AS same_bytes
FROM send_f a JOIN send_f2 b USING (id) ORDER BY id;

DROP TABLE send_f, send_f2, send_a, send_a2;
