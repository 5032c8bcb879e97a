#include "kvc/api/indexes.h"

#include "kvc/api/binding.h"

namespace kvc::api {
std::vector<std::string> bindingPool(const Json& binding) {
  const std::string pool = stringAt(binding, {"spec", "poolRef", "name"});
  return pool.empty() ? std::vector<std::string>{} : std::vector<std::string>{pool};
}

std::vector<std::string> bindingDomain(const Json& binding) {
  const std::string domain = stringAt(binding, {"spec", "domain", "name"});
  return {domain.empty() ? std::string(kDefaultDomainName) : domain};
}

std::vector<std::string> poolBackends(const Json& pool) {
  std::vector<std::string> out;
  auto spec = pool.find("spec");
  if (spec == pool.end() || !spec->is_object()) {
    return out;
  }
  auto backends = spec->find("backends");
  if (backends == spec->end() || !backends->is_array()) {
    return out;
  }
  for (const Json& name : *backends) {
    if (name.is_string() && !name.get<std::string>().empty()) {
      out.push_back(name.get<std::string>());
    }
  }
  return out;
}

}  // namespace kvc::api
