#include "kvc/runtime/status_writer.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "kvc/kube/object.h"
#include "kvc/runtime/field_manager.h"

namespace kvc::runtime {
namespace {

// ordered_json compares objects in key order; the API server may return keys in another one.
nlohmann::json unordered(const Json& value) { return nlohmann::json(value); }

const Json& statusOf(const Json& object) {
  static const Json kEmpty = Json::object();
  auto it = object.find("status");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace

bool sameJson(const Json& a, const Json& b) { return unordered(a) == unordered(b); }

Json stampedStatus(const Json& current, Json status) {
  if (!status.is_object()) {
    status = Json::object();
  }
  const std::int64_t generation = kube::object::generation(current);
  if (generation > 0) {
    status["observedGeneration"] = generation;
  }
  return status;
}

StatusWriter::StatusWriter(kube::ClientPtr client, kube::ResourceType resource, Registry* metrics,
                           const Clock& clock, Generation generation)
    : client_(std::move(client)),
      resource_(std::move(resource)),
      clock_(clock),
      generation_(generation) {
  if (metrics != nullptr) {
    writes_ = &metrics->counter("kvcache_status_writes_total",
                                "Status writes by resource and outcome (written, unchanged: "
                                "nothing differed, conflict: retried from a fresh read).",
                                {"resource", "outcome"});
  }
}

void StatusWriter::count(std::string_view outcome) const {
  if (writes_ != nullptr) {
    writes_->with({resource_.plural, std::string(outcome)}).inc();
  }
}

Result<StatusWrite> StatusWriter::write(const Json& current, Json status,
                                        std::stop_token stop) const {
  if (generation_ == Generation::Stamp) {
    status = stampedStatus(current, std::move(status));
  }
  if (sameJson(statusOf(current), status)) {
    count("unchanged");
    return StatusWrite{StatusWriteOutcome::Unchanged, current};
  }
  const std::string name = kube::object::name(current);
  const std::string namespace_name = kube::object::namespaceName(current);
  Json object = Json::object();
  object["apiVersion"] = resource_.apiVersion();
  object["kind"] = resource_.kind;
  object["metadata"] =
      Json{{"name", name}, {"resourceVersion", kube::object::resourceVersion(current)}};
  if (!namespace_name.empty()) {
    object["metadata"]["namespace"] = namespace_name;
  }
  object["status"] = std::move(status);
  kube::PostParams params;
  params.field_manager = std::string(kFieldManager);
  kube::Api api(client_, resource_, namespace_name);
  auto written = api.replaceStatus(name, object, params, stop);
  if (!written.ok()) {
    if (written.error().isNotFound()) {
      return StatusWrite{StatusWriteOutcome::Gone, Json()};
    }
    if (written.error().isConflict()) {
      count("conflict");
      return aborted("the status of " + resource_.kind + " " +
                     kube::object::key(namespace_name, name) +
                     " changed after it was read (conflict); retrying from a fresh read");
    }
    return written.status().withContext("writing the status of " + resource_.kind + " " +
                                        kube::object::key(namespace_name, name));
  }
  count("written");
  return StatusWrite{StatusWriteOutcome::Written, std::move(written).value()};
}

Result<StatusWrite> StatusWriter::update(const Cache& cache, const std::string& key,
                                         const ComputeStatus& compute, std::stop_token stop) const {
  Status last = okStatus();
  for (int attempt = 0; attempt < kConflictAttempts; ++attempt) {
    ObjectPtr current = cache.get(key);
    if (!current) {
      return StatusWrite{StatusWriteOutcome::Gone, Json()};
    }
    KVC_ASSIGN_OR_RETURN(Json status, compute(*current));
    Result<StatusWrite> written = write(*current, std::move(status), stop);
    if (written.ok() || written.status().code() != StatusCode::Aborted) {
      return written;
    }
    last = written.status();
    // Wait for the cache to show the write we lost to, then compute again from it.
    const std::string used = kube::object::resourceVersion(*current);
    const Clock::TimePoint deadline = clock_.now() + kConflictWait;
    while (clock_.now() < deadline && !stop.stop_requested()) {
      ObjectPtr latest = cache.get(key);
      if (!latest || kube::object::resourceVersion(*latest) != used) {
        break;
      }
      clock_.sleepFor(stop, std::chrono::milliseconds(10));
    }
    if (stop.stop_requested()) {
      break;
    }
  }
  return last.ok() ? aborted("status write of " + key + " stopped") : last;
}

}  // namespace kvc::runtime
