// Configuration from kubeconfig files and from a Pod's service-account files.
#include "kvc/kube/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kvc/common/base64.h"

namespace kvc::kube {
namespace {

namespace fs = std::filesystem;

class TempDir {
public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kvc-config-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }

private:
  fs::path path_;
};

constexpr const char* kCa = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
constexpr const char* kCert = "-----BEGIN CERTIFICATE-----\nME\n-----END CERTIFICATE-----\n";
constexpr const char* kKey = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";

std::string withData() {
  return "apiVersion: v1\nkind: Config\n"
         "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443/\n"
         "    certificate-authority-data: " +
         base64Encode(kCa) +
         "\n"
         "users:\n- name: u\n  user:\n"
         "    client-certificate-data: " +
         base64Encode(kCert) +
         "\n"
         "    client-key-data: " +
         base64Encode(kKey) +
         "\n"
         "- name: t\n  user:\n    token: s3cr3t\n"
         "contexts:\n- name: main\n  context: {cluster: c, user: u, namespace: team-a}\n"
         "- name: other\n  context: {cluster: c, user: t}\n"
         "current-context: main\n";
}

TEST(KubeconfigTest, InlineDataOfTheCurrentContext) {
  auto config = parseKubeconfig(withData(), "");
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");  // trailing slash dropped
  EXPECT_EQ(config->ca_pem, kCa);
  EXPECT_EQ(config->client_cert_pem, kCert);
  EXPECT_EQ(config->client_key_pem, kKey);
  EXPECT_EQ(config->default_namespace, "team-a");
  EXPECT_EQ(config->context, "main");
  EXPECT_FALSE(config->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, AnotherContextByName) {
  LoadOptions options;
  options.context = "other";
  auto config = parseKubeconfig(withData(), "", options);
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->bearer_token, "s3cr3t");
  EXPECT_TRUE(config->client_cert_pem.empty());
  EXPECT_EQ(config->default_namespace, "default");
  options.context = "missing";
  EXPECT_EQ(parseKubeconfig(withData(), "", options).status().code(), StatusCode::NotFound);
}

TEST(KubeconfigTest, FilesResolveAgainstTheKubeconfigDirectory) {
  TempDir dir;
  dir.write("pki/ca.crt", kCa);
  dir.write("pki/admin.crt", kCert);
  dir.write("pki/admin.key", kKey);
  dir.write("token", "file-token\n");
  const fs::path kubeconfig =
      dir.write("admin.kubeconfig",
                "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1', "
                "certificate-authority: pki/ca.crt}\n"
                "users:\n- name: u\n  user: {client-certificate: pki/admin.crt, "
                "client-key: " +
                    (dir.path() / "pki/admin.key").string() +
                    "}\n"
                    "- name: f\n  user: {tokenFile: token}\n"
                    "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                    "- name: tok\n  context: {cluster: c, user: f}\n"
                    "current-context: x\n");
  auto config = loadKubeconfig(kubeconfig.string());
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->ca_pem, kCa);
  EXPECT_EQ(config->client_cert_pem, kCert);
  EXPECT_EQ(config->client_key_pem, kKey);
  LoadOptions tok;
  tok.context = "tok";
  auto token = loadKubeconfig(kubeconfig.string(), tok);
  ASSERT_TRUE(token.ok()) << token.status().toString();
  EXPECT_EQ(token->token_file, dir.path() / "token");
}

TEST(KubeconfigTest, AMissingFileIsNamed) {
  TempDir dir;
  const fs::path kubeconfig =
      dir.write("k",
                "clusters:\n- name: c\n  cluster: {server: 'https://h:1', certificate-authority: "
                "nope.crt}\ncontexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n");
  auto config = loadKubeconfig(kubeconfig.string());
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("nope.crt"), std::string::npos);
}

TEST(KubeconfigTest, InsecureSkipVerifyIsRefusedUnlessAllowed) {
  const std::string text =
      "clusters:\n- name: c\n  cluster: {server: 'https://h:1', insecure-skip-tls-verify: true}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n";
  auto refused = parseKubeconfig(text, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::FailedPrecondition);
  EXPECT_NE(refused.status().message().find("insecure-skip-tls-verify"), std::string::npos);
  LoadOptions allow;
  allow.allow_insecure = true;
  auto allowed = parseKubeconfig(text, "", allow);
  ASSERT_TRUE(allowed.ok());
  EXPECT_TRUE(allowed->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, CredentialPluginsAndBasicAuthAreRefusedWithTheFix) {
  const std::string exec =
      "clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\n"
      "users:\n- name: u\n  user:\n    exec: {command: aws, apiVersion: "
      "client.authentication.k8s.io/v1}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
  auto e = parseKubeconfig(exec, "");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("client certificate or a token"), std::string::npos);
  const std::string basic =
      "clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\n"
      "users:\n- name: u\n  user: {username: a, password: b}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
  EXPECT_EQ(parseKubeconfig(basic, "").status().code(), StatusCode::InvalidArgument);
}

TEST(KubeconfigTest, ACertificateNeedsItsKey) {
  const std::string text =
      "clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\n"
      "users:\n- name: u\n  user: {client-certificate-data: " +
      base64Encode(kCert) +
      "}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
  EXPECT_EQ(parseKubeconfig(text, "").status().code(), StatusCode::InvalidArgument);
}

TEST(KubeconfigTest, NoCurrentContextIsExplained) {
  auto config = parseKubeconfig("clusters: []\n", "");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::FailedPrecondition);
}

TEST(KubeconfigTest, ListedFilesMergeWithTheFirstDefinitionWinning) {
  TempDir dir;
  const fs::path first = dir.write("a",
                                   "clusters:\n- name: c\n  cluster: {server: 'https://first:1'}\n"
                                   "current-context: x\n");
  const fs::path second =
      dir.write("b",
                "clusters:\n- name: c\n  cluster: {server: 'https://second:1'}\n"
                "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: y\n");
  auto config = loadKubeconfig(first.string() + ":" + (dir.path() / "absent").string() + ":" +
                               second.string());
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->server, "https://first:1");
  EXPECT_EQ(config->context, "x");
}

TEST(InClusterConfigTest, ReadsTheServiceAccountFiles) {
  TempDir dir;
  dir.write("token", "sa-token\n");
  dir.write("ca.crt", kCa);
  dir.write("namespace", "gpustack-system\n");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = inClusterConfig(dir.path());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->ca_pem, kCa);
  EXPECT_EQ(config->token_file, dir.path() / "token");
  EXPECT_EQ(config->default_namespace, "gpustack-system");
}

TEST(InClusterConfigTest, OutsideAPodIsAFailedPrecondition) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(inClusterConfig("/nonexistent").status().code(), StatusCode::FailedPrecondition);
}

TEST(InClusterConfigTest, IPv6ServiceHostsAreBracketed) {
  TempDir dir;
  dir.write("token", "t");
  dir.write("ca.crt", kCa);
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = inClusterConfig(dir.path());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->server, "https://[fd00::1]:443");
}

}  // namespace
}  // namespace kvc::kube
