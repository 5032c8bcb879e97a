#pragma once
// Reading manifests for the offline commands: documents from a file or stdin, the Pods and pod
// templates inside them, and the shape checks that turn malformed input into exit 2 rather than
// a refusal (the webhook only ever sees objects the API server has already validated).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/common/yaml.h"

namespace kvc::cmd {

// The contents of `path`, or of standard input for "-".
Result<std::string> readSource(const std::string& path);

// Every document of the file; errors name the file (and the line, for syntax errors).
Result<std::vector<YamlDocument>> loadManifest(const std::string& path);
// The same for text already read from `path` (which only names it in errors).
Result<std::vector<YamlDocument>> parseManifest(std::string_view text, const std::string& path);

// "FILE: document 2 (line 14)"
std::string documentPosition(const std::string& path, const YamlDocument& document);

// A Pod, or the pod template of a workload, inside a document.
struct PodSite {
  Json::json_pointer pointer;  // where the Pod or template sits in the document
  std::string namespace_name;  // the namespace its Binding is resolved in
  std::string label;           // "Pod team-a/bench", "Deployment team-a/chat (pod template)"
};

// The Pods and pod templates a document holds: a Pod; the template of a Deployment, StatefulSet,
// DaemonSet, ReplicaSet, ReplicationController, Job or CronJob; each item of a `kind: List`.
// Other kinds hold none and pass through unchanged. A document without `kind` is bad input.
Result<std::vector<PodSite>> findPodSites(const Json& document, std::string_view default_namespace);

// Checks the fields injection reads have the types the API would enforce: label and annotation
// values are strings, containers are objects with names, command/args are lists of strings.
Status checkPodShape(const Json& pod);

}  // namespace kvc::cmd
