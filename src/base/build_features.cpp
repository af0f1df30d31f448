#include "src/base/build_features.hpp"

namespace zeropp {

bool onednn_in_build() { return ZEROPP_WITH_ONEDNN; }

}  // namespace zeropp
