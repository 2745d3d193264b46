#!/usr/bin/env python3
"""Builds pemc record files frame by frame, for tests of hostile and inconsistent files.

Frames carry correct checksums, so the files pass every checksum and test what a reader does with
their content. Records are encoded and decoded with protoc (text format <-> wire format), so no
Python protobuf module is needed.

  record_tool.py kinds FILE                 one line per frame: index, kind, payload bytes
  record_tool.py decode FILE INDEX          the frame's Record in text format
  record_tool.py build OUT SPEC...          a record file of the SPECs' frames, in order:
      FILE:I      frame I of FILE             FILE:I-J  frames I..J   FILE:I-  frames I..end
      @TEXT       a Record in text format, read from the file TEXT

PEMC_SOURCE_DIR must name the source tree (for proto/pemc/v1/records.proto).
"""
import os
import struct
import subprocess
import sys
import zlib

MAGIC = b"PEMCREC1"
KINDS = {1: "header", 2: "draw", 3: "footer", 4: "estimates"}


def frames(path):
    data = open(path, "rb").read()
    if data[:8] != MAGIC:
        sys.exit(f"{path}: not a record file")
    out, pos = [], 8
    while pos + 8 <= len(data):
        length, _ = struct.unpack_from("<II", data, pos)
        out.append(data[pos + 8:pos + 8 + length])
        pos += 8 + length
    return out


def protoc(mode, payload):
    src = os.environ["PEMC_SOURCE_DIR"]
    return subprocess.run(["protoc", f"--{mode}=pemc.v1.Record", f"--proto_path={src}/proto",
                           "pemc/v1/records.proto"], input=payload, check=True,
                          capture_output=True).stdout


def select(spec):
    if spec.startswith("@"):
        return [protoc("encode", open(spec[1:], "rb").read())]
    path, _, which = spec.rpartition(":")
    all_frames = frames(path)
    first, dash, last = which.partition("-")
    if not dash:
        return [all_frames[int(first)]]
    return all_frames[int(first):(int(last) + 1 if last else len(all_frames))]


def main(argv):
    if len(argv) >= 2 and argv[0] == "kinds":
        for i, p in enumerate(frames(argv[1])):
            print(i, KINDS.get(p[0] >> 3 if p else 0, "?"), len(p))
    elif len(argv) == 3 and argv[0] == "decode":
        sys.stdout.write(protoc("decode", frames(argv[1])[int(argv[2])]).decode())
    elif len(argv) >= 2 and argv[0] == "build":
        with open(argv[1], "wb") as out:
            out.write(MAGIC)
            for spec in argv[2:]:
                for p in select(spec):
                    out.write(struct.pack("<II", len(p), zlib.crc32(p) & 0xFFFFFFFF) + p)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
