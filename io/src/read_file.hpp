#pragma once
// Reading a whole file that a user named (internal to io): one reader for the scenario loader and
// the counts and skew files, so that every "cannot open" carries the operating system's reason.

#include <functional>
#include <string>

namespace collsim::io::detail {

/// The whole file at `path`. When it cannot be opened or read (a directory opens on Linux and
/// fails on the first read with EISDIR), calls `cannot_read(errno)`, which throws the caller's
/// error naming where the file was named; InternalError if it returns.
[[nodiscard]] std::string read_file_text(const std::string& path,
                                         const std::function<void(int)>& cannot_read);

} // namespace collsim::io::detail
