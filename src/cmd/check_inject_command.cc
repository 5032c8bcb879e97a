// kvcache check-inject: explain, per container, what the webhook decides and why.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "internal/cluster_source.h"
#include "internal/injection_run.h"
#include "kvc/cmd/commands.h"
#include "kvc/common/columns.h"
#include "kvc/policy/inject/keys.h"

namespace kvc::cmd {
namespace {

struct CheckOptions {
  std::string file;
  ClusterSourceOptions source;
  std::string namespace_name = "default";
};

using Row = std::vector<std::string>;

// The rows as columns (kvc::renderColumns), each line indented.
void printTable(std::ostream& out, const std::vector<Row>& rows, std::string_view indent) {
  std::istringstream lines(renderColumns(rows));
  for (std::string line; std::getline(lines, line);) {
    out << indent << line << "\n";
  }
}

// Wraps `text` at 100 columns under a label column.
void printWrapped(std::ostream& out, std::string_view label, std::string_view text) {
  constexpr std::size_t kWidth = 100;
  const std::string pad(label.size(), ' ');
  std::istringstream words{std::string(text)};
  std::string word;
  std::string line(label);
  bool empty = true;
  while (words >> word) {
    if (!empty && line.size() + 1 + word.size() > kWidth) {
      out << line << "\n";
      line = pad;
      empty = true;
    }
    line += empty ? word : " " + word;
    empty = false;
  }
  out << line << "\n";
}

std::vector<std::string> containerNames(const Json& pod) {
  std::vector<std::string> names;
  const Json containers = pod.value(Json::json_pointer("/spec/containers"), Json::array());
  for (const Json& container : containers) {
    names.push_back(container.value("name", std::string()));
  }
  return names;
}

std::string envValue(const policy::EnvVar& var) {
  return var.field_path.empty() ? var.value : "(fieldRef " + var.field_path + ")";
}

void explainInjected(std::ostream& out, const SiteOutcome& site) {
  const policy::InjectionSummary& s = *site.decision.summary;
  const policy::Resolution& r = s.resolution;
  std::vector<Row> rows = {{"CONTAINER", "DECISION", "VEHICLE", "ENGINE", "BINDING", "DOMAIN"}};
  for (const std::string& name : containerNames(site.input)) {
    if (name == s.container) {
      rows.push_back({name, "injected", std::string(s.render.vehicle),
                      std::string(policy::engineRecordName(s.engine)), r.binding, r.domain.name});
    } else {
      rows.push_back({name, "untouched", "-", "-", "-", "-"});
    }
  }
  printTable(out, rows, "  ");
  out << "  resolved: pool " << r.pool << ", backend " << r.backend << ", master "
      << r.master_address << ", protocol " << r.protocol << ", tenant "
      << (r.tenant_injected ? r.domain.name : "(none: single-tenant store)") << "\n";
  out << "  launch:   " << (s.launch_program.empty() ? "(not readable)" : s.launch_program)
      << (s.launch_args_forwarded ? ", admitted by the launch-args-forwarded declaration" : "")
      << "\n";
  out << "  writes to container " << s.container << ":\n";
  std::vector<Row> writes;
  for (const policy::EnvVar& var : s.render.env) {
    const bool overwrote = std::find(s.overwritten_env.begin(), s.overwritten_env.end(),
                                     var.name) != s.overwritten_env.end();
    writes.push_back({"env", var.name + "=" + envValue(var),
                      overwrote ? "(replaces the container's own value)" : ""});
  }
  for (const policy::EnvVar& var : s.render.env_defaults) {
    const bool kept = std::find(s.kept_env.begin(), s.kept_env.end(), var.name) != s.kept_env.end();
    writes.push_back({"env", var.name + "=" + var.value,
                      kept ? "(not written: the container sets it)" : "(only when absent)"});
  }
  std::string args;
  for (const std::string& arg : s.render.args) {
    args += args.empty() ? arg : " " + arg;
  }
  writes.push_back({"args", args, "(appended)"});
  if (s.hierarchical_cache_kept) {
    writes.push_back({"args", "--enable-hierarchical-cache", "(not appended: already named)"});
  }
  if (s.render.client_config) {
    writes.push_back(
        {"volume", std::string(policy::kVolumeName) + " -> " + std::string(policy::kConfigFilePath),
         "(downwardAPI, read-only)"});
    writes.push_back(
        {"annotation", std::string(policy::kAnnotationClientConfig), *s.render.client_config});
  }
  writes.push_back({"annotation", std::string(policy::kAnnotationInjected), s.record});
  printTable(out, writes, "    ");
}

void explainRefused(std::ostream& out, const SiteOutcome& site, const std::string& target) {
  const policy::Refusal& refusal = *site.decision.refusal;
  std::vector<Row> rows = {{"CONTAINER", "DECISION", "REASON"}};
  const std::vector<std::string> names = containerNames(site.input);
  if (names.empty()) {
    rows.push_back({"-", "refused", std::string(policy::refusalReasonName(refusal.reason))});
  }
  for (const std::string& name : names) {
    const bool blamed = target.empty() || name == target || names.size() == 1;
    rows.push_back(
        {name, "refused", blamed ? std::string(policy::refusalReasonName(refusal.reason)) : "-"});
  }
  printTable(out, rows, "  ");
  const std::string& message = refusal.message;
  const auto fix = message.rfind(" Fix: ");
  if (fix != std::string::npos && message.find(" Fix: ") == fix) {
    printWrapped(out, "  why: ", message.substr(0, fix));
    printWrapped(out, "  fix: ", message.substr(fix + 6));
  } else {
    printWrapped(out, "  why: ", message);
  }
  out << "  nothing is written; the Pod is admitted only once this is fixed\n";
}

int runCheck(const CheckOptions& options) {
  auto cluster = openClusterSource(options.source);
  if (!cluster.ok()) {
    std::cerr << "kvcache check-inject: " << cluster.status().message() << "\n";
    return cluster.status().code() == StatusCode::InvalidArgument ? kExitBadInput : kExitFailure;
  }
  auto outcomes =
      runInjection(options.file, *cluster->view, cluster->settings, options.namespace_name);
  if (!outcomes.ok()) {
    std::cerr << "kvcache check-inject: " << outcomes.status().message() << "\n";
    return kExitBadInput;
  }
  int exit_code = kExitOk;
  bool first = true;
  for (const DocumentOutcome& document : *outcomes) {
    for (const SiteOutcome& site : document.sites) {
      std::cout << (first ? "" : "\n") << site.site.label << "  [" << document.position << "]\n";
      first = false;
      const policy::Decision& decision = site.decision;
      switch (decision.verdict) {
        case policy::Verdict::NotOptedIn:
          std::cout << "  untouched: the label " << policy::kLabelInject
                    << " is not \"true\", so the webhook leaves this Pod alone\n";
          break;
        case policy::Verdict::Injected:
          explainInjected(std::cout, site);
          break;
        case policy::Verdict::Refused: {
          const std::string target = site.input.value(
              Json::json_pointer("/metadata/annotations/kvcache.gpustack.ai~1container"),
              std::string());
          explainRefused(std::cout, site, target);
          exit_code = kExitRefused;
          break;
        }
        case policy::Verdict::Failed:
          printWrapped(std::cout, "  failed: ", decision.error);
          if (exit_code == kExitOk) {
            exit_code = kExitFailure;
          }
          break;
      }
    }
  }
  if (first) {
    std::cout << "no Pods or pod templates in " << options.file << "\n";
  }
  return exit_code;
}

}  // namespace

void addCheckInjectCommand(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* command = app.add_subcommand(
      "check-inject",
      "Explain, for each Pod and pod template and each of its containers, what the webhook "
      "decides: the decision, the vehicle, the values it writes, and for a refusal the reason "
      "and the fix.\nExit codes: 0 nothing refused; 3 something was refused; 2 bad input; 1 the "
      "cluster state could not be read.");
  command
      ->add_option("-f,--filename", options->file,
                   "Manifest to explain: YAML or JSON, one or more documents, - for stdin")
      ->required();
  addClusterSourceOptions(*command, options->source);
  command
      ->add_option("-n,--namespace", options->namespace_name,
                   "Namespace of objects that do not name one")
      ->capture_default_str();
  command->callback([options] {
    const int code = runCheck(*options);
    if (code != kExitOk) {
      throw CLI::RuntimeError(code);
    }
  });
}

}  // namespace kvc::cmd
