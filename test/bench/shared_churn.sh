#!/usr/bin/env bash
# test/bench/shared_churn.sh — counting and cuckoo guards under insert/delete
# churn (`make bench-churn`).  Never part of the pass/fail tests: it measures.
#
# A table of N rows (default 1,000,000) whose three columns hold the same
# keys: k is guarded with layout 'counting', k2 with the default 'blocked',
# k3 with 'cuckoo', all sized for N keys at 1%.  pgbench (-c 4 -j 2 -T 60) then inserts a new
# row or deletes an existing one, 50/50 (so the table keeps about N rows),
# while a fifth client (a second pgbench) runs REPEATABLE READ checkers: each
# takes its snapshot, sleeps 100 ms while the others delete, then checks the
# rows of a window its snapshot sees against the three filters and records any
# "no".
# Printed side by side for the three guards: the false-positive rate on
# 1,000,000 keys never inserted before and after the churn (ratio to the
# target), on the deleted keys, the false negatives over every row and
# from the checkers, the rebuilds during the churn, keys removed and
# removals dropped, with the load average at the start and the end.
#
# Options (or the environment variables in brackets):
#   --rows N       rows [BF_BENCH_CHURN_ROWS, 1000000]
#   --seconds S    pgbench -T [BF_BENCH_CHURN_SECONDS, 60]
#   --quick        100,000 rows, 10 s: checks that it runs
#   --no-build     do not build and install (use the installed extension)
# and BF_KEEP_TMP=1, BF_PORT_BASE, BF_EXTRA_CONF (see test/lib.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh

ROWS=${BF_BENCH_CHURN_ROWS:-1000000}
SECS=${BF_BENCH_CHURN_SECONDS:-60}
BUILD=1
while (($#)); do
	case $1 in
	--rows) ROWS=$2; shift ;;
	--seconds) SECS=$2; shift ;;
	--quick) ROWS=100000 SECS=10 ;;
	--no-build) BUILD=0 ;;
	-h | --help) bf_usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) bf_err "unrecognized option $1 (see --help)"; exit 2 ;;
	esac
	shift
done
bf_require_positive ROWS SECS

bf_server_traps

START=$SECONDS
if ((BUILD)); then
	bf_ensure_packages
	bf_build_install
fi
bf_start_server \
	"shared_preload_libraries = 'bloomfilter'" \
	"bloomfilter.shared_memory = $(((ROWS * 16 / 1000000) + 64))" \
	"shared_buffers = 512MB" \
	"max_connections = 50" \
	"max_wal_size = 4GB" \
	"jit = off"
load_start=$(bf_loadavg)

q() { bf_psql -At -d postgres -c "$1"; }
# (keys of the column's type, bigint: an integer key is also tested in its
# other forms, a second probe that doubles the rate)
fpr() {	# share of N keys never inserted that answer "maybe", per filter
	q "SELECT round(avg(bloom_shared_contains('public.churn.$1', (-g)::bigint)::int)::numeric, 5)
	     FROM generate_series(1, 1000000) g"
}

bf_say "setup: $ROWS rows, three guards (counting on k, blocked on k2, cuckoo on k3)"
q "CREATE EXTENSION bloomfilter" >/dev/null
q "CREATE TABLE churn (id bigint PRIMARY KEY, k bigint NOT NULL, k2 bigint NOT NULL, k3 bigint NOT NULL)" >/dev/null
q "INSERT INTO churn SELECT g, g, g, g FROM generate_series(1, $ROWS) g" >/dev/null
q "CREATE SEQUENCE ids START $((ROWS + 1))" >/dev/null
q "CREATE TABLE fails (n bigint)" >/dev/null
q "VACUUM ANALYZE churn" >/dev/null
q "SELECT bloom_guard('churn', 'k', 0.01, $ROWS, layout => 'counting'),
          bloom_guard('churn', 'k2', 0.01, $ROWS),
          bloom_guard('churn', 'k3', 0.01, $ROWS, layout => 'cuckoo')" >/dev/null
q "SELECT bloom_shared_wait('public.churn.k'), bloom_shared_wait('public.churn.k2'),
          bloom_shared_wait('public.churn.k3')" >/dev/null
fpr_k_before=$(fpr k)
fpr_k2_before=$(fpr k2)
fpr_k3_before=$(fpr k3)
built() { q "SELECT last_build FROM bloom_shared_filters WHERE name = 'public.churn.$1'"; }
built_k=$(built k) built_k2=$(built k2) built_k3=$(built k3)

W=$BF_TMP/pgbench
mkdir -p "$W"
cat >"$W/insert.sql" <<'EOF'
INSERT INTO churn SELECT v, v, v, v FROM nextval('ids') v;
EOF
cat >"$W/delete.sql" <<EOF
\set r random(1, $ROWS)
DELETE FROM churn WHERE id = (SELECT id FROM churn WHERE id >= :r ORDER BY id LIMIT 1);
EOF
cat >"$W/check.sql" <<EOF
\set r random(1, $ROWS)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM churn WHERE id BETWEEN :r AND :r + 200;
\sleep 100 ms
INSERT INTO fails SELECT count(*) FROM churn
 WHERE id BETWEEN :r AND :r + 200
   AND NOT (bloom_shared_contains('public.churn.k', k) AND bloom_shared_contains('public.churn.k2', k2)
            AND bloom_shared_contains('public.churn.k3', k3))
HAVING count(*) > 0;
COMMIT;
EOF
bf_say "churn: pgbench -c 4 -j 2 -T $SECS, 50% inserts, 50% deletes; one more client runs REPEATABLE READ checkers"
"$PG_BINDIR/pgbench" -n -c 1 -T "$SECS" -f "$W/check.sql" postgres >"$W/check.out" 2>&1 &
checker=$!
out=$("$PG_BINDIR/pgbench" -n -c 4 -j 2 -T "$SECS" \
	-f "$W/insert.sql@1" -f "$W/delete.sql@1" postgres 2>&1) || {
	echo "$out"
	bf_err "pgbench failed"
	exit 1
}
if ! wait "$checker"; then
	cat "$W/check.out"
	bf_err "the checkers' pgbench failed"
	exit 1
fi
checks=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$W/check.out" | tail -n 1)
tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | tail -n 1)
bf_say "waiting for the removal queue to drain"
for _ in $(seq 1 120); do
	[[ $(q "SELECT sum(removals_pending) FROM bloom_shared_filters") == 0 ]] && break
	sleep 1
done

rows_now=$(q "SELECT count(*) FROM churn")
deleted=$(q "SELECT count(*) FROM generate_series(1, $ROWS) g WHERE NOT EXISTS (SELECT 1 FROM churn WHERE id = g)")
inserted=$(q "SELECT last_value - $ROWS FROM ids")
fn() { q "SELECT count(*) FROM churn WHERE NOT bloom_shared_contains('public.churn.$1', $1)"; }
del_fpr() {
	q "SELECT round(avg(bloom_shared_contains('public.churn.$1', g::bigint)::int)::numeric, 5)
	     FROM generate_series(1, $ROWS) g WHERE NOT EXISTS (SELECT 1 FROM churn WHERE id = g)"
}
rebuilt() { [[ $(built "$1") != "$2" ]] && echo yes || echo no; }
rebuilt_k=$(rebuilt k "$built_k") rebuilt_k2=$(rebuilt k2 "$built_k2") rebuilt_k3=$(rebuilt k3 "$built_k3")
fpr_k_after=$(fpr k)
fpr_k2_after=$(fpr k2)
fpr_k3_after=$(fpr k3)
ratio() { awk -v a="$1" 'BEGIN { printf "%.3f", a / 0.01 }'; }
view() { q "SELECT $2 FROM bloom_shared_filters WHERE name = 'public.churn.$1'"; }

echo
echo "Churn: $ROWS rows; pgbench -c 4 -j 2 -T $SECS: $inserted inserts, $deleted rows of the first $ROWS deleted," \
	"$rows_now rows at the end, ${tps:-?} tps; PostgreSQL $("$PG_BINDIR/postgres" -V | awk '{print $3}')," \
	"$(nproc 2>/dev/null || echo '?') CPUs, load average at start $load_start"
echo
removed() { view "$1" "keys_added || ' / ' || keys_removed || ' / ' || removals_dropped"; }
echo "| measurement (target FPR 1%) | counting guard (k) | blocked guard (k2) | cuckoo guard (k3) |"
echo "|---|---|---|---|"
echo "| FPR on 1M keys never inserted, before the churn | $fpr_k_before ($(ratio "$fpr_k_before")×) | $fpr_k2_before ($(ratio "$fpr_k2_before")×) | $fpr_k3_before ($(ratio "$fpr_k3_before")×) |"
echo "| the same after the churn | $fpr_k_after ($(ratio "$fpr_k_after")×) | $fpr_k2_after ($(ratio "$fpr_k2_after")×) | $fpr_k3_after ($(ratio "$fpr_k3_after")×) |"
echo "| \"maybe\" on the $deleted deleted keys | $(del_fpr k) | $(del_fpr k2) | $(del_fpr k3) |"
echo "| rebuilt during the churn | $rebuilt_k | $rebuilt_k2 | $rebuilt_k3 |"
echo "| keys in the filter / removed / removals dropped | $(removed k) | $(view k2 "keys_added || ' / - / -'") | $(removed k3) |"
echo "| rows answering \"no\" (all $rows_now rows) | $(fn k) | $(fn k2) | $(fn k3) |"
echo "| REPEATABLE READ checkers (of ${checks:-?}) that found a row answering \"no\" (any filter) | $(q "SELECT count(*) FROM fails") | | |"
echo "| memory | $(view k "pg_size_pretty(memory_bytes)") | $(view k2 "pg_size_pretty(memory_bytes)") | $(view k3 "pg_size_pretty(memory_bytes)") |"
echo
bf_say "done in $((SECONDS - START)) s; load average at end $(bf_loadavg)"
