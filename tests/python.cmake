# tests/python.cmake: the Python package (python/, docs/python.md) against this build, through
# tests/python.sh: one CTest entry per pytest test of python/tests/test_dbtr.py (each compares
# the package with the `dbtr` command: the same bits), python.install, which installs the
# package with pip as docs/python.md has it, and python.docs_example, which runs the doc's
# worked example. Label cpu. Not in a sanitizer build, whose
# libdbtr cannot be loaded into a Python that was not started with the sanitizer runtime.
if(DBTR_SANITIZE)
  return()
endif()
set(dbtr_python_script ${CMAKE_CURRENT_SOURCE_DIR}/python.sh)
set(dbtr_python_tests ${PROJECT_SOURCE_DIR}/python/tests/test_dbtr.py)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dbtr_python_tests} ${dbtr_python_script})
file(STRINGS ${dbtr_python_tests} dbtr_python_defs REGEX "^def test_[a-z0-9_]+\\(")
list(TRANSFORM dbtr_python_defs REPLACE "^def (test_[a-z0-9_]+)\\(.*" "\\1")
if(NOT dbtr_python_defs)
  message(FATAL_ERROR "python/tests/test_dbtr.py: no tests")
endif()
foreach(c IN LISTS dbtr_python_defs ITEMS install docs_example)
  add_test(NAME python.${c} COMMAND sh ${dbtr_python_script} ${CMAKE_BINARY_DIR} $<TARGET_FILE:dbtr>
                                    $<TARGET_FILE:dbtr_shared> ${c})
  set_tests_properties(python.${c} PROPERTIES LABELS cpu TIMEOUT 300)
endforeach()
