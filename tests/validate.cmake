# The validation engine called directly (tests/test_validate.c), on the CPU paths.
dbtr_add_test_file(SOURCE test_validate.c LABELS cpu LIBS dbtr_core)
# `dbtr validate` through the CLI (tests/validate.sh): the CPU comparisons CI can run.
add_test(NAME validate.cpu_paths COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/validate.sh $<TARGET_FILE:dbtr>)
set_tests_properties(validate.cpu_paths PROPERTIES LABELS cpu TIMEOUT 300)
# `dbtr validate --referee` through the CLI (tests/referee.sh), on the CPU paths.
add_test(NAME validate.referee COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/referee.sh $<TARGET_FILE:dbtr>)
set_tests_properties(validate.referee PROPERTIES LABELS cpu TIMEOUT 300)
# `dbtr validate --quality` through the CLI (tests/validate_quality.sh): the quality changes of
# the CPU paths against their references, the verdicts and the refusal of a scan without objects.
add_test(NAME validate.quality COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/validate_quality.sh $<TARGET_FILE:dbtr>)
set_tests_properties(validate.quality PROPERTIES LABELS cpu TIMEOUT 300)
