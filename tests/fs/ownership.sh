#!/usr/bin/env bash
# tracefs's gid= as uksd --gid: the tracing tree's files and directories,
# instances and event directories made later included, have that group;
# chown/chgrp (as root) stick per path and others inherit as tracefs
# (6.x) has them (from the top, from instances/, from the directory that
# holds events/); a caller without CAP_CHOWN gets EPERM; rmdir drops what
# an instance had; other trees keep the serving user's group; garbage
# --gid values are refused.
set -u
. "$(dirname "$0")/uksd.bash"

for bad in '' abc 12x -1 4294967295 99999999999999999999 ' 5' no_such_group_uks; do
	ok "uksd --gid '$bad' is refused" -- bash -c "
		out=\$('$uksd' --gid '$bad' --no-fuse --socket '$tmp/x.sock' --once 2>&1); rc=\$?
		echo \"\$out\"; [ \$rc = 2 ] &&
		[ \"\$out\" = \"uksd: --gid: not a group number or name: '$bad'\" ]"
done
ok "uksd --help shows --gid" -- bash -c "'$uksd' --help | grep -q -- '--gid GID'"

[ "$(id -u)" = 0 ] || { skip "ownership through FUSE" "needs root (chown, setpriv)"; tap_done; exit; }
need_fuse "ownership through FUSE"

ok "uksd --gid 4 --daemon returns once it serves" -- \
	"$uksd" --daemon --gid 4 --allow-other --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing D=$mnt/sys/kernel/debug/tracing
E=events/sched/sched_process_exec
g() { stat -c %g "$@" | tr '\n' ' '; }
u() { stat -c %u "$@" | tr '\n' ' '; }
is() {	# is WHAT EXPECTED ACTUAL
	[ "$2" = "$3" ] || { echo "$1: expected '$2', got '$3'"; return 1; }
}

ok "the top files, events/ and an event's files have group 4, owner 0" -- bash -c "
	$(declare -f g u is); cd '$T' &&
	is gid '4 4 4 4 4 4 4 ' \"\$(g . trace set_event events events/sched $E $E/enable)\" &&
	is uid '0 0 0 0 0 0 0 ' \"\$(u . trace set_event events events/sched $E $E/enable)\""
ok "the other trees keep the serving user's group" -- bash -c "
	$(declare -f g is); is gid '0 0 ' \"\$(g '$mnt/sys' '$mnt/sys/kernel/slab')\""
ok "an instance made later has group 4, its events too" -- bash -c "
	$(declare -f g is); cd '$T' && mkdir instances/o1 &&
	is gid '4 4 4 4 ' \"\$(g instances/o1 instances/o1/trace instances/o1/events instances/o1/$E)\""

ok "chgrp of an event directory sticks; its files and siblings keep 4" -- bash -c "
	$(declare -f g is); cd '$T' && chgrp 5 $E &&
	is gid '5 4 4 4 ' \"\$(g $E $E/enable events/sched events/sched/enable)\""
ok "chgrp of events/ is its own: events/sched keeps 4" -- bash -c "
	$(declare -f g is); cd '$T' && chgrp 6 events &&
	is gid '6 4 5 ' \"\$(g events events/sched $E)\""
ok "chown of a file sticks and leaves its group; chown back" -- bash -c "
	$(declare -f g u is); cd '$T' && chown 65534 $E/enable &&
	is uid '65534 0 ' \"\$(u $E/enable $E/format)\" && is gid 4 \$(g $E/enable) &&
	chown 0 $E/enable && is uid 0 \$(u $E/enable)"
ok "sys/kernel/debug/tracing is the same tracefs: it shows the same owners" -- bash -c "
	$(declare -f g is); is gid '6 5 ' \"\$(g '$D/events' '$D/$E')\""
ok "chgrp of the top: what has no group of its own follows" -- bash -c "
	$(declare -f g is); cd '$T' && chgrp 7 . &&
	is gid '7 7 7 6 5 7 ' \"\$(g . trace events/sched events $E instances/o1/trace)\" && chgrp 4 ."
ok "chgrp of instances/: instances and their events follow, the top does not" -- bash -c "
	$(declare -f g is); cd '$T' && chgrp 8 instances && mkdir instances/o2 &&
	is gid '8 8 8 8 8 4 ' \"\$(g instances instances/o1 instances/o2 instances/o2/trace instances/o2/$E trace)\""
ok "chgrp of an instance: its events follow, its other files follow instances/" -- bash -c "
	$(declare -f g is); cd '$T' && chgrp 9 instances/o2 &&
	is gid '9 8 9 9 ' \"\$(g instances/o2 instances/o2/trace instances/o2/events/sched instances/o2/$E)\""
ok "rmdir drops an instance's owners: made again, it inherits" -- bash -c "
	$(declare -f g is); cd '$T' && chgrp 10 instances/o2/trace && rmdir instances/o2 &&
	mkdir instances/o2 && is gid '8 8 ' \"\$(g instances/o2 instances/o2/trace)\" &&
	rmdir instances/o2 instances/o1"
ok "a removed event's owner goes with it: made again, it inherits" -- bash -c "
	$(declare -f g is); cd '$T' &&
	echo 'e:ownt/ev1 sched/sched_process_exec' >> dynamic_events && chgrp 11 events/ownt/ev1 &&
	is gid 11 \$(g events/ownt/ev1) && echo '-:ownt/ev1' >> dynamic_events &&
	echo 'e:ownt/ev1 sched/sched_process_exec' >> dynamic_events &&
	is gid 4 \$(g events/ownt/ev1) && echo '-:ownt/ev1' >> dynamic_events"

ok "a caller without CAP_CHOWN: chgrp and chown are EPERM, nothing changes" -- bash -c "
	$(declare -f g u is); cd '$T' &&
	out=\$(setpriv --reuid=65534 --regid=65534 --clear-groups chgrp 65534 trace 2>&1); rc=\$?
	echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'Operation not permitted' &&
	out=\$(setpriv --reuid=65534 --regid=65534 --clear-groups chown 65534 trace 2>&1); rc=\$?
	echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'Operation not permitted' &&
	is owner '0:4' \$(stat -c %u:%g trace)"
ok "root without CAP_CHOWN gets EPERM too" -- bash -c "
	cd '$T' && out=\$(setpriv --inh-caps=-chown --bounding-set=-chown chgrp 3 trace 2>&1); rc=\$?
	echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'Operation not permitted'"
ok "chgrp outside the tracing tree is EPERM" -- bash -c "
	out=\$(chgrp 3 '$mnt/sys/kernel/slab' 2>&1); rc=\$?
	echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'Operation not permitted'"
tap_done
