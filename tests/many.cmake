# tests/many.cmake: `dbtr recon` of many scans (tests/many.sh; docs/scale-out.md), one case an
# entry: bitwise the single runs, the resume from the log, a damaged scan, --shard; on the CPU,
# and the bits on the GPU (skipped where there is none).
foreach(case bits resume bad shard)
  add_test(NAME many.${case} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/many.sh $<TARGET_FILE:dbtr> ${case} cpu)
  set_tests_properties(many.${case} PROPERTIES LABELS cpu TIMEOUT 300)
endforeach()
add_test(NAME many.bits_gpu COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/many.sh $<TARGET_FILE:dbtr> bits gpu)
set_tests_properties(many.bits_gpu PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77)
