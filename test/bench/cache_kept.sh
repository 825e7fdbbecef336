#!/bin/bash
# cache_kept.sh BINDIR PORT [RUNS]: a statement checking 500,000 candidates
# against a 62 MB stored filter, the first in a new backend (which reads the
# filter whole) against the next two (which use the kept copy), side by side
# in each of RUNS fresh sessions; prints ns/row above the same scan without
# the check, best of RUNS, and the load average at start and end.  Needs a
# running server (as user postgres) with the extension in database postgres;
# makes and drops tables ck_filter and ck_cand.
set -euo pipefail
bindir=$1 port=$2 runs=${3:-7}
psql_() { su postgres -c "$bindir/psql -X -q -v ON_ERROR_STOP=1 -h /tmp -p $port -d postgres" ; }
psql_ <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS ck_filter, ck_cand;
CREATE TABLE ck_filter (name text, bf bloomfilter)
	WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
INSERT INTO ck_filter SELECT 'big', bloom_agg('k' || i, 50000000) FROM generate_series(1, 500000) i;
CREATE TABLE ck_cand AS SELECT 'k' || (i * 7) AS k FROM generate_series(1, 500000) i;
VACUUM ANALYZE ck_cand;
SQL
q="SELECT count(*) FROM ck_cand WHERE (SELECT bf FROM ck_filter WHERE name = 'big') @> k;"
base="SELECT count(*) FROM ck_cand WHERE k IS NOT NULL;"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$runs"); do
	printf 'SET max_parallel_workers_per_gather = 0;\nSET jit = off;\nSET bloomfilter.cache_size = 256;\n%s\n\\timing on\n%s\n%s\n%s\n%s\n%s\n' \
		"$base" "$base" "$q" "$q" "$q" "$base" | psql_ | awk '/^Time/ {print $2}' | paste -sd' '
done | awk '{
	b = ($1 < $5 ? $1 : $5)
	if (NR == 1 || b < mb) mb = b
	for (i = 2; i <= 4; i++) if (NR == 1 || $i < m[i]) m[i] = $i
	printf "session %d: scan %.1f ms; check statements %.1f, %.1f, %.1f ms\n", NR, b, $2, $3, $4
}
END {
	printf "best of %d: first statement %.0f ns/row, second %.0f ns/row, third %.0f ns/row above the scan (%.1f ms); first/second %.2fx\n",
		NR, (m[2] - mb) * 1e6 / 500000, (m[3] - mb) * 1e6 / 500000, (m[4] - mb) * 1e6 / 500000, mb, (m[2] - mb) / (m[3] - mb)
}'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo 'DROP TABLE ck_filter, ck_cand;' | psql_
