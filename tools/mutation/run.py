#!/usr/bin/env python3
"""Mutation check: apply each mutation of mutations.txt to a private copy of the tree, build it
(Release, no sanitizers, incremental) and run the test suite; a mutant that no test fails survives.

Usage: python3 tools/mutation/run.py [--list] [--only ID[,ID...]] [--jobs N] [--work DIR]
                                     [--min-score PERCENT] [--report FILE] [--source DIR]

The working tree is never modified: its tracked and untracked (not ignored) files are copied to
WORK/src (only files whose content changed, so builds stay incremental), mutated there one at a
time, and restored after each mutant. See docs/testing.md.
"""
import argparse
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Mutation:
    def __init__(self, line):
        self.line = line  # where the block starts in mutations.txt
        self.id = None
        self.file = None
        self.after = None
        self.find = None
        self.replace = None
        self.tests = []
        self.why = ''


def unescape(s):
    # Values are taken literally; "\t" and "\\" are the only escapes (for snippets with tabs).
    return s.replace('\\t', '\t').replace('\\\\', '\\')


def parse_list(path):
    """Blocks of 'key: value' lines separated by blank lines; '#' starts a comment line."""
    muts, cur, errors = [], None, []
    with open(path, encoding='utf-8') as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.rstrip('\n')
            if not line.strip():
                if cur:
                    muts.append(cur)
                cur = None
                continue
            if line.lstrip().startswith('#'):
                continue
            m = re.match(r'^(id|file|after|find|replace|tests|why):(?: (.*))?$', line)
            if not m:
                errors.append('%s:%d: expected "key: value" (id, file, after, find, replace, '
                              'tests, why), found %r' % (path, n, line))
                continue
            if cur is None:
                cur = Mutation(n)
            key, value = m.group(1), m.group(2) or ''
            if key == 'tests':
                cur.tests = value.split()
            elif key in ('find', 'replace', 'after'):
                setattr(cur, key, unescape(value))
            else:
                setattr(cur, key, value)
    if cur:
        muts.append(cur)
    seen = set()
    for m in muts:
        for key in ('id', 'file', 'find', 'replace'):
            if getattr(m, key) is None:
                errors.append('%s:%d: mutation without "%s"' % (path, m.line, key))
        if m.id in seen:
            errors.append('%s:%d: id %s used twice' % (path, m.line, m.id))
        seen.add(m.id)
        if m.find is not None and m.find == m.replace:
            errors.append('%s:%d: %s replaces a snippet with itself' % (path, m.line, m.id))
    return muts, errors


def locate(text, m):
    """Offset of the snippet to mutate, or (None, why) when the mutation is stale: the anchor
    or the snippet is missing, or the snippet is not unique (after the anchor, the first
    occurrence is taken, and it must be within 60 lines of the anchor)."""
    start = 0
    if m.after:
        a = text.find(m.after)
        if a < 0:
            return None, 'anchor not found: %r' % m.after
        if text.find(m.after, a + 1) >= 0:
            return None, 'anchor not unique: %r' % m.after
        start = a
        at = text.find(m.find, start)
        if at < 0:
            return None, 'snippet not found after the anchor: %r' % m.find
        if text.count('\n', a, at) > 60:
            return None, 'snippet more than 60 lines after the anchor: %r' % m.find
        return at, None
    at = text.find(m.find)
    if at < 0:
        return None, 'snippet not found: %r' % m.find
    if text.find(m.find, at + 1) >= 0:
        return None, 'snippet not unique (add "after:"): %r' % m.find
    return at, None


def tree_files(src_root):
    if src_root != ROOT:
        # A plain folder (a snapshot): every file but build folders and .git.
        found = []
        for dirpath, dirnames, filenames in os.walk(src_root):
            rel = os.path.relpath(dirpath, src_root)
            if rel == '.':
                dirnames[:] = [d for d in dirnames if not d.startswith('build') and d != '.git']
            found += [os.path.normpath(os.path.join(rel, f)) for f in filenames]
        return found
    out = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
                         cwd=ROOT, check=True, stdout=subprocess.PIPE).stdout
    return [f for f in out.decode().split('\0') if f]


def same_content(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, 'rb') as fa, open(b, 'rb') as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def mirror(src_root, dst_root):
    """Copy the tree into dst_root, writing only files whose bytes differ; drop files that left
    the tree. Unchanged files keep their times, so the build stays incremental."""
    files = tree_files(src_root)
    keep = set()
    for f in files:
        s, d = os.path.join(src_root, f), os.path.join(dst_root, f)
        if not os.path.isfile(s) or os.path.islink(s):
            continue
        keep.add(f)
        if not same_content(s, d):
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copyfile(s, d)
            shutil.copymode(s, d)
    for dirpath, dirnames, filenames in os.walk(dst_root):
        rel = os.path.relpath(dirpath, dst_root)
        for fn in filenames:
            r = os.path.normpath(os.path.join(rel, fn))
            if r not in keep:
                os.remove(os.path.join(dirpath, fn))


def run(cmd, cwd, timeout=None, log=None):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        out, rc = p.stdout.decode(errors='replace'), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b'').decode(errors='replace') + '\n(timed out)\n', 124
    if log:
        with open(log, 'a') as fh:
            fh.write('$ %s\n%s\n' % (' '.join(cmd), out))
    return rc, out, time.time() - t0


def failed_test(out):
    m = re.search(r'^\s*\d+ - (\S+) \(', out, re.M)  # "The following tests FAILED:" list
    if m:
        return m.group(1)
    m = re.search(r'Test\s+#\d+: (\S+) \.+\**\s*(Failed|Timeout|Exception|Subprocess)', out)
    return m.group(1) if m else '?'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--list', action='store_true', help='check the list and print it')
    ap.add_argument('--only', help='comma-separated ids to run')
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    ap.add_argument('--work', default=os.path.join(
        os.environ.get('TMPDIR', '/tmp'), 'terrane-mutation-%d' % os.getuid()))
    ap.add_argument('--min-score', type=float, default=95.0)
    ap.add_argument('--report', help='also write the results here')
    ap.add_argument('--source', default=ROOT,
                    help='the tree to copy (default: this checkout, as it is on disk)')
    ap.add_argument('--mutations', default=os.path.join(HERE, 'mutations.txt'))
    a = ap.parse_args()

    muts, errors = parse_list(a.mutations)
    if errors:
        print('\n'.join(errors))
        return 2
    if a.only:
        want = set(a.only.split(','))
        unknown = want - {m.id for m in muts}
        if unknown:
            print('unknown mutation id(s): %s' % ', '.join(sorted(unknown)))
            return 2
        muts = [m for m in muts if m.id in want]

    # --list reads the tree where it is; a run works in a copy that no other run may touch (a
    # second run, or a --list that copied into it, once rewrote a running check's sources).
    src = os.path.abspath(a.source) if a.list else os.path.join(a.work, 'src')
    build = os.path.join(a.work, 'build')
    log = os.path.join(a.work, 'log.txt')
    if not a.list:
        os.makedirs(src, exist_ok=True)
        lock = open(os.path.join(a.work, 'lock'), 'a+')
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.seek(0)
            print('another mutation check is running in %s (process %s); wait for it or give '
                  'this one its own --work DIR' % (a.work, lock.read().strip() or '?'))
            return 2
        lock.seek(0)
        lock.truncate()
        lock.write(str(os.getpid()))
        lock.flush()
        mirror(os.path.abspath(a.source), src)

    # Locate everything first: stale mutations are reported, never applied.
    plan = []
    for m in muts:
        path = os.path.join(src, m.file)
        if not os.path.isfile(path):
            plan.append((m, None, 'file not found: %s' % m.file))
            continue
        with open(path, encoding='utf-8') as fh:
            text = fh.read()
        at, why = locate(text, m)
        plan.append((m, at, why))
    if a.list:
        for m, at, why in plan:
            state = 'stale: ' + why if why else 'ok'
            print('%-28s %-40s %s' % (m.id, m.file, state))
        print('%d mutations, %d stale' % (len(plan), sum(1 for p in plan if p[2])))
        return 0

    open(log, 'w').close()
    shared = os.path.join(os.path.dirname(ROOT), 'shared')
    cfg = ['cmake', '-S', src, '-B', build, '-DCMAKE_BUILD_TYPE=Release', '-DTRN_SANITIZE=OFF',
           '-DTRN_WERROR=OFF', '-DTRN_SHARED_DIR=' + shared]
    rc, out, _ = run(cfg, a.work, log=log)
    if rc:
        print(out)
        print('cmake failed (see %s)' % log)
        return 2
    build_cmd = ['cmake', '--build', build, '-j', str(a.jobs)]
    t_start = time.time()
    rc, out, t_build = run(build_cmd, a.work, log=log)
    if rc:
        print(out[-4000:])
        print('the unmutated tree does not build (see %s)' % log)
        return 2
    # The unmutated suite must pass; its slowest test sets the per-test timeout.
    rc, out, t_suite = run(['ctest', '-j', str(a.jobs), '--output-on-failure'], build, log=log)
    if rc:
        print(out[-4000:])
        print('the unmutated test suite fails: fix that first (see %s)' % log)
        return 2
    slowest = max([float(x) for x in re.findall(r'Passed\s+([\d.]+) sec', out)] or [10.0])
    per_test = int(max(120.0, slowest * 8.0))
    print('baseline: build %.0f s, suite %.0f s (slowest test %.0f s, timeout %d s); %d mutations'
          % (t_build, t_suite, slowest, per_test, len(plan)), flush=True)

    results = []
    for k, (m, at, why) in enumerate(plan, 1):
        head = '[%d/%d] %-28s' % (k, len(plan), m.id)
        if why:
            results.append((m, 'stale', why))
            print('%s stale (%s)' % (head, why), flush=True)
            continue
        path = os.path.join(src, m.file)
        with open(path, encoding='utf-8') as fh:
            original = fh.read()
        mutated = original[:at] + m.replace + original[at + len(m.find):]
        t0 = time.time()
        try:
            with open(path, 'w', encoding='utf-8') as fh:
                fh.write(mutated)
            rc, out, _ = run(build_cmd, a.work, log=log)
            if rc:
                state, detail = 'invalid', 'does not build'
            else:
                state, detail = 'survived', ''
                suites = []
                if m.tests:
                    suites.append(['ctest', '--stop-on-failure', '--timeout', str(per_test),
                                   '-R', '^(%s)$' % '|'.join(re.escape(t) for t in m.tests)])
                suites.append(['ctest', '--stop-on-failure', '-j', str(a.jobs), '--timeout',
                               str(per_test)])
                excluded = []
                for cmd in suites:
                    while True:
                        rc, out, _ = run(cmd + (['-E', '^(%s)$' % '|'.join(excluded)]
                                                if excluded else []), build, log=log)
                        if not rc:
                            break
                        name = failed_test(out)
                        if not re.search(r'%s \.+\**\s*Timeout' % re.escape(name), out):
                            state, detail = 'killed', name
                            break
                        # A timeout on a busy machine is not a kill: rerun that test alone
                        # with three times the time, then the rest of the suite without it.
                        rc2, _, _ = run(['ctest', '--timeout', str(per_test * 3), '-R',
                                         '^%s$' % re.escape(name)], build, log=log)
                        if rc2:
                            state, detail = 'killed', name + ' (timeout)'
                            break
                        excluded.append(re.escape(name))
                    if state == 'killed':
                        break
        finally:
            with open(path, 'w', encoding='utf-8') as fh:
                fh.write(original)
        results.append((m, state, detail))
        print('%s %s%s (%.0f s)' % (head, state, ' by ' + detail if state == 'killed' else
                                    (' (' + detail + ')' if detail else ''), time.time() - t0),
              flush=True)
    # Leave the copy built as the tree is, for the next run.
    run(build_cmd, a.work, log=log)

    killed = sum(1 for r in results if r[1] == 'killed')
    survived = [r for r in results if r[1] == 'survived']
    stale = [r for r in results if r[1] == 'stale']
    invalid = [r for r in results if r[1] == 'invalid']
    scored = killed + len(survived)
    score = 100.0 * killed / scored if scored else 100.0
    lines = ['', 'mutation score: %.1f%% (%d killed of %d; %d stale, %d invalid) in %.0f min'
             % (score, killed, scored, len(stale), len(invalid), (time.time() - t_start) / 60)]
    for m, _, _ in survived:
        lines.append('SURVIVED %s: %s: %r -> %r%s' % (m.id, m.file, m.find, m.replace,
                                                      ' (' + m.why + ')' if m.why else ''))
    for m, _, why in stale:
        lines.append('stale %s: %s: %s' % (m.id, m.file, why))
    for m, _, _ in invalid:
        lines.append('invalid %s: %s: the mutant does not build' % (m.id, m.file))
    print('\n'.join(lines))
    if a.report:
        with open(a.report, 'w') as fh:
            for m, state, detail in results:
                fh.write('%s %s %s\n' % (m.id, state, detail))
            fh.write('\n'.join(lines) + '\n')
    return 0 if score >= a.min_score else 1


if __name__ == '__main__':
    sys.exit(main())
