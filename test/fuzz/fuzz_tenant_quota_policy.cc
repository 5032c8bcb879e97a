// The tenant-quota policy file parser (policy/quota/tenant_quota_policy.h) on any text, as a
// master's rewrite of the file is read back: refused with a message, or tenants that pass the
// validators; rendered again, they read back the same (sorted by name). The quota spelling
// parser runs on the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kvc/policy/quota/tenant_quota_policy.h"

namespace {

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto quota = kvc::policy::parsePolicyQuota(text);
  check(!quota.ok() || *quota >= 1);
  auto tenants = kvc::policy::parsePolicyFile(text);
  if (!tenants.ok()) {
    check(!tenants.status().message().empty());
    return 0;
  }
  check(kvc::policy::validateTenantPolicies(*tenants).ok());
  auto rendered = kvc::policy::renderPolicyFile(*tenants);
  check(rendered.ok());
  auto again = kvc::policy::parsePolicyFile(*rendered);
  check(again.ok());
  auto sorted = *tenants;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  check(*again == sorted);
  return 0;
}
