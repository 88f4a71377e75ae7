#include <catch2/catch.hpp>

#include "platform/platform.hpp"

using namespace s4bxi::sim;
using Catch::Matchers::Contains;

namespace netmodel = s4bxi::netmodel;

TEST_CASE("the built-in platform is 16 nodes of 4 cores with the model's link parameters")
{
    PlatformSpec spec = default_platform();
    CHECK(spec.nodes == 16);
    CHECK(spec.cores_per_node == 4);
    CHECK(spec.pcie_limiter_bandwidth == 11.1e9);
    CHECK(spec.pcie_shared_bandwidth == 15.75e9);
    CHECK(spec.pcie_shared_latency == 250e-9);
    CHECK(spec.bxi_link_bandwidth == 11.1e9);
    CHECK(spec.bxi_link_latency == 500e-9);
    CHECK(spec.command_queue_depth == 16);
}

TEST_CASE("values override the defaults; missing keys keep them")
{
    PlatformSpec spec = parse_platform("[platform]\nnodes = 2\n[bxi]\nlink_latency = 1e-6\n", "two.toml");
    CHECK(spec.nodes == 2);
    CHECK(spec.bxi_link_latency == 1e-6);
    CHECK(spec.cores_per_node == 4);
}

TEST_CASE("bad platform files are errors naming file, key and value")
{
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodez = 2\n", "a.toml"), Contains("a.toml") && Contains("platform.nodez") && Contains("unknown key"));
    CHECK_THROWS_WITH(parse_platform("[netwerk]\n", "b.toml"), Contains("b.toml") && Contains("netwerk") && Contains("unknown section"));
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodes = \"many\"\n", "c.toml"), Contains("platform.nodes") && Contains("many"));
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodes = 0\n", "d.toml"), Contains("platform.nodes") && Contains("0"));
    CHECK_THROWS_WITH(parse_platform("[bxi]\nlink_bandwidth = -1.0\n", "e.toml"), Contains("bxi.link_bandwidth") && Contains("-1"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"ring\"\n", "f.toml"), Contains("platform.topology") && Contains("ring"));
    CHECK_THROWS_WITH(parse_platform("[nic]\ne2e = 1\n", "g.toml"), Contains("nic.e2e") && Contains("true or false"));
    CHECK_THROWS_WITH(parse_platform("[platform\n", "h.toml"), Contains("h.toml:1"));
}

// ---------------------------------------------------------------------------------------
// Every knob of the model in the platform file, the overrides and their precedence.

#include <fmt/format.h>

#include <cctype>
#include <fstream>

#include "platform/config_override.hpp"
#include "s4bxi/config_keys.hpp"

namespace config = s4bxi::config;

namespace {
Overrides with(std::vector<std::pair<std::string, std::string>> env, std::vector<std::string> sets = {},
               std::string trace = {})
{
    Overrides o;
    o.env = std::move(env);
    o.sets = std::move(sets);
    o.trace_folder = std::move(trace);
    return o;
}
}  // namespace

TEST_CASE("the built-in platform file holds exactly the code's defaults")
{
    PlatformSpec code;  // the struct's initializers
    PlatformSpec file = default_platform();
    for (const config::Key& key : config::kKeys) {
        INFO(key.key);
        CHECK(format_config(code).find(std::string(key.key)) != std::string::npos);
        CHECK(file.origins.at(std::string(key.key)) == "default");
    }
    code.source = file.source;
    code.origins = file.origins;
    CHECK(format_config(code) == format_config(file));
}

TEST_CASE("every key of the table names a field of its type")
{
    PlatformSpec spec;
    for (const config::Key& key : config::kKeys) {
        INFO(key.key);
        CHECK_FALSE(std::holds_alternative<std::monostate>(field_of(spec, key.key)));
        if (!key.env.empty()) {
            CHECK(key.env.substr(0, 6) == "S4BXI_");
            CHECK(config::find_env(key.env) == &key);
        }
    }
}

TEST_CASE("NIC knobs and timings are read from [nic] and [nic.timings]")
{
    PlatformSpec spec = parse_platform(R"(
[nic]
command_queue_depth = 89
e2e = false
model_pci = true
model_pci_commands = false
max_retries = 3
retry_timeout = 0.5
e2e_entries = 1024
max_inflight_to_target = 7
max_inflight_to_process = 9
quick_acks = true
[nic.timings]
pci_latency_heuristic = 1e-7
pci_heuristic_bandwidth = 8e9
packet_size = 256
send_preparation = 3e-9
tx_after_put_no_dma = 1e-7
tx_after_ptl_ack = 1.5e-7
tx_after_get = 2e-7
tx_after_response_no_dma = 2.5e-7
cpu_after_pio = 1e-7
command_size = 32
dma_request_size = 48
event_size = 64
ack_size = 16
get_request_size = 40
inline_matching = 4
inline_non_matching = 12
pio_matching = 200
pio_non_matching = 208
e2e_context_size = 128
)",
                                       "knobs.toml");
    CHECK(spec.command_queue_depth == 89);
    CHECK_FALSE(spec.e2e);
    CHECK_FALSE(spec.model_pci_commands);
    CHECK(spec.max_retries == 3);
    CHECK(spec.retry_timeout == 0.5);
    CHECK(spec.e2e_entries == 1024);
    CHECK(spec.max_inflight_to_target == 7);
    CHECK(spec.max_inflight_to_process == 9);
    CHECK(spec.quick_acks);
    const NicTimings& t = spec.timings;
    CHECK(t.pci_latency_heuristic == 1e-7);
    CHECK(t.pci_heuristic_bandwidth == 8e9);
    CHECK(t.packet_size == 256);
    CHECK(t.send_preparation == 3e-9);
    CHECK(t.tx_after_put_no_dma == 1e-7);
    CHECK(t.tx_after_ptl_ack == 1.5e-7);
    CHECK(t.tx_after_get == 2e-7);
    CHECK(t.tx_after_response_no_dma == 2.5e-7);
    CHECK(t.cpu_after_pio == 1e-7);
    CHECK(t.command_size == 32);
    CHECK(t.dma_request_size == 48);
    CHECK(t.event_size == 64);
    CHECK(t.ack_size == 16);
    CHECK(t.get_request_size == 40);
    CHECK(t.inline_matching == 4);
    CHECK(t.inline_non_matching == 12);
    CHECK(t.pio_matching == 200);
    CHECK(t.pio_non_matching == 208);
    CHECK(t.e2e_context_size == 128);
    CHECK(spec.origins.at("nic.timings.event_size") == "platform file knobs.toml:25");
    CHECK(spec.origins.at("platform.nodes") == "default");
}

TEST_CASE("NI limits: the reference's defaults and caps, one key and one variable each")
{
    PlatformSpec spec = default_platform();
    const NiLimits& d = spec.ni_limits;
    const NiLimits& c = spec.ni_limit_caps;
    CHECK((d.max_entries == 4080 && c.max_entries == 16319));
    CHECK((d.max_unexpected_headers == 16319 && c.max_unexpected_headers == 16319));
    CHECK((d.max_mds == 1024 && c.max_mds == 8191));
    CHECK((d.max_cts == 1024 && c.max_cts == 2047));
    CHECK((d.max_eqs == 960 && c.max_eqs == 2046));
    CHECK((d.max_pt_index == 255 && c.max_pt_index == 255));
    CHECK((d.max_iovecs == 1048576 && c.max_iovecs == 1048576));
    CHECK((d.max_list_size == 16582 && c.max_list_size == 65535));
    CHECK((d.max_triggered_ops == 16378 && c.max_triggered_ops == 16378));
    CHECK((d.max_msg_size == 67108864 && c.max_msg_size == 67108864));
    CHECK((d.max_atomic_size == 1024 && c.max_atomic_size == 1024));
    CHECK((d.max_fetch_atomic_size == 64 && c.max_fetch_atomic_size == 64));
    CHECK((d.max_waw_ordered_size == 64 && c.max_waw_ordered_size == 64));
    CHECK((d.max_war_ordered_size == 64 && c.max_war_ordered_size == 64));
    CHECK((d.max_volatile_size == 64 && c.max_volatile_size == 64));
    int limits = 0;
    for_each_ni_limit(
        [&](std::string_view name, auto&) {
            ++limits;
            const config::Key* keys[2] = {};
            for (int i = 0; i < 2; ++i) {
                std::string key = std::string(i == 0 ? "nic.limits." : "nic.limit_caps.") + std::string(name);
                INFO(key);
                keys[i] = config::find_key(key);
                REQUIRE(keys[i]);
                std::string env = key;
                for (char& ch : env) ch = ch == '.' ? '_' : static_cast<char>(std::toupper(ch));
                CHECK(keys[i]->env == "S4BXI_" + env);
            }
            // A default and its cap take the same values.
            INFO(name);
            CHECK(keys[0]->type == keys[1]->type);
            CHECK(keys[0]->min == keys[1]->min);
            CHECK(keys[0]->max == keys[1]->max);
            CHECK(keys[0]->range_reason == keys[1]->range_reason);
        },
        spec.ni_limits);
    CHECK(limits == 15);
}

TEST_CASE("NI limits are read from [nic.limits] and [nic.limit_caps] and overridden like any key")
{
    PlatformSpec spec = parse_platform("[nic.limits]\nmax_entries = 100\nmax_pt_index = 31\nmax_msg_size = 4096\n"
                                       "max_iovecs = 100\n[nic.limit_caps]\nmax_entries = 200\nmax_iovecs = 20000\n",
                                       "limits.toml");
    CHECK(spec.ni_limits.max_entries == 100);
    CHECK(spec.ni_limits.max_pt_index == 31);
    CHECK(spec.ni_limits.max_msg_size == 4096);
    CHECK(spec.ni_limit_caps.max_entries == 200);
    CHECK(spec.ni_limit_caps.max_iovecs == 20000);
    CHECK(spec.ni_limit_caps.max_mds == 8191);
    CHECK(spec.origins.at("nic.limit_caps.max_iovecs") == "platform file limits.toml:8");
    apply_overrides(spec, with({{"S4BXI_NIC_LIMITS_MAX_CTS", "5"}}, {"nic.limit_caps.max_msg_size=8192"}));
    CHECK(spec.ni_limits.max_cts == 5);
    CHECK(spec.ni_limit_caps.max_msg_size == 8192);
    std::string printed = format_config(spec);
    CHECK_THAT(printed, Contains("nic.limits.max_cts = 5") && Contains("# environment S4BXI_NIC_LIMITS_MAX_CTS"));
    CHECK_THAT(printed, Contains("nic.limit_caps.max_msg_size = 8192") && Contains("nic.limits.max_eqs = 960"));
    PlatformSpec again = parse_platform(printed, "again.toml");
    CHECK(again.ni_limits.max_pt_index == 31);
    CHECK(again.ni_limit_caps.max_msg_size == 8192);
}

TEST_CASE("impossible NI limits are errors naming file, key and value")
{
    // A default above its cap names both keys, both values and where they come from.
    CHECK_THROWS_WITH(parse_platform("[nic.limits]\nmax_mds = 9000\n", "a.toml"),
                      Contains("a.toml") && Contains("nic.limits.max_mds = 9000") &&
                          Contains("nic.limit_caps.max_mds = 8191") && Contains("platform file a.toml:2"));
    CHECK_THROWS_WITH(parse_platform("[nic.limit_caps]\nmax_entries = 100\n", "b.toml"),
                      Contains("nic.limits.max_entries = 4080") && Contains("nic.limit_caps.max_entries = 100") &&
                          Contains("b.toml:2"));
    PlatformSpec spec = default_platform();
    CHECK_THROWS_WITH(apply_overrides(spec, with({}, {"nic.limits.max_list_size=70000"})),
                      Contains("nic.limits.max_list_size = 70000") && Contains("--set"));
    // What Open MPI cannot work with.
    CHECK_THROWS_WITH(parse_platform("[nic.limits]\nmax_pt_index = 8\n", "c.toml"),
                      Contains("c.toml:2") && Contains("nic.limits.max_pt_index") && Contains("8") &&
                          Contains(">= 16 and <= 255") && Contains("Open MPI"));
    CHECK_THROWS_WITH(parse_platform("[nic.limit_caps]\nmax_pt_index = 256\n", "d.toml"), Contains("<= 255"));
    for (const char* key : {"max_msg_size", "max_atomic_size", "max_fetch_atomic_size", "max_waw_ordered_size",
                            "max_war_ordered_size"})
        for (const char* table : {"limits", "limit_caps"}) {
            INFO(table << "." << key);
            CHECK_THROWS_WITH(parse_platform(fmt::format("[nic.{}]\n{} = 0\n", table, key), "e.toml"),
                              Contains(fmt::format("nic.{}.{}", table, key)) && Contains(">= 1") && Contains("Open MPI"));
        }
    CHECK_THROWS_WITH(apply_overrides(spec, with({{"S4BXI_NIC_LIMIT_CAPS_MAX_PT_INDEX", "8"}})),
                      Contains("S4BXI_NIC_LIMIT_CAPS_MAX_PT_INDEX") && Contains("Open MPI"));
    CHECK_THROWS_WITH(parse_platform("[nic.limits]\nmax_iovecs = 2000000\n", "f.toml"), Contains("1048576"));
    CHECK_THROWS_WITH(parse_platform("[nic.limits]\nmax_eqs = 3000000000\n", "g.toml"), Contains("2147483647"));
}

TEST_CASE("knob errors name file, line, key and value")
{
    CHECK_THROWS_WITH(parse_platform("[nic]\nmax_retries = -2\n", "a.toml"),
                      Contains("a.toml:2") && Contains("nic.max_retries") && Contains("-2"));
    CHECK_THROWS_WITH(parse_platform("[nic.timings]\nevent_size = 9.5\n", "b.toml"),
                      Contains("nic.timings.event_size") && Contains("9.5") && Contains("integer"));
    CHECK_THROWS_WITH(parse_platform("[nic.timings]\nevent_sise = 96\n", "c.toml"),
                      Contains("nic.timings.event_sise") && Contains("unknown key"));
    CHECK_THROWS_WITH(parse_platform("[nic]\nretry_timeout = 0\n", "d.toml"),
                      Contains("nic.retry_timeout") && Contains("> 0"));
    CHECK_THROWS_WITH(parse_platform("[nic]\ntimings = 3\n", "e.toml"), Contains("nic.timings") && Contains("table"));
    CHECK_THROWS_WITH(parse_platform("[nic]\nquick_acks = \"yes\"\n", "f.toml"),
                      Contains("nic.quick_acks") && Contains("yes") && Contains("true or false"));
    CHECK_THROWS_WITH(parse_platform("[trace]\nfolder = 3\n", "g.toml"), Contains("trace.folder") && Contains("string"));
}

TEST_CASE("model_pci = false forces model_pci_commands off, as in the reference")
{
    PlatformSpec spec = parse_platform("[nic]\nmodel_pci = false\n", "p.toml");
    CHECK_FALSE(spec.model_pci_commands);
    CHECK_THAT(spec.origins.at("nic.model_pci_commands"), Contains("forced off"));
    PlatformSpec other = default_platform();
    apply_overrides(other, with({{"S4BXI_MODEL_PCI", "0"}}));
    CHECK_FALSE(other.model_pci_commands);
}

TEST_CASE("the flow model turns off what it has not, and says where it came from")
{
    PlatformSpec spec = parse_platform("[network]\nmodel = \"flow\"\n[nic]\ne2e = true\nquick_acks = true\n", "f.toml");
    CHECK(spec.flow());
    CHECK_FALSE(spec.e2e);
    CHECK_FALSE(spec.model_pci);
    CHECK_FALSE(spec.model_pci_commands);
    CHECK_FALSE(spec.quick_acks);
    CHECK_THAT(spec.origins.at("nic.e2e"), Contains("derived: off in the flow model") && Contains("f.toml"));
    // The detailed model keeps them, and finalizing again changes nothing.
    PlatformSpec detailed = parse_platform("[nic]\nquick_acks = true\n", "d.toml");
    CHECK_FALSE(detailed.flow());
    CHECK(detailed.e2e);
    CHECK(detailed.quick_acks);
    finalize_platform(spec);
    CHECK_FALSE(spec.e2e);
    CHECK_THAT(spec.origins.at("nic.e2e"), Contains("f.toml"));
}

TEST_CASE("a network model is detailed, flow, or a schedule of both at dates")
{
    CHECK_THROWS_WITH(parse_platform("[network]\nmodel = \"fast\"\n", "m.toml"),
                      Contains("m.toml") && Contains("network.model") && Contains("'fast' is not a network model"));
    PlatformSpec spec = parse_platform("[network]\nmodel = \"flow@0,detailed@1.5ms,flow@20ms\"\n", "s.toml");
    REQUIRE(spec.network_phases.size() == 3);
    CHECK(spec.network_phases[0].model == netmodel::Model::Flow);
    CHECK(spec.network_phases[0].from == 0.0);
    CHECK(spec.network_phases[1].model == netmodel::Model::Detailed);
    CHECK(spec.network_phases[1].from == 1.5e-3);
    CHECK(spec.network_phases[2].from == 20e-3);
    // A run that switches keeps the detailed model's switches for its detailed transfers.
    CHECK(spec.switches_models());
    CHECK_FALSE(spec.flow());
    CHECK(spec.e2e);
    CHECK(spec.model_pci);
    PlatformSpec env = default_platform();
    CHECK_THROWS_WITH(apply_overrides(env, with({{"S4BXI_NETWORK_MODEL", "flow@2ms,detailed@1ms"}})),
                      Contains("the dates must increase") && Contains("S4BXI_NETWORK_MODEL"));
    CHECK_THROWS_WITH(parse_platform("[network]\nmodel = \"flow@0,detailed@1ms\"\nswitch = \"pcontrol\"\n", "p.toml"),
                      Contains("p.toml") && Contains("network.switch") && Contains("pcontrol switches models"));
    CHECK_THROWS_WITH(parse_platform("[network]\nswitch = \"sometimes\"\n", "w.toml"),
                      Contains("network.switch") && Contains("dates,pcontrol"));
}

TEST_CASE("under network.switch = pcontrol the run starts in network.model and keeps the detailed switches")
{
    PlatformSpec spec = parse_platform("[network]\nmodel = \"flow\"\nswitch = \"pcontrol\"\n", "p.toml");
    CHECK(spec.switches_models());
    CHECK_FALSE(spec.flow());
    CHECK(spec.network_phases.front().model == netmodel::Model::Flow);
    CHECK(spec.e2e);
}

TEST_CASE("network model schedules: dates with units, models in turn, the model at a date")
{
    using netmodel::Model;
    CHECK(netmodel::parse_date("1.5ms") == 1.5e-3);
    CHECK(netmodel::parse_date("20us") == 20e-6);
    CHECK(netmodel::parse_date("300ns") == 300e-9);
    CHECK(netmodel::parse_date("2s") == 2.0);
    CHECK(netmodel::parse_date("0.002") == 0.002);
    CHECK_FALSE(netmodel::parse_date("ms").has_value());
    CHECK_FALSE(netmodel::parse_date("-1ms").has_value());
    CHECK_FALSE(netmodel::parse_date("1 ms").has_value());
    auto schedule = netmodel::parse_schedule("flow@1ms,detailed@2ms");
    REQUIRE(schedule.problem.empty());
    REQUIRE(schedule.phases.size() == 3);  // detailed until the first date
    CHECK(schedule.phases[0].model == Model::Detailed);
    CHECK(netmodel::model_at(schedule.phases, 0.5e-3) == Model::Detailed);
    CHECK(netmodel::model_at(schedule.phases, 1e-3) == Model::Flow);  // a phase's own date is its
    CHECK(netmodel::model_at(schedule.phases, 1.999e-3) == Model::Flow);
    CHECK(netmodel::model_at(schedule.phases, 5.0) == Model::Detailed);
    CHECK_THAT(netmodel::parse_schedule("flow@0,flow@1ms").problem, Contains("already flow"));
    CHECK_THAT(netmodel::parse_schedule("flow@0,detailed").problem, Contains("want MODEL@DATE"));
    CHECK_THAT(netmodel::parse_schedule("flow@0,fast@1ms").problem, Contains("'fast'"));
    CHECK_THAT(netmodel::parse_schedule("flow@0,detailed@1ms,").problem, Contains("want MODEL@DATE"));
    CHECK(netmodel::parse_schedule("detailed").phases.size() == 1);
}

TEST_CASE("precedence: --set over environment over platform file over default")
{
    PlatformSpec spec = parse_platform("[nic]\nmax_retries = 3\nquick_acks = false\n[bxi]\nlink_latency = 1e-6\n", "f.toml");
    apply_overrides(spec, with({{"S4BXI_MAX_RETRIES", "7"}, {"S4BXI_QUICK_ACKS", "TRUE"}},
                               {"nic.quick_acks=false", "bxi.link_bandwidth=5e9", "nic.quick_acks=1"}, "/tmp/tr"));
    CHECK(spec.max_retries == 7);
    CHECK(spec.origins.at("nic.max_retries") == "environment S4BXI_MAX_RETRIES");
    CHECK(spec.quick_acks);  // the last --set wins
    CHECK(spec.origins.at("nic.quick_acks") == "--set");
    CHECK(spec.bxi_link_bandwidth == 5e9);
    CHECK(spec.origins.at("bxi.link_bandwidth") == "--set");
    CHECK(spec.bxi_link_latency == 1e-6);
    CHECK(spec.origins.at("bxi.link_latency") == "platform file f.toml:5");
    CHECK(spec.command_queue_depth == 16);
    CHECK(spec.origins.at("nic.command_queue_depth") == "default");
    CHECK(spec.trace_folder == "/tmp/tr");
    CHECK(spec.origins.at("trace.folder") == "--trace");

    std::string printed = format_config(spec);
    CHECK_THAT(printed, Contains("nic.max_retries = 7") && Contains("# environment S4BXI_MAX_RETRIES"));
    CHECK_THAT(printed, Contains("bxi.link_latency = 1e-06") && Contains("# platform file f.toml:5"));
    CHECK_THAT(printed, Contains("nic.quick_acks = true") && Contains("# --set"));
    CHECK_THAT(printed, Contains("nic.command_queue_depth = 16") && Contains("# default"));
}

TEST_CASE("environment booleans: only TRUE/true/1 are true; S4BXI_E2E_OFF is inverted; junk is an error")
{
    for (const char* yes : {"TRUE", "true", "1"}) {
        PlatformSpec spec = default_platform();
        apply_overrides(spec, with({{"S4BXI_QUICK_ACKS", yes}, {"S4BXI_E2E_OFF", yes}}));
        CHECK(spec.quick_acks);
        CHECK_FALSE(spec.e2e);
    }
    for (const char* no : {"FALSE", "false", "0"}) {
        PlatformSpec spec = default_platform();
        apply_overrides(spec, with({{"S4BXI_QUICK_ACKS", no}, {"S4BXI_E2E_OFF", no}}));
        CHECK_FALSE(spec.quick_acks);
        CHECK(spec.e2e);
    }
    for (const char* junk : {"yes", "True", "", "2", "on"}) {
        PlatformSpec spec = default_platform();
        CHECK_THROWS_WITH(apply_overrides(spec, with({{"S4BXI_QUICK_ACKS", junk}})),
                          Contains("S4BXI_QUICK_ACKS") && Contains("true, false, TRUE, FALSE, 1 or 0"));
    }
}

TEST_CASE("bad overrides are errors naming the variable or the --set, the key and the value")
{
    PlatformSpec spec = default_platform();
    CHECK_THROWS_WITH(apply_overrides(spec, with({{"S4BXI_RETRY_TIMEOUT", "soon"}})),
                      Contains("S4BXI_RETRY_TIMEOUT") && Contains("soon") && Contains("number"));
    CHECK_THROWS_WITH(apply_overrides(spec, with({{"S4BXI_MAX_INFLIGHT_TO_TARGET", "-1"}})),
                      Contains("S4BXI_MAX_INFLIGHT_TO_TARGET") && Contains("-1"));
    CHECK_THROWS_WITH(apply_overrides(spec, with({}, {"nic.bogus=1"})), Contains("nic.bogus") && Contains("unknown key"));
    CHECK_THROWS_WITH(apply_overrides(spec, with({}, {"nic.quick_acks"})), Contains("KEY=VALUE"));
    CHECK_THROWS_WITH(apply_overrides(spec, with({}, {"bxi.link_bandwidth=0"})),
                      Contains("bxi.link_bandwidth") && Contains("'0'") && Contains("> 0"));
    CHECK_THROWS_WITH(apply_overrides(spec, with({}, {"platform.topology=ring"})),
                      Contains("platform.topology") && Contains("ring") && Contains("fat_tree"));
    CHECK_THROWS_WITH(apply_overrides(spec, with({}, {"nic.timings.packet_size=0"})), Contains("packet_size"));
    // Checks across keys run after the overrides and say where each value comes from.
    CHECK_THROWS_WITH(apply_overrides(spec, with({}, {"platform.nids=1,2"})),
                      Contains("platform.nids") && Contains("2 NIDs for 16 nodes") && Contains("--set"));
}

TEST_CASE("the print-out of the configuration reads back as the same platform")
{
    PlatformSpec spec = parse_platform("[platform]\nnodes = 3\nnids = [10, 20, 30]\n[nic]\nquick_acks = true\n"
                                       "[[failure]]\nlink = \"node20_BXI\"\noff = 1e-3\non = 2e-3\n",
                                       "r.toml");
    apply_overrides(spec, with({{"S4BXI_BXI_LINK_LATENCY", "7e-7"}}, {"nic.timings.ack_size=40"}));
    PlatformSpec again = parse_platform(format_config(spec), "again.toml");
    CHECK(again.nids == std::vector<uint32_t>{10, 20, 30});
    CHECK(again.quick_acks);
    CHECK(again.bxi_link_latency == 7e-7);
    CHECK(again.timings.ack_size == 40);
    REQUIRE(again.failures.size() == 1);
    CHECK(again.failures[0].link == "node20_BXI");
    CHECK(again.failures[0].on == 2e-3);
}

TEST_CASE("topologies: parameters, node counts and their errors")
{
    PlatformSpec tree = parse_platform("[platform]\ntopology = \"fat_tree\"\n[topology]\nparameters = \"2;4,4;1,2;1,2\"\n", "t.toml");
    CHECK(tree.nodes == 16);
    CHECK_THAT(tree.origins.at("platform.nodes"), Contains("derived from topology.parameters"));
    CHECK(tree.switch_link_bandwidth() == tree.bxi_link_bandwidth);
    CHECK(tree.switch_link_latency() == tree.bxi_link_latency);
    PlatformSpec fly = parse_platform("[platform]\ntopology = \"dragonfly\"\n[topology]\nparameters = \"3,1;2,1;3,1;2\"\n"
                                      "link_bandwidth = 2e10\nlink_latency = 1e-7\n",
                                      "d.toml");
    CHECK(fly.nodes == 36);
    CHECK(fly.switch_link_bandwidth() == 2e10);
    CHECK(fly.switch_link_latency() == 1e-7);
    PlatformSpec torus = parse_platform("[platform]\ntopology = \"torus\"\nnodes = 12\n[topology]\ndimensions = [3, 4]\n", "o.toml");
    CHECK(torus.nodes == 12);

    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"fat_tree\"\n", "x.toml"), Contains("needs topology.parameters"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"fat_tree\"\n[topology]\nparameters = \"2;4,4;1;1,2\"\n", "x.toml"),
                      Contains("topology.parameters") && Contains("2;4,4;1;1,2") && Contains("1 values for 2 levels"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"fat_tree\"\nnodes = 8\n[topology]\nparameters = \"1;4;1;1\"\n", "x.toml"),
                      Contains("platform.nodes = 8") && Contains("4 nodes"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"dragonfly\"\n[topology]\nparameters = \"3,1;2,1;2;2\"\n", "x.toml"),
                      Contains("'2' must be two integers"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"dragonfly\"\n[topology]\nparameters = \"3,1;2,1;2,1;2\"\n", "x.toml"),
                      Contains("3 groups need at least 3 routers per chassis"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"torus\"\n", "x.toml"), Contains("topology.dimensions"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"torus\"\n[topology]\ndimensions = [3, 0]\n", "x.toml"),
                      Contains("topology.dimensions") && Contains("0"));
    CHECK_THROWS_WITH(parse_platform("[topology]\nlink_latency = 1e-6\n", "x.toml"),
                      Contains("topology.link_latency") && Contains("no switch-to-switch links") && Contains("x.toml:2"));
    CHECK_THROWS_WITH(parse_platform("[topology]\nparameters = \"1;2;1;1\"\n", "x.toml"), Contains("not used by topology 'switch'"));
    CHECK_THROWS_WITH(parse_platform("[platform]\nplugin = \"x.so\"\ntopology = \"torus\"\n", "x.toml"), Contains("plugin"));
}

TEST_CASE("NIDs and failures are checked against the nodes")
{
    PlatformSpec spec = parse_platform("[platform]\nnodes = 2\nnids = [42, 7]\n", "n.toml");
    CHECK(spec.nid_of(0) == 42);
    CHECK(spec.nid_of(1) == 7);
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodes = 2\nnids = [4, 4]\n", "n.toml"), Contains("different"));
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodes = 2\nnids = [4]\n", "n.toml"), Contains("1 NIDs for 2 nodes"));

    PlatformSpec failing = parse_platform("[platform]\nnodes = 4\n[[failure]]\nlink = \"node3_BXI\"\noff = 1e-3\non = 2e-3\n"
                                          "[[failure]]\nlink = \"node3_BXI\"\noff = 5e-3\n[[failure]]\nlink = \"node0_PCI\"\noff = 0\non = 1\n",
                                          "f.toml");
    REQUIRE(failing.failures.size() == 3);
    CHECK(failing.failures[1].on < 0);
    CHECK_THAT(failing.failures[0].origin, Contains("f.toml:3"));
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodes = 4\n[[failure]]\nlink = \"node4_BXI\"\noff = 1\n", "f.toml"),
                      Contains("node4_BXI") && Contains("unknown link"));
    CHECK_THROWS_WITH(parse_platform("[[failure]]\nlink = \"node1_BXI\"\noff = 2\non = 1\n", "f.toml"), Contains("after off"));
    CHECK_THROWS_WITH(parse_platform("[[failure]]\nlink = \"node1_BXI\"\n", "f.toml"), Contains("failure[0].off") && Contains("missing"));
    CHECK_THROWS_WITH(parse_platform("[[failure]]\nlink = \"node1_BXI\"\noff = 1\nwhen = 2\n", "f.toml"),
                      Contains("failure[0].when") && Contains("unknown key"));
    CHECK_THROWS_WITH(parse_platform("[[failure]]\nlink = \"node1_BXI\"\noff = 1\non = 3\n[[failure]]\nlink = \"node1_BXI\"\noff = 2\n", "f.toml"),
                      Contains("overlap"));
    CHECK_THROWS_WITH(parse_platform("failure = 3\n", "f.toml"), Contains("array of tables"));
}

TEST_CASE("the shipped platform files are valid")
{
    for (const char* name : {"default", "quito", "fat_tree_64", "dragonfly_example", "torus_example"}) {
        INFO(name);
        std::string path = std::string(S4BXI_SOURCE_ROOT "/platforms/") + name + ".toml";
        CHECK_NOTHROW(load_platform_file(path));
    }
    PlatformSpec quito = load_platform_file(S4BXI_SOURCE_ROOT "/platforms/quito.toml");
    CHECK(quito.nodes == 2);
    CHECK(quito.pcie_limiter_bandwidth == 11.1e9);
    CHECK(quito.pcie_limiter_latency == 0);
    CHECK(quito.pcie_shared_bandwidth == 15.75e9);
    CHECK(quito.pcie_shared_latency == 250e-9);
    CHECK(quito.bxi_link_bandwidth == 11.1e9);
    CHECK(quito.bxi_link_latency == 500e-9);
    CHECK(load_platform_file(S4BXI_SOURCE_ROOT "/platforms/fat_tree_64.toml").nodes == 64);
}
