#pragma once
// What the integration tests know about the store under test: DIR/env written by store.sh up
// (found through $KVC_STORE_ENV, set by ctest-run.sh), a client for its admin port, and the
// helpers that act on it from outside (stop/start a member, write an object, clean the ledger).

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kvc/store/admin_client.h"

namespace kvc::store::integration {

class StoreEnv {
public:
  // Loads $KVC_STORE_ENV once per process; fails the calling test when it is missing.
  static StoreEnv& get();

  const std::string& value(const std::string& key) const;
  std::int64_t number(const std::string& key) const;
  bool loaded() const { return loaded_; }

  std::string admin() const { return value("KVC_STORE_ADMIN"); }
  std::string rpc() const { return value("KVC_STORE_RPC"); }
  std::int64_t members() const { return number("KVC_STORE_MEMBERS"); }
  std::int64_t segmentBytes() const { return number("KVC_STORE_SEGMENT_BYTES"); }
  std::int64_t clientTtlSeconds() const { return number("KVC_STORE_CLIENT_TTL"); }
  std::string memberSegment(int i) const;

  // A fresh client of the admin port (5 s deadline per request).
  std::unique_ptr<AdminClient> client() const;

  // store.sh stop-member/start-member I; true on exit status 0.
  bool stopMember(int i) const;
  bool startMember(int i) const;

  // Writes `bytes` under `tenant` with the wheel's Python store API (tests/writer.py); returns
  // put()'s code (0, or a negative Mooncake error code), or INT32_MIN when the writer failed.
  int writeObject(const std::string& tenant, const std::string& key,
                  std::int64_t bytes = 1 << 20) const;

  // POST /api/v1/remove_all?force=true&tenant_id=T: drops the tenant's objects; true on 200.
  bool removeAllObjects(const std::string& tenant) const;

  // Removes every tenant's objects and policy, so each test starts from an empty ledger.
  void resetLedger() const;

private:
  StoreEnv() = default;
  std::map<std::string, std::string> values_;
  bool loaded_ = false;
};

// Polls `condition` every 100 ms until it holds or `timeout` passes; returns whether it held.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// Skips-or-fails guard at the top of every test: fails when the env file is missing.
#define KVC_REQUIRE_STORE()                                                               \
  do {                                                                                    \
    ASSERT_TRUE(::kvc::store::integration::StoreEnv::get().loaded())                      \
        << "no store env: run through ctest (store.up), or export KVC_STORE_ENV=DIR/env"; \
  } while (false)

}  // namespace kvc::store::integration
