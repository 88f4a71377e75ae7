#include <catch2/catch.hpp>

#include "options.hpp"

using namespace s4bxi::launcher;
using Kind = ParseOutcome::Kind;

namespace {
ParseOutcome parse(std::vector<std::string> args, Environment env = {})
{
    return parse_options(args, env);
}
bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("defaults in spawn mode", "[options]")
{
    auto r = parse({"-n", "4", "./app"});
    REQUIRE(r.kind == Kind::Run);
    const Options& o = r.options;
    CHECK(o.spawn_mode());
    CHECK(*o.np == 4);
    CHECK(o.world_size() == 4);
    CHECK(o.ppn == 1);
    CHECK_FALSE(o.platform);
    CHECK(o.cpu_model == CpuModel::Measured);
    CHECK(o.cpu_factor == 1.0);
    CHECK(o.cpu_threshold == 1e-9);
    CHECK(o.timeout == 0.0);
    CHECK(o.deadlock_timeout == 300.0);
    CHECK(o.log_level == LogLevel::Warning);
    CHECK_FALSE(o.summary_file);
    CHECK_FALSE(o.quiet);
    CHECK(o.command == std::vector<std::string>{"./app"});
}

TEST_CASE("command mode with --", "[options]")
{
    auto r = parse({"--ppn", "2", "--", "mpirun", "-np", "4", "./app", "--flag"});
    REQUIRE(r.kind == Kind::Run);
    CHECK_FALSE(r.options.spawn_mode());
    CHECK(r.options.world_size() == 0);
    CHECK(r.options.ppn == 2);
    CHECK(r.options.command == std::vector<std::string>{"mpirun", "-np", "4", "./app", "--flag"});
}

TEST_CASE("the program's own options are not ours", "[options]")
{
    auto r = parse({"-n", "2", "prog", "-n", "5", "--help", "--bogus"});
    REQUIRE(r.kind == Kind::Run);
    CHECK(*r.options.np == 2);
    CHECK(r.options.command == std::vector<std::string>{"prog", "-n", "5", "--help", "--bogus"});

    auto s = parse({"-n", "2", "--", "--weird-program-name"});
    REQUIRE(s.kind == Kind::Run);
    CHECK(s.options.command == std::vector<std::string>{"--weird-program-name"});
}

TEST_CASE("option syntaxes", "[options]")
{
    auto r = parse({"--np=3", "--cpu-model=zero", "--cpu-factor", "2.5", "--cpu-threshold", "0", "--timeout", "60",
                    "--deadlock-timeout=20", "--log-level", "debug", "--summary", "out.json", "--platform", "p.toml", "-q", "--keep-run-dir",
                    "a.out", "x"});
    REQUIRE(r.kind == Kind::Run);
    const Options& o = r.options;
    CHECK(*o.np == 3);
    CHECK(o.cpu_model == CpuModel::Zero);
    CHECK(o.cpu_factor == 2.5);
    CHECK(o.cpu_threshold == 0.0);
    CHECK(o.timeout == 60.0);
    CHECK(o.deadlock_timeout == 20.0);
    CHECK(o.log_level == LogLevel::Debug);
    CHECK(*o.summary_file == "out.json");
    CHECK(*o.platform == "p.toml");
    CHECK(o.quiet);
    CHECK(o.keep_run_dir);
    CHECK(o.command == std::vector<std::string>{"a.out", "x"});
}

TEST_CASE("-n must be a positive integer", "[options]")
{
    for (const char* bad : {"0", "-1", "abc", "1.5", "", "2x", "99999999999"}) {
        INFO("value: " << bad);
        auto r = parse({"-n", bad, "prog"});
        REQUIRE(r.kind == Kind::Error);
        CHECK(contains(r.text, "--np"));
    }
}

TEST_CASE("bad values name the option", "[options]")
{
    struct Case {
        std::vector<std::string> args;
        const char* name;
    };
    std::vector<Case> cases = {
        {{"--ppn", "0", "-n", "1", "p"}, "--ppn"},
        {{"--cpu-factor", "0", "-n", "1", "p"}, "--cpu-factor"},
        {{"--cpu-factor", "-2", "-n", "1", "p"}, "--cpu-factor"},
        {{"--cpu-factor", "nan", "-n", "1", "p"}, "--cpu-factor"},
        {{"--cpu-threshold", "-1e-9", "-n", "1", "p"}, "--cpu-threshold"},
        {{"--timeout", "-5", "-n", "1", "p"}, "--timeout"},
        {{"--timeout", "soon", "-n", "1", "p"}, "--timeout"},
        {{"--deadlock-timeout", "0", "-n", "1", "p"}, "--deadlock-timeout"},
        {{"--cpu-model", "fast", "-n", "1", "p"}, "--cpu-model"},
        {{"--memory-waits", "yes", "-n", "1", "p"}, "--memory-waits"},
        {{"--log-level", "verbose", "-n", "1", "p"}, "--log-level"},
        {{"--service-ranks", "1,x", "-n", "4", "p"}, "--service-ranks"},
        {{"--service-ranks", "3-1", "-n", "4", "p"}, "--service-ranks"},
        {{"--service-ranks", "-1", "-n", "4", "p"}, "--service-ranks"},
        {{"--service-ranks", "1,1", "-n", "4", "p"}, "--service-ranks"},
        {{"--service-ranks", "1,", "-n", "4", "p"}, "--service-ranks"},
        {{"--service-ranks", "4", "-n", "4", "p"}, "--service-ranks"},
        {{"--network-model", "flow@1ms,detailed@0", "-n", "1", "p"}, "--network-model"},
        {{"--network-model-switch", "sometimes", "-n", "1", "p"}, "--network-model-switch"},
        {{"--listen", "", "-n", "1", "p"}, "--listen"},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        auto r = parse(c.args);
        REQUIRE(r.kind == Kind::Error);
        CHECK(contains(r.text, c.name));
    }
}

TEST_CASE("usage errors", "[options]")
{
    auto unknown = parse({"--bogus", "prog"});
    REQUIRE(unknown.kind == Kind::Error);
    CHECK(contains(unknown.text, "--bogus"));

    auto missing_value = parse({"-n"});
    REQUIRE(missing_value.kind == Kind::Error);
    CHECK(contains(missing_value.text, "--np"));

    auto no_program = parse({"-n", "2"});
    REQUIRE(no_program.kind == Kind::Error);
    CHECK(contains(no_program.text, "no program"));

    auto nothing = parse({});
    REQUIRE(nothing.kind == Kind::Error);
    CHECK(contains(nothing.text, "no command"));

    auto only_separator = parse({"--"});
    REQUIRE(only_separator.kind == Kind::Error);
}

TEST_CASE("help and version", "[options]")
{
    auto help = parse({"--help"});
    REQUIRE(help.kind == Kind::Help);
    CHECK(contains(help.text, "Usage: s4bxi-launch"));
    CHECK(contains(help.text, "--cpu-model"));
    CHECK(parse({"-h"}).kind == Kind::Help);

    auto version = parse({"--version"});
    REQUIRE(version.kind == Kind::Version);
    CHECK(version.text == std::string("s4bxi-launch ") + S4BXI_VERSION);
    CHECK(version.text == version_line());
}

TEST_CASE("environment defaults, overridden by options", "[options][env]")
{
    Environment env = {{"S4BXI_PPN", "4"},           {"S4BXI_CPU_MODEL", "zero"}, {"S4BXI_CPU_FACTOR", "0.5"},
                       {"S4BXI_CPU_THRESHOLD", "1e-6"}, {"S4BXI_TIMEOUT", "30"},    {"S4BXI_LOG_LEVEL", "info"},
                       {"S4BXI_PLATFORM", "env.toml"},  {"S4BXI_DEADLOCK_TIMEOUT", "45"}, {"HOME", "/root"}};
    auto r = parse({"-n", "8", "prog"}, env);
    REQUIRE(r.kind == Kind::Run);
    CHECK(r.options.ppn == 4);
    CHECK(r.options.cpu_model == CpuModel::Zero);
    CHECK(r.options.cpu_factor == 0.5);
    CHECK(r.options.cpu_threshold == 1e-6);
    CHECK(r.options.timeout == 30);
    CHECK(r.options.deadlock_timeout == 45);
    CHECK(r.options.log_level == LogLevel::Info);
    CHECK(*r.options.platform == "env.toml");

    auto o = parse({"--ppn", "2", "--cpu-model", "measured", "--cpu-factor", "3", "--timeout", "0", "--log-level",
                    "error", "--platform", "cli.toml", "-n", "8", "prog"},
                   env);
    REQUIRE(o.kind == Kind::Run);
    CHECK(o.options.ppn == 2);
    CHECK(o.options.cpu_model == CpuModel::Measured);
    CHECK(o.options.cpu_factor == 3);
    CHECK(o.options.timeout == 0);
    CHECK(o.options.log_level == LogLevel::Error);
    CHECK(*o.options.platform == "cli.toml");
}

TEST_CASE("Hydra's -ppn and mpirun's -npernode are --ppn; a program's own stay its own", "[options]")
{
    for (const char* spelling : {"-ppn", "-npernode"}) {
        INFO(spelling);
        auto r = parse({"-np", "4", spelling, "2", "./prog", spelling, "3"});
        REQUIRE(r.kind == Kind::Run);
        CHECK(r.options.np == 4);
        CHECK(r.options.ppn == 2);
        CHECK(r.options.command == std::vector<std::string>{"./prog", spelling, "3"});
    }
}

TEST_CASE("unknown S4BXI_ variables are errors naming them", "[options][env]")
{
    auto r = parse({"-n", "1", "prog"}, {{"S4BXI_FOO", "1"}});
    REQUIRE(r.kind == Kind::Error);
    CHECK(contains(r.text, "S4BXI_FOO"));

    // Internal variables are tolerated (nested runs), other prefixes are not ours.
    auto ok = parse({"-n", "1", "prog"}, {{"S4BXI_RANK", "0"},
                                          {"S4BXI_SIZE", "2"},
                                          {"S4BXI_SOCKET", "/x"},
                                          {"S4BXI_RANK_PID", "12"},
                                          {"XS4BXI_FOO", "1"},
                                          {"S4BXIFOO", "1"}});
    CHECK(ok.kind == Kind::Run);

    CHECK(known_env_name("S4BXI_CPU_FACTOR"));
    CHECK_FALSE(known_env_name("S4BXI_cpu_factor"));

    // The variables of the build and test scripts: a user who exports them can still launch.
    for (const char* name : {"S4BXI_CACHE_DIR", "S4BXI_SOS_SOURCE", "S4BXI_OSU_SOURCE", "S4BXI_LULESH_SOURCE",
                             "S4BXI_QUICKSILVER_SOURCE", "S4BXI_CHECK_FULL"}) {
        INFO(name);
        CHECK(parse({"-n", "1", "prog"}, {{name, "/x"}}).kind == Kind::Run);
    }
    CHECK(parse({"-n", "1", "prog"}, {{"S4BXI_SOS_SOURCES", "/x"}}).kind == Kind::Error);
}

TEST_CASE("--memory-waits: auto by default, from the option or S4BXI_MEMORY_WAITS", "[options][env]")
{
    auto d = parse({"-n", "1", "prog"});
    REQUIRE(d.kind == Kind::Run);
    CHECK(d.options.memory_waits == "auto");
    auto e = parse({"-n", "1", "prog"}, {{"S4BXI_MEMORY_WAITS", "on"}});
    REQUIRE(e.kind == Kind::Run);
    CHECK(e.options.memory_waits == "on");
    auto o = parse({"--memory-waits", "off", "-n", "1", "prog"}, {{"S4BXI_MEMORY_WAITS", "on"}});
    REQUIRE(o.kind == Kind::Run);
    CHECK(o.options.memory_waits == "off");
}

TEST_CASE("bad environment values name the variable", "[options][env]")
{
    for (const char* name :
         {"S4BXI_PPN", "S4BXI_CPU_MODEL", "S4BXI_CPU_FACTOR", "S4BXI_MEMORY_WAITS", "S4BXI_TIMEOUT", "S4BXI_LOG_LEVEL"}) {
        INFO(name);
        auto r = parse({"-n", "1", "prog"}, {{name, "garbage"}});
        REQUIRE(r.kind == Kind::Error);
        CHECK(contains(r.text, name));
    }
}

TEST_CASE("strict number parsing", "[options]")
{
    CHECK(parse_integer("42") == 42);
    CHECK(parse_integer("+7") == 7);
    CHECK(parse_integer("-3") == -3);
    CHECK_FALSE(parse_integer(""));
    CHECK_FALSE(parse_integer("4 "));
    CHECK_FALSE(parse_integer("0x10"));
    CHECK(parse_real("1e-9") == 1e-9);
    CHECK(parse_real("2") == 2.0);
    CHECK(parse_real(".5") == 0.5);
    CHECK_FALSE(parse_real("inf"));
    CHECK_FALSE(parse_real("nan"));
    CHECK_FALSE(parse_real("1.0s"));
    CHECK_FALSE(parse_real(""));
}

TEST_CASE("--set is repeatable, checked, and kept in order", "[options][config]")
{
    auto r = parse({"--set", "nic.quick_acks=true", "-n", "2", "--set", "bxi.link_latency=1e-6", "--set=nic.e2e=0",
                    "prog", "--set", "x"});
    REQUIRE(r.kind == Kind::Run);
    CHECK(r.options.sets == std::vector<std::string>{"nic.quick_acks=true", "bxi.link_latency=1e-6", "nic.e2e=0"});
    CHECK(r.options.command == std::vector<std::string>{"prog", "--set", "x"});

    auto bad_value = parse({"--set", "nic.quick_acks=maybe", "-n", "1", "prog"});
    REQUIRE(bad_value.kind == Kind::Error);
    CHECK(contains(bad_value.text, "nic.quick_acks"));
    CHECK(contains(bad_value.text, "maybe"));
    CHECK(contains(bad_value.text, "true, false, TRUE, FALSE, 1 or 0"));

    auto unknown = parse({"--set", "nic.quick_ack=1", "-n", "1", "prog"});
    REQUIRE(unknown.kind == Kind::Error);
    CHECK(contains(unknown.text, "unknown key 'nic.quick_ack'"));

    auto no_equal = parse({"--set", "nic.quick_acks", "-n", "1", "prog"});
    REQUIRE(no_equal.kind == Kind::Error);
    CHECK(contains(no_equal.text, "KEY=VALUE"));

    auto range = parse({"--set", "nic.command_queue_depth=0", "-n", "1", "prog"});
    REQUIRE(range.kind == Kind::Error);
    CHECK(contains(range.text, ">= 1"));

    auto list = parse({"--set", "topology.dimensions=4,4,2", "-n", "1", "prog"});
    CHECK(list.kind == Kind::Run);
    auto bad_list = parse({"--set", "topology.dimensions=4,,2", "-n", "1", "prog"});
    CHECK(bad_list.kind == Kind::Error);
}

TEST_CASE("the model's S4BXI_* knobs are known, checked and forwarded", "[options][config][env]")
{
    for (const char* name : {"S4BXI_QUICK_ACKS", "S4BXI_MODEL_PCI", "S4BXI_MODEL_PCI_COMMANDS", "S4BXI_E2E_OFF",
                             "S4BXI_MAX_RETRIES", "S4BXI_RETRY_TIMEOUT", "S4BXI_MAX_INFLIGHT_TO_TARGET",
                             "S4BXI_MAX_INFLIGHT_TO_PROCESS", "S4BXI_LOG_FOLDER", "S4BXI_LOG_COMPUTATION",
                             "S4BXI_BXI_LINK_LATENCY", "S4BXI_NIC_TIMINGS_EVENT_SIZE"}) {
        INFO(name);
        CHECK(known_env_name(name));
    }
    Environment env = {{"S4BXI_QUICK_ACKS", "TRUE"}, {"S4BXI_MAX_RETRIES", "3"}, {"S4BXI_LOG_FOLDER", "/tmp/t"}};
    auto r = parse({"-n", "1", "--set", "nic.max_retries=4", "--trace", "/tmp/u", "prog"}, env);
    REQUIRE(r.kind == Kind::Run);
    std::vector<std::string> args = config_arguments(r.options);
    // Environment first, then --set, then --trace: the server applies them in this order.
    CHECK(args == std::vector<std::string>{"--env", "S4BXI_LOG_FOLDER=/tmp/t", "--env", "S4BXI_MAX_RETRIES=3", "--env",
                                           "S4BXI_QUICK_ACKS=TRUE", "--set", "nic.max_retries=4", "--trace", "/tmp/u"});

    for (auto [name, value] : std::vector<std::pair<const char*, const char*>>{{"S4BXI_QUICK_ACKS", "yes"},
                                                                              {"S4BXI_E2E_OFF", "True"},
                                                                              {"S4BXI_MAX_RETRIES", "-1"},
                                                                              {"S4BXI_RETRY_TIMEOUT", "10s"},
                                                                              {"S4BXI_MAX_INFLIGHT_TO_TARGET", "1.5"}}) {
        INFO(name);
        auto bad = parse({"-n", "1", "prog"}, {{name, value}});
        REQUIRE(bad.kind == Kind::Error);
        CHECK(contains(bad.text, name));
        CHECK(contains(bad.text, value));
    }
    auto typo = parse({"-n", "1", "prog"}, {{"S4BXI_QUICK_ACK", "1"}});
    REQUIRE(typo.kind == Kind::Error);
    CHECK(contains(typo.text, "unknown environment variable S4BXI_QUICK_ACK"));
}

TEST_CASE("--print-config needs no program and runs none", "[options][config]")
{
    auto r = parse({"--print-config", "--platform", "p.toml", "--set", "nic.e2e=false"});
    REQUIRE(r.kind == Kind::PrintConfig);
    CHECK(r.options.print_config);
    CHECK(*r.options.platform == "p.toml");
    CHECK(r.options.sets == std::vector<std::string>{"nic.e2e=false"});
    auto with_program = parse({"--print-config", "-n", "1", "prog"});
    REQUIRE(with_program.kind == Kind::Error);
    CHECK(contains(with_program.text, "prog"));
    CHECK(contains(help_text(), "--print-config"));
    CHECK(contains(help_text(), "--set KEY=VALUE"));
    CHECK(contains(help_text(), "--trace DIR"));
    auto empty_trace = parse({"--trace", "", "-n", "1", "prog"});
    CHECK(empty_trace.kind == Kind::Error);
}

TEST_CASE("--service-ranks takes ranks and ranges, from the option or S4BXI_SERVICE_RANKS", "[options][env]")
{
    auto r = parse({"--service-ranks", "5,0,2-3", "-n", "8", "prog"});
    REQUIRE(r.kind == Kind::Run);
    CHECK(r.options.service_ranks == std::vector<int>{0, 2, 3, 5});
    CHECK(parse({"-n", "8", "prog"}).options.service_ranks.empty());

    Environment env = {{"S4BXI_SERVICE_RANKS", "1"}};
    CHECK(parse({"-n", "2", "prog"}, env).options.service_ranks == std::vector<int>{1});
    CHECK(parse({"--service-ranks", "0", "-n", "2", "prog"}, env).options.service_ranks == std::vector<int>{0});

    auto too_far = parse({"--service-ranks", "0,6", "-n", "4", "prog"});
    REQUIRE(too_far.kind == Kind::Error);
    CHECK(contains(too_far.text, "'6'"));
    CHECK(contains(too_far.text, "(4)"));
}
