#!/usr/bin/env python3
"""test/bench/clients.py -- the client libraries' copy of a guard, measured
(run by test/bench/clients.sh, `make bench-clients`; never a test).

Against a server holding users(username text UNIQUE) of N rows and its guard
users_guard, in one run, side by side:
  1. a check of the copy in process (Python; Node's figure comes from
     clients.js) against one gated lookup per round trip, prepared
     (SELECT EXISTS (SELECT 1 FROM users WHERE username = $1)), 90% absent;
  2. the registration workload: R sign-ups, 90% new names, each "is the name
     taken? if not, insert it": always asking the server, against checking the
     copy first (asking only on "maybe", and refreshing it every second);
     queries avoided, time per sign-up, names the copy wrongly called new (0:
     the unique constraint would have caught them anyway);
  3. refreshes while another connection inserts 1,000 rows a second: bytes
     and milliseconds per refresh, and false negatives of keys committed
     before each refresh began (must be 0);
  4. memory: the copy's bytes and the process's growth, against the guard's
     size on the server.
Prints one table; the load average at the start and the end.
Environment: PGHOST, PGPORT, PGUSER, BF_DB (the database), BF_ROWS (N).
"""

import os
import random
import resource
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'clients', 'python'))

import psycopg2  # noqa: E402
import psycopg2.errors  # noqa: E402

from bloomfilter_client import GuardCopy  # noqa: E402

DB = os.environ.get('BF_DB', 'bench')
ROWS = int(os.environ.get('BF_ROWS', '1000000'))
SIGNUPS = int(os.environ.get('BF_SIGNUPS', '20000'))
SECONDS = int(os.environ.get('BF_SECONDS', '10'))


def connect():
    conn = psycopg2.connect(dbname=DB)
    conn.autocommit = True
    return conn


def names(rnd, n, present=0.1):
    out = []
    for _ in range(n):
        if rnd.random() < present:
            out.append('user%d' % rnd.randrange(1, ROWS + 1))
        else:
            out.append('new%d' % rnd.randrange(1, 10 ** 9))
    return out


def rss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def in_process(copy, keys):
    t = time.perf_counter_ns()
    maybe = sum(1 for k in keys if copy.might_contain(k))
    return (time.perf_counter_ns() - t) / len(keys), maybe


def round_trips(conn, keys, gates):
    with conn.cursor() as cur:
        cur.execute('SET bloomfilter.planner_guards = %s' % ('on' if gates else 'off'))
        cur.execute('PREPARE look(text) AS SELECT EXISTS (SELECT 1 FROM users WHERE username = $1)')
        t = time.perf_counter_ns()
        for k in keys:
            cur.execute('EXECUTE look(%s)', (k,))
            cur.fetchone()
        ns = (time.perf_counter_ns() - t) / len(keys)
        cur.execute('DEALLOCATE look')
        cur.execute('RESET bloomfilter.planner_guards')
    return ns


def signups(conn, copy, keys):
    """Each key: is it taken? if not, insert it.  Returns (lookups sent,
    inserts refused by the unique constraint, us per sign-up)."""
    lookups = refused = 0
    last = time.monotonic()
    with conn.cursor() as cur:
        t = time.perf_counter_ns()
        for k in keys:
            if copy is not None and time.monotonic() - last >= 1.0:
                copy.refresh()
                last = time.monotonic()
            if copy is None or copy.might_contain(k):
                lookups += 1
                cur.execute('SELECT EXISTS (SELECT 1 FROM users WHERE username = %s)', (k,))
                if cur.fetchone()[0]:
                    continue
            try:
                cur.execute('INSERT INTO users (username) VALUES (%s)', (k,))
            except psycopg2.errors.UniqueViolation:
                refused += 1
        us = (time.perf_counter_ns() - t) / len(keys) / 1000
    return lookups, refused, us


def refreshes_under_inserts(copy, seconds, rate=1000):
    """A thread inserts `rate` rows a second; the copy refreshes every
    second.  Returns (refreshes, mean bytes, mean ms, false negatives)."""
    committed = []          # (monotonic time after commit, key)
    stop = threading.Event()

    def inserter():
        conn = connect()
        cur = conn.cursor()
        i = 0
        start = time.monotonic()
        while not stop.is_set():
            batch = ['live%d_%d' % (os.getpid(), i + j) for j in range(10)]
            cur.execute('INSERT INTO users (username) SELECT unnest(%s::text[])', (batch,))
            now = time.monotonic()
            committed.extend((now, k) for k in batch)
            i += 10
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        conn.close()

    th = threading.Thread(target=inserter)
    th.start()
    sizes, times, misses = [], [], 0
    time.sleep(1.0)
    for _ in range(seconds):
        began = time.monotonic()
        before = [k for (at, k) in list(committed) if at < began]
        t = time.perf_counter()
        sizes.append(copy.refresh())
        times.append((time.perf_counter() - t) * 1000)
        misses += sum(1 for k in before if not copy.might_contain(k))
        time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))
    stop.set()
    th.join()
    return len(sizes), sum(sizes) / len(sizes), sum(times) / len(times), misses, len(committed)


def main():
    rnd = random.Random(42)
    conn = connect()
    with conn.cursor() as cur:
        cur.execute("SELECT pg_relation_size('users_guard'), pg_relation_size('users_username_key')")
        guard_bytes, btree_bytes = cur.fetchone()
    rss0 = rss_kb()
    t = time.perf_counter()
    copy = GuardCopy(connect(), 'users_guard')
    load_ms = (time.perf_counter() - t) * 1000
    rss1 = rss_kb()
    check_keys = names(rnd, 200000)
    ns, maybe = in_process(copy, check_keys)
    trip_keys = check_keys[:5000]
    gated = round_trips(conn, trip_keys, True)
    plain = round_trips(conn, trip_keys, False)
    present = sum(1 for k in check_keys if k.startswith('user'))
    sign_keys = names(rnd, SIGNUPS)
    base = signups(conn, None, sign_keys[:SIGNUPS // 2])
    copy.refresh()
    withc = signups(conn, copy, sign_keys[SIGNUPS // 2:])
    n, bytes_mean, ms_mean, misses, live = refreshes_under_inserts(copy, SECONDS)

    print('| measure | value |')
    print('|---|---|')
    print('| rows / guard on the server / B-tree | %d / %d kB / %d kB |' % (ROWS, guard_bytes // 1024, btree_bytes // 1024))
    print('| copy: bytes held / process growth / first load | %d kB / %d kB / %.0f ms |'
          % (copy.nbytes // 1024, rss1 - rss0, load_ms))
    print('| check in process (Python), 90%% absent | %.0f ns (%.2f%% "maybe" of absent) |'
          % (ns, 100.0 * (maybe - present) / max(1, len(check_keys) - present)))
    print('| one gated lookup per round trip (prepared) | %.1f µs (%.0fx the in-process check) |'
          % (gated / 1000, gated / ns))
    print('| one ungated lookup per round trip | %.1f µs |' % (plain / 1000))
    h = SIGNUPS // 2
    print('| sign-ups, always asking the server (%d, 90%% new) | %.1f µs each, %d lookups |' % (h, base[2], base[0]))
    print('| sign-ups, the copy first (%d, 90%% new) | %.1f µs each, %d lookups (%.1f%% of sign-ups; %d avoided), '
          '%d refused by the unique key |' % (h, withc[2], withc[0], 100.0 * withc[0] / h, h - withc[0], withc[1]))
    print('| refresh every second at 1,000 inserts/s (%d refreshes, %d rows) | %.0f bytes, %.1f ms each |'
          % (n, live, bytes_mean, ms_mean))
    print('| false negatives of keys committed before a refresh began | %d |' % misses)
    return 1 if misses else 0


if __name__ == '__main__':
    sys.exit(main())
