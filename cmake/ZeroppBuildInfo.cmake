# zeropp_build_info: src/run/build_info.cpp plus a generated git_revision.cpp.
# The build options (compiler, build type, CUDA) are compile
# definitions; the git revision is regenerated at every build (a commit does
# not re-run CMake) by cmake/GitRevision.cmake, "unknown" without .git.
set(_zeropp_git_cpp ${CMAKE_BINARY_DIR}/generated/git_revision.cpp)
add_custom_target(zeropp_git_revision
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${_zeropp_git_cpp} -P ${CMAKE_SOURCE_DIR}/cmake/GitRevision.cmake
  BYPRODUCTS ${_zeropp_git_cpp}
  COMMENT "git revision"
  VERBATIM)
if(ZEROPP_ENABLE_CUDA)
  set(_zeropp_cuda on)
else()
  set(_zeropp_cuda off)
endif()
add_library(zeropp_build_info STATIC src/run/build_info.cpp ${_zeropp_git_cpp})
add_dependencies(zeropp_build_info zeropp_git_revision)
target_include_directories(zeropp_build_info PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(zeropp_build_info PRIVATE zeropp_kernels zeropp_warnings)
target_compile_definitions(zeropp_build_info PRIVATE
  ZEROPP_VERSION="${PROJECT_VERSION}"
  ZEROPP_COMPILER="${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
  ZEROPP_BUILD_TYPE="${CMAKE_BUILD_TYPE}"
  ZEROPP_CUDA="${_zeropp_cuda}")
