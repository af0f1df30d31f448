# ZEROPP_SANITIZE (e.g. "address,undefined"): instruments our code with GCC's
# sanitizers (scripts/sanitize builds build-sanitize/ with it and runs the suite).
# -fno-sanitize-recover=all makes every UBSan report fatal even without
# UBSAN_OPTIONS=halt_on_error=1, so a report cannot pass a test unnoticed.
# Applies to every target defined after the include; callers exempt LD_PRELOAD
# libraries with zeropp_unsanitized().
set(_zeropp_sanitize_flags -fsanitize=${ZEROPP_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_compile_options(${_zeropp_sanitize_flags})
add_link_options(-fsanitize=${ZEROPP_SANITIZE})
message(STATUS "Sanitizers: ${ZEROPP_SANITIZE}")

# A library preloaded into uninstrumented programs (mpiexec, bash, python) must
# not pull the sanitizer runtimes in: they have to come first in a process.
function(zeropp_unsanitized target)
  set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS "")
  set_property(TARGET ${target} PROPERTY LINK_OPTIONS "")
endfunction()
