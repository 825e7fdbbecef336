#!/usr/bin/env bash
# test/bench/shared_registration.sh — the shared-filter benchmark
# (`make bench-shared`).  Never part of the pass/fail tests: it measures, it
# does not judge.
#
# A registration workload against a users table of 1,000,000 names: 90% of
# transactions check whether a NEW name is taken, 10% register one (INSERT).
# Run with pgbench (-c 4 -j 2 -T 20, prepared statements) twice per round:
#   unguarded: the check is an index lookup every time
#              (username_taken_plain: EXISTS on the unique B-tree);
#   guarded:   the table is guarded by a shared filter and the check asks it
#              first, touching the table only on "maybe" (username_taken,
#              the function of the README guide).
# Prints one table, side by side, as ratios: TPS, latency, the share of
# lookups that reached the table (from the view bloom_shared_filters:
# 1 - negatives/checks over the guarded runs), server-side cost per lookup
# (no client round trip), and memory (the filter against the B-tree).
#
# Installs what is missing, builds and installs the extension, starts a
# throwaway server (test/lib.sh: temporary directory, postgres user, free
# port, unix socket only) with shared_preload_libraries = 'bloomfilter',
# and removes it on exit.  About 2–3 minutes on 2 cores with the defaults.
#
# Options (or the environment variables in brackets):
#   --rows N       names in each table [BF_BENCH_SHARED_ROWS, 1000000]
#   --10m          10,000,000 names (a few minutes more for the load)
#   --seconds S    pgbench -T per run [BF_BENCH_SHARED_SECONDS, 20]
#   --clients C    pgbench -c [BF_BENCH_SHARED_CLIENTS, 4]
#   --jobs J       pgbench -j [BF_BENCH_SHARED_JOBS, 2]
#   --rounds R     unguarded + guarded runs, alternating [BF_BENCH_SHARED_ROUNDS, 2]
#   --quick        100,000 names, 5 s runs, 1 round: checks that it runs
#   --no-build     do not build and install (use the installed extension)
# and BF_KEEP_TMP=1, BF_PORT_BASE, BF_EXTRA_CONF (see test/lib.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh

ROWS=${BF_BENCH_SHARED_ROWS:-1000000}
SECS=${BF_BENCH_SHARED_SECONDS:-20}
CLIENTS=${BF_BENCH_SHARED_CLIENTS:-4}
JOBS=${BF_BENCH_SHARED_JOBS:-2}
ROUNDS=${BF_BENCH_SHARED_ROUNDS:-2}
BUILD=1
while (($#)); do
	case $1 in
	--rows) ROWS=$2; shift ;;
	--10m) ROWS=10000000 ;;
	--seconds) SECS=$2; shift ;;
	--clients) CLIENTS=$2; shift ;;
	--jobs) JOBS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--quick) ROWS=100000 SECS=5 ROUNDS=1 ;;
	--no-build) BUILD=0 ;;
	-h | --help) bf_usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) bf_err "unrecognized option $1 (see --help)"; exit 2 ;;
	esac
	shift
done
bf_require_positive ROWS SECS CLIENTS JOBS ROUNDS

bf_server_traps

START=$SECONDS
if ((BUILD)); then
	bf_ensure_packages
	bf_build_install
fi

# The filter at 1% takes ~1.2 bytes per key, twice during a rebuild; the
# pool is sized for the table with room to grow.
pool_mb=$(((ROWS * 4 / 1000000) + 64))
bf_start_server \
	"shared_preload_libraries = 'bloomfilter'" \
	"bloomfilter.shared_memory = $pool_mb" \
	"shared_buffers = 1GB" \
	"max_connections = 50" \
	"max_wal_size = 8GB" \
	"checkpoint_timeout = 30min" \
	"autovacuum = off" \
	"jit = off"

load_start=$(bf_loadavg)
if awk -v l="${load_start%% *}" -v n="$(nproc 2>/dev/null || echo 2)" 'BEGIN { exit !(l + 0 > n / 2) }'; then
	bf_warn "load average $load_start on $(nproc 2>/dev/null || echo '?') CPUs: other work is running; the figures will be noisy"
fi

SQL=test/bench/shared_registration.sql
bf_psql -q -d postgres -c "CREATE DATABASE bench"
bf_say "setup: two tables of $ROWS names, the guard, server-side lookups ($SQL)"
bf_psql -q -d bench -v step=setup -v rows="$ROWS" -f "$SQL"

# pgbench scripts: 9 checks of a new (random, absent) name for 1 insert.
W=$BF_TMP/pgbench
mkdir -p "$W"
cat >"$W/plain_check.sql" <<'EOF'
\set r random(1, 1000000000)
SELECT username_taken_plain('new-' || :client_id || '-' || :r);
EOF
cat >"$W/plain_insert.sql" <<'EOF'
INSERT INTO users_plain (username) VALUES ('reg-' || nextval('reg_plain'));
EOF
cat >"$W/guarded_check.sql" <<'EOF'
\set r random(1, 1000000000)
SELECT username_taken('new-' || :client_id || '-' || :r);
EOF
cat >"$W/guarded_insert.sql" <<'EOF'
INSERT INTO users_guarded (username) VALUES ('reg-' || nextval('reg_guarded'));
EOF

VIEW_Q="SELECT checks || ' ' || negatives FROM bloom_shared_filters WHERE name = 'public.users_guarded.username'"

run_pgbench() {
	local variant=$1 round=$2 out before after tps lat tx failed
	bf_say "round $round: $variant, pgbench -c $CLIENTS -j $JOBS -T $SECS"
	before=$(bf_psql -At -d bench -c "$VIEW_Q")
	out=$("$PG_BINDIR/pgbench" -n -M prepared -c "$CLIENTS" -j "$JOBS" -T "$SECS" \
		-f "$W/${variant}_check.sql@9" -f "$W/${variant}_insert.sql@1" bench 2>&1) || {
		echo "$out"
		bf_err "pgbench failed"
		return 1
	}
	after=$(bf_psql -At -d bench -c "$VIEW_Q")
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | tail -n 1)
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -n 1)
	tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)
	local checks=NULL negatives=NULL
	if [[ $variant == guarded ]]; then
		checks=$(( ${after% *} - ${before% *} ))
		negatives=$(( ${after#* } - ${before#* } ))
	fi
	printf '    tps %s, latency %s ms, %s transactions\n' "${tps:-?}" "${lat:-?}" "${tx:-?}"
	bf_psql -q -d bench -c "INSERT INTO bench_runs VALUES ('$variant', $round, ${tps:-NULL}, ${lat:-NULL},
		${tx:-NULL}, ${failed:-0}, $checks, $negatives)"
}

for ((round = 1; round <= ROUNDS; round++)); do
	run_pgbench plain "$round"
	run_pgbench guarded "$round"
done

echo
echo "Shared filter benchmark: $ROWS names per table; pgbench -M prepared -c $CLIENTS -j $JOBS -T $SECS," \
	"$ROUNDS round(s); 90% checks of new names, 10% inserts; PostgreSQL $("$PG_BINDIR/postgres" -V | awk '{print $3}')," \
	"$(nproc 2>/dev/null || echo '?') CPUs, load average at start $load_start"
bf_psql -q -d bench -v step=report -f "$SQL"
bf_say "benchmark done in $((SECONDS - START)) s; load average at end $(bf_loadavg)"
