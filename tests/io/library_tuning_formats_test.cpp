// The library tuning writers (mpich-json, smpi-cfg, nccl-tuner, ucc-tune) on hand-made tables, so
// that the goldens move only when a writer does: golden files per format (tests/data/tuning/;
// regenerate with COLLSIM_UPDATE_GOLDEN=1 and review the diff), each file's grammar from
// formats.md checked on the generated text (library_tuning_grammar.hpp), and the refusals.

#include "collsim/core/errors.hpp"
#include "collsim/io/tuning_formats.hpp"
#include "library_tuning_grammar.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden.hpp"

namespace {

using collsim::core::Bytes;
using collsim::core::CollectiveKind;
using collsim::core::TuneCandidate;
using collsim::core::TuneRange;
using collsim::core::TuneTable;

void check_golden(const std::string& name, const std::string& actual) {
  collsim::testing::check_golden_file(std::string(COLLSIM_TEST_DATA_DIR) + "/tuning/" + name,
                                      actual);
}

/// A candidate with the registry's aliases of that algorithm (copied: io does not link the
/// registry).
TuneCandidate cand(std::string algorithm, std::vector<std::string> aliases,
                   std::map<std::string, std::string> params = {}) {
  TuneCandidate c;
  c.algorithm = std::move(algorithm);
  c.aliases = std::move(aliases);
  c.params = std::move(params);
  return c;
}

const std::vector<std::string> kRd{"ompi:3", "mpich:recursive_doubling", "smpi:rdb", "ucc:knomial"};
const std::vector<std::string> kRing{"ompi:4", "mpich:ring", "smpi:lr", "ucc:ring"};
const std::vector<std::string> kRab{"ompi:6", "mpich:reduce_scatter_allgather", "smpi:rab_rdb"};
const std::vector<std::string> kBinomial{"ompi:6", "mpich:binomial", "smpi:binomial_tree"};
const std::vector<std::string> kScatterRing{"ompi:9", "mpich:scatter_ring_allgather",
                                            "smpi:scatter_LR_allgather"};

TuneRange range(std::uint64_t from, std::uint64_t to, TuneCandidate winner) {
  TuneRange r;
  r.from = Bytes{from};
  r.to = Bytes{to};
  r.winner = std::move(winner);
  return r;
}

TuneTable base(std::string library) {
  TuneTable t;
  t.scenario = "sample";
  t.engine = "loggp";
  t.library = std::move(library);
  for (std::uint64_t s : {8, 512, 4096, 32768, 262144, 1048576}) {
    t.sizes.push_back(Bytes{s});
  }
  return t;
}

/// allreduce at 4 and 8 ranks (8 ranks: a reduce_scatter_allgather range between two others),
/// bcast at 8 ranks.
TuneTable mpi_sample(const std::string& library, bool with_bcast = true) {
  TuneTable t = base(library);
  // UCC has no Rabenseifner under that name: ring wins there instead.
  const auto middle = library == "ucc" ? cand("ring", kRing) : cand("rabenseifner", kRab);
  t.blocks.push_back({CollectiveKind::allreduce,
                      4,
                      {range(8, 512, cand("recursive_doubling", kRd)),
                       range(4096, 1048576, cand("ring", kRing))}});
  t.blocks.push_back(
      {CollectiveKind::allreduce,
       8,
       {range(8, 32768, cand("recursive_doubling", kRd)), range(262144, 262144, middle),
        range(1048576, 1048576, cand("ring", kRing))}});
  if (with_bcast) {
    t.blocks.push_back({CollectiveKind::bcast,
                        8,
                        {range(8, 4096, cand("binomial", kBinomial)),
                         range(32768, 1048576, cand("scatter_ring_allgather", kScatterRing))}});
  }
  return t;
}

/// NCCL: allreduce at 8 and 16 ranks with protocols, bcast (NCCL's ring only) at 8.
TuneTable nccl_sample() {
  TuneTable t = base("nccl");
  const std::vector<std::string> ring{"nccl:ring"};
  const std::vector<std::string> tree{"nccl:tree"};
  const std::vector<std::string> nvls{"nccl:nvls"};
  t.blocks.push_back({CollectiveKind::allreduce,
                      8,
                      {range(8, 4096, cand("nccl_tree", tree, {{"protocol", "ll"}})),
                       range(32768, 32768, cand("nccl_ring", ring, {{"protocol", "ll128"}})),
                       range(262144, 1048576, cand("nvls", nvls, {{"protocol", "simple"}}))}});
  t.blocks.push_back({CollectiveKind::allreduce,
                      16,
                      {range(8, 512, cand("nccl_ring", ring, {{"protocol", "ll"}})),
                       range(4096, 1048576, cand("nccl_ring", ring, {{"protocol", "ll"}}))}});
  t.blocks.push_back({CollectiveKind::bcast, 8, {range(8, 1048576, cand("nccl_ring", ring))}});
  return t;
}

} // namespace

TEST_CASE("library tuning writers match their approved golden files", "[io][tuning]") {
  check_golden("sample-mpich.json", collsim::io::format_mpich_json(
                                        mpi_sample("mpich"), collsim::core::MpichVersion::latest));
  check_golden("sample-smpi.cfg", collsim::io::format_smpi_cfg(mpi_sample("smpi")));
  check_golden("sample-nccl.conf", collsim::io::format_nccl_tuner(nccl_sample()));
  check_golden("sample-ucc.tune", collsim::io::format_ucc_tune(mpi_sample("ucc", false)));
}

TEST_CASE("an MPICH selection file follows formats.md e and says what the table says",
          "[io][tuning]") {
  const std::string text =
      collsim::io::format_mpich_json(mpi_sample("mpich"), collsim::core::MpichVersion::latest);
  INFO(text);
  CHECK(collsim::test::check_mpich_json(text).empty());
  const auto j = nlohmann::ordered_json::parse(text);
  // Tuned collectives come first; csel tries keys in file order.
  CHECK(j.begin().key() == "collective=allreduce");
  const auto& ops = j.at("collective=allreduce").at("comm_type=intra");
  CHECK(ops.begin().key() == "is_op_built_in=no");
  const auto& sizes = ops.at("is_op_built_in=yes");
  // 4 ranks' block below 8 ranks, 8 ranks' block from 8 on (coll/tuned's rule).
  REQUIRE(sizes.size() == 2);
  const auto& p4 = sizes.at("comm_size<8");
  CHECK(p4.at("avg_msg_size<4096").contains("algorithm=MPIR_Allreduce_intra_recursive_doubling"));
  CHECK(p4.at("avg_msg_size=any").contains("algorithm=MPIR_Allreduce_intra_ring"));
  const auto& p8 = sizes.at("comm_size=any");
  CHECK(p8.at("avg_msg_size<262144").contains("algorithm=MPIR_Allreduce_intra_recursive_doubling"));
  // reduce_scatter_allgather keeps MPICH's count >= 2^floor(lg p) guard.
  CHECK(p8.at("avg_msg_size<1048576")
            .at("count<pow2")
            .contains("algorithm=MPIR_Allreduce_intra_recursive_doubling"));
  CHECK(p8.at("avg_msg_size<1048576")
            .at("count=any")
            .contains("algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather"));
  CHECK(j.at("collective=bcast")
            .at("comm_type=intra")
            .at("avg_msg_size<32768")
            .contains("algorithm=MPIR_Bcast_intra_binomial"));
  // Collectives collsim did not tune get a plain algorithm, not nothing.
  CHECK(j.at("collective=iallreduce")
            .at("comm_type=intra")
            .contains("algorithm=MPIR_Iallreduce_intra_sched_recursive_doubling"));
}

TEST_CASE("the MPICH grammar checker rejects what formats.md e does not allow", "[io][tuning]") {
  using collsim::test::check_mpich_json;
  std::string all;
  for (const auto& c : collsim::test::mpich_collectives()) {
    all += ",\"collective=" + c + "\":{\"algorithm=MPIR_" + collsim::test::mpich_function_part(c) +
           "_allcomm_x\":{}}";
  }
  CHECK(check_mpich_json("{" + all.substr(1) + "}").empty());
  CHECK(!check_mpich_json("{" + all.substr(1) + ",\"collective=foo\":{}}").empty());
  std::string others; // all but allreduce, which the next cases write
  for (const auto& c : collsim::test::mpich_collectives()) {
    if (c != "allreduce") {
      others += ",\"collective=" + c + "\":{\"algorithm=MPIR_" +
                collsim::test::mpich_function_part(c) + "_allcomm_x\":{}}";
    }
  }
  const std::string bad_key = "{\"collective=allreduce\":{\"msg_size<8\":{\"algorithm=MPIR_"
                              "Allreduce_intra_ring\":{}},\"any\":{\"algorithm=MPIR_Allreduce_"
                              "intra_ring\":{}}}" +
                              others + "}";
  CHECK(!check_mpich_json(bad_key).empty()); // msg_size is no condition
  const std::string no_wildcard = "{\"collective=bcast\":{\"avg_msg_size<8\":{\"algorithm=MPIR_"
                                  "Bcast_intra_binomial\":{}}}}";
  const auto e = check_mpich_json(no_wildcard);
  CHECK(std::find_if(e.begin(), e.end(), [](const std::string& s) {
          return s.find("not in a wildcard") != std::string::npos;
        }) != e.end());
  CHECK(!check_mpich_json("{\"collective=bcast\":{\"algorithm=MPIR_Allreduce_intra_ring\":{}}}")
             .empty()); // another collective's function
  CHECK(!check_mpich_json("[1]").empty());
  // MPICH 4.0.2: "unknown key is_op_built_in=any".
  const std::string op_any = "{\"collective=allreduce\":{\"is_op_built_in=no\":{\"algorithm=MPIR_"
                             "Allreduce_intra_ring\":{}},\"is_op_built_in=any\":{\"algorithm="
                             "MPIR_Allreduce_intra_ring\":{}}}" +
                             others + "}";
  CHECK(!check_mpich_json(op_any).empty());
}

TEST_CASE("an SMPI settings file names, per collective, the winner of most swept points",
          "[io][tuning]") {
  const std::string text = collsim::io::format_smpi_cfg(mpi_sample("smpi"));
  INFO(text);
  std::map<std::string, std::string> settings;
  CHECK(collsim::test::check_smpi_cfg(text, &settings).empty());
  // allreduce: rdb wins 2 + 4 of 12 points, lr 4 + 1, rab_rdb 1; bcast: a tie of 3 and 3, the
  // first wins.
  CHECK(settings ==
        std::map<std::string, std::string>{{"allreduce", "rdb"}, {"bcast", "binomial_tree"}});
  using collsim::test::check_smpi_cfg;
  CHECK(!check_smpi_cfg("--cfg=smpi/allreduce:rabenseifner\n").empty());
  CHECK(!check_smpi_cfg("--cfg=smpi/allreduce:rdb\n--cfg=smpi/allreduce:lr\n").empty());
  CHECK(!check_smpi_cfg("--cfg=smpi/allreduc:rdb\n").empty());
  CHECK(!check_smpi_cfg("# nothing\n").empty());
}

TEST_CASE("an NCCL tuner file has contiguous ranges per rank count, with the protocols swept",
          "[io][tuning]") {
  const std::string text = collsim::io::format_nccl_tuner(nccl_sample());
  INFO(text);
  std::vector<collsim::test::NcclTunerRow> rows;
  CHECK(collsim::test::check_nccl_tuner(text, &rows).empty());
  // 8 ranks: three ranges; 16 ranks: ring/ll throughout is one row; bcast one row.
  REQUIRE(rows.size() == 3 + 1 + 1);
  CHECK((rows[0].algorithm == "tree" && rows[0].protocol == "ll" && rows[0].max_bytes == 32767));
  CHECK((rows[1].algorithm == "ring" && rows[1].protocol == "ll128" && rows[1].min_bytes == 32768));
  CHECK((rows[2].algorithm == "nvls" && rows[2].protocol == "simple" && rows[2].ranks == 8));
  CHECK((rows[3].ranks == 16 && rows[3].min_bytes == 0));
  CHECK((rows[4].collective == "broadcast" && rows[4].protocol == "simple"));
  using collsim::test::check_nccl_tuner;
  CHECK(!check_nccl_tuner("allreduce,0,10,ring,simple,-1,-1,8\nallreduce,12,20,ring,ll,-1,-1,8\n")
             .empty()); // gap
  CHECK(!check_nccl_tuner("allreduce,0,10,ringo,simple,-1,-1,8\n").empty());
  CHECK(!check_nccl_tuner("alltoall,0,10,ring,simple,-1,-1,8\n").empty());
  CHECK(check_nccl_tuner("allreduce,0,65536,tree,simple,2,1,-1,-1,1\n").empty()); // formats.md
}

TEST_CASE("a UCC TUNE string follows formats.md f.1's token grammar", "[io][tuning]") {
  const std::string text = collsim::io::format_ucc_tune(mpi_sample("ucc", false));
  INFO(text);
  CHECK(collsim::test::check_ucc_tune(text).empty());
  CHECK(text.find("UCC_TL_UCP_TUNE=allreduce:0-4096:[1-7]:@knomial#allreduce:4096-inf:[1-7]:"
                  "@ring#") != std::string::npos);
  using collsim::test::check_ucc_tune;
  // formats.md f.1's own examples.
  CHECK(check_ucc_tune("UCC_TL_NCCL_TUNE=allreduce:cuda:inf#alltoall:0\n").empty());
  CHECK(check_ucc_tune("UCC_TL_UCP_TUNE=allreduce:0-4k:@0#allreduce:4k-inf:@1\n").empty());
  CHECK(!check_ucc_tune("UCC_TL_UCP_TUNE=allreduce:0-4k\n").empty());      // no score or alg
  CHECK(!check_ucc_tune("UCC_TL_UCP_TUNE=allreduce:8-4:@ring\n").empty()); // empty range
  CHECK(!check_ucc_tune("UCC_TL_UCP_TUNE=allreduce:[8-4]:@ring\n").empty());
  CHECK(!check_ucc_tune("UCC_TUNE=allreduce:@ring\n").empty());
}

TEST_CASE("library writers refuse winners the library has not", "[io][tuning]") {
  TuneTable t = mpi_sample("smpi");
  t.blocks[0].ranges[0].winner = cand("swing_latency", {});
  CHECK_THROWS_WITH(collsim::io::format_smpi_cfg(t),
                    "allreduce at 4 ranks: the fastest algorithm from 8 B is 'swing_latency', "
                    "which SimGrid SMPI has not (sweep with --candidates smpi)");
  CHECK_THROWS_WITH(collsim::io::format_ucc_tune(mpi_sample("ucc")),
                    "bcast at 8 ranks: the fastest algorithm from 8 B is 'binomial', which UCC "
                    "has not (sweep with --candidates ucc)");
  TuneTable a2a = base("nccl");
  a2a.blocks.push_back({CollectiveKind::alltoall, 8, {range(8, 8, cand("x", {"nccl:ring"}))}});
  CHECK_THROWS_WITH(collsim::io::format_nccl_tuner(a2a),
                    "NCCL's tuner does not choose an algorithm for alltoall (only for allreduce, "
                    "allgather, reduce_scatter, bcast and reduce)");
}
