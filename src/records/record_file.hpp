#pragma once
// The record file of a run: one file holding a stream of pemc.v1.Record messages
// (proto/pemc/v1/records.proto), normally a Header, the Draws, then a Footer.
//
// File format (all integers little-endian):
//   bytes 0..7   magic "PEMCREC1"
//   then frames, back to back, until end of file:
//     u32  payload length in bytes (at most kMaxFrameBytes; larger means a damaged length field)
//     u32  zlib crc32 of the payload bytes
//     payload: one serialized pemc.v1.Record (never empty: readers treat a zero-length frame as
//              damage, the start of a zero-filled region such as a crash can leave; when whole
//              frames follow the zeros, the region is a gap, a range a killed rank never wrote,
//              that readers report and read past)
// The file has no index or trailer: a file cut at a frame boundary is a valid shorter file, and a
// file cut mid-frame (a crash) is read up to its last whole frame, with the tear reported
// (RecordReader::problem). A checksum per frame localises corruption to one record.
//
// This header gathers the three parts:
//   frame.hpp          kMagic, kMaxFrameBytes, append_frame, count_frames
//   record_writer.hpp  RecordWriter
//   record_reader.hpp  RecordReader, ReadProblem, read_all, verify
#include "records/frame.hpp"
#include "records/record_reader.hpp"
#include "records/record_writer.hpp"
