// Client-side cost of the informer's hot path, per watch event of a realistic Pod: decoding the
// event line, the cache transform, and the store write. The ceiling on events/s one core can
// apply, independent of the API server.
#include <benchmark/benchmark.h>

#include "kvc/kube/client.h"
#include "kvc/kube/object.h"
#include "kvc/runtime/informer.h"
#include "kvc/runtime/store.h"
#include "pod_fixture.h"

namespace kvc::bench {
namespace {

// A Pod as the API server sends it: the fixture plus status and a managedFields block.
Json servedPod(int i) {
  Json pod = realisticPod("bench", i);
  pod["status"] = runningStatus(i)["status"];
  pod["metadata"]["uid"] = "4f6c1e0b-3f1d-4c8e-9a51-2a4f6f0c9d1a";
  pod["metadata"]["resourceVersion"] = std::to_string(100000 + i);
  pod["metadata"]["creationTimestamp"] = "2026-05-01T12:00:00Z";
  Json managed = Json::array();
  for (const char* manager : {"kube-controller-manager", "kubelet", "kvcache-operator"}) {
    managed.push_back({{"manager", manager},
                       {"operation", "Update"},
                       {"apiVersion", "v1"},
                       {"time", "2026-05-01T12:00:00Z"},
                       {"fieldsType", "FieldsV1"},
                       {"fieldsV1",
                        {{"f:metadata", {{"f:labels", {{"f:app", Json::object()}}}}},
                         {"f:spec", {{"f:containers", Json::object()}}},
                         {"f:status", {{"f:conditions", Json::object()}}}}}});
  }
  pod["metadata"]["managedFields"] = managed;
  return pod;
}

std::string eventLine(int i) { return Json{{"type", "MODIFIED"}, {"object", servedPod(i)}}.dump(); }

void bmParseWatchEvent(benchmark::State& state) {
  const std::string line = eventLine(1);
  for (auto _ : state) {
    auto event = kube::parseWatchEvent(line);
    benchmark::DoNotOptimize(event);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * line.size()));
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(bmParseWatchEvent);

void bmStripForCache(benchmark::State& state) {
  const Json pod = servedPod(1);
  for (auto _ : state) {
    Json copy = pod;
    runtime::stripForCache(copy);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(bmStripForCache);

void bmKeepFieldsProjection(benchmark::State& state) {
  const Json pod = servedPod(1);
  const runtime::Transform project =
      runtime::keepFields({"/metadata/annotations", "/spec/nodeName", "/spec/containers/*/name",
                           "/status/phase", "/status/podIP", "/status/conditions"});
  for (auto _ : state) {
    Json copy = pod;
    project(copy);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(bmKeepFieldsProjection);

// The whole per-event path of the reflector: parse, transform, store.
void bmApplyEventToStore(benchmark::State& state) {
  std::vector<std::string> lines;
  for (int i = 0; i < 1000; ++i) {
    lines.push_back(eventLine(i));
  }
  runtime::Store store;
  std::size_t i = 0;
  for (auto _ : state) {
    auto event = kube::parseWatchEvent(lines[i++ % lines.size()]);
    runtime::stripForCache(event->object);
    runtime::Packed packed = runtime::packObject(event->object);
    store.upsert(kube::object::key(event->object), event->object, std::move(packed));
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(bmApplyEventToStore);

// Reading a cached object back (what a reconcile's cache read costs).
void bmUnpackProjectedPod(benchmark::State& state) {
  Json pod = servedPod(1);
  runtime::keepFields({"/metadata/annotations", "/spec/nodeName", "/spec/containers/*/name",
                       "/status/phase", "/status/podIP", "/status/conditions"})(pod);
  const runtime::Packed packed = runtime::packObject(pod);
  state.counters["packed_bytes"] = static_cast<double>(packed->size());
  for (auto _ : state) {
    auto object = runtime::unpackObject(packed);
    benchmark::DoNotOptimize(object);
  }
}
BENCHMARK(bmUnpackProjectedPod);

}  // namespace
}  // namespace kvc::bench

BENCHMARK_MAIN();
