// The MPI library's costs (s4bxi/mpi_costs.hpp) and the calibration tool's output.
#include <catch2/catch.hpp>

#include "calibrate/host_calibration.hpp"
#include "options.hpp"
#include "s4bxi/call_records.hpp"
#include "s4bxi/mpi_costs.hpp"

using namespace s4bxi;
using mpicost::CostKind;

TEST_CASE("MPI costs are read from their text", "[launcher][mpi-costs]")
{
    auto costs = mpicost::parse_costs("send=61.5,receive=39,poll=24,collective=19,reduce_per_byte=0.03");
    REQUIRE(costs);
    CHECK(costs->send_ns == 61.5);
    CHECK(costs->receive_ns == 39);
    CHECK(costs->poll_ns == 24);
    CHECK(costs->collective_ns == 19);
    CHECK(costs->reduce_ns_per_byte == Approx(0.03));
    // A later key wins: explicit costs on top of calibrated ones.
    CHECK(mpicost::parse_costs("send=1,send=7")->send_ns == 7);
    CHECK(mpicost::parse_costs("")->send_ns == 0);
    std::string_view culprit;
    CHECK_FALSE(mpicost::parse_costs("send=1,bogus=2", &culprit));
    CHECK(culprit == "bogus=2");
    CHECK_FALSE(mpicost::parse_costs("send=-1", &culprit));
    CHECK_FALSE(mpicost::parse_costs("send", &culprit));
    CHECK_FALSE(mpicost::parse_costs("send=1x", &culprit));
    CHECK_FALSE(mpicost::parse_costs("send=nan", &culprit));
}

TEST_CASE("each MPI call is charged by its kind", "[launcher][mpi-costs]")
{
    mpicost::MpiCosts c{60, 40, 20, 10, 0.5};
    CHECK(c.charge(mpicost::cost_of("MPI_Send").kind, 1 << 20, 1, false) == 60);
    CHECK(c.charge(mpicost::cost_of("MPI_Irecv").kind, 8, 1, false) == 40);
    CHECK(c.charge(mpicost::cost_of("MPI_Test").kind, 0, 1, false) == 20);
    CHECK(c.charge(mpicost::cost_of("MPI_Waitall").kind, 0, 1, false) == 20);
    CHECK(c.charge(mpicost::cost_of("MPI_Sendrecv").kind, 8, 1, false) == 100);
    // A collective on 16 processes: 4 rounds of a send and a receive.
    auto allreduce = mpicost::cost_of("MPI_Allreduce");
    CHECK(allreduce.reduces);
    CHECK(c.charge(allreduce.kind, 0, 16, true) == 10 + 4 * 100);
    CHECK(c.charge(allreduce.kind, 8, 16, true) == 10 + 4 * (100 + 4));
    CHECK(c.charge(allreduce.kind, 8, 17, true) == 10 + 5 * (100 + 4));  // ⌈log2 17⌉
    CHECK(c.charge(mpicost::cost_of("MPI_Barrier").kind, 0, 1, false) == 10);
    CHECK(c.charge(mpicost::cost_of("MPI_Accumulate").kind, 8, 1, true) == 64);
    // Start-up and communicator creation stay measured.
    for (const char* name : {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Comm_split", "MPI_Comm_dup"})
        CHECK(mpicost::cost_of(name).kind == CostKind::Measured);
    // Every recorded function has a kind.
    for (const char* name : wire::kMpiFunctions) {
        auto kind = mpicost::cost_of(name).kind;
        CHECK((kind >= CostKind::Measured && kind <= CostKind::SendReceive));
    }
}

TEST_CASE("the calibration tool's output is read, or refused", "[launcher][calibration]")
{
    auto good = launcher::parse_calibration("flops=5.4e+09\nmpi=send=61.4,receive=39.3,poll=23.6,collective=18.9,"
                                            "reduce_per_byte=0.0312\n");
    REQUIRE(good);
    CHECK(good->flops == Approx(5.4e9));
    CHECK(good->mpi_costs == "send=61.4,receive=39.3,poll=23.6,collective=18.9,reduce_per_byte=0.0312");
    CHECK_FALSE(launcher::parse_calibration("flops=5.4e+09\n"));
    CHECK_FALSE(launcher::parse_calibration("flops=abc\nmpi=send=1\n"));
    CHECK_FALSE(launcher::parse_calibration("flops=5e9\nmpi=send=x\n"));
}

TEST_CASE("--mpi-costs and --calibrate are checked", "[launcher][options]")
{
    using launcher::ParseOutcome;
    auto parse = [](std::vector<std::string> args, launcher::Environment env = {}) {
        return launcher::parse_options(args, env);
    };
    CHECK(parse({"-n", "2", "./a"}).options.mpi_costs == "calibrated");
    CHECK(parse({"--mpi-costs", "measured", "-n", "2", "./a"}).options.mpi_costs == "measured");
    CHECK(parse({"--mpi-costs", "send=100,poll=0", "-n", "2", "./a"}).options.mpi_costs == "send=100,poll=0");
    CHECK(parse({"-n", "2", "./a"}, {{"S4BXI_MPI_COSTS", "measured"}}).options.mpi_costs == "measured");
    auto bad = parse({"--mpi-costs", "fast", "-n", "2", "./a"});
    CHECK(bad.kind == ParseOutcome::Kind::Error);
    CHECK(bad.text.find("invalid value 'fast' for --mpi-costs") != std::string::npos);
    CHECK(parse({"-n", "2", "./a"}, {{"S4BXI_MPI_COSTS", "send=-3"}}).kind == ParseOutcome::Kind::Error);
    CHECK(parse({"--calibrate"}).kind == ParseOutcome::Kind::Calibrate);
    CHECK(parse({"--calibrate", "./a"}).kind == ParseOutcome::Kind::Error);
}
