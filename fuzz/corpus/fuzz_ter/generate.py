#!/usr/bin/env python3
# Writes the small seed files of the fuzz_ter corpus (run from this folder). This script is
# itself replayed as an input: it is not a .ter and must be refused cleanly.
import struct

def name(s):
    b = s.encode()
    return (bytes([len(b)]) if len(b) < 255 else b"\xff" + struct.pack("<H", len(b))) + b

def modern(version, size, layers, names, extra=0, heights=None):
    n = size * size
    h = heights or [(i * 7919) & 0xFFFF for i in range(n)]
    out = bytes([version]) + struct.pack("<I", size)
    out += b"".join(struct.pack("<H", v) for v in h)
    out += bytes(layers(i) for i in range(n))
    out += bytes((i * 31 + 7) & 0xFF for i in range(n * extra))
    out += struct.pack("<I", len(names)) + b"".join(name(s) for s in names)
    return out

def legacy_prefix(version, keep):
    # Legacy files are always 256 x 256 (196 KiB and more); keep only a prefix.
    body = bytes([version]) + b"".join(struct.pack("<H", i * 13 & 0xFFFF) for i in range(65536))
    return body[:keep]

def compact(version, hpat, mpat, names, alphas, tail=b""):
    # The harness's compact form (0xA5): a whole legacy file described in a few bytes; its
    # maps are the patterns repeated, its names, scripts and edge paths are as written.
    out = bytes([0xA5, version - 1, len(hpat)]) + hpat + bytes([len(mpat)]) + mpat
    out += b"".join(bytes([len(n)]) + n.encode() for n in (names + [""] * 8)[:8])
    if version >= 2:
        out += b"".join(bytes([len(a)]) + a for a in alphas)
    return out + tail

def script(s):
    return struct.pack("<I", len(s)) + s.encode()

seeds = {
    "compact_v1.ter": compact(1, b"\x10\x02", b"\x00\x01\x02", ["grass", "rock"], []),
    "compact_v2_alpha.ter": compact(2, b"\x00\x80", b"\x00", ["grass", "", "rock"],
                                    [b"\xff\x00\x80", b"\x00\xff"]),
    "compact_v3_scripts.ter": compact(3, b"\x01\x02\x03\x04", b"\x00", ["sand"], [b"\xff"],
                                      script("texture") + script("heights")),
    "compact_v5_edges.ter": compact(5, b"\x00\x10", b"\x00", ["a", "b", "c"],
                                    [b"\x40", b"\x40", b"\x7f"],
                                    script("") + script("h") + b"\x04edge\x00"),
    "compact_v6_trailing.ter": compact(6, b"\x00\x10", b"\x00", ["a"], [b"\x00"],
                                       script("") + script("") + b"\x00\x00zz"),

    "modern_v7_s2.ter": modern(7, 2, lambda i: i % 2, ["grass", "rock"]),
    "modern_v8_s4_holes.ter": modern(8, 4, lambda i: 255 if i % 5 == 0 else i % 3,
                                     ["a", "b", "c"]),
    "modern_v9_s8_bad_layer.ter": modern(9, 8, lambda i: 9 if i == 10 else i % 2,
                                         ["sand", "cliff"]),
    "modern_v9_long_name.ter": modern(9, 2, lambda i: 0, ["q" * 255, "x" * 254, ""]),
    "modern_v9_long_form_short.ter": bytes([9]) + struct.pack("<I", 1) + b"\xf4\x01\x00" +
        struct.pack("<I", 1) + b"\xff\x04\x00rock",
    "modern_v9_300_materials.ter": modern(9, 2, lambda i: i, ["m%d" % i for i in range(300)]),
    "modern_v9_no_materials.ter": modern(9, 3, lambda i: 0, []),
    "extra1_v9_s4.ter": modern(9, 4, lambda i: i % 2, ["grass", "rock"], extra=1),
    "extra5_v9_s4.ter": modern(9, 4, lambda i: i % 2, ["grass", "rock"], extra=5),
    "trailing_v9.ter": modern(9, 2, lambda i: 0, ["a"]) + b"zz",
    "names_past_eof_v9.ter": modern(9, 2, lambda i: 0, ["abc"])[:-2],
    "version10.ter": bytes([10]) + struct.pack("<I", 2) + bytes(16),
    "version0.ter": bytes([0]) + struct.pack("<I", 2) + bytes(16),
    "size0_v9.ter": bytes([9]) + struct.pack("<I", 0) + bytes(4),
    "size_ffffffff_v9.ter": bytes([9]) + b"\xff\xff\xff\xff" + bytes(8),
    "legacy_v1_prefix.ter": legacy_prefix(1, 2048),
    "legacy_v2_prefix.ter": legacy_prefix(2, 1024),
    "legacy_v3_prefix.ter": legacy_prefix(3, 777),
    "legacy_v5_prefix.ter": legacy_prefix(5, 64),
    "terragen_prefix.ter": b"TERRAGENTERRAIN SIZE\x00\x01\x00\x00XPTS\x01\x01\x00\x00",
}
for file, data in seeds.items():
    assert len(data) < 5000, file
    with open(file, "wb") as f:
        f.write(data)
