#include "kvc/policy/inject/opt_in.h"

#include <algorithm>
#include <array>
#include <vector>

#include "kvc/policy/base/text.h"
#include "kvc/policy/inject/keys.h"

namespace kvc::policy {
namespace {

constexpr std::array<std::string_view, 6> kAcceptedAnnotations{
    kAnnotationBinding, kAnnotationEngine,    kAnnotationManufacturer,
    kAnnotationRole,    kAnnotationContainer, kAnnotationForwarded,
};

const std::string* stringMember(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return nullptr;
  }
  return it->get_ptr<const std::string*>();
}

std::string acceptedList() {
  std::string out;
  for (std::string_view key : kAcceptedAnnotations) {
    out += out.empty() ? "" : ", ";
    out += key;
  }
  return out;
}

// Every problem of the annotation vocabulary, in one refusal: a typo and a stray record are
// fixed in one edit rather than one round trip each.
// Problems are listed by key, so the message does not depend on the order the annotations
// arrive in (the API server sends them sorted; a manifest need not be).
std::optional<Refusal> checkVocabulary(const Json& annotations) {
  struct Problem {
    std::string key;
    RefusalReason reason;
    std::string text;
  };
  std::vector<Problem> problems;
  std::string current;
  auto note = [&](RefusalReason reason, std::string text) {
    problems.push_back({current, reason, std::move(text)});
  };
  if (!annotations.is_object()) {
    return std::nullopt;
  }
  for (const auto& [key, value] : annotations.items()) {
    if (!key.starts_with(kKeyPrefix)) {
      continue;
    }
    bool accepted = false;
    for (std::string_view known : kAcceptedAnnotations) {
      accepted = accepted || key == known;
    }
    if (accepted) {
      continue;
    }
    current = key;
    if (key == kAnnotationDomain) {
      note(RefusalReason::DomainAnnotation,
           "annotation " + inQuotes(key) +
               " is not accepted: the reuse domain comes only from the KVCachePoolBinding, "
               "which registers the domain and carries its ceiling. Fix: remove the annotation "
               "and name, in " +
               std::string(kAnnotationBinding) +
               ", a Binding whose spec.domain.name is the domain you want");
    } else if (key == kAnnotationClientConfig || key == kAnnotationInjected) {
      note(RefusalReason::RecordSupplied,
           "annotation " + inQuotes(key) +
               " is written by this webhook: it records what the webhook decided, and a "
               "submitted value would be a record of a decision nobody made. Fix: remove it");
    } else if (key == kLabelInject) {
      note(RefusalReason::UnknownKey,
           "annotation " + inQuotes(key) +
               " is not one this webhook accepts: the opt-in is a label, not an annotation. "
               "Fix: remove the annotation (the label " +
               std::string(kLabelInject) + ": \"true\" is what opts the Pod in)");
    } else {
      note(RefusalReason::UnknownKey,
           "annotation " + inQuotes(key) +
               " is not one this webhook accepts, and a typo would otherwise leave the Pod "
               "configured differently from its manifest. Fix: correct or remove the key; "
               "accepted annotations are " +
               acceptedList());
    }
  }
  if (problems.empty()) {
    return std::nullopt;
  }
  std::sort(problems.begin(), problems.end(),
            [](const Problem& a, const Problem& b) { return a.key < b.key; });
  std::string message;
  for (const Problem& problem : problems) {
    message += message.empty() ? "" : "; ";
    message += problem.text;
  }
  return Refusal{problems.front().reason, std::move(message)};
}

Refusal engineRefusal(const std::string* value) {
  const std::string fix = "Fix: set " + std::string(kAnnotationEngine) +
                          " to vLLM or SGLang; for vLLM-Ascend set "
                          "engine: vLLM and " +
                          std::string(kAnnotationManufacturer) + ": ascend";
  if (value == nullptr) {
    return {RefusalReason::EngineMissing,
            "annotation " + inQuotes(kAnnotationEngine) +
                " is required: the engine is declared, never guessed from the image, because "
                "engines take entirely different flags. " +
                fix};
  }
  if (*value == "vllm-ascend" || *value == "vLLM-Ascend" || *value == "vllm_ascend") {
    return {RefusalReason::EngineInvalid,
            "annotation " + inQuotes(kAnnotationEngine) + " is " + inQuotes(*value) +
                ": vLLM-Ascend is derived, not named. Fix: set engine: vLLM and " +
                std::string(kAnnotationManufacturer) + ": ascend"};
  }
  return {RefusalReason::EngineInvalid,
          "annotation " + inQuotes(kAnnotationEngine) + " is " + inQuotes(*value) +
              ", which is not an engine this webhook configures (values are case-sensitive). " +
              fix};
}

// The engine annotation, refined by the manufacturer's: exactly "ascend", and only with vLLM,
// makes it vLLM-Ascend.
std::variant<Engine, Refusal> readEngine(const Json& annotations) {
  const std::string* engine = stringMember(annotations, kAnnotationEngine);
  if (engine == nullptr || (*engine != "vLLM" && *engine != "SGLang")) {
    return engineRefusal(engine);
  }
  const Engine named = *engine == "SGLang" ? Engine::SGLang : Engine::VLLM;
  const std::string* manufacturer = stringMember(annotations, kAnnotationManufacturer);
  if (manufacturer == nullptr) {
    return named;
  }
  if (named == Engine::SGLang) {
    return Refusal{RefusalReason::ManufacturerInvalid,
                   "annotation " + inQuotes(kAnnotationManufacturer) + " is " +
                       inQuotes(*manufacturer) +
                       " on an SGLang Pod, but it only selects the Ascend runtime of vLLM. "
                       "Fix: remove it, or set engine: vLLM with manufacturer: ascend for "
                       "vLLM-Ascend"};
  }
  if (*manufacturer != "ascend") {
    return Refusal{RefusalReason::ManufacturerInvalid,
                   "annotation " + inQuotes(kAnnotationManufacturer) + " is " +
                       inQuotes(*manufacturer) +
                       "; the only accepted value is \"ascend\" (exactly), which selects the "
                       "vLLM-Ascend runtime. Fix: set it to ascend, or remove it for plain "
                       "vLLM"};
  }
  return Engine::VLLMAscend;
}

// The role annotation: read by the vLLM family only; an SGLang Pod is injected exactly as
// without it.
std::variant<Role, Refusal> readRole(const Json& annotations, Engine engine) {
  if (!isVLLMFamily(engine)) {
    return Role::None;
  }
  const std::string* role = stringMember(annotations, kAnnotationRole);
  if (role == nullptr) {
    return Role::None;
  }
  if (*role == "Prefill") {
    return Role::Prefill;
  }
  if (*role == "Decode") {
    return Role::Decode;
  }
  if (*role == "Server") {
    return Refusal{RefusalReason::RoleInvalid,
                   "annotation " + inQuotes(kAnnotationRole) +
                       " is \"Server\", which is not a Pod role: a plain server is the "
                       "absence of the annotation (Server is spelled only on "
                       "ModelDeployment.spec.roles[].kind). Fix: remove the annotation for "
                       "a plain server, or set Prefill or Decode"};
  }
  return Refusal{RefusalReason::RoleInvalid,
                 "annotation " + inQuotes(kAnnotationRole) + " is " + inQuotes(*role) +
                     "; accepted values are Prefill and Decode. Fix: set Prefill or "
                     "Decode, or leave the annotation off for a plain server"};
}

// The forwarding declaration: exactly "true" when present.
std::variant<bool, Refusal> readForwarding(const Json& annotations) {
  const std::string* forwarded = stringMember(annotations, kAnnotationForwarded);
  if (forwarded == nullptr) {
    return false;
  }
  if (*forwarded != "true") {
    return Refusal{RefusalReason::ForwardingInvalid,
                   "annotation " + inQuotes(kAnnotationForwarded) + " is " + inQuotes(*forwarded) +
                       "; the only accepted value is \"true\", declared only when an "
                       "unrecognised launcher, script or image ENTRYPOINT forwards appended "
                       "arguments to the engine. Fix: set it to \"true\" or remove it"};
  }
  return true;
}

// The Binding annotation: required, a plain name in the Pod's namespace. Set as a label
// by mistake, the refusal says so.
std::variant<std::string, Refusal> readBinding(const Json& annotations, const Json& labels,
                                               std::string_view namespace_name) {
  const std::string* binding = stringMember(annotations, kAnnotationBinding);
  if (binding == nullptr || binding->empty()) {
    std::string hint;
    if (stringMember(labels, kAnnotationBinding) != nullptr) {
      hint = " (it is set as a label; it must be an annotation)";
    }
    return Refusal{RefusalReason::BindingMissing,
                   "annotation " + inQuotes(kAnnotationBinding) + " is required" + hint +
                       ": it names the KVCachePoolBinding that selects the pool and the "
                       "reuse domain. Fix: set it to the name of a KVCachePoolBinding in this "
                       "Pod's namespace " +
                       inQuotes(namespace_name)};
  }
  if (binding->find('/') != std::string::npos) {
    return Refusal{RefusalReason::BindingCrossNamespace,
                   "annotation " + inQuotes(kAnnotationBinding) + " is " + inQuotes(*binding) +
                       ": there is no cross-namespace form; a Binding is resolved in the Pod's "
                       "own namespace " +
                       inQuotes(namespace_name) +
                       ". Fix: use the plain name of a KVCachePoolBinding in namespace " +
                       inQuotes(namespace_name)};
  }
  return *binding;
}

}  // namespace

// The annotations are read in a fixed order (vocabulary, engine, manufacturer, role,
// forwarding, Binding), and the first problem is the refusal.
std::variant<NotOptedIn, OptIn, Refusal> readOptIn(const Json& metadata,
                                                   std::string_view namespace_name) {
  const Json& labels =
      metadata.is_object() && metadata.contains("labels") ? metadata["labels"] : Json::object();
  const std::string* trigger = stringMember(labels, kLabelInject);
  if (trigger == nullptr || *trigger != "true") {
    return NotOptedIn{};
  }
  static const Json kNoAnnotations = Json::object();
  const Json& annotations = metadata.contains("annotations") && metadata["annotations"].is_object()
                                ? metadata["annotations"]
                                : kNoAnnotations;

  if (auto refusal = checkVocabulary(annotations)) {
    return *refusal;
  }
  OptIn request;
  auto engine = readEngine(annotations);
  if (const Refusal* refusal = std::get_if<Refusal>(&engine)) {
    return *refusal;
  }
  request.engine = std::get<Engine>(engine);
  auto role = readRole(annotations, request.engine);
  if (const Refusal* refusal = std::get_if<Refusal>(&role)) {
    return *refusal;
  }
  request.role = std::get<Role>(role);
  auto forwarding = readForwarding(annotations);
  if (const Refusal* refusal = std::get_if<Refusal>(&forwarding)) {
    return *refusal;
  }
  request.forwarding_declared = std::get<bool>(forwarding);
  auto binding = readBinding(annotations, labels, namespace_name);
  if (const Refusal* refusal = std::get_if<Refusal>(&binding)) {
    return *refusal;
  }
  request.binding = std::get<std::string>(binding);
  if (const std::string* container = stringMember(annotations, kAnnotationContainer)) {
    request.container = *container;
  }
  return request;
}

}  // namespace kvc::policy
