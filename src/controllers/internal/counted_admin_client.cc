#include "counted_admin_client.h"

namespace kvc::controllers::internal {
namespace {

class CountedAdminClient final : public store::AdminClient {
public:
  CountedAdminClient(std::unique_ptr<store::AdminClient> inner, std::string backend,
                     runtime::CounterFamily& requests)
      : inner_(std::move(inner)), backend_(std::move(backend)), requests_(requests) {}

  const std::string& address() const override { return inner_->address(); }
  store::StoreResult<store::Health> health() override {
    return counted("health", inner_->health());
  }
  store::StoreResult<store::StoreMetrics> metrics() override {
    return counted("metrics", inner_->metrics());
  }
  store::StoreResult<store::SegmentListing> segments() override {
    return counted("segments", inner_->segments());
  }
  store::StoreResult<std::vector<store::TenantQuota>> listTenantQuotas() override {
    return counted("ledger_list", inner_->listTenantQuotas());
  }
  store::StoreResult<store::TenantQuota> getTenantQuota(std::string_view tenant_id) override {
    return counted("ledger_get", inner_->getTenantQuota(tenant_id));
  }
  store::StoreResult<store::TenantQuota> putTenantQuota(std::string_view tenant_id,
                                                        std::int64_t requested_bytes) override {
    return counted("ledger_put", inner_->putTenantQuota(tenant_id, requested_bytes));
  }
  store::StoreResult<std::optional<store::TenantQuota>> deleteTenantQuota(
      std::string_view tenant_id) override {
    return counted("ledger_delete", inner_->deleteTenantQuota(tenant_id));
  }

private:
  template <typename T>
  store::StoreResult<T> counted(const char* operation, store::StoreResult<T> result) {
    const std::string outcome = result.ok()
                                    ? std::string("ok")
                                    : std::string(store::storeErrorKindName(result.error().kind()));
    requests_.with({backend_, operation, outcome}).inc();
    return result;
  }

  std::unique_ptr<store::AdminClient> inner_;
  std::string backend_;
  runtime::CounterFamily& requests_;
};

}  // namespace

AdminClientFactory countedAdminClients(AdminClientFactory inner, runtime::Registry& registry) {
  runtime::CounterFamily& requests = registry.counter(
      std::string(kMasterRequestsMetric),
      "Requests to a store's master (its admin API: health, metrics, segments and the tenant "
      "ledger), by backend, operation and result (ok or the error's kind).",
      {"backend", "operation", "result"});
  return [inner = std::move(inner),
          &requests](const StoreTarget& target) -> Result<std::unique_ptr<store::AdminClient>> {
    auto client = inner(target);
    if (!client.ok()) {
      requests
          .with({target.backend, "connect", std::string(statusCodeName(client.status().code()))})
          .inc();
      return client.status();
    }
    return std::unique_ptr<store::AdminClient>(
        std::make_unique<CountedAdminClient>(std::move(client).value(), target.backend, requests));
  };
}

}  // namespace kvc::controllers::internal
