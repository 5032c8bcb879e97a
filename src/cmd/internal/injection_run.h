#pragma once
// One offline injection run over a manifest: every document, every Pod or pod template in it,
// each decided by the same policy::inject() the webhook calls.

#include <string>
#include <vector>

#include "internal/manifest.h"
#include "kvc/api/settings.h"
#include "kvc/policy/cluster_view.h"
#include "kvc/policy/inject.h"

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
Result<std::vector<DocumentOutcome>> runInjection(const std::string& manifestPath,
                                                  const policy::ClusterView& cluster,
                                                  const api::Settings& settings,
                                                  const std::string& defaultNamespace);

}  // namespace kvc::cmd
