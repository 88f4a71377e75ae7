// Ranks on other machines than the server's (--listen, docs/multi-host.md): where the
// server listens, the agent those ranks start, and the environment mpirun must carry to
// them.
#pragma once

#include <string>
#include <vector>

namespace s4bxi::launcher {

// The run's secret: 32 random bytes from the kernel, in hex ("" if the kernel gave none).
std::string draw_secret();

// The address the server bound, as it wrote it into the run directory before it said it
// was ready ("" if absent).
std::string read_listen_address(const std::string& run_dir);

// s4bxi-agent beside the server: in the build tree (../agent/) or installed (the same
// folder); "" when there is none.
std::string find_agent(const std::string& simkernel);

// The ranks' environment, for ranks of other machines: the server's address, the agent,
// and Open MPI's list of variables to carry to the ranks of other machines (mpirun gives
// its own environment to the ranks of its machine only). The values never go on a command
// line. `cost_table`: S4BXI_MPI_COST_TABLE is in `env` too.
void add_remote_environment(std::vector<std::string>& env, const std::string& listen_address, const std::string& agent,
                            bool cost_table);

}  // namespace s4bxi::launcher
