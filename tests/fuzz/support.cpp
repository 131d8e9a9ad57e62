#include "support.hpp"
#include "targets.hpp"

#include <collsim/core/errors.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace collsim::fuzz {

std::string scratch_file(std::string_view text, std::string_view suffix) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("collsim-fuzz-" + std::to_string(::getpid()) + std::string(suffix));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return path.string();
}

bool run_one(const Target& target, std::string_view text) {
  try {
    target.run(text);
    return true;
  } catch (const core::InternalError& e) {
    // A broken invariant reached from input: a bug, whatever the input was.
    std::fprintf(stderr, "fuzz %s: InternalError: %s\n", target.name.data(), e.what());
  } catch (const core::Error&) {
    return true; // a clear refusal: the contract
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz %s: exception outside collsim's errors: %s\n", target.name.data(),
                 e.what());
  }
  return false;
}

} // namespace collsim::fuzz
