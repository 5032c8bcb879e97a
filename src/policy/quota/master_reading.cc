#include "kvc/policy/quota/master_reading.h"

namespace kvc::policy {

bool MasterReading::inLedger(const std::string& domain) const {
  for (const ObservedTenant& tenant : tenants) {
    if (tenant.tenant_id == domain) {
      return tenant.has_explicit_policy;
    }
  }
  return false;
}

}  // namespace kvc::policy
