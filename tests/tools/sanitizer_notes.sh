# Sourced by the CLI shell tests. AddressSanitizer's notice about an exception thrown on a
# fiber stack (printed once per process in the asan build: ASan does not know a fiber stack's
# bounds, so it cannot clean up the frames the exception unwound there) is not kvsim's output: without_sanitizer_notes FILE drops it from FILE.
without_sanitizer_notes() {
  sed -i -e '/^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return/d' \
    -e '/^False positive error reports may follow$/d' \
    -e '/^For details see https:\/\/github.com\/google\/sanitizers\/issues\/189$/d' "$1"
}
