// collsim_fuzz_replay TARGET FILE_OR_DIR...: runs a fuzz target (targets.hpp) on every file given
// (directories recursively, in name order) without libFuzzer, as the default test suite does with
// the seeds and the regressions of each target. Exit 0 when every input was read or refused with
// an input error; 1 with the failing files named; 2 on bad usage. `--list` prints the targets;
// `--expect NAME...` checks that the build fuzzes exactly these, in this order.

#include "targets.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::filesystem::path> inputs(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(root)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.is_regular_file())
        files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(root);
  }
  return files;
}

} // namespace

int main(int argc, char** argv) {
  using collsim::fuzz::kTargets;
  if (argc == 2 && std::string_view(argv[1]) == "--list") {
    for (const auto& t : kTargets)
      std::printf("%s\n", t.name.data());
    return 0;
  }
  if (argc >= 2 && std::string_view(argv[1]) == "--expect") {
    // The build's list of targets (tests/fuzz/CMakeLists.txt) must be targets.hpp's, in order.
    std::vector<std::string_view> given(argv + 2, argv + argc);
    std::vector<std::string_view> known;
    for (const auto& t : kTargets)
      known.push_back(t.name);
    if (given == known)
      return 0;
    std::fprintf(stderr, "%s: the build lists other fuzz targets than targets.hpp\n", argv[0]);
    return 1;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET FILE_OR_DIR... | --list\n", argv[0]);
    return 2;
  }
  const auto* target = std::find_if(std::begin(kTargets), std::end(kTargets),
                                    [&](const auto& t) { return t.name == argv[1]; });
  if (target == std::end(kTargets)) {
    std::fprintf(stderr, "%s: no fuzz target '%s' (--list names them)\n", argv[0], argv[1]);
    return 2;
  }
  std::size_t runs = 0, failures = 0;
  for (int i = 2; i < argc; ++i) {
    if (!std::filesystem::exists(argv[i])) {
      std::fprintf(stderr, "%s: %s: no such file or directory\n", argv[0], argv[i]);
      return 2;
    }
    for (const auto& file : inputs(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      ++runs;
      if (!collsim::fuzz::run_one(*target, text.str())) {
        std::fprintf(stderr, "  input: %s\n", file.string().c_str());
        ++failures;
      }
    }
  }
  std::printf("%s: %zu inputs, %zu failures\n", argv[1], runs, failures);
  return failures == 0 ? 0 : 1;
}
