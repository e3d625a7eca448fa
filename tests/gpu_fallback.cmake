# GPU memory faults and the --backend auto fallback (tests/gpu_fallback.sh).
add_test(NAME gpu_fallback COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/gpu_fallback.sh $<TARGET_FILE:dbtr>)
set_tests_properties(gpu_fallback PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77)
