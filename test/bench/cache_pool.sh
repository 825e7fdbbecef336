#!/usr/bin/env bash
# test/bench/cache_pool.sh — memory of a pool of backends that check one
# large stored filter (`make bench-pool`).  Never part of the pass/fail
# tests: it measures.
#
# A throwaway server with a 62 MB stored filter (capacity 50M at 1%) and the
# same keys under a guard index of that capacity; then
# test/bench/cache_pool.py opens BF_BACKENDS connections (default 100), has
# each check the filter (one key, then 100,000 keys, then the 100,000 again)
# and reports, per setting of bloomfilter.cache_size (the default and 256MB,
# 1.1's default) and for the guard index: the private memory the idle
# backends hold afterwards, and the first and next queries' times; with the
# load average at the start and the end.
# Options (or the environment variables in brackets):
#   --backends N  connections [BF_BACKENDS, 100]
#   --quick       10 connections
#   --no-build    use the installed extension [BF_BENCH_NO_BUILD=1]
# About two minutes on 2 cores with the defaults; the server needs about
# 7 GB of memory for 100 backends at 256MB.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh

export BF_BACKENDS=${BF_BACKENDS:-100}
BUILD=1
[[ ${BF_BENCH_NO_BUILD:-0} == 1 ]] && BUILD=0
while (($#)); do
	case $1 in
	--backends) BF_BACKENDS=$2; shift ;;
	--quick) BF_BACKENDS=10 ;;
	--no-build) BUILD=0 ;;
	-h | --help) bf_usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) bf_err "unrecognized option $1 (see --help)"; exit 2 ;;
	esac
	shift
done
bf_require_positive BF_BACKENDS

bf_server_traps
if ((BUILD)); then
	bf_ensure_packages
	bf_build_install
fi
bf_start_server "shared_buffers = 512MB" "max_connections = $((BF_BACKENDS + 20))" \
	"jit = off" "max_parallel_workers_per_gather = 0"
bf_psql -q -d postgres -c "CREATE DATABASE bench"
bf_say "setup: a 62 MB stored filter and a guard index of the same capacity"
bf_psql -q -d bench <<'SQL'
CREATE EXTENSION bloomfilter;
CREATE TABLE pf (name text PRIMARY KEY, bf bloomfilter);
INSERT INTO pf SELECT 'big', bloom_agg('k' || i, 50000000, 0.01) FROM generate_series(1, 500000) i;
CREATE TABLE keys (k text NOT NULL);
INSERT INTO keys SELECT 'k' || i FROM generate_series(1, 500000) i;
CREATE INDEX keys_guard ON keys USING bloomguard (k) WITH (capacity = 50000000, fpr = 0.01);
CREATE TABLE cand AS SELECT 'k' || (i * 7) AS k FROM generate_series(1, 100000) i;
VACUUM ANALYZE pf, keys, cand;
SQL
export BF_DB=bench
py=/usr/bin/python3
[[ -x $py ]] || py=python3
"$py" test/bench/cache_pool.py
