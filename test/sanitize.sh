#!/usr/bin/env bash
# test/sanitize.sh (`make sanitize`): the sanitizer run.
#
#  1. The whole test command (regression, pgTAP, reader and TAP suites)
#     against the extension built with UndefinedBehaviorSanitizer
#     (-fno-sanitize-recover: any finding aborts the backend and fails the
#     run; reports are collected from the server).
#  2. The PostgreSQL-free core under AddressSanitizer and UBSan: its unit
#     tests (make -C test/core sanitize) and the fuzz harnesses' replay of
#     every seed and regression input (part of step 1's fuzz smoke step).
#
# Why not ASan inside the server: ASan's runtime must be preloaded into an
# uninstrumented postgres, and Debian's postgres deadlocks at start-up with
# it preloaded (`LD_PRELOAD=libasan.so postgres --version` hangs, with gcc's
# and with clang's runtime).  Memory errors in the SQL layer are the business
# of the fuzzers (through the same parsers) and the SQL mutation test.
#
# At the end the normal build is reinstalled.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rc=0
BF_SANITIZE=1 bash test/run-tests.sh || rc=$?
if [[ -f test/core/Makefile ]] && grep -q '^sanitize:' test/core/Makefile; then
	echo "==> core unit tests under ASan and UBSan (make -C test/core sanitize)"
	make -C test/core sanitize || rc=1
fi
echo "==> reinstalling the normal build"
. test/lib.sh
make clean >/dev/null
bf_build_install >/dev/null
exit "$rc"
