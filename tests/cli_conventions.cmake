# tests/cli_conventions.cmake: the conventions every `dbtr` command keeps
# (tests/cli_conventions.sh): `dbtr help CMD`, --version, `--`, `--name=value`, the renamed
# flags (phantom --i0, demo -o) and the "wrote" lines. One CTest entry per case, label cpu;
# cli_conventions.setup writes the tiny scan the cases share, as a fixture.
# The parser itself, on a small table of every row type, is tests/test_cli.c (tests/cli.cmake).
set(dbtr_conv_script ${CMAKE_CURRENT_SOURCE_DIR}/cli_conventions.sh)
set(dbtr_conv_work ${CMAKE_CURRENT_BINARY_DIR}/cli_conventions)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dbtr_conv_script})
execute_process(COMMAND sh ${dbtr_conv_script} none none list OUTPUT_VARIABLE dbtr_conv_cases
                RESULT_VARIABLE dbtr_conv_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT dbtr_conv_rc EQUAL 0)
  message(FATAL_ERROR "tests/cli_conventions.sh list failed")
endif()
string(REPLACE "\n" ";" dbtr_conv_cases "${dbtr_conv_cases}")

add_test(NAME cli_conventions.setup COMMAND sh ${dbtr_conv_script} $<TARGET_FILE:dbtr> ${dbtr_conv_work} setup)
set_tests_properties(cli_conventions.setup PROPERTIES FIXTURES_SETUP dbtr_cli_conventions LABELS cpu TIMEOUT 120)
foreach(c IN LISTS dbtr_conv_cases)
  add_test(NAME cli_conventions.${c} COMMAND sh ${dbtr_conv_script} $<TARGET_FILE:dbtr> ${dbtr_conv_work} ${c})
  set_tests_properties(cli_conventions.${c} PROPERTIES FIXTURES_REQUIRED dbtr_cli_conventions LABELS cpu TIMEOUT 120
                       SKIP_RETURN_CODE 77)
endforeach()
