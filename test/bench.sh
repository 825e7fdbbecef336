#!/usr/bin/env bash
# test/bench.sh — the benchmark (`bash test/bench.sh`, `make bench`).  Never
# part of the pass/fail tests: it measures, it does not judge (a missed
# target is printed, not an error).
#
# Installs what is missing (the test dependencies, plus Debian's
# postgresql-15-hll for the build comparison), builds and installs the
# extension, starts a throwaway server (temporary directory, postgres user,
# free port, unix socket only; shared_buffers = 2GB, 2 parallel workers per
# gather, JIT off), runs
# test/bench/bench.sql in a fresh database and prints ONE table of the
# targets of the performance budget (doc/performance.md), each with its figure and its
# ratio, measured side by side in this run, with the load average at the
# start and the end.  Stops the server and removes its directory on exit.
#
# About 12–15 minutes on 2 busy cores (a 50M-row table and its B-tree are
# built); the server needs about 4 GB of memory and 5 GB of disk.
#
# Environment:
#   BF_BENCH_QUICK=1   small sizes (about 1/10, about 2 minutes; the 10 MB
#                      PL/pgSQL filter stays), to check that the script runs
#                      — the figures are then not the budget's
#   BF_BENCH_ADD_TIMEOUT  seconds allowed for the 100,000 PL/pgSQL adds
#                      (default 20; "timeout" is printed past it)
#   BF_BENCH_NO_BUILD=1  do not build and install the extension (use the
#                      installed one)
#   BF_KEEP_TMP=1, BF_PORT_BASE, BF_EXTRA_CONF — see test/lib.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

bf_server_traps

# The build comparison needs hll (Debian: postgresql-NN-hll); only the
# benchmark needs it, so it is installed here, not by test/lib.sh.
bench_ensure_hll() {
	local p="postgresql-$BF_PG_MAJOR-hll"
	bf_pkg_installed "$p" && return 0
	bf_say "installing $p (for the benchmark's hll comparison)"
	local apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$p")
	if bf_as_root "${apt[@]}" </dev/null; then
		return 0
	fi
	bf_say "install failed; running apt-get update and retrying"
	bf_as_root env DEBIAN_FRONTEND=noninteractive apt-get update </dev/null || return 1
	bf_as_root "${apt[@]}" </dev/null
}

START=$SECONDS
bf_ensure_packages
bench_ensure_hll
if [[ ${BF_BENCH_NO_BUILD:-0} != 1 ]]; then
	bf_build_install
fi

# Everything stays in shared buffers (the 10M-row table and its index, the
# 62 MB filter); no checkpoint or autovacuum in the middle of a timing; JIT
# off so that the large aggregates are not timed with a compilation.
bf_start_server \
	"shared_buffers = 2GB" \
	"work_mem = 64MB" \
	"maintenance_work_mem = 1GB" \
	"max_wal_size = 8GB" \
	"checkpoint_timeout = 30min" \
	"autovacuum = off" \
	"jit = off" \
	"max_parallel_workers_per_gather = 2"

# Sizes (psql variables of test/bench/bench.sql).
if [[ ${BF_BENCH_QUICK:-0} == 1 ]]; then
	bf_warn "BF_BENCH_QUICK=1: small sizes; these are not the performance budget's figures"
	n_m=100000 n_l=1000000 n_big=5000000
	sizes=(
		-v n_m=$n_m -v n_l=$n_l
		-v n_big=$n_big -v n_cand=50000 -v n_cand5=500000 -v n_absent=100000
		-v n_calls=500 -v n_detoast=5
		-v n_adds=100000 -v add_capacity=8000000
	)
else
	n_m=1000000 n_l=10000000 n_big=50000000
	sizes=(
		-v n_m=$n_m -v n_l=$n_l
		-v n_big=$n_big -v n_cand=500000 -v n_cand5=5000000 -v n_absent=1000000
		-v n_calls=2000 -v n_detoast=10
		-v n_adds=100000 -v add_capacity=8000000
	)
fi

# This machine's cost of one random cache-line read in a buffer of each
# filter's size, in 4 kB pages and in huge pages (a C program).
lat=()
if cc -O2 -o "$BF_TMP/memlat" test/bench/memlat.c 2>"$BF_TMP/memlat.log"; then
	# ~9.9 bits per key at 1%, blocked
	if out=$("$BF_TMP/memlat" $((n_m * 9896 / 8000)) $((n_l * 9896 / 8000)) $((n_big * 9896 / 8000))); then
		lat=(
			-v lat_m="$(awk 'NR == 1 { print $2 }' <<<"$out")"
			-v lat_l="$(awk 'NR == 2 { print $2 }' <<<"$out")"
			-v lat_big="$(awk 'NR == 3 { print $2 }' <<<"$out")"
			-v hlat_m="$(awk 'NR == 1 { print $3 }' <<<"$out")"
			-v hlat_l="$(awk 'NR == 2 { print $3 }' <<<"$out")"
			-v hlat_big="$(awk 'NR == 3 { print $3 }' <<<"$out")"
		)
	fi
else
	bf_warn "could not compile test/bench/memlat.c (no memory latency figures)"
fi

# Other work on the machine makes the figures noisy: say so in the table.
load_start=$(bf_loadavg)
if awk -v l="${load_start%% *}" -v n="$(nproc 2>/dev/null || echo 2)" 'BEGIN { exit !(l + 0 > n / 2) }'; then
	bf_warn "load average $load_start on $(nproc 2>/dev/null || echo '?') CPUs: other work is running; the figures will be noisy"
fi

bf_psql -q -d postgres -c "CREATE DATABASE bench"
bf_say "running test/bench/bench.sql"
bf_psql -q -d bench "${sizes[@]}" \
	-v add_timeout="${BF_BENCH_ADD_TIMEOUT:-20}" \
	-v quick="${BF_BENCH_QUICK:-0}" \
	"${lat[@]}" -v ncpu="$(nproc 2>/dev/null || echo '?')" \
	-f test/bench/bench.sql
bf_say "benchmark done in $((SECONDS - START)) s; load average at start $load_start, at end $(bf_loadavg)"
