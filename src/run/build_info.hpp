// What `zeropp --version` prints and checkpoints and metrics.h5 record: the
// version, the git revision (from the build; "unknown" when built from a
// tarball) and the build options.
#pragma once

#include <string>

namespace zeropp {

// Defined in the file cmake/GitRevision.cmake generates at build time.
const char* git_revision();

// Several lines: version, git revision, compiler and build type, BLAS with
// the kernels it runs, CUDA on/off, oneDNN (onednn_description).
std::string version_text();

// The same on one line, e.g. "zeropp 0.1.0 (git 0ed2d61c; GNU 12.2.0
// Release; OpenBLAS 0.3.21 core SkylakeX; CUDA off; oneDNN on)".
std::string version_line();

// Whether oneDNN is in the build, and which: "on (oneDNN 2.6.3, ISA avx2)" or
// "off (configured with -DZEROPP_WITH_ONEDNN=OFF: fp32 only)".
std::string onednn_description();

}  // namespace zeropp
