// NCCL environment variables a log shows its run set (logs_common.hpp, nccl_env_settings): the
// shell forms users write them in and NCCL_DEBUG=INFO's "set by environment" lines; and the Open
// MPI MCA parameters a launch command sets (mca_settings).

#include "logs_common.hpp"

#include <algorithm>
#include <string>
#include <utility>

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

/// Each item of srun's `--export=ALL,NAME=VALUE,...` in `word` (which starts with `--export=`).
template <typename F>
void each_export(std::string_view word, F&& f) {
  std::string_view list = word.substr(9);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    f(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
}

constexpr std::string_view kMcaPrefix = "OMPI_MCA_";

bool is_mca_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// An MCA setting, unless the shell computes its value (`$ALG`): then it is left out.
void record_mca(EnvSetting e, std::vector<EnvSetting>& out) {
  if (e.value.find_first_of("$`") == std::string::npos) {
    out.push_back(std::move(e));
  }
}

/// `OMPI_MCA_NAME=VALUE` in `word` (a word of `text` on line `line`): an MCA setting.
void mca_assignment(std::string_view word, std::string_view text, std::size_t line,
                    std::vector<EnvSetting>& out) {
  const std::size_t eq = word.find('=');
  if (eq == std::string_view::npos || !starts_with(word, kMcaPrefix) ||
      !is_mca_name(word.substr(kMcaPrefix.size(), eq - kMcaPrefix.size()))) {
    return;
  }
  record_mca({std::string(word.substr(kMcaPrefix.size(), eq - kMcaPrefix.size())),
              unquoted(word.substr(eq + 1)), line,
              static_cast<std::size_t>(word.data() - text.data()) + kMcaPrefix.size() + 1},
             out);
}

/// A word of a command with where it is written.
struct PlacedWord {
  std::string_view word;
  std::string_view text; ///< its line
  std::size_t line = 0;
};

} // namespace

std::vector<EnvSetting> mca_settings(const std::vector<Line>& lines, std::size_t i,
                                     std::size_t count, std::string_view program) {
  std::vector<PlacedWord> w;
  for (std::size_t k = i; k < i + count && k < lines.size(); ++k) {
    for (std::string_view word : words(lines[k].text)) {
      if (word == "\\") {
        continue; // a continuation
      }
      w.push_back({word, lines[k].text, lines[k].number});
    }
  }
  std::vector<EnvSetting> out;
  const auto column = [](const PlacedWord& p) {
    return static_cast<std::size_t>(p.word.data() - p.text.data()) + 1;
  };
  for (std::size_t n = 0; n < w.size(); ++n) {
    std::string_view word = w[n].word;
    while (!word.empty() && (word.front() == '"' || word.front() == '\'')) {
      word.remove_prefix(1);
    }
    if (word == program ||
        (word.find('/') != std::string_view::npos && word.substr(word.rfind('/') + 1) == program)) {
      break; // the benchmark's own arguments follow
    }
    if ((word == "--mca" || word == "-mca" || word == "--gmca" || word == "-gmca") &&
        n + 2 < w.size() && is_mca_name(w[n + 1].word)) {
      record_mca(
          {std::string(w[n + 1].word), unquoted(w[n + 2].word), w[n + 1].line, column(w[n + 1])},
          out);
      n += 2;
    } else if ((word == "-genv" || word == "-env") && n + 2 < w.size() &&
               starts_with(w[n + 1].word, kMcaPrefix) &&
               is_mca_name(w[n + 1].word.substr(kMcaPrefix.size()))) {
      record_mca({std::string(w[n + 1].word.substr(kMcaPrefix.size())), unquoted(w[n + 2].word),
                  w[n + 1].line, column(w[n + 1]) + kMcaPrefix.size()},
                 out);
      n += 2;
    } else if (starts_with(word, "--export=")) {
      each_export(word,
                  [&](std::string_view item) { mca_assignment(item, w[n].text, w[n].line, out); });
    } else {
      mca_assignment(word, w[n].text, w[n].line, out);
    }
  }
  return out;
}

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
        each_export(word,
                    [&](std::string_view item) { assignment(item, text, l.number, out, unread); });
      } else {
        assignment(word, text, l.number, out, unread);
      }
    }
  }
  return out;
}

} // namespace collsim::io::logs
