#include "kvc/policy/usage/binding_use.h"

#include <algorithm>
#include <cmath>

#include "kvc/api/message.h"
#include "kvc/policy/base/text.h"

namespace kvc::policy {
namespace {

using api::makeCondition;

bool anyQueries(const BindingUse& use) {
  return std::any_of(use.pods.begin(), use.pods.end(),
                     [](const EnginePodUse& pod) { return pod.counts && pod.counts->queries > 0; });
}

std::string bindingText(std::string_view binding_namespace, std::string_view binding_name) {
  return "KVCachePoolBinding " + std::string(binding_namespace) + "/" + std::string(binding_name);
}

// "2 of 3 engine Pods were read" or why none was: what the Pods' silence is worth.
std::string readingText(const BindingUse& use) {
  if (!use.reading) {
    return "the engines' counters are not read (Setting kv-cache-engine-metrics is \"false\")";
  }
  std::int64_t read = 0;
  std::string first_unread;
  for (const EnginePodUse& pod : use.pods) {
    if (pod.counts) {
      ++read;
    } else if (first_unread.empty()) {
      first_unread = "Pod/" + pod.name + ": " + (pod.unread.empty() ? "not read yet" : pod.unread);
    }
  }
  std::string out =
      std::to_string(read) + " of " + plural(std::int64_t(use.pods.size()), "engine Pod") + " read";
  if (!first_unread.empty()) {
    out += " (" + api::boundDetail(first_unread) + ")";
  }
  return out;
}

std::vector<std::string> podNames(const std::vector<const EnginePodUse*>& pods) {
  std::vector<std::string> names;
  for (const EnginePodUse* pod : pods) {
    names.push_back("Pod/" + pod->name);
  }
  return names;
}

}  // namespace

std::string durationText(std::chrono::seconds duration) {
  const std::int64_t total = duration.count();
  const std::int64_t hours = total / 3600;
  const std::int64_t minutes = total % 3600 / 60;
  const std::int64_t seconds = total % 60;
  std::string out;
  if (hours > 0) {
    out += std::to_string(hours) + "h";
  }
  if (minutes > 0) {
    out += std::to_string(minutes) + "m";
  }
  if (seconds > 0 || out.empty()) {
    out += std::to_string(seconds) + "s";
  }
  return out;
}

std::string hitRateText(double ratio) {
  const auto ten_thousandths =
      static_cast<std::int64_t>(std::llround(std::clamp(ratio, 0.0, 1.0) * 10000));
  if (ten_thousandths == 0 || ten_thousandths == 10000) {
    return ten_thousandths == 0 ? "0" : "1";
  }
  std::string digits = std::to_string(ten_thousandths);
  digits.insert(0, 4 - digits.size(), '0');
  while (digits.back() == '0') {
    digits.pop_back();
  }
  return "0." + digits;
}

bool settled(const BindingUse& use) {
  return !use.reading || std::all_of(use.pods.begin(), use.pods.end(),
                                     [](const EnginePodUse& pod) { return pod.visited; });
}

std::optional<std::string> hitRate(const BindingUse& use) {
  double queries = 0;
  double hits = 0;
  for (const EnginePodUse& pod : use.pods) {
    if (pod.counts) {
      queries += pod.counts->queries;
      hits += pod.counts->hits;
    }
  }
  if (!use.reading || queries <= 0) {
    return std::nullopt;
  }
  return hitRateText(hits / queries);
}

std::vector<const EnginePodUse*> unusedPods(const BindingUse& use) {
  std::vector<const EnginePodUse*> out;
  for (const EnginePodUse& pod : use.pods) {
    if (pod.ready_seconds >= use.unused_after.count()) {
      out.push_back(&pod);
    }
  }
  return out;
}

api::Condition cacheUsed(const BindingUse& use, std::optional<std::int64_t> holdings,
                         std::string_view domain, std::string_view binding_namespace,
                         std::string_view binding_name) {
  const std::string quoted = inQuotes(domain);
  if (holdings && *holdings > 0) {
    return makeCondition(kCacheUsed, api::kConditionTrue, kReasonTenantHoldsData,
                         "the reuse domain " + quoted + " holds data in the store (status.usage)");
  }
  if (use.reading && anyQueries(use)) {
    return makeCondition(kCacheUsed, api::kConditionTrue, kReasonQueriesReported,
                         "the engine Pods report lookups in the store (status.hitRate); the "
                         "reuse domain " +
                             quoted + " holds nothing at the moment");
  }
  const std::string window = durationText(use.unused_after);
  if (use.pods.empty()) {
    return makeCondition(kCacheUsed, api::kConditionUnknown, kReasonNoEnginePods,
                         "no Ready Pod is injected for " +
                             bindingText(binding_namespace, binding_name) +
                             "; the cache is judged once one has been Ready for " + window);
  }
  if (!holdings) {
    return makeCondition(
        kCacheUsed, api::kConditionUnknown, kReasonUsageNotObserved,
        "the master reports no holdings for the reuse domain " + quoted +
            " (see QuotaObserved) and no engine Pod reports a lookup in the store; " +
            readingText(use));
  }
  const std::vector<const EnginePodUse*> unused = unusedPods(use);
  if (unused.empty()) {
    return makeCondition(kCacheUsed, api::kConditionUnknown, kReasonAwaitingUse,
                         plural(std::int64_t(use.pods.size()), "engine Pod") +
                             " Ready, nothing cached yet under the reuse domain " + quoted +
                             "; judged once a Pod has been Ready for " + window +
                             " (Setting kv-cache-unused-after)");
  }
  return makeCondition(
      kCacheUsed, api::kConditionFalse, kReasonNothingCached,
      api::nameList(podNames(unused)) + " Ready for " + window + " or more, yet the reuse domain " +
          quoted + " holds nothing and no engine Pod reports a lookup in the store; " +
          readingText(use) +
          ". Likely causes: an engine image with no reader for the injected configuration, a "
          "launch that drops the connector flag, a store client the master refuses, or no "
          "traffic. Check: kvcache probe -n " +
          std::string(binding_namespace) + " --binding " + std::string(binding_name) +
          ", and the KVCacheUnused Event on each Pod");
}

std::string cacheUnusedNote(const EnginePodUse& pod, std::string_view domain,
                            std::string_view binding_namespace, std::string_view binding_name) {
  std::string note = "Ready " + durationText(std::chrono::seconds(pod.ready_seconds)) +
                     ", yet the reuse domain " + inQuotes(domain) + " of " +
                     bindingText(binding_namespace, binding_name) +
                     " holds nothing and this Pod reports no lookup in the store. ";
  if (pod.engine == "sglang") {
    note += "Check that the engine reads the injected environment: kubectl exec " + pod.name +
            " -- env | grep MOONCAKE, and that its args keep --hicache-storage-backend "
            "mooncake";
  } else {
    note += "Check that the image reads the injected file: kubectl exec " + pod.name +
            " -- python3 -c \"import "
            "vllm.distributed.kv_transfer.kv_connector.v1.mooncake.store.worker; print('reader "
            "present')\" (an ImportError means the injection is inert on this image)";
  }
  note += "; then the engine's log for Mooncake errors, and kvcache probe -n " +
          std::string(binding_namespace) + " --binding " + std::string(binding_name);
  return note;
}

}  // namespace kvc::policy
