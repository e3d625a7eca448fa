# tests/ptx_audit.cmake: the instruction audit of the floating-point modes (docs/modes.md).
# kernels/ptx_audit.sh --check compiles kernels/mode_kernels.cu to PTX once per row of
# recon/modes.def, as the build does, and checks the promises each row's columns make: no
# fma or contractible mul/add/sub where products and sums are explicitly rounded, no .approx
# where division, sqrt and exp are exact, no .ftz without -ftz=true (CUDA's exp, which uses
# all three inside, aside); and each approximation, contraction or flush a row asks for shows
# (so that a clean count is not the audit missing things). It needs nvcc but no GPU, so it
# carries the cpu label; about a second per mode.
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
