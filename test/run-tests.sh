#!/usr/bin/env bash
# test/run-tests.sh — THE test command (`bash test/run-tests.sh`, `make test`,
# and what .ci/run calls).
#
#  1. installs what is missing (apt-get; sudo when not root),
#  2. builds and installs the extension (make, make install),
#  3. runs the C unit tests of the core (make core-test) if test/core exists,
#     then the fuzz smoke test (make -C test/fuzz smoke: replays the fuzzers'
#     regression inputs and seeds, fuzzes each harness 5 s if clang is there),
#  4. starts a throwaway server (temporary directory, postgres user, free port,
#     unix socket only),
#  5. runs pg_regress (make installcheck) and prints regression.diffs on failure,
#  6. runs pgTAP (pg_prove over test/pgtap/*.sql, each file in its own
#     database made from a template holding pgtap and bloomfilter),
#  6b. runs the client libraries' tests (clients/python: the reader's golden
#     vectors, properties, GuardCopy and compare.py against the server on
#     every key kind; clients/node: node --test),
#  7. stops the server, then runs the Perl TAP tests test/tap/*.pl (they start
#     their own servers), as the postgres user when run as root,
#  7b. runs test/citus/run.sh (its own Citus coordinator and two workers)
#     when the installation has Citus; else notes "skipped: Citus not
#     installed",
#  8. removes everything it created and prints, as its very last line,
#     "N passed, N failed" (suites: each regress test, pgTAP file, TAP file,
#     the Citus script, and the core unit tests; a failed step such as the
#     build counts as a failure).  Exits non-zero if anything failed.
#
# Environment: BF_PG_BINDIR (the PostgreSQL installation to test on, default
# Debian's PostgreSQL 15; see test/lib.sh), BF_SERVER_ONLY=1 (skip step 3,
# which does not involve PostgreSQL: for a second run on another server),
# BF_TEST_JOBS (parallel pgTAP files, default: number of CPUs,
# at most 4), BF_SUITE_TIMEOUT (seconds per suite, default 900),
# BF_KEEP_TMP=1 (keep the server's directory), BF_PORT_BASE, BF_EXTRA_CONF —
# see test/lib.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=test/lib.sh
. test/lib.sh

PASSED=0
FAILED=0
RESULTS=()
CLEANUP_DIRS=()
SUMMARY_DONE=0
START_TIME=$SECONDS

pass() { PASSED=$((PASSED + 1)); RESULTS+=("PASS  $1"); }
fail() { FAILED=$((FAILED + 1)); RESULTS+=("FAIL  $1"); }
note() { RESULTS+=("      $1"); }

cleanup() {
	local d pid
	# Background pgTAP jobs still running (interrupted run): stop them.
	for pid in $(jobs -p); do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	bf_stop_server || true
	for d in "${CLEANUP_DIRS[@]}"; do
		[[ -n $d ]] && rm -rf "$d"
	done
	CLEANUP_DIRS=()
}

print_summary() {
	local r
	echo
	echo "==================== summary ($((SECONDS - START_TIME)) s) ===================="
	for r in "${RESULTS[@]}"; do echo "$r"; done
	echo "$PASSED passed, $FAILED failed"
	SUMMARY_DONE=1
}

on_exit() {
	local rc=$?
	trap - EXIT
	set +e
	cleanup
	if ((!SUMMARY_DONE)); then
		fail "run-tests.sh stopped early (exit status $rc)"
		print_summary
		exit $((rc == 0 ? 1 : rc))
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- core ----
run_core_tests() {
	if [[ ! -f test/core/Makefile ]]; then
		note "core: no test/core/Makefile, C unit tests skipped"
		return 0
	fi
	bf_say "core C unit tests (make core-test)"
	if bf_timeout make core-test PG_CONFIG="$PG_CONFIG_BIN"; then
		pass "core: C unit tests (make core-test)"
	else
		fail "core: C unit tests (make core-test)"
	fi
}

# -------------------------------------------------------------- readme ----
# README.md names every user-facing SQL object and GUC; its links resolve.
run_readme_check() {
	bf_say "README.md: objects named, links resolve (test/readme-check.sh)"
	if bash test/readme-check.sh; then
		pass "readme: every user-facing object named, every link resolves (test/readme-check.sh)"
	else
		fail "readme: test/readme-check.sh (above)"
	fi
}

# ------------------------------------------------------------ layering ----
# The folders of src/ call only downward (core < value < cache < index <
# plan), and the core includes nothing of PostgreSQL.
run_layering_check() {
	bf_say "src/: includes go one way, the core is PostgreSQL-free (test/layering.sh)"
	if bash test/layering.sh; then
		pass "layering: every include of src/ goes downward, the core includes no PostgreSQL header (test/layering.sh)"
	else
		fail "layering: test/layering.sh (above)"
	fi
}

# ---------------------------------------------------------------- fuzz ----
# The fuzzers' regression inputs and seeds replayed under ASan and UBSan, then
# each harness fuzzed for 5 s when clang is installed (make fuzz: longer runs).
run_fuzz_smoke() {
	if [[ ! -f test/fuzz/Makefile ]]; then
		return 0
	fi
	bf_say "fuzz harnesses: replay regressions and seeds, short run (make -C test/fuzz smoke)"
	if bf_timeout make -C test/fuzz smoke; then
		pass "fuzz: regressions and seeds replayed, 5 s per harness (make -C test/fuzz smoke)"
	else
		fail "fuzz: make -C test/fuzz smoke"
	fi
	command -v clang >/dev/null 2>&1 || note "fuzz: clang not installed: inputs replayed, no fuzzing"
}

# ------------------------------------------------------------- regress ----
run_regress() {
	local out=$BF_TMP/installcheck.out rc=0 lines n_before
	bf_say "pg_regress (make installcheck)"
	rm -f regression.diffs regression.out
	bf_timeout make installcheck PG_CONFIG="$PG_CONFIG_BIN" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" >"$out" 2>&1 || rc=$?
	cat "$out"
	# One result per test: PostgreSQL 15 prints "test name ... ok 12 ms" (or
	# "     name ... FAILED" inside a parallel group); 16+ print TAP lines
	# "ok 1 - name" / "not ok 1 - name".
	lines=$(awk '
		/^(test )? *[^ ]+ +\.\.\. +ok( |$)/                  { sub(/^test /, ""); print "PASS", $1; next }
		/^(test )? *[^ ]+ +\.\.\. +failed \(ignored\)/       { sub(/^test /, ""); print "PASS", $1 " (failure ignored)"; next }
		/^(test )? *[^ ]+ +\.\.\. +FAILED/                   { sub(/^test /, ""); print "FAIL", $1; next }
		/^ok +[0-9]+ +[-+] +[^ ]+/                           { print "PASS", $4; next }
		/^not ok +[0-9]+ +[-+] +[^ ]+/                       { print "FAIL", $5; next }
	' "$out")
	n_before=$((PASSED + FAILED))
	local verdict name
	while read -r verdict name; do
		[[ -z ${verdict:-} ]] && continue
		if [[ $verdict == PASS ]]; then pass "regress: $name"; else fail "regress: $name"; fi
	done <<<"$lines"
	if ((rc != 0)); then
		if [[ -s regression.diffs ]]; then
			echo "---------------- regression.diffs ----------------"
			head -n 3000 regression.diffs
			(($(wc -l <regression.diffs) > 3000)) && echo "... (truncated; see $BF_REPO/regression.diffs)"
			echo "--------------------------------------------------"
		fi
		# pg_regress failed without a failed test to show for it (a missing
		# file, no connection...): count that as a failure of its own.
		if ! grep -q '^FAIL' <<<"$lines"; then
			fail "regress: make installcheck failed (exit status $rc; see output above)"
		fi
	elif ((PASSED + FAILED == n_before)); then
		bf_warn "make installcheck ran no tests (is REGRESS empty?)"
		note "regress: no tests ran"
	fi
}

# --------------------------------------------------------------- pgTAP ----
run_pgtap() {
	local files=() f i njobs
	shopt -s nullglob
	files=(test/pgtap/*.sql)
	shopt -u nullglob
	if [[ ${#files[@]} -eq 0 ]]; then
		bf_warn "no pgTAP files (test/pgtap/*.sql): zero pgTAP suites run"
		note "pgtap: no test/pgtap/*.sql files"
		return 0
	fi
	bf_say "pgTAP: ${#files[@]} file(s)"
	# A template with both extensions; each file gets its own copy of it, so
	# files can run in parallel without seeing each other's objects.
	if ! bf_psql -q -d postgres -c "CREATE DATABASE bf_pgtap_template" ||
		! bf_psql -q -d bf_pgtap_template \
			-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION $BF_EXTENSION"; then
		fail "pgtap: setup (CREATE EXTENSION pgtap, $BF_EXTENSION)"
		return 0
	fi
	for i in "${!files[@]}"; do
		if ! bf_psql -q -d postgres -c "CREATE DATABASE bf_pgtap_$i TEMPLATE bf_pgtap_template"; then
			fail "pgtap: setup (CREATE DATABASE)"
			return 0
		fi
	done

	njobs=${BF_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
	if ! [[ $njobs =~ ^[0-9]+$ ]] || ((njobs < 1)); then njobs=1; fi
	if ((njobs > 4)); then njobs=4; fi
	local dir=$BF_TMP/pgtap
	mkdir -p "$dir"
	for i in "${!files[@]}"; do
		while (($(jobs -rp | wc -l) >= njobs)); do
			wait -n || true
		done
		(
			set +e
			bf_timeout pg_prove --norc --nocolor --failures --comments --timer \
				--psql-bin "$PG_BINDIR/psql" -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" \
				-d "bf_pgtap_$i" "${files[$i]}" >"$dir/$i.log" 2>&1
			echo $? >"$dir/$i.rc"
		) &
	done
	wait || true
	for i in "${!files[@]}"; do
		f=${files[$i]}
		echo "---------------- pg_prove $f ----------------"
		cat "$dir/$i.log" 2>/dev/null || true
		if [[ $(cat "$dir/$i.rc" 2>/dev/null) == 0 ]]; then
			pass "pgtap: $f"
		else
			fail "pgtap: $f"
		fi
	done
}

# ------------------------------------------------------------- clients ----
# The client libraries (clients/): Python's unit tests (the reader's golden
# vectors and properties, GuardCopy against the server) and compare.py (the
# reader against the server on every key kind and layout, once: it does not
# depend on the server's version); Node's tests (node --test, its
# dependencies installed by npm ci from package-lock.json).  Debian's
# python3 (python3-xxhash, python3-psycopg2), not one earlier in PATH.
run_clients() {
	local py=/usr/bin/python3
	[[ -x $py ]] || py=python3
	bf_say "client libraries: clients/python, clients/node"
	echo "---------------- clients/python: python3 -m unittest ----------------"
	if (cd clients/python && bf_timeout "$py" -m unittest discover -v -s tests 2>&1); then
		pass "clients/python: unit tests (reader golden vectors and properties, GuardCopy)"
	else
		fail "clients/python: unit tests (reader golden vectors and properties, GuardCopy)"
	fi
	if [[ ${BF_SERVER_ONLY:-0} != 1 ]]; then
		echo "---------------- clients/python/tests/compare.py ----------------"
		if PSQL="$PG_BINDIR/psql" bf_timeout "$py" clients/python/tests/compare.py; then
			pass "clients/python: compare.py (reader = server on every key kind and layout)"
		else
			fail "clients/python: compare.py (reader = server on every key kind and layout)"
		fi
	fi
	echo "---------------- clients/node: npm ci, node --test ----------------"
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		fail "clients/node: node and npm not found (apt-get install nodejs npm)"
		return 0
	fi
	if (cd clients/node && bf_timeout npm ci --no-audit --no-fund --loglevel=error &&
		bf_timeout node --test test/ 2>&1); then
		pass "clients/node: node --test (reader, every key kind against the server, GuardCopy)"
	else
		fail "clients/node: node --test (reader, every key kind against the server, GuardCopy)"
	fi
}

# ----------------------------------------------------------------- TAP ----
# Perl TAP tests (PostgreSQL::Test::Cluster) start their own servers, which
# refuse to run as root: as root, run them as postgres on a copy of the tree.
# TESTDATADIR and TESTLOGDIR are absolute: PostgreSQL 16 and later default to
# relative ones (tempdir() then gives paths the server cannot use for COPY).
run_tap() {
	local files=() f work pgxs_src perl5 regress
	pgxs_src=$(bf_pgxs_src)
	perl5=$pgxs_src/test/perl
	regress=$pgxs_src/test/regress/pg_regress
	shopt -s nullglob
	files=(test/tap/*.pl)
	shopt -u nullglob
	if [[ ${#files[@]} -eq 0 ]]; then
		note "tap: no test/tap/*.pl files"
		return 0
	fi
	bf_say "Perl TAP tests: ${#files[@]} file(s)"
	work=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-tap.XXXXXX")
	CLEANUP_DIRS+=("$work")
	tar -C "$BF_REPO" --exclude=./.git --exclude=./results --exclude=./tmp_check \
		--exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . | tar -C "$work" -xf -
	[[ $EUID -eq 0 ]] && chown -R postgres:postgres "$work"
	for f in "${files[@]}"; do
		local cmd=(env -C "$work" -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE
			PATH="$PG_BINDIR:$PATH" PERL5LIB="$perl5${PERL5LIB:+:$PERL5LIB}"
			PG_REGRESS="$regress" TESTDIR="$work" PG_CONFIG="$PG_CONFIG_BIN"
			TESTDATADIR="$work/tmp_check" TESTLOGDIR="$work/tmp_check/log"
			prove --norc --nocolor --timer "$f")
		echo "---------------- prove $f ----------------"
		local rc=0
		if [[ $EUID -eq 0 ]]; then
			bf_timeout runuser -u postgres -- "${cmd[@]}" || rc=$?
		else
			bf_timeout "${cmd[@]}" || rc=$?
		fi
		if ((rc == 0)); then
			pass "tap: $f"
		else
			fail "tap: $f"
			# Each test leaves its servers' logs in tmp_check/log.
			if [[ -d $work/tmp_check/log ]]; then
				local log
				for log in "$work"/tmp_check/log/*; do
					[[ -f $log ]] || continue
					echo "----- $log (last 50 lines)"
					tail -n 50 "$log"
				done
			fi
		fi
	done
}

# --------------------------------------------------------------- Citus ----
# test/citus/run.sh starts its own coordinator and two workers when the
# installation has Citus (citus.control in its share directory); one suite.
run_citus() {
	local log rc=0 last
	log=$(mktemp "${TMPDIR:-/tmp}/bloomfilter-citus-log.XXXXXX")
	CLEANUP_DIRS+=("$log")
	bf_say "Citus: test/citus/run.sh"
	echo "---------------- test/citus/run.sh ----------------"
	BF_CITUS_BUILD=0 bf_timeout bash test/citus/run.sh 2>&1 | tee "$log" || rc=$?
	last=$(tail -n 1 "$log")
	if [[ $last == skipped:* ]]; then
		note "citus: $last"
	elif ((rc == 0)) && [[ $last =~ ^[0-9]+\ passed,\ 0\ failed$ ]]; then
		pass "citus: test/citus/run.sh ($last)"
	else
		fail "citus: test/citus/run.sh (${last:-no summary line})"
	fi
}

# ---------------------------------------------------------------- main ----
bf_say "bloomfilter test suite in $BF_REPO"
if ! bf_ensure_packages; then
	fail "setup: installing dependencies"
	cleanup
	print_summary
	exit 1
fi

run_readme_check
run_layering_check

built=0
if bf_build_install; then
	built=1
else
	fail "build: make / make install"
fi

if [[ ${BF_SERVER_ONLY:-0} == 1 ]]; then
	note "core, fuzz: skipped (BF_SERVER_ONLY=1: they do not involve PostgreSQL)"
else
	run_core_tests
	run_fuzz_smoke
fi

if ((built)); then
	# shellcheck disable=SC2119 # no extra postgresql.conf lines
	if bf_start_server; then
		run_regress
		run_pgtap
		run_clients
		if [[ $BF_SANITIZE == 1 ]]; then
			if bf_sanitizer_findings; then
				pass "sanitizers: no UndefinedBehaviorSanitizer findings in the server"
			else
				fail "sanitizers: findings (above)"
			fi
		fi
	else
		fail "server: the throwaway server did not start"
	fi
	bf_stop_server || true
	run_tap
	run_citus
else
	note "regress, pgtap, tap, citus: not run (the build failed)"
fi

cleanup
print_summary
((FAILED == 0))
