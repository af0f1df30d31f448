# `cmake --install build --prefix P`:
#   P/bin/zeropp, P/bin/zeropp_ckpt_scan (the checkpoint scanner zeropp starts from its folder),
#   P/bin/zeropp-plot (-> share/zeropp/scaling/plot_run.py)
#   P/lib/libzeropp_yield.so, libzeropp_sgemm_timer.so (LD_PRELOAD libraries)
#   P/share/zeropp/{inputs,jobs,scaling,scripts,profile,modules}, P/share/doc/zeropp/{README.md,docs}
# Job scripts find the binary on PATH and the decks under ../share/zeropp next
# to it (jobs/README.md), so a prefix can be copied or moved as a whole.
include(GNUInstallDirs)
# Always lib/, not lib64/: the job scripts preload ../lib/libzeropp_yield.so next to the binary.
set(zeropp_libdir lib)
# $ORIGIN keeps the tree relocatable; the link path keeps dependencies outside
# the system folders (Spack's, a site's) found without LD_LIBRARY_PATH.
set_target_properties(zeropp zeropp_ckpt_scan PROPERTIES INSTALL_RPATH "$ORIGIN/../${zeropp_libdir}"
                                                         INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS zeropp zeropp_ckpt_scan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS zeropp_yield zeropp_sgemm_timer LIBRARY DESTINATION ${zeropp_libdir})

set(zeropp_share ${CMAKE_INSTALL_DATADIR}/zeropp)
install(DIRECTORY inputs jobs DESTINATION ${zeropp_share} USE_SOURCE_PERMISSIONS)
# The readers of run folders; the study drivers (sweep.py, bench_zero3.sh, ...) run
# from a checkout, whose build and decks they use.
install(PROGRAMS scaling/analyze.py scaling/metrics_table.py scaling/plot_run.py scaling/read_checkpoint.py
        DESTINATION ${zeropp_share}/scaling)
install(PROGRAMS scripts/prepare-corpus scripts/openblas-coretype DESTINATION ${zeropp_share}/scripts)
install(PROGRAMS src/bench/profile/step_breakdown.py DESTINATION ${zeropp_share}/profile)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs DESTINATION ${CMAKE_INSTALL_DOCDIR})  # docs/ kept: the README links into it
install(CODE "file(CREATE_LINK ../${zeropp_share}/scaling/plot_run.py
                   \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/zeropp-plot\" SYMBOLIC)")
# Module files (packaging/modules/*.in) naming the prefix given at install time.
foreach(kind lmod tcl)
  set(ext "")
  set(tpl zeropp.tcl.in)
  if(kind STREQUAL lmod)
    set(ext .lua)
    set(tpl zeropp.lua.in)
  endif()
  install(CODE "set(ZEROPP_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(ZEROPP_VERSION ${PROJECT_VERSION})
    configure_file(${CMAKE_SOURCE_DIR}/packaging/modules/${tpl}
      \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${zeropp_share}/modules/${kind}/zeropp/${PROJECT_VERSION}${ext}\" @ONLY)")
endforeach()
