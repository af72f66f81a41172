# Bad documents for bench/doc_messages/run.sh: per seed document, an unknown key added to its
# objects, keys misspelt and removed, values of the wrong kind, null and -1e12, and truncations.
# usage: gen.py OUT_DIR SEED.json ...   (deterministic)
import json, os, random, sys
seeds = sys.argv[2:]
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
random.seed(7)
def walk(v, path=()):
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items(): yield from walk(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v[:3]): yield from walk(x, path + (i,))
def get(v, path):
    for p in path: v = v[p]
    return v
def mutated(doc, path, fn):
    d = json.loads(json.dumps(doc))
    if not path: return fn(None, None, d)
    parent = get(d, path[:-1]); fn(parent, path[-1], d); return d
n = 0
def emit(name, text):
    global n
    with open(os.path.join(out, f"{n:05d}_{name}.json"), "w") as f: f.write(text)
    n += 1
for s in seeds:
    try: doc = json.load(open(s))
    except Exception: continue
    base = os.path.basename(os.path.dirname(s)) + "_" + os.path.basename(s).replace(".json", "")
    nodes = list(walk(doc))
    random.shuffle(nodes)
    objs = [(p, v) for p, v in nodes if isinstance(v, dict)][:4]
    leaves = [(p, v) for p, v in nodes if p and not isinstance(v, (dict, list))][:4]
    keyed = [(p, v) for p, v in nodes if p and isinstance(p[-1], str)][:4]
    for p, v in objs:
        emit(base + "_unknown", json.dumps(mutated(doc, (), lambda a, b, d, p=p: (get(d, p).__setitem__("zzqx", 1), d)[1]), indent=1))
    for p, v in keyed:
        k = p[-1]
        if len(k) < 3: continue
        bad = k[0] + k[2] + k[1] + k[3:]
        def ren(par, key, d, bad=bad):
            items = list(par.items()); par.clear()
            for a, b in items: par[bad if a == key else a] = b
        emit(base + "_misspelt", json.dumps(mutated(doc, p, ren), indent=1))
        def drop(par, key, d): del par[key]
        emit(base + "_missing", json.dumps(mutated(doc, p, drop), indent=1))
    for p, v in leaves:
        for repl in (["x"] if isinstance(v, (int, float)) and not isinstance(v, bool) else [7]) + [None, -1e12]:
            def put(par, key, d, repl=repl): par[key] = repl
            emit(base + "_value", json.dumps(mutated(doc, p, put), indent=1))
    text = json.dumps(doc, indent=1)
    for cut in (len(text) // 3, len(text) // 2, len(text) - 2):
        emit(base + "_cut", text[:cut])
print(n)
