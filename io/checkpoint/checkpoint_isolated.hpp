// A checkpoint scanned in a child process. HDF5 may crash, not just fail, on a
// damaged file's metadata (a few bytes changed inside a group's link table are
// enough); in a child the crash ends only the child, and the caller gets one
// line naming the file instead, so `--resume auto` can go on to the next one.
// The child is the program zeropp_ckpt_scan (io/checkpoint/checkpoint_scan_helper.cpp),
// found beside the running one.
#pragma once

#include <cstdint>
#include <string>

#include "io/checkpoint/checkpoint_scan.hpp"

namespace zeropp::ckpt {

inline constexpr const char* kScanHelper = "zeropp_ckpt_scan";

struct IsolatedScan {
  std::string packed;       // pack_scan of what scan_file found, when error is ""
  std::string error;        // scan_file's Error, or what ended the child
  bool child_died = false;  // the child crashed, exited without an answer or was killed as hung
};

// How long a scan of a file of `bytes` may take before it counts as hung (HDF5
// looping on damaged metadata, a stalled file system): 60 s plus 1 s per 50 MB,
// a slow parallel file system's single stream with room to spare. A positive
// ZEROPP_CKPT_SCAN_TIMEOUT_S (seconds) replaces it.
double scan_time_limit(uint64_t bytes);

// scan_file(path, checksum_all) in a child process, which is killed after
// scan_time_limit of the file's size; never throws for the file's contents (only
// when no child can be started).
IsolatedScan scan_file_isolated(const std::string& path, bool checksum_all);

// The same, unpacked; every failure is an Error.
Scan scan_file_in_child(const std::string& path, bool checksum_all);

}  // namespace zeropp::ckpt
