#include "server.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "calls/portals_engine.hpp"
#include "nic/message_hooks.hpp"
#include "nic/nic_model.hpp"
#include "nic/trace.hpp"
#include "observation/progress_line.hpp"
#include "observation/summary.hpp"
#include "observation/timeline.hpp"
#include "platform/config_override.hpp"
#include "platform/platform.hpp"
#include "platform/unused_models.hpp"
#include "registration/machine_link.hpp"
#include "registration/rank_socket.hpp"
#include "registration/remote_listener.hpp"
#include "s4bxi/rank_hello.hpp"
#include "s4bxi/remote_wire.hpp"
#include "run/context.hpp"
#include "scheduling/gate.hpp"
#include "scheduling/rank_proxy.hpp"
#include "scheduling/scheduling_hooks.hpp"
#include "services/rank_delivery.hpp"
#include "services/seccomp_supervisor.hpp"

namespace s4bxi::sim {

std::atomic<bool> g_terminate_requested{false};

Context& context()
{
    static Context instance;
    return instance;
}

namespace {

namespace sg4 = simgrid::s4u;

struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void on_terminate(int)
{
    g_terminate_requested.store(true);
}

void install_signal_handlers()
{
    struct sigaction action{};
    action.sa_handler = on_terminate;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    signal(SIGPIPE, SIG_IGN);
}

// The platform file (or the built-in one), then the environment and --set given by the
// launcher; a plugin is loaded now so that a missing library is an error before any rank
// starts.
PlatformSpec load_platform(const Config& config)
{
    try {
        PlatformSpec spec = load_platform_file(config.platform_file);
        apply_overrides(spec, command_line_overrides());
        if (!spec.plugin.empty()) load_platform_plugin(spec.plugin);
        return spec;
    } catch (const std::runtime_error& error) {
        throw ConfigError(error.what());
    }
}

// The built-in platform, with no node count of the user's (environment, --set): its node
// count follows the job, as mpirun's host list does, once the world size is known.
bool sized_by_job(const Config& config, const PlatformSpec& spec)
{
    if (!config.platform_file.empty() || spec.topology != "switch" || !spec.plugin.empty() || !spec.nids.empty())
        return false;
    auto origin = spec.origins.find("platform.nodes");
    return origin == spec.origins.end() ||
           (origin->second.rfind("environment", 0) != 0 && origin->second.rfind("--set", 0) != 0);
}

int listen_socket(const std::string& path)
{
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) throw ConfigError("run directory path too long for a unix socket");
    std::strcpy(address.sun_path, path.c_str());
    unlink(path.c_str());
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || chmod(path.c_str(), 0600) != 0 ||
        listen(fd, 256) != 0)
        throw ConfigError(fmt::format("cannot listen on {}: {}", path, strerror(errno)));
    return fd;
}

class Server {
public:
    explicit Server(Config config) { context().config = std::move(config); }
    int run();

private:
    void register_ranks(int listen_fd);
    void accept_rank(int fd);
    void accept_remote_rank(MachineLink& machine, const wire::Hello& hello);
    std::unique_ptr<RankRecord> admit(const wire::Hello& hello, std::string& refusal);
    bool serve_machines();
    void simulate();
    int finish();

    void fit_platform_to_job();
    void listen_for_other_machines(const std::string& address);

    PlatformSpec spec_;
    std::unique_ptr<RemoteListener> remote_;
    std::mutex machines_mutex_;  // the listener's thread adds machines
    std::vector<std::unique_ptr<MachineLink>> machines_;
    bool sized_by_job_ = false;
    SeccompSupervisor supervisor_;
    double makespan_ = 0.0;
    NetworkTotals network_;
};

// The secret comes in the environment, not on the command line; the server's own
// children (none today) would not get it.
void Server::listen_for_other_machines(const std::string& address)
{
    const char* secret = std::getenv(remote::kSecretVariable);
    std::string kept = secret ? secret : "";
    unsetenv(remote::kSecretVariable);
    wire::Doorbell& doorbell = *context().doorbell.object;
    try {
        remote_ = std::make_unique<RemoteListener>(
            address, kept, [this, &doorbell](int fd, const std::string& machine, const std::string& peer) {
                fmt::print(stderr, "s4bxi-simkernel: machine {} joined the run from {}\n", machine, peer);
                std::lock_guard<std::mutex> hold(machines_mutex_);
                machines_.push_back(std::make_unique<MachineLink>(fd, machine, peer, doorbell));
            });
    } catch (const std::runtime_error& error) {
        throw ConfigError(error.what());
    }
    fmt::print(stderr, "s4bxi-simkernel: listening for processes of this run on other machines at {}\n",
               remote_->bound());
    // Where the launcher reads it, before it starts the command: the ranks' agents connect there.
    std::ofstream(context().config.run_dir + "/listen-address") << remote_->bound() << "\n";
}

void Server::fit_platform_to_job()
{
    const Config& config = context().config;
    if (!sized_by_job_ || config.world_size <= 0 || config.ppn < 1) return;
    spec_.nodes = static_cast<uint32_t>((config.world_size + config.ppn - 1) / config.ppn);
    spec_.origins["platform.nodes"] = fmt::format("sized by the job: {} ranks at {} per node", config.world_size, config.ppn);
    sized_by_job_ = false;  // once: ranks are placed on it from now on
}

// What every rank's registration checks, wherever it runs; the record of an admitted rank,
// or null with the reason to give it.
std::unique_ptr<RankRecord> Server::admit(const wire::Hello& hello, std::string& refusal)
{
    Context& ctx = context();
    const Config& config = ctx.config;
    if (hello.version != wire::kVersion) {
        refusal = fmt::format("protocol version {} does not match the server's {}: mixed s4bxi installations?",
                              hello.version, wire::kVersion);
        return nullptr;
    }
    if (ctx.config.world_size == 0 && hello.world_size > 0) ctx.config.world_size = hello.world_size;
    fit_platform_to_job();
    int world = ctx.config.world_size;
    if (world > 0 && (hello.rank < 0 || hello.rank >= world)) {
        refusal = fmt::format("rank {} is outside the world of {} ranks", hello.rank, world);
        return nullptr;
    }
    for (int service : config.service_ranks)
        if (world > 0 && service >= world) {
            refusal = fmt::format("--service-ranks names rank {}, but the world has {} ranks", service, world);
            return nullptr;
        }
    if (ctx.registry.find(hello.rank)) {
        refusal = fmt::format("rank {} registered twice", hello.rank);
        return nullptr;
    }
    uint32_t node_index = static_cast<uint32_t>(hello.rank / config.ppn);
    if (node_index >= spec_.nodes) {
        refusal = fmt::format("rank {} needs node {} but the platform has {} nodes ({} ranks per node)", hello.rank,
                              node_index, spec_.nodes, config.ppn);
        return nullptr;
    }
    if (hello.flags & wire::kHelloReattach) {
        refusal = "re-attach of a rank that never registered";
        return nullptr;
    }
    uint32_t nid = spec_.nid_of(node_index);
    auto record = std::make_unique<RankRecord>();
    record->rank = hello.rank;
    record->pid = hello.pid;
    record->tid = hello.tid;
    record->slot = create_slot();
    record->nid = nid;
    record->core = static_cast<uint32_t>(hello.rank % config.ppn) % spec_.cores_per_node;
    record->core_to_itself = static_cast<uint32_t>(config.ppn) <= spec_.cores_per_node;
    record->node_name = fmt::format("node{}", nid);
    bool openshmem = hello.flags & wire::kHelloOpenShmem;
    record->memory_waits = config.applies(config.memory_waits, openshmem);
    record->threads_lockstep = config.applies(config.lockstep, openshmem);
    record->service_mode = std::find(config.service_ranks.begin(), config.service_ranks.end(), hello.rank) !=
                           config.service_ranks.end();
    return record;
}

void Server::accept_rank(int fd)
{
    Context& ctx = context();
    const Config& config = ctx.config;
    wire::Hello hello{};
    switch (wire::receive_hello(fd, hello)) {
    case wire::HelloReceipt::Nothing: close(fd); return;
    case wire::HelloReceipt::WrongPeer: return refuse(fd, wire::kWrongPeerRefusal);
    case wire::HelloReceipt::Received: break;
    }
    std::string refusal;
    std::unique_ptr<RankRecord> record = admit(hello, refusal);
    if (!record) return refuse(fd, refusal);
    // It reached the run directory's socket: it runs on this machine.
    record->process_access = &local_processes();
    record->thread_cpu = record->process().thread_cpu_clock(hello.pid, hello.tid);
    record->socket_fd = fd;
    observe::rank_registered(*record);
    if (!send_welcome(fd, make_welcome(*record, spec_.nodes), record->slot.fd, ctx.doorbell.fd)) {
        close(fd);
        return;
    }
    int trap = receive_trap(fd);
    if (trap == -2) {
        close(fd);
        return;
    }
    if (trap >= 0)
        supervisor_.add_rank(record->rank, record->process(), record->pid, record->tid, trap, record->slot.object,
                             ctx.doorbell.object, config.cpu_factor, config.cpu_model == wire::CpuModel::Zero,
                             config.epoch);
    ctx.registry.add(std::move(record));
}

// A rank of another machine: its agent said hello for it. Its channel here is a shadow
// that the agent keeps the same as the rank's (s4bxi/channel_sync.hpp); its time trap is
// the agent's.
void Server::accept_remote_rank(MachineLink& machine, const wire::Hello& hello)
{
    std::string refusal;
    std::unique_ptr<RankRecord> record = admit(hello, refusal);
    if (!record) return machine.refuse(hello.rank, refusal);
    record->machine = &machine;
    record->process_access = &machine.processes();
    record->thread_cpu = record->process().thread_cpu_clock(hello.pid, hello.tid);
    record->channel_sync = std::make_unique<remote::ChannelSync>(reinterpret_cast<uint8_t*>(record->slot.object));
    observe::rank_registered(*record);
    if (!machine.welcome(*record, make_welcome(*record, spec_.nodes))) return;
    context().registry.add(std::move(record));
}

// Ranks that said hello on other machines; false when a machine was lost (the run fails).
bool Server::serve_machines()
{
    std::lock_guard<std::mutex> hold(machines_mutex_);
    for (auto& machine : machines_) {
        wire::Hello hello;
        while (machine->next_hello(hello)) accept_remote_rank(*machine, hello);
        if (machine->gone() && machine->has_ranks()) {
            context().outcome.fail("rank-crash",
                                   fmt::format("machine {} ({}) was lost before every rank had registered: {}",
                                               machine->machine(), machine->peer(), machine->why_gone()),
                                   kExitRankCrash);
            return false;
        }
    }
    // A machine that left with no rank is forgotten (its agent found nothing to do).
    std::erase_if(machines_, [](const auto& machine) { return machine->gone() && !machine->has_ranks(); });
    return true;
}

void Server::register_ranks(int listen_fd)
{
    Context& ctx = context();
    double deadline = wall_now() + ctx.config.register_timeout;
    while (ctx.config.world_size == 0 || static_cast<int>(ctx.registry.size()) < ctx.config.world_size) {
        if (g_terminate_requested.load()) {
            ctx.outcome.fail("error",
                             ctx.registry.size() == 0
                                 ? std::string("stopped before any rank registered (the command ended or was interrupted)")
                                 : fmt::format("stopped while waiting for ranks: {} of {} registered",
                                               ctx.registry.size(), ctx.config.world_size),
                             kExitRegistration);
            return;
        }
        double left = deadline - wall_now();
        if (left <= 0) {
            std::string missing;
            for (int rank = 0; rank < ctx.config.world_size && missing.size() < 200; ++rank)
                if (!ctx.registry.find(rank)) missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
            ctx.outcome.fail("registration-timeout",
                             fmt::format("only {} of {} ranks registered within {:.0f} s; missing: {}",
                                         ctx.registry.size(), ctx.config.world_size, ctx.config.register_timeout,
                                         missing.empty() ? "(world size unknown)" : missing),
                             kExitRegistration);
            return;
        }
        pollfd pfd{listen_fd, POLLIN, 0};
        int ready = poll(&pfd, 1, static_cast<int>(std::min(left, 0.05) * 1000) + 1);
        if (!serve_machines()) return;
        for (auto& r : ctx.registry.ranks())  // ranks that exec'd, or died early
            if (r->phase != RankPhase::Dead &&
                serve_rank(*r, spec_.nodes) == SocketStatus::Closed) {
                r->phase = RankPhase::Dead;
                ctx.outcome.fail("rank-crash",
                                 fmt::format("rank {} (pid {}) ended before every rank had registered", r->rank, r->pid),
                                 kExitRankCrash);
                return;
            }
        if (ready <= 0) continue;
        int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) accept_rank(fd);
    }
}

void Server::simulate()
{
    Context& ctx = context();
    // SimGrid's own categories stay at warning: --log-level applies to ours.
    const std::string& level = ctx.config.log_level;
    std::vector<std::string> args = {"s4bxi-simkernel", "--log=root.thresh:" + std::string(level == "error" ? "error" : "warning"),
                                     "--log=root.fmt:[%10.9r]%e[%a]%e%m%n", "--log=xbt_cfg.thresh:warning",
                                     "--cfg=network/model:CM02", "--cfg=network/loopback-lat:0",
                                     "--cfg=network/loopback-bw:999e9", "--cfg=surf/precision:1e-9",
                                     "--cfg=contexts/stack-size:512"};
    for (const char* category :
         {"s4bxi_gate", "s4bxi_nic", "s4bxi_portals", "s4bxi_proxy", "s4bxi_memory_waits", "s4bxi_delivery"})
        args.push_back(fmt::format("--log={}.thresh:{}", category, level));
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    sg4::Engine engine(&argc, argv.data());

    g_node_count = spec_.nodes;
    std::vector<NodeHosts> nodes;
    try {
        nodes = build_platform(spec_);
    } catch (const std::exception& error) {
        ctx.outcome.fail("error", error.what(), kExitConfig);
        return;
    }
    NicModel model(spec_, nodes);
    set_nic_model(&model);
    model.start();
    ctx.gate_wakeup = sg4::Semaphore::create(0);
    for (auto& rank : ctx.registry.ranks()) {
        RankRecord& r = *rank;
        sg4::Host* core = model.nic(r.nid).hosts().cores.at(r.core);
        attach_portals(r, core, r.nid);
        r.dispatch = sg4::Semaphore::create(0);
        r.proxy = sg4::Actor::create(fmt::format("rank{}", r.rank), core, [&r] { rank_proxy(&r); });
    }
    // Created last, so that it runs after every other actor of a scheduling round.
    sg4::Actor::create("gate", model.nic(spec_.nid_of(0)).hosts().cores.front(), gate_actor);
    sg4::Engine::on_deadlock_cb(report_deadlock);
    leave_out_unused_models();
    engine.run();
    trace::close();
    makespan_ = sg4::Engine::get_clock();
    network_.network_models = model.models().summary(makespan_);  // before the timeline closes: its last switches
    observe::close(makespan_);
    observe::progress_done();
    network_.bytes_moved = model.bytes_moved;
    for (size_t i = 0; i < model.size(); ++i) {
        E2eTracker& e2e = model.nic(spec_.nid_of(static_cast<uint32_t>(i))).e2e();
        network_.retransmissions += e2e.retried;
        network_.undeliverable += e2e.gave_up;
    }
    set_nic_model(nullptr);
}

int Server::finish()
{
    Context& ctx = context();
    for (auto& r : ctx.registry.ranks()) supervisor_.remove_rank(r->rank);
    {
        std::lock_guard<std::mutex> hold(machines_mutex_);
        for (auto& machine : machines_) machine->bye();
    }
    trace::close();
    write_summary(make_summary(ctx, makespan_, network_, spec_), ctx.config.summary_out);
    if (ctx.outcome.failed()) fmt::print(stderr, "s4bxi-simkernel: error: {}\n", ctx.outcome.message);
    return ctx.outcome.exit_code;
}

// The layers below scheduling/ and observation/ tell them what happens through hooks: set
// before anything can happen.
void install_hooks()
{
    install_scheduling_hooks();
    g_message_hooks = {observe::message_issued, observe::message_landed, observe::network_model_changed};
}

int Server::run()
{
    install_hooks();
    Context& ctx = context();
    ctx.wall_start = wall_now();
    ctx.host_load_at_start = host_load();
    install_signal_handlers();
    int ready_fd = ctx.config.ready_fd;
    try {
        spec_ = load_platform(ctx.config);
        set_copy_once_from(spec_.copy_once_from);  // before the ranks register: their Welcome says it
        try {
            trace::open(spec_.trace_folder, spec_.trace_computation);
            observe::open(ctx.config.observation);
        } catch (const std::runtime_error& error) {
            throw ConfigError(error.what());
        }
        if (ctx.config.ppn < 1) throw ConfigError("--ppn must be at least 1");
        sized_by_job_ = sized_by_job(ctx.config, spec_);
        fit_platform_to_job();
        if (ctx.config.world_size > 0 &&
            static_cast<uint64_t>(ctx.config.world_size) > static_cast<uint64_t>(spec_.nodes) * ctx.config.ppn)
            throw ConfigError(fmt::format("{} ranks at {} per node need {} nodes, but platform '{}' has {}",
                                          ctx.config.world_size, ctx.config.ppn,
                                          (ctx.config.world_size + ctx.config.ppn - 1) / ctx.config.ppn,
                                          spec_.source, spec_.nodes));
        ctx.doorbell = create_doorbell();
        int listen_fd = listen_socket(ctx.config.run_dir + "/simkernel.sock");
        if (!ctx.config.listen.empty()) listen_for_other_machines(ctx.config.listen);
        if (ready_fd >= 0) {
            char ready = 1;
            (void)!write(ready_fd, &ready, 1);
            close(ready_fd);
            ready_fd = -1;
        }
        register_ranks(listen_fd);
        close(listen_fd);
    } catch (const ConfigError& error) {
        if (ready_fd >= 0) close(ready_fd);
        fmt::print(stderr, "s4bxi-simkernel: error: {}\n", error.what());
        ctx.outcome.fail("error", error.what(), kExitConfig);
        write_summary(make_summary(ctx, 0, {}, spec_), ctx.config.summary_out);
        return kExitConfig;
    }
    if (!ctx.outcome.failed() && ctx.registry.size() > 0) simulate();
    return finish();
}

}  // namespace

int run_server(Config config)
{
    return Server(std::move(config)).run();
}

}  // namespace s4bxi::sim
