// NCCL environment variables a log shows its run set (logs_common.hpp, nccl_env_settings): the
// shell forms users write them in and NCCL_DEBUG=INFO's "set by environment" lines.

#include "logs_common.hpp"

#include <algorithm>

namespace collsim::io::logs {

namespace {

bool is_env_name(std::string_view name) {
  return starts_with(name, "NCCL_") && name.size() > 5 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

std::string unquoted(std::string_view v) {
  while (!v.empty() && (v.back() == '"' || v.back() == '\'' || v.back() == ';')) {
    v.remove_suffix(1);
  }
  while (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
    v.remove_prefix(1);
  }
  return std::string(v);
}

/// A setting, or an unread one when the shell computes its value (`$ALGO`, a backquote).
void record(EnvSetting e, std::vector<EnvSetting>& out, std::vector<EnvSetting>& unread) {
  const bool computed = e.value.find_first_of("$`") != std::string::npos;
  (computed ? unread : out).push_back(std::move(e));
}

/// `NAME=VALUE` at `at` (a word of `text`): a setting when NAME is an NCCL variable.
void assignment(std::string_view word, std::string_view text, std::size_t line,
                std::vector<EnvSetting>& out, std::vector<EnvSetting>& unread) {
  const std::size_t eq = word.find('=');
  if (eq == std::string_view::npos || !is_env_name(word.substr(0, eq))) {
    return;
  }
  record({std::string(word.substr(0, eq)), unquoted(word.substr(eq + 1)), line,
          static_cast<std::size_t>(word.data() - text.data()) + 1},
         out, unread);
}

} // namespace

std::vector<EnvSetting> nccl_env_settings(const std::vector<Line>& lines, std::size_t i,
                                          std::size_t count, std::vector<EnvSetting>& unread) {
  std::vector<EnvSetting> out;
  for (std::size_t k = i; k < i + count && k < lines.size(); ++k) {
    const Line& l = lines[k];
    if (l.comment || l.text.find("NCCL_") == std::string::npos) {
      continue;
    }
    const std::string_view text = l.text;
    // NCCL_DEBUG=INFO: "host:pid:tid [0] NCCL INFO NCCL_ALGO set by environment to Ring".
    if (const std::size_t at = text.find(" set by environment to ");
        at != std::string_view::npos && text.find("NCCL INFO ") != std::string_view::npos) {
      const std::size_t start = text.rfind(' ', at - 1) + 1;
      const std::string_view name = text.substr(start, at - start);
      const std::vector<std::string_view> rest = words(text.substr(at + 23));
      if (is_env_name(name) && !rest.empty()) {
        out.push_back({std::string(name), unquoted(rest.front()), l.number, start + 1});
      }
      continue;
    }
    const std::vector<std::string_view> w = words(text);
    for (std::size_t n = 0; n < w.size(); ++n) {
      std::string_view word = w[n];
      while (!word.empty() && (word.front() == '"' || word.front() == '\'')) {
        word.remove_prefix(1);
      }
      if ((word == "-genv" || word == "-env") && n + 2 < w.size() && is_env_name(w[n + 1])) {
        record({std::string(w[n + 1]), unquoted(w[n + 2]), l.number,
                static_cast<std::size_t>(w[n + 1].data() - text.data()) + 1},
               out, unread);
        n += 2;
      } else if (starts_with(word, "--export=")) {
        std::string_view list = word.substr(9);
        while (!list.empty()) {
          const std::size_t comma = list.find(',');
          assignment(list.substr(0, comma), text, l.number, out, unread);
          list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        }
      } else {
        assignment(word, text, l.number, out, unread);
      }
    }
  }
  return out;
}

} // namespace collsim::io::logs
