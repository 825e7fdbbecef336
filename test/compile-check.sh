#!/usr/bin/env bash
# test/compile-check.sh — compile every C file of the extension against one
# PostgreSQL version's server headers with -Wall -Werror, without linking or
# installing anything: for versions that are compiled but not tested.
#
#   bash test/compile-check.sh INCLUDEDIR_SERVER [LABEL]
#
# INCLUDEDIR_SERVER is a server header tree (the directory holding
# postgres.h; test/pg-build.sh headers 17 unpacks one).  The flags are those
# PGXS compiles the module with (CFLAGS, CFLAGS_SL and CPPFLAGS of a pg_config:
# BF_FLAGS_PG_CONFIG, default Debian's PostgreSQL 15, built by the same
# Debian rules and compiler) plus the Makefile's PG_CPPFLAGS, then -Wall
# -Werror.  Prints one line per failing file and, last, "compile LABEL: N
# files, N failed"; exits non-zero if any file failed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
inc=${1:?usage: bash test/compile-check.sh INCLUDEDIR_SERVER [LABEL]}
label=${2:-$inc}
pgc=${BF_FLAGS_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[[ -f $inc/postgres.h ]] || {
	echo "ERROR: no postgres.h in $inc" >&2
	exit 1
}
[[ -x $pgc ]] || {
	echo "ERROR: no pg_config at $pgc (set BF_FLAGS_PG_CONFIG)" >&2
	exit 1
}

# shellcheck disable=SC2207 # split the flag strings on blanks, as make does
cflags=($("$pgc" --cflags) $("$pgc" --cflags_sl))
# CPPFLAGS without the pg_config's own include directories
# shellcheck disable=SC2207
cppflags=($("$pgc" --cppflags | tr ' ' '\n' | grep -v '^-I'))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-cc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Headers of another distribution release describe that release's C library:
# trixie's pg_config.h says strlcpy/strlcat are declared by <string.h>
# (glibc 2.38 and later), Debian 12's glibc 2.36 does not declare them.  Then
# declare them here, as PostgreSQL's port.h would have.
extra=()
if grep -qE '^#define HAVE_DECL_STRLCPY 1' "$inc/pg_config.h" &&
	! printf '#include <string.h>\nvoid *bf_p = (void *) strlcpy;\n' |
	gcc -D_GNU_SOURCE -x c -c -o /dev/null - 2>/dev/null; then
	printf '%s\n' '#include <stddef.h>' \
		'extern size_t strlcpy(char *dst, const char *src, size_t siz);' \
		'extern size_t strlcat(char *dst, const char *src, size_t siz);' >"$tmp/libc-shim.h"
	extra=(-include "$tmp/libc-shim.h")
fi

files=()
while IFS= read -r f; do files+=("$f"); done < <(find src -name '*.c' | sort)
n=0
failed=0
for f in "${files[@]}"; do
	n=$((n + 1))
	if ! gcc "${cflags[@]}" -Wall -Werror "${extra[@]}" -Isrc \
		-I. "-I$inc" "${cppflags[@]}" -c -o "$tmp/out.o" "$f" >"$tmp/log" 2>&1; then
		failed=$((failed + 1))
		echo "FAILED: $f"
		head -n 40 "$tmp/log"
	fi
done
echo "compile $label: $n files, $failed failed"
((failed == 0))
