// Mutual TLS on the HTTP server (the store admin proxy's listener) against a real TLS client
// (libcurl): a client certificate the CA signed is served and named to the handler; none, or
// one another CA signed, fails the handshake; a new CA file is taken without a restart.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kvc/runtime/certificates.h"
#include "kvc/runtime/http_server.h"

namespace kvc::runtime {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void writeFile(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream(tmp) << text;
  fs::rename(tmp, path);  // atomic, as a kubelet's Secret volume update is
}

std::size_t collect(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct Reply {
  CURLcode result = CURLE_OK;
  long status = 0;
  std::string body;
};

class MutualTlsTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kvc-mtls-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const auto now = std::chrono::system_clock::now();
    ca_ = issueCa("store-ca", now, 24h).value();
    other_ca_ = issueCa("other-ca", now, 24h).value();
    const KeyPair serving = issueServing(ca_, {"admin.test"}, now, 24h).value();
    writeFile(dir_ / "tls.crt", serving.cert_pem);
    writeFile(dir_ / "tls.key", serving.key_pem);
    writeFile(dir_ / "ca.crt", ca_.cert_pem);
    HttpServerOptions options;
    options.cert_file = (dir_ / "tls.crt").string();
    options.key_file = (dir_ / "tls.key").string();
    options.client_ca_file = (dir_ / "ca.crt").string();
    options.reload_interval = 50ms;
    server_ = HttpServer::create(options, [](const HttpServerRequest& request) {
                return HttpServerResponse{
                    200, "text/plain",
                    "hello " + request.peer_common_name + " of " + request.peer_organization};
              }).value();
    server_->start();
  }
  void TearDown() override {
    server_->stop();
    fs::remove_all(dir_);
  }

  // GET / as the holder of `client` (nullptr: no certificate), trusting `ca_`.
  Reply get(const KeyPair* client) {
    Reply reply;
    CURL* curl = curl_easy_init();
    const std::string port = std::to_string(server_->port());
    curl_slist* resolve = curl_slist_append(nullptr, ("admin.test:" + port + ":127.0.0.1").c_str());
    const std::string url = "https://admin.test:" + port + "/";
    curl_blob ca{const_cast<char*>(ca_.cert_pem.data()), ca_.cert_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_RESOLVE, resolve);
    curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
    std::string cert;
    std::string key;
    curl_blob cert_blob{};
    curl_blob key_blob{};
    if (client != nullptr) {
      cert = client->cert_pem;
      key = client->key_pem;
      cert_blob = {cert.data(), cert.size(), CURL_BLOB_COPY};
      key_blob = {key.data(), key.size(), CURL_BLOB_COPY};
      curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert_blob);
      curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key_blob);
    }
    reply.result = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
    curl_slist_free_all(resolve);
    curl_easy_cleanup(curl);
    return reply;
  }

  fs::path dir_;
  KeyPair ca_;
  KeyPair other_ca_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(MutualTlsTest, AClientCertificateOfTheCaIsServedAndNamed) {
  const KeyPair client =
      issueClient(ca_, "kvcache-operator", "kvcache:operator", std::chrono::system_clock::now(), 1h)
          .value();
  const Reply reply = get(&client);
  ASSERT_EQ(reply.result, CURLE_OK) << curl_easy_strerror(reply.result);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "hello kvcache-operator of kvcache:operator");
}

TEST_F(MutualTlsTest, NoCertificateOrAnotherCasFailsTheHandshake) {
  EXPECT_NE(get(nullptr).result, CURLE_OK) << "no client certificate";
  const KeyPair stranger = issueClient(other_ca_, "kvcache-operator", "kvcache:operator",
                                       std::chrono::system_clock::now(), 1h)
                               .value();
  const Reply reply = get(&stranger);
  EXPECT_NE(reply.result, CURLE_OK) << "a certificate another CA signed, whatever its name";
  EXPECT_EQ(reply.status, 0);
}

TEST_F(MutualTlsTest, ANewClientCaIsTakenWithoutARestart) {
  const auto now = std::chrono::system_clock::now();
  const KeyPair old_client = issueClient(ca_, "scraper", "", now, 1h).value();
  const KeyPair new_client = issueClient(other_ca_, "scraper", "", now, 1h).value();
  ASSERT_EQ(get(&old_client).status, 200);
  writeFile(dir_ / "ca.crt", other_ca_.cert_pem);
  bool switched = false;
  for (int i = 0; i < 100 && !switched; ++i) {
    std::this_thread::sleep_for(20ms);
    switched = get(&new_client).status == 200;
  }
  EXPECT_TRUE(switched) << "the new CA was not taken";
  EXPECT_NE(get(&old_client).result, CURLE_OK) << "the old CA is no longer trusted";
}

}  // namespace
}  // namespace kvc::runtime
