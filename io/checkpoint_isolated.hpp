// A checkpoint scanned in a child process. HDF5 may crash, not just fail, on a
// damaged file's metadata (a few bytes changed inside a group's link table are
// enough); in a child the crash ends only the child, and the caller gets one
// line naming the file instead, so `--resume auto` can go on to the next one.
#pragma once

#include <string>

#include "io/checkpoint_scan.hpp"

namespace zeropp::ckpt {

struct IsolatedScan {
  std::string packed;       // pack_scan of what scan_file found, when error is ""
  std::string error;        // scan_file's Error, or what ended the child
  bool child_died = false;  // the child crashed or exited without an answer
};

// scan_file(path, checksum_all) in a child process; never throws for the file's
// contents (only when no child can be started).
IsolatedScan scan_file_isolated(const std::string& path, bool checksum_all);

// The same, unpacked; every failure is an Error.
Scan scan_file_in_child(const std::string& path, bool checksum_all);

}  // namespace zeropp::ckpt
