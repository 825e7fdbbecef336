#!/usr/bin/env python3
"""compare.py -- the reference reader against the server, key by key.

For the three layouts (blocked, classic, counting), the cuckoo filter, a
scalable filter (grown from capacity 1000 to 7 layers) and every key kind,
builds filters on the server from
100,000 keys (rows i = 1..100,000), fetches them as bytea, and checks 120,000
keys (rows i = 40,001..160,000: about half added, half not; boolean: 160,000
checks of true and false) with the server's `bf @> key` and with
bloomfilter_client.reader.  Every answer must agree, and every key equal to an
added one must answer "maybe".  Keys
reach the reader as the server prints them (COPY ... CSV), so the reader's
own parsing and canonical forms are under test: int2/int4/oid/int8 mixed,
text as text/varchar/char(n)/name (multibyte, empty, trailing blanks,
names clipped at 63 bytes), bytea (empty too), uuid, float4 and float8
(-0, NaN, +-Infinity, subnormals), numeric at other scales than added
(NaN, +-Infinity, negative, large, tiny), date, timestamp and timestamptz
(BC, years past 9999, +-infinity; timestamptz added under TimeZone UTC,
checked under Asia/Kolkata).  Then filters of text keys that set several
forms (ending in blanks, longer than 63 bytes), built by the reader's add()
and by the server, must be byte for byte the same, and the reader's
validation is compared with the server's on mutated headers.

Run by test/run-tests.sh against its throwaway server: PGHOST, PGPORT and
PGUSER name it; PSQL (default: psql) the client.  Works in its own database,
dropped at the end.  Prints counts; exits 1 on any disagreement.
"""

import csv
import io
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bloomfilter_client import reader as bfr  # noqa: E402

PSQL = os.environ.get('PSQL', 'psql')
DB = 'bf_reader_compare'
N_BUILD = 100000        # keys i = 1..N_BUILD are added
N_TOTAL = 160000        # keys i = N_FIRST_CHECK+1..N_TOTAL are checked
N_FIRST_CHECK = 40000
CSV_FIELD_LIMIT = 1 << 20

# A deterministic 64-bit pseudo-random number per (row, salt).
H = "('x' || substr(md5('{salt}' || i), 1, 16))::bit(64)::bigint"


def h(salt):
    return H.format(salt=salt)


def hpos(salt):  # non-negative
    return '(%s & 9223372036854775807)' % h(salt)


# Each kind: key type, key expression over i, how to build the filter (an
# expression over the key table "k" giving a bloomfilter for layout l), the
# rows added, and the checks: (tag, condition, key expression of the check,
# text of the key as the reader gets it).  A row is checked once, with the
# first tag whose condition holds (the last condition is 'true').
KINDS = [
    dict(
        kind='integer', type='int8',
        key="""CASE
            WHEN i = 3 THEN -9223372036854775808
            WHEN i = 7 THEN 9223372036854775807
            WHEN i % 4 = 0 THEN i / 4 - 20000
            WHEN i % 4 = 1 THEN {h1} % 2147483648
            WHEN i % 4 = 2 THEN {h2} & 4294967295
            ELSE {h3} END""".format(h1=h('a'), h2=h('b'), h3=h('c')),
        # int2, int4, oid and int8 keys in one filter: a union of four
        # aggregates, each over keys of one type
        build="""(SELECT bloom_agg(k::int2, {n}, 0.01, l) FILTER (WHERE i % 4 = 0 AND i NOT IN (3, 7))
                  | bloom_agg(k::int4, {n}, 0.01, l) FILTER (WHERE i % 4 = 1)
                  | bloom_agg(k::oid, {n}, 0.01, l) FILTER (WHERE i % 4 = 2)
                  | bloom_agg(k, {n}, 0.01, l) FILTER (WHERE i % 4 = 3 OR i IN (3, 7))
                  FROM k WHERE i <= {n})""",
        checks=[
            ('int2', '(i / 4) % 4 = 0 AND k BETWEEN -32768 AND 32767', 'k::int2', 'k::int2::text'),
            ('int4', '(i / 4) % 4 = 1 AND k BETWEEN -2147483648 AND 2147483647', 'k::int4', 'k::int4::text'),
            ('oid', '(i / 4) % 4 = 2 AND k BETWEEN 0 AND 4294967295', 'k::oid', 'k::oid::text'),
            ('int8', 'true', 'k', 'k::text'),
        ]),
    dict(
        kind='text', type='text',
        key="""CASE
            WHEN i = 5 THEN ''
            WHEN i % 5 = 0 THEN 'user' || i
            WHEN i % 5 = 1 THEN chr(1024 + i % 256) || 'ключ' || i || chr(127744 + i % 500)
            WHEN i % 5 = 2 THEN md5(i::text) || repeat(' ', i % 3)
            WHEN i % 5 = 3 THEN repeat('é', 20 + i % 30) || i || repeat('字', i % 7)
            ELSE 'Straße "' || i || E'",\\t\\n\\\\' || upper(md5(i::text)) END""",
        build="""(SELECT bloom_agg(k, {n}, 0.01, l) FILTER (WHERE i % 7 <> 0)
                  | bloom_agg(k::varchar, {n}, 0.01, l) FILTER (WHERE i % 7 = 0)
                  FROM k WHERE i <= {n})""",
        checks=[
            ('varchar', '(i / 5) % 4 = 1', 'k::varchar', 'k'),
            ('bpchar', '(i / 5) % 4 = 2 AND char_length(k) <= 60', 'rpad(k, 60)::char(60)', 'rpad(k, 60)'),
            ('name', '(i / 5) % 4 = 3', 'k::name', 'k'),
            ('text', 'true', 'k', 'k'),
        ]),
    dict(
        kind='bytea', type='bytea',
        key="""CASE i % 4
            WHEN 0 THEN decode(md5(i::text), 'hex')
            WHEN 1 THEN substr(decode(md5(i::text) || md5((i + 1)::text), 'hex'), 1, (i / 4) % 32)
            WHEN 2 THEN convert_to('b' || i, 'UTF8')
            ELSE int8send(i) END""",
        checks=[('bytea', 'true', 'k', 'k::text')]),
    dict(
        kind='uuid', type='uuid',
        key="""CASE
            WHEN i = 1 THEN '00000000-0000-0000-0000-000000000000'::uuid
            WHEN i = 2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid
            ELSE md5(i::text)::uuid END""",
        checks=[('uuid', 'true', 'k', 'k::text')]),
    dict(
        kind='boolean', type='boolean', key='i % 2 = 0',
        added='i <= {n} AND k', first_check=0,
        checks=[('boolean', 'true', 'k', 'k::text')]),
    dict(
        kind='float', type='float8',
        key="""CASE i % 6
            WHEN 0 THEN ({h1}::float8 / 9.3e18) * power(10::float8, (i % 600) - 300)
            WHEN 1 THEN i::float8 / 1024
            WHEN 2 THEN (i * 0.1)::float4::float8
            WHEN 3 THEN 1 / i::float8
            WHEN 4 THEN CASE (i / 6) % 8
                WHEN 0 THEN '-0'::float8 WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity'
                WHEN 3 THEN '-Infinity' WHEN 4 THEN 5e-324 * (i % 1000)
                WHEN 5 THEN -1.7976931348623157e308 WHEN 6 THEN 0 ELSE -i END
            ELSE -(i::float8) * 1e-10 END""".format(h1=h('f')),
        # every fifth key that is exactly a real is added as a real
        build="""(SELECT bloom_agg(k::float4, {n}, 0.01, l) FILTER (WHERE i % 5 = 0 AND {f4exact})
                  | bloom_agg(k, {n}, 0.01, l) FILTER (WHERE NOT (i % 5 = 0 AND {f4exact}))
                  FROM k WHERE i <= {n})""",
        checks=[
            ('float4', '(i / 7) % 2 = 0 AND {f4ok}', 'k::float4', 'k::float4::text'),
            ('float8', 'true', 'k', 'k::text'),
        ]),
    dict(
        kind='numeric', type='numeric',
        key="""CASE i % 6
            WHEN 0 THEN (i * 0.001)::numeric(20, 6)
            WHEN 1 THEN -({h1}::numeric / 10::numeric ^ (i % 25))
            WHEN 2 THEN {h2}::numeric * 10::numeric ^ (i % 30)
            WHEN 3 THEN 1 / i::numeric
            WHEN 4 THEN CASE (i / 6) % 6
                WHEN 0 THEN 'NaN'::numeric WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity'
                WHEN 3 THEN 0.000 WHEN 4 THEN -0.0 ELSE 1e-30 * i END
            ELSE i::numeric END""".format(h1=h('n'), h2=h('m')),
        checks=[
            ('numeric+3', "(i / 7) % 3 = 1 AND k NOT IN ('NaN', 'Infinity', '-Infinity')",
             'round(k, scale(k) + 3)', 'round(k, scale(k) + 3)::text'),
            ('numeric-trim', '(i / 7) % 3 = 2', 'trim_scale(k)', 'trim_scale(k)::text'),
            ('numeric', 'true', 'k', 'k::text'),
        ]),
    dict(
        kind='date', type='date',
        key="""CASE i % 5
            WHEN 0 THEN date '2000-01-01' + (i - 80000)
            WHEN 1 THEN date '2000-01-01' + ({h1} % 2451545)::int
            WHEN 2 THEN date '2000-01-01' + ({h2} % 2145031948)::int
            WHEN 3 THEN CASE (i / 5) % 3 WHEN 0 THEN 'infinity'::date
                WHEN 1 THEN '-infinity' ELSE '4714-11-24 BC' END
            ELSE date '1970-01-01' + i % 1000 END""".format(h1=h('d'), h2=hpos('e')),
        checks=[('date', 'true', 'k', 'k::text')]),
    dict(
        kind='timestamp', type='timestamp',
        key="""CASE i % 4
            WHEN 3 THEN CASE (i / 4) % 3 WHEN 0 THEN 'infinity'::timestamp
                WHEN 1 THEN '-infinity' ELSE '1970-01-01 00:00:00' END
            ELSE timestamp '2000-01-01 00:00:00'
                + make_interval(days => CASE i % 4
                    WHEN 0 THEN ({h1} % 106751983)::int
                    WHEN 1 THEN -({h1} % 2451545)::int
                    ELSE i - 80000 END)
                + make_interval(secs => ({h2} % 86400000000)::float8 / 1e6) END"""
            .format(h1=hpos('t'), h2=hpos('u')),
        checks=[('timestamp', 'true', 'k', 'k::text')]),
    dict(
        kind='timestamptz', type='timestamptz',
        key="""CASE i % 4
            WHEN 3 THEN CASE (i / 4) % 3 WHEN 0 THEN 'infinity'::timestamptz
                WHEN 1 THEN '-infinity' ELSE '1970-01-01 00:00:00+00' END
            ELSE timestamptz '2000-01-01 00:00:00+00'
                + make_interval(days => CASE i % 4
                    WHEN 0 THEN ({h1} % 106751983)::int
                    WHEN 1 THEN -({h1} % 2451545)::int
                    ELSE i - 80000 END)
                + make_interval(secs => ({h2} % 86400000000)::float8 / 1e6) END"""
            .format(h1=hpos('v'), h2=hpos('w')),
        checks=[('timestamptz', 'true', 'k', 'k::text')]),
]

# float8 values that cast to float4 without an overflow or underflow error
F4OK = ("(k = 0 OR k = 'NaN' OR k IN ('Infinity', '-Infinity') "
        "OR abs(k) BETWEEN 1e-37 AND 1e37)")

# ... and whose value is exactly a float4 (CASE: AND does not order its
# arguments' evaluation, and the cast must not raise)
F4EXACT = "(CASE WHEN %s THEN k::float4::float8 = k ELSE false END)" % F4OK

# reader type for a check tag
READER_TYPE = {'numeric+3': 'numeric', 'numeric-trim': 'numeric'}

SESSION = ("SET client_encoding = 'UTF8'; SET DateStyle = 'ISO, YMD'; SET work_mem = '256MB'; "
           "SET extra_float_digits = 1; SET bytea_output = 'hex'; "
           "SET IntervalStyle = 'postgres'; ")


def psql(sql, db=DB, stdin=None):
    r = subprocess.run([PSQL, '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql],
                       input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit('psql failed: %s' % sql[:200])
    return r.stdout


def setup():
    psql('DROP DATABASE IF EXISTS %s' % DB, db='postgres')
    psql("CREATE DATABASE %s ENCODING 'UTF8' TEMPLATE template0" % DB, db='postgres')
    psql('CREATE EXTENSION bloomfilter')


def build(spec):
    """Create the key table and the three filters of a kind (TimeZone UTC)."""
    kind = spec['kind']
    added = spec.get('added', 'i <= {n}').format(n=N_BUILD)
    build_sql = spec.get('build', '(SELECT bloom_agg(k, {n}, 0.01, l) FROM k WHERE %s)' % added)
    build_sql = build_sql.format(n=N_BUILD, f4ok=F4OK, f4exact=F4EXACT)
    sql = SESSION + """SET TimeZone = 'UTC';
        CREATE TABLE keys_{kind} AS
            SELECT i, ({key})::{type} AS k, false AS added
            FROM generate_series(1, {total}) AS i;
        UPDATE keys_{kind} AS k SET added = true WHERE {added};
        ANALYZE keys_{kind};
        CREATE TABLE filter_{kind} AS
            SELECT l AS layout, f.bf
            FROM unnest(ARRAY['blocked', 'classic', 'counting']) AS l
            CROSS JOIN LATERAL (SELECT {build} AS bf FROM (SELECT 1) AS dummy) AS f;
        CREATE TABLE cuckoo_{kind} AS
            SELECT cuckoo_agg(DISTINCT k, {n}, 0.01) AS cf FROM keys_{kind} WHERE added;
        CREATE TABLE scalable_{kind} AS
            SELECT bloom_add_all(bloom_empty_scalable(1000, 0.01), array_agg(k ORDER BY i)) AS bf
            FROM keys_{kind} WHERE added;
        """.format(n=N_BUILD, kind=kind, key=spec['key'], type=spec['type'], total=N_TOTAL,
                   added=added, build=build_sql.replace('FROM k ', 'FROM keys_%s AS k ' % kind))
    psql(sql)


def fetch_filters(kind):
    out = psql("SELECT layout, bf::bytea FROM filter_%s ORDER BY layout" % kind)
    filters = {}
    for line in out.splitlines():
        layout, hexbytes = line.split('|')
        filters[layout] = bfr.BloomFilter.from_hex(hexbytes)
    filters['cuckoo'] = bfr.CuckooFilter.from_hex(psql("SELECT cf::bytea FROM cuckoo_%s" % kind))
    filters['scalable'] = bfr.ScalableFilter.from_hex(psql("SELECT bf::bytea FROM scalable_%s" % kind))
    return filters


def check_query(spec):
    kind = spec['kind']
    first = spec.get('first_check', N_FIRST_CHECK)
    tag_case = 'CASE ' + ' '.join(
        "WHEN %s THEN '%s'" % (cond.format(f4ok=F4OK), tag)
        for tag, cond, _, _ in spec['checks']) + ' END'
    parts = []
    for tag, _, expr, text in spec['checks']:
        # added: whether a key equal (as the server compares the values, in
        # the key's base type) to the checked one was added
        parts.append("""SELECT i, tag, {text} AS key,
                ({expr})::{type} IN (SELECT k FROM keys_{kind} WHERE added) AS added,
                fb @> {expr} AS blocked, fc @> {expr} AS classic, fk @> {expr} AS counting, fq @> {expr} AS cuckoo,
                fs @> {expr} AS scalable
            FROM c, f WHERE tag = '{tag}'""".format(text=text, expr=expr, tag=tag,
                                                    type=spec['type'], kind=kind))
    return """COPY (
        WITH c AS MATERIALIZED (SELECT i, k, {tag_case} AS tag FROM keys_{kind} WHERE i > {first}),
             f AS MATERIALIZED (
                SELECT (SELECT bf FROM filter_{kind} WHERE layout = 'blocked') AS fb,
                       (SELECT bf FROM filter_{kind} WHERE layout = 'classic') AS fc,
                       (SELECT bf FROM filter_{kind} WHERE layout = 'counting') AS fk,
                       (SELECT cf FROM cuckoo_{kind}) AS fq,
                       (SELECT bf FROM scalable_{kind}) AS fs)
        {union}
    ) TO STDOUT (FORMAT csv)""".format(tag_case=tag_case, kind=kind, first=first,
                                       union='\nUNION ALL\n'.join(parts))


class Tally:
    def __init__(self):
        self.checked = 0
        self.added = 0          # keys that were added (all must answer true)
        self.added_true = 0
        self.other = 0          # keys not added
        self.other_true = 0     # ... that answer true (false positives, or equal keys)
        self.disagree = 0
        self.tags = {}


def compare(spec, filters):
    kind = spec['kind']
    tallies = {'blocked': Tally(), 'classic': Tally(), 'counting': Tally(), 'cuckoo': Tally(),
               'scalable': Tally()}
    examples = []
    tz_sql = "SET TimeZone = 'Asia/Kolkata'; " if kind == 'timestamptz' else "SET TimeZone = 'UTC'; "
    proc = subprocess.Popen([PSQL, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', DB,
                             '-c', SESSION + tz_sql, '-c', check_query(spec)],
                            stdout=subprocess.PIPE)
    fb, fc, fk, fq = filters['blocked'], filters['classic'], filters['counting'], filters['cuckoo']
    fs = filters['scalable']
    reader = csv.reader(io.TextIOWrapper(proc.stdout, encoding='utf-8', newline=''))
    for row in reader:
        i, tag, key, added, sb, sc, sk, sq, ss = row
        sqltype = READER_TYPE.get(tag, tag)
        try:
            # the canonical bytes a check tests (two for some keys)
            canons = bfr.probe_bytes(key, sqltype)[1]
        except Exception as e:      # a key the reader cannot take: a failure
            examples.append('%s row %s: reader cannot take %s key %r: %s' % (kind, i, tag, key, e))
            for t in tallies.values():
                t.disagree += 1
            continue
        added = added == 't'
        for lname, f, s in (('blocked', fb, sb), ('classic', fc, sc), ('counting', fk, sk), ('cuckoo', fq, sq),
                            ('scalable', fs, ss)):
            t = tallies[lname]
            mine = any(f.contains_canonical(c) for c in canons)
            theirs = s == 't'
            t.checked += 1
            t.tags[tag] = t.tags.get(tag, 0) + 1
            if added:
                t.added += 1
                t.added_true += theirs
            else:
                t.other += 1
                t.other_true += theirs
            if mine != theirs:
                t.disagree += 1
                if len(examples) < 10:
                    examples.append('%s %s row %s: %s key %r: server %s, reader %s'
                                    % (lname, kind, i, tag, key, theirs, mine))
    rc = proc.wait()
    if rc != 0:
        raise SystemExit('psql COPY failed for kind %s (exit status %d)' % (kind, rc))
    return tallies, examples


MUTATIONS = [
    ('magic', 0, '<4s', b'BLMG'),
    ('version', 4, '<B', 2),
    ('family', 5, '<B', 3),
    ('layout', 6, '<B', 3),
    ('key kind', 7, '<B', 11),
    ('k = 0', 8, '<H', 0),
    ('k = 65', 8, '<H', 65),
    ('flags', 10, '<H', 0x8000),
    ('layers', 12, '<I', 0),
    ('bits = 0', 16, '<Q', 0),
    ('bits not a multiple', 16, '<Q', 1000),
    ('bits vs length', 16, '<Q', 512),
    ('capacity = 0', 24, '<Q', 0),
    ('fpr = 0', 32, '<d', 0.0),
    ('fpr = 1', 32, '<d', 1.0),
    ('fpr = -inf', 32, '<d', float('-inf')),
    ('reserved', 50, '<B', 1),
    ('added (any value is valid)', 40, '<Q', 2 ** 64 - 1),
]


def compare_validation():
    """The reader refuses exactly what the server's bytea cast refuses, with
    the same message (the server's DETAIL)."""
    psql("""CREATE FUNCTION try_cast(b bytea) RETURNS text LANGUAGE plpgsql AS $$
        DECLARE d text;
        BEGIN
            PERFORM b::bloomfilter;
            RETURN 'ok';
        EXCEPTION WHEN invalid_binary_representation THEN
            GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
            RETURN d;
        END $$""")
    bad = 0
    n = 0
    for lname in ('blocked', 'classic', 'counting'):
        good = bytearray(bfr.BloomFilter.from_hex(
            psql("SELECT bloom_add(bloom_empty(1000, 0.01, '%s'), 'x'::text)::bytea" % lname)
        ).to_bytes())
        cases = [(m[0], m) for m in MUTATIONS]
        cases += [('truncated', None), ('one byte more', None), ('header only', None)]
        for what, m in cases:
            b = bytearray(good)
            if m is not None:
                struct.pack_into(m[2], b, m[1], m[3])
            elif what == 'truncated':
                b = b[:-1]
            elif what == 'one byte more':
                b = b + b'\x00'
            else:
                b = b[:64]
            server = psql("SELECT try_cast('\\x%s'::bytea)" % bytes(b).hex()).strip()
            try:
                bfr.BloomFilter.from_bytes(bytes(b))
                mine = 'ok'
            except bfr.FormatError as e:
                # the server's DETAIL: the same words as a sentence
                mine = str(e)[:1].upper() + str(e)[1:] + '.'
            n += 1
            if mine != server:
                bad += 1
                print('  DISAGREE validation %s %s: server %r, reader %r' % (lname, what, server, mine))
    # scalable values: the outer header, and a layer's (at byte 64)
    good = bytearray(bfr.ScalableFilter.from_hex(
        psql("SELECT bloom_add_all(bloom_empty_scalable(4, 0.01), ARRAY['a', 'b', 'c', 'd', 'e'])::bytea")
    ).to_bytes())
    for what, off, fmt, val in SCALABLE_MUTATIONS + [('truncated', None, None, None),
                                                     ('one byte more', None, None, None)]:
        b = bytearray(good)
        if off is not None:
            struct.pack_into(fmt, b, off, val)
        elif what == 'truncated':
            b = b[:-1]
        else:
            b = b + b'\x00'
        server = psql("SELECT try_cast('\\x%s'::bytea)" % bytes(b).hex()).strip()
        try:
            bfr.read_filter(bytes(b))
            mine = 'ok'
        except bfr.FormatError as e:
            mine = str(e)[:1].upper() + str(e)[1:] + '.'
        n += 1
        if mine != server:
            bad += 1
            print('  DISAGREE validation scalable %s: server %r, reader %r' % (what, server, mine))
    print('validation: %d mutated values, reader and server agree on %d' % (n, n - bad))
    return bad


SCALABLE_MUTATIONS = [
    ('hashes', 8, '<H', 7),
    ('layers 0', 12, '<I', 0),
    ('layers 3', 12, '<I', 3),
    ('layers 65', 12, '<I', 65),
    ('outer bits', 16, '<Q', 512),
    ('capacity', 24, '<Q', 3),
    ('fpr', 32, '<d', 0.02),
    ('growth 1', 48, '<I', 1),
    ('growth 101', 48, '<I', 101),
    ('zero bytes', 52, '<I', 1),
    ('ratio 1', 56, '<d', 1.0),
    ('layout counting', 6, '<B', 3),
    ('layer family', 64 + 5, '<B', 2),
    ('layer key kind', 64 + 7, '<B', 3),
    ('layer k = 0', 64 + 8, '<H', 0),
    ('layer capacity', 64 + 24, '<Q', 3),
    ('layer fpr', 64 + 32, '<d', 0.0050000000000000001),
    ('layer bits', 64 + 16, '<Q', 1024),
    ('layer reserved', 64 + 50, '<B', 1),
    ('added (any value is valid)', 40, '<Q', 2 ** 64 - 1),
    ('layer added (any value is valid)', 64 + 40, '<Q', 2 ** 64 - 1),
]


# Text keys whose adds set more than one form (src/bf_keys.c,
# bf_key_add_hashes): ending in blanks, longer than 63 bytes, multibyte.
ADD_KEYS = ['ab', 'ab  ', ' ', '', 'x' * 63, 'x' * 64, 'x' * 70 + '  ', 'é' * 40,
            'ab' * 31 + 'éé', 'x' * 62 + '  yz' + 'z' * 10, '鍵🔑' * 20]


def compare_adds():
    """Filters built by the reader's add() are byte for byte the server's,
    for text keys that set several forms, added as text and as name."""
    bad = 0
    n = 0
    for lname in ('blocked', 'classic'):
        for sqltype in ('text', 'name', 'varchar'):
            arr = 'ARRAY[%s]::%s[]' % (', '.join("'%s'" % k.replace("'", "''") for k in ADD_KEYS), sqltype)
            server = bfr.BloomFilter.from_hex(
                psql("SELECT bloom_add_all(bloom_empty(1000, 0.01, '%s'), %s)::bytea" % (lname, arr)))
            mine = bfr.BloomFilter(bfr.LAYOUT_BLOCKED if lname == 'blocked' else bfr.LAYOUT_CLASSIC,
                                   server.nbits, server.hashes, server.capacity, server.target_fpr)
            for k in ADD_KEYS:
                mine.add(k, sqltype)
            n += 1
            if mine.to_bytes() != server.to_bytes():
                bad += 1
                print('  DISAGREE add %s %s: the reader\'s filter differs from the server\'s' % (lname, sqltype))
    print('adds: %d filters of text keys with several forms, reader and server agree on %d' % (n, n - bad))
    return bad


def main():
    t0 = time.time()
    csv.field_size_limit(CSV_FIELD_LIMIT)
    bfr._need_xxhash()
    setup()
    total_bad = 0
    lines = []
    try:
        for spec in KINDS:
            t1 = time.time()
            build(spec)
            filters = fetch_filters(spec['kind'])
            tallies, examples = compare(spec, filters)
            for lname, t in tallies.items():
                f = filters[lname]
                bad = t.disagree
                if t.added_true != t.added:
                    examples.append('%s %s: the server answered "no" for %d added keys'
                                    % (lname, spec['kind'], t.added - t.added_true))
                    bad += 1
                total_bad += bad
                m, k = ((f.nbuckets, f.fp_bits) if lname == 'cuckoo' else
                        (f.nbits, len(f.layers)) if lname == 'scalable' else (f.nbits, f.hashes))
                line = ('%-7s %-11s m=%-8d k=%-2d checked %6d (added %6d: %6d yes; other %6d: %6d yes)'
                        ' agree %6d, disagree %d  [%s]'
                        % (lname, spec['kind'], m, k, t.checked, t.added, t.added_true,
                           t.other, t.other_true, t.checked - t.disagree, t.disagree,
                           ' '.join('%s:%d' % kv for kv in sorted(t.tags.items()))))
                print(line, flush=True)
                lines.append(line)
            for e in examples:
                print('  ' + e)
            print('  (%s: %.1f s)' % (spec['kind'], time.time() - t1), flush=True)
        total_bad += compare_adds()
        total_bad += compare_validation()
    finally:
        psql('DROP DATABASE IF EXISTS %s' % DB, db='postgres')
    print('reader vs server: %s in %.1f s' % ('all agree' if total_bad == 0 else 'DISAGREEMENT',
                                              time.time() - t0))
    return 1 if total_bad else 0


if __name__ == '__main__':
    sys.exit(main())
