#include "kvc/policy/probe/probe_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kvc/common/columns.h"

namespace kvc::policy {
namespace {

Json optionalNumber(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json timingsJson(const ProbeTimings& t) {
  return Json{{"ops", t.ops},
              {"bytes", t.bytes},
              {"p50Ms", optionalNumber(t.p50_ms)},
              {"p99Ms", optionalNumber(t.p99_ms)},
              {"mibPerSecond", optionalNumber(t.mib_per_second)}};
}

// Four decimals: a ratio's JSON reads the same on every platform.
Json ratioJson(const std::optional<double>& ratio) {
  return ratio ? Json(std::round(*ratio * 10000.0) / 10000.0) : Json(nullptr);
}

Json probeJson(const ProbeResult& r) {
  Json counters = Json::object();
  for (const auto& [name, value] : r.counters) {
    counters[name] = value;
  }
  Json out{{"replica", r.replica},
           {"pod", r.pod},
           {"node", r.node},
           {"ok", r.ok()},
           {"stage", probeStageName(r.stage)},
           {"vehicle", r.vehicle},
           {"master", r.master},
           {"tenant", r.tenant},
           {"blocksLookedUp", r.lookups},
           {"queryTokens", r.query_tokens},
           {"hitTokens", r.hit_tokens},
           {"blocksWritten", r.written},
           {"blocksRead", r.read},
           {"hitRatio", ratioJson(r.hitRatio())},
           {"sharedPrefix", {{"blocks", r.prefix_blocks}, {"read", r.prefix_read}}},
           {"corruptBlocks", r.corrupt},
           {"quotaRefusedWrites", r.quota_refused},
           {"counters", counters},
           {"put", timingsJson(r.put)},
           {"get", timingsJson(r.get)},
           {"seconds", r.seconds}};
  if (!r.ok()) {
    Json failure{{"stage", probeStageName(r.stage)}, {"message", probeFailureMessage(r)}};
    if (r.code) {
      failure["code"] = *r.code;
      failure["codeName"] = storeErrorName(*r.code);
    }
    out["failure"] = failure;
  }
  return out;
}

std::string fixed(double value, int decimals) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string percent(const std::optional<double>& ratio) {
  return ratio ? fixed(*ratio * 100.0, 1) + "%" : "-";
}

std::string latency(const ProbeTimings& t) {
  if (!t.p50_ms || !t.p99_ms) {
    return "-";
  }
  return fixed(*t.p50_ms, 2) + "/" + fixed(*t.p99_ms, 2);
}

std::string throughput(const ProbeTimings& t) {
  return t.mib_per_second ? fixed(*t.mib_per_second, 1) : "-";
}

using Row = std::vector<std::string>;

}  // namespace

bool ProbeReport::ok() const {
  return !probes.empty() &&
         std::all_of(probes.begin(), probes.end(), [](const ProbeResult& r) { return r.ok(); });
}

Json probeReportJson(const ProbeReport& report) {
  Json probes = Json::array();
  for (const ProbeResult& r : report.probes) {
    probes.push_back(probeJson(r));
  }
  Json out{{"namespace", report.namespace_name},
           {"binding", report.binding},
           {"engine", report.engine},
           {"run", report.run},
           {"seed", report.seed},
           {"image", report.image},
           {"ok", report.ok()},
           {"probes", probes}};
  if (report.cleanup) {
    Json cleanup{{"ok", report.cleanup->ok()}, {"removedObjects", report.cleanup->removed}};
    if (!report.cleanup->ok()) {
      cleanup["message"] = probeFailureMessage(*report.cleanup);
    }
    out["cleanup"] = cleanup;
  } else {
    out["cleanup"] = nullptr;
  }
  out["blocksKept"] = report.blocks_kept;
  return out;
}

std::string probeReportTable(const ProbeReport& report) {
  std::string out = "Binding " + report.namespace_name + "/" + report.binding + ", engine " +
                    report.engine + ", run " + report.run + " (seed " + report.seed + ")\n";
  for (const ProbeResult& r : report.probes) {
    if (!r.master.empty()) {
      out += "store: master " + r.master + ", " +
             (r.tenant.empty() ? std::string("no tenant") : "tenant " + r.tenant) + ", the " +
             r.vehicle + " vehicle\n";
      break;
    }
  }
  std::vector<Row> rows = {{"PROBE", "NODE", "LOOKED UP", "WRITTEN", "READ", "HIT RATIO",
                            "SHARED PREFIX READ", "PUT MS p50/p99", "GET MS p50/p99", "PUT MiB/s",
                            "GET MiB/s", "RESULT"}};
  for (const ProbeResult& r : report.probes) {
    rows.push_back({std::to_string(r.replica), r.node.empty() ? "-" : r.node,
                    std::to_string(r.lookups), std::to_string(r.written), std::to_string(r.read),
                    percent(r.hitRatio()),
                    std::to_string(r.prefix_read) + "/" + std::to_string(r.prefix_blocks),
                    latency(r.put), latency(r.get), throughput(r.put), throughput(r.get),
                    r.ok() ? "ok" : "failed (" + std::string(probeStageName(r.stage)) + ")"});
  }
  out += renderColumns(rows);
  for (const ProbeResult& r : report.probes) {
    if (!r.ok()) {
      out += "probe " + std::to_string(r.replica) + ": " + probeFailureMessage(r) + "\n";
    }
  }
  if (report.blocks_kept) {
    out +=
        "the probes' blocks were kept (--keep-blocks): they count against the Binding's quota "
        "until evicted, and its deletion waits for them\n";
  } else if (!report.cleanup) {
    // No probe reached the store: nothing to remove.
  } else if (report.cleanup->ok()) {
    out += "cleanup: removed the run's " + std::to_string(report.cleanup->removed) +
           " objects from the store\n";
  } else {
    out += "cleanup: " + probeFailureMessage(*report.cleanup) + "\n";
  }
  return out;
}

}  // namespace kvc::policy
