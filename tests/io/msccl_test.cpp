// MSCCL XML import (issue 22, io/msccl.hpp): published algorithm files import and pass the
// symbolic checker (or are reported with the step that is wrong), the runtime's chunks, tiles and
// `cnt` split give the messages it sends, and every kind of bad input is one positioned error.

#include "registry_schedules.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/msccl.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace collsim;

namespace {

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(COLLSIM_TEST_DATA_DIR) + "/msccl/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

core::VerifyReport check(const io::MscclProgram& p, const core::Schedule& s) {
  core::SemanticsOptions o;
  o.undefined_reads = true;
  o.postcondition = p.collective.has_value();
  return core::check_semantics(s, o);
}

io::MscclBuilt build(const io::MscclProgram& p, std::uint64_t bytes, bool tiles = true) {
  io::MscclBuildOptions o;
  o.bytes = core::Bytes{bytes};
  o.tiles = tiles;
  return io::build_msccl_schedule(p, o);
}

std::string import_error(const std::string& text) {
  try {
    const io::MscclProgram p = io::read_msccl_xml(text, "t.xml");
    (void)p;
  } catch (const core::ScheduleError& e) {
    return e.what();
  }
  return "(no error)";
}

/// A two-GPU allreduce by hand: each GPU sends its chunk of the other's half and reduces.
const std::string kTwoGpu =
    R"(<algo name="two" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("published MSCCL allreduce files import and compute an allreduce", "[io][msccl]") {
  for (const char* name : {"mt_ring_8_1.xml", "mt_ap_1.xml", "lyd_binary_tree_gpu4.xml",
                           "lyd_a100_ring_ch24_scratch.xml", "lyd_ring_gpu64_ch8.xml"}) {
    INFO(name);
    const io::MscclProgram p = io::read_msccl_xml(read_data(name), name);
    REQUIRE(p.collective == core::CollectiveKind::allreduce);
    // One element per chunk, a size with several tiles, and the flat form.
    for (const auto& [bytes, tiles] :
         std::vector<std::pair<std::uint64_t, bool>>{{p.nchunksperloop * 4, true},
                                                     {p.nchunksperloop * (5ULL << 20), true},
                                                     {p.nchunksperloop * 4096, false}}) {
      INFO(bytes);
      const io::MscclBuilt b = build(p, bytes, tiles);
      CHECK(b.schedule.ranks() == p.ngpus);
      const core::VerifyReport r = check(p, b.schedule);
      CHECK(r.summary() == "");
    }
  }
}

TEST_CASE("published MSCCL allgather files import and compute an allgather", "[io][msccl]") {
  // TE-CCL's file carries TACCL's <copy> elements, which the runtimes skip: each GPU's input is
  // already its own block of the in-place output.
  for (const char* name : {"teccl_amd_32.xml", "ca_allgather_hierarchical.xml"}) {
    INFO(name);
    const io::MscclProgram p = io::read_msccl_xml(read_data(name), name);
    REQUIRE(p.collective == core::CollectiveKind::allgather);
    for (const std::uint64_t bytes : std::vector<std::uint64_t>{
             p.nchunksperloop * 4, p.nchunksperloop * (std::uint64_t{3} << 20)}) {
      CHECK(check(p, build(p, bytes).schedule).summary() == "");
    }
  }
}

TEST_CASE("the allreduces msccl-tools deleted as a bug are reported with their GPU, thread "
          "block and step",
          "[io][msccl]") {
  // experiments_ar_multi/ar_1.xml and ar_2.xml @ 9ca575e, deleted upstream in 187fa5e ("fix
  // bug"): `rrs srcoff=5 dstoff=4` reduces the local chunk 5 under the runtime's reading, where
  // the compiler meant chunk 4; two thread blocks also share a connection.
  for (const char* name : {"mt_ar_multi_1.xml", "mt_ar_multi_2.xml"}) {
    INFO(name);
    const io::MscclProgram p = io::read_msccl_xml(read_data(name), name);
    const auto warned = [&](const std::string& what) {
      return std::any_of(p.warnings.begin(), p.warnings.end(), [&](const std::string& w) {
        return w.find(what) != std::string::npos && w.find(std::string(name) + ":") == 0;
      });
    };
    CHECK(warned("'rrs' takes its local operand from i[5] but names i[4] as dst"));
    CHECK(warned("both receive from gpu 6 on channel 0"));
    const io::MscclBuilt b = build(p, p.nchunksperloop * 4);
    const core::VerifyReport r = check(p, b.schedule);
    REQUIRE_FALSE(r.ok());
    const std::string annotated = io::msccl_annotate(p, b, r.problems.front());
    CHECK(annotated.find("combines misaligned elements") != std::string::npos);
    CHECK(annotated.find("[gpu 6 tb ") != std::string::npos);
    CHECK(annotated.find(std::string(name) + ":") != std::string::npos);
  }
}

TEST_CASE("a custom MSCCL collective is checked for matching, deadlock, races and reads before "
          "writes",
          "[io][msccl]") {
  const io::MscclProgram p =
      io::read_msccl_xml(read_data("mt_alltonext_2in.xml"), "alltonext_2in.xml");
  CHECK_FALSE(p.collective.has_value());
  CHECK(p.coll == "custom");
  CHECK(p.ngpus == 24);
  const io::MscclBuilt b = build(p, p.nchunksperloop * 64);
  // GPU 8 receives gpu 0's chunk into o[0] and relays gpu 15's through o[0] too (rcs writes its
  // dst), with nothing ordering the two writes.
  const core::VerifyReport r = check(p, b.schedule);
  REQUIRE_FALSE(r.ok());
  CHECK(io::msccl_annotate(p, b, r.problems.front()) ==
        "race: rank 8 l18 (recv data[1024..1088) from 15) [gpu 8 tb 18 step 0, "
        "alltonext_2in.xml:248] may touch bytes that rank 8 l0 (recv data[1024..1088) from 0) "
        "[gpu 8 tb 0 step 0, alltonext_2in.xml:194] still uses; no dependency orders them");
}

TEST_CASE("a scratch chunk sent before anything wrote it is reported with the step",
          "[io][msccl]") {
  std::string text = replaced(kTwoGpu, R"(<gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">)",
                              R"(<gpu id="0" i_chunks="2" o_chunks="0" s_chunks="1">)");
  text =
      replaced(text, R"(<step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1")",
               R"(<step s="0" type="s" srcbuf="s" srcoff="0" dstbuf="i" dstoff="1" cnt="1")");
  const io::MscclProgram p = io::read_msccl_xml(text, "t.xml");
  const io::MscclBuilt b = build(p, 1024);
  const core::VerifyReport r = check(p, b.schedule);
  REQUIRE_FALSE(r.ok());
  CHECK(io::msccl_annotate(p, b, r.problems.front()) ==
        "rank 0 l0 (send tmp[0..512) to 1) [gpu 0 tb 0 step 0, t.xml:4]: reads tmp[0..512) "
        "before anything wrote it");
}

TEST_CASE("MSCCL's loop: chunks grow with the size, tiles of the protocol buffer, cnt split",
          "[io][msccl]") {
  const io::MscclProgram p = io::read_msccl_xml(kTwoGpu, "t.xml");
  // 2 chunks of 1 KiB: one loop iteration, one message per step.
  io::MscclBuilt b = build(p, 2048);
  CHECK(b.iterations == 1);
  CHECK(b.schedule.op_count() == 8);
  CHECK(b.schedule.length(0) == 1024);
  // 2 chunks of 5 MiB with Simple's 2 MiB tile: three iterations, the last 1 MiB.
  b = build(p, 10ULL << 20);
  CHECK(b.iterations == 3);
  CHECK(b.schedule.op_count() == 24);
  CHECK(b.schedule.length(0) == (2ULL << 20));
  CHECK(b.schedule.op(b.schedule.rank_end(0) - 1).target.length == (1ULL << 20));
  CHECK(check(p, b.schedule).summary() == "");
  // LL: 32 KiB of payload per tile.
  const io::MscclProgram ll =
      io::read_msccl_xml(replaced(kTwoGpu, R"(proto="Simple")", R"(proto="LL")"), "t.xml");
  CHECK(build(ll, 2 * 96 * 1024).iterations == 3);
  // A cnt=2 step: one message of both chunks while a chunk fits a tile twice, else one message
  // per chunk and iteration.
  const std::string bcast =
      R"(<algo name="b" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="broadcast" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";
  const io::MscclProgram bc = io::read_msccl_xml(bcast, "b.xml");
  b = build(bc, 2048);
  REQUIRE(b.schedule.op_count() == 2);
  CHECK(b.schedule.length(0) == 2048);
  b = build(bc, 8ULL << 20); // 4 MiB chunks: two iterations of two 2 MiB slices
  CHECK(b.iterations == 2);
  CHECK(b.schedule.op_count() == 8);
  CHECK(b.schedule.op(1).target == core::Range{core::Buffer::data, 4ULL << 20, 2ULL << 20});
  CHECK(check(bc, b.schedule).summary() == "");
  // Sizes the runtime refuses.
  CHECK(io::msccl_size_refusal(p, core::Bytes{3}) != "");
  CHECK(io::msccl_size_refusal(p, core::Bytes{0}) != "");
  CHECK(io::msccl_size_refusal(p, core::Bytes{4}) == "");
  CHECK_THROWS_AS(build(p, 3), core::UsageError);
}

TEST_CASE("messages on two MSCCL channels between the same GPUs match per channel", "[io][msccl]") {
  // GPU 0 sends chunk 0 on channel 1 and then chunk 1 on channel 0; GPU 1 receives channel 0
  // first. Per-pair order would cross them; per-channel matching does not.
  const std::string text =
      R"(<algo name="x" proto="Simple" nchannels="2" nchunksperloop="2" ngpus="2" coll="broadcast" inplace="1">
  <gpu id="0" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="0" deps="0" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="0" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="-1" recv="0" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="0" deps="0" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";
  const io::MscclProgram p = io::read_msccl_xml(text, "t.xml");
  const io::MscclBuilt b = build(p, 64);
  CHECK(b.schedule.tag(b.schedule.rank_begin(0)) == 1);
  CHECK(check(p, b.schedule).summary() == "");
}

TEST_CASE("bad MSCCL XML is one positioned error", "[io][msccl]") {
  CHECK(import_error(kTwoGpu.substr(0, 400)).find("t.xml:") == 0);
  CHECK(import_error(kTwoGpu.substr(0, 400)).find("not well-formed XML") != std::string::npos);
  CHECK(import_error("<msccl/>") == "t.xml:1:1: error: no <algo> element: not an MSCCL algorithm "
                                    "file");
  CHECK(import_error(replaced(kTwoGpu, R"(cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3")",
                              R"(cnt="x" depid="-1" deps="-1" hasdep="0"/>
      <step s="3")")) == "t.xml:6:72: error: 'cnt' of <step> must be an integer, got 'x'");
  CHECK(import_error(replaced(kTwoGpu, R"(type="rrc" srcbuf="i" srcoff="0")",
                              R"(type="rrx" srcbuf="i" srcoff="0")")) ==
        "t.xml:5:19: error: unknown step type 'rrx' (s, r, rcs, rrs, rrc, rrcs, cpy, re, nop)");
  CHECK(import_error(replaced(kTwoGpu, R"(proto="Simple")", R"(proto="simple")")) ==
        "t.xml:1:18: error: unknown proto 'simple' (the runtimes take Simple, LL or LL128)");
  CHECK(import_error(replaced(kTwoGpu, R"(<tb id="0" send="1" recv="1" chan="0">)",
                              R"(<tb id="1" send="1" recv="1" chan="0">)")) ==
        "t.xml:3:5: error: gpu 0: thread block 0 is missing (ids must be 0, 1, ...)");
  CHECK(import_error(replaced(kTwoGpu, R"(<tb id="0" send="1" recv="1" chan="0">)",
                              R"(<tb id="0" send="0" recv="1" chan="0">)")) ==
        "t.xml:3:5: error: gpu 0's thread block names gpu 0 itself as its peer");
  CHECK(import_error(replaced(kTwoGpu, R"(srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1")",
                              R"(srcoff="2" dstbuf="i" dstoff="0" cnt="1" depid="-1")"))
            .find("chunks [2, 3) of buffer 'i' are outside its 2 chunks") != std::string::npos);
  // GPU 1 receives one message fewer than GPU 0 sends: the runtime hangs.
  CHECK(
      import_error(replaced(
          kTwoGpu,
          R"(      <step s="3" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
)",
          "")) ==
      "t.xml:6:1: error: gpu 0 sends 2 messages to gpu 1 on channel 0, which receives 1: the "
      "runtime hangs");
  // A step waiting for a thread block that never raises its flag.
  const std::string two_tbs =
      R"(<algo name="c" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" coll="broadcast" inplace="1">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="-1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0" hasdep="1"/>
    </tb>
    <tb id="1" send="-1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="i" dstoff="-1" cnt="0" depid="0" deps="0" hasdep="1"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="-1" recv="0" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
)";
  CHECK(import_error(two_tbs) == "t.xml:4:1: error: gpu 0: a dependency cycle through tb 0 step 0");
  CHECK(import_error(replaced(two_tbs, R"(cnt="0" depid="0" deps="0" hasdep="1")",
                              R"(cnt="0" depid="-1" deps="-1" hasdep="0")")) ==
        "t.xml:4:1: error: gpu 0 tb 0 step 0 waits for thread block 1 step 0, but no step of it "
        "from there on raises its flag (hasdep=\"1\"): the runtime waits for ever");
}

TEST_CASE("every registered algorithm MSCCL can express exports, and comes back the same",
          "[io][msccl][registry]") {
  std::size_t exported = 0;
  std::size_t refused = 0;
  testing::for_each_registered_schedule(
      {1, 2, 5, 8, 16}, [&](const auto& algo, std::uint32_t p, const core::Schedule& s) {
        INFO(algo.name << " (" << core::to_string(algo.collective) << ") on " << p << " ranks");
        std::string xml;
        try {
          xml = io::write_msccl_xml(s);
        } catch (const core::UsageError& e) {
          CHECK(std::string(e.what()).find("MSCCL XML cannot express this schedule: ") == 0);
          ++refused;
          return;
        }
        ++exported;
        const io::MscclProgram program = io::read_msccl_xml(xml, "export.xml");
        // The exact round trip, through the collsim comment (checked against the XML body).
        const std::optional<core::Schedule> back = io::msccl_embedded_schedule(xml, program);
        REQUIRE(back.has_value());
        CHECK(core::print_schedule(*back) == core::print_schedule(s));
        // The XML body alone computes the collective, at the size and at 64 times the size.
        for (const std::uint64_t scale : {std::uint64_t{1}, std::uint64_t{64}}) {
          const io::MscclBuilt b = build(program, s.header().bytes.value * scale, scale != 1);
          CHECK(check(program, b.schedule).summary() == "");
        }
      });
  CHECK(exported > 300);
  CHECK(refused < exported);
}
