#!/bin/sh
# uks-vm: bench
# The peer: qemu-storage-daemon's vduse-blk export, attached through the
# vDPA netlink with our code (vduse-probe attach).  In the test run: the
# peer works on this kernel (disk appears, dd round trip, clean shutdown).
# With uks.mode=bench (bash tests/vm/run.sh --bench): blkbench 4 KiB random
# reads/writes at queue depth 1 and 32 on qsd's device and on ours, same
# backend (null, then RAM), one "BENCH ..." line each with the ratio.
[ "${UKS_VM_GUEST:-}" = 1 ] || { echo "1..0 # SKIP runs inside the tests/vm guest only (bash tests/vm/run.sh)"; exit 77; }
. /tests/tap.ash
QSD=/usr/bin/qemu-storage-daemon
SECS=${UKS_VM_BENCH_SECS:-3}
[ -x $QSD ] || { echo "1..0 # SKIP qemu-storage-daemon not in the initramfs (qemu-system-common)"; exit 77; }

wait_for() {	# wait_for SECONDS COMMAND...
	_n=$(($1 * 5)); shift
	while [ $_n -gt 0 ]; do "$@" && return 0; sleep 0.2; _n=$((_n - 1)); done
	"$@"
}
disk_of() {
	for _b in /sys/bus/vdpa/devices/$1/virtio*/block/*; do
		[ -e "$_b" ] && { basename "$_b"; return 0; }
	done
	return 1
}

# qsd_start NAME BACKEND(null|ram) SIZE_MB: exported, attached; sets qsd_pid, disk
qsd_start() {
	case $2 in
	null) blk="driver=null-co,node-name=disk0,size=$(($3 * 1048576)),read-zeroes=on" ;;
	ram) dd if=/dev/zero of=/tmp/qsd.img bs=1M count=0 seek=$3 2>/dev/null
	     blk="driver=file,node-name=disk0,filename=/tmp/qsd.img,aio=threads" ;;
	esac
	$QSD --blockdev "$blk" \
		--export type=vduse-blk,id=exp0,node-name=disk0,name=$1,writable=on,num-queues=1,queue-size=256 \
		>/tmp/qsd.log 2>&1 &
	qsd_pid=$!
	wait_for 30 test -c /dev/vduse/$1 || return 1
	echo 10 >/sys/class/vduse/$1/msg_timeout
	/bin/vduse-probe attach $1 || return 1
	disk=$(wait_for 10 disk_of $1) && wait_for 10 test -b /dev/$disk
}
qsd_stop() {	# detach, SIGTERM (qsd destroys the device itself)
	/bin/vduse-probe detach $1
	kill -TERM $qsd_pid
	wait $qsd_pid
}
uks_start() {	# uks_start NAME BACKEND SIZE_MB; sets uks_pid, disk
	$UKS vduse-blk --name $1 --backend $2:${3}M --attach >/tmp/uks.log 2>&1 &
	uks_pid=$!
	wait_for 60 grep -q "vduse-blk $1: ready" /tmp/uks.log || return 1
	disk=$(wait_for 10 disk_of $1) && wait_for 10 test -b /dev/$disk
}
uks_stop() {
	kill -TERM $uks_pid
	wait $uks_pid
}
have_uks() { $UKS vduse-blk --help >/dev/null 2>&1; }

if [ "${UKS_VM_MODE:-test}" != bench ]; then
	qsd_start qsd0 ram 32 >/tmp/qsd-start.out 2>&1
	r=$?
	ok "qemu-storage-daemon exports qsd0 (vduse-blk, file on tmpfs) and vduse-probe attaches it" -- \
		sh -c "[ $r = 0 ] || { cat /tmp/qsd-start.out /tmp/qsd.log; exit 1; }"
	if [ -n "${disk:-}" ] && [ -b /dev/$disk ]; then
		ok "capacity is 32 MiB" -- sh -c "[ \$(cat /sys/block/$disk/size) = 65536 ]"
		dd if=/dev/urandom of=/tmp/pat bs=1M count=2 2>/dev/null
		ok "dd 2 MiB to the qsd disk and read it back" -- sh -c \
			"dd if=/tmp/pat of=/dev/$disk bs=1M seek=3 oflag=direct conv=fsync 2>/dev/null &&
			 [ \"\$(dd if=/dev/$disk bs=1M skip=3 count=2 iflag=direct 2>/dev/null | sha256sum)\" = \"\$(sha256sum </tmp/pat)\" ]"
		ok "blkbench completes I/O on the qsd disk (1 s, qd 4)" -- \
			sh -c "/bin/blkbench -q 4 -t 1 /dev/$disk | tee /dev/stderr | grep -q ' ios=[1-9]'"
	fi
	qsd_stop qsd0 >/tmp/qsd-stop.out 2>&1
	r=$?
	ok "detach and SIGTERM: qemu-storage-daemon exits 0" -- \
		sh -c "[ $r = 0 ] || { echo status $r; cat /tmp/qsd-stop.out /tmp/qsd.log; exit 1; }"
	ok "and its VDUSE device is destroyed" -- wait_for 10 sh -c "[ ! -e /dev/vduse/qsd0 ]"
	[ "$tap_failed" = 0 ] || sed 's/^/# qsd: /' /tmp/qsd.log
	tap_done
	exit
fi

# ---- bench mode
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
run_bench() {	# run_bench DEV: 4 lines "rw qd iops p50 p99"
	for rw in randread randwrite; do
		for qd in 1 32; do
			flag=; [ $rw = randwrite ] && flag=-w
			line=$(/bin/blkbench $flag -q $qd -t $SECS /dev/$1 2>&1)
			echo "$line" | grep -q ' iops=' || echo "# $line" >&2
			echo "$rw $qd $(echo "$line" | field iops) $(echo "$line" | field p50_us) $(echo "$line" | field p99_us)"
		done
	done
}
precondition() {	# a RAM disk is written whole first: measure copies, not first touches
	[ $2 = ram ] && dd if=/dev/zero of=/dev/$1 bs=1M oflag=direct 2>/dev/null
	return 0
}
ROUNDS=${UKS_VM_BENCH_ROUNDS:-2}
for backend in null ram; do
	: >/tmp/qsd.$backend
	: >/tmp/uks.$backend
	# alternate the two devices ROUNDS times; the best round of each counts
	round=0
	while [ $round -lt $ROUNDS ]; do
		round=$((round + 1))
		if ! qsd_start qsd0 $backend 64; then
			echo "BENCH $backend: qemu-storage-daemon device did not come up: $(tail -2 /tmp/qsd.log)"
			qsd_stop qsd0
			break
		fi
		precondition $disk $backend
		run_bench $disk >>/tmp/qsd.$backend
		qsd_stop qsd0
		wait_for 10 sh -c "[ ! -e /dev/vduse/qsd0 ]"
		if have_uks && uks_start uksb0 $backend 64; then
			precondition $disk $backend
			run_bench $disk >>/tmp/uks.$backend
			uks_stop
		else
			why="uks vduse-blk not in this build"
			have_uks && why="uks vduse-blk did not come up: $(tail -2 /tmp/uks.log | tr '\n' ' ')"
			echo "BENCH $backend: $why"
			break
		fi
	done
	# join qsd and uks rows; ratio = uks iops / qsd iops
	awk -v b=$backend 'FNR == NR { k = $1 " " $2; if (!(k in q) || $3 > qi[k]) { q[k] = $0; qi[k] = $3 }; next }
		{ k = $1 " " $2; if (!(k in u) || $3 > ui[k]) { u[k] = $0; ui[k] = $3 } }
		END {
			for (k in q) {
				split(q[k], a, " ")
				if (k in u) { split(u[k], c, " "); r = a[3] > 0 ? c[3] / a[3] : 0 }
				else { c[3] = "-"; c[4] = "-"; c[5] = "-"; r = 0 }
				printf "BENCH %s %s qd=%s uks: %s IOPS p50 %s us p99 %s us | qsd: %s IOPS p50 %s us p99 %s us | ratio %.2fx %s\n",
					b, a[1], a[2], c[3], c[4], c[5], a[3], a[4], a[5], r,
					(r >= 1.0 ? "MET" : "NOT MET")
			}
		}' /tmp/qsd.$backend /tmp/uks.$backend | sort
done
ok "qemu-storage-daemon measured on both backends (4 results each round)" -- \
	sh -c "[ \$(awk '\$3 > 0' /tmp/qsd.null /tmp/qsd.ram | wc -l) = $((8 * ROUNDS)) ]"
if have_uks; then
	ok "uks vduse-blk measured on both backends (4 results each round)" -- \
		sh -c "[ \$(awk '\$3 > 0' /tmp/uks.null /tmp/uks.ram | wc -l) = $((8 * ROUNDS)) ]"
fi
tap_done
