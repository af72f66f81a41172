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

seeds = {
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
