#include "kvc/runtime/reader.h"

#include "kvc/kube/object.h"

namespace kvc::runtime {

CachedReader::CachedReader(kube::ClientPtr client, kube::ResourceType resource, const Cache* cache,
                           std::chrono::milliseconds timeout)
    : client_(std::move(client)),
      resource_(std::move(resource)),
      cache_(cache),
      timeout_(timeout) {}

Result<std::optional<ObjectPtr>> CachedReader::get(std::string_view namespace_name,
                                                   std::string_view name,
                                                   std::stop_token stop) const {
  if (cache_ != nullptr) {
    if (ObjectPtr cached = cache_->get(kube::object::key(namespace_name, name))) {
      return std::optional<ObjectPtr>(std::move(cached));
    }
  }
  kube::Api api(client_, resource_, std::string(namespace_name));
  if (timeout_.count() > 0) {
    api = api.withTimeout(timeout_);
  }
  auto live = api.getOptional(name, std::move(stop));
  if (!live.ok()) {
    return live.status();
  }
  if (!live->has_value()) {
    return std::optional<ObjectPtr>();
  }
  return std::optional<ObjectPtr>(std::make_shared<const Json>(std::move(**live)));
}

Result<bool> CachedReader::exists(std::string_view namespace_name, std::string_view name,
                                  std::stop_token stop) const {
  KVC_ASSIGN_OR_RETURN(std::optional<ObjectPtr> object, get(namespace_name, name, std::move(stop)));
  return object.has_value();
}

}  // namespace kvc::runtime
