#!/usr/bin/env bash
# scripts/get-ftracetest.sh DEST: the kernel's ftrace selftests
# (tools/testing/selftests/ftrace) from Debian's linux-source-6.12 package,
# into DEST, without installing anything: apt-get download, then only that
# directory out of the source tarball.  Does nothing when DEST has them.
set -eu
dest=$(realpath -m "$1") pkg=${UKS_FTRACETEST_PKG:-linux-source-6.12}
[ -x "$dest/ftracetest" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download "$pkg" >/dev/null 2>&1 ||
	{ apt-get update >/dev/null 2>&1 && apt-get download "$pkg" >/dev/null; }
ver=${pkg#linux-source-}
dpkg-deb --fsys-tarfile ./"$pkg"_*.deb | tar -xO "./usr/src/linux-source-$ver.tar.xz" |
	tar -xJ "linux-source-$ver/tools/testing/selftests/ftrace"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "linux-source-$ver/tools/testing/selftests/ftrace" "$dest"
echo "ftracetest from $(ls ./"$pkg"_*.deb) in $dest"
