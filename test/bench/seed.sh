#!/usr/bin/env bash
# test/bench/seed.sh — the disk-bound lookup benchmark (`make bench-seed`).
# Never part of the pass/fail tests: it measures, it does not judge.
#
# "Is this username taken?" where it pays: a users table whose heap and
# unique B-tree are several times the memory the server may use, on a disk
# where a read that misses the cache costs about a millisecond.  One table of
# ROWS usernames (the even numbers 2, 4, ..., as text) with its unique B-tree
# and a guard index sized for them (capacity ROWS, 1%: 1.5 bytes a name, small
# enough to stay in shared buffers); lookups of 90% absent names drawn from the same key
# space (the odd numbers: they land on the same leaf pages as present ones,
# as real new names do), one unchanged statement for both runs:
#
#     SELECT EXISTS (SELECT 1 FROM users WHERE username = $1)
#
# with bloomfilter.planner_guards off (unguarded: every lookup descends the
# B-tree) and on (guarded: the planner's gate answers "no" from the guard's
# pages, which stay cached).  pgbench -M prepared, CLIENTS clients, ROUNDS
# rounds of SECS seconds each way, alternating which goes first; prints TPS
# and per-lookup latency (median, p99) side by side, their ratios, the sizes,
# the load average, and a check that no present name answers "no" (the one
# outcome that fails the script).
#
# The data are loaded, then the server restarts inside a memory cgroup
# (MEM_MB: its shared buffers, backends and page cache together) and a blkio
# cgroup throttling reads of the data's disk to IOPS per second, after the
# kernel's page cache was dropped.  Where cgroups v1 (memory, blkio) cannot
# be used (not root, no such hierarchy), it says so and runs unlimited: then
# the table is cached and the figures show the cached case, where the round
# trip dominates.
#
# Environment (defaults sized for a 2-core machine, about 6 minutes):
#   BF_SEED_ROWS (10000000), BF_SEED_MEM_MB (128), BF_SEED_IOPS (1000),
#   BF_SEED_CLIENTS (4), BF_SEED_SECS (20), BF_SEED_ROUNDS (2),
#   BF_BENCH_NO_BUILD=1 (use the installed extension), and those of test/lib.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. test/lib.sh
ROWS=${BF_SEED_ROWS:-10000000} MEM_MB=${BF_SEED_MEM_MB:-128} IOPS=${BF_SEED_IOPS:-1000}
CLIENTS=${BF_SEED_CLIENTS:-4} SECS=${BF_SEED_SECS:-20} ROUNDS=${BF_SEED_ROUNDS:-2}
bf_require_positive ROWS MEM_MB IOPS CLIENTS SECS ROUNDS
CG=bf_seed_$$
MEMCG=/sys/fs/cgroup/memory/$CG BLKCG=/sys/fs/cgroup/blkio/$CG
cleanup_cgroups() {
	local d
	for d in "$MEMCG" "$BLKCG"; do
		[[ -d $d ]] && rmdir "$d" 2>/dev/null || true
	done
}
bf_server_traps
trap 'bf_stop_server; cleanup_cgroups' EXIT
if [[ ${BF_BENCH_NO_BUILD:-0} != 1 ]]; then bf_ensure_packages; bf_build_install; fi
load_start=$(bf_loadavg)
sb_mb=$((MEM_MB / 4))
bf_start_server "shared_buffers = ${sb_mb}MB" "max_wal_size = 4GB" "autovacuum = off" \
	"jit = off" "max_parallel_workers_per_gather = 0" "session_preload_libraries = 'bloomfilter'"
q() { bf_psql -qAt -d postgres -c "$1"; }

bf_say "loading $ROWS usernames"
q "CREATE EXTENSION bloomfilter"
q "CREATE TABLE users (id bigint NOT NULL, username text NOT NULL)"
q "INSERT INTO users SELECT i, (2 * i)::text FROM generate_series(1, $ROWS) i"
q "ALTER TABLE users ADD PRIMARY KEY (id)"
q "CREATE UNIQUE INDEX users_username ON users (username)"
q "CREATE INDEX users_username_guard ON users USING bloomguard (username) WITH (capacity = $ROWS)"
q "VACUUM ANALYZE users"
missing=$(q "SELECT count(*) FROM generate_series(1, $ROWS, greatest(1, $ROWS / 200000)) i
	WHERE NOT bloom_guard_contains('users_username_guard', (2 * i)::text)")
sizes=$(q "SELECT format('heap %s MB, unique B-tree %s MB, guard %s MB',
	pg_relation_size('users') / 1000000, pg_relation_size('users_username') / 1000000,
	round(pg_relation_size('users_username_guard') / 1e6, 1))")
bf_say "$sizes; present names answering \"no\": $missing"

# Restart inside the cgroups, the page cache dropped.
limited=no
bf_as_pg "$PG_BINDIR/pg_ctl" -D "$BF_TMP/data" -w -m fast stop >/dev/null
dev=$(lsblk -no MAJ:MIN "$(df --output=source "$BF_TMP" | tail -1)" 2>/dev/null | head -1 | tr -d ' ') || dev=
if [[ $EUID -eq 0 && -d /sys/fs/cgroup/memory && -d /sys/fs/cgroup/blkio && -n $dev ]] &&
	mkdir -p "$MEMCG" "$BLKCG" 2>/dev/null &&
	echo $((MEM_MB * 1024 * 1024)) >"$MEMCG/memory.limit_in_bytes" 2>/dev/null &&
	echo "$dev $IOPS" >"$BLKCG/blkio.throttle.read_iops_device" 2>/dev/null; then
	limited=yes
	sync
	echo 3 >/proc/sys/vm/drop_caches || true
	bash -c "echo \$\$ >'$MEMCG/cgroup.procs' && echo \$\$ >'$BLKCG/cgroup.procs' &&
		exec runuser -u postgres -- '$PG_BINDIR/pg_ctl' -D '$BF_TMP/data' -l '$BF_TMP/server.log' -w start" >/dev/null
	setup="memory cgroup ${MEM_MB} MB (shared_buffers ${sb_mb} MB), reads of $dev throttled to $IOPS IOPS, page cache dropped"
else
	bf_warn "cgroups v1 (memory, blkio) not usable here: an unlimited run (the table cached: the round trip dominates)"
	bf_as_pg "$PG_BINDIR/pg_ctl" -D "$BF_TMP/data" -l "$BF_TMP/server.log" -w start >/dev/null
	setup="no cgroup (unlimited, cached), shared_buffers ${sb_mb} MB"
fi

W=$BF_TMP/seed
mkdir -p "$W"
chmod 777 "$W"
cat >"$W/lookup.sql" <<EOF
\\set r random(1, 10)
\\set n 2 * random(1, $ROWS) - (CASE WHEN :r = 1 THEN 0 ELSE 1 END)
SELECT EXISTS (SELECT 1 FROM users WHERE username = :n);
EOF
plan=$(PGOPTIONS="-c plan_cache_mode=force_generic_plan" bf_psql -qAt -d postgres \
	-c "PREPARE p(text) AS SELECT EXISTS (SELECT 1 FROM users WHERE username = \$1)" \
	-c "EXPLAIN (COSTS OFF) EXECUTE p('1')" | tr '\n' ';' | sed 's/  */ /g')
bf_say "the guarded lookup's plan: $plan"

# One run: "TPS median_us p99_us" of pgbench with planner_guards $1.
run() {
	local guards=$1 secs=$2 tag=$3 out tps
	rm -f "$W"/log."$tag".*
	out=$(cd "$W" && PGOPTIONS="-c bloomfilter.planner_guards=$guards" BF_SUITE_TIMEOUT=$((secs + 120)) bf_timeout \
		"$PG_BINDIR/pgbench" -n -M prepared -c "$CLIENTS" -j 2 -T "$secs" -f "$W/lookup.sql" \
		--log --log-prefix="$W/log.$tag" postgres 2>&1) || { echo "$out" >&2; return 1; }
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
	cat "$W"/log."$tag".* | awk '{print $3}' | sort -n | awk -v tps="$tps" '
		{ v[NR] = $1 }
		END { printf "%s %d %d\n", tps, v[int((NR + 1) / 2)], v[int(NR * 0.99 + 0.5)] }'
}

bf_say "warm-up: ${SECS}/4 s each way"
run off $((SECS / 4 + 1)) warm-off >/dev/null
run on $((SECS / 4 + 1)) warm-on >/dev/null
echo
echo "bench-seed: $ROWS usernames, lookups 90% absent from the same key space; $sizes"
echo "setup: $setup; pgbench -M prepared -c $CLIENTS -T $SECS, $ROUNDS rounds each way, alternating"
echo "load average at start $load_start"
echo
echo "| round | unguarded TPS | guarded TPS | ratio | unguarded median / p99 µs | guarded median / p99 µs |"
echo "|---|---|---|---|---|---|"
sum_off=0 sum_on=0
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then
		read -r t_off m_off p_off < <(run off "$SECS" "off$r")
		read -r t_on m_on p_on < <(run on "$SECS" "on$r")
	else
		read -r t_on m_on p_on < <(run on "$SECS" "on$r")
		read -r t_off m_off p_off < <(run off "$SECS" "off$r")
	fi
	sum_off=$(awk -v a="$sum_off" -v b="$t_off" 'BEGIN { print a + b }')
	sum_on=$(awk -v a="$sum_on" -v b="$t_on" 'BEGIN { print a + b }')
	printf '| %d | %.0f | %.0f | %.1f× | %d / %d | %d / %d |\n' "$r" "$t_off" "$t_on" \
		"$(awk -v a="$t_on" -v b="$t_off" 'BEGIN { print a / b }')" "$m_off" "$p_off" "$m_on" "$p_on"
done
echo
printf 'guarded / unguarded TPS over %d rounds: %.1f× (%s)\n' "$ROUNDS" \
	"$(awk -v a="$sum_on" -v b="$sum_off" 'BEGIN { print a / b }')" \
	"$([[ $limited == yes ]] && echo disk-bound || echo cached)"
echo "present names answering \"no\" (sampled): $missing"
echo "load average at end $(bf_loadavg)"
# a false negative is a defect, not a figure
[[ $missing == 0 ]]
