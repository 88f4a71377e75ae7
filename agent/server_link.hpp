// The agent's TCP connection to the server: the greeting that proves it belongs to the
// run, then the server's frames, served in order (remote_wire.hpp).
#pragma once

#include <memory>
#include <string>

#include "s4bxi/frame_stream.hpp"

namespace s4bxi::agent {

class LocalRanks;
class PayloadPeers;

// Connects to `address` ("HOST:PORT", "[V6]:PORT") and greets the server with `secret`.
// Throws std::runtime_error naming what failed.
std::unique_ptr<remote::FrameStream> connect_to_server(const std::string& address, const std::string& secret);

// Serves the server's frames until it says the run is over or the stream ends; returns
// why it stopped ("" for the server's goodbye).
std::string serve_server(remote::FrameStream& server, LocalRanks& ranks, PayloadPeers& peers);

// This machine's address on the server connection: where the other agents reach it.
std::string local_address(const remote::FrameStream& server);

}  // namespace s4bxi::agent
