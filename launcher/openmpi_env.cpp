#include "openmpi_env.hpp"

#include <algorithm>
#include <string_view>

namespace s4bxi::launcher {

namespace {

// Where Debian's Open MPI keeps its own components: the search path replaces the default, so
// it must be listed after ours.
constexpr const char* kSystemComponents = "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3";

}  // namespace

const std::string* find_value(const std::vector<std::string>& environment, std::string_view name)
{
    for (const std::string& kv : environment)
        if (kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 && kv[name.size()] == '=') return &kv;
    return nullptr;
}

std::vector<OpenMpiSetting> open_mpi_settings(const std::string& components, const std::vector<std::string>& environment,
                                              bool running_as_root)
{
    std::vector<OpenMpiSetting> wanted;
    if (!components.empty()) {
        wanted = {
            {"OMPI_MCA_mca_base_component_path", components + ":" + kSystemComponents, false,
             "finds the Portals components built by tools/setup"},
            {"OMPI_MCA_pml", "cm", false, "point-to-point through an MTL"},
            {"OMPI_MCA_mtl", "portals4", false, "the MTL is Portals 4, i.e. the simulated network"},
            {"OMPI_MCA_btl", "self,tcp", false, "no vader/sm: shared memory would bypass the simulation"},
            {"OMPI_MCA_osc", "portals4,sm", false,
             "one-sided over simulated Portals; sm only for windows within one simulated node"},
            {"OMPI_MCA_coll", "^portals4", false, "coll/portals4 reduces MPI_LONG bytewise (Open MPI 4.1 bug)"},
            {"OMPI_MCA_btl_portals4_max_send_size", "32768", false,
             "btl/portals4 loses send fragments over its 32 KiB eager limit (Open MPI 4.1 bug)"},
            {"OMPI_MCA_rmaps_base_oversubscribe", "true", false, "more ranks than host cores is normal here"},
        };
    }
    if (running_as_root) {
        // Containers and CI run as root; mpirun refuses unless told twice.
        wanted.push_back({"OMPI_ALLOW_RUN_AS_ROOT", "1", false, "the launcher runs as root"});
        wanted.push_back({"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", false, "the launcher runs as root"});
    }
    for (OpenMpiSetting& setting : wanted) {
        if (const std::string* kv = find_value(environment, setting.name)) {
            setting.value = kv->substr(setting.name.size() + 1);
            setting.user_set = true;
        }
    }
    return wanted;
}

}  // namespace s4bxi::launcher
