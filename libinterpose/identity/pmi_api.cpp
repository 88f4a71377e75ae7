// PMI-1 client entry points of libportals.so (include/pmi.h).
//
// A rank that s4bxi-launch started itself (spawn mode) has no process manager but the
// simulation: its rank and the world size come from its registration, the key-value space
// and PMI_Barrier from the server (simkernel/services/pmi_service.hpp). So has a rank that
// a process manager without PMI-1 started: Open MPI's mpirun offers PMIx only, and an
// OpenSHMEM or raw Portals program built on PMI-1 finds no library for it there. Being
// preloaded, these definitions win over a real libpmi's; so where one is loaded (srun with
// Slurm's libpmi, a cluster's), or in a process that is not a rank, they must not shadow
// it: each call goes to the next definition in the lookup order, or fails saying it is not
// supported.
#include <pmi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"

#define S4BXI_API extern "C" __attribute__((visibility("default")))

namespace wire = s4bxi::wire;
using s4bxi::interpose::call;
using s4bxi::interpose::launched_rank;

namespace {

// The run's one key-value space. Its name only has to be what PMI_KVS_Get_my_name says.
constexpr char kKvsName[] = "s4bxi_kvs";
static_assert(sizeof kKvsName <= wire::kPmiNameBytes);

bool g_initialized = false;

int not_supported(const char* what)
{
    char text[256];
    int rank = s4bxi::interpose::rank_id();
    int n = rank >= 0 ? std::snprintf(text, sizeof text, "s4bxi: rank %d: not supported yet: %s\n", rank, what)
                      : std::snprintf(text, sizeof text, "s4bxi: not supported yet: %s\n", what);
    if (n > 0) (void)!write(STDERR_FILENO, text, std::min(static_cast<size_t>(n), sizeof text - 1));
    return PMI_FAIL;
}

// The definition of `name` that the preload hides (a real libpmi's), if any.
template <auto Entry, class... Args>
int forward(const char* name, Args... args)
{
    static const auto next = reinterpret_cast<decltype(Entry)>(dlsym(RTLD_NEXT, name));
    if (next) return next(args...);
    char what[160];
    std::snprintf(what, sizeof what, "%s outside a rank of the run, and no other PMI library is loaded",
                  name);
    return not_supported(what);
}

// Copies `text` into `out` of `length` bytes, NUL included, or says it does not fit.
int copy_out(const char* text, char* out, int length)
{
    if (!out || length <= 0) return PMI_ERR_INVALID_ARG;
    size_t size = std::strlen(text) + 1;
    if (size > static_cast<size_t>(length)) return PMI_ERR_INVALID_LENGTH;
    std::memcpy(out, text, size);
    return PMI_SUCCESS;
}

int check_kvs(const char* name)
{
    if (!g_initialized) return PMI_ERR_INIT;
    if (!name || std::strcmp(name, kKvsName) != 0) return PMI_ERR_INVALID_ARG;
    return PMI_SUCCESS;
}

// Fills the request for `key` of the run's key-value space, or says why it cannot be.
int kvs_request(const char* name, const char* key, wire::PmiKvsArgs& args)
{
    if (int rc = check_kvs(name); rc != PMI_SUCCESS) return rc;
    if (!key || !*key) return PMI_ERR_INVALID_KEY;
    if (std::strlen(key) >= sizeof args.key) return PMI_ERR_INVALID_KEY_LENGTH;
    std::memcpy(args.name, kKvsName, sizeof kKvsName);
    std::strcpy(args.key, key);
    return PMI_SUCCESS;
}

int set_int(int* out, int value)
{
    if (!out) return PMI_ERR_INVALID_ARG;
    *out = value;
    return PMI_SUCCESS;
}

// Whether the server answers this process's PMI-1 calls: a rank of the run, started by
// s4bxi-launch, or by a launcher whose PMI-1, if any, is not loaded.
bool served_by_server()
{
    if (launched_rank()) return true;
    static const bool no_other_pmi = dlsym(RTLD_NEXT, "PMI_Init") == nullptr;
    return no_other_pmi && s4bxi::interpose::world_size() > 0;  // 0 outside a rank
}

}  // namespace

// Every entry point starts with this: where another PMI-1 library serves, it answers.
#define PMI_FORWARD_UNLESS_SERVED(entry, ...) \
    if (!served_by_server()) return forward<&entry>(#entry __VA_OPT__(, ) __VA_ARGS__)
#define PMI_REQUIRE_INIT() \
    if (!g_initialized) return PMI_ERR_INIT

S4BXI_API int PMI_Init(int* spawned)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Init, spawned);
    g_initialized = true;
    return set_int(spawned, PMI_FALSE);  // s4bxi-launch is no PMI_Spawn_multiple
}

S4BXI_API int PMI_Initialized(PMI_BOOL* initialized)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Initialized, initialized);
    return set_int(initialized, g_initialized ? PMI_TRUE : PMI_FALSE);
}

S4BXI_API int PMI_Finalize(void)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Finalize);
    PMI_REQUIRE_INIT();
    g_initialized = false;
    return PMI_SUCCESS;
}

S4BXI_API int PMI_Get_size(int* size)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Get_size, size);
    PMI_REQUIRE_INIT();
    return set_int(size, s4bxi::interpose::world_size());
}

S4BXI_API int PMI_Get_rank(int* rank)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Get_rank, rank);
    PMI_REQUIRE_INIT();
    return set_int(rank, s4bxi::interpose::rank_id());
}

S4BXI_API int PMI_Get_universe_size(int* size)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Get_universe_size, size);
    PMI_REQUIRE_INIT();
    return set_int(size, s4bxi::interpose::world_size());
}

S4BXI_API int PMI_Get_appnum(int* appnum)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Get_appnum, appnum);
    PMI_REQUIRE_INIT();
    return set_int(appnum, 0);  // one program per run
}

S4BXI_API int PMI_Barrier(void)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Barrier);
    PMI_REQUIRE_INIT();
    return call(wire::Op::PmiBarrier, nullptr, 0).rc;
}

S4BXI_API int PMI_Abort(int exit_code, const char error_msg[])
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Abort, exit_code, error_msg);
    // The server ends the run at once and the launcher exits with `exit_code` (docs/usage.md
    // "Exit status"); the message goes into the server's one-line diagnosis.
    wire::AbortArgs args{};
    args.exit_status = exit_code;
    if (error_msg) {
        args.length = static_cast<uint32_t>(strnlen(error_msg, sizeof args.text - 1));
        std::memcpy(args.text, error_msg, args.length);
    }
    call(wire::Op::PmiAbort, &args, sizeof args);
    s4bxi::interpose::leave_run();
    _exit(exit_code);
}

S4BXI_API int PMI_KVS_Get_my_name(char kvsname[], int length)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_KVS_Get_my_name, kvsname, length);
    PMI_REQUIRE_INIT();
    return copy_out(kKvsName, kvsname, length);
}

S4BXI_API int PMI_KVS_Get_name_length_max(int* length)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_KVS_Get_name_length_max, length);
    return set_int(length, static_cast<int>(wire::kPmiNameBytes));
}

S4BXI_API int PMI_KVS_Get_key_length_max(int* length)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_KVS_Get_key_length_max, length);
    return set_int(length, static_cast<int>(wire::kPmiKeyBytes));
}

S4BXI_API int PMI_KVS_Get_value_length_max(int* length)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_KVS_Get_value_length_max, length);
    return set_int(length, static_cast<int>(wire::kPmiValueBytes));
}

S4BXI_API int PMI_KVS_Put(const char kvsname[], const char key[], const char value[])
{
    PMI_FORWARD_UNLESS_SERVED(PMI_KVS_Put, kvsname, key, value);
    wire::PmiKvsArgs args{};
    if (int rc = kvs_request(kvsname, key, args); rc != PMI_SUCCESS) return rc;
    if (!value) return PMI_ERR_INVALID_VAL;
    if (std::strlen(value) >= sizeof args.value) return PMI_ERR_INVALID_VAL_LENGTH;
    std::strcpy(args.value, value);
    return call(wire::Op::PmiKvsPut, &args, sizeof args).rc;
}

S4BXI_API int PMI_KVS_Commit(const char kvsname[])
{
    PMI_FORWARD_UNLESS_SERVED(PMI_KVS_Commit, kvsname);
    return check_kvs(kvsname);  // every put is already in the server
}

S4BXI_API int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_KVS_Get, kvsname, key, value, length);
    wire::PmiKvsArgs args{};
    if (int rc = kvs_request(kvsname, key, args); rc != PMI_SUCCESS) return rc;
    const wire::Reply& reply = call(wire::Op::PmiKvsGet, &args, sizeof args);
    if (reply.rc != PMI_SUCCESS) return reply.rc;
    return copy_out(wire::args_as<wire::PmiKvsArgs>(reply.args).value, value, length);
}

// Not there yet when the server answers: they fail, saying so.

S4BXI_API int PMI_Get_clique_size(int* size)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Get_clique_size, size);
    return not_supported("PMI_Get_clique_size");
}

S4BXI_API int PMI_Get_clique_ranks(int ranks[], int length)
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Get_clique_ranks, ranks, length);
    return not_supported("PMI_Get_clique_ranks");
}

S4BXI_API int PMI_Publish_name(const char service_name[], const char port[])
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Publish_name, service_name, port);
    return not_supported("PMI_Publish_name");
}

S4BXI_API int PMI_Unpublish_name(const char service_name[])
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Unpublish_name, service_name);
    return not_supported("PMI_Unpublish_name");
}

S4BXI_API int PMI_Lookup_name(const char service_name[], char port[])
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Lookup_name, service_name, port);
    return not_supported("PMI_Lookup_name");
}

S4BXI_API int PMI_Spawn_multiple(int count, const char* cmds[], const char** argvs[], const int maxprocs[],
                                 const int info_keyval_sizes[], const PMI_keyval_t* info_keyval_vectors[],
                                 int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[], int errors[])
{
    PMI_FORWARD_UNLESS_SERVED(PMI_Spawn_multiple, count, cmds, argvs, maxprocs, info_keyval_sizes,
                                info_keyval_vectors, preput_keyval_size, preput_keyval_vector, errors);
    return not_supported("PMI_Spawn_multiple");
}
