# Sourced by the CLI shell tests. AddressSanitizer's notice about an exception thrown on a
# fiber stack (printed once per process in the asan build; google/sanitizers issue 189) is
# not kvsim's output: without_sanitizer_notes FILE drops it from FILE.
without_sanitizer_notes() {
  sed -i -e '/^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return/d' \
    -e '/^False positive error reports may follow$/d' \
    -e '/^For details see https:\/\/github.com\/google\/sanitizers\/issues\/189$/d' "$1"
}
