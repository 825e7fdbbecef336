#!/usr/bin/env bash
# test/valgrind.sh (`make valgrind`): the regression suite against a server
# running under valgrind memcheck, the memory check inside the server that
# AddressSanitizer cannot give here (see test/sanitize.sh).  Every report
# with a frame in bloomfilter.so is a finding; the run fails on any.  Reports
# without one are PostgreSQL's own known noise (uninitialised padding written
# to the relcache init file and WAL: src/tools/valgrind.supp in PostgreSQL's
# source) and are only counted.  Debian's postgres is not built with
# USE_VALGRIND, so memcheck sees palloc chunks as parts of larger malloc
# blocks: it catches reads of uninitialised memory and accesses outside the
# blocks.  Takes about 2-3 minutes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. test/lib.sh

bf_ensure_packages
command -v valgrind >/dev/null || bf_as_root apt-get install -y --no-install-recommends valgrind
bf_build_install

BF_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-valgrind.XXXXXX")
[[ $EUID -eq 0 ]] && chown postgres:postgres "$BF_TMP"
pid=
cleanup() {
	if [[ -n $pid ]]; then
		bf_as_pg "$PG_BINDIR/pg_ctl" -D "$BF_TMP/data" -m fast -w -t 120 stop >/dev/null 2>&1 || true
	fi
	rm -rf "$BF_TMP"
}
trap cleanup EXIT

bf_as_pg "$PG_BINDIR/initdb" -D "$BF_TMP/data" -U postgres --auth=trust -E UTF8 \
	--locale=C.UTF-8 --no-sync >/dev/null
BF_PORT=$(bf_pick_port)
bf_say "starting postgres under valgrind on port $BF_PORT"
bf_as_pg bash -c "valgrind --quiet --leak-check=no --num-callers=40 \
	--log-file='$BF_TMP/vg.%p.log' '$PG_BINDIR/postgres' -D '$BF_TMP/data' \
	-c port=$BF_PORT -c unix_socket_directories='$BF_TMP' -c listen_addresses='' \
	-c max_parallel_workers_per_gather=0 -c fsync=off >'$BF_TMP/server.log' 2>&1 &"
pid=started
for _ in $(seq 1 120); do
	"$PG_BINDIR/pg_isready" -q -h "$BF_TMP" -p "$BF_PORT" && break
	sleep 1
done
export PGHOST=$BF_TMP PGPORT=$BF_PORT PGUSER=postgres

rc=0
make -C "$BF_REPO" installcheck PG_CONFIG="$PG_CONFIG_BIN" || rc=1
bf_as_pg "$PG_BINDIR/pg_ctl" -D "$BF_TMP/data" -m fast -w -t 120 stop >/dev/null || true
pid=

ours=$(grep -l "bloomfilter.so" "$BF_TMP"/vg.*.log 2>/dev/null || true)
others=$(cat "$BF_TMP"/vg.*.log | grep -cE "^==[0-9]+== [A-Z]" || true)
if [[ -n $ours ]]; then
	echo "valgrind: reports with a bloomfilter.so frame:"
	cat $ours
	rc=1
fi
echo "valgrind: $(echo "$ours" | grep -c . || true) report file(s) in bloomfilter.so; $others report line(s) elsewhere (PostgreSQL's known noise)"
if ((rc == 0)); then
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"
fi
exit "$rc"
