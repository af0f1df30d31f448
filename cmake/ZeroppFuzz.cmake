# ZEROPP_BUILD_FUZZ: coverage instrumentation (libFuzzer's), AddressSanitizer and
# UndefinedBehaviorSanitizer for every target defined after the include; the
# harnesses in tests/fuzz add libFuzzer's main. libFuzzer comes with clang only
# (Debian: clang and libclang-rt-14-dev, which scripts/setup installs).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ZEROPP_BUILD_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++ "
                      "-DCMAKE_C_COMPILER=clang (scripts/fuzz does)")
endif()
# Every UBSan report is fatal, so that it is a finding like a crash.
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined)
message(STATUS "Fuzzing harnesses: libFuzzer, address, undefined")
