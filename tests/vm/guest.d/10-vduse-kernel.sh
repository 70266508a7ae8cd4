#!/bin/sh
# The guest kernel's own VDUSE behaviour (tests/vm/vduse-probe.c): API
# version, CREATE_DEV rejections, exclusive open, EBUSY destroy while open
# or attached, netlink attach/detach, the virtio status sequence.
[ "${UKS_VM_GUEST:-}" = 1 ] || { echo "1..0 # SKIP runs inside the tests/vm guest only (bash tests/vm/run.sh)"; exit 77; }
exec /bin/vduse-probe
