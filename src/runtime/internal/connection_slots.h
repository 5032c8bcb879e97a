#pragma once
// The open connections of one HTTP server, and the caps on how many there are: in total and
// from one peer address. A connection is waiting while no request is in progress on it (before
// its first byte, or idle between keep-alive requests) and busy otherwise. At a cap, a new
// connection takes the slot of a waiting one, which is closed — one that never sent a request
// first (an idle flood), then the one waiting longest — as nginx reuses its idle keep-alive
// connections; with none waiting, the new connection is refused. A busy connection is never
// closed to make room: its deadlines (handshake, header, request, write) end it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kvc::runtime {

// A connection, as the server sees it: something it can close from any thread.
class Connection {
public:
  virtual ~Connection() = default;
  virtual void abort() = 0;
};

class ConnectionSlots {
public:
  ConnectionSlots(std::size_t max_total, std::size_t max_per_peer);

  struct Admission {
    std::uint64_t id = 0;                 // the slot; 0 when refused
    std::string_view refusal;             // when refused: "connections" or "peer_connections"
    std::shared_ptr<Connection> evicted;  // a waiting connection whose slot was taken: abort it
    std::string evicted_peer;
  };
  // A slot for a new connection from `peer` (its IP address), waiting until it starts a request.
  Admission admit(const std::string& peer, const std::shared_ptr<Connection>& connection);
  // The connection starts a handshake (request false) or a request. False once it was evicted:
  // its socket is being closed and the caller stops.
  bool setBusy(std::uint64_t id, bool request);
  bool setWaiting(std::uint64_t id);
  // The connection ended (no-op for 0 or an evicted connection).
  void release(std::uint64_t id);
  // Every open connection, for stop(); their slots stay until they release them.
  std::vector<std::shared_ptr<Connection>> all() const;
  std::size_t size() const;

private:
  struct Entry {
    std::weak_ptr<Connection> connection;
    std::string peer;
    bool waiting = true;
    bool served = false;      // has started a request
    std::uint64_t since = 0;  // when it began to wait (a sequence number)
  };
  // The waiting connection to evict (of `peer`, or of any peer when null), or end().
  std::unordered_map<std::uint64_t, Entry>::iterator victim(const std::string* peer);

  const std::size_t max_total_;
  const std::size_t max_per_peer_;
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::unordered_map<std::string, std::size_t> per_peer_;
  std::uint64_t next_id_ = 1;
  std::uint64_t clock_ = 0;
};

}  // namespace kvc::runtime
