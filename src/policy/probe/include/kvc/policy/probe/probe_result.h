#pragma once
// What one probe replica reports (the JSON object its program writes on the termination log), and
// what became of its Pod when it reported nothing, turned into one outcome with a message that
// names why the store could not be used and what to check.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kvc/common/json.h"
#include "kvc/common/status.h"

namespace kvc::policy {

// Put or get timings of one replica.
struct ProbeTimings {
  std::int64_t ops = 0;
  std::int64_t bytes = 0;
  std::optional<double> p50_ms;
  std::optional<double> p99_ms;
  std::optional<double> mib_per_second;
};

// Where a replica stopped. `Done` is the one success.
enum class ProbeStage {
  Done,
  Admission,  // the webhook refused the Pod
  Start,      // the Pod did not run (unschedulable, image, timeout before it started)
  Config,     // nothing injected, or the injection could not be read
  Connect,    // the master's address did not accept a connection
  Setup,      // the store client could not set up against the master
  Write,      // the master refused a write
  Read,       // a block the store listed could not be read
  Corrupt,    // a block read back differs from what was written under its key
  Stalled,    // the store did not answer within the deadline
  Client,     // the store client raised an error
  Clean,      // the cleanup could not remove the run's blocks
  NoResult,   // the Pod ended without a readable result
};

std::string_view probeStageName(ProbeStage stage);

struct ProbeResult {
  int replica = 0;
  std::string pod;
  std::string node;
  std::string engine;   // "vllm" / "sglang"
  std::string vehicle;  // "file" / "environment"
  std::string master;
  std::string tenant;  // "" when none was injected (a single-tenant store)
  ProbeStage stage = ProbeStage::NoResult;
  std::optional<std::int64_t> code;  // the store's error code, when it gave one
  std::string detail;                // what the replica (or the Pod's status) said
  std::int64_t lookups = 0;          // blocks looked up
  std::int64_t written = 0;          // blocks (objects) written
  std::int64_t read = 0;             // blocks (objects) read
  std::int64_t corrupt = 0;
  std::int64_t quota_refused = 0;  // writes refused TENANT_QUOTA_EXCEEDED (not a failure)
  std::int64_t removed = 0;        // the cleanup's: objects removed (SGLang: two a block)
  std::int64_t prefix_blocks = 0;  // shared-prefix blocks of a prompt
  std::int64_t prefix_read = 0;    // of them, found in the store at this replica's first prompt
  std::int64_t query_tokens = 0;   // tokens looked up in the store
  std::int64_t hit_tokens = 0;     // of them, found (the leading run of whole blocks)
  std::map<std::string, std::int64_t> counters;  // the same, under the engine's metric names
  ProbeTimings put;
  ProbeTimings get;
  double seconds = 0;

  bool ok() const { return stage == ProbeStage::Done; }
  // Hit tokens over queried tokens, the engines' own definition; nullopt when nothing was queried.
  std::optional<double> hitRatio() const;
};

// The name the store gives an error code (-1701 -> TENANT_NOT_REGISTERED), or "" when unknown.
std::string_view storeErrorName(std::int64_t code);

// Parses a replica's report. A report that is not the program's JSON is an InvalidArgument.
Result<ProbeResult> parseProbeResult(std::string_view text);

// A result for a Pod that reported nothing: `stage` Admission, Start or NoResult.
ProbeResult unreportedProbe(int replica, std::string pod, ProbeStage stage, std::string detail);

// One sentence naming why the replica could not use the store and what to check; "" on success.
std::string probeFailureMessage(const ProbeResult& result);

}  // namespace kvc::policy
