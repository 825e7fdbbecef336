#!/usr/bin/env bash
# test/sanitize.sh — the regression, pgTAP and reader suites (and the core
# unit tests) against the extension built with AddressSanitizer and
# UndefinedBehaviorSanitizer (`make sanitize`).  The server runs with the ASan
# runtime preloaded; any finding aborts the backend and fails the run.  At the
# end the normal build is reinstalled.
#
# PostgreSQL allocates from its own memory contexts, which ASan sees as large
# malloc'ed blocks: ASan catches overruns of those blocks and of malloc'ed and
# stack memory, and UBSan catches undefined behaviour anywhere in the
# extension; overruns inside a context block are the fuzzers' and valgrind's
# business.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rc=0
BF_SANITIZE=1 bash test/run-tests.sh || rc=$?
if [[ -f test/core/Makefile ]] && grep -q '^sanitize:' test/core/Makefile; then
	echo "==> core unit tests under ASan/UBSan (make -C test/core sanitize)"
	make -C test/core sanitize || rc=1
fi
echo "==> reinstalling the normal build"
. test/lib.sh
make clean >/dev/null
bf_build_install >/dev/null
exit "$rc"
