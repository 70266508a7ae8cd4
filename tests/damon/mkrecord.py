#!/usr/bin/env python3
# Write the hand-made record of tests/damon/record.sh with Python's struct,
# field by field as damo's writer does (native endianness, no padding):
# "damon_recfmt_ver", int32 2, then per snapshot int64 sec, int64 nsec,
# uint32 1, uint64 target id, uint32 nr_regions, per region uint64 start,
# uint64 end, uint32 nr_accesses.
#
# mkrecord.py FILE [MODE]: MODE writes an edge case instead (report_edge.sh):
#   targets N   N targets of two one-region snapshots each, ids 1000..
#   big         regions of 2^63 + 1 and 2^64 - 1 bytes
#   backwards   a region whose end is 16 MiB below its start (3rd snapshot)
#   empty       the header alone: a record with no snapshot
#   hugecount   a version-2 entry claiming 2^32 - 1 targets, then 64 KiB of 0xff
import struct
import sys

BASE = 0x7f0000000000
MIB = 1 << 20

def snapshot(f, t_ns, tid, regions):
    f.write(struct.pack('l', t_ns // 1000000000))
    f.write(struct.pack('l', t_ns % 1000000000))
    f.write(struct.pack('I', 1))
    f.write(struct.pack('L', tid))
    f.write(struct.pack('I', len(regions)))
    for s, e, n in regions:
        f.write(struct.pack('L', s))
        f.write(struct.pack('L', e))
        f.write(struct.pack('I', n))

def edge(f, mode, arg):
    if mode == 'targets':
        for i in range(2):
            for t in range(int(arg)):
                snapshot(f, 10**9 * (i + 1) + t, 1000 + t, [(BASE, BASE + MIB, t % 5)])
    elif mode == 'big':
        for i in range(2):
            snapshot(f, 10**9 * (i + 1), 7, [(0, (1 << 63) + 1, 3)])
            snapshot(f, 10**9 * (i + 1), 8, [(0, (1 << 64) - 1, 3)])
    elif mode == 'backwards':
        for i in range(3):
            regs = [(BASE, BASE + MIB, 1), (BASE + MIB, BASE + 2 * MIB, 0)]
            if i == 2:
                regs[1] = (BASE + 17 * MIB, BASE + MIB, 0)
            snapshot(f, 10**9 * (i + 1), 7, regs)
    elif mode == 'hugecount':
        f.write(struct.pack('qqI', 1, 0, 0xffffffff))
        f.write(b'\xff' * 65536)
    elif mode != 'empty':
        sys.exit('unknown mode ' + mode)

with open(sys.argv[1], 'wb') as f:
    f.write(b'damon_recfmt_ver')
    f.write(struct.pack('i', 2))
    if len(sys.argv) > 2:
        edge(f, sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
        sys.exit(0)
    # 12 aggregations of 100 ms of target 4242: a 64 MiB area whose hot
    # 16 MiB quarter moves up every 3 aggregations, a small always-warm
    # heap far below, and a cold stack far above
    for i in range(12):
        t = 5 * 1000000000 + (i + 1) * 100000000 + (i % 3) * 1000
        hot = i // 3
        regs = [(0x560000000000, 0x560000000000 + 4 * MIB, 2)]
        for q in range(4):
            s = BASE + q * 16 * MIB
            regs.append((s, s + 16 * MIB, 18 if q == hot else 0))
        regs.append((0x7ffd00000000, 0x7ffd00000000 + 132 * 1024, 0))
        snapshot(f, t, 4242, regs)
