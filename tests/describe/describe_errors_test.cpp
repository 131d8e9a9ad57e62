// Bad inputs to the node readers: garbage and truncated files get one error at their position
// (file:line:column), never a partial node.

#include "collsim/core/errors.hpp"
#include "collsim/describe/node.hpp"
#include "describe_test_support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using namespace collsim;

std::string data(const std::string& name) {
  return testing::topology_data(name);
}
using testing::text_of;

/// The first `lines` lines of `text`.
std::string head(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos + 1);
  }
  return text.substr(0, pos == std::string::npos ? text.size() : pos + 1);
}

struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& body)
      : path(std::string(COLLSIM_SOURCE_DIR) + "/build/" + name) {
    std::ofstream(path) << body;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path.c_str()); }
};

std::string xml_error(const std::string& body) {
  // ctest runs each test case in a process of its own, at once under -j: one file per process.
  const TempFile f(std::to_string(::getpid()) + "_bad_node.xml", body);
  try {
    (void)describe::read_lstopo_xml(f.path);
  } catch (const core::LogParseError& e) {
    std::string msg = e.what();
    return msg.substr(msg.find("bad_node.xml"));
  }
  return "no error";
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const core::LogParseError& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("lstopo XML: garbage, truncated and empty files", "[describe][errors]") {
  CHECK(xml_error("this is not XML\n") == "bad_node.xml:1:1: error: not hwloc XML: no <topology> "
                                          "element (write it with lstopo --of xml)");
  CHECK(xml_error("") ==
        "bad_node.xml:1:1: error: the file is empty; expected hwloc XML (lstopo --of xml)");
  // The DGX-2 XML cut after its 40th line.
  const std::string cut = head(text_of(data("dgx2.hwloc-test.lstopo.xml")), 40);
  CHECK(xml_error(cut) == "bad_node.xml:41:1: error: the XML ends before </topology> (a truncated "
                          "lstopo --of xml output?)");
  CHECK(error_of([] { (void)describe::read_lstopo_xml("no/such/node.xml"); }) ==
        "no/such/node.xml: error: cannot open the file");
  // One misspelt attribute: hwloc 2.9.0 crashed on it (found by fuzzing); refused at the object.
  std::string misspelt = text_of(data("2s-xeon-x58-mlx4-ib.hwloc-test.lstopo.xml"));
  const std::size_t pu = misspelt.find("<object type=\"PU\" os_index=\"19\"");
  REQUIRE(pu != std::string::npos);
  misspelt.replace(misspelt.find("complete_cpuset", pu), 15, "complete_cnuset");
  CHECK(xml_error(misspelt) == "bad_node.xml:173:15: error: object PU has a cpuset but no "
                               "complete_cpuset (hwloc cannot read it)");
}

TEST_CASE("lstopo XML: a set not in hwloc's syntax is refused at its attribute",
          "[describe][errors]") {
  const std::string real = text_of(data("2s-xeon-x58-mlx4-ib.hwloc-test.lstopo.xml"));
  const std::size_t pu = real.find("<object type=\"PU\" os_index=\"19\"");
  REQUIRE(pu != std::string::npos);
  const std::size_t cpuset = real.find(" cpuset=\"", pu) + 1;
  const std::size_t value = cpuset + 8;
  const std::size_t end = real.find('"', value);
  const auto with_cpuset = [&](const std::string& set) {
    std::string text = real;
    text.replace(value, end - value, set);
    return text;
  };
  // What lstopo writes reads as before: words, an empty middle word, the infinite prefix.
  CHECK(xml_error(with_cpuset("0x00000001,,0x00080000")) == "no error");
  CHECK(xml_error(with_cpuset("0xf...f,0xfff7ffff")) == "no error");
  // A leading comma made hwloc 2.9.0 assert in hwloc_bitmap_sscanf (found by fuzzing).
  CHECK(xml_error(with_cpuset(",x00000001")) ==
        "bad_node.xml:173:47: error: object PU has cpuset=\",x00000001\", which is not an hwloc "
        "set (0x-prefixed hex words separated by commas, as lstopo writes them)");
  CHECK(xml_error(with_cpuset("")) ==
        "bad_node.xml:173:47: error: object PU has cpuset=\"\", which is not an hwloc set "
        "(0x-prefixed hex words separated by commas, as lstopo writes them)");
  CHECK(xml_error(with_cpuset("0x1,zz")).find("cpuset=\"0x1,zz\"") != std::string::npos);
  CHECK(xml_error(with_cpuset("0x123456789")).find("not an hwloc set") != std::string::npos);
  // A long value is cut in the message.
  CHECK(xml_error(with_cpuset(std::string(100, ','))).find(std::string(40, ',') + "...\"") !=
        std::string::npos);
}

TEST_CASE("lstopo XML: a PU or NUMA node without a usable os_index is refused",
          "[describe][errors]") {
  // hwloc numbers such an object 2^32 - 1 and sizes a 512 MB set by it (found by fuzzing: a
  // 27 KB file took 7.5 s).
  const std::string real = text_of(data("2s-xeon-x58-mlx4-ib.hwloc-test.lstopo.xml"));
  const std::string pu = "<object type=\"PU\" os_index=\"19\"";
  REQUIRE(real.find(pu) != std::string::npos);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = real;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  CHECK(xml_error(with(pu, "<object type=\"PU\"")) ==
        "bad_node.xml:173:15: error: object PU has no os_index (lstopo writes one; hwloc would "
        "number it 4294967295 and size its sets by that)");
  CHECK(xml_error(with(pu, "<object type=\"PU\" os_index=\"4294967294\"")) ==
        "bad_node.xml:173:33: error: object PU has os_index=\"4294967294\", not a number below "
        "1048576 (hwloc sizes its sets by it)");
  CHECK(xml_error(with(pu, "<object type=\"PU\" os_index=\"-1\"")).find("os_index=\"-1\"") !=
        std::string::npos);
  const std::string numa = "<object type=\"NUMANode\" os_index=\"0\"";
  REQUIRE(real.find(numa) != std::string::npos);
  CHECK(
      xml_error(with(numa, "<object type=\"NUMANode\"")).find("object NUMANode has no os_index") !=
      std::string::npos);
  // The largest index allowed still reads.
  CHECK(xml_error(with(pu, "<object type=\"PU\" os_index=\"1048575\"")) == "no error");
  // hwloc takes a type by its prefix: "PU_oi" is a PU (found by fuzzing: 1.2 s and 580 MB).
  CHECK(xml_error(with(pu, "<object type=\"PU_oi\" sndex=\"19\"")) ==
        "bad_node.xml:173:15: error: object PU_oi has no os_index (lstopo writes one; hwloc would "
        "number it 4294967295 and size its sets by that)");
}

TEST_CASE("lstopo XML: an NVLink bandwidth of more links than a GPU has is refused",
          "[describe][errors]") {
  // Found by fuzzing: a distance of 7.4e14 links overflowed the link count (undefined behaviour).
  const std::string real = text_of(data("dgx2.hwloc-test.lstopo.xml"));
  const std::string row =
      "<u64values length=\"36\">0 0 0 0 0 0 25000 25000 25000 25000 </u64values>";
  REQUIRE(real.find(row) != std::string::npos);
  std::string text = real;
  text.replace(text.find(row), row.size(),
               "<u64values length=\"41\">0 0 0 0 0 0 2500000000 25000 25000 25000 </u64values>");
  const std::string err = xml_error(text);
  CHECK(err.rfind("bad_node.xml:1:1: error: the NVLinkBandwidth distances give ", 0) == 0);
  CHECK(err.find("NVLinks of 25000 MB/s: more than a GPU has (64 at most)") != std::string::npos);
  CHECK(xml_error(real) == "no error");
}

TEST_CASE("lstopo XML: an OpenFabrics device without a name leaves its NIC known by bus id",
          "[describe][errors]") {
  // hwloc imports an OS device without a name attribute with a null name; the reader built a
  // std::string from it (found by fuzzing: tests/fuzz/regressions/lstopo/osdev-without-name).
  const std::string real = text_of(data("2s-xeon-x58-mlx4-ib.hwloc-test.lstopo.xml"));
  const std::string named = " name=\"mlx4_0\" osdev_type=\"3\"";
  REQUIRE(real.find(named) != std::string::npos);
  std::string text = real;
  text.replace(text.find(named), named.size(), " osdev_type=\"3\"");
  const auto nic_names = [](const std::string& body) {
    const TempFile f(std::to_string(::getpid()) + "_osdev_node.xml", body);
    std::vector<std::string> names;
    for (const auto& nic : describe::read_lstopo_xml(f.path).nics) {
      names.push_back(nic.name + " " + nic.pci_bus);
    }
    return names;
  };
  CHECK(nic_names(real) == std::vector<std::string>{"mlx4_0 0000:05:00.0"});
  CHECK(nic_names(text) == std::vector<std::string>{"0000:05:00.0 0000:05:00.0"});
}

TEST_CASE("nvidia-smi topo -m: garbage, truncated and bad cells", "[describe][errors]") {
  const std::string real = text_of(data("dgx1-v100-4xmlx5.nvidia-smi-topo.txt"));
  CHECK(
      error_of([] { (void)describe::parse_nvidia_smi_topo("hello\nworld\n", "t.txt"); }) ==
      "t.txt:1:1: error: no header line starting with GPU0: not the output of nvidia-smi topo -m");
  // Cut after the row of GPU3: GPU4's row is missing.
  CHECK(error_of([&] { (void)describe::parse_nvidia_smi_topo(head(real, 5), "t.txt"); }) ==
        "t.txt:6:1: error: no row for GPU4 (a truncated nvidia-smi topo -m output?)");
  std::string bad = real;
  bad.replace(bad.find("NV2"), 3, "NVX");
  CHECK(error_of([&] { (void)describe::parse_nvidia_smi_topo(bad, "t.txt"); }) ==
        "t.txt:2:33: error: 'NVX' is not a connection of nvidia-smi topo -m (X, NV#, PIX, PXB, "
        "PHB, NODE, SYS)");
  // A link count past 32 bits (found by fuzzing: std::stoul threw out of the parser).
  std::string huge = real;
  huge.replace(huge.find("NV2"), 3, "NV99999999999999999999");
  CHECK(error_of([&] { (void)describe::parse_nvidia_smi_topo(huge, "t.txt"); }) ==
        "t.txt:2:33: error: 'NV99999999999999999999' is not a connection of nvidia-smi topo -m (X, "
        "NV#, PIX, PXB, PHB, NODE, SYS)");
  std::string short_row = real;
  const std::size_t row = short_row.find("GPU2    NV1");
  short_row.erase(short_row.find('\n', row) - 30, 30);
  CHECK(error_of([&] {
          (void)describe::parse_nvidia_smi_topo(short_row, "t.txt");
        }).find("t.txt:4:") == 0);
}

TEST_CASE("nvidia-smi topo -m: a bad affinity column", "[describe][errors]") {
  std::string bad = text_of(data("dgx-a100-10xmlx5.nvidia-smi-topo.txt"));
  bad.replace(bad.find("48-63,176-191"), 13, "48-63,lots");
  CHECK(error_of([&] { (void)describe::parse_nvidia_smi_topo(bad, "t.txt"); }) ==
        "t.txt:2:93: error: '48-63,lots' in the CPU Affinity column of GPU0 is not a list of ids "
        "like 0-19,40-59");
  // An id past 64 bits is not an id (found by fuzzing: std::stoul threw out of the parser).
  std::string huge = text_of(data("dgx-a100-10xmlx5.nvidia-smi-topo.txt"));
  huge.replace(huge.find("48-63,176-191"), 13, "48-99999999999999999999");
  CHECK(error_of([&] { (void)describe::parse_nvidia_smi_topo(huge, "t.txt"); }) ==
        "t.txt:2:93: error: '48-99999999999999999999' in the CPU Affinity column of GPU0 is not a "
        "list of ids like 0-19,40-59");
  std::string reversed = text_of(data("dgx-a100-10xmlx5.nvidia-smi-topo.txt"));
  reversed.replace(reversed.find("\t3\n"), 3, "\tx3\n");
  CHECK(error_of([&] {
          (void)describe::parse_nvidia_smi_topo(reversed, "t.txt");
        }).find("error: 'x3' in the NUMA Affinity column of GPU0") != std::string::npos);
}

TEST_CASE("ibstat: garbage, truncated and a bad rate", "[describe][errors]") {
  CHECK(error_of([] { (void)describe::parse_ibstat("garbage\n", "i.txt"); }) ==
        "i.txt:1:1: error: expected a line CA 'name': not the output of ibstat");
  CHECK(error_of([] { (void)describe::parse_ibstat("\n\n", "i.txt"); }) ==
        "i.txt:3:1: error: no CA 'name' line: not the output of ibstat");
  CHECK(error_of([] {
          (void)describe::parse_ibstat("CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n", "i.txt");
        }) == "i.txt:4:1: error: port 1 of mlx5_0 has no Rate line (a truncated ibstat output?)");
  CHECK(error_of([] {
          (void)describe::parse_ibstat("CA 'mlx5_0'\n\tPort 1:\n\t\tRate: fast\n", "i.txt");
        }) == "i.txt:3:9: error: Rate 'fast' is not a rate in Gb/s");
  CHECK(error_of([] {
          (void)describe::parse_ibstat("CA 'mlx5_0'\n\tPort 1:\n\t\t%%%\n", "i.txt");
        }) == "i.txt:3:3: error: expected 'key: value' (ibstat output)");
  CHECK(error_of([] {
          (void)describe::parse_ibstat("CA 'mlx5_0'\n\tPort 99999999999:\n", "i.txt");
        }) == "i.txt:2:7: error: port number 99999999999 is out of range");
  // The real published output cut before its Rate line (line 11 of 17).
  const std::string real = text_of(data("connectx6-roce-100g.ibstat.txt"));
  CHECK(error_of([&] { (void)describe::parse_ibstat(head(real, 10), "i.txt"); }) ==
        "i.txt:11:1: error: port 1 of roceP1p1s0f1 has no Rate line (a truncated ibstat output?)");
  std::string bad = real;
  bad.replace(bad.find("Rate: 100"), 9, "Rate: 100x");
  CHECK(error_of([&] { (void)describe::parse_ibstat(bad, "i.txt"); }) ==
        "i.txt:11:15: error: Rate '100x' is not a rate in Gb/s");
}
