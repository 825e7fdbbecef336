#!/usr/bin/env bash
# test/bench/variants.sh — bloomfilter (blocked), counting and cuckoo filters
# side by side at 1%, 0.1% and 0.01% (test/bench/variants.sql) on a
# throwaway server.  BF_VARIANTS_N (default 1000000) keys added, as many
# absent keys checked.  Never part of the test command.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. test/lib.sh

bf_server_traps

n=${BF_VARIANTS_N:-1000000}
bf_ensure_packages
bf_build_install
bf_start_server "shared_buffers = 1GB" "work_mem = 64MB" "autovacuum = off" "jit = off"
bf_psql -q -d postgres -c "CREATE DATABASE variants"
bf_psql -q -d variants -c "CREATE EXTENSION $BF_EXTENSION"
bf_psql -q -d variants -v n="$n" -v n_absent="$n" \
	-v load="$(bf_loadavg)" \
	-f test/bench/variants.sql
