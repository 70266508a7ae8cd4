#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Decode what libuks-damon-agent.so wrote to UKS_DAMON_AGENT_FD on its
own, from the layout at the top of lib/damon/record/record_packets.c, and write
the damo record (version 2) those snapshots make.

Usage: agent_stream.py STREAM RECORD

Every byte must belong to a packet of at most PIPE_BUF bytes with a time
stamp to the microsecond; a snapshot is the target's nr_regions regions in
consecutive packets, and one that does not continue is dropped, as the
record writer's assembler does.  Prints "N snapshots (L lines, D dropped,
0 bad)", the counts `uks damon record` must print for the same stream.
"""
import struct
import sys

HDR = struct.Struct("=4sIqQI")       # magic, regions here, ns, target, nr_regions
REGION = struct.Struct("=QQI")
PIPE_BUF = 4096


def main():
    data = open(sys.argv[1], "rb").read()
    out = [b"damon_recfmt_ver", struct.pack("=i", 2)]
    partial = {}                      # target -> [ts, nr_regions, regions]
    lines = dropped = snapshots = 0
    pos = 0
    while pos < len(data):
        magic, nr, ts, tid, nr_regions = HDR.unpack_from(data, pos)
        size = HDR.size + nr * REGION.size
        if magic != b"dAgg" or not 0 < nr <= nr_regions or size > PIPE_BUF:
            sys.exit(f"offset {pos}: no packet header")
        if pos + size > len(data):
            sys.exit(f"offset {pos}: packet cut short")
        if ts % 1000:
            sys.exit(f"offset {pos}: time stamp {ts} not to the microsecond")
        for i in range(nr):
            start, end, acc = REGION.unpack_from(data, pos + HDR.size + i * REGION.size)
            lines += 1
            p = partial.get(tid)
            if p and (p[1] != nr_regions or start < p[2][-1][1]):
                dropped += len(p[2])
                p = None
            if not p:
                p = partial[tid] = [ts, nr_regions, []]
            p[2].append((start, end, acc))
            if len(p[2]) == nr_regions:
                out.append(struct.pack("=qqIQI", p[0] // 10**9, p[0] % 10**9, 1, tid,
                                       nr_regions))
                out.extend(REGION.pack(*r) for r in p[2])
                snapshots += 1
                del partial[tid]
        pos += size
    dropped += sum(len(p[2]) for p in partial.values())
    open(sys.argv[2], "wb").write(b"".join(out))
    print(f"{snapshots} snapshots ({lines} lines, {dropped} dropped, 0 bad)")


main()
