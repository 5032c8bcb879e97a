#pragma once
// Small accessors for an object's JSON (client-go's meta.Accessor and MetaNamespaceKeyFunc):
// empty strings and 0 when a field is absent. Pure: usable by any layer that reads objects,
// without the REST client.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "kvc/common/json.h"

namespace kvc::kube::object {

std::string name(const Json& obj);
std::string namespaceName(const Json& obj);
std::string uid(const Json& obj);
std::string resourceVersion(const Json& obj);
std::int64_t generation(const Json& obj);
bool isDeleting(const Json& obj);  // metadata.deletionTimestamp is set
// "namespace/name", or "name" for cluster-scoped objects (client-go's MetaNamespaceKeyFunc).
std::string key(const Json& obj);
std::string key(std::string_view namespace_name, std::string_view name);
// Splits a key back into namespace (possibly "") and name.
std::pair<std::string, std::string> splitKey(std::string_view key);

}  // namespace kvc::kube::object
