#!/usr/bin/env bash
# test/demo.sh — THE demo command (`bash test/demo.sh`, `make demo`).
#
# Installs what is missing, builds and installs the extension (as
# test/run-tests.sh does), starts a throwaway server (temporary directory,
# postgres user, free port, unix socket only), runs test/demo.sql in a fresh
# database, and stops the server and removes its directory on exit.
# About a minute on 2 cores.  Exits non-zero if any step fails, or if the
# demo sees a false negative.
#
# Environment: BF_KEEP_TMP=1 keeps the server's directory; BF_PORT_BASE,
# BF_EXTRA_CONF — see test/lib.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

bf_server_traps

bf_ensure_packages
bf_build_install

# Room for the 1M-row table and its index in memory, and no checkpoint in
# the middle of the load.
bf_start_server \
	"shared_buffers = 256MB" \
	"work_mem = 64MB" \
	"maintenance_work_mem = 256MB" \
	"max_wal_size = 4GB" \
	"checkpoint_timeout = 30min" \
	"track_functions = all" \
	"autovacuum = off"

bf_psql -q -d postgres -c "CREATE DATABASE demo"
bf_psql -q -d demo -f test/demo.sql
bf_stop_server

bf_say "guards where they pay: lookups that miss the cache, unguarded and gated"
BF_BENCH_NO_BUILD=1 BF_SEED_ROWS=${BF_DEMO_SEED_ROWS:-2000000} BF_SEED_MEM_MB=48 \
	BF_SEED_SECS=6 BF_SEED_ROUNDS=1 bash test/bench/seed.sh
