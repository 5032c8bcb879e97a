#include "internal/injection_run.h"

namespace kvc::cmd {

Result<std::vector<DocumentOutcome>> runInjection(const std::string& manifest_path,
                                                  const policy::ClusterView& cluster,
                                                  const api::Settings& settings,
                                                  const std::string& default_namespace) {
  KVC_ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, loadManifest(manifest_path));
  std::vector<DocumentOutcome> outcomes;
  outcomes.reserve(documents.size());
  for (YamlDocument& document : documents) {
    DocumentOutcome outcome;
    outcome.position = documentPosition(manifest_path, document);
    auto sites = findPodSites(document.value, default_namespace);
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
      SiteOutcome site_outcome{std::move(site), pod, {}};
      site_outcome.decision =
          policy::inject(pod, site_outcome.site.namespace_name, cluster, settings);
      if (site_outcome.decision.verdict == policy::Verdict::Injected) {
        outcome.output.at(site_outcome.site.pointer) = std::move(site_outcome.decision.object);
      }
      outcome.sites.push_back(std::move(site_outcome));
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

std::string formatDocuments(const std::vector<DocumentOutcome>& outcomes, std::string_view format) {
  if (format == "json") {
    if (outcomes.size() == 1) {
      return outcomes.front().output.dump(2) + "\n";
    }
    Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array()}};
    for (const DocumentOutcome& document : outcomes) {
      list["items"].push_back(document.output);
    }
    return list.dump(2) + "\n";
  }
  std::string text;
  for (const DocumentOutcome& document : outcomes) {
    if (!text.empty()) {
      text += "---\n";
    }
    text += toYaml(document.output);
  }
  return text;
}

std::vector<std::string> refusalLines(const std::vector<DocumentOutcome>& outcomes) {
  std::vector<std::string> lines;
  for (const DocumentOutcome& document : outcomes) {
    for (const SiteOutcome& site : document.sites) {
      if (site.decision.verdict == policy::Verdict::Refused) {
        lines.push_back(site.site.label + ": " + site.decision.refusal->message);
      } else if (site.decision.verdict == policy::Verdict::Failed) {
        lines.push_back(site.site.label + ": " + site.decision.error);
      }
    }
  }
  return lines;
}

}  // namespace kvc::cmd
