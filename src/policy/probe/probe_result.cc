#include "kvc/policy/probe/probe_result.h"

#include <array>
#include <utility>

#include "kvc/common/text.h"

namespace kvc::policy {
namespace {

constexpr std::array<std::pair<ProbeStage, std::string_view>, 13> kStages = {{
    {ProbeStage::Done, "done"},
    {ProbeStage::Admission, "admission"},
    {ProbeStage::Start, "start"},
    {ProbeStage::Config, "config"},
    {ProbeStage::Connect, "connect"},
    {ProbeStage::Setup, "setup"},
    {ProbeStage::Write, "write"},
    {ProbeStage::Read, "read"},
    {ProbeStage::Corrupt, "corrupt"},
    {ProbeStage::Stalled, "stalled"},
    {ProbeStage::Client, "client"},
    {ProbeStage::Clean, "clean"},
    {ProbeStage::NoResult, "no-result"},
}};

// Mooncake's ErrorCode values a store client meets (mooncake-store/include/types.h, v0.3.12.post1).
constexpr std::array<std::pair<std::int64_t, std::string_view>, 20> kStoreErrors = {{
    {-1, "INTERNAL_ERROR"},
    {-10, "BUFFER_OVERFLOW"},
    {-101, "SEGMENT_NOT_FOUND"},
    {-103, "CLIENT_NOT_FOUND"},
    {-200, "NO_AVAILABLE_HANDLE"},
    {-300, "INVALID_VERSION"},
    {-400, "INVALID_KEY"},
    {-500, "WRITE_FAIL"},
    {-600, "INVALID_PARAMS"},
    {-601, "ILLEGAL_CLIENT"},
    {-704, "OBJECT_NOT_FOUND"},
    {-705, "OBJECT_ALREADY_EXISTS"},
    {-800, "TRANSFER_FAIL"},
    {-900, "RPC_FAIL"},
    {-901, "RPC_TIMEOUT"},
    {-1010, "UNAVAILABLE_IN_CURRENT_STATUS"},
    {-1011, "UNAVAILABLE_IN_CURRENT_MODE"},
    {-1700, "TENANT_QUOTA_EXCEEDED"},
    {-1701, "TENANT_NOT_REGISTERED"},
    {-1702, "TENANT_NOT_EMPTY"},
}};

std::optional<ProbeStage> stageNamed(std::string_view name) {
  for (const auto& [stage, text] : kStages) {
    if (text == name) {
      return stage;
    }
  }
  return std::nullopt;
}

ProbeTimings timingsFrom(const Json& value) {
  ProbeTimings t;
  if (!value.is_object()) {
    return t;
  }
  t.ops = value.value("ops", std::int64_t{0});
  t.bytes = value.value("bytes", std::int64_t{0});
  auto number = [&](const char* key) -> std::optional<double> {
    auto it = value.find(key);
    return it != value.end() && it->is_number() ? std::optional<double>(it->get<double>())
                                                : std::nullopt;
  };
  t.p50_ms = number("p50Ms");
  t.p99_ms = number("p99Ms");
  t.mib_per_second = number("mibPerSecond");
  return t;
}

std::string codeText(const ProbeResult& r) {
  if (!r.code) {
    return "";
  }
  const std::string_view name = storeErrorName(*r.code);
  return name.empty() ? std::to_string(*r.code) : std::to_string(*r.code) + " " + std::string(name);
}

std::string tenantText(const ProbeResult& r) {
  return r.tenant.empty() ? "no tenant (a single-tenant store)" : "tenant " + r.tenant;
}

std::string writeFailure(const ProbeResult& r) {
  if (r.code == -1701) {
    return "the master at " + r.master + " refused the write: " + tenantText(r) +
           " is not registered in its ledger (TENANT_NOT_REGISTERED). Check the Binding's "
           "QuotaGranted condition and the pool's QuotaLedgerAvailable: the operator registers "
           "the domain once the pool's ledger is available";
  }
  return "the master at " + r.master + " refused the write (" + codeText(r) +
         "): a store client on another Mooncake release than the store fails every write so. "
         "Compare the store image's version with the engine's client (docs/store.md, Version "
         "compatibility)";
}

}  // namespace

std::string_view probeStageName(ProbeStage stage) {
  for (const auto& [s, text] : kStages) {
    if (s == stage) {
      return text;
    }
  }
  return "unknown";
}

std::string_view storeErrorName(std::int64_t code) {
  for (const auto& [value, name] : kStoreErrors) {
    if (value == code) {
      return name;
    }
  }
  return {};
}

std::optional<double> ProbeResult::hitRatio() const {
  if (query_tokens <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(hit_tokens) / static_cast<double>(query_tokens);
}

Result<ProbeResult> parseProbeResult(std::string_view text) {
  Json value = Json::parse(text, nullptr, false);
  if (!value.is_object() || value.value("v", 0) != 1) {
    return invalidArgument("not a probe report: " + std::string(text.substr(0, 200)));
  }
  const auto stage = stageNamed(value.value("stage", std::string()));
  if (!stage) {
    return invalidArgument("a probe report with an unknown stage '" +
                           value.value("stage", std::string()) + "'");
  }
  ProbeResult r;
  r.replica = value.value("replica", 0);
  r.engine = value.value("engine", std::string());
  r.vehicle = value.value("vehicle", std::string());
  r.master = value.value("master", std::string());
  r.tenant = value.value("tenant", std::string());
  r.stage = *stage;
  if (auto it = value.find("code"); it != value.end() && it->is_number_integer()) {
    r.code = it->get<std::int64_t>();
  }
  r.detail = value.value("detail", std::string());
  r.lookups = value.value("lookups", std::int64_t{0});
  r.written = value.value("written", std::int64_t{0});
  r.read = value.value("read", std::int64_t{0});
  r.corrupt = value.value("corrupt", std::int64_t{0});
  r.quota_refused = value.value("quotaRefused", std::int64_t{0});
  r.removed = value.value("removed", std::int64_t{0});
  r.prefix_blocks = value.value("prefixBlocks", std::int64_t{0});
  r.prefix_read = value.value("prefixRead", std::int64_t{0});
  r.query_tokens = value.value("queryTokens", std::int64_t{0});
  r.hit_tokens = value.value("hitTokens", std::int64_t{0});
  if (auto it = value.find("counters"); it != value.end() && it->is_object()) {
    for (auto c = it->begin(); c != it->end(); ++c) {
      if (c->is_number_integer()) {
        r.counters[c.key()] = c->get<std::int64_t>();
      }
    }
  }
  r.put = timingsFrom(value.value("put", Json()));
  r.get = timingsFrom(value.value("get", Json()));
  r.seconds = value.value("seconds", 0.0);
  // A replica that finished but read back other bytes than were written did not use the store.
  if (r.stage == ProbeStage::Done && r.corrupt > 0) {
    r.stage = ProbeStage::Corrupt;
  }
  return r;
}

ProbeResult unreportedProbe(int replica, std::string pod, ProbeStage stage, std::string detail) {
  ProbeResult r;
  r.replica = replica;
  r.pod = std::move(pod);
  r.stage = stage;
  r.detail = std::move(detail);
  return r;
}

std::string probeFailureMessage(const ProbeResult& r) {
  switch (r.stage) {
    case ProbeStage::Done:
      return "";
    case ProbeStage::Admission:
      return "the webhook refused the probe Pod: " + r.detail;
    case ProbeStage::Start:
      return "the probe Pod did not run: " + r.detail;
    case ProbeStage::Config:
      return "the probe found no store configuration to use (" + r.detail +
             "): the webhook did not inject this Pod. Check `kvcache check-inject` on the same "
             "manifest and the namespace's webhook selector";
    case ProbeStage::Connect:
      return "the master at " + r.master + " is unreachable from the Pod (" + r.detail +
             "). Check the backend's LeaderAvailable condition, its leader Service's endpoints, "
             "and that no NetworkPolicy keeps this namespace from the store";
    case ProbeStage::Setup:
      return "the store client could not set up against the master at " + r.master + " (" +
             r.detail +
             "): the master refused the client. A client on another Mooncake release "
             "than the store is refused so; compare the store image's version with the engine's";
    case ProbeStage::Write:
      return writeFailure(r);
    case ProbeStage::Read:
      return "a block the store listed could not be read (" + r.detail +
             "): the member holding it is unreachable. Check the backend's MembersMounted "
             "condition and that no NetworkPolicy keeps this namespace from the members";
    case ProbeStage::Corrupt:
      return std::to_string(r.corrupt) +
             " blocks read back differ from what was written under their keys: the store "
             "served another block's bytes. Report it with the store image's version";
    case ProbeStage::Stalled:
      return "the master at " + r.master + " did not answer: " + r.detail +
             ". A paused or overloaded master answers so; check the backend's LeaderAvailable "
             "condition and the leader's log";
    case ProbeStage::Client:
      return "the store client failed: " + r.detail;
    case ProbeStage::Clean:
      return "the run's blocks could not all be removed (" + r.detail + "): they stay in " +
             tenantText(r) +
             ", counted against its quota, until the master evicts them, and the "
             "Binding's deletion waits for them (Releasable=False/LedgerNotReleased)";
    case ProbeStage::NoResult:
      return "the probe ended without a result: " + r.detail;
  }
  return r.detail;
}

}  // namespace kvc::policy
