// The master's tenant-ledger decoders (store/ledger.h) on any body: the list, one entry, a
// DELETE's answer, and the classification of a refusal. Each answer is refused with a
// MalformedBody or read; a read list has unique, named tenants with non-negative figures, and
// written back as the master writes it, reads back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <set>
#include <string>
#include <string_view>

#include "kvc/common/json.h"
#include "kvc/store/ledger.h"

namespace {

using kvc::Json;
using kvc::store::TenantQuota;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

// A refusal's message ends up in a status condition: it must be printable as JSON (dump()
// throws on bytes that are not UTF-8).
void checkMessage(const std::string& message) {
  check(!message.empty());
  (void)kvc::Json(message).dump();
}

Json encode(const TenantQuota& q) {
  Json entry = {{"tenant_id", q.tenant_id},
                {"requested_quota_bytes", q.requested_quota_bytes},
                {"effective_quota_bytes", q.effective_quota_bytes},
                {"over_quota", q.over_quota},
                {"has_explicit_policy", q.has_explicit_policy}};
  for (auto [key, field] :
       {std::pair{"used_bytes", &q.used_bytes}, std::pair{"reserved_bytes", &q.reserved_bytes},
        std::pair{"committed_count", &q.committed_count},
        std::pair{"metadata_object_count", &q.metadata_object_count},
        std::pair{"charged_bytes", &q.charged_bytes}}) {
    if (*field) {
      entry[key] = **field;
    }
  }
  if (q.admission_closed) {
    entry["admission_closed"] = *q.admission_closed;
  }
  return entry;
}

bool same(const TenantQuota& a, const TenantQuota& b) { return encode(a) == encode(b); }

void checkEntry(const TenantQuota& q) {
  check(!q.tenant_id.empty());
  check(q.requested_quota_bytes >= 0 && q.effective_quota_bytes >= 0);
  check(q.occupancyBytes().value_or(0) >= 0);
}

template <typename R>
void checkRefusal(const R& result) {
  check(result.error().kind() == kvc::store::StoreErrorKind::MalformedBody);
  checkMessage(result.error().message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto list = kvc::store::parseTenantQuotaList(body);
  if (list.ok()) {
    std::set<std::string> seen;
    Json entries = Json::array();
    for (const TenantQuota& q : *list) {
      checkEntry(q);
      check(seen.insert(q.tenant_id).second);
      entries.push_back(encode(q));
    }
    auto again =
        kvc::store::parseTenantQuotaList(Json{{"success", true}, {"data", entries}}.dump());
    check(again.ok() && again->size() == list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
      check(same((*list)[i], (*again)[i]));
    }
  } else {
    checkRefusal(list);
  }
  auto entry = kvc::store::parseTenantQuotaEntry(body);
  if (entry.ok()) {
    checkEntry(*entry);
  } else {
    checkRefusal(entry);
  }
  auto deleted = kvc::store::parseTenantQuotaDeleted(body);
  if (deleted.ok()) {
    check(!entry.ok() || (*deleted && same(**deleted, *entry)));
  } else {
    checkRefusal(deleted);
  }
  // classifyLedgerRefusal parses the body again for every status but 503: a short body (every
  // refusal the master writes is) is classified under each status, a longer one under the
  // status its length picks, so a wide body is not parsed five more times per execution.
  static constexpr int kStatuses[] = {400, 404, 409, 500, 503, 418};
  constexpr std::size_t kEveryStatus = 4096;
  for (std::size_t i = 0; i < std::size(kStatuses); ++i) {
    if (size <= kEveryStatus || i == size % std::size(kStatuses)) {
      const kvc::store::StoreError refusal =
          kvc::store::classifyLedgerRefusal(kStatuses[i], body, "reading the tenant ledger");
      checkMessage(refusal.message());
    }
  }
  return 0;
}
