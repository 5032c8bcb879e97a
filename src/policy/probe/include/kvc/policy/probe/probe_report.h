#pragma once
// The report of one `kvcache probe` run over all its replicas: the JSON its `-o json` prints (a
// fixed interface: each probe's blocks written, blocks read and hit ratio) and the table a person
// reads.

#include <optional>
#include <string>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/policy/probe/probe_result.h"

namespace kvc::policy {

struct ProbeReport {
  std::string namespace_name;
  std::string binding;
  std::string engine;  // as the user wrote it: "vLLM" / "SGLang"
  std::string run;
  std::string seed;
  std::string image;
  std::vector<ProbeResult> probes;
  // The cleanup Pod's result; nullopt when none ran: the blocks were kept (--keep-blocks), or no
  // probe reached the store.
  std::optional<ProbeResult> cleanup;
  bool blocks_kept = false;

  // Every replica could use the store (the cleanup is reported, not judged).
  bool ok() const;
};

Json probeReportJson(const ProbeReport& report);
std::string probeReportTable(const ProbeReport& report);

}  // namespace kvc::policy
