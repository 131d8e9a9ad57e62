#pragma once
// Internal to analysis: a sweep point's result as bytes and back, for executors that run points in
// other processes (analysis/executor.hpp). Fixed-width little-endian fields as this machine lays
// them out (every process of one job runs the same binary), doubles bit for bit, so that a result
// loaded in another process prints byte for byte as where it was computed.

#include "collsim/core/engine.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/result.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace collsim::analysis::detail {

class WireWriter {
public:
  template <typename T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    out_.append(raw, sizeof(T));
  }
  void put(std::string_view text) {
    put(static_cast<std::uint64_t>(text.size()));
    out_.append(text);
  }
  void put(const std::string& text) { put(std::string_view(text)); }
  void put(const core::Seconds& s) { put(s.value); }
  void put(const core::Bytes& b) { put(b.value); }
  void put(const core::Bandwidth& b) { put(b.bytes_per_second); }
  template <typename K, typename V>
  void put(const std::map<K, V>& m) {
    put(static_cast<std::uint64_t>(m.size()));
    for (const auto& [k, v] : m) {
      put(k);
      put(v);
    }
  }
  [[nodiscard]] std::string take() { return std::move(out_); }

private:
  std::string out_;
};

class WireReader {
public:
  explicit WireReader(std::string_view in) : in_(in) {}
  template <typename T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void get(T& value) {
    need(sizeof(T));
    std::memcpy(&value, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
  }
  void get(std::string& text) {
    std::uint64_t n = 0;
    get(n);
    need(n);
    text.assign(in_.substr(at_, n));
    at_ += n;
  }
  void get(core::Seconds& s) { get(s.value); }
  void get(core::Bytes& b) { get(b.value); }
  void get(core::Bandwidth& b) { get(b.bytes_per_second); }
  template <typename K, typename V>
  void get(std::map<K, V>& m) {
    std::uint64_t n = 0;
    get(n);
    m.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      K k{};
      V v{};
      get(k);
      get(v);
      m.emplace(std::move(k), std::move(v));
    }
  }
  /// Throws unless every byte was read (a result from another build or another sweep).
  void finish() const {
    if (at_ != in_.size()) {
      throw core::Error("a sweep result from another process has trailing bytes");
    }
  }

private:
  void need(std::uint64_t n) const {
    if (n > in_.size() - at_) {
      throw core::Error("a sweep result from another process is truncated");
    }
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

inline void put_row(WireWriter& w, const core::ResultRow& r) {
  w.put(r.collective);
  w.put(r.algorithm);
  w.put(r.engine);
  w.put(r.ranks);
  w.put(r.bytes);
  w.put(r.count);
  w.put(r.type);
  w.put(r.root);
  w.put(r.time);
  w.put(r.algbw);
  w.put(r.busbw);
  w.put(r.params);
  w.put(r.stack);
  w.put(r.varying);
  w.put(r.last_arrival);
  w.put(r.method);
  w.put(r.extrapolated);
}

inline void get_row(WireReader& in, core::ResultRow& r) {
  in.get(r.collective);
  in.get(r.algorithm);
  in.get(r.engine);
  in.get(r.ranks);
  in.get(r.bytes);
  in.get(r.count);
  in.get(r.type);
  in.get(r.root);
  in.get(r.time);
  in.get(r.algbw);
  in.get(r.busbw);
  in.get(r.params);
  in.get(r.stack);
  in.get(r.varying);
  in.get(r.last_arrival);
  in.get(r.method);
  in.get(r.extrapolated);
}

inline void put_load(WireWriter& w, const core::LinkLoad& l) {
  w.put(l.link);
  w.put(l.bytes);
  w.put(l.messages);
  w.put(l.busy);
}

inline void get_load(WireReader& in, core::LinkLoad& l) {
  in.get(l.link);
  in.get(l.bytes);
  in.get(l.messages);
  in.get(l.busy);
}

} // namespace collsim::analysis::detail
