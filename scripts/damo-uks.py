#!/usr/bin/env python3
# scripts/damo-uks.py: run damo (DAMON's user-space tool) against uks's
# DAMON sysfs tree, for local checks (not in CI: damo is not installed there).
#
#   DAMO_SRC=/path/to/damo/src scripts/damon-ns.sh -- python3 scripts/damo-uks.py start PID
#
# damo probes the kernel's DAMON features by staging a kdamond with one
# scheme; uks refuses schemes until DAMOS is in its core, so the probe is
# replaced here by the list of features uks's tree has.  Everything else is
# damo's own code, unchanged.
import os
import runpy
import sys

src = os.environ.get('DAMO_SRC', '/tmp/damo/src')
sys.path.insert(0, src)
import _damon_features  # noqa: E402
import _damon_sysfs  # noqa: E402

UKS_FEATURES = ['sysfs/vaddr', 'sysfs/fvaddr', 'sysfs/init_regions',
                'sysfs/intervals_goal', 'sysfs/avail_ops',
                'sysfs/online_params_commit']


def uks_feature_supports_map():
    supports = {f.name: False for f in _damon_features.features_list}
    for name in UKS_FEATURES:
        supports[name] = True
    return supports, None


_damon_sysfs.mk_feature_supports_map = uks_feature_supports_map
sys.argv[0] = os.path.join(src, 'damo.py')
runpy.run_path(sys.argv[0], run_name='__main__')
