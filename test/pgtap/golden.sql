--
-- golden.sql — golden vectors: the byte format and the key hashing, pinned.
--
-- Fixed keys give fixed bits and fixed small filters give fixed bytes, so the
-- format (header, canonical key bytes, XXH3, block choice, bit positions) can
-- only change with a format version bump.  The values were computed by the
-- extension and derived independently by the reference reader
-- test/reader/bloomfilter_reader.py, whose --selftest pins the same keys with
-- their intermediate values (canonical bytes, XXH3-64 and XXH3-128 hashes,
-- block, bit offsets, probe order) and checks them against the rows of this
-- file.  Do not edit a value here to make a test pass: a difference means
-- stored filters would stop answering correctly.
--
-- Filters of capacity 100 at 1%: blocked m = 1024 bits (2 blocks), k = 7;
-- classic m = 960 bits, k = 7.  Bit j is bit j % 8 of payload byte j / 8.
--
BEGIN;
SELECT plan(121);

-- Positions of the set bits of a value's bit array (after the 64-byte header).
CREATE FUNCTION pg_temp.set_bits(b bytea) RETURNS int[]
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(array_agg(j ORDER BY j), '{}')
	FROM generate_series(0, (length(b) - 64) * 8 - 1) AS j
	WHERE get_bit(b, 64 * 8 + j) = 1
$$;

-- bloom_add(bloom_empty(100, 0.01, layout), 'lit'::typ)::bytea
CREATE FUNCTION pg_temp.one_key(layout text, typ text, lit text) RETURNS bytea
LANGUAGE plpgsql AS $$
DECLARE
	r bytea;
BEGIN
	EXECUTE format('SELECT bloom_add(bloom_empty(100, 0.01, %L), %L::%s)::bytea',
				   layout, lit, typ) INTO r;
	RETURN r;
END
$$;

-- bloom_add_all(bloom_empty(100, 0.01, layout), keys::typ[])
CREATE FUNCTION pg_temp.some_keys(layout text, typ text, keys text[]) RETURNS bloomfilter
LANGUAGE plpgsql AS $$
DECLARE
	r bloomfilter;
BEGIN
	EXECUTE format('SELECT bloom_add_all(bloom_empty(100, 0.01, %L), %L::%s[])',
				   layout, keys, typ) INTO r;
	RETURN r;
END
$$;

-- 1. The header of an empty filter, byte for byte.
SELECT is(substring(bloom_empty(100, 0.01, 'blocked')::bytea FROM 1 FOR 64),
		  '\x424c4d46020101000700000001000000000400000000000064000000000000007b14ae47e17a843f'
		  '000000000000000000000000000000000000000000000000',
		  'header of bloom_empty(100, 0.01, ''blocked''): BLMF, version 2, family 1, layout 1, '
		  'key kind 0, k 7, flags 0, layers 1, m 1024, capacity 100, fpr 0.01, added 0, reserved 0');
SELECT is(substring(bloom_empty(100, 0.01, 'classic')::bytea FROM 1 FOR 64),
		  '\x424c4d46020102000700000001000000c00300000000000064000000000000007b14ae47e17a843f'
		  '000000000000000000000000000000000000000000000000',
		  'header of bloom_empty(100, 0.01, ''classic''): layout 2, m 960');

-- 2. One key, one filter: the set bits are the key's k positions.
CREATE TEMP TABLE golden_key (ord serial, layout text, typ text, lit text, set_bits int[]);
INSERT INTO golden_key (layout, typ, lit, set_bits) VALUES
	('blocked', 'text', 'alice', '{149,152,213,313,440,473}'),
	('classic', 'text', 'alice', '{12,17,196,391,584,594,772}'),
	('blocked', 'text', 'bob', '{226,243,317,335,390,464,485}'),
	('classic', 'text', 'bob', '{82,219,357,524,647,775,907}'),
	('blocked', 'text', '', '{13,192,207,280,310,382,510}'),
	('classic', 'text', '', '{114,139,169,203,240,279,319}'),
	('blocked', 'text', 'ключ 🔑', '{55,180,360,414,483,484,499}'),
	('classic', 'text', 'ключ 🔑', '{56,60,374,385,390,695,700}'),
	('blocked', 'int4', '42', '{574,587,683,716,734,736,820}'),
	('classic', 'int4', '42', '{18,103,204,459,539,631,901}'),
	('blocked', 'int2', '-1', '{28,167,237,302,366,374,484}'),
	('classic', 'int2', '-1', '{113,213,334,571,701,816,931}'),
	('blocked', 'int8', '9223372036854775807', '{537,607,775,790,792,861,956}'),
	('classic', 'int8', '9223372036854775807', '{2,163,228,374,593,748,828}'),
	('blocked', 'oid', '4294967295', '{571,614,697,815,847,923,960}'),
	('classic', 'oid', '4294967295', '{76,197,359,474,616,754,884}'),
	('blocked', 'bytea', '\x', '{13,192,207,280,310,382,510}'),
	('classic', 'bytea', '\x', '{114,139,169,203,240,279,319}'),
	('blocked', 'bytea', '\xdeadbeef', '{579,591,744,938,946,956,1000}'),
	('classic', 'bytea', '\xdeadbeef', '{186,202,219,238,260,286,317}'),
	('blocked', 'uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{122,240,363,378,415,424,491}'),
	('classic', 'uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{31,167,247,369,573,780,926}'),
	('blocked', 'boolean', 'true', '{512,540,615,715,791,846,856}'),
	('classic', 'boolean', 'true', '{235,310,393,492,752,830,920}'),
	('blocked', 'boolean', 'false', '{529,596,721,737,822,856,1022}'),
	('classic', 'boolean', 'false', '{112,122,349,589,603,833,837}'),
	('blocked', 'float8', '0', '{628,668,674,715,854,904,932}'),
	('classic', 'float8', '0', '{114,234,370,518,653,780,923}'),
	('blocked', 'float8', '1.5', '{61,74,155,158,249,371,425}'),
	('classic', 'float8', '1.5', '{5,172,327,344,484,642,802}'),
	('blocked', 'float8', 'NaN', '{38,90,118,256,363,422,490}'),
	('classic', 'float8', 'NaN', '{96,163,383,435,514,719,777}'),
	('blocked', 'float8', '-Infinity', '{627,714,807,855,857,882,993}'),
	('classic', 'float8', '-Infinity', '{18,373,415,469,839,872,921}'),
	('blocked', 'float4', '0.1', '{100,199,211,418,421,487}'),
	('classic', 'float4', '0.1', '{28,232,390,440,588,653,787}'),
	('blocked', 'numeric', '1.5', '{59,167,203,243,274,406,465}'),
	('classic', 'numeric', '1.5', '{247,278,562,584,878,894,937}'),
	('blocked', 'numeric', '-0.001', '{106,173,212,376,432,441,457}'),
	('classic', 'numeric', '-0.001', '{210,218,529,546,852,856,875}'),
	('blocked', 'numeric', 'NaN', '{80,140,195,324,331,351,383}'),
	('classic', 'numeric', 'NaN', '{67,261,459,647,662,836}'),
	('blocked', 'numeric', 'Infinity', '{130,244,258,262,290,320,387}'),
	('classic', 'numeric', 'Infinity', '{27,127,235,350,444,655,869}'),
	('blocked', 'numeric', '-12345678901234567890.0001', '{604,696,757,863,884,946,1012}'),
	('classic', 'numeric', '-12345678901234567890.0001', '{170,193,221,253,288,325,363}'),
	('blocked', 'date', '2000-01-01', '{628,668,674,715,854,904,932}'),
	('classic', 'date', '2000-01-01', '{114,234,370,518,653,780,923}'),
	('blocked', 'date', '0044-03-15 BC', '{64,224,226,254,270,435,458}'),
	('classic', 'date', '0044-03-15 BC', '{56,165,277,393,514,803,909}'),
	('blocked', 'date', 'infinity', '{102,110,113,186,237,396,444}'),
	('classic', 'date', 'infinity', '{295,332,377,438,793,833,885}'),
	('blocked', 'timestamp', '2000-01-01 00:00:00', '{628,668,674,715,854,904,932}'),
	('classic', 'timestamp', '2000-01-01 00:00:00', '{114,234,370,518,653,780,923}'),
	('blocked', 'timestamp', '2024-02-29 12:34:56.789012', '{611,704,758,761,807,810,981}'),
	('classic', 'timestamp', '2024-02-29 12:34:56.789012', '{157,195,245,625,654,699,752}'),
	('blocked', 'timestamp', '-infinity', '{512,515,606,860,883,953,983}'),
	('classic', 'timestamp', '-infinity', '{27,87,236,453,611,686,823}'),
	('blocked', 'timestamptz', '2024-02-29 12:34:56.789012+05:30', '{113,216,236,373,377,496,509}'),
	('classic', 'timestamptz', '2024-02-29 12:34:56.789012+05:30', '{84,130,385,416,474,714,751}');

SELECT is(pg_temp.set_bits(pg_temp.one_key(layout, typ, lit)), set_bits,
		  format('%s: bits of %L::%s', layout, lit, typ))
FROM golden_key ORDER BY ord;

-- 3. Small filters, byte for byte, and their text form.
CREATE TEMP TABLE golden_filter (ord serial, layout text, typ text, keys text[], bytes bytea, text_form text);
INSERT INTO golden_filter (layout, typ, keys, bytes, text_form) VALUES
	('blocked', 'text', ARRAY['alice','bob'],
		'\x424c4d46020101020700000001000000000400000000000064000000000000007b14ae47e17a843f020000000000000000000000000000000000000000000000'
		'00000000000000000000000000000000000020010000000000002000040008000000000000000022008000000000000040000000000000010000010220000000'
		'00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
		'version=2 layout=blocked hashes=7 key_kind=text bits=1024 capacity=100 target_fpr=0.01 added=2 data='
		'AAAAAAAAAAAAAAAAAAAAAAAAIAEAAAAAAAAgAAQACAAAAAAAAAAAIgCAAAAAAAAAQAAAAAAAAAEAAAECIAAAAAAAAAAAAAAAAAAA'
		'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='),
	('blocked', 'int4', ARRAY['42','-1','0'],
		'\x424c4d46020101010700000001000000000400000000000064000000000000007b14ae47e17a843f030000000000000000000000000000000000000000000000'
		'00000010000000000000000000000000000000008000000000000000002000000000000000400000000000000040400000000000000000000000000010000000'
		'00000000000000400008000000001000000000100408000000180040010000000000000000001000000040000000000000010000100000000000000000000000',
		'version=2 layout=blocked hashes=7 key_kind=integer bits=1024 capacity=100 target_fpr=0.01 added=3 da'
		'ta=AAAAEAAAAAAAAAAAAAAAAAAAAACAAAAAAAAAAAAgAAAAAAAAAEAAAAAAAAAAQEAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAABAA'
		'AgAAAAAEAAAAAAQBAgAAAAYAEABAAAAAAAAAAAAEAAAAEAAAAAAAAABAAAQAAAAAAAAAAAAAAA='),
	('classic', 'text', ARRAY['alice','bob'],
		'\x424c4d46020102020700000001000000c00300000000000064000000000000007b14ae47e17a843f020000000000000000000000000000000000000000000000'
		'00100200000000000000040000000000000000000000000010000008000000000000000000000000000000002000000080000000000000000000000000000000'
		'0010000000000000000104000000000080000000000000000000000000000000900000000000000000000000000000000008000000000000',
		'version=2 layout=classic hashes=7 key_kind=text bits=960 capacity=100 target_fpr=0.01 added=2 data=A'
		'BACAAAAAAAAAAQAAAAAAAAAAAAAAAAAEAAACAAAAAAAAAAAAAAAAAAAAAAgAAAAgAAAAAAAAAAAAAAAAAAAAAAQAAAAAAAAAAEEA'
		'AAAAACAAAAAAAAAAAAAAAAAAAAAkAAAAAAAAAAAAAAAAAAAAAAIAAAAAAAA'),
	('classic', 'int4', ARRAY['42','-1','0'],
		'\x424c4d46020102010700000001000000c00300000000000064000000000000007b14ae47e17a843f030000000000000000000000000000000000000000000000'
		'00000400000000000000000080000600000000000000000000102000000400000000000000000000004000000000040000000000000000000008000000000000'
		'4000000800000008000000000000800000200000000000200000000000000000001000000000010000000000000000002000000808000000',
		'version=2 layout=classic hashes=7 key_kind=integer bits=960 capacity=100 target_fpr=0.01 added=3 dat'
		'a=AAAEAAAAAAAAAAAAgAAGAAAAAAAAAAAAABAgAAAEAAAAAAAAAAAAAABAAAAAAAQAAAAAAAAAAAAACAAAAAAAAEAAAAgAAAAIAA'
		'AAAAAAgAAAIAAAAAAAIAAAAAAAAAAAABAAAAAAAQAAAAAAAAAAACAAAAgIAAAA');

SELECT is(pg_temp.some_keys(layout, typ, keys)::bytea, bytes,
		  format('%s: bytes of a filter of %s keys %s', layout, typ, keys))
FROM golden_filter ORDER BY ord;

SELECT is(pg_temp.some_keys(layout, typ, keys)::text, text_form,
		  format('%s: text form of a filter of %s keys %s', layout, typ, keys))
FROM golden_filter ORDER BY ord;

-- 4. Larger filters (many blocks; classic m not a power of two) by SHA-256.
CREATE TEMP TABLE golden_digest (ord serial, layout text, typ text, n int, capacity bigint,
								 fpr float8, bits bigint, hashes int, sha256 text);
INSERT INTO golden_digest (layout, typ, n, capacity, fpr, bits, hashes, sha256) VALUES
	('blocked', 'int4', 10000, 10000, 0.01, 99328, 6,
		'cc2ea1ff1010f3a8f0120e2c55d76bbe27343402de5aa485f43d7e7cc992fba3'),
	('blocked', 'text', 1000, 1000, 0.001, 15872, 9,
		'bd66ae5b040832a1c1f4076d9da8f7adb1ab217fb74044dbc28cdb352dbd23f5'),
	('classic', 'int4', 10000, 10000, 0.01, 95936, 7,
		'd0d2d3e31b002c446ed024af883e800fdcc13b1e67ca2f4874f29f7b37e3d89f'),
	('classic', 'text', 1000, 1000, 0.001, 14400, 10,
		'47dcaee8262a3117276a73507823f83899d9bbe8520cf8ead92860b1e6f50dcc');

SELECT is(format('bits=%s hashes=%s sha256=%s', bloom_info(f)->>'bits', bloom_info(f)->>'hashes',
				 encode(sha256(f::bytea), 'hex')),
		  format('bits=%s hashes=%s sha256=%s', bits, hashes, sha256),
		  format('%s: bloom_agg over %s %s keys, capacity %s at %s', layout, n, typ, capacity, fpr))
FROM golden_digest
CROSS JOIN LATERAL (
	SELECT CASE typ
		   WHEN 'int4' THEN (SELECT bloom_agg(i, capacity, fpr, layout) FROM generate_series(1, n) i)
		   ELSE (SELECT bloom_agg('key ' || i, capacity, fpr, layout) FROM generate_series(1, n) i)
		   END AS f) AS b
ORDER BY ord;

-- 5. Equal values have equal canonical bytes, whatever their type or form.
CREATE TEMP TABLE golden_eq (ord serial, typ1 text, lit1 text, typ2 text, lit2 text);
INSERT INTO golden_eq (typ1, lit1, typ2, lit2) VALUES
	('int2', '42', 'int8', '42'),
	('int4', '42', 'oid', '42'),
	('float4', '0.5', 'float8', '0.5'),
	('float8', '-0', 'float8', '0'),
	('numeric', '1.50', 'numeric', '1.5'),
	('bpchar', 'ab  ', 'text', 'ab'),
	('name', 'ab', 'varchar', 'ab'),
	('timestamptz', '2024-02-29 12:34:56.789012+05:30', 'timestamptz', '2024-02-29 07:04:56.789012+00');

SELECT is(pg_temp.one_key(l, typ1, lit1), pg_temp.one_key(l, typ2, lit2),
		  format('%s: %L::%s and %L::%s give the same bits', l, lit1, typ1, lit2, typ2))
FROM golden_eq CROSS JOIN unnest(ARRAY['blocked', 'classic']) AS l
ORDER BY l, ord;

-- 6. Scalable filters (family 4), byte for byte and as text: the outer
-- header (layers, total bits, growth, ratio), each layer a complete family 1
-- value whose capacity and rate follow from the outer ones, keys in the last
-- layer until it is full.  The reader's --selftest (GOLDEN_SCALABLE) rebuilds
-- the same bytes.
SELECT is((bloom_empty_scalable(2, 0.01) || 'alice' || 'bob' || 'carol' || 'dave' || 'eve')::bytea,
		  '\x424c4d46020401020000000002000000000400000000000002000000000000007b14ae47e17a843f0500000000000000'
		  '0200000000000000000000000000e03f424c4d46020101021e00000001000000000200000000000002000000000000'
		  '007b14ae47e17a743f020000000000000000000000000000000000000000000000020004040040009020000'
		  '01c200428028008202105008200001020200400088000002001000000a28085004800800102408040240800000100'
		  '000102a1010000424c4d46020101021a00000001000000000200000000000004000000000000007b14ae47e17a643f'
		  '030000000000000000000000000000000000000000000000000800810200020081000128100410408200038828'
		  '0e2004052a000084040011002020040080110020180a000000046400200032020241a44802802882002810'::bytea,
		  'scalable blocked: five text keys over two layers, byte for byte');
SELECT is((bloom_empty_scalable(2, 0.01) || 'alice' || 'bob' || 'carol' || 'dave' || 'eve')::text,
		  'version=2 family=scalable layout=blocked key_kind=text layers=2 bits=1024 capacity=2 '
		  'target_fpr=0.01 growth=2 ratio=0.5 added=5 data=QkxNRgIBAQIeAAAAAQAAAAACAAAAAAAAAgAAAAAAAAB7FK5H4Xp0PwIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIABAQAQACQIAAAHCAEKAKACCAhBQCCAAAQICAEAAiAAAAgAQAAAKKAhQBIAIABAkCAQCQIAAABAAABAqEBAABCTE1GAgEBAhoAAAABAAAAAAIAAAAAAAAEAAAAAAAAAHsUrkfhemQ/AwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgAgQIAAgCBAAEoEAQQQIIAA4goDiAEBSoAAIQEABEAICAEAIARACAYCgAAAARkACAAMgICQaRIAoAoggAoEA==',
		  'scalable blocked: the same filter as text');
SELECT is((bloom_empty_scalable(2, 0.01, 3, 0.25, 'classic') || 1 || 2 || 3 || 4)::bytea,
		  '\x424c4d46020402010000000002000000c00000000000000002000000000000007b14ae47e17a843f0400000000000000'
		  '0300000000000000000000000000d03f424c4d4602010201160000000100000040000000000000000200000000000000'
		  'b81e85eb51b87e3f02000000000000000000000000000000000000000000000004a668d5b5baa034424c4d46020102'
		  '010f0000000100000080000000000000000600000000000000b81e85eb51b85e3f02000000000000000000000000'
		  '0000000000000000000000280041444484601000004448c6025401'::bytea,
		  'scalable classic, growth 3, ratio 0.25: four integer keys over two layers, byte for byte');
SELECT is(substring((bloom_empty_scalable(2, 0.01) || 'alice' || 'bob' || 'carol' || 'dave' || 'eve'
					 || 'alice')::bytea FROM 65),
		  substring((bloom_empty_scalable(2, 0.01) || 'alice' || 'bob' || 'carol' || 'dave' || 'eve')::bytea FROM 65),
		  'scalable: a key that tests positive sets nothing (only the outer count of adds moves)');
SELECT is((SELECT array_agg((l->>'capacity')::bigint || '/' || (l->>'target_fpr'))
		   FROM jsonb_array_elements(bloom_info(bloom_add_all(bloom_empty_scalable(3, 0.02, 4, 0.75),
															   ARRAY(SELECT generate_series(1, 300))))->'layers') l),
		  ARRAY['3/0.005', '12/0.00375', '48/0.0028125', '192/0.002109375', '768/0.00158203125'],
		  'scalable: layer i has capacity c * g^i and rate fpr * (1 - r) * r^i');
SELECT is(bloom_empty_scalable()::bytea,
		  bloom_empty_scalable(1000, 0.01, 2, 0.5, 'blocked')::bytea,
		  'scalable: the defaults are initial capacity 1000, fpr 0.01, growth 2, ratio 0.5, blocked');

-- 7. Version 1, as releases 1.0 and 1.1 wrote it (the vectors of sections 3
-- and 6 before version 2): read as it is, kept byte for byte through the
-- bytea cast and text, every key found, the same bits as version 2's build;
-- a change writes version 2.  And a value of 1.0's rules, which hashed a
-- varchar key with its trailing blanks: 'ab ' (61 62 20) in
-- bloom_empty(100, 0.01): XXH3-64 0xf8364a62a6f5676e, block 1, bits
-- {592,618,648,672,691,768,898}, is found.
CREATE TEMP TABLE golden_v1 (ord serial, layout text, typ text, keys text[], bytes bytea, text_form text);
INSERT INTO golden_v1 (layout, typ, keys, bytes, text_form) VALUES
	('blocked', 'text', ARRAY['alice','bob'],
		'\x424c4d46010101020700000001000000000400000000000064000000000000007b14ae47e17a843f020000000000000000000000000000000000000000000000'
		'00000000000000000000000000000000000020010000000000002000040008000000000000000022008000000000000040000000000000010000010220000000'
		'00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
		'version=1 layout=blocked hashes=7 key_kind=text bits=1024 capacity=100 target_fpr=0.01 added=2 data='
		'AAAAAAAAAAAAAAAAAAAAAAAAIAEAAAAAAAAgAAQACAAAAAAAAAAAIgCAAAAAAAAAQAAAAAAAAAEAAAECIAAAAAAAAAAAAAAAAAAA'
		'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='),
	('blocked', 'int4', ARRAY['42','-1','0'],
		'\x424c4d46010101010700000001000000000400000000000064000000000000007b14ae47e17a843f030000000000000000000000000000000000000000000000'
		'00000010000000000000000000000000000000008000000000000000002000000000000000400000000000000040400000000000000000000000000010000000'
		'00000000000000400008000000001000000000100408000000180040010000000000000000001000000040000000000000010000100000000000000000000000',
		'version=1 layout=blocked hashes=7 key_kind=integer bits=1024 capacity=100 target_fpr=0.01 added=3 da'
		'ta=AAAAEAAAAAAAAAAAAAAAAAAAAACAAAAAAAAAAAAgAAAAAAAAAEAAAAAAAAAAQEAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAABAA'
		'AgAAAAAEAAAAAAQBAgAAAAYAEABAAAAAAAAAAAAEAAAAEAAAAAAAAABAAAQAAAAAAAAAAAAAAA='),
	('classic', 'text', ARRAY['alice','bob'],
		'\x424c4d46010102020700000001000000c00300000000000064000000000000007b14ae47e17a843f020000000000000000000000000000000000000000000000'
		'00100200000000000000040000000000000000000000000010000008000000000000000000000000000000002000000080000000000000000000000000000000'
		'0010000000000000000104000000000080000000000000000000000000000000900000000000000000000000000000000008000000000000',
		'version=1 layout=classic hashes=7 key_kind=text bits=960 capacity=100 target_fpr=0.01 added=2 data=A'
		'BACAAAAAAAAAAQAAAAAAAAAAAAAAAAAEAAACAAAAAAAAAAAAAAAAAAAAAAgAAAAgAAAAAAAAAAAAAAAAAAAAAAQAAAAAAAAAAEEA'
		'AAAAACAAAAAAAAAAAAAAAAAAAAAkAAAAAAAAAAAAAAAAAAAAAAIAAAAAAAA'),
	('classic', 'int4', ARRAY['42','-1','0'],
		'\x424c4d46010102010700000001000000c00300000000000064000000000000007b14ae47e17a843f030000000000000000000000000000000000000000000000'
		'00000400000000000000000080000600000000000000000000102000000400000000000000000000004000000000040000000000000000000008000000000000'
		'4000000800000008000000000000800000200000000000200000000000000000001000000000010000000000000000002000000808000000',
		'version=1 layout=classic hashes=7 key_kind=integer bits=960 capacity=100 target_fpr=0.01 added=3 dat'
		'a=AAAEAAAAAAAAAAAAgAAGAAAAAAAAAAAAABAgAAAEAAAAAAAAAAAAAABAAAAAAAQAAAAAAAAAAAAACAAAAAAAAEAAAAgAAAAIAA'
		'AAAAAAgAAAIAAAAAAAIAAAAAAAAAAAABAAAAAAAQAAAAAAAAAAACAAAAgIAAAA');

SELECT is(bytes::bloomfilter::bytea, bytes, format('version 1 %s: %s keys %s read and kept byte for byte', layout, typ, keys))
FROM golden_v1 ORDER BY ord;
SELECT is(bytes::bloomfilter::text, text_form, format('version 1 %s: %s keys %s, text form', layout, typ, keys))
FROM golden_v1 ORDER BY ord;
SELECT is(text_form::bloomfilter::bytea, bytes, format('version 1 %s: %s keys %s, read from text', layout, typ, keys))
FROM golden_v1 ORDER BY ord;
SELECT ok(bool_and(CASE typ WHEN 'text' THEN bytes::bloomfilter @> k ELSE bytes::bloomfilter @> k::int4 END),
		  format('version 1 %s: %s keys %s all found', layout, typ, keys))
FROM golden_v1, unnest(keys) k GROUP BY ord, layout, typ, keys ORDER BY ord;
SELECT is(substring(bytes FROM 65), substring(pg_temp.some_keys(layout, typ, keys)::bytea FROM 65),
		  format('version 1 %s: %s keys %s, the bits of version 2''s build', layout, typ, keys))
FROM golden_v1 ORDER BY ord;
SELECT is(get_byte((bytes::bloomfilter || 'new')::bytea, 4), 2,
		  format('version 1 %s: an add writes version 2', layout))
FROM golden_v1 WHERE typ = 'text' ORDER BY ord;
SELECT is(('\x424c4d46010401020000000002000000000400000000000002000000000000007b14ae47e17a843f0500000000000000'
		  '0200000000000000000000000000e03f424c4d46010101021e00000001000000000200000000000002000000000000'
		  '007b14ae47e17a743f020000000000000000000000000000000000000000000000020004040040009020000'
		  '01c200428028008202105008200001020200400088000002001000000a28085004800800102408040240800000100'
		  '000102a1010000424c4d46010101021a00000001000000000200000000000004000000000000007b14ae47e17a643f'
		  '030000000000000000000000000000000000000000000000000800810200020081000128100410408200038828'
		  '0e2004052a000084040011002020040080110020180a000000046400200032020241a44802802882002810'::bytea)::bloomfilter::bytea,
		  '\x424c4d46010401020000000002000000000400000000000002000000000000007b14ae47e17a843f0500000000000000'
		  '0200000000000000000000000000e03f424c4d46010101021e00000001000000000200000000000002000000000000'
		  '007b14ae47e17a743f020000000000000000000000000000000000000000000000020004040040009020000'
		  '01c200428028008202105008200001020200400088000002001000000a28085004800800102408040240800000100'
		  '000102a1010000424c4d46010101021a00000001000000000200000000000004000000000000007b14ae47e17a643f'
		  '030000000000000000000000000000000000000000000000000800810200020081000128100410408200038828'
		  '0e2004052a000084040011002020040080110020180a000000046400200032020241a44802802882002810'::bytea,
		  'version 1 scalable: read and kept byte for byte');
SELECT is(pg_temp.set_bits(overlay(pg_temp.one_key('blocked', 'bytea', '\x616220') PLACING '\x0102'::bytea FROM 7 FOR 2)),
		  '{592,618,648,672,691,768,898}', 'version 1 (1.0''s rules): the bits of varchar ''ab '' hashed as it is');
SELECT ok(overlay(overlay(pg_temp.one_key('blocked', 'bytea', '\x616220') PLACING '\x01'::bytea FROM 5 FOR 1)
				  PLACING '\x02'::bytea FROM 8 FOR 1)::bloomfilter @> 'ab '::varchar,
		  'version 1 (1.0''s rules): varchar ''ab '' found');

SELECT * FROM finish();
ROLLBACK;
