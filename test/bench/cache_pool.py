"""test/bench/cache_pool.py: the memory of a pool of backends checking one
62 MB stored filter (run by test/bench/cache_pool.sh, which sets up the
server and the tables pf, keys (with guard index keys_guard) and cand).

For each form, BF_BACKENDS new connections each run, in turn (after a
query that loads the library):
  1. one check of one key;
  2. a query checking 100,000 keys (the filter is then read whole);
  3. the same query again;
and stay open.  Then the private memory of those backends (RssAnon, from
/proc: the anonymous memory that is theirs alone; shared buffers are not
in it) is summed, less what as many backends that ran `SELECT 1` hold.
Printed: that memory in all and per backend, and the median time of each
of the three queries.
"""
import os
import statistics
import time

import psycopg2

DB = os.environ.get('BF_DB', 'bench')
N = int(os.environ.get('BF_BACKENDS', '100'))

ONE = "SELECT bf @> 'k7'::text FROM pf WHERE name = 'big'"
MANY = ("SELECT count(*) FROM cand "
        "WHERE (SELECT bf FROM pf WHERE name = 'big') @> k")
GUARD_ONE = "SELECT bloom_guard_contains('keys_guard'::regclass, 'k7'::text)"
GUARD_MANY = ("SELECT count(*) FROM cand "
              "WHERE bloom_guard_contains('keys_guard'::regclass, k)")


def rss_anon_kb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('RssAnon:'):
                return int(line.split()[1])
    return 0


def timed(cur, q):
    t = time.perf_counter()
    cur.execute(q)
    cur.fetchall()
    return (time.perf_counter() - t) * 1000.0


def pool(setup, queries):
    """Open N connections, run setup and the queries in each, keep them
    open; return (sum of RssAnon in kB, [times per query])."""
    conns = []
    times = [[] for _ in queries]
    for _ in range(N):
        c = psycopg2.connect(dbname=DB)
        c.autocommit = True
        cur = c.cursor()
        # the library and the catalog caches first: not the filter's cost
        cur.execute("SELECT NULL::bloomfilter @> 'x'::text")
        for s in setup:
            cur.execute(s)
        for i, q in enumerate(queries):
            times[i].append(timed(cur, q))
        cur.execute('SELECT pg_backend_pid()')
        conns.append((c, cur.fetchone()[0]))
    total = sum(rss_anon_kb(pid) for _, pid in conns)
    for c, _ in conns:
        c.close()
    time.sleep(0.5)
    return total, [statistics.median(t) for t in times]


def main():
    print('load average at start: %.2f %.2f %.2f' % os.getloadavg())
    base, _ = pool([], ['SELECT 1'])
    rows = []
    forms = [
        ('stored filter, bloomfilter.cache_size default (8MB)', [], [ONE, MANY, MANY]),
        ('stored filter, bloomfilter.cache_size = 256MB (1.1)',
         ["SET bloomfilter.cache_size = '256MB'"], [ONE, MANY, MANY]),
        ('guard index (its pages in shared_buffers)', [], [GUARD_ONE, GUARD_MANY, GUARD_MANY]),
    ]
    for name, setup, queries in forms:
        kb, t = pool(setup, queries)
        rows.append((name, (kb - base) / 1024.0, t))
    print()
    print('%d backends, each: one check, then 100,000 checks twice; then idle' % N)
    print('| form | private memory of the idle backends | per backend | one check (first) | 100,000 checks, first | again |')
    print('|---|---|---|---|---|---|')
    for name, mb, t in rows:
        print('| %s | %.0f MB | %.1f MB | %.2f ms | %.1f ms | %.1f ms |'
              % (name, mb, mb / N, t[0], t[1], t[2]))
    print()
    print('load average at end: %.2f %.2f %.2f' % os.getloadavg())


if __name__ == '__main__':
    main()
