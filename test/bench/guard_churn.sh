#!/usr/bin/env bash
# test/bench/guard_churn.sh — a guard index under 50/50 insert/delete churn
# (`make bench-churn`).  Never part of the pass/fail tests: it measures, it
# does not judge.  A table of ROWS random bigint keys with a guard index
# (fpr 1%, default capacity: twice the rows); each round inserts CHURN new
# random keys, deletes CHURN random rows, VACUUMs, then prints the rows, the
# guard's keys set, layers and estimated rate (bloom_guard_info), the rate
# measured by bloom_guard_contains on 100,000 keys never inserted, and its
# ratio to the target, and the index file's pages.  VACUUM builds the guard
# again when it holds twice as many keys as the table has rows (the keys set
# drop back to the rows); each rebuild appends a layer to the file (REINDEX
# compacts it).  Environment: BF_BENCH_CHURN_ROWS (1000000),
# BF_BENCH_CHURN_KEYS (CHURN, ROWS/10), BF_BENCH_CHURN_ROUNDS (10),
# BF_BENCH_NO_BUILD=1 (use the installed extension), and those of test/lib.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. test/lib.sh
ROWS=${BF_BENCH_CHURN_ROWS:-1000000} ROUNDS=${BF_BENCH_CHURN_ROUNDS:-10}
CHURN=${BF_BENCH_CHURN_KEYS:-$((ROWS / 10))}
bf_require_positive ROWS ROUNDS CHURN
bf_server_traps
if [[ ${BF_BENCH_NO_BUILD:-0} != 1 ]]; then bf_ensure_packages; bf_build_install; fi
bf_start_server "shared_buffers = 256MB" "max_wal_size = 4GB" "autovacuum = off" "jit = off"
q() { bf_psql -qAt -d postgres -c "$1"; }
rnd="1 + (random() * 1e15)::bigint"	# keys > 0; the absent ones probed are < 0
q "CREATE EXTENSION bloomfilter; CREATE TABLE t (k bigint); INSERT INTO t SELECT $rnd FROM generate_series(1, $ROWS); ANALYZE t"
q "CREATE INDEX g ON t USING bloomguard (k) WITH (fpr = 0.01)"
echo "guard churn: $ROWS keys, $CHURN inserts + $CHURN deletes per round; load average at start $(bf_loadavg)"
echo "| round | rows | keys set | layers | estimated FPR | measured FPR | x target | file pages |"
echo "|---|---|---|---|---|---|---|---|"
for ((r = 0; r <= ROUNDS; r++)); do
	((r > 0)) && q "INSERT INTO t SELECT $rnd FROM generate_series(1, $CHURN);
		DELETE FROM t WHERE ctid = ANY (ARRAY(SELECT ctid FROM t ORDER BY random() LIMIT $CHURN))" && q "VACUUM t"
	q "SELECT format('| %s | %s | %s | %s | %s%% | %s%% | %s | %s |', $r, (SELECT count(*) FROM t), added, layers,
		round(100 * estimated_fpr::numeric, 3), round(100 * m, 3), round(m / target_fpr::numeric, 2),
		pg_relation_size('g') / 8192)
		FROM bloom_guard_info('g'), (SELECT avg(bloom_guard_contains('g', -g)::int) AS m FROM generate_series(1::bigint, 100000) g) s"
done
echo "load average at end $(bf_loadavg)"
