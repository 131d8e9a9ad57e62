#pragma once
// A checker of Open MPI coll/tuned rules files, written from the grammar in formats.md d.4 (not
// from Open MPI's parser): integers separated by anything non-numeric, '#' comments to the end of
// the line, an optional "rule-file-version-N" header, counts that match what follows, a first
// rule at message size 0 per communicator block, ascending communicator and message sizes, and
// algorithm ids that the version's enums know (formats.md d.3). Used by the io and analysis
// tests on generated output.

#include <cctype>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace collsim::test {

struct RulesMsg {
  std::int64_t bytes = 0;
  std::int64_t alg = 0;
  std::int64_t faninout = 0;
  std::int64_t segsize = 0;
  std::int64_t maxreq = -1; ///< -1: absent (v1)
};
struct RulesComm {
  std::int64_t comm_size = 0;
  std::vector<RulesMsg> rules;
};
struct RulesColl {
  std::int64_t id = 0;
  std::vector<RulesComm> comms;
};
struct RulesFile {
  int version = 1;
  std::vector<RulesColl> collectives;
  std::vector<std::string> errors; ///< empty when the file follows the grammar
};

/// Highest algorithm id per COLLTYPE id (formats.md d.3) for Open MPI 4.1 (v5 = false) or 5.0.
inline std::int64_t max_ompi_algorithm(std::int64_t colltype, bool v5) {
  const std::map<std::int64_t, std::int64_t> v41{{0, 6},  {1, 5},  {2, 6},  {3, 5},
                                                 {4, 2},  {6, 6},  {7, 9},  {9, 3},
                                                 {11, 7}, {12, 4}, {13, 4}, {15, 3}};
  const auto it = v41.find(colltype);
  if (it == v41.end()) {
    return 0;
  }
  if (v5 && (colltype == 0 || colltype == 1)) {
    return it->second + 1; // sparbit
  }
  return it->second;
}

/// Parses `text` as formats.md d.4 says and records every violation in `errors`.
inline RulesFile parse_ompi_rules(const std::string& text, bool v5) {
  RulesFile f;
  std::string body = text;
  const std::string header = "rule-file-version-";
  if (body.rfind(header, 0) == 0) {
    std::size_t end = header.size();
    while (end < body.size() && std::isdigit(static_cast<unsigned char>(body[end])) != 0) {
      ++end;
    }
    f.version = std::stoi(body.substr(header.size(), end - header.size()));
    body = body.substr(end);
  }
  std::vector<std::int64_t> tokens;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (const auto hash = line.find('#'); hash != std::string::npos) {
      line.resize(hash);
    }
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      if (w.find_first_not_of("0123456789") != std::string::npos) {
        f.errors.push_back("not a plain decimal number: '" + w + "'");
        continue;
      }
      if (w.size() > 1 && w[0] == '0') {
        f.errors.push_back("leading zero (read as octal): '" + w + "'");
      }
      tokens.push_back(std::stoll(w));
    }
  }
  std::size_t at = 0;
  const auto next = [&](const std::string& what) -> std::int64_t {
    if (at >= tokens.size()) {
      f.errors.push_back("file ends where " + what + " was expected");
      return 0;
    }
    return tokens[at++];
  };
  const std::int64_t ncol = next("the number of collectives");
  for (std::int64_t c = 0; c < ncol && f.errors.empty(); ++c) {
    RulesColl coll;
    coll.id = next("a collective id");
    if (coll.id < 0 || coll.id >= 22) {
      f.errors.push_back("collective id " + std::to_string(coll.id) + " is not below 22");
    }
    const std::int64_t ncomm = next("the number of communicator sizes");
    for (std::int64_t k = 0; k < ncomm && f.errors.empty(); ++k) {
      RulesComm comm;
      comm.comm_size = next("a communicator size");
      if (!coll.comms.empty() && comm.comm_size <= coll.comms.back().comm_size) {
        f.errors.push_back("communicator sizes not ascending");
      }
      const std::int64_t nmsg = next("the number of message size rules");
      if (nmsg < 1) {
        f.errors.push_back("a communicator block without rules");
      }
      for (std::int64_t m = 0; m < nmsg && f.errors.empty(); ++m) {
        RulesMsg r;
        r.bytes = next("a message size");
        r.alg = next("an algorithm id");
        r.faninout = next("a fan-in/out");
        r.segsize = next("a segment size");
        if (f.version >= 2) {
          r.maxreq = next("max requests");
        }
        if (m == 0 && r.bytes != 0) {
          f.errors.push_back("the first rule of a communicator block is not at size 0");
        }
        if (!comm.rules.empty() && r.bytes <= comm.rules.back().bytes) {
          f.errors.push_back("message sizes not ascending");
        }
        if (r.alg < 0 || r.alg > max_ompi_algorithm(coll.id, v5)) {
          f.errors.push_back("algorithm " + std::to_string(r.alg) + " is not an id of collective " +
                             std::to_string(coll.id));
        }
        comm.rules.push_back(r);
      }
      coll.comms.push_back(comm);
    }
    for (const auto& other : f.collectives) {
      if (other.id == coll.id) {
        f.errors.push_back("collective " + std::to_string(coll.id) + " appears twice");
      }
    }
    f.collectives.push_back(coll);
  }
  if (f.errors.empty() && at != tokens.size()) {
    f.errors.push_back(std::to_string(tokens.size() - at) + " numbers after the last rule");
  }
  return f;
}

} // namespace collsim::test
