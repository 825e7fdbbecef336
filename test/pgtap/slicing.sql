-- slicing.sql: checks of large stored filters read only the slices they need
-- (header, one block or k bytes) on their first uses at a call site, then
-- switch to a cached full copy.  Every path must answer as the plain path.
BEGIN;
SELECT plan(12);

-- filters above the 64 kB slicing threshold, stored out of line
CREATE TABLE sl (layout text PRIMARY KEY, bf bloomfilter);
INSERT INTO sl
SELECT layout, bloom_add_all(bloom_empty(60000, 0.01, layout),
                             (SELECT array_agg('key' || i) FROM generate_series(1, 60000) i))
FROM (VALUES ('blocked'), ('classic')) v(layout);

SELECT ok(pg_column_size(bf) > 65536 AND
          octet_length(bf::bytea) = pg_column_size(bf),
          layout || ': stored uncompressed and out of line')
FROM sl ORDER BY layout;

-- the first and last blocks (blocked) / bytes (classic) hold bits, so some
-- checked keys read them
SELECT ok(get_byte(bf::bytea, 64) | get_byte(bf::bytea, 65) | get_byte(bf::bytea, 66) | get_byte(bf::bytea, 67) > 0
          AND get_byte(bf::bytea, octet_length(bf::bytea) - 1) | get_byte(bf::bytea, octet_length(bf::bytea) - 2)
              | get_byte(bf::bytea, octet_length(bf::bytea) - 3) | get_byte(bf::bytea, octet_length(bf::bytea) - 4) > 0,
          layout || ': first and last bytes of the bit array are set')
FROM sl ORDER BY layout;

-- one check per statement: a fresh call site each time, so every check is
-- answered by slicing; compare with the in-memory value (whole, no slicing)
CREATE FUNCTION pg_temp.sliced_disagreements(lay text, nkeys int, absent boolean)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	mem bloomfilter;
	k text;
	sliced boolean;
	bad bigint := 0;
BEGIN
	SELECT bf::bytea::bloomfilter INTO mem FROM sl WHERE layout = lay;
	FOR i IN 1 .. nkeys LOOP
		k := CASE WHEN absent THEN 'absent' ELSE 'key' END || (i * 7);
		EXECUTE format('SELECT bf @> %L::text FROM sl WHERE layout = %L', k, lay) INTO sliced;
		IF sliced IS DISTINCT FROM (mem @> k) THEN
			bad := bad + 1;
		END IF;
	END LOOP;
	RETURN bad;
END $$;

SELECT is(pg_temp.sliced_disagreements(layout, 3000, false), 0::bigint,
          layout || ': 3000 present keys, each checked by slicing, all found')
FROM sl ORDER BY layout;
SELECT is(pg_temp.sliced_disagreements(layout, 3000, true), 0::bigint,
          layout || ': 3000 absent keys, sliced answers equal whole-value answers')
FROM sl ORDER BY layout;

-- many checks at one call site: slicing first, then the cached copy
SELECT is(count(*) FILTER (WHERE NOT sl.bf @> ('key' || i)), 0::bigint,
          layout || ': 60000 present keys at one call site, no false negative')
FROM sl, generate_series(1, 60000) i GROUP BY layout ORDER BY layout;

SELECT is(count(*) FILTER (WHERE sl.bf @> ('absent' || i)),
          count(*) FILTER (WHERE (sl.bf::bytea::bloomfilter) @> ('absent' || i)),
          layout || ': absent keys at one call site answer as the whole value')
FROM sl, generate_series(1, 20000) i GROUP BY layout ORDER BY layout;

SELECT * FROM finish();
ROLLBACK;
