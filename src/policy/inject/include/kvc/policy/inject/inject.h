#pragma once
// The whole injection decision for one Pod (seed "KV Cache Injection Reference").
//
// The same function serves the mutating webhook and `kvcache inject`: the object in, the cluster
// behind a ClusterView, the Settings; a decision out. Every refusal is decided before anything is
// written, so a refused Pod is returned untouched, and an injection touches only the target
// container's env, args and volumeMounts, the Pod's volumes, and the two annotations the
// webhook owns.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/settings.h"
#include "kvc/common/json.h"
#include "kvc/policy/inject/cluster_view.h"
#include "kvc/policy/inject/engine.h"
#include "kvc/policy/inject/refusal.h"
#include "kvc/policy/inject/render.h"
#include "kvc/policy/inject/resolve.h"

namespace kvc::policy {

enum class Verdict {
  NotOptedIn,  // the label is not exactly "true": left untouched
  Injected,
  Refused,
  Failed,  // the cluster could not be read: an infrastructure error, not a refusal
};

std::string_view verdictName(Verdict verdict);

// What an injection wrote, for `check-inject`, Events and logs.
struct InjectionSummary {
  std::string container;
  Engine engine = Engine::VLLM;
  Role role = Role::None;
  Resolution resolution;
  ClientRender render;
  std::vector<std::string> overwritten_env;  // names that replaced the container's own entries
  std::vector<std::string> kept_env;         // observability toggles the container already set
  bool hierarchical_cache_kept = false;      // SGLang: the container already named the switch
  std::string launch_program;
  bool launch_args_forwarded = false;
  std::string record;  // the kvcache.gpustack.ai/injected annotation
};

struct Decision {
  Verdict verdict = Verdict::NotOptedIn;
  std::optional<Refusal> refusal;           // Refused
  std::string error;                        // Failed
  Json object;                              // Injected: the mutated object; otherwise null
  std::optional<InjectionSummary> summary;  // Injected
};

// Decides for a Pod, or for a pod template (an object with `metadata` and `spec`), whose Binding
// is looked up in namespace `ns`.
Decision inject(const Json& pod, std::string_view namespace_name, const ClusterView& cluster,
                const api::Settings& settings);

}  // namespace kvc::policy
