#!/usr/bin/env python3
"""The functions and variables <uks/*.h> declare, one per line, as
"header symbol".  The export map lists exactly these (tests/build/exports.sh
checks it); a declaration is a uks_* name followed by "(" that is not a
struct tag, a function pointer, a function-like macro or a static inline,
or an extern variable.  A symbol two headers declare is listed once, with
the first."""
import os
import re
import sys

inc = sys.argv[1] if len(sys.argv) > 1 else 'include/uks'
seen = set()
for f in sorted(os.listdir(inc)):
    if not f.endswith('.h'):
        continue
    t = open(os.path.join(inc, f)).read()
    t = re.sub(r'/\*.*?\*/', '', t, flags=re.S)
    t = re.sub(r'//[^\n]*', '', t)
    macros = set(re.findall(r'#\s*define\s+(uks_\w+)\(', t))
    inline = set(re.findall(r'static\s+inline[^;{]*?\b(uks_\w+)\s*\(', t, flags=re.S))
    funcs = set(m.group(2) for m in
                re.finditer(r'(struct\s+|enum\s+|union\s+|\(\s*\*\s*)?\b(uks_\w+)\s*\(', t)
                if not m.group(1))
    variables = set(re.findall(r'extern\s+[^;(){}"]*?\b(uks_\w+)\s*(?:\[[^\]]*\])?\s*;', t))
    for s in sorted(((funcs - macros - inline) | variables) - seen):
        print(f, s)
        seen.add(s)
