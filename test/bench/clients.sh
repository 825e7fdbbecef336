#!/usr/bin/env bash
# test/bench/clients.sh — the client libraries' copy of a guard (`make
# bench-clients`).  Never part of the pass/fail tests: it measures.
#
# A throwaway server with users(username text UNIQUE) of BF_ROWS rows
# (default 1,000,000) and a guard users_guard; then test/bench/clients.py
# (Python: the copy's check in process against gated round trips, the
# registration workload with and without the copy, refreshes under 1,000
# inserts a second with their false negatives, memory) and
# test/bench/clients.js (Node: load, memory, check, round trip), printed as
# one table, with the load average at the start and the end.
# Options (or the environment variables in brackets):
#   --rows N      users [BF_ROWS, 1000000]
#   --quick       100,000 users, 4,000 sign-ups, 3 refreshes
#   --no-build    use the installed extension [BF_BENCH_NO_BUILD=1]
# About a minute on 2 cores with the defaults.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh

export BF_ROWS=${BF_ROWS:-1000000} BF_SIGNUPS=${BF_SIGNUPS:-20000} BF_SECONDS=${BF_SECONDS:-10}
BUILD=1
[[ ${BF_BENCH_NO_BUILD:-0} == 1 ]] && BUILD=0
while (($#)); do
	case $1 in
	--rows) BF_ROWS=$2; shift ;;
	--quick) BF_ROWS=100000 BF_SIGNUPS=4000 BF_SECONDS=3 ;;
	--no-build) BUILD=0 ;;
	-h | --help) bf_usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) bf_err "unrecognized option $1 (see --help)"; exit 2 ;;
	esac
	shift
done
bf_require_positive BF_ROWS

bf_server_traps
if ((BUILD)); then
	bf_ensure_packages
	bf_build_install
fi
(cd clients/node && npm ci --no-audit --no-fund --loglevel=error)
bf_start_server "shared_buffers = 512MB" "max_wal_size = 4GB" "jit = off"
load_start=$(bf_loadavg)
bf_psql -q -d postgres -c "CREATE DATABASE bench"
bf_say "setup: users of $BF_ROWS names, its guard"
bf_psql -q -d bench <<SQL
CREATE EXTENSION bloomfilter;
CREATE TABLE users (id bigserial, username text NOT NULL UNIQUE);
INSERT INTO users (username) SELECT 'user' || i FROM generate_series(1, $BF_ROWS) i;
CREATE INDEX users_guard ON users USING bloomguard (username);
VACUUM ANALYZE users;
SQL
export BF_DB=bench
py=/usr/bin/python3
[[ -x $py ]] || py=python3
bf_say "clients.py (Python) and clients.js (Node)"
"$py" test/bench/clients.py
node test/bench/clients.js
echo
echo "load average: $load_start at the start, $(bf_loadavg) at the end"
