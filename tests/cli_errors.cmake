# tests/cli_errors.cmake: `dbtr recon` against bad scans and bad flags (tests/cli_errors.sh,
# docs/errors.md). One CTest entry per case, label cpu; cli_errors.setup writes the valid
# scan (dbtr phantom --system tiny) and its damaged copies (tests/make_bad_scans.py, h5py)
# once, as a fixture the cases require. Cases whose scan could not be made (no h5py) skip.
set(dbtr_cli_script ${CMAKE_CURRENT_SOURCE_DIR}/cli_errors.sh)
set(dbtr_cli_work ${CMAKE_CURRENT_BINARY_DIR}/cli_errors)
# A sanitizer build of dbtr reports HDF5's own leaks on damaged files (tests/fuzz/lsan.supp).
set(dbtr_cli_env "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/fuzz/lsan.supp:print_suppressions=0")
if(DBTR_SANITIZE)
  list(APPEND dbtr_cli_env "DBTR_SANITIZED=1")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dbtr_cli_script})
execute_process(COMMAND sh ${dbtr_cli_script} none none list OUTPUT_VARIABLE dbtr_cli_cases
                RESULT_VARIABLE dbtr_cli_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT dbtr_cli_rc EQUAL 0)
  message(FATAL_ERROR "tests/cli_errors.sh list failed")
endif()
string(REPLACE "\n" ";" dbtr_cli_cases "${dbtr_cli_cases}")

add_test(NAME cli_errors.setup COMMAND sh ${dbtr_cli_script} $<TARGET_FILE:dbtr> ${dbtr_cli_work} setup)
set_tests_properties(cli_errors.setup PROPERTIES FIXTURES_SETUP dbtr_cli_errors LABELS cpu TIMEOUT 120
                     ENVIRONMENT "${dbtr_cli_env}")
foreach(c IN LISTS dbtr_cli_cases)
  add_test(NAME cli_errors.${c} COMMAND sh ${dbtr_cli_script} $<TARGET_FILE:dbtr> ${dbtr_cli_work} ${c})
  set_tests_properties(cli_errors.${c} PROPERTIES FIXTURES_REQUIRED dbtr_cli_errors LABELS cpu SKIP_RETURN_CODE 77
                       TIMEOUT 120 ENVIRONMENT "${dbtr_cli_env}")
endforeach()
