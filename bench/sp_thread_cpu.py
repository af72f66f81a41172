#!/usr/bin/env python3
"""Names the jobs in bench/sp_thread_cpu.h's lines (stderr of a profiling build): sp_thread_cpu.py EXE < stderr."""
import re
import subprocess
import sys

syms = {}
for line in subprocess.run(['nm', sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    p = line.split()
    if len(p) == 3 and p[1] in 'tT':
        syms[int(p[0], 16)] = p[2]
for line in sys.stdin:
    m = re.match(r'spt job ([0-9a-f]+) (.*)', line)
    if m:
        line = 'spt job %-18s %s\n' % (syms.get(int(m.group(1), 16), m.group(1)), m.group(2))
    sys.stdout.write(line)
