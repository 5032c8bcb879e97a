#pragma once
// Step one of injection: read what the Pod asks for from its label and annotations alone.
//
// Checked in the contract's order (§7.2): the annotation vocabulary (unknown keys, the refused
// `domain`, the webhook's own records), the engine, the manufacturer, the role, the forwarding
// declaration, and the Binding annotation. Nothing here reads the cluster.

#include <optional>
#include <string>
#include <variant>

#include "kvc/common/json.h"
#include "kvc/policy/inject/engine.h"
#include "kvc/policy/inject/refusal.h"

namespace kvc::policy {

struct OptIn {
  Engine engine = Engine::VLLM;
  Role role = Role::None;                // always None on SGLang, which ignores the annotation
  std::string binding;                   // the Binding's name, in the Pod's namespace
  std::optional<std::string> container;  // the container annotation, when present
  bool forwarding_declared = false;      // launch-args-forwarded: "true"
};

struct NotOptedIn {};

// NotOptedIn unless the label is exactly "true"; otherwise the request or the first refusal.
// `metadata` is the Pod's (or pod template's) metadata object.
std::variant<NotOptedIn, OptIn, Refusal> readOptIn(const Json& metadata,
                                                   std::string_view namespace_name);

}  // namespace kvc::policy
