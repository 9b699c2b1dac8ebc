#!/usr/bin/env python3
"""Where the CPU went inside chosen windows of a benchmark run recorded by record.sh.

usage: perf-windows.py SCRIPT TIMELINE LABEL_REGEX [MODE] [FILTER_REGEX]

SCRIPT is `perf script -F comm,tid,time,ip,sym,dso --ns` of the run; TIMELINE its timeline.tsv
(each line: wall-clock start, duration in ms, label). Only samples inside the windows whose label
matches LABEL_REGEX count; every figure is in ms of CPU per window (perf samples at 997 Hz).
MODE is one of
  summary  CPU by thread group and by kind of the leaf frame (kernel, jvm, java, interp, libc)
  javaN    the N innermost Java frames, by thread group
  incl     inclusive CPU of every frame (TOP=n to print more than 80)
  syscall  the kernel's leaf entry point (the syscall, page fault or interrupt)
FILTER_REGEX keeps the samples whose thread name or any frame matches it.
MAPS=dir names a directory of perf maps taken during the run (file name: epoch seconds); a Java
frame is named from the first map taken after its sample.
"""
import bisect
import collections
import datetime
import glob
import os
import re
import sys

HZ = 997.0


def windows(timeline, label):
    wins = []
    for line in open(timeline):
        parts = line.rstrip('\n').split('\t')
        if len(parts) < 3 or not re.search(label, parts[2]):
            continue
        sec, frac = parts[0].rstrip('Z').split('.')
        start = datetime.datetime.fromisoformat(sec).replace(tzinfo=datetime.timezone.utc).timestamp() \
            + float('0.' + frac)
        wins.append((start, start + float(parts[1]) / 1000.0))
    return sorted(wins)


def load_maps(directory):
    maps = []
    for fn in sorted(glob.glob(directory + '/*'), key=lambda p: float(os.path.basename(p))):
        entries = []
        for line in open(fn):
            p = line.rstrip('\n').split(' ', 2)
            if len(p) == 3:
                entries.append((int(p[0], 16), int(p[1], 16), p[2]))
        entries.sort()
        maps.append((float(os.path.basename(fn)), [e[0] for e in entries], entries))
    return maps


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    script, timeline, label = sys.argv[1:4]
    mode = sys.argv[4] if len(sys.argv) > 4 else 'summary'
    filt = sys.argv[5] if len(sys.argv) > 5 else None
    wins = windows(timeline, label)
    if not wins:
        sys.exit('no window in ' + timeline + ' matches ' + label)
    starts = [a for a, _ in wins]
    maps = load_maps(os.environ['MAPS']) if os.environ.get('MAPS') else []
    map_times = [m[0] for m in maps]

    def inside(t):
        i = bisect.bisect_right(starts, t) - 1
        return i >= 0 and t <= wins[i][1]

    def java_name(t, addr):
        i = bisect.bisect_left(map_times, t)
        for j in (i, i + 1, i - 1):
            if 0 <= j < len(maps):
                _, entry_starts, entries = maps[j]
                k = bisect.bisect_right(entry_starts, addr) - 1
                if k >= 0 and addr < entries[k][0] + entries[k][1]:
                    return entries[k][2]
        return None

    header = re.compile(r'(.*?)\s+(\d+)\s+(\d+\.\d+):')
    samples = []  # (thread, [(symbol, dso)] leaf first)
    current = None
    with open(script) as f:
        for line in f:
            if not line.strip():
                current = None
            elif line[0] not in ' \t':
                m = header.match(line)
                current = None
                if m and inside(float(m.group(3))):
                    current = (m.group(1).strip(), float(m.group(3)), [])
                    samples.append(current)
            elif current is not None:
                text = line.strip()
                addr, _, rest = text.partition(' ')
                m = re.match(r'(.*) \((.*)\)$', rest)
                sym, dso = (m.group(1), m.group(2)) if m else (rest, '')
                if maps and 'perf-' in dso:
                    try:
                        sym = java_name(current[1], int(addr, 16)) or sym
                    except ValueError:
                        pass
                current[2].append((sym, dso))
    n = len(wins)
    per = lambda count: count / HZ * 1000.0 / n
    print(f'{n} windows, {sum(b - a for a, b in wins) * 1000 / n:.1f} ms mean; '
          f'{len(samples)} samples = {per(len(samples)):.1f} ms CPU per window')
    if filt:
        samples = [s for s in samples if re.search(filt, s[0]) or any(re.search(filt, fr[0]) for fr in s[2])]
        print(f'filtered by {filt}: {per(len(samples)):.1f} ms per window')
    group = lambda thread: re.sub(r'\d+', 'N', thread)
    method = lambda sym: re.sub(r'\(.*\)', '()', sym.split(' ', 1)[-1])

    def kind(sym, dso):
        if 'kernel' in dso:
            return 'kernel'
        if 'libjvm' in dso:
            return 'jvm'
        if 'perf-' in dso:
            return 'interp' if sym.startswith('Interpreter') else 'java'
        return 'libc' if 'libc' in dso else (dso.split('/')[-1] or '?')

    if mode == 'summary':
        by_kind = collections.Counter((group(t), kind(*fr[0]) if fr else '?') for t, _, fr in samples)
        by_thread = collections.Counter(group(t) for t, _, _ in samples)
        for thread, count in by_thread.most_common(12):
            kinds = ', '.join(f'{k} {per(by_kind[(thread, k)]):.1f}'
                              for k in ('kernel', 'jvm', 'java', 'interp', 'libc') if by_kind[(thread, k)])
            print(f'  {per(count):6.1f} ms  {thread}: {kinds}')
    elif mode.startswith('java'):
        depth = int(mode[4:] or 1)
        counts = collections.Counter()
        for thread, _, frames in samples:
            java = [s for s, d in frames if 'perf-' in d and not s.startswith(('Interpreter', 'StubRoutines'))]
            key = ' < '.join(method(s) for s in java[:depth]) if java \
                else '(no Java frame: ' + (frames[0][0] if frames else '?') + ')'
            counts[group(thread)[:22] + ' | ' + key] += 1
        for key, count in counts.most_common(60):
            print(f'{per(count):6.2f}  {key[:260]}')
    elif mode == 'incl':
        counts = collections.Counter()
        for _, _, frames in samples:
            counts.update({method(s) if 'perf-' in d else s for s, d in frames})
        for key, count in counts.most_common(int(os.environ.get('TOP', '80'))):
            print(f'{per(count):6.2f}  {key[:200]}')
    elif mode == 'syscall':
        counts = collections.Counter()
        for thread, _, frames in samples:
            kernel = [s for s, d in frames if 'kernel' in d]
            if not frames or 'kernel' not in frames[0][1]:
                continue
            key = kernel[-1]
            for s in kernel:
                if s.startswith(('__x64_sys_', '__sys_', 'ksys_')) or s in (
                        'asm_exc_page_fault', 'asm_sysvec_apic_timer_interrupt', 'asm_common_interrupt'):
                    key = s
                    break
            counts[group(thread)[:22] + ' | ' + key] += 1
        for key, count in counts.most_common(40):
            print(f'{per(count):6.2f}  {key}')
    else:
        sys.exit('unknown mode ' + mode)


if __name__ == '__main__':
    main()
