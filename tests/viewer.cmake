# tests/viewer.cmake: the slice viewer (viewer/, docs/viewer.md); built only with
# DBTR_WITH_VIEWER. test_viewer.c holds the pure logic, labelled `cpu`. test_viewer_gl.c
# holds the cases named gl_*, which render with OpenGL: each runs under its own Xvfb
# server (tests/viewer_xvfb.sh, which says why not `xvfb-run -a`), where Mesa's llvmpipe
# provides OpenGL 3.3 core, and is labelled `viewer`; it exits 77 (skip) where no such
# context can be made or Xvfb is missing. Cases in dbtr_viewer_slow get `slow` instead.
# dbtr_add_test_file does not fit: it cannot put a command in front of the test.
if(NOT TARGET dbtr_viewer)
  return()
endif()

set(dbtr_viewer_slow gl_large_volume)
foreach(exe test_viewer test_viewer_gl)
  add_executable(${exe} ${exe}.c)
  target_link_libraries(${exe} PRIVATE dbtr_viewer dbtr_core PkgConfig::DBTR_PNG m)
  # The cases are read from the source: adding one re-runs CMake so that CTest knows it.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${exe}.c)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${exe}.c dbtr_viewer_lines REGEX "^DBTR_TEST\\(([a-z0-9_]+)\\)")
  foreach(line IN LISTS dbtr_viewer_lines)
    string(REGEX REPLACE "^DBTR_TEST\\(([a-z0-9_]+)\\).*" "\\1" case "${line}")
    set(env "")
    if(case MATCHES "^gl_")
      add_test(NAME ${exe}.${case} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/viewer_xvfb.sh $<TARGET_FILE:${exe}> ${case})
      # Mesa's DRI driver leaks a few hundred bytes per context and is unloaded before
      # LeakSanitizer reports, so the report has no module name a suppression could match.
      # Leak checking is therefore off for the rendering cases only; every other ASan and
      # UBSan check stays on, and those leak reports were checked once to hold no frame of
      # ours.
      if(DBTR_SANITIZE MATCHES "address")
        list(APPEND env "ASAN_OPTIONS=detect_leaks=0")
      endif()
    else()
      add_test(NAME ${exe}.${case} COMMAND ${exe} ${case})
    endif()
    # gl_cmd_view runs the dbtr binary itself; it skips where that was not built.
    if(case STREQUAL "gl_cmd_view" AND TARGET dbtr)
      list(APPEND env "DBTR_EXE=$<TARGET_FILE:dbtr>")
    endif()
    if(case IN_LIST dbtr_viewer_slow)
      set(labels slow)
    elseif(case MATCHES "^gl_")
      set(labels viewer)
    else()
      set(labels cpu)
    endif()
    set_tests_properties(${exe}.${case} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT 300)
    if(env)
      set_tests_properties(${exe}.${case} PROPERTIES ENVIRONMENT "${env}")
    endif()
  endforeach()
endforeach()
