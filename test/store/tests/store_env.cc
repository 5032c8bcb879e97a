#include "store_env.h"

#include <sys/wait.h>

#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace kvc::store::integration {
namespace {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

// Runs a shell command; returns its exit status and appends its stdout to `out`.
int run(const std::string& command, std::string* out) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return -1;
  }
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) {
    if (out != nullptr) {
      *out += buffer.data();
    }
  }
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

StoreEnv& StoreEnv::get() {
  static StoreEnv env = [] {
    StoreEnv loaded;
    const char* path = std::getenv("KVC_STORE_ENV");
    if (path == nullptr) {
      return loaded;
    }
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') {
        continue;
      }
      const auto eq = line.find('=');
      if (eq == std::string::npos) {
        continue;
      }
      std::string value = line.substr(eq + 1);
      if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
        value = value.substr(1, value.size() - 2);
      }
      loaded.values_[line.substr(0, eq)] = value;
    }
    loaded.loaded_ = loaded.values_.count("KVC_STORE_ADMIN") == 1;
    return loaded;
  }();
  return env;
}

const std::string& StoreEnv::value(const std::string& key) const {
  static const std::string kEmpty;
  const auto it = values_.find(key);
  return it == values_.end() ? kEmpty : it->second;
}

std::int64_t StoreEnv::number(const std::string& key) const {
  const std::string& text = value(key);
  return text.empty() ? 0 : std::stoll(text);
}

std::string StoreEnv::memberSegment(int i) const {
  return value("KVC_STORE_MEMBER_" + std::to_string(i) + "_SEGMENT");
}

std::unique_ptr<AdminClient> StoreEnv::client() const {
  auto client = HttpAdminClient::create(admin());
  if (!client.ok()) {
    ADD_FAILURE() << client.status().message();
    return nullptr;
  }
  return std::move(*client);
}

namespace {

// store.sh ACTION I DIR; on failure its output goes into the test's failure message.
bool storeScript(const std::string& action, int i, const std::string& dir) {
  std::string out;
  const int status = run(std::string(KVC_STORE_SCRIPT_DIR) + "/store.sh " + action + " " +
                             std::to_string(i) + " " + shellQuote(dir) + " 2>&1",
                         &out);
  if (status != 0) {
    ADD_FAILURE() << "store.sh " << action << " " << i << " exited " << status << ":\n" << out;
  }
  return status == 0;
}

}  // namespace

bool StoreEnv::stopMember(int i) const {
  return storeScript("stop-member", i, value("KVC_STORE_DIR"));
}

bool StoreEnv::startMember(int i) const {
  return storeScript("start-member", i, value("KVC_STORE_DIR"));
}

int StoreEnv::writeObject(const std::string& tenant, const std::string& key,
                          std::int64_t bytes) const {
  const std::string command = "LD_LIBRARY_PATH=" + shellQuote(value("KVC_STORE_LD_LIBRARY_PATH")) +
                              " " + shellQuote(value("KVC_STORE_PYTHON")) + " " +
                              shellQuote(std::string(KVC_STORE_SCRIPT_DIR) + "/tests/writer.py") +
                              " --master " + shellQuote(rpc()) + " --tenant " + shellQuote(tenant) +
                              " --key " + shellQuote(key) + " --bytes " + std::to_string(bytes) +
                              " 2>/dev/null";
  std::string out;
  run(command, &out);
  const auto at = out.rfind("put=");
  if (at == std::string::npos) {
    ADD_FAILURE() << "writer.py printed no put=: " << out;
    return INT_MIN;
  }
  return std::stoi(out.substr(at + 4));
}

bool StoreEnv::removeAllObjects(const std::string& tenant) const {
  HttpRequest request;
  request.method = "POST";
  request.url =
      "http://" + admin() + "/api/v1/remove_all?force=true&tenant_id=" + percentEncode(tenant);
  auto response = newCurlTransport()->send(request);
  return response.ok() && response->status == 200;
}

void StoreEnv::resetLedger() const {
  auto admin_client = client();
  ASSERT_NE(admin_client, nullptr);
  auto tenants = admin_client->listTenantQuotas();
  ASSERT_TRUE(tenants.ok()) << tenants.error().message();
  for (const TenantQuota& tenant : *tenants) {
    EXPECT_TRUE(removeAllObjects(tenant.tenant_id)) << tenant.tenant_id;
    if (tenant.has_explicit_policy) {
      auto deleted = admin_client->deleteTenantQuota(tenant.tenant_id);
      EXPECT_TRUE(deleted.ok()) << deleted.error().message();
    }
  }
  auto after = admin_client->listTenantQuotas();
  ASSERT_TRUE(after.ok());
  ASSERT_TRUE(after->empty()) << after->size() << " tenants left in the ledger";
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) {
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace kvc::store::integration
