// ModelDeployment admission through the real API server, against the Pod Security level of a real
// namespace: `kvcache operator` serves its webhooks on 127.0.0.1 with a certificate made here,
// and a ValidatingWebhookConfiguration of this test sends it the ModelDeployments of this test's
// namespaces only (by URL, so no Service or in-cluster install is needed; test/webhook runs the
// installed operator). The namespace labels reach the webhook
// through its namespaces informer, or a live read for a namespace created a moment ago.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "harness.h"
#include "kvc/common/base64.h"

namespace kvc::it {
namespace {

namespace fs = std::filesystem;
using kube::Api;

constexpr std::string_view kSelectorLabel = "kvcache-test.gpustack.ai/md-pod-security";
constexpr std::string_view kValidatePath = "/validate-worker-gpustack-ai-v1-modeldeployment";

// A TCP port on 127.0.0.1 nothing listens on right now.
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

// A ModelDeployment of one role, privileged or not.
Json modelDeployment(const std::string& name, const std::string& namespace_name, bool privileged) {
  Json role = {{"name", "server"}};
  if (privileged) {
    role["privileged"] = true;
  }
  return Json{{"apiVersion", "worker.gpustack.ai/v1"},
              {"kind", "ModelDeployment"},
              {"metadata", {{"name", name}, {"namespace", namespace_name}}},
              {"spec",
               {{"model", {{"name", "Qwen/Qwen2.5-7B-Instruct"}}},
                {"engine", {{"name", "vLLM"}, {"version", "0.11.0"}}},
                {"roles", Json::array({role})}}}};
}

class ModelDeploymentPodSecurityTest : public ::testing::Test {
protected:
  ModelDeploymentPodSecurityTest()
      : env_(ClusterEnv::fromEnvironment()),
        client_(adminClient(env_)),
        home_(client_, "md-psa-home"),
        baseline_(client_, "md-psa-baseline"),
        open_(client_, "md-psa-open"),
        dir_(fs::temp_directory_path() / uniqueName("kvc-it-md-psa")),
        configuration_(uniqueName("kvc-it-md-psa")) {
    fs::create_directories(dir_);
  }

  ~ModelDeploymentPodSecurityTest() override {
    static_cast<void>(
        Api(client_, kube::resources::validatingWebhookConfigurations()).remove(configuration_));
    if (operator_ && ::testing::Test::HasFailure()) {
      std::cerr << "--- operator log:\n" << operator_->log() << "\n";
    }
    operator_.reset();
    fs::remove_all(dir_);
  }

  // Labels the namespace: the selector of this test's webhook, and `extra`.
  void label(const std::string& namespace_name, Json extra = Json::object()) {
    extra[std::string(kSelectorLabel)] = configuration_;
    auto patched =
        Api(client_, kube::resources::namespaces())
            .patch(namespace_name, kube::MergePatch{{{"metadata", {{"labels", extra}}}}});
    ASSERT_TRUE(patched.ok()) << patched.error().describe();
  }

  // A CA and a serving certificate for 127.0.0.1 it signed, in dir_ (openssl, as test/cluster
  // makes the control plane's PKI).
  void issueCertificates() {
    const std::string script = R"(set -e
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj /CN=kvc-it-md-psa-ca -keyout ca.key -out ca.crt 2>/dev/null
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj /CN=127.0.0.1 -keyout tls.key -out tls.csr 2>/dev/null
      printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >tls.ext
      openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
        -extfile tls.ext -out tls.crt 2>/dev/null)";
    const auto [code, output] = run({"bash", "-c", "cd '" + dir_.string() + "' && " + script});
    ASSERT_EQ(code, 0) << output;
    std::ifstream ca(dir_ / "ca.crt");
    ca_pem_.assign(std::istreambuf_iterator<char>(ca), std::istreambuf_iterator<char>());
  }

  // The operator with its webhooks on 127.0.0.1:<port>, reconciling nothing of this test.
  void startOperator(int port) {
    ASSERT_NO_FATAL_FAILURE(issueCertificates());
    operator_ = std::make_unique<Process>(
        std::vector<std::string>{
            kvcacheBinary(), "operator", "--kubeconfig=" + env_.get("KUBECONFIG"),
            "--namespace=" + home_.name(), "--watch-namespace=" + home_.name(),
            "--selector=kvcache-test.gpustack.ai/reconcile=true", "--identity=md-psa",
            "--health-addr=127.0.0.1:0", "--metrics-addr=127.0.0.1:0",
            "--webhook-address=127.0.0.1", "--webhook-port=" + std::to_string(port),
            "--tls-cert-file=" + (dir_ / "tls.crt").string(),
            "--tls-key-file=" + (dir_ / "tls.key").string()},
        (dir_ / "operator.log").string());
    ASSERT_TRUE(waitFor(
        [&] {
          return operator_->log().find("admission webhooks serving on") != std::string::npos ||
                 !operator_->running();
        },
        std::chrono::seconds(60)));
    ASSERT_TRUE(operator_->running()) << operator_->log();
  }

  // ModelDeployments of the labelled namespaces go to the operator at `port`.
  void registerWebhook(int port) {
    const Json rule = {{"apiGroups", {"worker.gpustack.ai"}},
                       {"apiVersions", {"v1"}},
                       {"operations", {"CREATE", "UPDATE"}},
                       {"resources", {"modeldeployments"}}};
    const Json configuration = {
        {"apiVersion", "admissionregistration.k8s.io/v1"},
        {"kind", "ValidatingWebhookConfiguration"},
        {"metadata", {{"name", configuration_}}},
        {"webhooks",
         Json::array(
             {{{"name", "modeldeployment.md-psa.kvcache-test.gpustack.ai"},
               {"clientConfig",
                {{"url", "https://127.0.0.1:" + std::to_string(port) + std::string(kValidatePath)},
                 {"caBundle", base64Encode(ca_pem_)}}},
               {"rules", Json::array({rule})},
               {"namespaceSelector",
                {{"matchLabels", {{std::string(kSelectorLabel), configuration_}}}}},
               {"failurePolicy", "Fail"},
               {"sideEffects", "None"},
               {"admissionReviewVersions", {"v1"}},
               {"timeoutSeconds", 10}}})}};
    auto created =
        Api(client_, kube::resources::validatingWebhookConfigurations()).create(configuration);
    ASSERT_TRUE(created.ok()) << created.error().describe();
  }

  ClusterEnv env_;
  kube::ClientPtr client_;
  TestNamespace home_;
  TestNamespace baseline_;
  TestNamespace open_;
  fs::path dir_;
  std::string configuration_;
  std::string ca_pem_;
  std::unique_ptr<Process> operator_;
};

TEST_F(ModelDeploymentPodSecurityTest, APrivilegedRoleIsRefusedWhereTheNamespaceEnforcesBaseline) {
  ASSERT_NO_FATAL_FAILURE(
      label(baseline_.name(), {{"pod-security.kubernetes.io/enforce", "baseline"}}));
  ASSERT_NO_FATAL_FAILURE(label(open_.name()));
  const int port = freePort();
  ASSERT_NE(port, 0);
  ASSERT_NO_FATAL_FAILURE(startOperator(port));
  ASSERT_NO_FATAL_FAILURE(registerWebhook(port));

  // The API server picks the configuration up within a moment: until a dry run is refused by our
  // webhook (it names the field), nothing is created.
  Api refused_api(client_, kube::resources::modelDeployments(), baseline_.name());
  kube::PostParams dry_run;
  dry_run.dry_run = true;
  std::string last;
  ASSERT_TRUE(waitFor(
      [&] {
        auto tried = refused_api.create(modelDeployment("chat", baseline_.name(), true), dry_run);
        last = tried.ok() ? "admitted" : tried.error().describe();
        return last.find("spec.roles[0].privileged") != std::string::npos;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(500)))
      << last;

  auto refused = refused_api.create(modelDeployment("chat", baseline_.name(), true));
  ASSERT_FALSE(refused.ok());
  const std::string message = refused.error().describe();
  EXPECT_EQ(refused.error().httpStatus(), 422) << message;
  for (const std::string& named :
       {std::string("spec.roles[0].privileged"), "namespace \"" + baseline_.name() + "\"",
        std::string("level \"baseline\""), std::string("pod-security.kubernetes.io/enforce")}) {
    EXPECT_NE(message.find(named), std::string::npos) << named << " in: " << message;
  }
  // The same role without privileged is admitted there.
  auto plain = refused_api.create(modelDeployment("plain", baseline_.name(), false));
  EXPECT_TRUE(plain.ok()) << plain.error().describe();

  // Without the label (the cluster default, privileged) the privileged role is admitted, through
  // the same webhook: it still refuses there what it always refuses.
  Api open_api(client_, kube::resources::modelDeployments(), open_.name());
  auto admitted = open_api.create(modelDeployment("chat", open_.name(), true));
  EXPECT_TRUE(admitted.ok()) << admitted.error().describe();
  Json routed = modelDeployment("routed", open_.name(), true);
  routed["spec"]["router"] = {{"replicas", 1}};
  auto not_offered = open_api.create(routed);
  ASSERT_FALSE(not_offered.ok());
  EXPECT_NE(not_offered.error().describe().find("spec.router"), std::string::npos)
      << not_offered.error().describe();
}

}  // namespace
}  // namespace kvc::it
