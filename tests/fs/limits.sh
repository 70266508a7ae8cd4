#!/usr/bin/env bash
# Sizes written into uksd's files that it cannot have: under an RLIMIT_AS
# set on the running daemon (prlimit --pid, its VmSize + 1 GiB and 8 MiB a
# CPU, no cgroup), `echo 100000000 > buffer_size_kb` (95 GiB per CPU) fails with
# ENOMEM before uksd allocates: the daemon lives, its peak RSS (VmHWM)
# stays near what it was, and the buffer keeps its size and events.  The
# same for per_cpu/cpu0/buffer_size_kb and for a size past the rlimit but
# under MemAvailable; reasonable sizes still work.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "sizes past memory over FUSE"
command -v prlimit >/dev/null || { skip "sizes past memory" "no prlimit (util-linux)"; tap_done; exit; }

ok "uksd --daemon returns once it serves" -- \
	"$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing
pid=$(cat "$pidf" 2>/dev/null || echo 0)
kb() { awk -v k="$1:" '$1 == k {print $2}' /proc/$pid/status; }
ncpu=$(ls -d "$T"/per_cpu/cpu* | wc -l)

# 1 GiB and room for the 4096 KiB buffers of every CPU, in KiB
headroom=$((1048576 + 8192 * ncpu))
ok "an RLIMIT_AS of VmSize + 1 GiB (and 8 MiB a CPU) on the daemon" -- bash -c "
	prlimit --pid $pid --as=\$(( ($(kb VmSize) + $headroom) * 1024 )) &&
	prlimit --pid $pid --as --noheadings --raw | grep -q '^AS '"

# The peak RSS may grow by half of what it was, plus 32 MiB, for serving
# the requests; taking the memory asked for would be 1 GiB or more (the rlimit).
hwm0=$(kb VmHWM)
bound=$((hwm0 + hwm0 / 2 + 32768))
echo "# VmHWM before: $hwm0 kB, bound $bound kB, $ncpu CPUs"

ok "echo 100000000 > buffer_size_kb: Cannot allocate memory, old size and events kept" -- bash -c "
	cd '$T' && echo 'written before the resize' > trace_marker &&
	s=\$(date +%s%N); out=\$(timeout 120 bash -c 'echo 100000000 > buffer_size_kb' 2>&1); rc=\$?; e=\$(date +%s%N)
	echo \"rc \$rc, \$(( (e - s) / 1000000 )) ms: \$out\"
	[ \$rc = 1 ] && echo \"\$out\" | grep -q 'Cannot allocate memory' &&
	[ \"\$(cat buffer_size_kb)\" = 1408 ] && [ \"\$(cat buffer_total_size_kb)\" = $((1408 * ncpu)) ] &&
	grep -q 'tracing_mark_write: written before the resize' trace"
ok "uksd lives and its peak RSS stayed under the bound" -- bash -c "
	kill -0 $pid && h=\$(awk '\$1 == \"VmHWM:\" {print \$2}' /proc/$pid/status) &&
	echo \"VmHWM \$h kB (bound $bound)\" && [ \"\$h\" -le $bound ]"

ok "per_cpu/cpu0/buffer_size_kb: the same, for one CPU" -- bash -c "
	cd '$T' && ! echo 100000000 > per_cpu/cpu0/buffer_size_kb 2>'$tmp/err' &&
	grep -q 'Cannot allocate memory' '$tmp/err' && [ \"\$(cat per_cpu/cpu0/buffer_size_kb)\" = 1408 ] &&
	grep -q 'tracing_mark_write: written before the resize' trace"

avail=$(awk '$1 == "MemAvailable:" {print $2}' /proc/meminfo)
if [ "${avail:-0}" -gt $((headroom + 262144 + 1048576)) ]; then
	# 256 MiB past the rlimit's headroom over all CPUs, 1 GiB under MemAvailable
	ok "a size past the rlimit but under MemAvailable: ENOMEM too" -- bash -c "
		cd '$T' && ! echo $(((headroom + 262144) / ncpu)) > buffer_size_kb 2>'$tmp/err' &&
		grep -q 'Cannot allocate memory' '$tmp/err' && [ \"\$(cat buffer_size_kb)\" = 1408 ]"
else
	skip "a size past the rlimit but under MemAvailable" "not enough memory available"
fi
ok "the peak RSS is still under the bound" -- bash -c "
	kill -0 $pid && h=\$(awk '\$1 == \"VmHWM:\" {print \$2}' /proc/$pid/status) &&
	echo \"VmHWM \$h kB (bound $bound)\" && [ \"\$h\" -le $bound ]"

ok "4096 KiB and back to 1408 still work" -- bash -c "
	cd '$T' && echo 4096 > buffer_size_kb && [ \"\$(cat buffer_size_kb)\" = 4096 ] &&
	[ \"\$(cat buffer_total_size_kb)\" = $((4096 * ncpu)) ] &&
	echo 'in the bigger buffer' > trace_marker && grep -q 'tracing_mark_write: in the bigger buffer' trace &&
	echo 1408 > buffer_size_kb && [ \"\$(cat buffer_size_kb)\" = 1408 ] &&
	echo 256 > per_cpu/cpu0/buffer_size_kb && [ \"\$(cat per_cpu/cpu0/buffer_size_kb)\" = 256 ] &&
	if [ $ncpu -gt 1 ]; then [ \"\$(cat buffer_size_kb)\" = X ]; fi &&
	echo 1408 > buffer_size_kb && [ \"\$(cat buffer_size_kb)\" = 1408 ]"
ok "saved_cmdlines_size: 0 and past PID_MAX_DEFAULT are EINVAL, the size stays" -- bash -c "
	cd '$T' && ! echo 0 > saved_cmdlines_size 2>/dev/null && ! echo 32769 > saved_cmdlines_size 2>'$tmp/err' &&
	grep -q 'Invalid argument' '$tmp/err' && [ \"\$(cat saved_cmdlines_size)\" = 128 ] &&
	echo 32768 > saved_cmdlines_size && [ \"\$(cat saved_cmdlines_size)\" = 32768 ] &&
	echo 128 > saved_cmdlines_size"
tap_done
