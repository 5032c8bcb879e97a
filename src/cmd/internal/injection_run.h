#pragma once
// One offline injection run over a manifest: every document, every Pod or pod template in it,
// each decided by the same policy::inject() the webhook calls.

#include <string>
#include <vector>

#include "internal/manifest.h"
#include "kvc/api/settings.h"
#include "kvc/policy/inject/cluster_view.h"
#include "kvc/policy/inject/inject.h"

namespace kvc::cmd {

struct SiteOutcome {
  PodSite site;
  Json input;  // the Pod or template as read
  policy::Decision decision;
};

struct DocumentOutcome {
  std::string position;  // "FILE: document 2 (line 14)"
  Json output;           // the document with every injected site replaced
  std::vector<SiteOutcome> sites;
};

// Bad input (unreadable, unparseable, malformed Pod) is an InvalidArgument naming the file and
// the document; refusals are in the outcomes.
Result<std::vector<DocumentOutcome>> runInjection(const std::string& manifest_path,
                                                  const policy::ClusterView& cluster,
                                                  const api::Settings& settings,
                                                  const std::string& default_namespace);

// What `kvcache inject` prints on stdout when nothing was refused: every document in order, as
// YAML separated by "---", or as JSON (one object for one document, a v1 List for several).
std::string formatDocuments(const std::vector<DocumentOutcome>& outcomes, std::string_view format);

// Every refused or failed site, one "<kind namespace/name>: <message>" line each.
std::vector<std::string> refusalLines(const std::vector<DocumentOutcome>& outcomes);

}  // namespace kvc::cmd
