#include "internal/store_objects.h"

#include "kvc/api/settings.h"
#include "kvc/controllers/indexes.h"
#include "kvc/kube/object.h"
#include "kvc/kube/time.h"

namespace kvc::controllers::internal {
namespace {}  // namespace

std::string instanceSelector(const std::string& backend) {
  return std::string(kStoreSelector) + "," + std::string(kInstanceLabel) + "=" + backend;
}

const runtime::Cache* childCache(const BackendControllerConfig& config,
                                 const kube::ResourceType& kind) {
  for (const runtime::ChildSource& source : config.children) {
    if (source.resource.plural == kind.plural && source.resource.group == kind.group) {
      return source.cache;
    }
  }
  return nullptr;
}

std::vector<Json> storePods(const BackendControllerConfig& config, const std::string& backend,
                            const std::string& component) {
  std::vector<Json> out;
  if (config.store_pods == nullptr) {
    return out;
  }
  for (const runtime::ObjectPtr& pod : config.store_pods->list()) {
    if (label(*pod, kInstanceLabel) == backend && label(*pod, kComponentLabel) == component) {
      out.push_back(*pod);
    }
  }
  return out;
}

std::string mountFailureOf(const BackendControllerConfig& config, const Json& pod) {
  if (config.mount_failures == nullptr) {
    return "";
  }
  // The Event's last sighting: a repeating one carries it in its series, a legacy one in
  // deprecatedLastTimestamp (RFC 3339 strings of one clock: they sort as times).
  const auto last_seen = [](const Json& event) {
    for (const char* path :
         {"/series/lastObservedTime", "/deprecatedLastTimestamp", "/eventTime"}) {
      const Json::json_pointer pointer(path);
      if (event.contains(pointer) && event.at(pointer).is_string()) {
        return event.at(pointer).get<std::string>();
      }
    }
    return std::string();
  };
  std::string note;
  std::string latest;
  const std::string uid = kube::object::uid(pod);
  for (const runtime::ObjectPtr& event :
       config.mount_failures->byIndex(kEventsByObject, kube::object::name(pod))) {
    if (stringAt(*event, {"regarding", "uid"}) != uid ||
        stringAt(*event, {"regarding", "kind"}) != "Pod") {
      continue;
    }
    const std::string seen = last_seen(*event);
    if (note.empty() || seen > latest) {
      note = stringAt(*event, {"note"});
      latest = seen;
    }
  }
  return note;
}

policy::StoreInputs storeInputs(const BackendControllerConfig& config) {
  policy::StoreInputs inputs;
  inputs.namespace_name = config.operator_namespace;
  inputs.settings_image = std::string(api::kDefaultBackendImage);
  if (config.settings) {
    const api::Settings settings = config.settings();
    inputs.settings_image = settings.kv_cache_backend_image;
    inputs.leader_lease = settings.leader_lease;
  }
  return inputs;
}

std::string describe(const Json& object) {
  return object.value("kind", std::string()) + " " + kube::object::namespaceName(object) + "/" +
         kube::object::name(object);
}

std::optional<std::int64_t> secondsBetween(const std::string& from, const std::string& to) {
  auto a = kube::parseTime(from);
  auto b = kube::parseTime(to);
  if (!a.ok() || !b.ok()) {
    return std::nullopt;
  }
  return std::chrono::duration_cast<std::chrono::seconds>(*b - *a).count();
}

runtime::Action actionFor(policy::BackendNext next, const BackendControllerConfig& config) {
  switch (next) {
    case policy::BackendNext::Done:
      return runtime::Action::done();
    case policy::BackendNext::TeardownPoll:
      return runtime::Action::requeueAfter(config.teardown_poll);
    case policy::BackendNext::Resync:
      break;
  }
  return runtime::Action::requeueAfter(config.resync);
}

}  // namespace kvc::controllers::internal
