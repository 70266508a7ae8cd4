#!/usr/bin/env python3
# Write the hand-made record of tests/damon/record.sh with Python's struct,
# field by field as damo's writer does (native endianness, no padding):
# "damon_recfmt_ver", int32 2, then per snapshot int64 sec, int64 nsec,
# uint32 1, uint64 target id, uint32 nr_regions, per region uint64 start,
# uint64 end, uint32 nr_accesses.
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

with open(sys.argv[1], 'wb') as f:
    f.write(b'damon_recfmt_ver')
    f.write(struct.pack('i', 2))
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
