#include <catch2/catch.hpp>
#include <cmath>

#include "src/base/logging.hpp"

using namespace zeropp;

TEST_CASE("eta_seconds: remaining steps at the pace so far", "[logging]") {
  CHECK(eta_seconds(10.0, 4, 6) == Approx(15.0));  // 2.5 s a step, 6 to go
  CHECK(eta_seconds(10.0, 4, 0) == 0.0);           // the last step
  CHECK(eta_seconds(0.0, 0, 100) == 0.0);          // nothing measured yet
}

TEST_CASE("format_duration: H:MM:SS", "[logging]") {
  CHECK(format_duration(0) == "0:00:00");
  CHECK(format_duration(59.6) == "0:01:00");
  CHECK(format_duration(3599) == "0:59:59");
  CHECK(format_duration(3 * 3600 + 62) == "3:01:02");
  CHECK(format_duration(100 * 3600.0) == "100:00:00");
  CHECK(format_duration(-1) == "?");
  CHECK(format_duration(std::nan("")) == "?");
}

TEST_CASE("format_step: the grep-able step line ends with elapsed time and ETA", "[logging]") {
  const StepLine s{12,    500,  2.84123, 3e-4,  0.91, 45.1,
                   18140, 31.2, 7.58,    0.853, 65.0, eta_seconds(60.0, 12, 488)};
  CHECK(format_step(s) ==
        "step 12/500 | loss 2.8412 | lr 3.00e-04 | norm 0.910 | 45.1 ms | 18140 tok/s | 31.2 GFLOP/s | "
        "xnode 7.58 MB | hidden 85% | elapsed 0:01:05 | ETA 0:40:40");
}
