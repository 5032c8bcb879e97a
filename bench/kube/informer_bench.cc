// Informer memory and list+watch throughput against a real API server (DESIGN.md §6: the
// operator stays within 64 MiB RSS with 1,000 Bindings, 100 Pools and 10,000 labelled Pods
// watched). A measured program rather than a Google Benchmark: RSS is a property of one
// process state, so every configuration is measured in a fresh child process.
//
//   bench_kube_informer [--cluster-dir DIR] [--pods N] [--bindings N] [--pools N]
//                       [--updates N] [--keep]
//
// Without --cluster-dir it brings up a private control plane (test/cluster/cluster.sh up) in
// /tmp/kvc-bench-cluster and purges it at the end. Results are printed as a table and as JSON
// lines ("RESULT {...}").
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kvc/kube/client.h"
#include "kvc/kube/config.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/allocator.h"
#include "kvc/runtime/informer.h"
#include "parallel.h"
#include "pod_fixture.h"
#include "proc_status.h"

extern char** environ;

namespace kvc::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

long statusKib(const char* field) { return kvc::testing::procStatusKib("self", field); }

std::map<std::string, std::string> readEnvFile(const std::string& dir) {
  std::map<std::string, std::string> vars;
  std::ifstream in(dir + "/env");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) != 0) {
      continue;
    }
    line = line.substr(7);
    const auto eq = line.find('=');
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '\'') {
      value = value.substr(1, value.size() - 2);
    }
    vars[line.substr(0, eq)] = value;
  }
  return vars;
}

int runCommand(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

using kvc::testing::parallel;

kube::ClientPtr clientFor(const std::string& kubeconfig) {
  auto config = kube::loadKubeconfig(kubeconfig);
  if (!config.ok()) {
    std::cerr << config.status().toString() << "\n";
    std::exit(1);
  }
  return *kube::Client::create(*config);
}

// ---- child: one configuration in a fresh process ----

runtime::Transform podProjection() {
  // What the operator reads of a Pod: identity, labels and owner, placement, readiness.
  return runtime::keepFields({"/metadata/annotations", "/spec/nodeName", "/spec/containers/*/name",
                              "/status/phase", "/status/podIP", "/status/conditions"});
}

int measure(const std::string& mode, const std::string& kubeconfig,
            const std::string& namespace_name, int expect_updates) {
  if (std::getenv("KVC_BENCH_DEFAULT_MALLOC") == nullptr) {
    runtime::tuneAllocatorForCaches();  // as `kvcache operator` does
  }
  auto client = clientFor(kubeconfig);
  std::vector<std::unique_ptr<runtime::Informer>> informers;
  auto add = [&](kube::ResourceType resource, std::string watched_namespace,
                 runtime::Transform transform, std::string selector = {}) {
    runtime::InformerOptions o;
    o.resource = std::move(resource);
    o.namespace_name = std::move(watched_namespace);
    o.transform = std::move(transform);
    o.label_selector = std::move(selector);
    informers.push_back(std::make_unique<runtime::Informer>(client, o));
  };
  if (mode == "pods-raw") {
    add(kube::resources::pods(), namespace_name, runtime::Transform{"none", nullptr});
  } else if (mode == "pods") {
    add(kube::resources::pods(), namespace_name, runtime::stripTransform());
  } else if (mode == "pods-projected") {
    add(kube::resources::pods(), namespace_name, podProjection());
  } else if (mode == "budget") {
    add(kube::resources::kvCachePoolBindings(), "", runtime::stripTransform());
    add(kube::resources::kvCachePools(), "", runtime::stripTransform());
    add(kube::resources::pods(), "", podProjection(), "kvcache.gpustack.ai/inject=true");
  } else if (mode != "baseline") {
    std::cerr << "unknown mode " << mode << "\n";
    return 2;
  }
  std::atomic<int> modified{0};
  Clock::time_point first_update{};
  Clock::time_point last_update{};
  std::mutex mutex;
  if (expect_updates > 0 && !informers.empty()) {
    runtime::EventHandler h;
    h.on_update = [&](const runtime::ObjectPtr& o, const runtime::ObjectPtr& n) {
      if (o == n) {
        return;
      }
      std::lock_guard<std::mutex> guard(mutex);
      const auto now = Clock::now();
      if (modified == 0) {
        first_update = now;
      }
      last_update = now;
      ++modified;
    };
    informers.back()->addEventHandler(h);
  }
  const long rss_before = statusKib("VmRSS");
  const auto t0 = Clock::now();
  for (auto& i : informers) {
    i->start();
  }
  std::size_t objects = 0;
  for (auto& i : informers) {
    if (!i->waitForSync(std::chrono::minutes(10))) {
      std::cerr << "informer did not sync\n";
      return 1;
    }
    objects += i->cache().size();
  }
  const double sync = seconds(Clock::now() - t0);
  // Let the allocator settle, then read RSS as a scrape would.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long rss = statusKib("VmRSS");
  const long hwm = statusKib("VmHWM");
  const struct mallinfo2 heap = mallinfo2();
  if (std::getenv("KVC_BENCH_MALLOC_INFO") != nullptr) {
    malloc_info(0, stderr);
  }
  malloc_trim(0);
  const long rss_trimmed = statusKib("VmRSS");
  Json result = {{"mode", mode},
                 {"objects", objects},
                 {"sync_seconds", sync},
                 {"list_objects_per_second", sync > 0 ? static_cast<double>(objects) / sync : 0},
                 {"rss_before_kib", rss_before},
                 {"rss_kib", rss},
                 {"rss_peak_kib", hwm},
                 {"rss_after_malloc_trim_kib", rss_trimmed},
                 {"heap_in_use_kib", static_cast<long>((heap.uordblks + heap.hblkhd) / 1024)},
                 {"heap_free_kib", static_cast<long>(heap.fordblks / 1024)}};
  std::cout << "SYNCED " << result.dump() << std::endl;
  if (expect_updates > 0) {
    const auto deadline = Clock::now() + std::chrono::minutes(10);
    while (modified < expect_updates && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::lock_guard<std::mutex> guard(mutex);
    result["watch_events"] = modified.load();
    result["watch_window_seconds"] = seconds(last_update - first_update);
    result["watch_last_event_at"] =
        std::chrono::duration<double>(last_update.time_since_epoch()).count();
    result["watch_first_event_at"] =
        std::chrono::duration<double>(first_update.time_since_epoch()).count();
    result["rss_after_updates_kib"] = statusKib("VmRSS");
  }
  std::cout << "RESULT " << result.dump() << std::endl;
  for (auto& i : informers) {
    i->stop();
  }
  return 0;
}

// ---- parent ----

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
};

Child spawnMeasure(const std::string& self, const std::string& mode, const std::string& kc,
                   const std::string& namespace_name, int updates) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::exit(1);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  const std::string updates_text = std::to_string(updates);
  std::vector<std::string> argv = {self,        "--measure",   mode,           "--kubeconfig",
                                   kc,          "--namespace", namespace_name, "--expect-updates",
                                   updates_text};
  std::vector<char*> args;
  for (auto& a : argv) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  Child child;
  posix_spawn(&child.pid, self.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  child.out = fdopen(fds[0], "r");
  return child;
}

std::string readLine(FILE* f) {
  std::string line;
  int c;
  while ((c = std::fgetc(f)) != EOF && c != '\n') {
    line += static_cast<char>(c);
  }
  return line;
}

Json runMeasure(const std::string& self, const std::string& mode, const std::string& kc,
                const std::string& namespace_name, int updates,
                const std::function<void()>& after_sync = {}) {
  Child child = spawnMeasure(self, mode, kc, namespace_name, updates);
  Json result;
  while (true) {
    const std::string line = readLine(child.out);
    if (line.empty() && std::feof(child.out)) {
      break;
    }
    if (line.rfind("SYNCED ", 0) == 0 && after_sync) {
      after_sync();
    }
    if (line.rfind("RESULT ", 0) == 0) {
      result = Json::parse(line.substr(7));
    }
  }
  std::fclose(child.out);
  int status = 0;
  waitpid(child.pid, &status, 0);
  return result;
}

int benchMain(int argc, char** argv) {
  std::string cluster_dir;
  int pods = 10000;
  int bindings = 1000;
  int pools = 100;
  int updates = 5000;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--cluster-dir") {
      cluster_dir = next();
    } else if (a == "--pods") {
      pods = std::stoi(next());
    } else if (a == "--bindings") {
      bindings = std::stoi(next());
    } else if (a == "--pools") {
      pools = std::stoi(next());
    } else if (a == "--updates") {
      updates = std::stoi(next());
    } else if (a == "--keep") {
      keep = true;
    } else {
      std::cerr << "usage: " << argv[0]
                << " [--cluster-dir DIR] [--pods N] [--bindings N] [--pools N] [--updates N]"
                   " [--keep]\n";
      return 2;
    }
  }
  const std::string source = KVC_SOURCE_DIR;
  bool own_cluster = false;
  if (cluster_dir.empty()) {
    cluster_dir = "/tmp/kvc-bench-cluster";
    std::cerr << "bringing up a private control plane in " << cluster_dir << "\n";
    if (runCommand({"bash", source + "/test/cluster/cluster.sh", "up", cluster_dir}) != 0) {
      return 1;
    }
    own_cluster = true;
  }
  auto env = readEnvFile(cluster_dir);
  const std::string kubeconfig = env["KUBECONFIG"];
  const std::string kubectl = env["KVC_K8S_BIN"] + "/kubectl";
  runCommand({kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-k",
              source + "/deploy/crds"});
  runCommand({kubectl, "--kubeconfig", kubeconfig, "wait", "--for=condition=Established",
              "crd/kvcachepoolbindings.worker.gpustack.ai", "crd/kvcachepools.worker.gpustack.ai",
              "--timeout=60s"});
  auto client = clientFor(kubeconfig);
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "%06x", static_cast<unsigned>(getpid()) & 0xFFFFFF);
  const std::string namespace_name = std::string("kvc-bench-") + suffix;
  kube::Api namespaces(client, kube::resources::namespaces());
  static_cast<void>(namespaces.create(Json{{"metadata", {{"name", namespace_name}}}}));
  // The default ServiceAccount must exist before Pods can be created.
  kube::Api sas(client, kube::resources::serviceAccounts(), namespace_name);
  for (int i = 0; i < 120 && !sas.get("default").ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }

  // Populate. The Pods' owner must exist, or the garbage collector deletes them.
  kube::Api cms(client, kube::resources::configMaps(), namespace_name);
  auto owner = cms.create(Json{{"metadata", {{"name", "llama-3-70b-instruct-7d9f8c6b5"}}}});
  if (!owner.ok()) {
    std::cerr << "cannot create the owner: " << owner.status().toString() << "\n";
    return 1;
  }
  const std::string owner_uid = kube::object::uid(*owner);
  kube::Api pod_api(client, kube::resources::pods(), namespace_name);
  std::atomic<int> failures{0};
  auto t = Clock::now();
  parallel(pods, 8, [&](int i) {
    auto created = pod_api.create(realisticPod(namespace_name, i, owner_uid, "ConfigMap", "v1"));
    if (!created.ok()) {
      if (failures++ < 3) {
        std::cerr << "create failed: " << created.status().toString() << "\n";
      }
    }
  });
  const double create_s = seconds(Clock::now() - t);
  t = Clock::now();
  parallel(pods, 8, [&](int i) {
    auto r = pod_api.patchStatus("llama-3-70b-instruct-7d9f8c6b5-" + std::to_string(i),
                                 kube::StrategicMergePatch{runningStatus(i)});
    if (!r.ok()) {
      ++failures;
    }
  });
  const double status_s = seconds(Clock::now() - t);
  kube::Api binding_api(client, kube::resources::kvCachePoolBindings(), namespace_name);
  parallel(bindings, 8, [&](int i) {
    if (!binding_api.create(benchBinding(namespace_name, i)).ok()) {
      ++failures;
    }
  });
  kube::Api pool_api(client, kube::resources::kvCachePools());
  const std::string pool_prefix = namespace_name + "-";
  parallel(pools, 8, [&](int i) {
    if (!pool_api.create(benchPool(pool_prefix, i)).ok()) {
      ++failures;
    }
  });
  auto sample = pod_api.get("llama-3-70b-instruct-7d9f8c6b5-0");
  const std::size_t pod_bytes = sample.ok() ? sample->dump().size() : 0;
  std::size_t managed_bytes = 0;
  if (sample.ok()) {
    managed_bytes = (*sample)["metadata"]["managedFields"].dump().size();
  }
  std::cout << "populated " << pods << " Pods (" << pods / create_s << " creates/s, "
            << pods / status_s << " status patches/s), " << bindings << " Bindings, " << pools
            << " Pools; " << failures << " failures; one Pod is " << pod_bytes << " bytes of JSON, "
            << managed_bytes << " of them managedFields" << std::endl;

  std::vector<Json> results;
  for (const char* mode : {"baseline", "pods-raw", "pods", "pods-projected", "budget"}) {
    Json r = runMeasure(std::string(argv[0]), mode, kubeconfig, namespace_name, 0);
    results.push_back(r);
    std::cout << "RESULT " << r.dump() << std::endl;
  }
  // Watch throughput: the informer of "pods" sees `updates` label changes made as fast as the
  // API server takes them (8 writers).
  Clock::time_point writes_done{};
  Clock::time_point writes_start{};
  double write_s = 0;
  Json watch = runMeasure(std::string(argv[0]), "pods", kubeconfig, namespace_name, updates, [&] {
    const auto w0 = Clock::now();
    writes_start = w0;
    parallel(updates, 8, [&](int i) {
      static_cast<void>(pod_api.patch(
          "llama-3-70b-instruct-7d9f8c6b5-" + std::to_string(i),
          kube::MergePatch{Json{{"metadata", {{"labels", {{"bench-round", "2"}}}}}}}));
    });
    writes_done = Clock::now();
    write_s = seconds(writes_done - w0);
  });
  const double lag = watch.value("watch_last_event_at", 0.0) -
                     std::chrono::duration<double>(writes_done.time_since_epoch()).count();
  watch["writes_per_second"] = updates / write_s;
  watch["events_per_second"] =
      watch.value("watch_events", 0) / std::max(1e-9, watch.value("watch_window_seconds", 1.0));
  watch["last_event_after_last_write_ms"] = lag * 1000.0;
  watch["first_event_after_first_write_ms"] =
      (watch.value("watch_first_event_at", 0.0) -
       std::chrono::duration<double>(writes_start.time_since_epoch()).count()) *
      1000.0;
  std::cout << "RESULT " << watch.dump() << std::endl;

  std::cout << "\n| configuration | objects | sync (s) | list objects/s | RSS MiB | peak MiB | "
               "after malloc_trim MiB |\n|---|---|---|---|---|---|---|\n";
  for (const Json& r : results) {
    std::printf("| %s | %d | %.2f | %.0f | %.1f | %.1f | %.1f |\n",
                r.value("mode", std::string()).c_str(), r.value("objects", 0),
                r.value("sync_seconds", 0.0), r.value("list_objects_per_second", 0.0),
                r.value("rss_kib", 0) / 1024.0, r.value("rss_peak_kib", 0) / 1024.0,
                r.value("rss_after_malloc_trim_kib", 0) / 1024.0);
  }
  std::printf(
      "\nwatch: %d MODIFIED events; API server took %.0f writes/s; informer applied "
      "%.0f events/s; last event %.0f ms after the last write\n",
      watch.value("watch_events", 0), watch.value("writes_per_second", 0.0),
      watch.value("events_per_second", 0.0), watch.value("last_event_after_last_write_ms", 0.0));

  if (!keep) {
    kube::DeleteParams bg;
    bg.propagation_policy = "Background";
    static_cast<void>(namespaces.remove(namespace_name, bg));
    parallel(pools, 8, [&](int i) {
      static_cast<void>(pool_api.remove(pool_prefix + "pool-" + std::to_string(i)));
    });
    if (own_cluster) {
      runCommand({"bash", source + "/test/cluster/cluster.sh", "down", cluster_dir, "--purge"});
    }
  }
  return 0;
}

}  // namespace
}  // namespace kvc::bench

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--measure") == 0) {
    std::string mode, kubeconfig, namespace_name;
    int updates = 0;
    mode = argc > 2 ? argv[2] : "";
    for (int i = 3; i + 1 < argc; i += 2) {
      const std::string k = argv[i];
      if (k == "--kubeconfig") {
        kubeconfig = argv[i + 1];
      } else if (k == "--namespace") {
        namespace_name = argv[i + 1];
      } else if (k == "--expect-updates") {
        updates = std::atoi(argv[i + 1]);
      }
    }
    return kvc::bench::measure(mode, kubeconfig, namespace_name, updates);
  }
  return kvc::bench::benchMain(argc, argv);
}
