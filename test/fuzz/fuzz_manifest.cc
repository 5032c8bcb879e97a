// The offline commands' readers (cmd/internal) on any text: a manifest's documents, the Pods and
// pod templates inside them with their shape checks (`kvcache inject`), and the cluster file
// (`--cluster`). Each is refused with a message, or read; every Pod site found points at an
// object inside its document.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "internal/cluster_file.h"
#include "internal/manifest.h"

namespace {

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = "fuzz.yaml";
  auto documents = kvc::cmd::parseManifest(text, path);
  if (!documents.ok()) {
    check(!documents.status().message().empty());
  } else {
    for (const kvc::YamlDocument& document : *documents) {
      check(!kvc::cmd::documentPosition(path, document).empty());
      auto sites = kvc::cmd::findPodSites(document.value, "default");
      if (!sites.ok()) {
        continue;
      }
      for (const kvc::cmd::PodSite& site : *sites) {
        check(document.value.contains(site.pointer) && !site.namespace_name.empty());
        const kvc::Json& pod = document.value.at(site.pointer);
        check(pod.is_object());
        (void)kvc::cmd::checkPodShape(pod);
      }
    }
  }
  auto cluster = kvc::cmd::parseClusterFile(text, path);
  check(cluster.ok() || !cluster.status().message().empty());
  return 0;
}
