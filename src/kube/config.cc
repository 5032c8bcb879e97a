#include "kvc/kube/config.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "kvc/common/base64.h"
#include "kvc/common/json.h"
#include "kvc/common/yaml.h"

namespace kvc::kube {
namespace {

namespace fs = std::filesystem;

Result<std::string> readFile(const fs::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return notFound("cannot read " + std::string(what) + " " + path.string());
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string str(const Json& object, const char* key) {
  if (!object.is_object()) {
    return {};
  }
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool boolean(const Json& object, const char* key) {
  if (!object.is_object()) {
    return false;
  }
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

bool has(const Json& object, const char* key) {
  return object.is_object() && object.contains(key) && !object.at(key).is_null();
}

fs::path resolve(const fs::path& base_dir, const std::string& file) {
  fs::path p(file);
  if (p.is_relative() && !base_dir.empty()) {
    p = base_dir / p;
  }
  return p;
}

// One kubeconfig's named entries with the directory its relative paths resolve against.
struct Entry {
  Json value;
  fs::path base_dir;
};

struct Merged {
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
  std::string current_context;
};

Status mergeDocument(const Json& doc, const fs::path& base_dir, Merged& merged,
                     std::string_view source) {
  if (!doc.is_object()) {
    return invalidArgument(std::string(source) + ": a kubeconfig is a mapping");
  }
  auto take = [&](const char* list, const char* inner, std::map<std::string, Entry>& into) {
    auto it = doc.find(list);
    if (it == doc.end() || !it->is_array()) {
      return;
    }
    for (const Json& item : *it) {
      const std::string name = str(item, "name");
      if (name.empty() || into.count(name) > 0) {
        continue;  // first definition wins
      }
      into[name] =
          Entry{item.is_object() && item.contains(inner) ? item.at(inner) : Json(), base_dir};
    }
  };
  take("clusters", "cluster", merged.clusters);
  take("users", "user", merged.users);
  take("contexts", "context", merged.contexts);
  if (merged.current_context.empty()) {
    merged.current_context = str(doc, "current-context");
  }
  return okStatus();
}

// Reads PEM either inline (base64 *-data) or from a file.
Result<std::string> pemFrom(const Entry& entry, const char* data_key, const char* file_key,
                            std::string_view what) {
  const std::string data = str(entry.value, data_key);
  if (!data.empty()) {
    auto decoded = base64Decode(data);
    if (!decoded.ok()) {
      return invalidArgument(std::string(data_key) + " of the " + std::string(what) +
                             " is not base64: " + decoded.status().message());
    }
    return std::move(decoded).value();
  }
  const std::string file = str(entry.value, file_key);
  if (!file.empty()) {
    return readFile(resolve(entry.base_dir, file), std::string(what) + " file");
  }
  return std::string();
}

Result<Config> build(const Merged& merged, const LoadOptions& options) {
  const std::string context_name =
      options.context.empty() ? merged.current_context : options.context;
  if (context_name.empty()) {
    return failedPrecondition("the kubeconfig has no current-context; name one with --context");
  }
  auto ctx = merged.contexts.find(context_name);
  if (ctx == merged.contexts.end()) {
    return notFound("context \"" + context_name + "\" is not in the kubeconfig");
  }
  const std::string cluster_name = str(ctx->second.value, "cluster");
  const std::string user_name = str(ctx->second.value, "user");
  auto cluster = merged.clusters.find(cluster_name);
  if (cluster == merged.clusters.end()) {
    return notFound("cluster \"" + cluster_name + "\" of context \"" + context_name +
                    "\" is not in the kubeconfig");
  }
  Config config;
  config.context = context_name;
  const std::string namespace_name = str(ctx->second.value, "namespace");
  if (!namespace_name.empty()) {
    config.default_namespace = namespace_name;
  }
  config.server = str(cluster->second.value, "server");
  while (!config.server.empty() && config.server.back() == '/') {
    config.server.pop_back();
  }
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return invalidArgument("cluster \"" + cluster_name + "\" has no https:// server (got \"" +
                           config.server + "\")");
  }
  if (has(cluster->second.value, "proxy-url")) {
    return invalidArgument("cluster \"" + cluster_name +
                           "\" sets proxy-url, which this client does not support");
  }
  config.tls_server_name = str(cluster->second.value, "tls-server-name");
  KVC_ASSIGN_OR_RETURN(config.ca_pem, pemFrom(cluster->second, "certificate-authority-data",
                                              "certificate-authority", "certificate authority"));
  if (boolean(cluster->second.value, "insecure-skip-tls-verify")) {
    if (!options.allow_insecure) {
      return failedPrecondition(
          "cluster \"" + cluster_name +
          "\" sets insecure-skip-tls-verify: true; refusing to talk to an unverified server "
          "(give its CA with certificate-authority instead)");
    }
    config.insecure_skip_tls_verify = true;
  }

  if (!user_name.empty()) {
    auto user = merged.users.find(user_name);
    if (user == merged.users.end()) {
      return notFound("user \"" + user_name + "\" of context \"" + context_name +
                      "\" is not in the kubeconfig");
    }
    const Json& u = user->second.value;
    if (has(u, "exec") || has(u, "auth-provider")) {
      return invalidArgument("user \"" + user_name +
                             "\" uses an exec or auth-provider credential plugin, which this "
                             "client does not run; use a client certificate or a token");
    }
    if (has(u, "username") || has(u, "password")) {
      return invalidArgument("user \"" + user_name +
                             "\" uses basic authentication, which Kubernetes no longer "
                             "supports; use a client certificate or a token");
    }
    KVC_ASSIGN_OR_RETURN(config.client_cert_pem,
                         pemFrom(user->second, "client-certificate-data", "client-certificate",
                                 "client certificate"));
    KVC_ASSIGN_OR_RETURN(config.client_key_pem,
                         pemFrom(user->second, "client-key-data", "client-key", "client key"));
    if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
      return invalidArgument("user \"" + user_name +
                             "\" needs both a client certificate and its key");
    }
    config.bearer_token = str(u, "token");
    const std::string token_file = str(u, "tokenFile");
    if (!token_file.empty()) {
      config.token_file = resolve(user->second.base_dir, token_file);
      KVC_ASSIGN_OR_RETURN(std::string token, readFile(config.token_file, "token file"));
      static_cast<void>(token);
    }
  }
  return config;
}

Result<Merged> mergeFiles(std::string_view paths) {
  Merged merged;
  std::vector<std::string> files;
  std::string current;
  for (const char c : paths) {
    if (c == ':') {
      if (!current.empty()) {
        files.push_back(current);
      }
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) {
    files.push_back(current);
  }
  if (files.empty()) {
    return invalidArgument("no kubeconfig path given");
  }
  bool any = false;
  for (const std::string& file : files) {
    auto text = readFile(file, "kubeconfig");
    if (!text.ok()) {
      if (files.size() > 1) {
        continue;  // a missing entry in a KUBECONFIG list is skipped, as kubectl does
      }
      return text.status();
    }
    auto docs = parseYamlDocuments(*text);
    if (!docs.ok()) {
      return docs.status().withContext(file);
    }
    for (const YamlDocument& doc : *docs) {
      KVC_RETURN_IF_ERROR(mergeDocument(doc.value, fs::path(file).parent_path(), merged, file));
    }
    any = true;
  }
  if (!any) {
    return notFound("none of the kubeconfig files exists: " + std::string(paths));
  }
  return merged;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
    s.pop_back();
  }
  return s;
}

}  // namespace

Result<Config> parseKubeconfig(std::string_view text, const fs::path& base_dir,
                               const LoadOptions& options) {
  KVC_ASSIGN_OR_RETURN(std::vector<YamlDocument> docs, parseYamlDocuments(text));
  Merged merged;
  for (const YamlDocument& doc : docs) {
    KVC_RETURN_IF_ERROR(mergeDocument(doc.value, base_dir, merged, "kubeconfig"));
  }
  return build(merged, options);
}

Result<Config> loadKubeconfig(std::string_view paths, const LoadOptions& options) {
  KVC_ASSIGN_OR_RETURN(Merged merged, mergeFiles(paths));
  auto config = build(merged, options);
  if (!config.ok()) {
    return config.status().withContext("kubeconfig " + std::string(paths));
  }
  return config;
}

Result<Config> inClusterConfig(const fs::path& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return failedPrecondition(
        "not running in a Pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset");
  }
  Config config;
  std::string h(host);
  if (h.find(':') != std::string::npos) {
    h = "[" + h + "]";  // IPv6 literal
  }
  config.server = "https://" + h + ":" + port;
  config.token_file = sa_dir / "token";
  KVC_ASSIGN_OR_RETURN(std::string token, readFile(config.token_file, "service-account token"));
  if (trim(token).empty()) {
    return failedPrecondition("the service-account token " + config.token_file.string() +
                              " is empty");
  }
  KVC_ASSIGN_OR_RETURN(config.ca_pem, readFile(sa_dir / "ca.crt", "service-account CA"));
  auto namespace_name = readFile(sa_dir / "namespace", "service-account namespace");
  if (namespace_name.ok() && !trim(*namespace_name).empty()) {
    config.default_namespace = trim(*namespace_name);
  }
  return config;
}

Result<Config> loadDefaultConfig(std::string_view explicit_path, const LoadOptions& options) {
  if (!explicit_path.empty()) {
    return loadKubeconfig(explicit_path, options);
  }
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    return loadKubeconfig(env, options);
  }
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"); host != nullptr && *host) {
    return inClusterConfig();
  }
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    return failedPrecondition("no kubeconfig: pass --kubeconfig or set KUBECONFIG");
  }
  return loadKubeconfig((fs::path(home) / ".kube" / "config").string(), options);
}

}  // namespace kvc::kube
