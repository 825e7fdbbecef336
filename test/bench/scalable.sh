#!/usr/bin/env bash
# test/bench/scalable.sh — scalable Bloom filters grown to 100 times their
# initial capacity, side by side with a blocked filter sized in advance for
# the same keys (test/bench/scalable.sql), on a throwaway server.
# BF_SCALABLE_N (default 1000000) keys added, as many absent keys checked;
# the initial capacity is 1/100 of that.  Never part of the test command.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. test/lib.sh

bf_server_traps

n=${BF_SCALABLE_N:-1000000}
bf_ensure_packages
bf_build_install
bf_start_server "shared_buffers = 512MB" "work_mem = 64MB" "autovacuum = off" "jit = off"
bf_psql -q -d postgres -c "CREATE DATABASE scalable_bench"
bf_psql -q -d scalable_bench -c "CREATE EXTENSION $BF_EXTENSION"
bf_psql -q -d scalable_bench -v n="$n" \
	-v load="$(bf_loadavg)" \
	-f test/bench/scalable.sql
echo "load average at the end: $(bf_loadavg)"
