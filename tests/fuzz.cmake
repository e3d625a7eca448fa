# tests/fuzz.cmake: fuzzing the scan and TIFF readers and the DICOM import (tests/fuzz/,
# .ci/fuzz.sh).
#
# Always: the two harnesses built as plain programs (fuzz_scan_replay, fuzz_tiff_replay)
# and CTest entries, label cpu, that replay the seed corpora (every seed must be accepted)
# and every input a fuzzer ever broke a reader with, kept in tests/fuzz/regress_scan/ and
# tests/fuzz/regress_tiff/ (every one must be refused cleanly, with a DBTR_E* code and a
# one-line message naming the file; the harness aborts on anything else). And fuzz.classify:
# the rule .ci/fuzz.sh uses to tell a finding in dbtr from one inside libhdf5.
#
# With -DDBTR_FUZZ=ON (clang only): the libFuzzer targets fuzz_scan and fuzz_tiff. Their
# readers are the project's io/ and recon/ sources compiled again into private libraries
# with -fsanitize=fuzzer-no-link (coverage feedback), so that no other target of the build
# changes. Sanitizers come from DBTR_SANITIZE, as for the rest of the build; .ci/fuzz.sh
# configures address,undefined.
option(DBTR_FUZZ "Build the libFuzzer harnesses fuzz_scan, fuzz_tiff and fuzz_dicom (needs clang)" OFF)

set(dbtr_fuzz_dir ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
# In a sanitizer build, as in .ci/fuzz.sh: leaks inside HDF5 on damaged files are excused
# (tests/fuzz/lsan.supp), and so is one known over-read inside HDF5 (tests/fuzz/asan.supp);
# malloc above 2 GiB fails instead of aborting, so that the inputs claiming huge sizes check
# the clean DBTR_ENOMEM path.
set(dbtr_fuzz_env "LSAN_OPTIONS=suppressions=${dbtr_fuzz_dir}/lsan.supp:print_suppressions=0"
    "ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=2048:suppressions=${dbtr_fuzz_dir}/asan.supp")

foreach(h scan tiff)
  add_executable(fuzz_${h}_replay ${dbtr_fuzz_dir}/fuzz_${h}.c ${dbtr_fuzz_dir}/fuzz_replay.c)
  target_link_libraries(fuzz_${h}_replay PRIVATE dbtr_core m)
  file(GLOB seeds CONFIGURE_DEPENDS ${dbtr_fuzz_dir}/corpus_${h}/*)
  if(seeds)
    add_test(NAME fuzz_${h}.seeds COMMAND fuzz_${h}_replay --expect-ok ${seeds})
    set_tests_properties(fuzz_${h}.seeds PROPERTIES LABELS cpu TIMEOUT 60 ENVIRONMENT "${dbtr_fuzz_env}")
  endif()
  file(GLOB regress CONFIGURE_DEPENDS ${dbtr_fuzz_dir}/regress_${h}/*)
  foreach(f IN LISTS regress)
    get_filename_component(name ${f} NAME)
    add_test(NAME fuzz_${h}.regress.${name} COMMAND fuzz_${h}_replay --expect-error ${f})
    set_tests_properties(fuzz_${h}.regress.${name} PROPERTIES LABELS cpu TIMEOUT 60 ENVIRONMENT "${dbtr_fuzz_env}")
  endforeach()
endforeach()

# The DICOM import (tests/fuzz/fuzz_dicom.c) where dbtr has GDCM: the same replays of its
# seeds and regression inputs (tests/fuzz/corpus_dicom, regress_dicom).
if(DBTR_HAVE_DICOM)
  add_executable(fuzz_dicom_replay ${dbtr_fuzz_dir}/fuzz_dicom.c ${dbtr_fuzz_dir}/fuzz_replay.c)
  target_link_libraries(fuzz_dicom_replay PRIVATE dbtr_dicom dbtr_core m)
  set_target_properties(fuzz_dicom_replay PROPERTIES LINKER_LANGUAGE CXX)
  file(GLOB seeds CONFIGURE_DEPENDS ${dbtr_fuzz_dir}/corpus_dicom/*)
  add_test(NAME fuzz_dicom.seeds COMMAND fuzz_dicom_replay --expect-ok ${seeds})
  set_tests_properties(fuzz_dicom.seeds PROPERTIES LABELS cpu TIMEOUT 60 ENVIRONMENT "${dbtr_fuzz_env}")
  file(GLOB regress CONFIGURE_DEPENDS ${dbtr_fuzz_dir}/regress_dicom/*)
  foreach(f IN LISTS regress)
    get_filename_component(name ${f} NAME)
    add_test(NAME fuzz_dicom.regress.${name} COMMAND fuzz_dicom_replay --expect-error ${f})
    set_tests_properties(fuzz_dicom.regress.${name} PROPERTIES LABELS cpu TIMEOUT 60 ENVIRONMENT "${dbtr_fuzz_env}")
  endforeach()
endif()

# How .ci/fuzz.sh tells a finding in dbtr from one inside libhdf5: checked on reports
# whose file name gives the answer (tests/fuzz/logs/).
file(GLOB dbtr_fuzz_logs CONFIGURE_DEPENDS ${dbtr_fuzz_dir}/logs/*.log)
add_test(NAME fuzz.classify COMMAND sh ${dbtr_fuzz_dir}/classify.sh ${dbtr_fuzz_logs})
set_tests_properties(fuzz.classify PROPERTIES LABELS cpu TIMEOUT 60)

if(DBTR_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DBTR_FUZZ=ON needs clang (libFuzzer): configure with CC=clang")
  endif()
  # Copies of dbtr_io and dbtr_recon with coverage instrumentation for libFuzzer.
  get_target_property(dbtr_fuzz_io_src dbtr_io SOURCES)
  get_target_property(dbtr_fuzz_recon_src dbtr_recon SOURCES)
  list(TRANSFORM dbtr_fuzz_io_src PREPEND ${CMAKE_SOURCE_DIR}/io/ REGEX "^[^/]")
  list(TRANSFORM dbtr_fuzz_recon_src PREPEND ${CMAKE_SOURCE_DIR}/recon/ REGEX "^[^/]")
  add_library(dbtr_fuzz_recon STATIC ${dbtr_fuzz_recon_src})
  target_link_libraries(dbtr_fuzz_recon PUBLIC OpenMP::OpenMP_C m)
  add_library(dbtr_fuzz_io STATIC ${dbtr_fuzz_io_src})
  target_include_directories(dbtr_fuzz_io SYSTEM PUBLIC ${HDF5_INCLUDE_DIRS} ${DBTR_ZLIB_INCLUDE_DIR} ${NIFTI_INCLUDE_DIR})
  target_compile_definitions(dbtr_fuzz_io PUBLIC ${HDF5_DEFINITIONS})
  target_link_libraries(dbtr_fuzz_io PUBLIC dbtr_fuzz_recon ${HDF5_C_LIBRARIES} TIFF::TIFF ${DBTR_ZLIB_LIBRARY} ${DBTR_NIFTI_LIBRARIES} ${CMAKE_DL_LIBS})
  foreach(lib dbtr_fuzz_recon dbtr_fuzz_io)
    target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link)
  endforeach()
  foreach(h scan tiff)
    add_executable(fuzz_${h} ${dbtr_fuzz_dir}/fuzz_${h}.c)
    target_compile_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${h} PRIVATE dbtr_fuzz_io m)
  endforeach()
  # The DICOM import: its three sources (C, and the C++ shim over GDCM) instrumented too;
  # GDCM itself is the system's, read in a guarded child (io/guard.h). Needs CXX=clang++.
  if(DBTR_HAVE_DICOM)
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "DBTR_FUZZ=ON with DICOM needs clang++ too: configure with CXX=clang++")
    endif()
    add_library(dbtr_fuzz_dicom STATIC ${CMAKE_SOURCE_DIR}/io/dicom_import.c ${CMAKE_SOURCE_DIR}/io/dicom_geom.c
                                       ${CMAKE_SOURCE_DIR}/io/dicom.cc)
    target_include_directories(dbtr_fuzz_dicom SYSTEM PRIVATE ${DBTR_GDCM_INCLUDE_DIR})
    target_compile_options(dbtr_fuzz_dicom PRIVATE -fsanitize=fuzzer-no-link)
    target_link_libraries(dbtr_fuzz_dicom PUBLIC dbtr_fuzz_io ${DBTR_GDCM_LIBRARIES})
    add_executable(fuzz_dicom ${dbtr_fuzz_dir}/fuzz_dicom.c)
    target_compile_options(fuzz_dicom PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_dicom PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_dicom PRIVATE dbtr_fuzz_dicom m)
    set_target_properties(fuzz_dicom PROPERTIES LINKER_LANGUAGE CXX)
  endif()
endif()
