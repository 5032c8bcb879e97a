#include "internal/injection_run.h"

namespace kvc::cmd {

Result<std::vector<DocumentOutcome>> runInjection(const std::string& manifestPath,
                                                  const policy::ClusterView& cluster,
                                                  const api::Settings& settings,
                                                  const std::string& defaultNamespace) {
  KVC_ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, loadManifest(manifestPath));
  std::vector<DocumentOutcome> outcomes;
  outcomes.reserve(documents.size());
  for (YamlDocument& document : documents) {
    DocumentOutcome outcome;
    outcome.position = documentPosition(manifestPath, document);
    auto sites = findPodSites(document.value, defaultNamespace);
    if (!sites.ok()) {
      return sites.status().withContext(outcome.position);
    }
    outcome.output = std::move(document.value);
    for (PodSite& site : *sites) {
      const Json& pod = outcome.output.at(site.pointer);
      // Only a Pod that names the label is read closely; anything else passes through as it is.
      if (pod.contains(Json::json_pointer("/metadata/labels/kvcache.gpustack.ai~1inject"))) {
        Status shape = checkPodShape(pod);
        if (!shape.ok()) {
          return shape.withContext(outcome.position + ": " + site.label);
        }
      }
      SiteOutcome siteOutcome{std::move(site), pod, {}};
      siteOutcome.decision = policy::inject(pod, siteOutcome.site.ns, cluster, settings);
      if (siteOutcome.decision.verdict == policy::Verdict::Injected) {
        outcome.output.at(siteOutcome.site.pointer) = std::move(siteOutcome.decision.object);
      }
      outcome.sites.push_back(std::move(siteOutcome));
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

}  // namespace kvc::cmd
