#pragma once
// CSV field quoting shared by every CSV collsim writes (results, tuning tables, ingested logs,
// chart data).

#include <string>
#include <string_view>

namespace collsim::io {

/// RFC 4180: quote a field only when it needs it (a comma, a quote or a line break), doubling
/// quotes inside.
inline std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(s);
  }
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') {
      out += '"';
    }
    out += c;
  }
  return out + '"';
}

} // namespace collsim::io
