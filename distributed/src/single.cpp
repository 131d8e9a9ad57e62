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
std::unique_ptr<analysis::Executor> executor(unsigned /*threads*/) {
  return nullptr;
}

} // namespace collsim::distributed
