#include <catch2/catch.hpp>

#include "platform.hpp"

using namespace s4bxi::sim;
using Catch::Matchers::Contains;

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
    CHECK_THROWS_WITH(parse_platform("[network]\n", "b.toml"), Contains("b.toml") && Contains("network") && Contains("unknown section"));
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodes = \"many\"\n", "c.toml"), Contains("platform.nodes") && Contains("many"));
    CHECK_THROWS_WITH(parse_platform("[platform]\nnodes = 0\n", "d.toml"), Contains("platform.nodes") && Contains("0"));
    CHECK_THROWS_WITH(parse_platform("[bxi]\nlink_bandwidth = -1.0\n", "e.toml"), Contains("bxi.link_bandwidth") && Contains("-1"));
    CHECK_THROWS_WITH(parse_platform("[platform]\ntopology = \"ring\"\n", "f.toml"), Contains("platform.topology") && Contains("ring"));
    CHECK_THROWS_WITH(parse_platform("[nic]\ne2e = 1\n", "g.toml"), Contains("nic.e2e") && Contains("true or false"));
    CHECK_THROWS_WITH(parse_platform("[platform\n", "h.toml"), Contains("h.toml:1"));
}
