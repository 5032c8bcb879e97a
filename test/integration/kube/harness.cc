#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

extern char** environ;

namespace kvc::it {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> environmentWith(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) {
      merged[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [k, v] : extra) {
    merged[k] = v;
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : merged) {
    out.push_back(k + "=" + v);
  }
  return out;
}

int spawn(const std::vector<std::string>& argv, const std::string& log_path,
          const std::map<std::string, std::string>& extra_env, bool new_session) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGMASK;
  if (new_session) {
    flags |= POSIX_SPAWN_SETSID;
  }
  posix_spawnattr_setflags(&attr, flags);
  std::vector<char*> args;
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  const std::vector<std::string> env = environmentWith(extra_env);
  std::vector<char*> envp;
  for (const std::string& e : env) {
    envp.push_back(const_cast<char*>(e.c_str()));
  }
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(rc);
    return -1;
  }
  return pid;
}

// Alive, or dead but not yet done letting go of its files and sockets: a multi-threaded
// process killed by a signal shows its leader as a zombie while other threads still tear down,
// so "Z" alone does not mean the listening port is free. An empty fd table does.
bool processAlive(int pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string stat = readFile(proc + "/stat");
  const auto close = stat.rfind(')');
  if (stat.empty() || close == std::string::npos || close + 2 >= stat.size()) {
    return false;
  }
  const char state = stat[close + 2];
  if (state != 'Z' && state != 'X') {
    return true;
  }
  std::error_code ec;
  std::filesystem::directory_iterator fds(proc + "/fd", ec);
  return !ec && fds != std::filesystem::directory_iterator();
}

// True when a listener could bind 127.0.0.1:port now (with SO_REUSEADDR, as Go's listeners).
bool portBindable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    return false;
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string sourceDir() { return KVC_SOURCE_DIR; }
std::string kvcacheBinary() { return KVC_KVCACHE_BINARY; }
std::string buildDir() { return KVC_BUILD_DIR; }

std::string ClusterEnv::get(const std::string& name) const {
  auto it = vars.find(name);
  return it == vars.end() ? std::string() : it->second;
}

ClusterEnv ClusterEnv::load(const std::string& dir) {
  ClusterEnv env;
  env.dir = dir;
  std::ifstream in(dir + "/env");
  if (!in) {
    ADD_FAILURE() << "no cluster environment in " << dir
                  << "/env (ctest brings it up with the cluster.up fixture; by hand: "
                     "test/cluster/cluster.sh up DIR)";
    return env;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) != 0) {
      continue;
    }
    line = line.substr(7);
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      continue;
    }
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      value = value.substr(1, value.size() - 2);
    }
    env.vars[line.substr(0, eq)] = value;
  }
  return env;
}

ClusterEnv ClusterEnv::fromEnvironment() {
  const char* dir = std::getenv("KVC_CLUSTER_DIR");
  if (dir == nullptr || *dir == '\0') {
    ADD_FAILURE() << "KVC_CLUSTER_DIR is not set (run through ctest, or export it)";
    return {};
  }
  return load(dir);
}

kube::ClientPtr adminClient(const ClusterEnv& env) {
  auto config = kube::loadKubeconfig(env.get("KUBECONFIG"));
  if (!config.ok()) {
    ADD_FAILURE() << config.status().toString();
    return nullptr;
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) {
    ADD_FAILURE() << client.status().toString();
    return nullptr;
  }
  return *client;
}

bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds limit,
             std::chrono::milliseconds period) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(period);
  }
  return true;
}

std::string uniqueName(const std::string& prefix) {
  static std::mt19937_64 rng{std::random_device{}()};
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "%06llx",
                static_cast<unsigned long long>(rng() & 0xFFFFFF));
  return prefix + "-" + suffix;
}

TestNamespace::TestNamespace(kube::ClientPtr client, const std::string& prefix)
    : client_(std::move(client)), name_(uniqueName("kvc-it-" + prefix)) {
  kube::Api namespaces(client_, kube::resources::namespaces());
  auto created = namespaces.create(
      Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name_}}}});
  if (!created.ok()) {
    ADD_FAILURE() << "cannot create namespace " << name_ << ": " << created.status().toString();
  }
}

TestNamespace::~TestNamespace() {
  if (const char* keep = std::getenv("KVC_KEEP_NAMESPACES"); keep != nullptr && *keep == '1') {
    std::cerr << "KVC_KEEP_NAMESPACES=1: leaving namespace " << name_ << "\n";
    return;
  }
  kube::DeleteParams params;
  params.propagation_policy = "Background";
  static_cast<void>(kube::Api(client_, kube::resources::namespaces()).remove(name_, params));
}

Process::Process(std::vector<std::string> argv, const std::string& log_path,
                 const std::map<std::string, std::string>& extra_env)
    : log_path_(log_path) {
  pid_ = spawn(argv, log_path, extra_env, /*new_session=*/false);
}

Process::~Process() {
  if (pid_ > 0 && running()) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

bool Process::running() {
  if (pid_ <= 0 || status_) {
    return false;
  }
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return r == 0;
}

void Process::signal(int sig) {
  if (pid_ > 0 && running()) {
    ::kill(pid_, sig);
  }
}

std::optional<int> Process::wait(std::chrono::milliseconds limit) {
  waitFor([this] { return !running(); }, limit, std::chrono::milliseconds(10));
  return status_;
}

std::string Process::log() const { return readFile(log_path_); }

std::pair<int, std::string> run(const std::vector<std::string>& argv,
                                std::chrono::milliseconds limit,
                                const std::map<std::string, std::string>& extra_env) {
  const std::string log = std::filesystem::temp_directory_path() / uniqueName("kvc-it-run");
  Process p(argv, log, extra_env);
  const std::optional<int> code = p.wait(limit);
  std::string output = p.log();
  std::filesystem::remove(log);
  if (!code) {
    return {-1, "timed out: " + output};
  }
  return {*code, output};
}

DedicatedCluster::DedicatedCluster(const std::string& dir) : dir_(dir) {
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path());
  // Fake nodes only: a private cluster runs beside the shared one, which has the real nodes
  // (one cluster per machine may, test/cluster/nodes.sh).
  auto [code, output] = run({"bash", sourceDir() + "/test/cluster/cluster.sh", "up", dir},
                            std::chrono::minutes(10), {{"KVC_REAL_NODES", "0"}});
  if (code != 0) {
    ADD_FAILURE() << "cluster.sh up " << dir << " failed (" << code << "):\n" << output;
    return;
  }
  up_ = true;
  env_ = ClusterEnv::load(dir);
}

DedicatedCluster::~DedicatedCluster() {
  if (const char* keep = std::getenv("KVC_KEEP_CLUSTER"); keep != nullptr && *keep == '1') {
    std::cerr << "KVC_KEEP_CLUSTER=1: leaving the dedicated cluster in " << dir_ << "\n";
    return;
  }
  auto [code, output] =
      run({"bash", sourceDir() + "/test/cluster/cluster.sh", "down", dir_, "--purge"},
          std::chrono::minutes(2));
  if (code != 0) {
    std::cerr << "cluster.sh down " << dir_ << " failed:\n" << output << "\n";
  }
}

double DedicatedCluster::restartApiserver(bool kill) {
  const std::string pid_file = dir_ + "/kube-apiserver.pid";
  const int pid = std::atoi(readFile(pid_file).c_str());
  if (pid <= 0) {
    ADD_FAILURE() << "no kube-apiserver pid in " << pid_file;
    return 0;
  }
  // Its command line, to start it again exactly as cluster.sh did.
  const std::string raw = readFile("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> argv;
  std::string current;
  for (const char c : raw) {
    if (c == '\0') {
      argv.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (argv.empty()) {
    ADD_FAILURE() << "cannot read the command line of kube-apiserver (pid " << pid << ")";
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  ::kill(pid, kill ? SIGKILL : SIGTERM);
  // A graceful stop drains long-running requests first: about a minute here.
  if (!waitFor([&] { return !processAlive(pid); }, std::chrono::seconds(150),
               std::chrono::milliseconds(100))) {
    ADD_FAILURE() << "kube-apiserver (pid " << pid << ") did not exit";
    return 0;
  }
  // The leader thread can be gone while the others still hold the listener: wait for the port.
  const int port = std::atoi(env_.get("KVC_APISERVER_PORT").c_str());
  if (!waitFor([&] { return portBindable(port); }, std::chrono::seconds(60),
               std::chrono::milliseconds(100))) {
    ADD_FAILURE() << "port " << port << " stayed busy after kube-apiserver exited";
    return 0;
  }
  // Relaunch detached (setsid, reparented to init as cluster.sh's daemons are), recording the
  // new pid where cluster.sh's `down` will find it.
  std::string script = "exec </dev/null >>'" + dir_ + "/kube-apiserver.log' 2>&1; ";
  script += "setsid";
  for (const std::string& a : argv) {
    script += " '" + a + "'";
  }
  script += " & echo $! >'" + pid_file + "'";
  auto client = adminClient(env_);
  auto ready = [&] {
    kube::HttpRequest r;
    r.method = "GET";
    r.url = "/readyz";
    r.timeout = std::chrono::seconds(2);
    auto answer = client->send(r);
    return answer.ok() && answer->body == "ok";
  };
  bool up = false;
  for (int attempt = 0; attempt < 3 && !up; ++attempt) {
    auto [code, output] = run({"bash", "-c", script}, std::chrono::seconds(30));
    if (code != 0) {
      ADD_FAILURE() << "cannot restart kube-apiserver: " << output;
      return 0;
    }
    const int new_pid = std::atoi(readFile(pid_file).c_str());
    // Ready, or (rarely) it died at once, e.g. on a port still in use: start it again.
    waitFor([&] { return ready() || !processAlive(new_pid); }, std::chrono::seconds(120),
            std::chrono::milliseconds(200));
    up = ready();
    if (!up) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  if (!up) {
    ADD_FAILURE() << "kube-apiserver did not become ready after its restart";
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::int64_t DedicatedCluster::compactEtcd() {
  const std::string etcdctl = env_.get("KVC_ETCD_BIN") + "/etcdctl";
  const std::string endpoint = env_.get("KVC_ETCD_URL");
  auto [code, output] =
      run({etcdctl, "--endpoints=" + endpoint, "endpoint", "status", "--write-out=json"});
  if (code != 0) {
    ADD_FAILURE() << "etcdctl endpoint status failed: " << output;
    return 0;
  }
  const Json status = Json::parse(output, nullptr, false);
  std::int64_t revision = 0;
  if (status.is_array() && !status.empty()) {
    revision = status[0]["Status"]["header"]["revision"].get<std::int64_t>();
  }
  auto [ccode, coutput] =
      run({etcdctl, "--endpoints=" + endpoint, "compact", std::to_string(revision)});
  if (ccode != 0) {
    ADD_FAILURE() << "etcdctl compact " << revision << " failed: " << coutput;
  }
  return revision;
}

}  // namespace kvc::it

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--gtest_list_tests", 18) == 0) {
      listing = true;
    }
  }
  if (!listing) {
    if (const char* skip = std::getenv("KVC_SKIP_INTEGRATION");
        skip != nullptr && std::string(skip) == "1") {
      std::cout << "*** SKIPPED: " << argv[0]
                << " — KVC_SKIP_INTEGRATION=1 is set, so this integration test did not run ***"
                << std::endl;
      return 77;
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
