#!/usr/bin/env bash
# test/fuzz/run.sh MODE — run by test/fuzz/Makefile once the binaries are built.
#
#   replay  run replay_<h> (system compiler, ASan+UBSan) on every input of
#           regressions/<h>/ and corpus-<h>/: a past crasher must stay fixed
#   smoke   replay, then fuzz each harness SMOKE_SECONDS (default 5, seed 1)
#           from the seeds and regressions, in a throwaway directory
#   run     fuzz both harnesses at once for FUZZ_SECONDS each (default 60),
#           niced, growing work/corpus-<h>/ across runs; logs in work/<h>.log,
#           crashers in work/artifacts/
#
# Prints, per harness, executions, coverage (libFuzzer's cov: edges) and
# findings; exits non-zero on any finding or failed replay.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 2

# FUZZ_HARNESSES (e.g. "text") selects some of them.
read -r -a HARNESSES <<<"${FUZZ_HARNESSES:-binary text sizing}"
MODE=${1:-run}
# Inputs are capped at 8 kB: every path of the parsers is reached with
# filters of a few blocks, and small inputs run fast.  Payloads are bounded
# by the input (the decoders check the length first), so no allocation
# exceeds a few times max_len; the limits below only catch a regression.
COMMON=(-rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10
	-print_final_stats=1 -detect_leaks=1)

# Options of one harness: input size cap, dictionary.
options() {
	case $1 in
	sizing) echo "-max_len=26" ;;	# the harness reads 26 bytes
	*) echo "-max_len=8192 -dict=$1.dict" ;;
	esac
}

status=0

replay() {
	local h files
	shopt -s nullglob
	for h in "${HARNESSES[@]}"; do
		files=(regressions/"$h"/* corpus-"$h"/*)
		if ((${#files[@]} == 0)); then
			echo "replay $h: no inputs (regressions/$h, corpus-$h)"
		elif ./replay_"$h" "${files[@]}" >/dev/null; then
			echo "replay $h: ${#files[@]} input(s) (regressions/$h, corpus-$h): ok"
		else
			echo "replay $h: FAILED (see above)"
			status=1
		fi
	done
	shopt -u nullglob
}

# fuzz HARNESS SECONDS WORKDIR ARTIFACTDIR [extra libFuzzer options...]
fuzz() {
	local h=$1 secs=$2 work=$3 art=$4
	shift 4
	local dirs=("$work/corpus-$h")
	mkdir -p "$work/corpus-$h" "$art"
	[[ -d corpus-$h ]] && dirs+=(corpus-"$h")
	[[ -d regressions/$h ]] && dirs+=(regressions/"$h")
	# shellcheck disable=SC2046 # options are words
	nice -n 10 ./fuzz_"$h" "${COMMON[@]}" $(options "$h") "$@" -max_total_time="$secs" \
		-artifact_prefix="$art/$h-" "${dirs[@]}" >"$work/$h.log" 2>&1
}

# report HARNESS RC WORKDIR ARTIFACTDIR
report() {
	local h=$1 rc=$2 work=$3 art=$4 log=$3/$1.log
	local execs secs cov ft corp findings
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1 | cut -d' ' -f2)
	shopt -s nullglob
	local arts=("$art/$h"-*)
	shopt -u nullglob
	findings=${#arts[@]}
	printf 'fuzz_%s: %s executions%s, cov: %s, ft: %s, corpus: %s, findings: %s\n' \
		"$h" "${execs:-?}" "${secs:+ in $secs s}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$findings"
	if ((rc != 0 || findings > 0)); then
		status=1
		echo "---- fuzz_$h FAILED (exit status $rc); end of $log:"
		tail -n 60 "$log"
		for a in "${arts[@]}"; do
			echo "---- finding: $a"
			echo "     reproduce: test/fuzz/fuzz_$h $a  (or replay_$h)"
			echo "     once fixed, keep it: cp $a test/fuzz/regressions/$h/"
		done
	fi
}

case $MODE in
replay)
	replay
	;;
smoke)
	replay
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/bf-fuzz-smoke.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	for h in "${HARNESSES[@]}"; do
		rc=0
		fuzz "$h" "${SMOKE_SECONDS:-5}" "$tmp" "$tmp/artifacts" -seed=1 || rc=$?
		report "$h" "$rc" "$tmp" "$tmp/artifacts"
	done
	;;
run)
	secs=${FUZZ_SECONDS:-60}
	mkdir -p work/artifacts
	echo "fuzzing ${HARNESSES[*]} for $secs s each, in parallel, niced (logs: test/fuzz/work/<harness>.log)"
	declare -A pids
	for h in "${HARNESSES[@]}"; do
		fuzz "$h" "$secs" work work/artifacts &
		pids[$h]=$!
	done
	for h in "${HARNESSES[@]}"; do
		rc=0
		wait "${pids[$h]}" || rc=$?
		report "$h" "$rc" work work/artifacts
	done
	;;
*)
	echo "usage: $0 replay|smoke|run" >&2
	exit 2
	;;
esac
exit "$status"
