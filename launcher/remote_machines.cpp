#include "remote_machines.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "openmpi_env.hpp"
#include "s4bxi/remote_wire.hpp"

namespace s4bxi::launcher {

namespace fs = std::filesystem;

std::string draw_secret()
{
    unsigned char bytes[remote::kSecretChars / 2];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return "";
    std::string secret;
    for (unsigned char b : bytes) secret += fmt::format("{:02x}", b);
    return secret;
}

std::string read_listen_address(const std::string& run_dir)
{
    std::ifstream file(run_dir + "/listen-address");
    std::string address;
    std::getline(file, address);
    return address;
}

std::string find_agent(const std::string& simkernel)
{
    fs::path server = fs::path(simkernel).parent_path();
    for (const fs::path& candidate : {server / ".." / "agent" / "s4bxi-agent", server / "s4bxi-agent"})
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal().string();
    return "";
}

void add_remote_environment(std::vector<std::string>& env, const std::string& listen_address, const std::string& agent,
                            bool cost_table)
{
    env.push_back("S4BXI_SERVER_ADDRESS=" + listen_address);
    env.push_back("S4BXI_AGENT=" + agent);
    std::string forwarded =
        "LD_PRELOAD;S4BXI_SOCKET;S4BXI_SERVER_ADDRESS;S4BXI_AGENT;" + std::string(remote::kSecretVariable);
    if (cost_table) forwarded += ";S4BXI_MPI_COST_TABLE";
    constexpr const char* kList = "OMPI_MCA_mca_base_env_list";
    if (const std::string* user = find_value(env, kList)) forwarded = user->substr(user->find('=') + 1) + ";" + forwarded;
    std::erase_if(env, [kList](const std::string& kv) { return kv.starts_with(std::string(kList) + "="); });
    env.push_back(std::string(kList) + "=" + forwarded);
}

}  // namespace s4bxi::launcher
