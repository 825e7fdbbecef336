"""Tests of bloomfilter_client against a server (GuardCopy, load_value).

Needs a server with the extension installed: PGHOST, PGPORT and PGUSER name
it (test/run-tests.sh runs this against its throwaway server).  Works in
its own database, dropped at the end.  python3 -m unittest discover -s tests
"""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psycopg2  # noqa: E402
import psycopg2.errors  # noqa: E402

from bloomfilter_client import (GuardCopy, KeyKindError, load_value,  # noqa: E402
                                CuckooFilter, ScalableFilter, BloomFilter)

DB = 'bf_client_test'


def connect(dbname=DB, **kw):
    conn = psycopg2.connect(dbname=dbname, **kw)
    conn.autocommit = True
    return conn


def setUpModule():
    admin = connect('postgres')
    with admin.cursor() as cur:
        cur.execute('DROP DATABASE IF EXISTS ' + DB)
        cur.execute('CREATE DATABASE ' + DB)
    admin.close()
    conn = connect()
    with conn.cursor() as cur:
        cur.execute('CREATE EXTENSION bloomfilter')
    conn.close()


def tearDownModule():
    admin = connect('postgres')
    with admin.cursor() as cur:
        cur.execute('DROP DATABASE IF EXISTS ' + DB + ' WITH (FORCE)')
    admin.close()


class GuardCopyTest(unittest.TestCase):

    def setUp(self):
        self.conn = connect()
        self.cur = self.conn.cursor()
        self.cur.execute('DROP TABLE IF EXISTS users')
        self.cur.execute('CREATE TABLE users (id bigint, name text UNIQUE)')
        self.cur.execute("INSERT INTO users SELECT i, 'user' || i FROM generate_series(1, 20000) i")
        self.cur.execute('CREATE INDEX users_guard ON users USING bloomguard (name)')

    def tearDown(self):
        self.cur.execute('DROP TABLE IF EXISTS users')
        self.conn.close()

    def names(self):
        self.cur.execute('SELECT name FROM users')
        return [r[0] for r in self.cur.fetchall()]

    def server_bytes(self):
        self.cur.execute("SELECT bloom_guard_filter('users_guard')::bytea")
        return bytes(self.cur.fetchone()[0])

    def test_load_no_false_negatives(self):
        copy = GuardCopy(self.conn, 'users_guard')
        self.assertEqual(copy.to_bytes(), self.server_bytes())
        self.assertEqual([n for n in self.names() if not copy.might_contain(n)], [])
        absent = sum(copy.might_contain('new%d' % i) for i in range(20000))
        self.assertLess(absent, 20000 * 0.02, 'about 1% of absent names say "maybe"')
        self.assertIsNone(copy.might_contain(None))
        self.assertTrue('user7' in copy)

    def test_refresh_sends_changed_pages(self):
        copy = GuardCopy(self.conn, 'users_guard')
        whole = copy.nbytes
        # nothing changed: the headers only
        self.assertEqual(copy.refresh(), 64 * (len(copy._layers) + 1))
        v0 = copy.version
        self.cur.execute("INSERT INTO users VALUES (0, 'alice'), (-1, 'bob')")
        received = copy.refresh()
        self.assertNotEqual(copy.version, v0)
        self.assertLess(received, whole / 2)
        self.assertTrue(copy.might_contain('alice') and copy.might_contain('bob'))
        self.assertEqual(copy.to_bytes(), self.server_bytes(), 'patched copy = the server\'s filter')
        self.assertEqual([n for n in self.names() if not copy.might_contain(n)], [])

    def test_stale_copy_then_refresh(self):
        copy = GuardCopy(self.conn, 'users_guard')
        other = connect()
        with other.cursor() as cur:
            cur.execute("INSERT INTO users VALUES (1, 'carol')")
        other.close()
        # committed after the copy's version: may be missing until a refresh
        copy.refresh()
        self.assertTrue(copy.might_contain('carol'))

    def test_uncommitted_rows_are_not_hidden(self):
        # a copy taken while a row is uncommitted may hold its key (a false
        # positive if it aborts), and after its commit a refresh holds it
        other = psycopg2.connect(dbname=DB)
        with other.cursor() as cur:
            cur.execute("INSERT INTO users VALUES (2, 'dave')")
            copy = GuardCopy(self.conn, 'users_guard')
            other.commit()
        other.close()
        copy.refresh()
        self.assertTrue(copy.might_contain('dave'))

    def test_new_layer_reloads_whole(self):
        copy = GuardCopy(self.conn, 'users_guard')
        layers = len(copy._layers)
        self.cur.execute("INSERT INTO users SELECT i, 'more' || i FROM generate_series(1, 60000) i")
        received = copy.refresh()
        self.assertGreater(len(copy._layers), layers)
        self.assertEqual(received, copy.nbytes, 'a changed shape sends the whole filter')
        self.assertEqual([n for n in self.names() if not copy.might_contain(n)], [])
        self.assertEqual(copy.to_bytes(), self.server_bytes())

    def test_rewrites_reload_whole(self):
        for i, stmt in enumerate(('REINDEX INDEX users_guard', 'TRUNCATE users', 'VACUUM FULL users')):
            copy = GuardCopy(self.conn, 'users_guard')
            self.cur.execute(stmt)
            self.cur.execute("INSERT INTO users VALUES (3, %s)", ('erin%d' % i,))
            received = copy.refresh()
            self.assertEqual(received, copy.nbytes, stmt + ': the whole filter')
            self.assertEqual(copy.to_bytes(), self.server_bytes(), stmt)
            self.assertTrue(copy.might_contain('erin%d' % i), stmt)

    def test_vacuum_rebuild(self):
        copy = GuardCopy(self.conn, 'users_guard')
        self.cur.execute("DELETE FROM users WHERE id > 100")
        self.cur.execute('VACUUM users')
        copy.refresh()
        self.assertEqual(copy.to_bytes(), self.server_bytes())
        self.assertEqual([n for n in self.names() if not copy.might_contain(n)], [])

    def test_unlogged_always_whole(self):
        self.cur.execute('CREATE UNLOGGED TABLE ul (k int8)')
        self.cur.execute('INSERT INTO ul SELECT generate_series(1, 1000)')
        self.cur.execute('CREATE INDEX ul_guard ON ul USING bloomguard (k)')
        copy = GuardCopy(self.conn, 'ul_guard')
        self.cur.execute('INSERT INTO ul VALUES (-5)')
        self.assertEqual(copy.refresh(), copy.nbytes)
        self.assertTrue(copy.might_contain(-5))
        self.assertTrue(copy.might_contain(-5, 'int4'))
        self.assertEqual([i for i in range(1, 1001) if not copy.might_contain(i)], [])
        self.cur.execute('DROP TABLE ul')

    def test_key_kinds(self):
        self.cur.execute('CREATE TABLE kk (u uuid, t timestamptz, n numeric, c char(5))')
        self.cur.execute("INSERT INTO kk SELECT md5(i::text)::uuid, '2026-01-01'::timestamptz + i * interval '1 min', "
                         "i / 8.0, 'c' || i FROM generate_series(1, 2000) i")
        for col in ('u', 't', 'n', 'c'):
            self.cur.execute('CREATE INDEX kk_%s ON kk USING bloomguard (%s)' % (col, col))
        self.cur.execute('SELECT u, t, n, c FROM kk')
        rows = self.cur.fetchall()
        for i, col in enumerate(('u', 't', 'n', 'c')):
            copy = GuardCopy(self.conn, 'kk_' + col)
            sqltype = {'c': 'bpchar', 'u': 'uuid'}.get(col)
            self.assertEqual([r[i] for r in rows if not copy.might_contain(r[i], sqltype)], [], col)
        copy = GuardCopy(self.conn, 'kk_u')
        with self.assertRaises(KeyKindError):
            copy.might_contain(42)
        self.cur.execute('DROP TABLE kk')

    def test_answers_as_the_server(self):
        copy = GuardCopy(self.conn, 'users_guard')
        rnd = random.Random(7)
        keys = ['user%d' % rnd.randrange(1, 40000) for _ in range(3000)] + ['user1 ', 'x' * 70]
        self.cur.execute("SELECT k, bloom_guard_contains('users_guard', k) FROM unnest(%s::text[]) k", (keys,))
        answers = self.cur.fetchall()
        for k, server in answers:
            if server:
                self.assertTrue(copy.might_contain(k), k)
        # the copy also tests a text key's other forms (without trailing
        # blanks, clipped to 63 bytes); for a key with one form, the same bits
        one_form = [(k, s) for k, s in answers if not k.endswith(' ') and len(k) <= 63]
        self.assertEqual(sum(copy.might_contain(k) != s for k, s in one_form), 0)
        self.assertTrue(copy.might_contain('user1 '), 'also tested without the trailing blank')

    def test_bad_input(self):
        copy = GuardCopy(self.conn, 'users_guard')
        with self.assertRaises(psycopg2.errors.InvalidParameterValue):
            self.cur.execute("SELECT * FROM bloom_guard_changes('users_guard', 'junk')")
        self.cur.execute("SELECT whole FROM bloom_guard_changes('users_guard', %s)",
                         ('1/1/1/1/1/0/1/p',))
        self.assertEqual(self.cur.fetchall(), [(True,)], 'another system\'s version: the whole filter')
        self.cur.execute('CREATE ROLE bf_client_nobody')
        try:
            self.cur.execute('SET ROLE bf_client_nobody')
            with self.assertRaises(psycopg2.errors.InsufficientPrivilege):
                copy.refresh()
        finally:
            self.cur.execute('RESET ROLE')
            self.cur.execute('DROP ROLE bf_client_nobody')


class StoredValueTest(unittest.TestCase):

    def test_stored_values(self):
        conn = connect()
        cur = conn.cursor()
        cur.execute('CREATE TEMP TABLE f (name text, bf bloomfilter, cf cuckoofilter)')
        cur.execute("INSERT INTO f SELECT 'b', bloom_agg(i), "
                    "(SELECT cuckoo_agg(j, 1000, 0.01) FROM generate_series(1, 500) j) "
                    "FROM generate_series(1, 500) i")
        cur.execute("INSERT INTO f SELECT 's', bloom_add_all(bloom_empty_scalable(10, 0.01), "
                    "ARRAY(SELECT 'k' || i FROM generate_series(1, 300) i)), NULL")
        b = load_value(conn, "SELECT bf FROM f WHERE name = %s", ('b',))
        self.assertIsInstance(b, BloomFilter)
        self.assertTrue(all(b.contains(i) for i in range(1, 501)))
        c = load_value(conn, "SELECT cf FROM f WHERE name = %s", ('b',))
        self.assertIsInstance(c, CuckooFilter)
        self.assertTrue(all(c.contains(i) for i in range(1, 501)))
        s = load_value(conn, "SELECT bf FROM f WHERE name = 's'")
        self.assertIsInstance(s, ScalableFilter)
        self.assertTrue(all(s.contains('k%d' % i) for i in range(1, 301)))
        with self.assertRaises(LookupError):
            load_value(conn, "SELECT bf FROM f WHERE false")
        conn.close()


if __name__ == '__main__':
    unittest.main()
