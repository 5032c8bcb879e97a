#include "connection_slots.h"

#include <tuple>

namespace kvc::runtime {

ConnectionSlots::ConnectionSlots(std::size_t max_total, std::size_t max_per_peer)
    : max_total_(max_total), max_per_peer_(max_per_peer) {}

std::unordered_map<std::uint64_t, ConnectionSlots::Entry>::iterator ConnectionSlots::victim(
    const std::string* peer) {
  auto best = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const Entry& e = it->second;
    if (!e.waiting || (peer != nullptr && e.peer != *peer)) {
      continue;
    }
    if (best == entries_.end() ||
        std::tie(e.served, e.since) < std::tie(best->second.served, best->second.since)) {
      best = it;
    }
  }
  return best;
}

ConnectionSlots::Admission ConnectionSlots::admit(const std::string& peer,
                                                  const std::shared_ptr<Connection>& connection) {
  Admission out;
  std::lock_guard lock(mutex_);
  auto chosen = entries_.end();
  if (max_per_peer_ != 0 && per_peer_[peer] >= max_per_peer_) {
    chosen = victim(&peer);
    if (chosen == entries_.end()) {
      out.refusal = "peer_connections";
      return out;
    }
  } else if (max_total_ != 0 && entries_.size() >= max_total_) {
    chosen = victim(nullptr);
    if (chosen == entries_.end()) {
      out.refusal = "connections";
      return out;
    }
  }
  if (chosen != entries_.end()) {
    out.evicted = chosen->second.connection.lock();
    out.evicted_peer = chosen->second.peer;
    if (--per_peer_[chosen->second.peer] == 0) {
      per_peer_.erase(chosen->second.peer);
    }
    entries_.erase(chosen);
  }
  out.id = next_id_++;
  entries_.emplace(out.id, Entry{connection, peer, true, false, ++clock_});
  ++per_peer_[peer];
  return out;
}

bool ConnectionSlots::setBusy(std::uint64_t id, bool request) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    return false;
  }
  it->second.waiting = false;
  it->second.served = it->second.served || request;
  return true;
}

bool ConnectionSlots::setWaiting(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    return false;
  }
  it->second.waiting = true;
  it->second.since = ++clock_;
  return true;
}

void ConnectionSlots::release(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    return;
  }
  if (--per_peer_[it->second.peer] == 0) {
    per_peer_.erase(it->second.peer);
  }
  entries_.erase(it);
}

std::vector<std::shared_ptr<Connection>> ConnectionSlots::all() const {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mutex_);
  for (const auto& [id, entry] : entries_) {
    if (auto connection = entry.connection.lock()) {
      out.push_back(std::move(connection));
    }
  }
  return out;
}

std::size_t ConnectionSlots::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace kvc::runtime
