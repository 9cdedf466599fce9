#!/usr/bin/env python3
"""The build enforces the rooms' layers (docs/design.md).

1. scripts/check-layers passes on the tree.
2. For every room with sources, the build's own compile command for one of
   its files (compile_commands.json) compiles a probe that includes one
   header of every other room: the probe must build exactly when
   scripts/check-layers allows that room, so an upward include fails to
   compile and an allowed one works.
Exit 77 when the build has no compile_commands.json or no compiler.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

src = os.environ.get('MEMTOP_SRCDIR') or os.path.abspath(
    os.path.join(os.path.dirname(__file__), '..', '..'))
build = os.environ.get('MEMTOP_BUILDDIR') or os.path.join(src, 'build')
check = os.path.join(src, 'scripts', 'check-layers')

r = subprocess.run([sys.executable, check], capture_output=True, text=True)
print(r.stdout.strip())
if r.returncode != 0:
    print('FAIL: scripts/check-layers')
    sys.exit(1)
rooms = json.loads(subprocess.check_output([sys.executable, check, '--json']))

try:
    cmds = json.load(open(os.path.join(build, 'compile_commands.json')))
except OSError as e:
    print('SKIP: no compile_commands.json in %s: %s' % (build, e))
    sys.exit(77)


def command_for(folder):
    """The build's command for one .c file directly in folder."""
    want = os.path.realpath(os.path.join(src, folder))
    for c in sorted(cmds, key=lambda c: c['file']):
        path = os.path.realpath(os.path.join(c['directory'], c['file']))
        if os.path.dirname(path) == want and path.endswith('.c'):
            return c, path
    return None, None


failures = 0
probes = 0
with tempfile.TemporaryDirectory() as tmp:
    for room, info in rooms.items():
        c, path = command_for(info['folder'])
        if c is None:
            continue            # a room of headers only (ui.h)
        argv = shlex.split(c['command']) if 'command' in c else c['arguments']
        base = []
        skip = False
        for a in argv:
            if skip:
                skip = False
                continue
            if a in ('-o', '-MF', '-MQ', '-MT'):
                skip = True
                continue
            if a in ('-c', '-MD') or a == c['file'] or \
               os.path.realpath(os.path.join(c['directory'], a)) == path:
                continue
            base.append(a)
        for other, oinfo in rooms.items():
            if other == room or not oinfo['headers']:
                continue
            header = sorted(oinfo['headers'])[0]
            probe = os.path.join(tmp, '%s-%s.c' % (room, other))
            with open(probe, 'w') as f:
                f.write('#include "config.h"\n#include "%s"\n' % header)
            res = subprocess.run(base + ['-fsyntax-only', probe],
                                 cwd=c['directory'], capture_output=True,
                                 text=True)
            allowed = other in info['uses']
            built = res.returncode == 0
            probes += 1
            if built != allowed:
                failures += 1
                print('FAIL: %s including %s (room %s) %s, but the layers %s it'
                      % (room, header, other,
                         'builds' if built else 'does not build',
                         'allow' if allowed else 'forbid'))
                if not built:
                    print(res.stderr.strip()[:400])
print('%d probes, %d disagree with scripts/check-layers' % (probes, failures))
sys.exit(1 if failures else 0)
