# Compare two outputs of bench/doc_messages/run.sh: identical records, records whose only
# differing lines are unknown-key messages, and every other difference (listed).
# usage: cmp.py OLD.txt NEW.txt
import sys, re, collections
def load(p):
    recs = collections.OrderedDict(); cur = None
    for line in open(p, errors='replace'):
        if line.startswith('== '):
            cur = line.rsplit(' rc=', 1)[0]; recs[cur] = [line]
        elif cur: recs[cur].append(line)
    return recs
old, new = load(sys.argv[1]), load(sys.argv[2])
same = diff_expected = 0; unexpected = []
kinds = collections.Counter()
for k, o in old.items():
    n = new.get(k)
    if n is None: unexpected.append((k, 'missing')); continue
    if o == n: same += 1; continue
    ol = [l for l in o if l not in n]; nl = [l for l in n if l not in o]
    ok = all(re.search(r"unknown key|unknown parameter|Water Body field", l) for l in ol + nl) and o[0] == n[0]
    if ok:
        diff_expected += 1
        for l in nl: kinds[re.sub(r"'[^']*'", "'X'", l.split(': ', 1)[-1])[:60]] += 1
    else: unexpected.append((k, ol[:3], nl[:3]))
print(f"records {len(old)}: identical {same}, only unknown-key lines differ {diff_expected}, other differences {len(unexpected)}")
for u in unexpected[:20]: print(u)
