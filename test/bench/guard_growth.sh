#!/usr/bin/env bash
# test/bench/guard_growth.sh — guard indexes that grow by layers
# (`make bench-growth`).  Never part of the pass/fail tests: it measures.
#
# One table of three bigint columns holding the same N keys (default
# 1,000,000), each with a guard index (CREATE INDEX ... USING bloomguard)
# at the same rate, built on the empty table: k WITH (capacity = N/100) (it
# grows 100x, by layers), k2 WITH (capacity = N) (sized in advance), k3
# WITH (capacity = 2N) (what a guard built on a table of N rows picks
# without a capacity: twice the estimated rows).  The keys arrive in 100
# INSERT statements.  Printed side by side for the three guards, at 1% and
# at 0.1%: layers, size (bloom_guard_info's bytes, bits per key, and the
# ratio to k2's), the rate the guard's fill predicts (estimated_fpr) and the
# false-positive rate measured with bloom_guard_contains on N bigint keys
# never inserted (and its ratio to the target), the keys answered "no"
# (must be 0), and whether the index was rebuilt (its relfilenode changed;
# 0: growth read no table), with the load average at the start and the
# end.  Sizes and rates do not depend on the load.
#
# Options (or the environment variables in brackets):
#   --rows N       keys [BF_BENCH_GROWTH_ROWS, 1000000]
#   --quick        100,000 keys: checks that it runs
#   --no-build     do not build and install (use the installed extension)
# and BF_KEEP_TMP=1, BF_PORT_BASE, BF_EXTRA_CONF (see test/lib.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh

ROWS=${BF_BENCH_GROWTH_ROWS:-1000000}
BUILD=1
while (($#)); do
	case $1 in
	--rows) ROWS=$2; shift ;;
	--quick) ROWS=100000 ;;
	--no-build) BUILD=0 ;;
	-h | --help) bf_usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) bf_err "unrecognized option $1 (see --help)"; exit 2 ;;
	esac
	shift
done
bf_require_positive ROWS
if ((ROWS < 10000)); then
	bf_err "ROWS must be at least 10000 (got $ROWS)"
	exit 2
fi

bf_server_traps

if ((BUILD)); then
	bf_ensure_packages
	bf_build_install
fi
bf_start_server \
	"shared_buffers = 256MB" \
	"max_wal_size = 4GB" \
	"jit = off"
load_start=$(bf_loadavg)

q() { bf_psql -At -d postgres -c "$1"; }
q "CREATE EXTENSION bloomfilter" >/dev/null

batch=$((ROWS / 100))
echo "guard growth: $ROWS keys in 100 INSERTs; load average at the start: $load_start"
echo
echo "| target | guard | capacity | layers | bytes | bits/key | bytes (x capacity N) | estimated FPR | measured FPR (x target) | keys answered \"no\" | rebuilt |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for fpr in 0.01 0.001; do
	t=g_${fpr#0.}
	q "CREATE TABLE $t (k bigint, k2 bigint, k3 bigint)" >/dev/null
	q "CREATE INDEX ${t}_k ON $t USING bloomguard (k) WITH (fpr = $fpr, capacity = $batch)" >/dev/null
	q "CREATE INDEX ${t}_k2 ON $t USING bloomguard (k2) WITH (fpr = $fpr, capacity = $ROWS)" >/dev/null
	q "CREATE INDEX ${t}_k3 ON $t USING bloomguard (k3) WITH (fpr = $fpr, capacity = $((2 * ROWS)))" >/dev/null
	q "CREATE TABLE ${t}_built AS SELECT relname, relfilenode FROM pg_class WHERE relname LIKE '${t}\\_k%'" >/dev/null
	for ((i = 0; i < 100; i++)); do
		q "INSERT INTO $t SELECT g, g, g FROM generate_series($((i * batch + 1)), $(((i + 1) * batch))) g" >/dev/null
	done
	q "
	WITH m AS (
		SELECT a.attname AS col, f.capacity, f.layers, f.bytes, f.estimated_fpr,
			   (SELECT avg(bloom_guard_contains(i.indexrelid::regclass, -g)::int)::float8
				  FROM generate_series(1::bigint, $ROWS) g) AS fpr,
			   (SELECT count(*) FROM $t WHERE NOT bloom_guard_contains(i.indexrelid::regclass,
					CASE a.attname WHEN 'k' THEN k WHEN 'k2' THEN k2 ELSE k3 END)) AS fn,
			   (c.relfilenode IS DISTINCT FROM b.relfilenode)::int AS rebuilt
		  FROM pg_index i
		  JOIN pg_class c ON c.oid = i.indexrelid
		  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		  JOIN ${t}_built b ON b.relname = c.relname
		  CROSS JOIN LATERAL bloom_guard_info(i.indexrelid::regclass) f
		 WHERE i.indrelid = '$t'::regclass)
	SELECT format('| %s%% | %s | %s | %s | %s | %s | %s | %s%% | %s%% (%sx) | %s | %s |',
				  $fpr * 100,
				  CASE m.col WHEN 'k' THEN 'N/100, grown 100x'
					  WHEN 'k2' THEN 'N, sized in advance' ELSE '2N (the default for N rows)' END,
				  m.capacity, m.layers, m.bytes,
				  round(m.bytes * 8.0 / $ROWS, 2),
				  round(m.bytes::numeric / (SELECT bytes FROM m s WHERE s.col = 'k2'), 2),
				  round((m.estimated_fpr * 100)::numeric, 4),
				  round((m.fpr * 100)::numeric, 4), round((m.fpr / $fpr)::numeric, 2),
				  m.fn, m.rebuilt)
	  FROM m ORDER BY m.col"
done
echo
echo "load average at the end: $(bf_loadavg)"
