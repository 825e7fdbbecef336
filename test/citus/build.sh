#!/usr/bin/env bash
# test/citus/build.sh TARBALL [PATCH ...] — Citus for the Citus checks
# (test/citus/run.sh): built from a source tarball (and patches, applied
# with patch -p1) against PostgreSQL 15 (BF_PG_BINDIR, else Debian's), into
# a cache directory outside the clone, $BF_PG_CACHE/citus-<version>-pg<PG
# version>, reused while complete (its marker .bf-complete, written last);
# then installed from the cache into that PostgreSQL (its lib and share
# directories), where run.sh finds citus.control.  Configured without
# libcurl (its statistics collection); lz4 and zstd come from Debian
# (liblz4-dev, libzstd-dev, libkrb5-dev, installed when missing: PostgreSQL's own headers
# say they are there).  Prints the cache
# directory as its last line; everything else goes to standard error.
# Needs root to write the cache and the PostgreSQL installation.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh
say() { printf '==> citus build: %s\n' "$*" >&2; }

tarball=${1:?usage: test/citus/build.sh TARBALL [PATCH ...]}
shift
[[ -f $tarball ]] || { bf_err "no Citus tarball at $tarball"; exit 1; }
BF_PG_CACHE=${BF_PG_CACHE:-/var/cache/bloomfilter}
pgc=${BF_PG_BINDIR:-/usr/lib/postgresql/15/bin}/pg_config
bf_ensure_packages >&2
for p in liblz4-dev libzstd-dev libkrb5-dev; do
	if ! bf_pkg_installed "$p"; then
		say "installing $p"
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q \
			--no-install-recommends "$p" </dev/null >&2
	fi
done
pgver=$("$pgc" --version | awk '{ print $2 }')
ver=$(basename "$tarball" | sed -E 's/^citus-v?([0-9][0-9.]*)\.tar\.gz$/\1/')
cache=$BF_PG_CACHE/citus-$ver-pg$pgver
if [[ ! -f $cache/.bf-complete || ${BF_PG_REBUILD:-0} == 1 ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/citus-build.XXXXXX")
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$work'" EXIT
	tar -C "$work" -xzf "$tarball"
	src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	for p in "$@"; do
		say "applying $(basename "$p")"
		(cd "$src" && patch -s -p1 <"$p" >&2)
	done
	say "configure against PostgreSQL $pgver"
	(cd "$src" && ./configure PG_CONFIG="$pgc" --without-libcurl \
		>"$work/configure.log" 2>&1) || { tail -n 30 "$work/configure.log" >&2; exit 1; }
	say "compiling Citus $ver (nice make -j$(nproc))"
	t0=$SECONDS
	(cd "$src" && nice -n 10 make -s -j"$(nproc)" >"$work/make.log" 2>&1 &&
		make -s install DESTDIR="$cache/root" >>"$work/make.log" 2>&1) ||
		{ tail -n 40 "$work/make.log" >&2; exit 1; }
	echo "Citus $ver for PostgreSQL $pgver ($pgc), built $(date -u +%FT%TZ) in $((SECONDS - t0)) s" \
		>"$cache/.bf-complete"
else
	say "reusing $cache ($(head -n 1 "$cache/.bf-complete"))"
fi
# files only: the existing directories keep their owners and modes
tar -C "$cache/root" -cf - . | tar -C / --no-overwrite-dir -xf -
[[ -f $("$pgc" --sharedir)/extension/citus.control ]] ||
	{ bf_err "citus.control is not in $("$pgc" --sharedir)/extension after the install"; exit 1; }
echo "$cache"
