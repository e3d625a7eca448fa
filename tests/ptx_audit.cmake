# tests/ptx_audit.cmake: the instruction audit of the floating-point modes (docs/modes.md).
# kernels/ptx_audit.sh --check compiles kernels/backend_mode.cu to PTX once per mode, with the
# flags kernels/CMakeLists.txt gives it, and checks what the modes promise: no fma, .approx,
# .ftz or contractible mul/add/sub in cpu-match and double-match; approximate division or exp
# and FTZ in fast; no approximate division or sqrt in ieee and double; and each single-change
# variant shows its one change (so a clean count is not the audit missing things). It needs
# nvcc but no GPU, so it carries the cpu label; about a second per mode.
if(DBTR_HAVE_CUDA)
  # The PTX of the first architecture the build targets; the promises hold for any.
  set(dbtr_ptx_arch sm_90)
  list(GET CMAKE_CUDA_ARCHITECTURES 0 dbtr_ptx_first)
  if(dbtr_ptx_first MATCHES "^([0-9]+)")
    set(dbtr_ptx_arch sm_${CMAKE_MATCH_1})
  endif()
  add_test(NAME ptx_audit.check COMMAND sh ${CMAKE_SOURCE_DIR}/kernels/ptx_audit.sh --check --totals)
  set_tests_properties(ptx_audit.check PROPERTIES LABELS cpu TIMEOUT 300
                       ENVIRONMENT "NVCC=${CMAKE_CUDA_COMPILER};DBTR_PTX_ARCH=${dbtr_ptx_arch}")
endif()
