// The pool controller's reconcile benchmark (DESIGN.md §6: "a reconcile pass over an unchanged
// store writes nothing; 100 pools × 10 Bindings on one master reconciled without falling behind
// a 30 s resync"; "a Binding created → Ready with its grant read back from the master ≤ 2 s
// p99"). A measured program, not a Google Benchmark: it drives a running `kvcache operator`
// through a real API server and a real Mooncake master, and computes every figure from the
// operator's /metrics (read before and after each phase), from its own watch of the objects,
// from the requests it sees reach the master, and from /proc/PID/status of the operator.
//
//   bench_reconcile --kubeconfig FILE --metrics-url URL --operator-pid PID
//                   --store-admin HOST:PORT --store-rpc HOST:PORT --kvcache BINARY --run-id ID
//                   [--pools 100] [--bindings-per-pool 10] [--namespaces 10] [--ceiling 256Ki]
//                   [--steady-seconds 70] [--singles 20] [--resync-seconds 30] [--writers 8]
//                   [--timeout-seconds 900] [--no-proxy] [--cleanup] [--json FILE]
//
// bench/controllers/run.sh brings up the control plane, the store and the operator (whose
// --selector is kvcache-bench.gpustack.ai/run=ID) and runs this. Every object it creates carries
// that label. Unless --no-proxy, the backend's Admin endpoint is a counting proxy in this
// process in front of the master's admin port, so the store requests of each phase are counted
// by method and path (the Client endpoint is the master's RPC address, unproxied). --cleanup
// deletes the run's objects at the end, while the operator can still release them through the
// proxy (run.sh passes it on a reused cluster).
//
// Phases:
//   1. cold: the backend, the pools, then the Bindings, created by --writers threads as fast as
//      the API server takes them; until every pool and Binding is Ready (a Binding with its
//      grant: QuotaGranted=True and status.effectiveQuota set, observedGeneration current), the
//      master's ledger holds every domain, and the operator has gone quiet (no status write
//      for 5 s, its pool queue empty).
//   2. steady: --steady-seconds with nothing changed.
//   3. singles: --singles Bindings created one at a time in the steady cluster (each in another
//      pool), each timed from the create request to the watch event that shows it Ready with
//      its grant, then followed until the operator is quiet again.
//   4. the operator's peak RSS (VmHWM) over the run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kvc/common/quantity.h"
#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/object.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/informer.h"
#include "kvc/store/http.h"
#include "parallel.h"
#include "proc_status.h"

namespace kvc::bench {
namespace {

using Steady = std::chrono::steady_clock;

double seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

[[noreturn]] void die(const std::string& message) {
  std::cerr << "bench_reconcile: " << message << std::endl;
  std::exit(1);
}

void say(const std::string& message) { std::cerr << "[bench_reconcile] " << message << std::endl; }

// ---- Prometheus text format ----

using Labels = std::map<std::string, std::string>;
using Match = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

bool matches(const Sample& sample, const Match& match) {
  for (const auto& [key, value] : match) {
    auto it = sample.labels.find(key);
    if (it == sample.labels.end() || it->second != value) {
      return false;
    }
  }
  return true;
}

// CPU time of the operator process and of the whole machine, read with each scrape.
struct CpuTimes {
  double operator_seconds = 0;  // utime + stime of the operator
  double machine_busy = 0;      // all CPUs, jiffies not idle or iowait
  double machine_total = 0;
};

CpuTimes cpuTimes(int pid) {
  CpuTimes t;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    if (paren != std::string::npos) {
      std::istringstream fields(text.substr(paren + 2));
      std::string field;
      double utime = 0;
      double stime = 0;
      for (int i = 3; fields >> field; ++i) {  // field 3 is the state
        if (i == 14) {
          utime = std::atof(field.c_str());
        } else if (i == 15) {
          stime = std::atof(field.c_str());
          break;
        }
      }
      t.operator_seconds = (utime + stime) / tick;
    }
  }
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  double value = 0;
  for (int i = 0; i < 8 && in >> value; ++i) {  // user nice system idle iowait irq softirq steal
    t.machine_total += value;
    if (i != 3 && i != 4) {
      t.machine_busy += value;
    }
  }
  return t;
}

struct Scrape {
  Steady::time_point at;
  CpuTimes cpu;
  std::vector<Sample> samples;

  double sum(std::string_view name, const Match& match = {}) const {
    double total = 0;
    for (const Sample& s : samples) {
      if (s.name == name && matches(s, match)) {
        total += s.value;
      }
    }
    return total;
  }
  // Sums grouped by the values of `keys` (joined by " ").
  std::map<std::string, double> by(std::string_view name, const std::vector<std::string>& keys,
                                   const Match& match = {}) const {
    std::map<std::string, double> out;
    for (const Sample& s : samples) {
      if (s.name != name || !matches(s, match)) {
        continue;
      }
      std::string group;
      for (const std::string& key : keys) {
        auto it = s.labels.find(key);
        group += (group.empty() ? "" : " ") + (it == s.labels.end() ? "" : it->second);
      }
      out[group] += s.value;
    }
    return out;
  }
};

Scrape parseScrape(const std::string& text) {
  Scrape scrape;
  scrape.at = Steady::now();
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    Sample sample;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') {
      ++i;
    }
    sample.name = line.substr(0, i);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          break;
        }
        const std::string key = line.substr(i, eq - i);
        std::string value;
        std::size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) {
            ++j;
            value += line[j] == 'n' ? '\n' : line[j];
          } else {
            value += line[j];
          }
        }
        sample.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') {
          ++i;
        }
      }
      ++i;  // '}'
    }
    while (i < line.size() && line[i] == ' ') {
      ++i;
    }
    if (i >= line.size()) {
      continue;
    }
    sample.value = std::strtod(line.c_str() + i, nullptr);
    scrape.samples.push_back(std::move(sample));
  }
  return scrape;
}

std::map<std::string, double> deltaBy(const Scrape& before, const Scrape& after,
                                      std::string_view name, const std::vector<std::string>& keys,
                                      const Match& match = {}) {
  std::map<std::string, double> out = after.by(name, keys, match);
  for (const auto& [group, value] : before.by(name, keys, match)) {
    out[group] -= value;
  }
  for (auto it = out.begin(); it != out.end();) {
    it = std::abs(it->second) < 1e-9 ? out.erase(it) : std::next(it);
  }
  return out;
}

double delta(const Scrape& before, const Scrape& after, std::string_view name,
             const Match& match = {}) {
  return after.sum(name, match) - before.sum(name, match);
}

// histogram_quantile() over the change of a histogram's buckets between two scrapes: linear
// interpolation inside the bucket holding the rank (Prometheus' own estimate). An answer in the
// +Inf bucket is reported as the largest finite bound.
double histogramQuantile(double q, const Scrape& before, const Scrape& after,
                         const std::string& name, const Match& match) {
  std::map<double, double> cumulative;  // le -> count
  for (const Scrape* scrape : {&before, &after}) {
    for (const Sample& s : scrape->samples) {
      if (s.name != name + "_bucket" || !matches(s, match)) {
        continue;
      }
      auto le = s.labels.find("le");
      if (le == s.labels.end()) {
        continue;
      }
      const double bound =
          le->second == "+Inf" ? INFINITY : std::strtod(le->second.c_str(), nullptr);
      cumulative[bound] += scrape == &after ? s.value : -s.value;
    }
  }
  if (cumulative.empty() || cumulative.rbegin()->second <= 0) {
    return NAN;
  }
  const double total = cumulative.rbegin()->second;
  const double rank = q * total;
  double lower = 0;
  double below = 0;
  for (const auto& [bound, count] : cumulative) {
    if (count >= rank) {
      if (std::isinf(bound)) {
        return lower;
      }
      if (count == below) {
        return bound;
      }
      return lower + (bound - lower) * (rank - below) / (count - below);
    }
    lower = bound;
    below = count;
  }
  return lower;
}

class MetricsEndpoint {
public:
  explicit MetricsEndpoint(std::string url)
      : transport_(store::newCurlTransport()), url_(std::move(url)) {}

  Scrape scrape() const {
    store::HttpRequest request;
    request.url = url_;
    request.timeout = std::chrono::milliseconds(10000);
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto response = transport_->send(request);
      if (response.ok() && response->status == 200) {
        return parseScrape(response->body);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    die("cannot read " + url_);
  }

private:
  std::shared_ptr<store::HttpTransport> transport_;
  std::string url_;
};

// ---- a counting TCP proxy in front of the master's admin port ----

class CountingProxy {
public:
  struct Figures {
    std::uint64_t requests = 0;
    double first_byte_seconds = 0;  // summed: request sent -> first byte of the answer
  };
  using Counts = std::map<std::string, Figures>;  // "METHOD /path" (query dropped)

  void start(const std::string& upstream) {
    const auto colon = upstream.rfind(':');
    upstream_host_ = upstream.substr(0, colon);
    upstream_port_ = std::atoi(upstream.c_str() + colon + 1);
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 128) != 0) {
      die(std::string("proxy: cannot listen: ") + std::strerror(errno));
    }
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    std::thread([this] { acceptLoop(); }).detach();
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  Counts counts() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return counts_;
  }

  static Counts minus(const Counts& after, const Counts& before) {
    Counts out = after;
    for (const auto& [key, figures] : before) {
      out[key].requests -= figures.requests;
      out[key].first_byte_seconds -= figures.first_byte_seconds;
    }
    for (auto it = out.begin(); it != out.end();) {
      it = it->second.requests == 0 ? out.erase(it) : std::next(it);
    }
    return out;
  }

private:
  struct Connection {
    int client = -1;
    int upstream = -1;
    std::mutex mutex;
    std::deque<std::pair<std::string, Steady::time_point>> pending;
  };

  void acceptLoop() {
    while (true) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) {
        if (errno == EINTR) {
          continue;
        }
        return;
      }
      std::thread([this, fd] { serve(fd); }).detach();
    }
  }

  void record(const std::string& key, double first_byte) {
    std::lock_guard<std::mutex> guard(mutex_);
    Figures& f = counts_[key];
    ++f.requests;
    f.first_byte_seconds += first_byte;
  }

  void serve(int client_fd) {
    auto conn = std::make_shared<Connection>();
    conn->client = client_fd;
    conn->upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(upstream_port_));
    ::inet_pton(AF_INET, upstream_host_.c_str(), &addr.sin_addr);
    if (::connect(conn->upstream, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(conn->upstream);
      ::close(client_fd);
      return;
    }
    int one = 1;
    ::setsockopt(conn->upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ::setsockopt(client_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::thread answers([this, conn] {
      char buffer[65536];
      while (true) {
        const ssize_t n = ::recv(conn->upstream, buffer, sizeof(buffer), 0);
        if (n <= 0) {
          break;
        }
        {
          std::lock_guard<std::mutex> guard(conn->mutex);
          if (!conn->pending.empty()) {
            auto [key, sent] = conn->pending.front();
            conn->pending.pop_front();
            record(key, seconds(Steady::now() - sent));
          }
        }
        if (!sendAll(conn->client, buffer, static_cast<std::size_t>(n))) {
          break;
        }
      }
      ::shutdown(conn->client, SHUT_WR);
    });
    // Requests: parse the request line and Content-Length to find where each request ends.
    std::string head;
    std::uint64_t body_left = 0;
    char buffer[65536];
    while (true) {
      const ssize_t n = ::recv(client_fd, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        break;
      }
      for (ssize_t i = 0; i < n;) {
        if (body_left > 0) {
          const auto take = std::min<std::uint64_t>(body_left, static_cast<std::uint64_t>(n - i));
          body_left -= take;
          i += static_cast<ssize_t>(take);
          continue;
        }
        head.push_back(buffer[i++]);
        if (head.size() >= 4 && head.compare(head.size() - 4, 4, "\r\n\r\n") == 0) {
          const std::string line = head.substr(0, head.find("\r\n"));
          const auto sp1 = line.find(' ');
          const auto sp2 = line.find(' ', sp1 + 1);
          std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
          target = target.substr(0, target.find('?'));
          std::string lower = head;
          std::transform(lower.begin(), lower.end(), lower.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
          const auto cl = lower.find("\r\ncontent-length:");
          body_left =
              cl == std::string::npos ? 0 : std::strtoull(lower.c_str() + cl + 17, nullptr, 10);
          std::lock_guard<std::mutex> guard(conn->mutex);
          conn->pending.emplace_back(line.substr(0, sp1) + " " + target, Steady::now());
          head.clear();
        }
      }
      if (!sendAll(conn->upstream, buffer, static_cast<std::size_t>(n))) {
        break;
      }
    }
    ::shutdown(conn->upstream, SHUT_WR);
    answers.join();
    ::close(conn->upstream);
    ::close(client_fd);
  }

  static bool sendAll(int fd, const char* data, std::size_t size) {
    while (size > 0) {
      const ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
      if (sent <= 0) {
        if (sent < 0 && errno == EINTR) {
          continue;
        }
        return false;
      }
      data += sent;
      size -= static_cast<std::size_t>(sent);
    }
    return true;
  }

  std::string upstream_host_;
  int upstream_port_ = 0;
  int listen_fd_ = -1;
  int port_ = 0;
  mutable std::mutex mutex_;
  Counts counts_;
};

// ---- watching the objects become Ready ----

bool conditionTrue(const Json& object, std::string_view type) {
  const Json* status = object.contains("status") ? &object["status"] : nullptr;
  if (status == nullptr || !status->contains("conditions") || !(*status)["conditions"].is_array()) {
    return false;
  }
  for (const Json& c : (*status)["conditions"]) {
    if (c.value("type", std::string()) == type) {
      return c.value("status", std::string()) == "True";
    }
  }
  return false;
}

bool phaseReadyAndCurrent(const Json& object) {
  if (!object.contains("status") || !object["status"].is_object()) {
    return false;
  }
  const Json& status = object["status"];
  return status.value("phase", std::string()) == "Ready" &&
         status.value("observedGeneration", std::int64_t{-1}) == kube::object::generation(object);
}

bool poolReady(const Json& pool) { return phaseReadyAndCurrent(pool); }

// Ready with its grant: the phase, QuotaGranted=True and status.effectiveQuota read back.
bool bindingReady(const Json& binding) {
  return phaseReadyAndCurrent(binding) && binding["status"].contains("effectiveQuota") &&
         conditionTrue(binding, "QuotaGranted");
}

class ReadyTracker {
public:
  ReadyTracker(kube::ClientPtr client, const kube::ResourceType& resource,
               const std::string& selector, bool (*ready)(const Json&))
      : ready_(ready), informer_(std::move(client), options(resource, selector)) {
    runtime::EventHandler handler;
    handler.on_add = [this](const runtime::ObjectPtr& object, bool) { note(*object); };
    handler.on_update = [this](const runtime::ObjectPtr&, const runtime::ObjectPtr& object) {
      note(*object);
    };
    handler.on_delete = [this](const runtime::ObjectPtr& object, bool) {
      std::lock_guard<std::mutex> guard(mutex_);
      ready_now_.erase(kube::object::key(*object));
    };
    informer_.addEventHandler(handler);
  }

  void start() {
    informer_.start();
    if (!informer_.waitForSync(std::chrono::seconds(60))) {
      die("the bench's informer of " + informer_.resource().plural + " did not sync");
    }
  }
  void stop() { informer_.stop(); }

  // Waits until at least `count` objects are Ready at once.
  bool waitCount(std::size_t count, Steady::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_until(lock, deadline, [&] { return ready_now_.size() >= count; });
  }
  // Waits until `key` is Ready; returns when it first was.
  std::optional<Steady::time_point> waitKey(const std::string& key, Steady::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_until(lock, deadline, [&] { return ready_now_.count(key) > 0; })) {
      return std::nullopt;
    }
    return first_ready_[key];
  }
  std::size_t readyCount() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return ready_now_.size();
  }
  Steady::time_point lastFirstReady() const {
    std::lock_guard<std::mutex> guard(mutex_);
    Steady::time_point last{};
    for (const auto& [key, at] : first_ready_) {
      last = std::max(last, at);
    }
    return last;
  }
  std::uint64_t updates() const { return updates_.load(); }
  const runtime::Cache& cache() const { return informer_.cache(); }

private:
  static runtime::InformerOptions options(const kube::ResourceType& resource,
                                          const std::string& selector) {
    runtime::InformerOptions o;
    o.resource = resource;
    o.label_selector = selector;
    return o;
  }

  void note(const Json& object) {
    const auto now = Steady::now();
    ++updates_;
    const std::string key = kube::object::key(object);
    std::lock_guard<std::mutex> guard(mutex_);
    if (ready_(object)) {
      first_ready_.try_emplace(key, now);
      ready_now_.insert(key);
    } else {
      ready_now_.erase(key);
    }
    cv_.notify_all();
  }

  bool (*ready_)(const Json&);
  runtime::Informer informer_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, Steady::time_point> first_ready_;
  std::set<std::string> ready_now_;
  std::atomic<std::uint64_t> updates_{0};
};

// ---- the operator process, the ledger ----

long procStatusKib(int pid, const char* field) {
  return kvc::testing::procStatusKib(std::to_string(pid), field);
}

struct Ledger {
  bool read = false;
  int tenants = 0;        // explicit entries whose tenantId has the run's prefix
  int granted_asked = 0;  // ... whose effective grant equals the requested bytes
  int all_tenants = 0;
};

// The master's ledger as `kvcache store status --admin ADDR -o json` reports it.
Ledger readLedger(const std::string& kvcache, const std::string& admin, const std::string& prefix) {
  Ledger ledger;
  const std::string command =
      "'" + kvcache + "' store status --admin " + admin + " -o json 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return ledger;
  }
  std::string text;
  char buffer[65536];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    text.append(buffer, n);
  }
  ::pclose(pipe);
  Json status = Json::parse(text, nullptr, false);
  if (status.is_discarded() || !status.contains("ledger")) {
    return ledger;
  }
  ledger.read = true;
  for (const Json& tenant : status["ledger"].value("tenants", Json::array())) {
    ++ledger.all_tenants;
    if (!tenant.value("explicitPolicy", false) ||
        tenant.value("tenantId", std::string()).rfind(prefix, 0) != 0) {
      continue;
    }
    ++ledger.tenants;
    if (tenant.value("effectiveBytes", std::int64_t{-1}) ==
        tenant.value("requestedBytes", std::int64_t{-2})) {
      ++ledger.granted_asked;
    }
  }
  return ledger;
}

using kvc::testing::parallel;

double percentile(std::vector<double> v, double q) {  // nearest rank
  if (v.empty()) {
    return NAN;
  }
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string fmt(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string joinCounts(const std::map<std::string, double>& counts) {
  std::string out;
  for (const auto& [key, value] : counts) {
    out += (out.empty() ? "" : ", ") + key + " " + fmt("%.0f", value);
  }
  return out.empty() ? "none" : out;
}

Json countsJson(const std::map<std::string, double>& counts) {
  Json out = Json::object();
  for (const auto& [key, value] : counts) {
    out[key] = value;
  }
  return out;
}

// ---- the benchmark ----

struct Options {
  std::string kubeconfig;
  std::string metrics_url;
  int operator_pid = 0;
  std::string store_admin;
  std::string store_rpc;
  std::string kvcache;
  std::string run_id;
  int pools = 100;
  int bindings_per_pool = 10;
  int namespaces = 10;
  std::string ceiling = "256Ki";
  int steady_seconds = 70;
  int singles = 20;
  int resync_seconds = 30;
  int writers = 8;
  int timeout_seconds = 900;
  bool proxy = true;
  bool cleanup = false;
  std::string json_file;
};

constexpr const char* kRunLabel = "kvcache-bench.gpustack.ai/run";
constexpr const char* kPoolController = "kvcachepool";
constexpr const char* kBackendController = "kvcachebackend";

// What one phase did, from two scrapes (and the proxy's counts).
struct PhaseFigures {
  double wall_seconds = 0;
  double pool_passes = 0;
  double backend_passes = 0;
  std::map<std::string, double> pool_results;   // result -> passes
  std::map<std::string, double> status_writes;  // "resource outcome" -> n
  double written = 0;
  std::map<std::string, double> requests;  // "METHOD resource" -> n (all codes)
  std::map<std::string, double> writes;    // PUT/PATCH/POST/DELETE, "METHOD resource"
  double object_writes = 0;                // writes, leases excluded
  double lease_writes = 0;
  double gets = 0;
  double pass_seconds_sum = 0;
  double pass_p50 = NAN;
  double pass_p99 = NAN;
  double pool_queue_adds = 0;
  double pool_retries = 0;
  CountingProxy::Counts store;
  double store_pool_requests = 0;  // requests of the pool controller (see below)
  double operator_cpu_seconds = 0;
  double machine_busy = 0;  // share of all the machine's CPUs busy (any process)

  Json toJson() const {
    Json store_json = Json::object();
    for (const auto& [key, f] : store) {
      store_json[key] = {
          {"requests", f.requests},
          {"mean_first_byte_ms", 1000.0 * f.first_byte_seconds / static_cast<double>(f.requests)}};
    }
    return {{"wall_seconds", wall_seconds},
            {"pool_passes", pool_passes},
            {"backend_passes", backend_passes},
            {"pool_results", countsJson(pool_results)},
            {"status_writes", countsJson(status_writes)},
            {"requests", countsJson(requests)},
            {"object_writes", object_writes},
            {"lease_writes", lease_writes},
            {"pass_seconds_sum", pass_seconds_sum},
            {"pass_p50_seconds", std::isnan(pass_p50) ? Json() : Json(pass_p50)},
            {"pass_p99_seconds", std::isnan(pass_p99) ? Json() : Json(pass_p99)},
            {"pool_queue_adds", pool_queue_adds},
            {"pool_retries", pool_retries},
            {"store_requests", store_json},
            {"store_pool_requests", store_pool_requests},
            {"operator_cpu_seconds", operator_cpu_seconds},
            {"machine_cpu_busy", machine_busy}};
  }
};

PhaseFigures figures(const Scrape& a, const Scrape& b, const CountingProxy::Counts& store) {
  PhaseFigures f;
  f.wall_seconds = seconds(b.at - a.at);
  const Match pool = {{"controller", kPoolController}};
  f.pool_passes = delta(a, b, "controller_runtime_reconcile_total", pool);
  f.backend_passes =
      delta(a, b, "controller_runtime_reconcile_total", {{"controller", kBackendController}});
  f.pool_results = deltaBy(a, b, "controller_runtime_reconcile_total", {"result"}, pool);
  f.status_writes = deltaBy(a, b, "kvcache_status_writes_total", {"resource", "outcome"});
  f.written = delta(a, b, "kvcache_status_writes_total", {{"outcome", "written"}});
  f.requests = deltaBy(a, b, "rest_client_requests_total", {"method", "resource"});
  for (const auto& [key, n] : f.requests) {
    const std::string method = key.substr(0, key.find(' '));
    const std::string resource = key.substr(key.find(' ') + 1);
    if (method == "GET") {
      f.gets += n;
    }
    if (method == "PUT" || method == "PATCH" || method == "POST" || method == "DELETE") {
      f.writes[key] = n;
      (resource == "leases" ? f.lease_writes : f.object_writes) += n;
    }
  }
  f.pass_seconds_sum = delta(a, b, "controller_runtime_reconcile_time_seconds_sum", pool);
  f.pass_p50 = histogramQuantile(0.50, a, b, "controller_runtime_reconcile_time_seconds", pool);
  f.pass_p99 = histogramQuantile(0.99, a, b, "controller_runtime_reconcile_time_seconds", pool);
  f.pool_queue_adds = delta(a, b, "workqueue_adds_total", {{"name", kPoolController}});
  f.pool_retries = delta(a, b, "workqueue_retries_total", {{"name", kPoolController}});
  f.store = store;
  f.operator_cpu_seconds = b.cpu.operator_seconds - a.cpu.operator_seconds;
  const double total = b.cpu.machine_total - a.cpu.machine_total;
  f.machine_busy = total > 0 ? (b.cpu.machine_busy - a.cpu.machine_busy) / total : 0;
  // The backend controller reads /health, then /metrics and /get_segments_detail; the pool
  // controller reads the ledger and /metrics and writes the ledger. Its share of /metrics is
  // what the backend passes (one /health each) leave.
  double health = 0;
  for (const auto& [key, counted] : store) {
    if (key == "GET /health") {
      health = static_cast<double>(counted.requests);
    } else if (key.find("/api/v1/tenant_quotas") != std::string::npos) {
      f.store_pool_requests += static_cast<double>(counted.requests);
    }
  }
  if (auto it = store.find("GET /metrics"); it != store.end()) {
    f.store_pool_requests += std::max(0.0, static_cast<double>(it->second.requests) - health);
  }
  return f;
}

class Bench {
public:
  explicit Bench(Options options) : o_(std::move(options)), metrics_(o_.metrics_url) {}

  int run() {
    auto config = kube::loadKubeconfig(o_.kubeconfig);
    if (!config.ok()) {
      die(config.status().message());
    }
    auto client = kube::Client::create(*config);
    if (!client.ok()) {
      die(client.status().message());
    }
    client_ = *client;
    prefix_ = "rbench-" + o_.run_id;
    selector_ = std::string(kRunLabel) + "=" + o_.run_id;
    auto bytes = parseQuantityBytes(o_.ceiling);
    if (!bytes.ok()) {
      die("--ceiling: " + bytes.status().message());
    }
    ceiling_bytes_ = *bytes;
    admin_endpoint_ = o_.store_admin;
    if (o_.proxy) {
      proxy_.start(o_.store_admin);
      admin_endpoint_ = proxy_.address();
      say("counting proxy " + admin_endpoint_ + " -> master admin " + o_.store_admin);
    }
    kube::Api namespaces(client_, kube::resources::namespaces());
    for (int k = 0; k < o_.namespaces; ++k) {
      auto created = namespaces.create(
          Json{{"metadata", {{"name", nsName(k)}, {"labels", {{kRunLabel, o_.run_id}}}}}});
      if (!created.ok() && !created.error().isAlreadyExists()) {
        die("creating namespace " + nsName(k) + ": " + created.error().message());
      }
    }
    pools_ = std::make_unique<ReadyTracker>(client_, kube::resources::kvCachePools(), selector_,
                                            &poolReady);
    bindings_ = std::make_unique<ReadyTracker>(client_, kube::resources::kvCachePoolBindings(),
                                               selector_, &bindingReady);
    pools_->start();
    bindings_->start();
    sampler_ = std::thread([this] { sample(); });

    Json result = {{"run_id", o_.run_id},
                   {"pools", o_.pools},
                   {"bindings_per_pool", o_.bindings_per_pool},
                   {"namespaces", o_.namespaces},
                   {"ceiling", o_.ceiling},
                   {"resync_seconds", o_.resync_seconds},
                   {"proxy", o_.proxy}};
    result["cold"] = cold();
    result["steady"] = steady();
    result["singles"] = singles();
    const long hwm = procStatusKib(o_.operator_pid, "VmHWM");
    const long rss = procStatusKib(o_.operator_pid, "VmRSS");
    result["operator_rss_kib"] = rss;
    result["operator_peak_rss_kib"] = hwm;
    result["operator_rss_sampled_max_kib"] = max_rss_kib_.load();
    stop_ = true;
    sampler_.join();
    report(result);
    if (!o_.json_file.empty()) {
      std::ofstream(o_.json_file) << result.dump(2) << "\n";
    }
    std::cout << "RESULT " << result.dump() << std::endl;
    if (o_.cleanup) {
      cleanup();
    }
    pools_->stop();
    bindings_->stop();
    return 0;
  }

private:
  std::string nsName(int k) const { return prefix_ + "-n" + std::to_string(k); }
  std::string poolName(int i) const { return prefix_ + "-p" + std::to_string(i); }
  std::string backendName() const { return prefix_; }
  std::string bindingNamespace(int pool) const { return nsName(pool % o_.namespaces); }

  Json labels() const { return {{kRunLabel, o_.run_id}}; }

  Json binding(int pool, const std::string& name, const std::string& domain) const {
    return {
        {"apiVersion", "worker.gpustack.ai/v1"},
        {"kind", "KVCachePoolBinding"},
        {"metadata", {{"name", name}, {"namespace", bindingNamespace(pool)}, {"labels", labels()}}},
        {"spec",
         {{"poolRef", {{"name", poolName(pool)}}},
          {"quota", {{"ceiling", o_.ceiling}}},
          {"domain", {{"name", domain}, {"blockSize", 64}, {"dtype", "bfloat16"}}}}}};
  }

  // The operator's queue and workers, its RSS, sampled every 500 ms for the whole run.
  void sample() {
    while (!stop_) {
      const long rss = procStatusKib(o_.operator_pid, "VmRSS");
      if (rss < 0) {
        operator_gone_ = true;
      }
      long seen = max_rss_kib_.load();
      while (rss > seen && !max_rss_kib_.compare_exchange_weak(seen, rss)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  Scrape scrape() {
    if (operator_gone_ || procStatusKib(o_.operator_pid, "VmRSS") < 0) {
      die("the operator (pid " + std::to_string(o_.operator_pid) + ") is gone");
    }
    Scrape s = metrics_.scrape();
    s.cpu = cpuTimes(o_.operator_pid);
    return s;
  }

  struct Quiet {
    Scrape end;                     // the scrape that ended the wait
    Steady::time_point last_write;  // when a status write (or a failed pass) was last seen
    bool reached = false;
  };

  // Until the operator has written no status (and failed no pass) for `quiet` and its pool
  // queue holds at most `depth_limit` keys; tracks the deepest queue seen.
  Quiet waitQuiet(std::chrono::seconds quiet, Steady::time_point deadline, double* max_depth,
                  double depth_limit = 0) {
    auto writes = [](const Scrape& s) {
      return s.sum("kvcache_status_writes_total", {{"outcome", "written"}}) +
             s.sum("kvcache_status_writes_total", {{"outcome", "conflict"}}) +
             s.sum("controller_runtime_reconcile_total", {{"result", "error"}});
    };
    Quiet q;
    Scrape mark = scrape();
    q.last_write = mark.at;
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      Scrape now = scrape();
      const double depth = now.sum("workqueue_depth", {{"name", kPoolController}});
      if (max_depth != nullptr) {
        *max_depth = std::max(*max_depth, depth);
      }
      if (writes(now) != writes(mark)) {
        q.last_write = now.at;
        mark = now;
      }
      if (depth <= depth_limit && now.at - q.last_write >= quiet) {
        q.reached = true;
        q.end = std::move(now);
        return q;
      }
      if (now.at >= deadline) {
        say("the operator did not go quiet before the deadline");
        q.end = std::move(now);
        return q;
      }
    }
  }

  Json cold() {
    const int bindings = o_.pools * o_.bindings_per_pool;
    say("phase 1 (cold): 1 backend, " + std::to_string(o_.pools) + " pools, " +
        std::to_string(bindings) + " Bindings in " + std::to_string(o_.namespaces) +
        " namespaces, ceiling " + o_.ceiling);
    const Scrape before = scrape();
    const auto store_before = proxy_.counts();
    const long rss_before = procStatusKib(o_.operator_pid, "VmRSS");
    const auto t0 = Steady::now();
    const auto deadline = t0 + std::chrono::seconds(o_.timeout_seconds);

    kube::Api backends(client_, kube::resources::kvCacheBackends());
    auto backend = backends.create(
        Json{{"apiVersion", "worker.gpustack.ai/v1"},
             {"kind", "KVCacheBackend"},
             {"metadata", {{"name", backendName()}, {"labels", labels()}}},
             {"spec",
              {{"connection",
                {{"external",
                  {{"endpoints",
                    Json::array({{{"name", "Client"}, {"address", o_.store_rpc}},
                                 {{"name", "Admin"}, {"address", admin_endpoint_}}})}}}}}}}});
    if (!backend.ok()) {
      die("creating the backend: " + backend.error().message());
    }
    std::atomic<int> failures{0};
    kube::Api pools(client_, kube::resources::kvCachePools());
    const std::string total = std::to_string(ceiling_bytes_ * o_.bindings_per_pool);
    parallel(o_.pools, o_.writers, [&](int i) {
      auto created = pools.create(Json{
          {"apiVersion", "worker.gpustack.ai/v1"},
          {"kind", "KVCachePool"},
          {"metadata", {{"name", poolName(i)}, {"labels", labels()}}},
          {"spec", {{"backends", Json::array({backendName()})}, {"quota", {{"total", total}}}}}});
      if (!created.ok() && failures++ < 3) {
        say("creating pool " + poolName(i) + ": " + created.error().message());
      }
    });
    const auto pools_created = Steady::now();
    kube::Api binding_api(client_, kube::resources::kvCachePoolBindings());
    parallel(bindings, o_.writers, [&](int n) {
      const int i = n / o_.bindings_per_pool;
      const int j = n % o_.bindings_per_pool;
      const std::string name = "p" + std::to_string(i) + "-b" + std::to_string(j);
      const std::string domain = prefix_ + "-" + std::to_string(i) + "-" + std::to_string(j);
      auto created = binding_api.inNamespace(bindingNamespace(i)).create(binding(i, name, domain));
      if (!created.ok() && failures++ < 3) {
        say("creating Binding " + name + ": " + created.error().message());
      }
    });
    const auto created = Steady::now();
    if (failures > 0) {
      die(std::to_string(failures.load()) + " creates failed");
    }
    say("created in " + fmt("%.1f", seconds(created - t0)) + " s; waiting for Ready");

    double max_depth = 0;
    std::thread depth_watch([&] {
      while (pools_->readyCount() < static_cast<std::size_t>(o_.pools) ||
             bindings_->readyCount() < static_cast<std::size_t>(bindings)) {
        if (Steady::now() > deadline) {
          return;
        }
        const Scrape s = scrape();
        max_depth = std::max(max_depth, s.sum("workqueue_depth", {{"name", kPoolController}}));
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    });
    const bool all_pools = pools_->waitCount(static_cast<std::size_t>(o_.pools), deadline);
    const bool all_bindings = bindings_->waitCount(static_cast<std::size_t>(bindings), deadline);
    depth_watch.join();
    const auto ready_seen = Steady::now();
    const auto last_ready = std::max(pools_->lastFirstReady(), bindings_->lastFirstReady());
    if (!all_pools || !all_bindings) {
      say("NOT CONVERGED: " + std::to_string(pools_->readyCount()) + "/" +
          std::to_string(o_.pools) + " pools and " + std::to_string(bindings_->readyCount()) + "/" +
          std::to_string(bindings) + " Bindings Ready at the deadline");
    }
    const Scrape at_ready = scrape();
    const auto store_at_ready = proxy_.counts();
    const Ledger ledger = readLedger(o_.kvcache, o_.store_admin, prefix_);
    const auto ledger_read = Steady::now();
    const Quiet settled =
        waitQuiet(std::chrono::seconds(5), ready_seen + std::chrono::seconds(300), &max_depth);
    const Scrape& quiet = settled.end;
    const auto store_quiet = proxy_.counts();
    const PhaseFigures to_ready =
        figures(before, at_ready, CountingProxy::minus(store_at_ready, store_before));
    const PhaseFigures to_quiet =
        figures(before, quiet, CountingProxy::minus(store_quiet, store_before));
    cold_ = {{"converged", all_pools && all_bindings},
             {"creates_seconds", seconds(created - t0)},
             {"pools_created_seconds", seconds(pools_created - t0)},
             {"creates_per_second", (1 + o_.pools + bindings) / seconds(created - t0)},
             {"all_ready_seconds", seconds(last_ready - t0)},
             {"all_ready_seen_seconds", seconds(ready_seen - t0)},
             {"ledger_read", ledger.read},
             {"ledger_tenants", ledger.tenants},
             {"ledger_granted_as_asked", ledger.granted_asked},
             {"ledger_all_tenants", ledger.all_tenants},
             {"ledger_checked_seconds", seconds(ledger_read - t0)},
             {"quiet_reached", settled.reached},
             {"last_write_seconds", seconds(settled.last_write - t0)},
             {"quiet_seconds", seconds(quiet.at - t0)},
             {"max_pool_queue_depth", max_depth},
             {"operator_rss_before_kib", rss_before},
             {"operator_rss_after_kib", procStatusKib(o_.operator_pid, "VmRSS")},
             {"to_ready", to_ready.toJson()},
             {"to_quiet", to_quiet.toJson()}};
    cold_ready_ = to_ready;
    cold_quiet_ = to_quiet;
    say("cold: all Ready " + fmt("%.1f", seconds(last_ready - t0)) +
        " s after the first create; "
        "ledger holds " +
        std::to_string(ledger.tenants) + " of the run's domains; last status write at " +
        fmt("%.1f", seconds(settled.last_write - t0)) + " s; queue drained at " +
        fmt("%.1f", seconds(quiet.at - t0)) + " s");
    return cold_;
  }

  Json steady() {
    say("phase 2 (steady): " + std::to_string(o_.steady_seconds) + " s with nothing changed");
    const Scrape before = scrape();
    const auto store_before = proxy_.counts();
    const std::uint64_t pool_events = pools_->updates();
    const std::uint64_t binding_events = bindings_->updates();
    const auto end = before.at + std::chrono::seconds(o_.steady_seconds);
    double max_depth = 0;
    double max_delayed = 0;
    double depth_sum = 0;
    int depth_samples = 0;
    double busy_workers = 0;
    Json depths = Json::array();  // the pool queue's depth, every second
    while (Steady::now() < end) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const Scrape s = scrape();
      const double depth = s.sum("workqueue_depth", {{"name", kPoolController}});
      depths.push_back(depth);
      depth_sum += depth;
      ++depth_samples;
      busy_workers += s.sum("controller_runtime_active_workers", {{"controller", kPoolController}});
      max_depth = std::max(max_depth, depth);
      max_delayed = std::max(max_delayed, s.sum("workqueue_delayed", {{"name", kPoolController}}));
    }
    const Scrape after = scrape();
    steady_ = figures(before, after, CountingProxy::minus(proxy_.counts(), store_before));
    const double expected = o_.pools * steady_.wall_seconds / o_.resync_seconds;
    steady_json_ = steady_.toJson();
    steady_json_["expected_passes_at_resync"] = expected;
    steady_json_["max_pool_queue_depth"] = max_depth;
    steady_json_["max_pool_queue_delayed"] = max_delayed;
    steady_json_["mean_pool_queue_depth"] = depth_sum / std::max(1, depth_samples);
    steady_json_["mean_active_pool_workers"] = busy_workers / std::max(1, depth_samples);
    steady_json_["pool_queue_depth_per_second"] = depths;
    steady_json_["pool_watch_events"] = pools_->updates() - pool_events;
    steady_json_["binding_watch_events"] = bindings_->updates() - binding_events;
    steady_json_["operator_rss_kib"] = procStatusKib(o_.operator_pid, "VmRSS");
    say("steady: " + fmt("%.0f", steady_.pool_passes) + " pool passes (" + fmt("%.0f", expected) +
        " expected at one per pool per resync), " + fmt("%.0f", steady_.written) +
        " status writes, " + fmt("%.0f", steady_.object_writes) + " object writes");
    return steady_json_;
  }

  Json singles() {
    Json out = Json::array();
    if (o_.singles <= 0) {
      return out;
    }
    say("phase 3 (singles): " + std::to_string(o_.singles) +
        " Bindings created one at a time in the steady cluster");
    kube::Api binding_api(client_, kube::resources::kvCachePoolBindings());
    for (int k = 0; k < o_.singles; ++k) {
      const int pool = (k * o_.pools) / o_.singles;
      const std::string name = "single-" + std::to_string(k);
      const std::string domain = prefix_ + "-single-" + std::to_string(k);
      const std::string key = bindingNamespace(pool) + "/" + name;
      const Scrape before = scrape();
      const auto store_before = proxy_.counts();
      const auto t0 = Steady::now();
      auto created =
          binding_api.inNamespace(bindingNamespace(pool)).create(binding(pool, name, domain));
      if (!created.ok()) {
        die("creating " + key + ": " + created.error().message());
      }
      const auto created_at = Steady::now();
      auto ready = bindings_->waitKey(key, t0 + std::chrono::seconds(120));
      // Followed until its pass and the passes it caused (the sibling pools, whose grants may
      // have moved) are done: no status write for 3 s and the queue back to where it was.
      const double depth_before = before.sum("workqueue_depth", {{"name", kPoolController}});
      const Quiet settled =
          waitQuiet(std::chrono::seconds(3), t0 + std::chrono::seconds(120), nullptr, depth_before);
      PhaseFigures f =
          figures(before, settled.end, CountingProxy::minus(proxy_.counts(), store_before));
      Json one = f.toJson();
      one["binding"] = key;
      one["create_request_ms"] = 1000.0 * seconds(created_at - t0);
      one["ready_ms"] = ready ? Json(1000.0 * seconds(*ready - t0)) : Json();
      one["settled"] = settled.reached;
      one["steady_rate_passes"] = steadyRate() * f.wall_seconds;
      out.push_back(one);
      singles_.push_back(f);
      single_ready_ms_.push_back(ready ? 1000.0 * seconds(*ready - t0) : INFINITY);
      say(key + ": " +
          (ready ? fmt("%.0f", 1000.0 * seconds(*ready - t0)) + " ms to Ready"
                 : std::string("NOT Ready within 120 s")) +
          "; until settled (" + fmt("%.1f", f.wall_seconds) + " s): " + fmt("%.0f", f.pool_passes) +
          " pool passes, " + fmt("%.0f", f.written) + " status writes, " +
          fmt("%.0f", f.object_writes) + " object writes");
    }
    const Ledger ledger = readLedger(o_.kvcache, o_.store_admin, prefix_);
    singles_ledger_ = ledger.tenants;
    return out;
  }

  // Deletes the run's objects while the operator (and this process's proxy, its way to the
  // master) still run: each Binding is released after its admission window, then the pools, then
  // the backend.
  void cleanup() {
    say("cleanup: deleting the run's Bindings, pools, backend and namespaces");
    const auto t0 = Steady::now();
    kube::Api binding_api(client_, kube::resources::kvCachePoolBindings());
    const std::vector<std::string> keys = bindings_->cache().listKeys();
    parallel(static_cast<int>(keys.size()), o_.writers, [&](int i) {
      const auto [namespace_name, name] = kube::object::splitKey(keys[static_cast<std::size_t>(i)]);
      static_cast<void>(binding_api.inNamespace(namespace_name).remove(name));
    });
    kube::Api pools(client_, kube::resources::kvCachePools());
    parallel(o_.pools, o_.writers, [&](int i) { static_cast<void>(pools.remove(poolName(i))); });
    const auto deadline = t0 + std::chrono::seconds(180);
    while ((bindings_->cache().size() > 0 || pools_->cache().size() > 0) &&
           Steady::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    say("cleanup: " + std::to_string(bindings_->cache().size()) + " Bindings and " +
        std::to_string(pools_->cache().size()) + " pools left after " +
        fmt("%.1f", seconds(Steady::now() - t0)) + " s");
    kube::Api backends(client_, kube::resources::kvCacheBackends());
    static_cast<void>(backends.remove(backendName()));
    for (int i = 0; i < 60; ++i) {
      auto left = backends.getOptional(backendName());
      if (left.ok() && !left->has_value()) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    kube::Api namespaces(client_, kube::resources::namespaces());
    for (int k = 0; k < o_.namespaces; ++k) {
      static_cast<void>(namespaces.remove(nsName(k)));
    }
  }

  double steadyRate() const { return steady_.pool_passes / std::max(1e-9, steady_.wall_seconds); }

  static std::string storeLine(const CountingProxy::Counts& counts) {
    std::string out;
    for (const auto& [key, f] : counts) {
      out += (out.empty() ? "" : ", ") + key + " " + std::to_string(f.requests);
    }
    return out.empty() ? "none" : out;
  }

  void report(const Json& result) {
    const PhaseFigures& r = cold_ready_;
    const PhaseFigures& q = cold_quiet_;
    const PhaseFigures& s = steady_;
    const int bindings = o_.pools * o_.bindings_per_pool;
    auto row = [](const std::string& what, const std::string& value) {
      std::printf("| %s | %s |\n", what.c_str(), value.c_str());
    };
    std::printf(
        "\n### Reconcile benchmark: %d pools x %d Bindings on one master (%d namespaces, "
        "ceiling %s, resync %d s)\n\n",
        o_.pools, o_.bindings_per_pool, o_.namespaces, o_.ceiling.c_str(), o_.resync_seconds);
    std::printf("| figure | value |\n|---|---|\n");
    row("**1. cold** creates (1 backend, pools, Bindings)",
        std::to_string(1 + o_.pools + bindings) + " in " +
            fmt("%.1f", cold_.value("creates_seconds", 0.0)) + " s (" +
            fmt("%.0f", cold_.value("creates_per_second", 0.0)) + "/s)");
    row("every pool and Binding Ready (with its grant)",
        cold_.value("converged", false)
            ? fmt("%.1f", cold_.value("all_ready_seconds", 0.0)) + " s after the first create"
            : std::string("NOT CONVERGED"));
    row("master's ledger", std::to_string(cold_.value("ledger_tenants", 0)) + " of " +
                               std::to_string(bindings) + " domains (" +
                               std::to_string(cold_.value("ledger_granted_as_asked", 0)) +
                               " granted as asked)");
    row("last status write / pool queue drained (5 s without a write)",
        fmt("%.1f", cold_.value("last_write_seconds", 0.0)) + " s / " +
            (cold_.value("quiet_reached", false)
                 ? fmt("%.1f", cold_.value("quiet_seconds", 0.0)) + " s"
                 : std::string("NOT within 300 s of Ready")));
    row("pool passes to Ready / to quiet",
        fmt("%.0f", r.pool_passes) + " / " + fmt("%.0f", q.pool_passes) + " (" +
            fmt("%.1f", q.pool_passes / std::max(1e-9, q.wall_seconds)) + " passes/s; results " +
            joinCounts(q.pool_results) + ")");
    row("pool passes per pool (to quiet)", fmt("%.1f", q.pool_passes / o_.pools));
    row("backend passes (to quiet)", fmt("%.0f", q.backend_passes));
    row("deepest pool queue", fmt("%.0f", cold_.value("max_pool_queue_depth", 0.0)));
    row("status writes (to quiet)", joinCounts(q.status_writes));
    row("API writes (to quiet)", joinCounts(q.writes));
    row("API GETs (to quiet)", fmt("%.0f", q.gets));
    row("API writes per pool pass", fmt("%.2f", q.object_writes / std::max(1.0, q.pool_passes)));
    row("status writes (written) per Binding or pool",
        fmt("%.2f", q.written / (o_.pools + bindings)));
    row("pass time (to quiet): mean / p50 / p99",
        fmt("%.1f", 1000 * q.pass_seconds_sum / std::max(1.0, q.pool_passes)) + " / " +
            fmt("%.1f", 1000 * q.pass_p50) + " / " + fmt("%.1f", 1000 * q.pass_p99) + " ms");
    row("operator CPU (to quiet)",
        fmt("%.1f", q.operator_cpu_seconds) + " s (" +
            fmt("%.1f", 1000 * q.operator_cpu_seconds / std::max(1.0, q.pool_passes)) +
            " ms per pool pass); machine " + fmt("%.0f", 100 * q.machine_busy) + " % busy");
    if (o_.proxy) {
      row("store requests (to quiet)", storeLine(q.store));
    }
    row("**2. steady** window", fmt("%.1f", s.wall_seconds) + " s");
    const double expected = steady_json_.value("expected_passes_at_resync", 0.0);
    row("pool passes", fmt("%.0f", s.pool_passes) + " (" +
                           fmt("%.2f", s.pool_passes / std::max(1e-9, s.wall_seconds)) +
                           " passes/s; " + fmt("%.0f", expected) +
                           " expected at one per pool per resync; results " +
                           joinCounts(s.pool_results) + ")");
    row("backend passes", fmt("%.0f", s.backend_passes));
    row("status writes",
        joinCounts(s.status_writes) + " (written: **" + fmt("%.0f", s.written) + "**)");
    row("API writes, Lease excluded",
        "**" + fmt("%.0f", s.object_writes) + "** (" + joinCounts(s.writes) + ")");
    row("Lease renewals (leader election)", fmt("%.0f", s.lease_writes));
    row("API GETs", fmt("%.0f", s.gets) + " (" +
                        fmt("%.2f", s.gets / std::max(1.0, s.pool_passes)) + " per pass)");
    row("watch events seen by the bench (pools / Bindings)",
        std::to_string(steady_json_.value("pool_watch_events", 0)) + " / " +
            std::to_string(steady_json_.value("binding_watch_events", 0)));
    row("pass time: mean / p50 / p99",
        fmt("%.1f", 1000 * s.pass_seconds_sum / std::max(1.0, s.pool_passes)) + " / " +
            fmt("%.1f", 1000 * s.pass_p50) + " / " + fmt("%.1f", 1000 * s.pass_p99) + " ms");
    row("pass time summed / window (one master: passes serialised)",
        fmt("%.3f", s.pass_seconds_sum / std::max(1e-9, s.wall_seconds)));
    row("pool queue depth, sampled each second: mean / max",
        fmt("%.1f", steady_json_.value("mean_pool_queue_depth", 0.0)) + " / " +
            fmt("%.0f", steady_json_.value("max_pool_queue_depth", 0.0)) +
            " (pool workers busy on average: " +
            fmt("%.2f", steady_json_.value("mean_active_pool_workers", 0.0)) + ")");
    row("operator CPU",
        fmt("%.1f", s.operator_cpu_seconds) + " s in " + fmt("%.0f", s.wall_seconds) + " s (" +
            fmt("%.1f", 1000 * s.operator_cpu_seconds / std::max(1.0, s.pool_passes)) +
            " ms per pool pass); machine " + fmt("%.0f", 100 * s.machine_busy) +
            " % busy (all processes)");
    if (o_.proxy) {
      row("store requests", storeLine(s.store));
      row("store requests per pool pass",
          fmt("%.2f", s.store_pool_requests / std::max(1.0, s.pool_passes)));
      for (const auto& [key, f] : s.store) {
        row("store " + key + " mean time to first byte",
            fmt("%.2f", 1000.0 * f.first_byte_seconds / static_cast<double>(f.requests)) + " ms");
      }
    }
    if (!singles_.empty()) {
      std::vector<double> passes, written, writes, store_writes, windows, resyncs, cpu;
      for (const PhaseFigures& f : singles_) {
        passes.push_back(f.pool_passes);
        windows.push_back(f.wall_seconds);
        resyncs.push_back(steadyRate() * f.wall_seconds);
        cpu.push_back(f.operator_cpu_seconds);
        written.push_back(f.written);
        writes.push_back(f.object_writes);
        double sw = 0;
        for (const auto& [key, counted] : f.store) {
          if (key.rfind("GET ", 0) != 0) {
            sw += static_cast<double>(counted.requests);
          }
        }
        store_writes.push_back(sw);
      }
      auto mean = [](const std::vector<double>& v) {
        double total = 0;
        for (double x : v) {
          total += x;
        }
        return v.empty() ? NAN : total / static_cast<double>(v.size());
      };
      row("**3. one Binding created** (" + std::to_string(singles_.size()) +
              " times): create → Ready with its grant",
          "p50 " + fmt("%.0f", percentile(single_ready_ms_, 0.5)) + " ms, p99 " +
              fmt("%.0f", percentile(single_ready_ms_, 0.99)) + " ms (nearest rank: the max of " +
              std::to_string(singles_.size()) + "), min " +
              fmt("%.0f", percentile(single_ready_ms_, 0.0)) + " ms");
      row("per create, until settled: window (mean, max)",
          fmt("%.1f", mean(windows)) + " s, " + fmt("%.1f", percentile(windows, 1.0)) + " s");
      row("per create, until settled: pool passes (mean, max)",
          fmt("%.1f", mean(passes)) + ", " + fmt("%.0f", percentile(passes, 1.0)) +
              " (at the steady phase's rate the same windows would hold ~" +
              fmt("%.0f", mean(resyncs)) + ")");
      row("per create, until settled: operator CPU (mean)", fmt("%.1f", mean(cpu)) + " s");
      row("per create: status writes written (mean, max)",
          fmt("%.1f", mean(written)) + ", " + fmt("%.0f", percentile(written, 1.0)));
      row("per create: API writes, Lease excluded (mean, max)",
          fmt("%.1f", mean(writes)) + ", " + fmt("%.0f", percentile(writes, 1.0)));
      std::map<std::string, double> all_writes;
      std::map<std::string, double> all_status;
      for (const PhaseFigures& f : singles_) {
        for (const auto& [key, n] : f.writes) {
          if (key.find("leases") == std::string::npos) {
            all_writes[key] += n;
          }
        }
        for (const auto& [key, n] : f.status_writes) {
          all_status[key] += n;
        }
      }
      row("all creates: API writes", joinCounts(all_writes));
      row("all creates: status writes", joinCounts(all_status));
      if (o_.proxy) {
        row("per create: store writes (mean)", fmt("%.1f", mean(store_writes)));
      }
      row("ledger after the creates", std::to_string(singles_ledger_) + " of the run's domains");
    }
    row("**4. operator RSS** now / sampled max / peak (VmHWM)",
        fmt("%.1f", result.value("operator_rss_kib", 0) / 1024.0) + " / " +
            fmt("%.1f", result.value("operator_rss_sampled_max_kib", 0) / 1024.0) + " / " +
            fmt("%.1f", result.value("operator_peak_rss_kib", 0) / 1024.0) + " MiB");
    std::printf("\n");
    std::fflush(stdout);
  }

  Options o_;
  MetricsEndpoint metrics_;
  kube::ClientPtr client_;
  CountingProxy proxy_;
  std::string prefix_;
  std::string selector_;
  std::int64_t ceiling_bytes_ = 0;
  std::string admin_endpoint_;
  std::unique_ptr<ReadyTracker> pools_;
  std::unique_ptr<ReadyTracker> bindings_;
  std::thread sampler_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> operator_gone_{false};
  std::atomic<long> max_rss_kib_{0};
  Json cold_;
  PhaseFigures cold_ready_;
  PhaseFigures cold_quiet_;
  PhaseFigures steady_;
  Json steady_json_;
  std::vector<PhaseFigures> singles_;
  std::vector<double> single_ready_ms_;
  int singles_ledger_ = 0;
};

int usage(const char* self) {
  std::cerr << "usage: " << self
            << " --kubeconfig FILE --metrics-url URL --operator-pid PID --store-admin HOST:PORT"
               " --store-rpc HOST:PORT --kvcache BINARY --run-id ID [--pools N]"
               " [--bindings-per-pool N] [--namespaces N] [--ceiling Q] [--steady-seconds S]"
               " [--singles N] [--resync-seconds S] [--writers N] [--timeout-seconds S]"
               " [--no-proxy] [--cleanup] [--json FILE]\n";
  return 2;
}

}  // namespace
}  // namespace kvc::bench

int main(int argc, char** argv) {
  using kvc::bench::Options;
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::exit(kvc::bench::usage(argv[0]));
      }
      return argv[++i];
    };
    if (a == "--kubeconfig") {
      o.kubeconfig = next();
    } else if (a == "--metrics-url") {
      o.metrics_url = next();
    } else if (a == "--operator-pid") {
      o.operator_pid = std::stoi(next());
    } else if (a == "--store-admin") {
      o.store_admin = next();
    } else if (a == "--store-rpc") {
      o.store_rpc = next();
    } else if (a == "--kvcache") {
      o.kvcache = next();
    } else if (a == "--run-id") {
      o.run_id = next();
    } else if (a == "--pools") {
      o.pools = std::stoi(next());
    } else if (a == "--bindings-per-pool") {
      o.bindings_per_pool = std::stoi(next());
    } else if (a == "--namespaces") {
      o.namespaces = std::stoi(next());
    } else if (a == "--ceiling") {
      o.ceiling = next();
    } else if (a == "--steady-seconds") {
      o.steady_seconds = std::stoi(next());
    } else if (a == "--singles") {
      o.singles = std::stoi(next());
    } else if (a == "--resync-seconds") {
      o.resync_seconds = std::stoi(next());
    } else if (a == "--writers") {
      o.writers = std::stoi(next());
    } else if (a == "--timeout-seconds") {
      o.timeout_seconds = std::stoi(next());
    } else if (a == "--cleanup") {
      o.cleanup = true;
    } else if (a == "--no-proxy") {
      o.proxy = false;
    } else if (a == "--json") {
      o.json_file = next();
    } else {
      return kvc::bench::usage(argv[0]);
    }
  }
  if (o.kubeconfig.empty() || o.metrics_url.empty() || o.operator_pid <= 0 ||
      o.store_admin.empty() || o.store_rpc.empty() || o.kvcache.empty() || o.run_id.empty() ||
      o.pools <= 0 || o.bindings_per_pool <= 0 || o.namespaces <= 0) {
    return kvc::bench::usage(argv[0]);
  }
  return kvc::bench::Bench(std::move(o)).run();
}
