#include "internal/manifest.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "kvc/api/decode.h"
#include "kvc/api/meta.h"

namespace kvc::cmd {
namespace {

struct TemplateKind {
  std::string_view kind;
  std::string_view pointer;
};

constexpr TemplateKind kTemplateKinds[] = {
    {"Deployment", "/spec/template"},
    {"StatefulSet", "/spec/template"},
    {"DaemonSet", "/spec/template"},
    {"ReplicaSet", "/spec/template"},
    {"ReplicationController", "/spec/template"},
    {"Job", "/spec/template"},
    {"CronJob", "/spec/jobTemplate/spec/template"},
    {"PodTemplate", "/template"},
};

std::string namespaceOf(const Json& object, std::string_view fallback) {
  if (object.contains("metadata") && object["metadata"].is_object()) {
    const Json& meta = object["metadata"];
    if (auto it = meta.find("namespace");
        it != meta.end() && it->is_string() && !it->get<std::string>().empty()) {
      return it->get<std::string>();
    }
  }
  return std::string(fallback);
}

Status addSites(const Json& object, const Json::json_pointer& at, std::string_view default_ns,
                std::vector<PodSite>& sites) {
  if (!object.is_object()) {
    return invalidArgument("the document is not a mapping");
  }
  auto kind_it = object.find("kind");
  if (kind_it == object.end() || !kind_it->is_string() || kind_it->get<std::string>().empty()) {
    return invalidArgument("the document has no kind");
  }
  const std::string kind = kind_it->get<std::string>();
  if (kind == "List" || kind.ends_with("List")) {
    auto items = object.find("items");
    if (items == object.end() || items->is_null()) {
      return okStatus();
    }
    if (!items->is_array()) {
      return invalidArgument(kind + ".items must be a list");
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
      Status status = addSites((*items)[i], at / "items" / i, default_ns, sites);
      if (!status.ok()) {
        return status.withContext("items[" + std::to_string(i) + "]");
      }
    }
    return okStatus();
  }
  const std::string namespace_name = namespaceOf(object, default_ns);
  if (kind == "Pod") {
    sites.push_back({at, namespace_name, api::describeObject(object)});
    return okStatus();
  }
  for (const TemplateKind& workload : kTemplateKinds) {
    if (kind != workload.kind) {
      continue;
    }
    const Json::json_pointer pointer(std::string(workload.pointer));
    if (!object.contains(pointer) || object.at(pointer).is_null()) {
      return okStatus();  // no template: nothing to inject
    }
    if (!object.at(pointer).is_object()) {
      return invalidArgument(std::string(workload.pointer).substr(1) + " must be an object");
    }
    sites.push_back(
        {at / pointer, namespace_name, api::describeObject(object) + " (pod template)"});
    return okStatus();
  }
  return okStatus();
}

Status checkStringList(const Json& object, std::string_view field, const std::string& path) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) {
    return okStatus();
  }
  if (!it->is_array()) {
    return invalidArgument(path + "." + std::string(field) + " must be a list of strings");
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return invalidArgument(path + "." + std::string(field) + "[" + std::to_string(i) +
                             "] must be a string, not " + std::string((*it)[i].type_name()) +
                             "; quote it in YAML");
    }
  }
  return okStatus();
}

Status checkNamedObjects(const Json& spec, std::string_view field, bool need_name) {
  auto it = spec.find(field);
  if (it == spec.end() || it->is_null()) {
    return okStatus();
  }
  const std::string path = "spec." + std::string(field);
  if (!it->is_array()) {
    return invalidArgument(path + " must be a list");
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& item = (*it)[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      return invalidArgument(at + " must be an object");
    }
    if (need_name && (!item.contains("name") || !item["name"].is_string())) {
      return invalidArgument(at + ".name is required and must be a string");
    }
    if (field == "containers" || field == "initContainers") {
      KVC_RETURN_IF_ERROR(checkStringList(item, "command", at));
      KVC_RETURN_IF_ERROR(checkStringList(item, "args", at));
      for (std::string_view list : {"env", "volumeMounts"}) {
        auto entries = item.find(list);
        if (entries == item.end() || entries->is_null()) {
          continue;
        }
        if (!entries->is_array()) {
          return invalidArgument(at + "." + std::string(list) + " must be a list");
        }
        for (std::size_t k = 0; k < entries->size(); ++k) {
          const Json& entry = (*entries)[k];
          const std::string entry_at = at + "." + std::string(list) + "[" + std::to_string(k) + "]";
          if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) {
            return invalidArgument(entry_at + " must be an object with a string name");
          }
        }
      }
    }
  }
  return okStatus();
}

}  // namespace

Result<std::string> readSource(const std::string& path) {
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return invalidArgument(path + ": cannot be read (" + std::string(std::strerror(errno)) + ")");
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

Result<std::vector<YamlDocument>> loadManifest(const std::string& path) {
  KVC_ASSIGN_OR_RETURN(std::string text, readSource(path));
  return parseManifest(text, path);
}

Result<std::vector<YamlDocument>> parseManifest(std::string_view text, const std::string& path) {
  auto documents = parseYamlDocuments(text);
  if (!documents.ok()) {
    return documents.status().withContext(path == "-" ? "<stdin>" : path);
  }
  return documents;
}

std::string documentPosition(const std::string& path, const YamlDocument& document) {
  return (path == "-" ? std::string("<stdin>") : path) + ": document " +
         std::to_string(document.index) + " (line " + std::to_string(document.line) + ")";
}

Result<std::vector<PodSite>> findPodSites(const Json& document,
                                          std::string_view default_namespace) {
  std::vector<PodSite> sites;
  KVC_RETURN_IF_ERROR(addSites(document, Json::json_pointer(), default_namespace, sites));
  return sites;
}

Status checkPodShape(const Json& pod) {
  if (!pod.is_object()) {
    return invalidArgument("the Pod must be a mapping");
  }
  KVC_ASSIGN_OR_RETURN(Json metadata, api::optionalObject(pod, "metadata", ""));
  KVC_ASSIGN_OR_RETURN(auto meta, api::objectMetaFromJson(metadata, "metadata"));
  (void)meta;
  KVC_ASSIGN_OR_RETURN(Json spec, api::optionalObject(pod, "spec", ""));
  KVC_RETURN_IF_ERROR(checkNamedObjects(spec, "containers", true));
  KVC_RETURN_IF_ERROR(checkNamedObjects(spec, "initContainers", true));
  KVC_RETURN_IF_ERROR(checkNamedObjects(spec, "volumes", true));
  return okStatus();
}

}  // namespace kvc::cmd
