# tests/install.cmake: the installed libdbtr, as a program outside dbtr sees it
# (tests/install.sh): `cmake --install` into a folder of the build tree, then the consumer
# program built against it with find_package(dbtr) and with pkg-config, shared and static,
# and the shared library's exports against <dbtr.h>. Label cpu. Not in a sanitizer build,
# whose library needs the sanitizer runtime loaded before any program that links it.
if(DBTR_SANITIZE)
  return()
endif()
set(dbtr_install_script ${CMAKE_CURRENT_SOURCE_DIR}/install.sh)
set(dbtr_install_work ${CMAKE_CURRENT_BINARY_DIR}/install)
add_test(NAME install.setup COMMAND sh ${dbtr_install_script} ${CMAKE_COMMAND} ${CMAKE_C_COMPILER} ${CMAKE_BINARY_DIR}
                                    ${dbtr_install_work} setup)
set_tests_properties(install.setup PROPERTIES FIXTURES_SETUP dbtr_install LABELS cpu TIMEOUT 120)
foreach(c cmake cmake_static pkgconfig pkgconfig_static exports)
  add_test(NAME install.${c} COMMAND sh ${dbtr_install_script} ${CMAKE_COMMAND} ${CMAKE_C_COMPILER} ${CMAKE_BINARY_DIR}
                                     ${dbtr_install_work} ${c})
  # No LD_LIBRARY_PATH: the consumer finds the library in the build tree's prefix as any user's
  # program in a folder of their own would, by its run path.
  set_tests_properties(install.${c} PROPERTIES FIXTURES_REQUIRED dbtr_install LABELS cpu TIMEOUT 300
                                               ENVIRONMENT "LD_LIBRARY_PATH=")
endforeach()
