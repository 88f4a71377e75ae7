// CSV traces in the reference simulator's format (docs/platforms.md "Traces"), so that its
// viewers work: log_0.csv, log_1.csv, ... of 10 000 rows each, every file starting with
// the header `operation_type,initiator_nid,target_nid,start_time,end_time`.
//
// Enabled by `s4bxi-launch --trace DIR`, S4BXI_LOG_FOLDER or trace.folder in the platform
// file. The NIC model calls record(); it costs one test when tracing is off.
#pragma once

#include <cstdint>
#include <string>

namespace s4bxi::sim::trace {

// The reference's operation codes (its bxi_log_type), written as numbers.
enum class Op {
    E2E_ACK = 0,
    PTL_ACK,
    PTL_GET_RESPONSE,
    PTL_PUT,
    PTL_GET,
    PTL_ATOMIC,
    PTL_FETCH_ATOMIC,
    PTL_FETCH_ATOMIC_RESPONSE,
    PCI_PIO_PAYLOAD,
    PCI_DMA_PAYLOAD,
    PCI_DMA_REQUEST,
    PCI_PAYLOAD_WRITE,
    PCI_EVENT,
    PCI_COMMAND,
    COMPUTE,
};

inline constexpr uint64_t kRowsPerFile = 10000;

// True between open() and close().
bool enabled();

// One row. Network rows: the sender and the receiver of that message (reversed for ACKs
// and responses); PCI and COMPUTE rows: the node's own NID twice. COMPUTE rows are
// dropped unless open() was told to keep them. Times in simulated seconds.
void record(Op op, uint32_t initiator_nid, uint32_t target_nid, double start, double end);

// Starts tracing into `folder` (created if missing; "" or "/dev/null": no tracing).
// Writes log_0.csv with its header at once, so that a run always leaves a trace file.
// Throws std::runtime_error if the folder or the file cannot be created.
void open(const std::string& folder, bool computation);

// Flushes and closes the current file; tracing is off afterwards.
void close();

// Rows written since open().
uint64_t rows();

// One row as the reference writes it: times in general notation with 9 significant
// digits plus one per integer digit of the start time (exposed for tests).
std::string format_row(Op op, uint32_t initiator_nid, uint32_t target_nid, double start, double end);

}  // namespace s4bxi::sim::trace
