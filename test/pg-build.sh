#!/usr/bin/env bash
# test/pg-build.sh — PostgreSQL installations the test and compile checks need
# that Debian 12 does not package, built or unpacked from Debian's archive
# into a cache directory outside the clone, and reused while complete.
#
#   bash test/pg-build.sh server 18     build PostgreSQL 18 (or 17) from Debian's
#                                       source package (with contrib's citext,
#                                       pg_regress, the Perl TAP modules and
#                                       pgTAP) into $BF_PG_CACHE/pg18-<version>
#   bash test/pg-build.sh headers 17    unpack Debian's postgresql-server-dev-17
#                                       (headers only) into
#                                       $BF_PG_CACHE/pg17-headers-<version>
#   bash test/pg-build.sh deps 18       only install the build dependencies
#
# Prints the installation's directory as its last line of standard output
# (everything else goes to standard error).  A directory counts as complete
# only when its marker file .bf-complete, written last, is there: a complete
# one is reused as it is (no network needed); a missing or partial one is
# (re)built.  BF_PG_REBUILD=1 rebuilds even a complete one.
#
# Source and binary packages come from Debian's archive (sid's source of
# PostgreSQL 18 and pgTAP, trixie's of PostgreSQL 17, trixie's
# postgresql-server-dev-17) through a
# private apt configuration under $BF_PG_CACHE/apt: the system's apt sources,
# preferences and package lists are neither read for these nor changed, so
# nothing from sid or trixie can ever be installed or upgraded on the system.
# Build dependencies come from the system's own (Debian 12) sources.
#
# Environment: BF_PG_CACHE (default /var/cache/bloomfilter), BF_BUILD_JOBS
# (make -j, default: number of CPUs), BF_BUILD_NICE (nice level of the
# compile, default 10), BF_PG_REBUILD=1, BF_DEBIAN_MIRROR (default
# http://deb.debian.org/debian).  Needs root (or sudo) only to install the
# build dependencies and to write the cache directory.
set -euo pipefail

BF_PG_CACHE=${BF_PG_CACHE:-/var/cache/bloomfilter}
BF_BUILD_JOBS=${BF_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
BF_BUILD_NICE=${BF_BUILD_NICE:-10}
BF_DEBIAN_MIRROR=${BF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
MARKER=.bf-complete
# What a server build holds; a cached build made by another recipe is rebuilt.
# 2: the server, pg_regress, the TAP modules, all of contrib, pgTAP.
RECIPE=2

say() { printf '==> pg-build: %s\n' "$*" >&2; }
die() {
	printf 'ERROR: pg-build: %s\n' "$*" >&2
	exit 1
}

as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root for: $*"
	fi
}

# The newest complete directory matching the glob $1 (version order), if any;
# with $2, only one whose marker has the line "recipe $2".
complete_dir() {
	local d
	# shellcheck disable=SC2086 # $1 is a glob
	for d in $1; do
		[[ -f $d/$MARKER ]] || continue
		[[ -z ${2:-} ]] || grep -qx "recipe $2" "$d/$MARKER" || continue
		echo "$d"
	done | sort -V | tail -n 1
}

# ------------------------------------------------------------ private apt ----
APT_DIR=$BF_PG_CACHE/apt
apt_opts() {
	printf '%s\n' \
		-o "Dir::Etc::SourceList=$APT_DIR/sources.list" \
		-o "Dir::Etc::SourceParts=$APT_DIR/sources.list.d" \
		-o "Dir::Etc::Preferences=$APT_DIR/preferences" \
		-o "Dir::Etc::PreferencesParts=$APT_DIR/preferences.d" \
		-o "Dir::State::Lists=$APT_DIR/lists" \
		-o "Dir::Cache=$APT_DIR/cache" \
		-o "APT::Sandbox::User=root"
}

# apt-get / apt-cache with the private configuration: only sid's and
# trixie's source indexes and trixie's binary index.
# One at a time (apt-get fails at once when another holds its lists' lock):
# a server build and a header download may run side by side.
papt_get() {
	local opts
	mapfile -t opts < <(apt_opts)
	flock "$BF_PG_CACHE/.lock-apt" apt-get "${opts[@]}" "$@"
}
papt_cache() {
	local opts
	mapfile -t opts < <(apt_opts)
	flock "$BF_PG_CACHE/.lock-apt" apt-cache "${opts[@]}" "$@"
}

APT_UPDATED=0
apt_setup() {
	((APT_UPDATED)) && return 0
	mkdir -p "$APT_DIR"/{sources.list.d,preferences.d,lists/partial,cache/archives/partial}
	: >"$APT_DIR/preferences"
	cat >"$APT_DIR/sources.list" <<-EOF
		# private to test/pg-build.sh: never used by the system's apt
		deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $BF_DEBIAN_MIRROR sid main
		deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $BF_DEBIAN_MIRROR trixie main
		deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $BF_DEBIAN_MIRROR trixie main
	EOF
	say "apt-get update (private lists in $APT_DIR: sid and trixie sources, trixie binaries)"
	papt_get -q update >&2 || die "apt-get update of the private sources failed"
	APT_UPDATED=1
}

# Install (system apt, Debian 12) whatever of the build dependencies is missing.
ensure_build_deps() {
	local want=(gcc make perl bison flex pkg-config libicu-dev
		zlib1g-dev libipc-run-perl bzip2 xz-utils dpkg-dev curl)
	local missing=() p
	for p in "${want[@]}"; do
		[[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	say "installing build dependencies: ${missing[*]}"
	# (waiting for dpkg's lock: the test command may be installing too)
	local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900)
	if ! as_root "${apt[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null >&2; then
		as_root "${apt[@]}" update </dev/null >&2
		as_root "${apt[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null >&2
	fi
}

# Source package version of $1 in the private sources (the newest).
src_version() {
	papt_cache showsrc "$1" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -V | tail -n 1
}

# The upstream tarball of $1 (postgresql-NN) of the newest minor release up
# to $2 that the archive's pool still holds, into $3; its version.  (A mirror
# may lag its index: the index names a release whose tarball it lacks.)
pool_tarball() {
	local pkg=$1 major=${2%%.*} minor=${2#*.} dir=$3 url
	for ((; minor >= 0; minor--)); do
		url=$BF_DEBIAN_MIRROR/pool/main/p/$pkg/${pkg}_$major.$minor.orig.tar.bz2
		if curl -fsS -o "$dir/${pkg}_$major.$minor.orig.tar.bz2" "$url" 2>/dev/null; then
			say "downloaded $url (the index's release is not in the pool)"
			echo "$major.$minor"
			return 0
		fi
	done
	return 1
}

# ------------------------------------------------------------------ server ----
build_server() {
	local major=$1 pkg=postgresql-$1 existing ver upstream prefix work tarball pgtap_tar
	existing=$(complete_dir "$BF_PG_CACHE/pg$major-*[0-9]" "$RECIPE" || true)
	if [[ -n $existing && ${BF_PG_REBUILD:-0} != 1 ]]; then
		say "reusing $existing ($(head -n 1 "$existing/$MARKER"))"
		echo "$existing"
		return 0
	fi
	ensure_build_deps
	apt_setup
	ver=$(src_version "$pkg")
	[[ -n $ver ]] || die "no source package $pkg in Debian sid or trixie"
	upstream=${ver%-*}
	prefix=$BF_PG_CACHE/pg$major-$upstream
	work=$(mktemp -d "$BF_PG_CACHE/build-pg$major.XXXXXX")
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$work'" EXIT
	say "downloading the source of $pkg $ver and pgtap (Debian)"
	(cd "$work" && papt_get -q source --download-only --tar-only pgtap >&2) ||
		die "apt-get source pgtap failed"
	if ! (cd "$work" && papt_get -q source --download-only --tar-only "$pkg" >&2); then
		upstream=$(pool_tarball "$pkg" "$upstream" "$work") ||
			die "apt-get source $pkg failed, and no $pkg tarball of $major.x is in the pool"
		prefix=$BF_PG_CACHE/pg$major-$upstream
	fi
	tarball=$(ls "$work"/"${pkg}"_*.orig.tar.* | head -n 1)
	pgtap_tar=$(ls "$work"/pgtap_*.orig.tar.* | head -n 1)
	mkdir "$work/pg" "$work/pgtap"
	tar -C "$work/pg" --strip-components=1 -xf "$tarball"
	tar -C "$work/pgtap" --strip-components=1 -xf "$pgtap_tar"

	rm -rf "$prefix"
	say "configure (prefix $prefix)"
	(cd "$work/pg" && ./configure --prefix="$prefix" --enable-tap-tests --with-icu \
		--without-readline >"$work/configure.log" 2>&1) || {
		tail -n 40 "$work/configure.log" >&2
		die "configure failed"
	}
	# The server, client programs, pg_regress and the Perl TAP modules (all
	# under src/), then contrib (the tests use citext and dblink).
	say "compiling PostgreSQL $upstream (nice -n $BF_BUILD_NICE make -j$BF_BUILD_JOBS; 10-20 minutes)"
	local t0=$SECONDS
	(cd "$work/pg" && nice -n "$BF_BUILD_NICE" make -j"$BF_BUILD_JOBS" -s >"$work/make.log" 2>&1 &&
		nice -n "$BF_BUILD_NICE" make -j"$BF_BUILD_JOBS" -s -C contrib >>"$work/make.log" 2>&1) || {
		tail -n 60 "$work/make.log" >&2
		die "make failed"
	}
	say "compiled in $((SECONDS - t0)) s; installing"
	(cd "$work/pg" && make -s install >>"$work/make.log" 2>&1 &&
		make -s -C contrib install >>"$work/make.log" 2>&1) || {
		tail -n 40 "$work/make.log" >&2
		die "make install failed"
	}
	say "building pgTAP $(basename "$pgtap_tar") against it"
	(cd "$work/pgtap" && make PG_CONFIG="$prefix/bin/pg_config" >"$work/pgtap.log" 2>&1 &&
		make PG_CONFIG="$prefix/bin/pg_config" install >>"$work/pgtap.log" 2>&1) || {
		tail -n 40 "$work/pgtap.log" >&2
		die "pgTAP build failed"
	}
	# The tree stays readable by everyone (tests run the server as postgres).
	chmod -R a+rX "$prefix"
	{
		echo "PostgreSQL $upstream (Debian source $pkg $ver), pgTAP $(basename "$pgtap_tar"), built $(date -u +%FT%TZ)"
		echo "configure --prefix=$prefix --enable-tap-tests --with-icu --without-readline"
		echo "recipe $RECIPE"
	} >"$prefix/$MARKER"
	rm -rf "$work"
	trap - EXIT
	say "done: $prefix"
	echo "$prefix"
}

# ----------------------------------------------------------------- headers ----
unpack_headers() {
	local major=$1 pkg=postgresql-server-dev-$1 existing ver dest work deb
	existing=$(complete_dir "$BF_PG_CACHE/pg$major-headers-*" || true)
	if [[ -n $existing && ${BF_PG_REBUILD:-0} != 1 ]]; then
		say "reusing $existing ($(head -n 1 "$existing/$MARKER"))"
		echo "$existing"
		return 0
	fi
	apt_setup
	ver=$(papt_cache show "$pkg/trixie" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
	[[ -n $ver ]] || die "no binary package $pkg in Debian trixie"
	dest=$BF_PG_CACHE/pg$major-headers-${ver%%-*}
	work=$(mktemp -d "$BF_PG_CACHE/unpack-pg$major.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT
	say "downloading $pkg $ver (Debian trixie)"
	(cd "$work" && papt_get -q download "$pkg/trixie" >&2) || die "apt-get download $pkg failed"
	deb=$(ls "$work"/*.deb | head -n 1)
	rm -rf "$dest"
	mkdir -p "$dest"
	dpkg-deb -x "$deb" "$dest"
	[[ -f $dest/usr/include/postgresql/$major/server/postgres.h ]] ||
		die "$pkg has no server/postgres.h"
	chmod -R a+rX "$dest"
	echo "$pkg $ver, unpacked $(date -u +%FT%TZ)" >"$dest/$MARKER"
	rm -rf "$work"
	trap - EXIT
	say "done: $dest"
	echo "$dest"
}

usage() {
	echo "usage: bash test/pg-build.sh server MAJOR | headers MAJOR | deps MAJOR" >&2
	exit 2
}

[[ $# -eq 2 && $2 =~ ^[0-9]+$ ]] || usage
mkdir -p "$BF_PG_CACHE" 2>/dev/null || as_root mkdir -p "$BF_PG_CACHE"
[[ -w $BF_PG_CACHE ]] || die "$BF_PG_CACHE is not writable (run as root, or set BF_PG_CACHE)"
exec 9>"$BF_PG_CACHE/.lock-$1-$2"
flock 9 # one build of the same thing at a time; a second caller waits, then reuses
case $1 in
server) build_server "$2" ;;
headers) unpack_headers "$2" ;;
deps) ensure_build_deps ;;
*) usage ;;
esac
