#include "kvc/runtime/owned.h"

#include <spdlog/spdlog.h>
#include <map>
#include <set>

#include "kvc/api/labels.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/field_manager.h"

namespace kvc::runtime {
namespace {

constexpr std::string_view kNoteType = "kvcache";

std::string describe(const kube::ResourceType& resource, std::string_view namespace_name,
                     std::string_view name) {
  return resource.kind + " " + kube::object::key(namespace_name, name);
}

const ChildSource* findSource(const std::vector<ChildSource>& sources,
                              const kube::ResourceType& resource, std::string_view namespace_name) {
  for (const ChildSource& source : sources) {
    if (source.resource == resource && source.namespace_name == namespace_name &&
        source.cache != nullptr) {
      return &source;
    }
  }
  return nullptr;
}

// The child as it will be sent: owner reference and note added.
Json intentFor(const OwnedChild& child, const Json& owner) {
  Json intent = child.object;
  Json& meta = intent["metadata"];
  meta["ownerReferences"] = Json::array({controllerReferenceTo(owner)});
  OwnershipNote note{owner.value("kind", std::string()), kube::object::name(owner), child.role,
                     child.group};
  meta["annotations"][std::string(kOwnershipNoteAnnotation)] = formatOwnershipNote(note);
  return intent;
}

}  // namespace

std::string formatOwnershipNote(const OwnershipNote& note) {
  Json out = {{"type", kNoteType}, {"kind", note.kind}, {"name", note.name}, {"role", note.role}};
  if (note.group) {
    out["group"] = *note.group;
  }
  return out.dump();
}

std::optional<OwnershipNote> parseOwnershipNote(std::string_view text) {
  Json note = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!note.is_object() || note.value("type", std::string()) != kNoteType) {
    return std::nullopt;
  }
  auto str = [&](const char* key) {
    auto it = note.find(key);
    return it != note.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  OwnershipNote out{str("kind"), str("name"), str("role"), std::nullopt};
  if (auto it = note.find("group"); it != note.end() && it->is_number_integer()) {
    out.group = it->get<int>();
  }
  if (out.kind.empty() || out.name.empty()) {
    return std::nullopt;
  }
  return out;
}

std::optional<OwnershipNote> ownershipNoteOf(const Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return std::nullopt;
  }
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) {
    return std::nullopt;
  }
  auto it = annotations->find(std::string(kOwnershipNoteAnnotation));
  if (it == annotations->end() || !it->is_string()) {
    return std::nullopt;
  }
  return parseOwnershipNote(it->get<std::string>());
}

bool carriesNoteFor(const Json& object, const Json& owner) {
  const std::optional<OwnershipNote> note = ownershipNoteOf(object);
  return note && note->kind == owner.value("kind", std::string()) &&
         note->name == kube::object::name(owner);
}

Json controllerReferenceTo(const Json& owner) {
  return Json{{"apiVersion", owner.value("apiVersion", std::string())},
              {"kind", owner.value("kind", std::string())},
              {"name", kube::object::name(owner)},
              {"uid", kube::object::uid(owner)},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

namespace {

// The zero value of its type: what the API server leaves out of an `omitempty` field.
bool zeroValue(const Json& value) {
  return (value.is_boolean() && !value.get<bool>()) || (value.is_number() && value == 0) ||
         (value.is_string() && value.get_ref<const std::string&>().empty()) ||
         ((value.is_array() || value.is_object()) && value.empty());
}

}  // namespace

bool intentSatisfied(const Json& intent, const Json& live) {
  if (intent.is_object()) {
    if (!live.is_object()) {
      return false;
    }
    for (const auto& [key, value] : intent.items()) {
      auto it = live.find(key);
      if (it == live.end() ? !zeroValue(value) : !intentSatisfied(value, *it)) {
        return false;
      }
    }
    return true;
  }
  if (intent.is_array()) {
    if (!live.is_array() || live.size() != intent.size()) {
      return false;
    }
    for (std::size_t i = 0; i < intent.size(); ++i) {
      if (!intentSatisfied(intent[i], live[i])) {
        return false;
      }
    }
    return true;
  }
  if (intent.is_number() && live.is_number()) {
    return intent == live;  // 1 and 1.0 alike
  }
  return intent == live;
}

OwnedResult OwnedApplier::apply(const Json& owner, const OwnedSet& set,
                                std::stop_token stop) const {
  ApplyReport report;
  std::vector<Json> intents;
  std::vector<bool> satisfied;
  std::set<std::string> rendered;  // "plural/ns/name"
  // 2. Refuse to adopt before anything is written.
  for (const OwnedChild& child : set.children) {
    Json intent = intentFor(child, owner);
    const std::string name = kube::object::name(intent);
    const std::string namespace_name =
        child.resource.namespaced ? kube::object::namespaceName(intent) : "";
    const std::string what = describe(child.resource, namespace_name, name);
    rendered.insert(child.resource.plural + "/" + namespace_name + "/" + name);
    std::optional<Json> live;
    if (const ChildSource* source = findSource(set.sources, child.resource, namespace_name)) {
      if (ObjectPtr cached = source->cache->get(kube::object::key(namespace_name, name))) {
        live = *cached;
      }
    }
    // A cache miss is not an absence: the cache may not have seen a same-named object someone
    // else created a moment ago, and a server-side apply onto it would adopt it. Only a live
    // NotFound lets the child be created (a read per missing child, none once it is cached).
    if (!live) {
      kube::Api api(client_, child.resource, namespace_name);
      auto read = api.getOptional(name, stop);
      if (!read.ok()) {
        return OwnedError(OwnedErrorKind::Api, what, read.status().withContext("reading " + what));
      }
      live = std::move(*read);
    }
    if (live && !carriesNoteFor(*live, owner)) {
      return OwnedError(
          OwnedErrorKind::NotOurs, what,
          failedPrecondition(what + " already exists and was not created by kvcache-operator for " +
                             owner.value("kind", std::string()) + " " + kube::object::name(owner) +
                             " (it has no " + std::string(kOwnershipNoteAnnotation) +
                             " annotation naming it), so it is not adopted. Fix: rename or "
                             "remove that object, and the operator creates its own"));
    }
    satisfied.push_back(live.has_value() && intentSatisfied(intent, *live));
    intents.push_back(std::move(intent));
  }
  // 3. Apply what differs.
  for (std::size_t i = 0; i < set.children.size(); ++i) {
    const OwnedChild& child = set.children[i];
    const std::string name = kube::object::name(intents[i]);
    const std::string namespace_name =
        child.resource.namespaced ? kube::object::namespaceName(intents[i]) : "";
    const std::string what = describe(child.resource, namespace_name, name);
    if (satisfied[i]) {
      report.unchanged.push_back(what);
      continue;
    }
    kube::Api api(client_, child.resource, namespace_name);
    auto applied = api.apply(intents[i], kFieldManager, child.force, stop);
    if (!applied.ok()) {
      return OwnedError(OwnedErrorKind::Api, what,
                        applied.status().withContext("applying " + what));
    }
    report.applied.push_back(what);
  }
  // 4. Prune what this owner rendered before and no longer does.
  for (const ChildSource& source : set.prune) {
    std::vector<Json> candidates;
    if (source.cache != nullptr) {
      for (const ObjectPtr& object : source.cache->list()) {
        if (source.namespace_name.empty() ||
            kube::object::namespaceName(*object) == source.namespace_name) {
          candidates.push_back(*object);
        }
      }
    } else {
      kube::ListParams params;
      params.label_selector = set.selector;
      kube::Api api(client_, source.resource, source.namespace_name);
      auto listed = api.listAll(params, 500, stop);
      if (!listed.ok()) {
        return OwnedError(
            OwnedErrorKind::Api, source.resource.kind,
            listed.status().withContext("listing " + source.resource.plural + " to prune"));
      }
      candidates = std::move(listed->items);
    }
    for (const Json& object : candidates) {
      const std::string name = kube::object::name(object);
      const std::string namespace_name = kube::object::namespaceName(object);
      if (!api::matchesSelector(object, set.selector) || !carriesNoteFor(object, owner) ||
          rendered.count(source.resource.plural + "/" + namespace_name + "/" + name) > 0 ||
          kube::object::isDeleting(object)) {
        continue;
      }
      const std::string what = describe(source.resource, namespace_name, name);
      kube::DeleteParams params;
      params.propagation_policy = "Background";
      params.preconditions = kube::Preconditions{kube::object::uid(object), ""};
      kube::Api api(client_, source.resource, namespace_name);
      auto removed = api.remove(name, params, stop);
      if (!removed.ok() && !removed.error().isNotFound() && !removed.error().isConflict()) {
        return OwnedError(OwnedErrorKind::Api, what,
                          removed.status().withContext("pruning " + what));
      }
      report.pruned.push_back(what);
    }
  }
  return report;
}

OwnedResult OwnedApplier::seed(const Json& owner, const OwnedChild& child,
                               const ChildSource& source, std::stop_token stop) const {
  ApplyReport report;
  Json intent = intentFor(child, owner);
  const std::string name = kube::object::name(intent);
  const std::string namespace_name =
      child.resource.namespaced ? kube::object::namespaceName(intent) : "";
  const std::string what = describe(child.resource, namespace_name, name);
  if (source.cache != nullptr && source.cache->get(kube::object::key(namespace_name, name))) {
    report.unchanged.push_back(what);
    return report;
  }
  kube::PostParams params;
  params.field_manager = std::string(kFieldManager);
  auto created = kube::Api(client_, child.resource, namespace_name).create(intent, params, stop);
  if (!created.ok() && !created.error().isAlreadyExists()) {
    return OwnedError(OwnedErrorKind::Api, what, created.status().withContext("creating " + what));
  }
  (created.ok() ? report.applied : report.unchanged).push_back(what);
  return report;
}

}  // namespace kvc::runtime
