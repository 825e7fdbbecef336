--
-- io: text form, bytea casts, binary send/recv, and hostile input
--

-- the text form: a readable header and the bits in base64
SELECT bloom_empty(10, 0.1);
SELECT bloom_empty(10, 0.1, 'classic') || 'x'::text;
SELECT (bloom_empty(10, 0.1) || 1 || 2 || 3)::text;

-- text, bytea and binary round trips give an identical value
CREATE TABLE io (id int, bf bloomfilter);
INSERT INTO io VALUES
	(1, bloom_empty(10, 0.1)),
	(2, bloom_empty(20, 0.05, 'classic') || 'a'::text || 'b'::text),
	(3, (SELECT bloom_agg(i, 1000, 0.001) FROM generate_series(1, 1000) i)),
	(4, bloom_empty(3, 0.3333333333333333) || 7);
SELECT id, bf::text::bloomfilter = bf AS text_rt,
       bf::bytea::bloomfilter = bf AS bytea_rt,
       bloomfilter_send(bf) = bf::bytea AS send_is_bytea
FROM io ORDER BY id;

-- binary COPY goes through send/recv (psql's \copy: the file is the client's)
\copy io TO 'results/bloomfilter_io.bin' WITH (FORMAT binary)
CREATE TABLE io2 (LIKE io);
\copy io2 FROM 'results/bloomfilter_io.bin' WITH (FORMAT binary)
SELECT count(*) AS equal_after_binary_copy FROM io JOIN io2 USING (id) WHERE io.bf = io2.bf;

-- the portable byte format: magic, version, family, layout, key kind, k ...
SELECT substr(bf::bytea, 1, 64) AS header FROM io WHERE id = 2;
SELECT octet_length(bf::bytea) AS bytes, bloom_info(bf)->'bytes' AS info_bytes FROM io WHERE id = 3;

-- malformed text
SELECT ''::bloomfilter;
SELECT 'hello'::bloomfilter;
SELECT 'version=3 layout=blocked hashes=4 key_kind=none bits=512 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=linear hashes=4 key_kind=none bits=512 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=0 key_kind=none bits=512 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=json bits=512 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=500 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=512 capacity=0 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=512 capacity=10 target_fpr=1.5 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=512 capacity=010 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=512 capacity=10 target_fpr=0.10 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=512 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=99999999999999999999999 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
-- a header describing a value over 1 GB: too large, whatever the data (54000)
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=8589934592 capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
SELECT 'version=1 family=cuckoo fingerprint_bits=32 key_kind=none buckets=4294967296 capacity=10 target_fpr=0.01 count=0 data=AAAA'::cuckoofilter;
SELECT 'version=1 layout=blocked hashes=4 key_kind=none bits=512  capacity=10 target_fpr=0.1 added=0 data=AAAA'::bloomfilter;
-- a truncated value
SELECT left(bloom_empty(10, 0.1)::text, 120)::bloomfilter;
-- a damaged payload
SELECT replace(bloom_empty(10, 0.1)::text, 'data=AAAA', 'data=AA#A')::bloomfilter;
-- trailing garbage
SELECT (bloom_empty(10, 0.1)::text || ' extra=1')::bloomfilter;

-- hostile binary, through the bytea cast
CREATE TABLE good AS SELECT (bloom_empty(10, 0.1) || 'x'::text)::bytea AS b;
SELECT ''::bytea::bloomfilter;
SELECT substr(b, 1, 63)::bloomfilter FROM good;
SELECT substr(b, 1, 100)::bloomfilter FROM good;
SELECT (b || '\x00'::bytea)::bloomfilter FROM good;
SELECT overlay(b PLACING 'XLMF'::bytea FROM 1 FOR 4)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x03'::bytea FROM 5 FOR 1)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x02'::bytea FROM 6 FOR 1)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x07'::bytea FROM 7 FOR 1)::bloomfilter FROM good;
SELECT overlay(b PLACING '\xff'::bytea FROM 8 FOR 1)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x0000'::bytea FROM 9 FOR 2)::bloomfilter FROM good;
SELECT overlay(b PLACING '\xffff'::bytea FROM 9 FOR 2)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x0100'::bytea FROM 11 FOR 2)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x02000000'::bytea FROM 13 FOR 4)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x0004000000000000'::bytea FROM 17 FOR 8)::bloomfilter FROM good;
SELECT overlay(b PLACING '\xffffffffffffffff'::bytea FROM 17 FOR 8)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x0000000000000000'::bytea FROM 25 FOR 8)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x000000000000f87f'::bytea FROM 33 FOR 8)::bloomfilter FROM good;
SELECT overlay(b PLACING '\x01'::bytea FROM 60 FOR 1)::bloomfilter FROM good;

-- hostile binary, through recv: a bytea column's binary COPY is its raw bytes,
-- so crafted bytes copied out as bytea come back in as a bloomfilter
\copy (SELECT overlay(b PLACING '\x0000'::bytea FROM 9 FOR 2) FROM good) TO 'results/bloomfilter_bad.bin' WITH (FORMAT binary)
\copy io2 (bf) FROM 'results/bloomfilter_bad.bin' WITH (FORMAT binary)
\copy (SELECT substr(b, 1, 70) FROM good) TO 'results/bloomfilter_bad.bin' WITH (FORMAT binary)
\copy io2 (bf) FROM 'results/bloomfilter_bad.bin' WITH (FORMAT binary)
\copy (SELECT b FROM good) TO 'results/bloomfilter_bad.bin' WITH (FORMAT binary)
\copy io2 (bf) FROM 'results/bloomfilter_bad.bin' WITH (FORMAT binary)
SELECT count(*) AS rows_after_copies FROM io2;

DROP TABLE io, io2, good;

-- Format versions.  Version 1 is what releases 1.0 and 1.1 wrote; 1.0 hashed
-- a varchar key as it is, trailing blanks included.  Such a value, made here
-- from a bytea key of the same bytes ('ab ') with version byte 1 and key
-- kind text: its key is found (a check also tests the key as it is), it
-- keeps version 1 through text and binary I/O, and a change writes 2.
CREATE TABLE v1 AS
SELECT overlay(overlay((bloom_empty(10, 0.01) || '\x616220'::bytea)::bytea
	   PLACING '\x01'::bytea FROM 5 FOR 1) PLACING '\x02'::bytea FROM 8 FOR 1)::bloomfilter AS bf;
SELECT bloom_info(bf) ->> 'version' AS version, bf @> 'ab '::varchar AS varchar_key,
	   bf @> 'ab '::text AS text_key, bf @> 'ab'::text AS other
FROM v1;
SELECT split_part(bf::text, ' ', 1) AS text_form, get_byte(bf::bytea, 4) AS byte_4,
	   bf::text::bloomfilter = bf AS text_round_trip, bf::bytea::bloomfilter = bf AS bytea_round_trip
FROM v1;
SELECT bloom_info(bf || 'x'::text) ->> 'version' AS after_add,
	   bloom_info(bf | bloom_empty(10, 0.01)) ->> 'version' AS after_union,
	   bloom_info(bf & (bf || 'x'::text)) ->> 'version' AS after_intersection,
	   (bf || 'x'::text) @> 'ab '::varchar AS still_found
FROM v1;
-- the same for the cuckoofilter type and a scalable filter's outer header
SELECT (cuckoo_empty(10) || 'a'::text)::text ~ '^version=2 ' AS cuckoo_writes_2,
	   bloom_info(bloom_empty_scalable(10, 0.01) || 'a'::text) ->> 'version' AS scalable_writes;
SELECT split_part(c::text, ' ', 1) AS cuckoo_v1, split_part((c || 'a'::text)::text, ' ', 1) AS after_add
FROM (SELECT 'version=1 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=0 data=AAAAAAAAAAAAAAAAAAAA'::cuckoofilter AS c) s;
-- a version this build does not know is refused
SELECT overlay((bloom_empty(10, 0.01))::bytea PLACING '\x03'::bytea FROM 5 FOR 1)::bloomfilter;
SELECT 'version=3 family=cuckoo fingerprint_bits=10 key_kind=none buckets=3 capacity=10 target_fpr=0.01 count=0 data=AAAAAAAAAAAAAAAAAAAA'::cuckoofilter;
DROP TABLE v1;
