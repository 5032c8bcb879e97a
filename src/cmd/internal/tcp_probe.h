#pragma once
// Whether a TCP listener answers: the member's check that its master's Service routes somewhere
// again after a failover (store_member_command.cc).

#include <chrono>
#include <string>

namespace kvc::cmd::internal {

// True when a TCP connection to HOST:PORT (a name is resolved, every address tried) is accepted
// within `timeout` per address; the connection is closed at once.
bool tcpConnects(const std::string& host, const std::string& port,
                 std::chrono::milliseconds timeout);

}  // namespace kvc::cmd::internal
