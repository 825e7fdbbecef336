# shellcheck shell=bash
# test/lib.sh — shared by test/run-tests.sh, test/demo.sh and the benchmarks
# (test/bench.sh, test/bench/*.sh).  Source it; do not run it.  It installs
# what is missing, builds and installs the extension, and starts and stops a
# throwaway PostgreSQL server.
#
# After bf_start_server: BF_TMP (temporary directory: data/, server.log and
# the unix socket), BF_PORT, and PGHOST/PGPORT/PGUSER exported so that psql,
# pg_regress and pg_prove reach the throwaway server and nothing else.
#
# Knobs (environment): BF_PG_BINDIR (the bin directory of the PostgreSQL
# installation to build against and test on, default Debian's
# /usr/lib/postgresql/$BF_PG_MAJOR/bin; any installation with pg_config,
# pg_regress and the Perl TAP modules in its pgxs, and pgTAP, will do, e.g.
# the one test/pg-build.sh builds), BF_PG_MAJOR (default: that installation's
# major version, else 15), BF_PORT_BASE (first port probed, default 54321),
# BF_KEEP_TMP=1 (keep the temporary directory, e.g. to read the server log),
# BF_EXTRA_CONF (lines appended to postgresql.conf), BF_SUITE_TIMEOUT (seconds
# a test suite may run before it is killed and counted as failed, default
# 900).

BF_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${BF_PG_MAJOR:-} && -n ${BF_PG_BINDIR:-} && -x $BF_PG_BINDIR/pg_config ]]; then
	BF_PG_MAJOR=$("$BF_PG_BINDIR/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
fi
BF_PG_MAJOR=${BF_PG_MAJOR:-15}
BF_EXTENSION=${BF_EXTENSION:-bloomfilter}
PG_BINDIR=${BF_PG_BINDIR:-/usr/lib/postgresql/$BF_PG_MAJOR/bin}
PG_CONFIG_BIN=$PG_BINDIR/pg_config
# Debian's packaged server (its packages are installed when missing), or an
# installation of another origin (nothing of PostgreSQL is installed for it).
BF_PG_DEBIAN=0
[[ $PG_BINDIR == "/usr/lib/postgresql/$BF_PG_MAJOR/bin" ]] && BF_PG_DEBIAN=1

# The pgxs directory of the installation (lib/pgxs/src): pg_regress and the
# Perl TAP modules (PostgreSQL::Test::*) are under its test/.
bf_pgxs_src() {
	dirname "$(dirname "$("$PG_CONFIG_BIN" --pgxs)")"
}
BF_TMP=
BF_PORT=

bf_say()  { printf '==> %s\n' "$*"; }
bf_warn() { printf 'WARNING: %s\n' "$*" >&2; }
bf_err()  { printf 'ERROR: %s\n' "$*" >&2; }

# Run a command as root (sudo when we are not root).
bf_as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		bf_err "need root for: $* (and sudo is not installed)"
		return 1
	fi
}

# Run a command as the OS user that owns the throwaway server: postgres when
# we are root (initdb and postgres refuse to run as root), else ourselves.
# Runs in $BF_TMP (or /) so that a cwd the postgres user cannot read (/root)
# does not produce warnings.
bf_as_pg() {
	local dir=${BF_TMP:-/}
	if [[ $EUID -eq 0 ]]; then
		(cd "$dir" && runuser -u postgres -- "$@")
	else
		(cd "$dir" && "$@")
	fi
}

bf_pkg_installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

# Install, with apt-get, whatever of the build and test dependencies is
# missing.  Does nothing (and needs no root) when all are present; runs
# apt-get update only if an install fails without it.
bf_ensure_packages() {
	local want=(
		libtap-parser-sourcehandler-pgtap-perl
		libxxhash-dev
		libipc-run-perl
		python3
		python3-xxhash
		python3-psycopg2
	)
	# the Node client's tests: Debian's nodejs and npm, unless a node is there
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		want+=(nodejs npm)
	fi
	if ((BF_PG_DEBIAN)); then
		want+=("postgresql-$BF_PG_MAJOR" "postgresql-server-dev-$BF_PG_MAJOR"
			"postgresql-$BF_PG_MAJOR-pgtap")
	else
		bf_check_installation || return 1
	fi
	local missing=() p
	if ! command -v make >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
		missing+=(build-essential)
	fi
	if ! command -v dpkg-query >/dev/null 2>&1; then
		bf_err "this script expects Debian (dpkg/apt-get); install by hand: ${want[*]} make gcc"
		return 1
	fi
	for p in "${want[@]}"; do
		bf_pkg_installed "$p" || missing+=("$p")
	done
	if [[ ${#missing[@]} -eq 0 ]]; then
		bf_say "dependencies: all installed"
		return 0
	fi
	bf_say "installing missing packages: ${missing[*]}"
	# (waiting for dpkg's lock: test/pg-build.sh may be installing too)
	local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900
		install -y --no-install-recommends "${missing[@]}")
	if bf_as_root "${apt[@]}" </dev/null; then
		return 0
	fi
	bf_say "install failed; running apt-get update and retrying"
	bf_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 update </dev/null || return 1
	bf_as_root "${apt[@]}" </dev/null
}

# An installation not from Debian's packages (BF_PG_BINDIR): it must have
# what the suite uses, since nothing is installed into it here.
bf_check_installation() {
	local sharedir pgxs_src f ok=1
	if [[ ! -x $PG_CONFIG_BIN ]]; then
		bf_err "no pg_config in BF_PG_BINDIR=$PG_BINDIR"
		return 1
	fi
	sharedir=$("$PG_CONFIG_BIN" --sharedir)
	pgxs_src=$(bf_pgxs_src)
	for f in "$PG_BINDIR/postgres" "$PG_BINDIR/initdb" "$PG_BINDIR/psql" \
		"$pgxs_src/test/regress/pg_regress" "$pgxs_src/test/perl/PostgreSQL/Test/Cluster.pm" \
		"$sharedir/extension/pgtap.control"; do
		if [[ ! -e $f ]]; then
			bf_err "the installation in $PG_BINDIR has no $f"
			ok=0
		fi
	done
	if ((!ok)); then
		bf_err "build one with pg_regress, the TAP modules and pgTAP: bash test/pg-build.sh server $BF_PG_MAJOR"
		return 1
	fi
	bf_say "PostgreSQL: $("$PG_CONFIG_BIN" --version) in $PG_BINDIR"
}

# Sanitizer builds (BF_SANITIZE=1, see test/sanitize.sh): the extension is
# compiled with UndefinedBehaviorSanitizer (any finding aborts the backend),
# and the throwaway server writes findings to $BF_TMP/sanitizer.* (checked by
# bf_sanitizer_findings).  Not AddressSanitizer: its runtime must be preloaded
# into an uninstrumented postgres, and Debian's postgres hangs at start-up
# with it (gcc's and clang's runtimes alike); the core runs under ASan in its
# unit tests and fuzzers instead.
BF_SANITIZE=${BF_SANITIZE:-0}
BF_SANITIZE_CFLAGS="-fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

# Build and install the extension into the PostgreSQL installation.
# Objects built for another installation (or with other flags) are removed
# first: .build-stamp names what the objects in the tree were built for.
bf_build_install() {
	local jobs flags=() stamp
	jobs=$(nproc 2>/dev/null || echo 2)
	stamp="$("$PG_CONFIG_BIN" --version) $PG_CONFIG_BIN sanitize=$BF_SANITIZE"
	if [[ $BF_SANITIZE == 1 || $(cat "$BF_REPO/.build-stamp" 2>/dev/null) != "$stamp" ]]; then
		make -C "$BF_REPO" clean PG_CONFIG="$PG_CONFIG_BIN" >/dev/null || return 1
	fi
	echo "$stamp" >"$BF_REPO/.build-stamp" || return 1
	if [[ $BF_SANITIZE == 1 ]]; then
		flags=("PG_CFLAGS=$BF_SANITIZE_CFLAGS" "SHLIB_LINK=-fsanitize=undefined")
		bf_say "building with sanitizers: $BF_SANITIZE_CFLAGS"
	fi
	bf_say "building (make -j$jobs)"
	make -C "$BF_REPO" -j"$jobs" PG_CONFIG="$PG_CONFIG_BIN" "${flags[@]}" || return 1
	bf_say "installing (make install)"
	bf_as_root make -C "$BF_REPO" install PG_CONFIG="$PG_CONFIG_BIN" || return 1
}

# Is TCP port $1 or a default-location unix socket for it in use?  (Ours is
# in a private directory and we do not listen on TCP, so a clash is harmless;
# avoiding used ports keeps clients of other servers from ever meeting ours.)
bf_port_busy() {
	local p=$1 d
	for d in /tmp /var/run/postgresql; do
		[[ -e $d/.s.PGSQL.$p || -e $d/.s.PGSQL.$p.lock ]] && return 0
	done
	(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && return 0
	return 1
}

bf_pick_port() {
	local p=${BF_PORT_BASE:-54321} last
	last=$((p + 200))
	while ((p <= last)); do
		if ! bf_port_busy "$p"; then
			echo "$p"
			return 0
		fi
		p=$((p + 1))
	done
	bf_err "no free port in ${BF_PORT_BASE:-54321}..$last"
	return 1
}

# Start a throwaway server; $1.. are extra postgresql.conf lines.
bf_start_server() {
	local loc conf line
	BF_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter.XXXXXX") || return 1
	if [[ $EUID -eq 0 ]]; then
		chown postgres:postgres "$BF_TMP" || return 1
	fi
	# C.UTF-8 is built into Debian's glibc; fall back to C elsewhere.
	if locale -a 2>/dev/null | grep -qiE '^c\.utf-?8$'; then
		loc=C.UTF-8
	else
		loc=C
	fi
	bf_say "initdb in $BF_TMP/data (UTF8, locale $loc)"
	if ! bf_as_pg "$PG_BINDIR/initdb" -D "$BF_TMP/data" -U postgres --auth=trust \
		-E UTF8 --locale="$loc" --no-sync >"$BF_TMP/initdb.log" 2>&1; then
		bf_err "initdb failed:"
		cat "$BF_TMP/initdb.log" >&2
		return 1
	fi
	BF_PORT=$(bf_pick_port) || return 1
	conf=$BF_TMP/data/postgresql.conf
	{
		echo
		echo "# throwaway test server (test/lib.sh)"
		echo "listen_addresses = ''"
		echo "port = $BF_PORT"
		echo "unix_socket_directories = '$BF_TMP'"
		echo "fsync = off"
		echo "synchronous_commit = off"
		echo "full_page_writes = off"
		echo "max_worker_processes = 8"
		echo "max_parallel_workers = 4"
		echo "max_parallel_workers_per_gather = 2"
		echo "log_min_messages = warning"
		for line in "$@"; do echo "$line"; done
		if [[ -n ${BF_EXTRA_CONF:-} ]]; then printf '%s\n' "$BF_EXTRA_CONF"; fi
	} >>"$conf" || return 1
	bf_say "starting server on port $BF_PORT (socket in $BF_TMP)"
	local env=()
	if [[ $BF_SANITIZE == 1 ]]; then
		env=(env "UBSAN_OPTIONS=print_stacktrace=1:log_path=$BF_TMP/sanitizer.ubsan")
	fi
	if ! bf_as_pg "${env[@]}" "$PG_BINDIR/pg_ctl" -D "$BF_TMP/data" -l "$BF_TMP/server.log" \
		-w -t 60 start >"$BF_TMP/pg_ctl.log" 2>&1; then
		bf_err "the server did not start; pg_ctl said:"
		cat "$BF_TMP/pg_ctl.log" >&2
		bf_err "server log ($BF_TMP/server.log):"
		cat "$BF_TMP/server.log" >&2 2>/dev/null || true
		return 1
	fi
	export PGHOST=$BF_TMP PGPORT=$BF_PORT PGUSER=postgres
	unset PGDATABASE PGSERVICE PGPASSWORD PGOPTIONS PGSSLMODE
	return 0
}

# Stop the server and remove the temporary directory.  Safe to call twice
# and when nothing was started.  A backend stuck in a loop does not end on a
# fast shutdown: then an immediate one (SIGQUIT ends any backend at once),
# then SIGKILL of the postmaster as a last resort.
bf_stop_server() {
	[[ -n ${BF_TMP:-} && -d $BF_TMP ]] || return 0
	local pid
	if [[ -f $BF_TMP/data/postmaster.pid ]]; then
		bf_say "stopping server"
		if ! bf_as_pg "$PG_BINDIR/pg_ctl" -D "$BF_TMP/data" -m fast -w -t 30 stop >/dev/null 2>&1 &&
			! bf_as_pg "$PG_BINDIR/pg_ctl" -D "$BF_TMP/data" -m immediate -w -t 30 stop >/dev/null 2>&1; then
			pid=$(head -n 1 "$BF_TMP/data/postmaster.pid" 2>/dev/null || true)
			if [[ $pid =~ ^[0-9]+$ ]]; then
				bf_warn "pg_ctl stop failed; killing postmaster $pid"
				kill -KILL "$pid" 2>/dev/null || true
			fi
		fi
	fi
	if [[ ${BF_KEEP_TMP:-0} == 1 ]]; then
		bf_say "kept $BF_TMP (BF_KEEP_TMP=1)"
	else
		rm -rf "$BF_TMP"
	fi
	BF_TMP=
}

# Run a test suite with a time limit (BF_SUITE_TIMEOUT seconds, default
# 900).  coreutils timeout signals the whole process group it runs, so the
# suite's children end too.  It runs in the background and is waited for, so
# that an interrupt reaches the caller's trap at once; the caller's cleanup
# should kill its remaining jobs (`jobs -p`), timeout passes that on.
bf_timeout() {
	local rc=0 limit=${BF_SUITE_TIMEOUT:-900}
	timeout --kill-after=10 "$limit" "$@" &
	wait "$!" || rc=$?
	if ((rc == 124 || rc == 137)); then
		bf_err "timed out after $limit s: $*"
	fi
	return "$rc"
}

# Print the sanitizer reports of the running server; false if there are any.
bf_sanitizer_findings() {
	local f found=0
	for f in "$BF_TMP"/sanitizer.*; do
		[[ -f $f ]] || continue
		found=1
		echo "----- $f"
		cat "$f"
	done
	# a sanitizer abort ends a backend with a signal: the server log says so
	if grep -E "terminated by signal|runtime error" "$BF_TMP/server.log"; then
		found=1
	fi
	((found == 0))
}

# psql on the throwaway server, without ~/.psqlrc, stopping on error.
bf_psql() {
	"$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 "$@"
}

# ---- for the scripts that run a throwaway server of their own (test/bench.sh,
# test/demo.sh, test/bench/*.sh)

# Stop the server on exit; INT and TERM exit (so the EXIT trap runs).
bf_server_traps() {
	trap 'bf_stop_server' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# The 1, 5 and 15-minute load averages, for a benchmark to print.
bf_loadavg() {
	cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'
}

# A script's header comment (from line 2 up to "set -euo"), for --help.
bf_usage() {
	sed -n '2,/^set -euo/p' "$1" | sed '$d; s/^# \{0,1\}//'
}

# Exit 2 unless each variable named holds a positive integer (an option).
bf_require_positive() {
	local v
	for v in "$@"; do
		if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
			bf_err "$v must be a positive integer (got '${!v}')"
			exit 2
		fi
	done
}
