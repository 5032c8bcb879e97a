#include "kvc/runtime/finalizer.h"

#include "kvc/kube/object.h"

#include <spdlog/spdlog.h>

#include <string>

namespace kvc::runtime {
namespace {

Json currentFinalizers(const Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return Json();
  }
  auto it = meta->find("finalizers");
  if (it == meta->end() || !it->is_array()) {
    return Json();
  }
  return *it;
}

Status patchStatus(const kube::ApiResult<Json>& result, std::string_view what) {
  if (result.ok()) {
    return okStatus();
  }
  const kube::ApiError& e = result.error();
  // A failed `test` is answered 422 Invalid: someone changed the finalizers since we read them.
  if (e.isInvalid() || e.isConflict()) {
    return aborted(std::string(what) +
                   ": the finalizers changed concurrently; retrying from a "
                   "fresh read (" +
                   e.describe() + ")");
  }
  return e.status().withContext(what);
}

}  // namespace

bool hasFinalizer(const Json& object, std::string_view finalizer) {
  const Json finalizers = currentFinalizers(object);
  if (!finalizers.is_array()) {
    return false;
  }
  for (const Json& f : finalizers) {
    if (f.is_string() && f.get_ref<const std::string&>() == finalizer) {
      return true;
    }
  }
  return false;
}

Json addFinalizerPatch(const Json& object, std::string_view finalizer) {
  const Json current = currentFinalizers(object);
  Json ops = Json::array();
  if (!current.is_array() || current.empty()) {
    // An absent list tests as null; an empty one as [].
    ops.push_back({{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", current}});
    ops.push_back({{"op", "add"},
                   {"path", "/metadata/finalizers"},
                   {"value", Json::array({std::string(finalizer)})}});
  } else {
    ops.push_back({{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", current}});
    ops.push_back(
        {{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", std::string(finalizer)}});
  }
  return ops;
}

Json removeFinalizerPatch(const Json& object, std::string_view finalizer) {
  const Json current = currentFinalizers(object);
  if (!hasFinalizer(object, finalizer)) {
    return Json::array();
  }
  Json remaining = Json::array();
  for (const Json& f : current) {
    if (!(f.is_string() && f.get_ref<const std::string&>() == finalizer)) {
      remaining.push_back(f);
    }
  }
  Json ops = Json::array();
  ops.push_back({{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", current}});
  ops.push_back({{"op", "replace"}, {"path", "/metadata/finalizers"}, {"value", remaining}});
  return ops;
}

Status addFinalizer(const kube::Api& api, const Json& object, std::string_view finalizer,
                    std::stop_token stop) {
  const std::string name = kube::object::name(object);
  return patchStatus(
      api.patch(name, kube::JsonPatch{addFinalizerPatch(object, finalizer)}, {}, stop),
      "adding finalizer " + std::string(finalizer) + " to " + kube::object::key(object));
}

Status removeFinalizer(const kube::Api& api, const Json& object, std::string_view finalizer,
                       std::stop_token stop) {
  Json ops = removeFinalizerPatch(object, finalizer);
  if (ops.empty()) {
    return okStatus();
  }
  const std::string name = kube::object::name(object);
  auto result = api.patch(name, kube::JsonPatch{std::move(ops)}, {}, stop);
  if (!result.ok() && result.error().isNotFound()) {
    return okStatus();  // already gone: nothing left to hold
  }
  return patchStatus(result, "removing finalizer " + std::string(finalizer) + " from " +
                                 kube::object::key(object));
}

Result<Action> reconcileWithFinalizer(const kube::Api& api, const Json& object,
                                      std::string_view finalizer, const FinalizerStep& apply,
                                      const FinalizerStep& cleanup, std::stop_token stop) {
  const bool present = hasFinalizer(object, finalizer);
  if (kube::object::isDeleting(object)) {
    if (!present) {
      return Action::done();
    }
    KVC_ASSIGN_OR_RETURN(Action action, cleanup(object));
    if (action.requeue || action.requeue_after) {
      return action;  // cleanup is still under way: keep holding the object
    }
    KVC_RETURN_IF_ERROR(removeFinalizer(api, object, finalizer, stop));
    spdlog::debug("finalizer {}: cleaned up and released {}", finalizer, kube::object::key(object));
    return Action::done();
  }
  if (!present) {
    KVC_RETURN_IF_ERROR(addFinalizer(api, object, finalizer, stop));
    return Action::done();
  }
  return apply(object);
}

}  // namespace kvc::runtime
