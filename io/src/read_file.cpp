// Whole-file reads for the io loaders (read_file.hpp).

#include "read_file.hpp"

#include "collsim/core/errors.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <memory>

namespace collsim::io::detail {
namespace {

/// Closes a C stream when the reader leaves, whatever the path out.
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

} // namespace

std::string read_file_text(const std::string& path, const std::function<void(int)>& cannot_read) {
  // C stdio rather than iostreams: errno after fopen/fread is the reason the user needs to see.
  errno = 0;
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  int err = errno;
  std::string text;
  if (file) {
    std::array<char, 65536> buffer{};
    for (;;) {
      const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
      text.append(buffer.data(), n);
      if (n < buffer.size()) {
        break;
      }
    }
    err = std::ferror(file.get()) != 0 ? (errno != 0 ? errno : EIO) : 0;
  }
  if (!file || err != 0) {
    cannot_read(err);
    throw core::InternalError("read_file_text: the error callback returned");
  }
  return text;
}

} // namespace collsim::io::detail
