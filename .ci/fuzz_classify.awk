# .ci/fuzz_classify.awk: where a fuzzer's finding happened, "ours" or "hdf5".
#
#   awk -v root=/path/to/repo/ -f .ci/fuzz_classify.awk FUZZER.log
#   awk -v root=/path/to/repo/ -v access=1 -f .ci/fuzz_classify.awk FUZZER.log
#
# The second form prints only where the failing access (or crash) happened: "hdf5", "ours"
# or "unknown".
# Used by .ci/fuzz.sh; tests/fuzz/logs/ holds reports with the answer each must give
# (CTest fuzz.classify). A stack frame is decisive when it is in libhdf5 (hdf5) or on a
# source line of this repository (ours); sanitizer, libFuzzer and libc frames, and
# interceptors (no source line), are passed over.
# - A memory error that AddressSanitizer reports is HDF5's when the access happened in
#   libhdf5 and the buffer is HDF5's too: allocated (or freed) in libhdf5, a local of a
#   libhdf5 frame, or a wild pointer that AddressSanitizer ties to no allocation at all,
#   so an address HDF5 computed itself. So is an access into a buffer of libFuzzer's own
#   (its corpus, its statistics; not its copy of the input): libhdf5 never gets a pointer
#   into that memory, so an address that lands there is one HDF5 computed. A buffer we
#   allocated (or a local of ours) that HDF5 overran may be one we sized wrongly, so that
#   is ours, and so is a buffer whose owner has no decisive frame and is not libFuzzer's.
# - Otherwise (a crash, a stack overflow by recursion, a hang, a huge allocation) the
#   innermost decisive frame tells.
# - Unclear: ours.
function decisive(line) {
  if (line ~ /libhdf5/) return "hdf5"
  if (index(line, " " root) > 0) return "ours" # a source line, not "(binary+0x...)"
  return ""
}
!on && /ERROR: AddressSanitizer: [a-z-]*(overflow|use-after|free|param|underflow)/ && !/stack-overflow/ { mem = 1 }
!on && /ERROR: |deadly signal|timeout after|runtime error:/ { on = 1; phase = 1 }
# The owner's stack: "allocated by" / "freed by" for the heap, "in frame" for a local.
on && /(allocated|freed) by thread|is located in stack of thread/ { if (phase == 1) { phase = 2; located = 1 } }
on && /is a wild pointer/ { wild = 1 }
on && /^ *#[0-9]+ 0x/ {
  # The first libFuzzer frame of the owner's stack, before any decisive one, says the
  # buffer is libFuzzer's own, unless it is ExecuteCallback's copy of the input: the input
  # itself, which a harness could hand to HDF5 with a wrong size.
  if (phase == 2 && alloc == "" && !fz_seen && $0 ~ / in fuzzer::/) {
    fz_seen = 1
    fuzzer_owned = $0 !~ /ExecuteCallback/
  }
  if ($0 ~ / in (fuzzer::|__sanitizer|__asan|__lsan|__ubsan)/ || $0 ~ /libc\.so|libc-start/) next
  d = decisive($0)
  if (d == "") next
  if (phase == 1 && acc == "") acc = d
  if (phase == 2 && alloc == "") alloc = d
}
END {
  if (access) { print (acc == "" ? "unknown" : acc); exit }
  if (mem) print (acc == "hdf5" && (alloc == "hdf5" || (wild && !located) || (alloc == "" && fuzzer_owned))) ? "hdf5" : "ours"
  else print (acc == "hdf5") ? "hdf5" : "ours"
}
