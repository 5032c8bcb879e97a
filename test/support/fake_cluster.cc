#include "fake_cluster.h"

#include <algorithm>
#include <stdexcept>

#include "kvc/kube/object.h"
#include "kvc/kube/request.h"
#include "kvc/kube/time.h"
#include "kvc/runtime/owned.h"
#include "kvc/runtime/status_writer.h"

namespace kvc::testing {
namespace {

std::vector<std::string> split(std::string_view path) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) {
      slash = path.size();
    }
    if (slash > pos) {
      out.emplace_back(path.substr(pos, slash - pos));
    }
    pos = slash + 1;
  }
  return out;
}

// Everything but metadata and status: what moves metadata.generation.
Json specPart(const Json& object) {
  Json out = object.is_object() ? object : Json::object();
  out.erase("metadata");
  out.erase("status");
  out.erase("apiVersion");
  out.erase("kind");
  return out;
}

// Server-side apply, simplified: the intent's fields win, objects merge, arrays are replaced.
void mergeIntent(Json& live, const Json& intent) {
  if (!intent.is_object() || !live.is_object()) {
    live = intent;
    return;
  }
  for (const auto& [key, value] : intent.items()) {
    auto it = live.find(key);
    if (it == live.end() || !value.is_object() || !it->is_object()) {
      live[key] = value;
    } else {
      mergeIntent(*it, value);
    }
  }
}

bool hasFinalizers(const Json& object) {
  const Json finalizers = object.value(Json::json_pointer("/metadata/finalizers"), Json::array());
  return finalizers.is_array() && !finalizers.empty();
}

}  // namespace

// ---- IoLog ----------------------------------------------------------------------------------

bool isWrite(const std::string& line) {
  for (std::string_view verb : {"CREATE ", "PUT ", "PATCH ", "APPLY ", "DELETE "}) {
    if (line.rfind(verb, 0) == 0) {
      return true;
    }
  }
  return false;
}

void IoLog::add(std::string line) {
  std::lock_guard<std::mutex> guard(mutex_);
  lines_.push_back(std::move(line));
}

std::vector<std::string> IoLog::lines() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return lines_;
}

std::vector<std::string> IoLog::writes() const { return filtered(&isWrite); }

std::vector<std::string> IoLog::filtered(
    const std::function<bool(const std::string&)>& keep) const {
  std::vector<std::string> out;
  for (const std::string& line : lines()) {
    if (keep(line)) {
      out.push_back(line);
    }
  }
  return out;
}

void IoLog::clear() {
  std::lock_guard<std::mutex> guard(mutex_);
  lines_.clear();
}

// ---- FakeCluster ----------------------------------------------------------------------------

struct FakeCluster::Target {
  kube::ResourceType resource;
  std::string namespace_name;
  std::string name;         // "" for the collection
  std::string subresource;  // "status", ...

  std::string key() const {
    return resource.namespaced ? kube::object::key(namespace_name, name) : name;
  }
  std::string describe() const {
    std::string out = resource.plural;
    if (!name.empty()) {
      out += "/" + key();
    } else if (!namespace_name.empty()) {
      out += "/" + namespace_name;
    }
    if (!subresource.empty()) {
      out += "/" + subresource;
    }
    return out;
  }
};

FakeCluster::FakeCluster(const Clock& clock) : clock_(clock), log_(std::make_shared<IoLog>()) {}

FakeCluster::~FakeCluster() = default;

FakeHandler FakeCluster::handler() {
  return [this](const FakeRequest& request, ResponseWriter& out) { handle(request, out); };
}

std::string FakeCluster::objectsKey(const kube::ResourceType& resource) {
  return resource.group + "/" + resource.plural;
}

runtime::Store& FakeCluster::cache(const kube::ResourceType& resource, std::string namespace_name,
                                   std::string selector) {
  std::lock_guard<std::mutex> guard(mutex_);
  Mirror mirror{resource, std::move(namespace_name), std::move(selector),
                std::make_unique<runtime::Store>()};
  for (const auto& [key, object] : objects_[objectsKey(resource)]) {
    if ((mirror.namespace_name.empty() ||
         kube::object::namespaceName(object) == mirror.namespace_name) &&
        runtime::matchesSelector(object, mirror.selector)) {
      mirror.store->upsert(key, object, runtime::packObject(object));
    }
  }
  mirrors_.push_back(std::move(mirror));
  return *mirrors_.back().store;
}

void FakeCluster::put(const kube::ResourceType& resource, const std::string& key,
                      std::optional<Json> object) {
  auto& objects = objects_[objectsKey(resource)];
  if (object) {
    objects[key] = *object;
  } else {
    objects.erase(key);
  }
  for (Mirror& mirror : mirrors_) {
    if (!(mirror.resource == resource)) {
      continue;
    }
    const bool matches = object &&
                         (mirror.namespace_name.empty() ||
                          kube::object::namespaceName(*object) == mirror.namespace_name) &&
                         runtime::matchesSelector(*object, mirror.selector);
    if (matches) {
      mirror.store->upsert(key, *object, runtime::packObject(*object));
    } else {
      mirror.store->remove(key);
    }
  }
}

Json FakeCluster::stamp(const kube::ResourceType& resource, Json object) {
  object["apiVersion"] = resource.apiVersion();
  object["kind"] = resource.kind;
  Json& meta = object["metadata"];
  if (!meta.contains("uid")) {
    meta["uid"] = "uid-" + meta.value("name", std::string());
  }
  if (!meta.contains("creationTimestamp")) {
    meta["creationTimestamp"] = kube::formatTime(clock_.wallNow());
  }
  if (!meta.contains("generation")) {
    meta["generation"] = 1;
  }
  meta["resourceVersion"] = std::to_string(++version_);
  return object;
}

Json FakeCluster::create(const kube::ResourceType& resource, Json object) {
  std::lock_guard<std::mutex> guard(mutex_);
  object = stamp(resource, std::move(object));
  put(resource, kube::object::key(object), object);
  return object;
}

Json FakeCluster::update(const kube::ResourceType& resource, Json object) {
  std::lock_guard<std::mutex> guard(mutex_);
  object["apiVersion"] = resource.apiVersion();
  object["kind"] = resource.kind;
  object["metadata"]["resourceVersion"] = std::to_string(++version_);
  put(resource, kube::object::key(object), object);
  return object;
}

Json FakeCluster::modify(const kube::ResourceType& resource, const std::string& key,
                         const std::function<void(Json&)>& change) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& objects = objects_[objectsKey(resource)];
  auto it = objects.find(key);
  if (it == objects.end()) {
    throw std::runtime_error("FakeCluster::modify: no " + resource.plural + " " + key);
  }
  Json object = it->second;
  change(object);
  object["metadata"]["resourceVersion"] = std::to_string(++version_);
  put(resource, key, object);
  return object;
}

void FakeCluster::remove(const kube::ResourceType& resource, const std::string& key) {
  std::lock_guard<std::mutex> guard(mutex_);
  ++version_;
  put(resource, key, std::nullopt);
}

std::optional<Json> FakeCluster::get(const kube::ResourceType& resource,
                                     const std::string& key) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto objects = objects_.find(objectsKey(resource));
  if (objects == objects_.end()) {
    return std::nullopt;
  }
  auto it = objects->second.find(key);
  if (it == objects->second.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::vector<Json> FakeCluster::list(const kube::ResourceType& resource) const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<Json> out;
  auto objects = objects_.find(objectsKey(resource));
  if (objects != objects_.end()) {
    for (const auto& [key, object] : objects->second) {
      out.push_back(object);
    }
  }
  return out;
}

void FakeCluster::failNext(std::string line, int status, std::string reason, int times) {
  std::lock_guard<std::mutex> guard(mutex_);
  faults_.push_back({std::move(line), status, std::move(reason), times});
}

void FakeCluster::beforeNext(std::string line, std::function<void()> action) {
  std::lock_guard<std::mutex> guard(mutex_);
  hooks_.push_back({std::move(line), std::move(action)});
}

Json FakeCluster::commit(const kube::ResourceType& resource, const std::string& key,
                         const Json& before, Json after) {
  Json& meta = after["metadata"];
  // What a client may not change.
  for (const char* field : {"uid", "creationTimestamp", "deletionTimestamp", "name", "namespace"}) {
    if (before["metadata"].contains(field)) {
      meta[field] = before["metadata"][field];
    }
  }
  after["apiVersion"] = resource.apiVersion();
  after["kind"] = resource.kind;
  std::int64_t generation = kube::object::generation(before);
  if (runtime::sameJson(specPart(before), specPart(after)) == false) {
    ++generation;
  }
  meta["generation"] = generation;
  meta["resourceVersion"] = std::to_string(++version_);
  if (kube::object::isDeleting(after) && !hasFinalizers(after)) {
    put(resource, key, std::nullopt);
  } else {
    put(resource, key, after);
  }
  return after;
}

void FakeCluster::handle(const FakeRequest& request, ResponseWriter& out) {
  // /api/v1/[namespaces/<ns>/]<plural>[/<name>[/<sub>]]
  // /apis/<group>/<version>/[namespaces/<ns>/]<plural>[/<name>[/<sub>]]
  std::vector<std::string> parts = split(request.path);
  Target target;
  std::size_t at = 0;
  std::string group;
  if (parts.size() >= 2 && parts[0] == "api") {
    at = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    group = parts[1];
    at = 3;
  } else {
    out.respond(404, statusBody(404, "NotFound", "no route " + request.path));
    return;
  }
  if (parts.size() >= at + 3 && parts[at] == "namespaces") {
    target.namespace_name = parts[at + 1];
    at += 2;
  }
  if (parts.size() <= at) {
    out.respond(404, statusBody(404, "NotFound", "no resource in " + request.path));
    return;
  }
  const std::string plural = parts[at];
  const kube::ResourceType* resource = nullptr;
  for (const kube::ResourceType& known : kube::resources::all()) {
    if (known.group == group && known.plural == plural) {
      resource = &known;
    }
  }
  if (resource == nullptr) {
    out.respond(404, statusBody(404, "NotFound", "unknown resource " + group + "/" + plural));
    return;
  }
  target.resource = *resource;
  if (parts.size() > at + 1) {
    target.name = parts[at + 1];
  }
  if (parts.size() > at + 2) {
    target.subresource = parts[at + 2];
  }

  std::string verb = request.method;
  const std::string content_type = [&] {
    auto it = request.headers.find("content-type");
    return it == request.headers.end() ? std::string() : it->second;
  }();
  if (verb == "GET" && target.name.empty()) {
    verb = "LIST";
  } else if (verb == "POST") {
    verb = "CREATE";
  } else if (verb == "PATCH" && content_type == kube::kContentApplyPatch) {
    verb = "APPLY";
  }
  std::string line;
  if (verb == "CREATE") {
    std::string name;
    Json body = Json::parse(request.body, nullptr, false);
    if (body.is_object()) {
      name = body.value(Json::json_pointer("/metadata/name"), std::string());
    }
    Target created = target;
    created.name = name;
    line = "CREATE " + created.describe();
  } else {
    line = verb + " " + target.describe();
  }
  log_->add(line);

  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto it = faults_.begin(); it != faults_.end(); ++it) {
      if (it->line == line) {
        const int status = it->status;
        const std::string reason = it->reason;
        if (--it->times <= 0) {
          faults_.erase(it);
        }
        out.respond(status, statusBody(status, reason, "injected failure of " + line));
        return;
      }
    }
    for (auto it = hooks_.begin(); it != hooks_.end(); ++it) {
      if (it->line == line) {
        hook = std::move(it->action);
        hooks_.erase(it);
        break;
      }
    }
  }
  if (hook) {
    hook();
  }
  serve(target, request, out);
}

void FakeCluster::serve(const Target& target, const FakeRequest& request, ResponseWriter& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  const kube::ResourceType& resource = target.resource;
  auto& objects = objects_[objectsKey(resource)];
  const std::string key = target.key();
  const std::string content_type = [&] {
    auto it = request.headers.find("content-type");
    return it == request.headers.end() ? std::string() : it->second;
  }();
  auto not_found = [&] {
    out.respond(
        404, statusBody(404, "NotFound", resource.plural + " \"" + target.name + "\" not found"));
  };
  auto conflict = [&](const std::string& why) {
    out.respond(409, statusBody(409, "Conflict",
                                "Operation cannot be fulfilled on " + resource.plural + " \"" +
                                    target.name + "\": " + why));
  };
  Json body;
  if (!request.body.empty()) {
    body = Json::parse(request.body, nullptr, false);
    if (body.is_discarded()) {
      out.respond(400, statusBody(400, "BadRequest", "the body is not JSON"));
      return;
    }
  }

  if (request.method == "GET" && target.name.empty()) {
    if (request.param("watch") == "true") {
      out.respond(405, statusBody(405, "MethodNotAllowed", "FakeCluster serves no watches"));
      return;
    }
    Json items = Json::array();
    for (const auto& [k, object] : objects) {
      if ((target.namespace_name.empty() ||
           kube::object::namespaceName(object) == target.namespace_name) &&
          runtime::matchesSelector(object, request.param("labelSelector"))) {
        items.push_back(object);
      }
    }
    Json list = {{"apiVersion", resource.apiVersion()},
                 {"kind", resource.kind + "List"},
                 {"metadata", {{"resourceVersion", std::to_string(version_)}}},
                 {"items", std::move(items)}};
    lock.unlock();
    out.respond(200, list.dump());
    return;
  }

  auto it = objects.find(key);
  const bool exists = !target.name.empty() && it != objects.end();

  if (request.method == "GET") {
    if (!exists) {
      lock.unlock();
      not_found();
      return;
    }
    const std::string text = it->second.dump();
    lock.unlock();
    out.respond(200, text);
    return;
  }

  if (request.method == "POST") {
    Json object = body;
    if (resource.namespaced) {
      object["metadata"]["namespace"] = target.namespace_name;
    }
    const std::string created_key = kube::object::key(object);
    if (objects.count(created_key) > 0) {
      lock.unlock();
      out.respond(409, statusBody(409, "AlreadyExists",
                                  resource.plural + " \"" + kube::object::name(object) +
                                      "\" already exists"));
      return;
    }
    object = stamp(resource, std::move(object));
    put(resource, created_key, object);
    lock.unlock();
    out.respond(201, object.dump());
    return;
  }

  if (request.method == "PATCH" && content_type == kube::kContentApplyPatch &&
      target.subresource.empty()) {
    if (!exists) {
      Json object = body;
      if (resource.namespaced) {
        object["metadata"]["namespace"] = target.namespace_name;
      }
      object = stamp(resource, std::move(object));
      put(resource, key, object);
      lock.unlock();
      out.respond(201, object.dump());
      return;
    }
    const Json before = it->second;
    Json after = before;
    mergeIntent(after, body);
    after["status"] = before.value("status", Json());
    if (after["status"].is_null()) {
      after.erase("status");
    }
    Json stored = commit(resource, key, before, std::move(after));
    lock.unlock();
    out.respond(200, stored.dump());
    return;
  }

  if (!exists) {
    lock.unlock();
    not_found();
    return;
  }
  const Json before = it->second;

  if (request.method == "PUT") {
    const std::string sent =
        body.value(Json::json_pointer("/metadata/resourceVersion"), std::string());
    if (!sent.empty() && sent != kube::object::resourceVersion(before)) {
      lock.unlock();
      conflict(
          "the object has been modified; please apply your changes to the latest version "
          "and try again");
      return;
    }
    Json after = before;
    if (target.subresource == "status") {
      after["status"] = body.value("status", Json::object());
    } else {
      after = body;
      if (before.contains("status")) {
        after["status"] = before["status"];
      }
    }
    Json stored = commit(resource, key, before, std::move(after));
    lock.unlock();
    out.respond(200, stored.dump());
    return;
  }

  if (request.method == "PATCH") {
    Json after;
    if (content_type == kube::kContentJsonPatch) {
      try {
        // A `test` of null on an absent path passes, as on the API server (evanphx/json-patch):
        // that is how a client guards the first finalizer of an object that has none.
        Json operations = Json::array();
        for (const Json& op : body.is_array() ? body : Json::array()) {
          if (op.value("op", std::string()) == "test" && op.contains("value") &&
              op["value"].is_null() &&
              !before.contains(Json::json_pointer(op.value("path", std::string())))) {
            continue;
          }
          operations.push_back(op);
        }
        after = before.patch(operations);
      } catch (const std::exception& e) {
        lock.unlock();
        out.respond(422,
                    statusBody(422, "Invalid", std::string("the JSON patch failed: ") + e.what()));
        return;
      }
    } else {
      after = before;
      after.merge_patch(body);
    }
    if (target.subresource == "status") {
      Json merged = before;
      merged["status"] = after.value("status", Json::object());
      after = std::move(merged);
    } else if (before.contains("status")) {
      after["status"] = before["status"];
    }
    Json stored = commit(resource, key, before, std::move(after));
    lock.unlock();
    out.respond(200, stored.dump());
    return;
  }

  if (request.method == "DELETE") {
    std::string uid;
    if (body.is_object()) {
      uid = body.value(Json::json_pointer("/preconditions/uid"), std::string());
    }
    if (!uid.empty() && uid != kube::object::uid(before)) {
      lock.unlock();
      conflict("Precondition failed: UID in precondition: " + uid +
               ", UID in object meta: " + kube::object::uid(before));
      return;
    }
    const std::string policy =
        body.is_object() ? body.value("propagationPolicy", std::string()) : std::string();
    Json after = before;
    if (policy == "Foreground") {
      Json& finalizers = after["metadata"]["finalizers"];
      if (!finalizers.is_array()) {
        finalizers = Json::array();
      }
      if (std::find(finalizers.begin(), finalizers.end(), Json("foregroundDeletion")) ==
          finalizers.end()) {
        finalizers.push_back("foregroundDeletion");
      }
    }
    if (!hasFinalizers(after)) {
      ++version_;
      put(resource, key, std::nullopt);
      lock.unlock();
      out.respond(200, before.dump());
      return;
    }
    if (!kube::object::isDeleting(after)) {
      after["metadata"]["deletionTimestamp"] = kube::formatTime(clock_.wallNow());
    }
    after["metadata"]["resourceVersion"] = std::to_string(++version_);
    put(resource, key, after);
    lock.unlock();
    out.respond(200, after.dump());
    return;
  }

  lock.unlock();
  out.respond(405, statusBody(405, "MethodNotAllowed", request.method + " " + request.path));
}

}  // namespace kvc::testing
