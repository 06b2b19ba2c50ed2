// The regression half of every fuzz target (tests/fuzz/README.md): a plain main that runs the
// target's LLVMFuzzerTestOneInput over every file of the directories (or the files) it is
// given, in name order, so that the corpus, the crashers found so far included, runs as an
// ordinary ctest in every build, with g++ and without libFuzzer. A crash, a sanitizer report
// or an exception that escapes the target fails the test as it would stop the fuzzer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path given(argv[i]);
    if (std::filesystem::is_directory(given)) {
      for (const auto& entry : std::filesystem::directory_iterator(given)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(given)) {
      inputs.push_back(given);
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  // An empty corpus would pass while testing nothing: a moved directory must fail loudly.
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs in the corpus\n");
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  for (const std::filesystem::path& input : inputs) {
    std::fprintf(stderr, "input %s\n", input.filename().c_str());  // names a crasher
    const std::vector<std::uint8_t> bytes = read_bytes(input);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("%zu inputs ran\n", inputs.size());
  return 0;
}
