# GPU memory faults and the --backend auto fallback (tests/gpu_fallback.sh).
add_test(NAME gpu_fallback COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/gpu_fallback.sh $<TARGET_FILE:dbtr>)
set_tests_properties(gpu_fallback PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77)
# Without a GPU (CI): --backend gpu exits 7, not the GPU failure's 5 (tests/no_gpu.sh).
add_test(NAME no_gpu COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/no_gpu.sh $<TARGET_FILE:dbtr>)
set_tests_properties(no_gpu PROPERTIES LABELS cpu TIMEOUT 120 SKIP_RETURN_CODE 77)
