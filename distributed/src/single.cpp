// A build without MPI: collsim is always one process.

#include "collsim/distributed/session.hpp"

namespace collsim::distributed {

Session::Session(int& /*argc*/, char**& /*argv*/) {}
Session::~Session() = default;
int Session::finish(int code) {
  finished_ = true;
  return code;
}
bool primary() {
  return true;
}
int processes() {
  return 1;
}
std::unique_ptr<analysis::Executor> executor(unsigned threads,
                                             std::optional<std::uint64_t> max_memory) {
  return std::make_unique<analysis::ThreadExecutor>(
      threads, max_memory.value_or(analysis::available_memory()));
}

} // namespace collsim::distributed
