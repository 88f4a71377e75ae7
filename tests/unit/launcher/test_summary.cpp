#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "summary.hpp"

using namespace s4bxi::launcher;
using nlohmann::json;

namespace {
bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

json sample(int ranks)
{
    json s = {{"version", 1},        {"status", "ok"},       {"message", ""},       {"world_size", ranks},
              {"makespan", 5.000001}, {"portals_ops", 1234}, {"bytes_moved", 1048576}};
    s["ranks"] = json::array();
    for (int i = 0; i < ranks; ++i)
        s["ranks"].push_back({{"rank", i},
                              {"nid", i},
                              {"node", "node" + std::to_string(i)},
                              {"core", 0},
                              {"end_time", 5.0},
                              {"portals_ops", 617},
                              {"bytes_sent", 2048},
                              {"finished", i != 1}});
    return s;
}
std::string failed_message_first_line()
{
    json s = sample(1);
    s["status"] = "rank-crash";
    s["message"] = "rank 1 died\nbacktrace of rank 1:\n#0 kill";
    std::string text = format_summary(&s, 1);
    return text.find("#0 kill") == std::string::npos ? text : std::string("backtrace printed");
}
}  // namespace

TEST_CASE("durations and sizes for humans", "[summary]")
{
    CHECK(format_seconds(5) == "5 s");
    CHECK(format_seconds(5.000001) == "5.000001 s");
    CHECK(format_seconds(0.0015) == "1.5 ms");
    CHECK(format_seconds(2.5e-6) == "2.5 us");
    CHECK(format_seconds(3e-9) == "3 ns");
    CHECK(format_seconds(0) == "0 s");
    CHECK(format_bytes(512) == "512 B");
    CHECK(format_bytes(1536) == "1.5 KiB");
    CHECK(format_bytes(3.0 * 1024 * 1024) == "3.0 MiB");
}

TEST_CASE("human summary", "[summary]")
{
    json s = sample(2);
    std::string text = format_summary(&s, 1.25);
    CHECK(contains(text, "simulated makespan"));
    CHECK(contains(text, "5.000001 s"));
    CHECK(contains(text, "1.250 s"));
    CHECK(contains(text, "1234"));
    CHECK(contains(text, "1048576 (1.0 MiB)"));
    CHECK(contains(text, "node1"));
    CHECK(contains(text, "unfinished"));
    CHECK(!contains(text, "exit status"));
    CHECK(!contains(text, "mirror"));
    s["portals_local_ops"] = 34;
    CHECK(contains(format_summary(&s, 1.25), "Portals operations  1234 (34 read from the mirror, no round trip)"));
    CHECK(contains(format_summary(&s, 1.25, 3), "exit status         3 (of the program or command)"));
    CHECK(contains(failed_message_first_line(), "rank-crash: rank 1 died"));
    s["host_decisions"] = {{"memory_waits", 0}, {"blocked_outside", 0}, {"lockstep_idles", 0}};
    CHECK_FALSE(contains(format_summary(&s, 1.25), "host decisions"));
    s["host_decisions"]["memory_waits"] = 2;
    s["host_decisions"]["lockstep_idles"] = 7;
    CHECK(contains(format_summary(&s, 1.25),
                   "host decisions      2 memory waits, 0 blocked outside, 7 lockstep idles"));

    json failed = sample(1);
    failed["status"] = "deadlock";
    failed["message"] = "rank 0 waits in PtlEQWait";
    CHECK(contains(format_summary(&failed, 1), "deadlock: rank 0 waits in PtlEQWait"));

    json many = sample(40);
    std::string truncated = format_summary(&many, 1, 0, 32);
    CHECK(contains(truncated, "8 more ranks"));
    CHECK_FALSE(contains(truncated, "node33"));
}

TEST_CASE("summary without server data", "[summary]")
{
    std::string text = format_summary(nullptr, 2);
    CHECK(contains(text, "wrote no summary"));

    json out = launcher_summary(nullptr, 2.5, 139, "");
    CHECK(out["status"] == "error");
    CHECK(out["wall_time"] == 2.5);
    CHECK(out["exit_status"] == 139);
    CHECK_FALSE(out.contains("launcher_error"));

    // Missing or ill-typed fields never throw.
    json odd = {{"status", 3}, {"ranks", {{{"rank", "zero"}}}}};
    CHECK_NOTHROW(format_summary(&odd, 1));
}

TEST_CASE("JSON summary adds the launcher's fields", "[summary]")
{
    json s = sample(2);
    json out = launcher_summary(&s, 3.5, 0, "wall-clock timeout of 3 s exceeded");
    CHECK(out["makespan"] == 5.000001);
    CHECK(out["ranks"].size() == 2);
    CHECK(out["wall_time"] == 3.5);
    CHECK(out["exit_status"] == 0);
    CHECK(out["launcher_error"] == "wall-clock timeout of 3 s exceeded");
}

TEST_CASE("reading the server's summary", "[summary]")
{
    std::string pattern = (std::filesystem::temp_directory_path() / "s4bxi-summary-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    std::filesystem::path dir = pattern;
    std::string error;

    CHECK_FALSE(read_summary((dir / "absent.json").string(), error));
    CHECK(error.empty());

    std::ofstream(dir / "bad.json") << "{not json";
    CHECK_FALSE(read_summary((dir / "bad.json").string(), error));
    CHECK_FALSE(error.empty());

    std::ofstream(dir / "good.json") << sample(1).dump();
    auto good = read_summary((dir / "good.json").string(), error);
    REQUIRE(good);
    CHECK((*good)["world_size"] == 1);
    std::filesystem::remove_all(dir);
}
