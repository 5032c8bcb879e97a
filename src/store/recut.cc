#include "kvc/store/recut.h"

#include <algorithm>

namespace kvc::store {
namespace {
// GCC's 128-bit integer; `__extension__` keeps -Wpedantic quiet about it.
__extension__ typedef __int128 Int128;
}  // namespace

std::map<std::string, std::int64_t> expectedGrants(std::int64_t capacity_bytes,
                                                   const std::vector<QuotaRequest>& requests) {
  std::map<std::string, std::int64_t> grants;
  Int128 sum = 0;
  for (const QuotaRequest& request : requests) {
    sum += request.requested_bytes;
    grants[request.tenant_id] = 0;
  }
  if (capacity_bytes <= 0 || sum == 0) {
    return grants;
  }
  if (sum <= capacity_bytes) {
    for (const QuotaRequest& request : requests) {
      grants[request.tenant_id] = request.requested_bytes;
    }
    return grants;
  }
  struct Share {
    Int128 remainder;
    const std::string* tenant_id;
  };
  std::vector<Share> shares;
  shares.reserve(requests.size());
  Int128 handed_out = 0;
  for (const QuotaRequest& request : requests) {
    const Int128 product = static_cast<Int128>(capacity_bytes) * request.requested_bytes;
    const auto grant = static_cast<std::int64_t>(product / sum);
    grants[request.tenant_id] = grant;
    handed_out += grant;
    shares.push_back({product % sum, &request.tenant_id});
  }
  std::sort(shares.begin(), shares.end(), [](const Share& a, const Share& b) {
    if (a.remainder != b.remainder) {
      return a.remainder > b.remainder;
    }
    return *a.tenant_id < *b.tenant_id;
  });
  auto left = static_cast<std::int64_t>(capacity_bytes - handed_out);
  for (std::size_t i = 0; left > 0 && i < shares.size(); ++i, --left) {
    ++grants[*shares[i].tenant_id];
  }
  return grants;
}

}  // namespace kvc::store
