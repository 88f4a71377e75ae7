// The CSV trace writer: the reference's header, number format and 10 000-row files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nic/trace.hpp"

using namespace s4bxi::sim;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name)
{
    fs::path dir = fs::temp_directory_path() / ("s4bxi-trace-test-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir);
    return dir;
}

std::vector<std::string> lines(const fs::path& file)
{
    std::ifstream in(file);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

const char* kHeader = "operation_type,initiator_nid,target_nid,start_time,end_time";

}  // namespace

TEST_CASE("rows follow the reference's number format")
{
    // 9 significant digits, plus one per integer digit of the start time.
    CHECK(trace::format_row(trace::Op::PTL_PUT, 0, 1, 1.23456789012e-6, 2.5e-6) == "3,0,1,1.23456789e-06,2.5e-06");
    CHECK(trace::format_row(trace::Op::E2E_ACK, 4, 2, 0.000255766, 0.001) == "0,4,2,0.000255766,0.001");
    CHECK(trace::format_row(trace::Op::COMPUTE, 3, 3, 12.3456789012345, 13.0000000001) == "14,3,3,12.345678901,13");
    CHECK(trace::format_row(trace::Op::PCI_COMMAND, 7, 7, 0, 2.5576576576e-7) == "13,7,7,0,2.55765766e-07");
    CHECK(trace::format_row(trace::Op::PCI_EVENT, 1, 1, 1234.5, 1234.5000000012345) == "12,1,1,1234.5,1234.500000001");
}

TEST_CASE("operation codes are the reference's")
{
    CHECK(static_cast<int>(trace::Op::E2E_ACK) == 0);
    CHECK(static_cast<int>(trace::Op::PTL_FETCH_ATOMIC_RESPONSE) == 7);
    CHECK(static_cast<int>(trace::Op::PCI_PIO_PAYLOAD) == 8);
    CHECK(static_cast<int>(trace::Op::PCI_COMMAND) == 13);
    CHECK(static_cast<int>(trace::Op::COMPUTE) == 14);
}

TEST_CASE("files of 10 000 rows, each with the header")
{
    fs::path dir = fresh_dir("rotation") / "nested";
    trace::open(dir.string(), true);
    REQUIRE(trace::enabled());
    CHECK(fs::exists(dir / "log_0.csv"));
    for (int i = 0; i < 25000; ++i) trace::record(trace::Op::PTL_GET, 0, 1, i * 1e-6, i * 1e-6 + 5e-7);
    trace::close();
    CHECK_FALSE(trace::enabled());
    CHECK(trace::rows() == 25000);
    auto first = lines(dir / "log_0.csv");
    auto second = lines(dir / "log_1.csv");
    auto third = lines(dir / "log_2.csv");
    CHECK_FALSE(fs::exists(dir / "log_3.csv"));
    REQUIRE(first.size() == 10001);
    REQUIRE(second.size() == 10001);
    REQUIRE(third.size() == 5001);
    CHECK(first[0] == kHeader);
    CHECK(second[0] == kHeader);
    CHECK(third[0] == kHeader);
    CHECK(first[1] == "4,0,1,0,5e-07");
    CHECK(second[1] == trace::format_row(trace::Op::PTL_GET, 0, 1, 10000 * 1e-6, 10000 * 1e-6 + 5e-7));
    CHECK(third.back() == trace::format_row(trace::Op::PTL_GET, 0, 1, 24999 * 1e-6, 24999 * 1e-6 + 5e-7));
    fs::remove_all(dir.parent_path());
}

TEST_CASE("an empty trace still has its header; COMPUTE rows only when asked; off means nothing")
{
    fs::path dir = fresh_dir("compute");
    trace::open(dir.string(), false);
    trace::record(trace::Op::COMPUTE, 0, 0, 1, 2);
    trace::record(trace::Op::PCI_EVENT, 0, 0, 1, 2);
    trace::close();
    CHECK(lines(dir / "log_0.csv") == std::vector<std::string>{kHeader, "12,0,0,1,2"});
    trace::record(trace::Op::PCI_EVENT, 0, 0, 3, 4);  // closed: dropped
    CHECK(lines(dir / "log_0.csv").size() == 2);

    fs::path empty = fresh_dir("empty");
    trace::open(empty.string(), true);
    trace::close();
    CHECK(lines(empty / "log_0.csv") == std::vector<std::string>{kHeader});

    trace::open("/dev/null", true);
    CHECK_FALSE(trace::enabled());
    trace::open("", true);
    CHECK_FALSE(trace::enabled());
    CHECK_THROWS_WITH(trace::open("/proc/no-such-dir/x", true), Catch::Matchers::Contains("/proc/no-such-dir/x"));
    fs::remove_all(dir);
    fs::remove_all(empty);
}
