# tests/python.cmake: the Python package (python/, docs/python.md) against this build, through
# tests/python.sh: one CTest entry per pytest test of python/tests/test_dbtr.py (each compares
# the package with the `dbtr` command: the same bits) and of python/tests/test_struct_layout.py
# (the ctypes mirrors of include/dbtr.h's structs and constants against what the C compiler
# makes of them, printed by tests/struct_layout.c, whose path goes in DBTR_STRUCT_LAYOUT),
# test_scale_out.py (dbtr.recon_file and docs/scale-out.md's Dask recipe on a LocalCluster of
# two CPU workers, against the command's volumes), test_projector.py and test_api.py
# (dbtr.Projector on the CPU; the protections of issue 27), test_torch.py (dbtr.torch on the CPU;
# SKIP, exit 77, without torch) and test_gpu.py (CuPy, PyTorch CUDA tensors; label gpu, SKIP
# where no GPU, CuPy or torch is found), python.install, which installs the package
# with pip as docs/python.md has it, and
# python.docs_example, which runs the doc's worked example. Label cpu. Not in a sanitizer build,
# whose libdbtr cannot be loaded into a Python that was not started with the sanitizer runtime.
if(DBTR_SANITIZE)
  return()
endif()
# Only include/dbtr.h: the program says what the compiler makes of the public header alone.
add_executable(struct_layout struct_layout.c)
set(dbtr_python_script ${CMAKE_CURRENT_SOURCE_DIR}/python.sh)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dbtr_python_script})
foreach(f test_dbtr.py test_struct_layout.py test_scale_out.py test_projector.py test_api.py test_torch.py test_gpu.py)
  set(path ${PROJECT_SOURCE_DIR}/python/tests/${f})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  file(STRINGS ${path} defs REGEX "^def test_[a-z0-9_]+\\(")
  list(TRANSFORM defs REPLACE "^def (test_[a-z0-9_]+)\\(.*" "\\1")
  if(NOT defs)
    message(FATAL_ERROR "python/tests/${f}: no tests")
  endif()
  foreach(c IN LISTS defs)
    add_test(NAME python.${c} COMMAND sh ${dbtr_python_script} ${CMAKE_BINARY_DIR} $<TARGET_FILE:dbtr>
                                      $<TARGET_FILE:dbtr_shared> tests/${f}::${c})
    set_tests_properties(python.${c} PROPERTIES LABELS cpu TIMEOUT 300)
    if(f STREQUAL test_torch.py OR f STREQUAL test_gpu.py)
      set_tests_properties(python.${c} PROPERTIES ENVIRONMENT DBTR_SKIP_EXIT=77 SKIP_RETURN_CODE 77)
    endif()
    if(f STREQUAL test_gpu.py)
      set_tests_properties(python.${c} PROPERTIES LABELS gpu)
    endif()
    if(f STREQUAL test_struct_layout.py)
      set_tests_properties(python.${c} PROPERTIES ENVIRONMENT DBTR_STRUCT_LAYOUT=$<TARGET_FILE:struct_layout>)
    endif()
  endforeach()
endforeach()
foreach(c install docs_example)
  add_test(NAME python.${c} COMMAND sh ${dbtr_python_script} ${CMAKE_BINARY_DIR} $<TARGET_FILE:dbtr>
                                    $<TARGET_FILE:dbtr_shared> ${c})
  set_tests_properties(python.${c} PROPERTIES LABELS cpu TIMEOUT 300)
endforeach()
