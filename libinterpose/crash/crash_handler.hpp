// Reports fatal signals of a rank to the server with a backtrace, then dies of them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace s4bxi::interpose {

// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT on an alternate stack
// (the calling thread's; other threads use their own stack). On a fatal signal the
// handler sends a wire::Op::Backtrace report (when the rank is not inside call()),
// restores the default action and re-raises, so the process really dies of the signal.
void install_crash_handler();

namespace crash {

// One frame of a backtrace, as the handler collected it. Strings may be empty, never null.
struct Frame {
    uintptr_t pc;
    const char* name;  // symbol (mangled for C++) or ""
    uintptr_t offset;  // pc - symbol start, when name is set
    const char* module;  // basename of the mapped file holding pc, or ""
};

// Longest symbol name written per frame; longer ones are cut and end with "...".
inline constexpr size_t kMaxNameChars = 96;

// The report text, async-signal-safe (no allocation, no stdio):
//   signal=11
//   addr=0x0                          (only when has_address: SIGSEGV, SIGBUS, SIGFPE, SIGILL)
//   #0 0x401136 crash_here+0x6 (segfault)
//   #1 0x7f0a1c229d8f ?? (libc.so.6)
// Lines that do not fit in `capacity` (which includes a terminating NUL) are dropped
// whole; when frames are dropped, the last line says "#... (N more frames)" if it fits.
// Returns the length written (without the NUL).
size_t format_report(char* out, size_t capacity, int signal_number, bool has_address, uintptr_t address,
                     const Frame* frames, size_t count);

}  // namespace crash
}  // namespace s4bxi::interpose
