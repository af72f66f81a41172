#!/usr/bin/env python3
"""docs/unity.md's walkthrough against a real export, read by an independent reader (this script,
Python's standard library only): the export the walkthrough runs (the lakeside example, here on a
65-sample grid so that it is quick) is made, then every field the walkthrough's editor script
declares (its [Serializable] classes, read out of the page, which Unity's JsonUtility fills by
name and silently leaves empty when a name is wrong) is found in the files with the type the
script gives it, and so is every key the page tells the reader to type in (the Import Raw table,
the water step).

usage: unity_walkthrough.py TERRANE SOURCE_DIR SCRATCH_DIR"""
import json
import os
import re
import subprocess
import sys

failures = []


def fail(text):
    failures.append(text)


def walkthrough(source_dir):
    text = open(os.path.join(source_dir, "docs", "unity.md"), encoding="utf-8").read()
    start = text.find("## Walkthrough")
    if start < 0:
        fail("docs/unity.md has no '## Walkthrough' section")
        return ""
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def script_classes(page):
    """{class: [(type, field), ...]} of the page's C# [Serializable] classes."""
    code = re.search(r"```csharp\n(.*?)```", page, re.S)
    if not code:
        fail("the walkthrough has no C# script")
        return {}
    classes = {}
    for name, body in re.findall(r"\[Serializable\]\s*class\s+(\w+)\s*\{(.*?)\}", code.group(1)):
        fields = []
        for ctype, names in re.findall(r"public\s+([\w\[\]]+)\s+([^;]+);", body):
            fields += [(ctype, n.strip()) for n in names.split(",")]
        classes[name] = fields
    return classes


def type_ok(ctype, value, classes):
    if ctype.endswith("[]"):
        return isinstance(value, list) and all(type_ok(ctype[:-2], v, classes) for v in value)
    if ctype == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if ctype == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if ctype == "string":
        return isinstance(value, str)
    if ctype in classes:
        return isinstance(value, dict)
    fail("the script's type %s is not one this check knows" % ctype)
    return False


def check_object(cls, obj, classes, where, optional=()):
    if not isinstance(obj, dict):
        fail("%s: expected an object for the script's %s, found %r" % (where, cls, obj))
        return
    for ctype, field in classes.get(cls, []):
        if field not in obj:
            if field not in optional:
                fail("%s: no '%s', which the script's %s reads" % (where, field, cls))
            continue
        if not type_ok(ctype, obj[field], classes):
            fail("%s: '%s' is %r, not the script's %s" % (where, field, obj[field], ctype))


def lookup(doc, dotted):
    for part in dotted.split("."):
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return doc


def main():
    terrane, source_dir, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(scratch, exist_ok=True)
    out = os.path.join(scratch, "LakesideExport")
    subprocess.run([terrane, "generate", "example:lakeside", "--resolution", "64x64", "--export",
                    "unity:" + out, "-q"], check=True)
    page = walkthrough(source_dir)
    classes = script_classes(page)
    for needed in ("Export", "Splat", "Detail", "DetailLayer", "Trees", "Proto", "Tree"):
        if needed not in classes:
            fail("the script has no class %s" % needed)
    terrain = json.load(open(os.path.join(out, "lakeside.json")))
    check_object("Export", terrain, classes, "lakeside.json")
    check_object("Splat", terrain.get("splat"), classes, "lakeside.json splat")
    check_object("Detail", terrain.get("detail"), classes, "lakeside.json detail")
    for k, layer in enumerate((terrain.get("detail") or {}).get("layers") or []):
        check_object("DetailLayer", layer, classes, "lakeside.json detail.layers[%d]" % k)
    # The files the script opens are there, beside the JSON.
    names = list((terrain.get("splat") or {}).get("files") or [])
    names += [l.get("file") for l in (terrain.get("detail") or {}).get("layers") or []]
    names.append(terrain.get("trees"))
    for name in names:
        if not isinstance(name, str) or not os.path.isfile(os.path.join(out, name)):
            fail("lakeside.json names %r, which the export did not write" % (name,))
    trees_path = os.path.join(out, str(terrain.get("trees")))
    if os.path.isfile(trees_path):
        trees = json.load(open(trees_path))
        check_object("Trees", trees, classes, "lakeside_trees.json")
        protos = trees.get("prototypes") or []
        for k, proto in enumerate(protos):
            # A prototype names a prefab or a model: the other stays empty in the script.
            check_object("Proto", proto, classes, "prototypes[%d]" % k, optional=("prefab", "model"))
            if "prefab" not in proto and "model" not in proto:
                fail("prototypes[%d] names neither a prefab nor a model" % k)
        items = trees.get("trees") or []
        if not items:
            fail("lakeside_trees.json holds no trees")
        for k, tree in enumerate(items):
            before = len(failures)
            check_object("Tree", tree, classes, "trees[%d]" % k)
            pos = tree.get("position")
            if not (isinstance(pos, list) and len(pos) == 3 and all(0.0 <= v <= 1.0 for v in pos)):
                fail("trees[%d].position %r is not Unity's 0..1 of the terrain" % (k, pos))
            if not isinstance(tree.get("prototype"), int) or not 0 <= tree["prototype"] < len(protos):
                fail("trees[%d].prototype %r is no index into prototypes" % (k, tree.get("prototype")))
            if len(failures) > before:
                break  # one tree's findings are enough
    # The Import Raw table: every key it tells the reader to look up is in lakeside.json.
    table = re.findall(r"^\| [^|]+ \| [^|]+ \| `([a-z_.]+)`", page, re.M)
    if len(table) < 5:
        fail("the walkthrough's Import Raw table names %d keys" % len(table))
    for key in table:
        if lookup(terrain, key) is None:
            fail("the Import Raw table names `%s`, not in lakeside.json" % key)
    # The water step: the keys it names, in lakeside.water.json.
    water = json.load(open(os.path.join(out, "lakeside.water.json")))
    if "position" not in water:
        fail("lakeside.water.json has no position, which step 6 uses")
    for key in ("shallow_color", "deep_color", "roughness"):
        if "`%s`" % key not in page:
            fail("step 6 no longer names `%s`" % key)
        if any(key not in (b.get("look") or {}) for b in water.get("bodies", [])):
            fail("a body of lakeside.water.json has no look.%s" % key)
    if any("speed" not in (b.get("flow") or {}) for b in water.get("bodies", [])):
        fail("a body of lakeside.water.json has no flow.speed")
    for body in water.get("bodies", []):
        mesh = body.get("mesh")
        if mesh is not None and not os.path.isfile(os.path.join(out, mesh)):
            fail("lakeside.water.json names mesh %r, not written" % mesh)
    for f in failures:
        print("FAIL", f)
    print("%s: %d finding(s)" % ("ok" if not failures else "failed", len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
