#!/bin/sh
# Our device under vhost_vdpa instead of virtio_vdpa: a user-space driver
# (tests/vm/vhost-drive.c) describes its memory with IOTLB messages, which
# VDUSE forwards to the device as UPDATE_IOTLB, and asks for the ring state
# (GET_VQ_STATE) — the control messages virtio_vdpa never sends.
[ "${UKS_VM_GUEST:-}" = 1 ] || { echo "1..0 # SKIP runs inside the tests/vm guest only (bash tests/vm/run.sh)"; exit 77; }
. /tests/tap.ash
NAME=uksvh0
log=/tmp/vduse-vhost.log

$UKS vduse-blk --help >/dev/null 2>&1 || { echo "1..0 # SKIP 'uks vduse-blk' is not in this build"; exit 77; }
[ -d /sys/bus/vdpa/drivers/vhost_vdpa ] || { echo "1..0 # SKIP vhost_vdpa is not loaded"; exit 77; }

wait_for() {	# wait_for SECONDS COMMAND...
	_n=$(($1 * 5)); shift
	while [ $_n -gt 0 ]; do "$@" && return 0; sleep 0.2; _n=$((_n - 1)); done
	"$@"
}
vhost_of() {
	for _v in /sys/bus/vdpa/devices/$1/vhost-vdpa-*; do
		[ -e "$_v" ] && { basename "$_v"; return 0; }
	done
	return 1
}

$UKS vduse-blk --name $NAME --backend ram:16M >$log 2>&1 &
pid=$!
ok "daemon ready (not attached)" -- wait_for 30 grep -q "vduse-blk $NAME: ready" $log
# bind to vhost_vdpa: no automatic probe, then a driver override
echo 0 >/sys/bus/vdpa/drivers_autoprobe
ok "attach with autoprobe off" -- $UKS vduse-blk attach $NAME
ok "driver_override = vhost_vdpa and probe" -- sh -c \
	"echo vhost_vdpa >/sys/bus/vdpa/devices/$NAME/driver_override && echo $NAME >/sys/bus/vdpa/drivers_probe"
echo 1 >/sys/bus/vdpa/drivers_autoprobe
vh=$(wait_for 10 vhost_of $NAME)
ok "a vhost-vdpa character device appeared (/dev/$vh)" -- wait_for 10 test -c "/dev/$vh"

/bin/vhost-drive /dev/$vh >/tmp/vh.out 2>&1
rc=$?
while IFS= read -r l; do
	case $l in
	"ok "*) tap_n=$((tap_n + 1)); echo "ok $tap_n vhost-drive: ${l#ok [0-9]* }" ;;
	"not ok "*) tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
		echo "not ok $tap_n vhost-drive: ${l#not ok [0-9]* }" ;;
	1..*) ;;
	*) echo "# $l" ;;
	esac
done </tmp/vh.out
ok "vhost-drive exit status 0 (got $rc)" -- test $rc = 0
ok "the daemon is still serving" -- kill -0 $pid
ok "detach" -- $UKS vduse-blk detach $NAME
kill -TERM $pid
wait $pid
st=$?
ok "SIGTERM: exit status 0 (got $st), device destroyed" -- \
	sh -c "[ $st = 0 ] && [ ! -e /dev/vduse/$NAME ]"
[ "$tap_failed" = 0 ] || sed 's/^/# daemon: /' $log
tap_done
