// libFuzzer's entry for one target (COLLSIM_FUZZ_TARGET names it; tests/fuzz/CMakeLists.txt
// builds one executable per target). A finding aborts so libFuzzer saves the input.

#include "targets.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const collsim::fuzz::Target* const target = [] {
    for (const auto& t : collsim::fuzz::kTargets) {
      if (t.name == COLLSIM_FUZZ_TARGET)
        return &t;
    }
    std::abort();
  }();
  if (!collsim::fuzz::run_one(*target,
                              std::string_view(reinterpret_cast<const char*>(data), size))) {
    std::abort();
  }
  return 0;
}
