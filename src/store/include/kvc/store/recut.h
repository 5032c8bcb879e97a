#pragma once
// The master's proportional recut of tenant quotas (mooncake-store/src/tenant_quota.cpp),
// restated so that tests and explanations can say what grant to expect. The operator never
// applies it: it writes ceilings as requested bytes and reads the grants back.
//
// With S = Σ requested over tenants with an explicit policy and C the mounted memory capacity:
//   S ≤ C  every tenant is granted exactly its request (spare capacity is not handed out);
//   S > C  each grant is floor(C × requested / S), and the bytes left over go one at a time to
//          the largest remainders (ties by tenant id), so the grants add up to C exactly.
// With no capacity every grant is 0.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvc::store {

struct QuotaRequest {
  std::string tenant_id;
  std::int64_t requested_bytes = 0;
};

// Grant per tenant id. Requests must be non-negative and tenant ids distinct.
std::map<std::string, std::int64_t> expectedGrants(std::int64_t capacity_bytes,
                                                   const std::vector<QuotaRequest>& requests);

}  // namespace kvc::store
