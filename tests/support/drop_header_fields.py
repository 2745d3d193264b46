#!/usr/bin/env python3
"""Writes a copy of a pemc record file whose header lacks the given top-level fields, as a file of
an older pemc-dist that did not record them (e.g. 16 and 17: Header.inputs and
Header.working_directory). Everything after the header is copied byte for byte; the header's frame
gets its new length and crc32.

  drop_header_fields.py IN OUT FIELD...
"""
import struct
import sys
import zlib

MAGIC = b"PEMCREC1"


def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def encode_varint(value):
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def fields(buf):
    """(field number, raw bytes of the whole field) of a serialised message, in order."""
    i = 0
    while i < len(buf):
        start = i
        key, i = varint(buf, i)
        wire = key & 7
        if wire == 0:
            _, i = varint(buf, i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            n, i = varint(buf, i)
            i += n
        elif wire == 5:
            i += 4
        else:
            sys.exit(f"drop_header_fields: unsupported wire type {wire}")
        yield key >> 3, buf[start:i]


def main():
    src, dst, *drop = sys.argv[1:]
    drop = {int(f) for f in drop}
    data = open(src, "rb").read()
    if data[:8] != MAGIC:
        sys.exit(f"drop_header_fields: {src} is no record file")
    length, _crc = struct.unpack_from("<II", data, 8)
    record = data[16 : 16 + length]
    # Record { Header header = 1; }: the first record is the header.
    (number, raw), = list(fields(record))
    if number != 1:
        sys.exit("drop_header_fields: the first record is not a header")
    _, body_at = varint(raw, 0)
    n, body_at = varint(raw, body_at)
    header = raw[body_at : body_at + n]
    kept = b"".join(r for f, r in fields(header) if f not in drop)
    new_record = encode_varint((1 << 3) | 2) + encode_varint(len(kept)) + kept
    frame = struct.pack("<II", len(new_record), zlib.crc32(new_record)) + new_record
    open(dst, "wb").write(MAGIC + frame + data[16 + length :])


if __name__ == "__main__":
    main()
