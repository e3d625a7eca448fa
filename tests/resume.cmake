# Checkpoint and resume through the CLI (tests/resume.sh), on the CPU and on the GPU.
add_test(NAME resume.cpu COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/resume.sh $<TARGET_FILE:dbtr> cpu)
add_test(NAME resume.gpu COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/resume.sh $<TARGET_FILE:dbtr> gpu)
set_tests_properties(resume.cpu PROPERTIES LABELS cpu TIMEOUT 300)
set_tests_properties(resume.gpu PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77)
# Checkpoint integrity and identity (io/checkpoint.c), one case each.
dbtr_add_test_file(SOURCE test_checkpoint.c LABELS cpu LIBS dbtr_core)
