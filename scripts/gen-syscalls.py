#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-syscalls.py: write lib/tracee/syscall_table.c from a Linux source tree.

The table gives, for every x86-64 system call (abi "common" or "64" in
arch/x86/entry/syscalls/syscall_64.tbl, x32 entries skipped), the name the
kernel's syscalls:sys_enter_<name> event uses (the entry point without
"sys_", so stat is "newstat" as on the kernel) and each argument's type and
name as the kernel's syscall metadata strings them.

Where the arguments come from, in order:
  1. the SYSCALL_DEFINEn(name, type, arg, ...) definition in the .c files
     (what the kernel's metadata is built from).  When a name is defined
     more than once under #ifdef, the x86-64 one wins: files for 32-bit
     (*_32.c, sys_ia32.c) are skipped, and clone takes the plain variant
     (x86-64 has none of CONFIG_CLONE_BACKWARDS*);
  2. the asmlinkage prototype in include/linux/syscalls.h;
  3. otherwise six generic "unsigned long" args arg0..arg5, listed in the
     generated file's header comment.

Types are stringified the way the kernel's __SC_STR_TDECL does it: with
__user defined away and the C preprocessor doing the stringification (gcc
-E), so "const char __user *" becomes "const char *" exactly as the
kernel's format files show.

Usage (the kernel source is only needed here, never by the build):
  tar -xJf linux-source-6.1.tar.xz linux-source-6.1/arch/x86 \\
      linux-source-6.1/include linux-source-6.1/kernel ... (all *.c dirs)
  scripts/gen-syscalls.py /path/to/linux-source-6.1 > lib/tracee/syscall_table.c

The committed table was made from Debian's linux-source-6.1 (6.1.192):
tar -xJf usr/src/linux-source-6.1.tar.xz --wildcards \\
  'linux-source-6.1/{kernel,fs,mm,net,ipc,security,arch/x86,block,io_uring,drivers}/*.c' \\
  'linux-source-6.1/include/*.h' linux-source-6.1/arch/x86/entry/syscalls/syscall_64.tbl
"""
import os
import re
import subprocess
import sys
import tempfile

SKIP_FILE = re.compile(r'(_32\.c$|/sys_ia32\.c$|/vm86_32\.c$)')


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def split_top(s):
    """Split on commas outside parentheses."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            out.append(''.join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if ''.join(cur).strip():
        out.append(''.join(cur).strip())
    return out


def balanced(text, start):
    """text[start] == '('; return the inside of the balanced parentheses."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == '(':
            depth += 1
        elif text[i] == ')':
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return None


def scan_defines(root):
    defs = {}	# name -> list of (file, [(type, arg)])
    pat = re.compile(r'(?<![A-Za-z0-9_])SYSCALL_DEFINE([0-6])\(')
    for d in ('kernel', 'fs', 'mm', 'net', 'ipc', 'security', 'arch/x86',
              'block', 'io_uring', 'drivers', 'lib', 'init', 'virt'):
        top = os.path.join(root, d)
        for dirpath, _, files in os.walk(top):
            for f in files:
                if not f.endswith('.c'):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                if SKIP_FILE.search('/' + rel):
                    continue
                with open(path, errors='replace') as fh:
                    text = fh.read()
                if 'SYSCALL_DEFINE' not in text:
                    continue
                text = strip_comments(text)
                for m in pat.finditer(text):
                    inner = balanced(text, m.end() - 1)
                    if inner is None:
                        continue
                    parts = split_top(inner)
                    n = int(m.group(1))
                    if len(parts) != 1 + 2 * n:
                        continue
                    name = parts[0].strip()
                    args = [(parts[1 + 2 * i], parts[2 + 2 * i].strip()) for i in range(n)]
                    defs.setdefault(name, []).append((rel, args))
    return defs


def scan_asmlinkage(root):
    protos = {}
    path = os.path.join(root, 'include/linux/syscalls.h')
    text = strip_comments(open(path).read())
    for m in re.finditer(r'asmlinkage\s+long\s+sys_(\w+)\s*\(', text):
        inner = balanced(text, m.end() - 1)
        if inner is None:
            continue
        inner = ' '.join(inner.split())
        if inner in ('void', ''):
            protos.setdefault(m.group(1), [])
            continue
        args = []
        for i, p in enumerate(split_top(inner)):
            mm = re.match(r'^(.*?)([A-Za-z_]\w*)$', p.strip())
            if not mm or mm.group(1).strip() == '':
                args.append((p, 'arg%d' % i))	# unnamed parameter
            else:
                args.append((mm.group(1), mm.group(2)))
        protos.setdefault(m.group(1), args)
    return protos


def stringify(types):
    """Stringify each type as the kernel's metadata macros do, with cpp."""
    with tempfile.NamedTemporaryFile('w', suffix='.c', delete=False) as fh:
        fh.write('#define __user\n#define __force\n')
        fh.write('#define S_(...) #__VA_ARGS__\n#define S(...) S_(__VA_ARGS__)\n')
        for t in types:
            fh.write('S(%s)\n' % ' '.join(t.split('\n')))
        name = fh.name
    out = subprocess.run(['cpp', '-P', name], capture_output=True, text=True, check=True).stdout
    os.unlink(name)
    lines = [l for l in out.split('\n') if l.strip()]
    assert len(lines) == len(types), (len(lines), len(types))
    return [eval(l) for l in lines]	# C string literals of plain text


def main():
    root = sys.argv[1]
    tbl = os.path.join(root, 'arch/x86/entry/syscalls/syscall_64.tbl')
    entries = []
    for line in open(tbl):
        line = line.split('#')[0].split()
        if len(line) < 3 or line[1] == 'x32':
            continue
        nr, entry = int(line[0]), (line[3] if len(line) > 3 else None)
        if entry is None:
            continue	# a table slot without an entry point: the kernel has no event for it
        assert entry.startswith('sys_'), entry
        entries.append((nr, line[2], entry[4:]))
    defs = scan_defines(root)
    protos = scan_asmlinkage(root)
    rows, generic, from_proto = [], [], []
    for nr, tblname, name in entries:
        cands = defs.get(name)
        if cands:
            sigs = {tuple(a) for _, a in cands}
            if len(sigs) > 1 and name == 'clone':
                # the #else branch: clone_flags, newsp, parent_tidptr, child_tidptr, tls
                args = [a for _, a in cands if [x[1] for x in a] ==
                        ['clone_flags', 'newsp', 'parent_tidptr', 'child_tidptr', 'tls']][0]
            elif len(sigs) > 1:
                sys.exit('ambiguous definitions of %s: %s' % (name, [f for f, _ in cands]))
            else:
                args = cands[0][1]
        elif name in protos:
            args = protos[name]
            from_proto.append(name)
        else:
            args = [('unsigned long', 'arg%d' % i) for i in range(6)]
            generic.append(name)
        rows.append((nr, name, args))
    alltypes = [t for _, _, a in rows for t, _ in a]
    strs = iter(stringify(alltypes))
    rows = [(nr, name, [(next(strs), an) for _, an in a]) for nr, name, a in rows]

    w = sys.stdout.write
    w('// SPDX-License-Identifier: MIT\n')
    w('/*\n * GENERATED by scripts/gen-syscalls.py from linux-source-6.1 '
      '(arch/x86/entry/syscalls/syscall_64.tbl\n * and the SYSCALL_DEFINE '
      'definitions); do not edit.  Regenerate with\n *\tscripts/gen-syscalls.py '
      '<linux-source-dir> > lib/tracee/syscall_table.c\n *\n'
      ' * x86-64 system calls: number, event name (the entry point without '
      '"sys_"),\n * argument types and names as the kernel\'s syscall metadata '
      'strings them.\n *\n')
    w(' * Arguments from the asmlinkage prototype (no SYSCALL_DEFINE found): %s\n'
      % (', '.join(from_proto) or 'none'))
    w(' * Generic arguments (unsigned long arg0..arg5; no prototype found): %s\n'
      % (', '.join(generic) or 'none'))
    w(' */\n#include "tracee/syscall_table.h"\n\n')
    w('const struct uks_syscall_meta __uks_tracee_syscall_table[] = {\n')
    for nr, name, args in rows:
        types = ', '.join('"%s"' % t for t, _ in args) or '0'
        names = ', '.join('"%s"' % a for _, a in args) or '0'
        w('\t{ %d, "%s", %d, { %s }, { %s } },\n' % (nr, name, len(args), types, names))
    w('};\n\nconst unsigned int __uks_tracee_syscall_table_size =\n'
      '\tsizeof(__uks_tracee_syscall_table) / sizeof(__uks_tracee_syscall_table[0]);\n')


if __name__ == '__main__':
    main()
