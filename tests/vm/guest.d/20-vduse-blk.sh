#!/bin/sh
# Our vduse-blk device in the real kernel: `uks vduse-blk --attach` with a
# RAM backend becomes a virtio-blk disk; capacity, dd patterns with
# O_DIRECT, ext4 round trip (mkfs, fsck, mount, checksums, remount),
# flush, resize, detach, SIGTERM shutdown and destroy.
[ "${UKS_VM_GUEST:-}" = 1 ] || { echo "1..0 # SKIP runs inside the tests/vm guest only (bash tests/vm/run.sh)"; exit 77; }
. /tests/tap.ash
NAME=uksblk0
log=/tmp/vduse-blk.log

if ! $UKS vduse-blk --help >/tmp/help.out 2>&1; then
	echo "1..0 # SKIP 'uks vduse-blk' is not in this build ($(head -1 /tmp/help.out))"
	exit 77
fi

wait_for() {	# wait_for SECONDS COMMAND...: poll every 0.2 s
	_n=$(($1 * 5)); shift
	while [ $_n -gt 0 ]; do "$@" && return 0; sleep 0.2; _n=$((_n - 1)); done
	"$@"
}
disk_of() {	# the block device virtio_vdpa made for vdpa device $1
	for _b in /sys/bus/vdpa/devices/$1/virtio*/block/*; do
		[ -e "$_b" ] && { basename "$_b"; return 0; }
	done
	return 1
}
show_log() { cat $log; dmesg | tail -15; }
# exited() PID: the process is gone or a zombie (kill -0 succeeds on zombies)
exited() {
	[ -e /proc/$1/stat ] || return 0
	[ "$(sed 's/.*) //' /proc/$1/stat | cut -c1)" = Z ]
}

$UKS vduse-blk --name $NAME --backend ram:64M --attach >$log 2>&1 &
pid=$!
ok "daemon reports 'vduse-blk $NAME: ready'" -- \
	sh -c "n=150; while [ \$n -gt 0 ]; do grep -q 'vduse-blk $NAME: ready' $log && exit 0; kill -0 $pid || exit 1; sleep 0.2; n=\$((n-1)); done; exit 1" ||
	true
if ! grep -q "vduse-blk $NAME: ready" $log; then
	show_log | sed 's/^/# /'
	kill $pid 2>/dev/null
	tap_done
	exit 1
fi
ok "/dev/vduse/$NAME exists" -- test -c /dev/vduse/$NAME
ok "virtio_vdpa bound the vdpa device" -- wait_for 10 test -e /sys/bus/vdpa/drivers/virtio_vdpa/$NAME
disk=$(wait_for 10 disk_of $NAME)
dev=/dev/$disk
ok "a virtio-blk disk appeared ($dev)" -- wait_for 10 test -b "$dev"
if [ ! -b "$dev" ]; then
	show_log | sed 's/^/# /'
	kill $pid 2>/dev/null
	tap_done
	exit 1
fi
ok "capacity is 64 MiB (131072 sectors)" -- sh -c "s=\$(cat /sys/block/$disk/size); echo size \$s; [ \$s = 131072 ]"
ok "blockdev --getsize64 agrees" -- sh -c "[ \$(blockdev --getsize64 $dev) = 67108864 ]"

# dd patterns: start, middle, last MiB, with O_DIRECT both ways
dd if=/dev/urandom of=/tmp/pat bs=1M count=4 2>/dev/null
dd if=/dev/urandom of=/tmp/tail bs=1M count=1 2>/dev/null
want=$(sha256sum </tmp/pat)
want_tail=$(sha256sum </tmp/tail)
ok "dd 4 MiB at offset 0 (O_DIRECT)" -- dd if=/tmp/pat of=$dev bs=1M oflag=direct conv=fsync
ok "dd 4 MiB at offset 20 MiB (O_DIRECT)" -- dd if=/tmp/pat of=$dev bs=1M seek=20 oflag=direct conv=fsync
ok "dd the last MiB (O_DIRECT)" -- dd if=/tmp/tail of=$dev bs=1M seek=63 oflag=direct conv=fsync
ok "a write past the end fails" -- sh -c "! dd if=/tmp/tail of=$dev bs=1M seek=64 count=1 oflag=direct 2>/dev/null"
echo 3 >/proc/sys/vm/drop_caches
ok "read back offset 0: same checksum" -- \
	sh -c "[ \"\$(dd if=$dev bs=1M count=4 iflag=direct 2>/dev/null | sha256sum)\" = '$want' ]"
ok "read back offset 20 MiB: same checksum" -- \
	sh -c "[ \"\$(dd if=$dev bs=1M skip=20 count=4 iflag=direct 2>/dev/null | sha256sum)\" = '$want' ]"
ok "read back the last MiB: same checksum" -- \
	sh -c "[ \"\$(dd if=$dev bs=1M skip=63 count=1 iflag=direct 2>/dev/null | sha256sum)\" = '$want_tail' ]"
ok "read back through the page cache (4 KiB blocks)" -- \
	sh -c "[ \"\$(dd if=$dev bs=4k skip=5120 count=1024 2>/dev/null | sha256sum)\" = '$want' ]"
ok "untouched RAM reads as zeros" -- \
	sh -c "[ \"\$(dd if=$dev bs=1M skip=40 count=1 iflag=direct 2>/dev/null | sha256sum)\" = \"\$(dd if=/dev/zero bs=1M count=1 2>/dev/null | sha256sum)\" ]"

# ext4 round trip
ok "mkfs.ext4" -- mkfs.ext4 -F -q $dev
ok "e2fsck -fn of the fresh file system" -- e2fsck -fn $dev
mkdir -p /mnt/v
ok "mount -t ext4" -- mount -t ext4 $dev /mnt/v
mkdir -p /mnt/v/d/e
cp /tmp/pat /mnt/v/pat
cp /tmp/tail /mnt/v/d/e/tail
i=0
while [ $i -lt 20 ]; do
	dd if=/dev/urandom of=/mnt/v/d/f$i bs=4k count=$((i + 1)) 2>/dev/null
	i=$((i + 1))
done
(cd /mnt/v && find . -type f | sort | xargs sha256sum) >/tmp/sums
ok "checksums of 22 files in the mounted file system" -- sh -c "cd /mnt/v && sha256sum -c /tmp/sums >/dev/null && [ \$(wc -l </tmp/sums) = 22 ]"
ok "sync (flushes to the device)" -- sync
ok "fsync through dd conv=fsync on a file" -- dd if=/tmp/tail of=/mnt/v/synced bs=1M conv=fsync
(cd /mnt/v && sha256sum synced) >>/tmp/sums
ok "umount" -- umount /mnt/v
ok "e2fsck -fn after umount: clean" -- e2fsck -fn $dev
echo 3 >/proc/sys/vm/drop_caches
ok "remount" -- mount -t ext4 $dev /mnt/v
ok "every checksum matches after remount" -- sh -c "cd /mnt/v && sha256sum -c /tmp/sums"
ok "umount again" -- umount /mnt/v
ok "blockdev --flushbufs" -- blockdev --flushbufs $dev

# resize
ok "uks vduse-blk resize $NAME 128M" -- $UKS vduse-blk resize $NAME 128M
ok "capacity becomes 262144 sectors" -- \
	wait_for 10 sh -c "[ \$(cat /sys/block/$disk/size) = 262144 ]"
ok "the file system is intact after the resize" -- e2fsck -fn $dev
ok "resize to a size that is not a block multiple: the daemon says EINVAL" -- \
	sh -c "! $UKS vduse-blk resize $NAME 1000 2>/tmp/rs.err && grep -q 'error -22' /tmp/rs.err"
ok "resize to garbage is a usage error (exit 2)" -- \
	sh -c "$UKS vduse-blk resize $NAME 12Q 2>/dev/null; [ \$? = 2 ]"
ok "the capacity did not change" -- sh -c "[ \$(cat /sys/block/$disk/size) = 262144 ]"

# detach, shutdown, destroy
ok "uks vduse-blk detach $NAME" -- $UKS vduse-blk detach $NAME
ok "the disk is gone after detach" -- wait_for 10 sh -c "[ ! -e /sys/block/$disk ]"
ok "the vdpa device is gone after detach" -- wait_for 10 sh -c "[ ! -e /sys/bus/vdpa/devices/$NAME ]"
kill -TERM $pid
ok "SIGTERM: the daemon exits with status 0" -- \
	wait_for 10 exited $pid
wait $pid
st=$?
ok "exit status was 0 (got $st)" -- test $st = 0
ok "the VDUSE device is destroyed (/dev/vduse/$NAME gone)" -- wait_for 5 sh -c "[ ! -e /dev/vduse/$NAME ]"

# SIGTERM while attached: clean shutdown detaches and destroys by itself
$UKS vduse-blk --name uksblk1 --backend ram:16M --attach >$log 2>&1 &
pid=$!
ok "second device uksblk1 ready" -- wait_for 30 grep -q 'vduse-blk uksblk1: ready' $log
kill -TERM $pid
ok "SIGTERM while attached: daemon exits" -- \
	wait_for 20 exited $pid
wait $pid
ok "and it detached and destroyed the device" -- \
	sh -c "[ ! -e /sys/bus/vdpa/devices/uksblk1 ] && [ ! -e /dev/vduse/uksblk1 ]"

# Bad input fails with a clear message and no device left behind
ok "a missing backing file is refused, named in the message" -- \
	sh -c "! $UKS vduse-blk --name uksbad --backend file:/tmp/none.img 2>/tmp/bad.err && grep -q 'file:/tmp/none.img' /tmp/bad.err && [ ! -e /dev/vduse/uksbad ]"
ok "a bad block size is a usage error (exit 2)" -- \
	sh -c "$UKS vduse-blk --name uksbad --backend ram:1M --block-size 1000 2>/dev/null; [ \$? = 2 ]"
ok "resize of a name nobody serves: exit 3" -- \
	sh -c "$UKS vduse-blk resize uksbad 1M 2>/dev/null; [ \$? = 3 ]"
ok "detach of a device that is not attached: ENODEV" -- \
	sh -c "! $UKS vduse-blk detach uksbad 2>/tmp/bad.err && grep -q 'No such device' /tmp/bad.err"

# Crash and reconnect on the file backend: a write acknowledged after a
# flush is in the file when the daemon is killed; a new daemon with
# --reconnect takes the device over and the disk keeps working.
dd if=/dev/zero of=/tmp/f.img bs=1M count=0 seek=32 2>/dev/null
$UKS vduse-blk --name uksblk2 --backend file:/tmp/f.img --attach --msg-timeout 5 >$log 2>&1 &
pid=$!
ok "file-backed uksblk2 ready" -- wait_for 30 grep -q 'vduse-blk uksblk2: ready' $log
ok "a second daemon for uksblk2 is refused" -- \
	sh -c "! $UKS vduse-blk --name uksblk2 --backend ram:1M 2>/tmp/second.err && grep -q 'a daemon serves this name' /tmp/second.err"
disk=$(wait_for 10 disk_of uksblk2)
dev=/dev/$disk
ok "uksblk2 disk appeared ($dev)" -- wait_for 10 test -b "$dev"
ok "dd 4 MiB at 8 MiB (O_DIRECT, fsync: FLUSH)" -- dd if=/tmp/pat of=$dev bs=1M seek=8 oflag=direct conv=fsync
kill -KILL $pid
wait $pid 2>/dev/null
ok "after SIGKILL the acknowledged data is in the backing file" -- \
	sh -c "[ \"\$(dd if=/tmp/f.img bs=1M skip=8 count=4 2>/dev/null | sha256sum)\" = '$want' ]"
ok "the device outlives its daemon (/dev/vduse/uksblk2)" -- test -c /dev/vduse/uksblk2
ok "without --reconnect a new daemon is told the device exists" -- \
	sh -c "! $UKS vduse-blk --name uksblk2 --backend file:/tmp/f.img 2>/tmp/exists.err && grep -q 'reconnect' /tmp/exists.err"
$UKS vduse-blk --name uksblk2 --backend file:/tmp/f.img --reconnect --attach >$log 2>&1 &
pid=$!
ok "--reconnect takes the device over" -- wait_for 30 grep -q 'vduse-blk uksblk2: ready.*reconnected' $log
ok "reads after the reconnect return the data" -- \
	sh -c "[ \"\$(dd if=$dev bs=1M skip=8 count=4 iflag=direct 2>/dev/null | sha256sum)\" = '$want' ]"
ok "writes after the reconnect land in the file" -- \
	sh -c "dd if=/tmp/tail of=$dev bs=1M seek=2 oflag=direct conv=fsync 2>/dev/null && [ \"\$(dd if=/tmp/f.img bs=1M skip=2 count=1 2>/dev/null | sha256sum)\" = '$want_tail' ]"
ok "uks vduse-blk stats counts the requests" -- \
	sh -c "$UKS vduse-blk stats uksblk2 | tee /dev/stderr | grep -q 'requests [1-9]'"
kill -TERM $pid
ok "SIGTERM: the reconnected daemon exits" -- wait_for 20 exited $pid
wait $pid
ok "and destroys the device" -- \
	wait_for 5 sh -c "[ ! -e /sys/bus/vdpa/devices/uksblk2 ] && [ ! -e /dev/vduse/uksblk2 ]"
[ "$tap_failed" = 0 ] || show_log | sed 's/^/# /'
tap_done
