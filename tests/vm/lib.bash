# tests/vm/lib.bash: sourced by tests/vm/run.sh (not a test itself).
#
# Host side of the VM harness (docs/VM.md):
#   vm_kernel      fetch Debian's newest 6.12 kernel package with
#                  `apt-get download` into a cache and unpack it there
#   vm_initramfs   busybox-static + modules + our binaries (with every shared
#                  library ldd names) + e2fsprogs + qemu-storage-daemon +
#                  the guest scripts, as a gzip'd newc cpio
#   vm_boot        qemu-system-x86_64 -accel tcg with a timeout; the guest's
#                  TAP arrives on its second serial port (ttyS1), kernel
#                  messages on the first (ttyS0)
# Each function sets variables (VM_KDIR, VM_KVER, VM_INITRD) or prints why
# it cannot, on stderr, and returns non-zero.

VM_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_ROOT_SRC=$(cd "$VM_SRC/../.." && pwd)
# Modules the guest loads; their dependencies (modinfo "depends=") are
# added in front.  crc32c_generic: ext4/jbd2 ask the crypto API for
# "crc32c", and the guest has no modprobe to load it on demand.
VM_MODULES=${UKS_VM_MODULES:-"crc32c_generic vhost_iotlb vdpa vduse virtio_vdpa virtio_blk ext4 vhost_vdpa"}

vm_cache_dir() {
	local c=${UKS_VM_CACHE:-/var/cache/uks-vm}
	if ! mkdir -p "$c" 2>/dev/null || [ ! -w "$c" ]; then
		c=$VM_ROOT_SRC/${O:-build}/vm/cache
		mkdir -p "$c" || return 1
	fi
	echo "$c"
}

# vm_kernel: sets VM_KDIR (unpacked package root) and VM_KVER.
vm_kernel() {
	local cache pkg ver dir deb
	if [ -n "${UKS_VM_KERNEL_DIR:-}" ]; then
		VM_KDIR=$UKS_VM_KERNEL_DIR
		VM_KVER=$(ls "$VM_KDIR/lib/modules" | head -1)
		[ -n "$VM_KVER" ] && return 0
		echo "UKS_VM_KERNEL_DIR=$VM_KDIR has no lib/modules/VERSION" >&2
		return 1
	fi
	cache=$(vm_cache_dir) || { echo "no writable cache directory" >&2; return 1; }
	exec 9>"$cache/.lock"
	flock 9	# parallel builds (gcc and clang trees) share the cache
	pkg=$(apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64-unsigned$' | sort -V | tail -1)
	if [ -n "$pkg" ]; then
		ver=${pkg#linux-image-}
		ver=${ver%-unsigned}
		dir=$cache/$ver
		if [ ! -e "$dir/.done" ]; then
			rm -rf "$dir" "$cache"/*.deb
			if (cd "$cache" && apt-get download -q "$pkg" >"$cache/download.log" 2>&1); then
				deb=$(ls "$cache"/linux-image-*.deb | head -1)
				mkdir -p "$dir.tmp" && dpkg-deb -x "$deb" "$dir.tmp" && mv "$dir.tmp" "$dir" &&
					touch "$dir/.done"
				rm -f "$deb"
			else
				echo "apt-get download $pkg failed: $(tail -1 "$cache/download.log")" >&2
			fi
		fi
	fi
	# Fall back to the newest kernel unpacked earlier (no package index, offline).
	dir=$(ls -d "$cache"/6.12.*/.done 2>/dev/null | sort -V | tail -1)
	exec 9>&-
	if [ -z "$dir" ]; then
		echo "no Debian linux-image-6.12.*-amd64-unsigned package could be fetched" \
			"(apt-cache pkgnames found '${pkg:-nothing}')" >&2
		return 1
	fi
	VM_KDIR=${dir%/.done}
	VM_KVER=$(basename "$VM_KDIR")
	[ -e "$VM_KDIR/boot/vmlinuz-$VM_KVER" ] || { echo "$VM_KDIR: no boot/vmlinuz-$VM_KVER" >&2; return 1; }
}

# vm_modules_order: prints the module files to load, dependencies first.
vm_modules_order() {
	local mdir=$VM_KDIR/lib/modules/$VM_KVER
	declare -A path seen
	local f n
	while read -r f; do
		n=${f##*/}; n=${n%%.ko*}; n=${n//-/_}
		path[$n]=$f
	done < <(find "$mdir/kernel" -name '*.ko' -o -name '*.ko.xz')
	_vm_resolve() {
		local m=${1//-/_} d deps
		[ -n "${seen[$m]:-}" ] && return 0
		seen[$m]=1
		if [ -z "${path[$m]:-}" ]; then
			# built in: nothing to load
			grep -q "/${m//_/[-_]}\.ko\$" "$mdir/modules.builtin" 2>/dev/null && return 0
			echo "module $m: neither a module nor built in" >&2
			return 1
		fi
		case ${path[$m]} in
		*.xz) deps=$(xz -dc "${path[$m]}" | tr '\0' '\n' | sed -n 's/^depends=//p') ;;
		*) deps=$(tr '\0' '\n' <"${path[$m]}" | sed -n 's/^depends=//p') ;;
		esac
		for d in ${deps//,/ }; do _vm_resolve "$d" || return 1; done
		echo "${path[$m]}"
	}
	for n in $VM_MODULES; do _vm_resolve "$n" || return 1; done
}

# _vm_copy_elf SRC DEST_IN_ROOT: the program and every library ldd lists.
_vm_copy_elf() {
	local src=$1 dst=$2 lib
	mkdir -p "$VM_RD/$(dirname "$dst")"
	cp -L "$src" "$VM_RD/$dst" || return 1
	for lib in $(ldd "$src" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
		[ -e "$VM_RD/$lib" ] && continue
		mkdir -p "$VM_RD/$(dirname "$lib")"
		cp -L "$lib" "$VM_RD/$lib" || return 1
	done
}

# vm_initramfs OUTDIR: builds OUTDIR/initrd.gz; sets VM_INITRD.
vm_initramfs() {
	local out=$1 O=${O:-build} f a bb
	# staged outside the build tree, which other tests rebuild in parallel
	VM_RD=$(mktemp -d "${TMPDIR:-/tmp}/uks-vm-root.XXXXXX") || return 1
	mkdir -p "$VM_RD"/{bin,sbin,usr/bin,usr/sbin,lib/modules,etc,proc,sys,dev,tmp,mnt,run,tests}
	bb=$(command -v busybox) || { echo "busybox not found (busybox-static)" >&2; return 1; }
	! ldd "$bb" >/dev/null 2>&1 ||
		{ echo "$bb is not statically linked (install busybox-static)" >&2; return 1; }
	cp -L "$bb" "$VM_RD/bin/busybox"
	for a in $("$bb" --list); do
		[ "$a" = busybox ] || ln -s busybox "$VM_RD/bin/$a"
	done
	# modules, in load order
	vm_modules_order >"$out/modules.list" || return 1
	: >"$VM_RD/etc/modules.order"
	# decompressed here: busybox insmod would first offer the .xz to the
	# kernel's finit_module and log "Invalid ELF header magic" each time
	while read -r f; do
		a=${f##*/}; a=${a%.xz}
		case $f in
		*.xz) xz -dc "$f" >"$VM_RD/lib/modules/$a" ;;
		*) cp "$f" "$VM_RD/lib/modules/$a" ;;
		esac
		echo "$a" >>"$VM_RD/etc/modules.order"
	done <"$out/modules.list"
	# our binaries (dynamically linked, so with their libraries and loader)
	_vm_copy_elf "$O/uks" /bin/uks || return 1
	for f in "$O"/libuks.so.*; do [ -e "$f" ] && cp -L "$f" "$VM_RD/lib/"; done
	_vm_copy_elf "$O/tests/vm/vduse-probe" /bin/vduse-probe || return 1
	_vm_copy_elf "$O/tests/vm/blkbench" /bin/blkbench || return 1
	_vm_copy_elf "$O/tests/vm/vhost-drive" /bin/vhost-drive || return 1
	# DAMON on a kernel with soft-dirty bits and emulated accessed bits
	# (guest.d/50-damon.sh); the benchmark only where `make bench` built it
	for f in tests/unit/damon/vaddr_proc tests/unit/damon/self bench/damon_overhead \
		 bench/damon_self_overhead; do
		[ -x "$O/$f" ] || continue
		_vm_copy_elf "$O/$f" "/bin/damon-${f##*/}" || return 1
	done
	if [ -x "$O/uks-masim" ]; then
		_vm_copy_elf "$O/uks-masim" /bin/uks-masim || return 1
		cp configs/masim/zigzag.cfg "$VM_RD/tests/" || return 1
	fi
	# peers and tools
	for f in mkfs.ext4 e2fsck; do
		_vm_copy_elf "$(command -v "$f" || echo "/sbin/$f")" "/usr/sbin/$f" || return 1
	done
	[ -e /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$VM_RD/etc/"
	if command -v qemu-storage-daemon >/dev/null; then
		_vm_copy_elf "$(command -v qemu-storage-daemon)" /usr/bin/qemu-storage-daemon || return 1
	fi
	# the guest side
	cp "$VM_SRC/init" "$VM_RD/init"
	chmod 755 "$VM_RD/init"
	cp "$VM_SRC/tap.ash" "$VM_RD/tests/"
	mkdir -p "$VM_RD/tests/guest"
	cp "$VM_SRC"/guest.d/*.sh "$VM_RD/tests/guest/" || return 1
	VM_INITRD=$out/initrd.gz
	(cd "$VM_RD" && find . | cpio -o -H newc --quiet) | gzip -1 >"$VM_INITRD" || return 1
	rm -rf "$VM_RD"
}

# vm_boot OUTDIR MODE TIMEOUT: boots; OUTDIR/console.log (ttyS0) and
# OUTDIR/guest.out (ttyS1).  Returns qemu's (or timeout's) status.
# Single-threaded TCG: with one host thread per vCPU, a vCPU once ran the
# int3 that another was patching into the kernel text (static keys) and
# the guest died with "Oops: int3" in sched_clock_cpu during boot.
vm_boot() {
	local out=$1 mode=$2 t=$3
	rm -f "$out/console.log" "$out/guest.out"
	timeout -k 5 "$t" qemu-system-x86_64 -accel tcg,thread=single -cpu max -machine q35 -m 1G -smp 2 \
		-display none -vga none -monitor none -nic none -no-reboot \
		-serial "file:$out/console.log" -serial "file:$out/guest.out" \
		-kernel "$VM_KDIR/boot/vmlinuz-$VM_KVER" -initrd "$VM_INITRD" \
		-append "console=ttyS0 panic=-1 loglevel=5 uks.mode=$mode uks.bench_secs=${UKS_VM_BENCH_SECS:-3} uks.bench_rounds=${UKS_VM_BENCH_ROUNDS:-2} ${UKS_VM_APPEND:-}" \
		</dev/null >"$out/qemu.log" 2>&1
}
