#!/usr/bin/env bash
# test/bench/guard_growth.sh — guards that grow by layers (`make bench-growth`).
# Never part of the pass/fail tests: it measures.
#
# One table of three bigint columns holding the same N keys (default
# 1,000,000), guarded at the same rate: k with a capacity of N/100 (it grows
# 100x, by layers), k2 with a capacity of N (sized in advance; its first
# layer takes about 85% of that before it grows once), k3 with 2N (what
# bloom_guard picks for a table of N rows).  The keys arrive in 100 INSERT
# statements.  Printed side by side for the three guards, at 1% and at
# 0.1%: layers, memory (bytes, bits per key, and the ratio to k2's), the
# false-positive rate measured on N bigint keys never inserted (and its
# ratio to the target), the keys answered "no" (must be 0), and the builds
# after the first (0: growth read no table), with the load average at the
# start and the end.  Sizes and rates do not depend on the load.
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
	"shared_preload_libraries = 'bloomfilter'" \
	"bloomfilter.shared_memory = $(((ROWS * 24 / 1000000) + 64))" \
	"shared_buffers = 256MB" \
	"max_wal_size = 4GB" \
	"jit = off"
load_start=$(bf_loadavg)

q() { bf_psql -At -d postgres -c "$1"; }
q "CREATE EXTENSION bloomfilter" >/dev/null

batch=$((ROWS / 100))
echo "guard growth: $ROWS keys in 100 INSERTs; load average at the start: $load_start"
echo
echo "| target | guard | capacity | layers | bytes | bits/key | bytes (x capacity N) | measured FPR (x target) | keys answered \"no\" | builds after the first |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for fpr in 0.01 0.001; do
	t=g_${fpr#0.}
	q "CREATE TABLE $t (k bigint, k2 bigint, k3 bigint)" >/dev/null
	q "SELECT bloom_guard('$t', 'k', $fpr, $batch), bloom_guard('$t', 'k2', $fpr, $ROWS),
			  bloom_guard('$t', 'k3', $fpr, $((2 * ROWS)))" >/dev/null
	q "SELECT bloom_shared_wait('public.$t.k'), bloom_shared_wait('public.$t.k2'),
			  bloom_shared_wait('public.$t.k3')" >/dev/null
	q "CREATE TABLE ${t}_built AS SELECT name, last_build FROM bloom_shared_filters WHERE \"table\" = '$t'::regclass" >/dev/null
	for ((i = 0; i < 100; i++)); do
		q "INSERT INTO $t SELECT g, g, g FROM generate_series($((i * batch + 1)), $(((i + 1) * batch))) g" >/dev/null
	done
	q "
	WITH m AS (
		SELECT f.name, f.column, f.capacity, f.layers, f.memory_bytes,
			   (SELECT avg(bloom_shared_contains(f.name, -g)::int)::float8
				  FROM generate_series(1::bigint, $ROWS) g) AS fpr,
			   (SELECT count(*) FROM $t WHERE NOT bloom_shared_contains(f.name,
					CASE f.column WHEN 'k' THEN k WHEN 'k2' THEN k2 ELSE k3 END)) AS fn,
			   (f.last_build IS DISTINCT FROM b.last_build)::int AS rebuilt
		  FROM bloom_shared_filters f JOIN ${t}_built b USING (name))
	SELECT format('| %s%% | %s | %s | %s | %s | %s | %s | %s%% (%sx) | %s | %s |',
				  $fpr * 100,
				  CASE m.column WHEN 'k' THEN 'N/100, grown 100x'
					  WHEN 'k2' THEN 'N, sized in advance' ELSE '2N (the default)' END,
				  m.capacity, m.layers, m.memory_bytes,
				  round(m.memory_bytes * 8.0 / $ROWS, 2),
				  round(m.memory_bytes::numeric
					  / (SELECT memory_bytes FROM m s WHERE s.column = 'k2'), 2),
				  round((m.fpr * 100)::numeric, 4), round((m.fpr / $fpr)::numeric, 2),
				  m.fn, m.rebuilt)
	  FROM m ORDER BY m.column"
done
echo
echo "load average at the end: $(bf_loadavg)"
