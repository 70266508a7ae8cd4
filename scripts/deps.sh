#!/usr/bin/env bash
# scripts/deps.sh: the one list of Debian packages uks needs.
#
#   scripts/deps.sh           install what is missing (as root), or print
#                             the exact apt-get command to run
#   scripts/deps.sh --check   report what is missing; exit 1 if anything is
set -eu

PACKAGES=(
	build-essential pkg-config	# gcc, make, libc headers
	clang llvm libclang-rt-14-dev	# CC=clang builds, libFuzzer, sanitizers
	libfuse3-dev fuse3		# uksfs (FUSE mounts)
	liburing-dev			# uksd I/O
	libpng-dev			# DAMON heatmaps
	libdw-dev			# traced programs' stacks (stacktrace triggers)
	zlib1g-dev			# DAMON json_compressed records
	python3 git			# real programs run under libuks-malloc.so
	libjemalloc2 libmimalloc2.0	# allocator peers in make bench
	libtcmalloc-minimal4
	liblttng-ust-dev lttng-tools	# LTTng-UST tracer peer in make bench
)
# Subsystems with many packages list them in scripts/deps.d/NAME.list
# (one package per line, '#' comments).
for list in "$(dirname "$0")"/deps.d/*.list; do
	[ -e "$list" ] || continue
	while read -r p _; do
		[ -n "$p" ] && [ "${p#\#}" = "$p" ] && PACKAGES+=("$p")
	done <"$list"
done

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ "${1:-}" = --check ]; then
	if [ ${#missing[@]} -eq 0 ]; then
		echo "deps: all ${#PACKAGES[@]} packages installed"
		exit 0
	fi
	echo "deps: missing: ${missing[*]}"
	exit 1
fi

[ ${#missing[@]} -eq 0 ] && { echo "deps: all ${#PACKAGES[@]} packages installed"; exit 0; }
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing: ${missing[*]}"
	echo "deps: run as root: apt-get update && $cmd"
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$cmd
