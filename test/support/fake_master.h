#pragma once
// A Mooncake master for the controllers' unit tests, behind the store::AdminClient seam the
// controllers take (AdminClientFactory): /health, /metrics, /get_segments_detail and the tenant
// ledger, with the proportional recut the store makes (a domain is granted its requested bytes,
// scaled down by allocatable / Σ requested when the ledger asks for more than the capacity).
//
//   FakeMaster master("mooncake-dram-leader.gpustack-system.svc:9003", cluster.sharedLog());
//   config.stores = master.clients();
//
// Every call is logged in the IoLog as "<VERB> master/<route>": "GET master/health",
// "GET master/metrics", "GET master/get_segments_detail", "LIST master/tenant_quotas",
// "PUT master/tenant_quotas/<domain>", "DELETE master/tenant_quotas/<domain>". A client asked for
// another address fails every call as a refused connection (and logs nothing).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fake_cluster.h"
#include "kvc/common/status.h"
#include "kvc/store/admin_client.h"

namespace kvc::testing {

class FakeMaster {
public:
  using Factory =
      std::function<Result<std::unique_ptr<store::AdminClient>>(const std::string& address)>;

  explicit FakeMaster(std::string address, std::shared_ptr<IoLog> log = nullptr);
  ~FakeMaster();

  FakeMaster(const FakeMaster&) = delete;
  FakeMaster& operator=(const FakeMaster&) = delete;

  // The controllers' AdminClientFactory. The clients share this master's state.
  Factory clients();
  const std::string& address() const { return address_; }

  // What the master is.
  void setServing(bool serving);
  void setCapacity(std::int64_t bytes);  // total and allocatable
  void setMultiTenancy(bool enabled);    // off: the ledger answers 409 -1011
  void setSegments(std::vector<store::Segment> segments);
  // An explicit ledger entry, as another writer (or an earlier pass) left it.
  void setTenant(const std::string& id, std::int64_t requested_bytes);
  // The bytes a tenant holds (charged); a DELETE of a tenant holding bytes is TENANT_NOT_EMPTY.
  void setCharged(const std::string& id, std::int64_t bytes);

  // The next `times` calls logged as `line` fail with `error`.
  void failNext(std::string line, store::StoreError error, int times = 1);
  // Every call logged as `line` fails with `error` until cleared.
  void failAlways(std::string line, store::StoreError error);
  void clearFaults();

  // The ledger as the master holds it: domain -> requested bytes.
  std::map<std::string, std::int64_t> requested() const;
  // The grant of one domain after the recut (0 when absent).
  std::int64_t effective(const std::string& id) const;
  // Addresses the factory was asked for, in order.
  std::vector<std::string> addressesAsked() const;

private:
  class Client;
  struct State;
  std::shared_ptr<State> state_;
  std::string address_;
};

}  // namespace kvc::testing
