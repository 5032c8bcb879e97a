#include "kvc/policy/inject/inject.h"

#include <array>
#include <variant>

#include "kvc/policy/base/text.h"
#include "kvc/policy/inject/flag_spelling.h"
#include "kvc/policy/inject/keys.h"
#include "kvc/policy/inject/launch_line.h"
#include "kvc/policy/inject/opt_in.h"

namespace kvc::policy {
namespace {

const Json& member(const Json& object, std::string_view key) {
  static const Json kNull;
  if (!object.is_object()) {
    return kNull;
  }
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::vector<std::string> strings(const Json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) {
    return out;
  }
  out.reserve(list.size());
  for (const Json& item : list) {
    out.push_back(item.is_string() ? item.get<std::string>() : item.dump());
  }
  return out;
}

std::vector<std::string> containerNames(const Json& containers) {
  std::vector<std::string> names;
  if (containers.is_array()) {
    for (const Json& container : containers) {
      const Json& name = member(container, "name");
      names.push_back(name.is_string() ? name.get<std::string>() : std::string());
    }
  }
  return names;
}

// --- The target container -------------------------------------------------------------------

std::variant<std::size_t, Refusal> selectContainer(const Json& spec,
                                                   const std::optional<std::string>& wanted) {
  const std::vector<std::string> names = containerNames(member(spec, "containers"));
  if (wanted) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == *wanted) {
        return i;
      }
    }
    const std::vector<std::string> inits = containerNames(member(spec, "initContainers"));
    for (const std::string& init : inits) {
      if (init == *wanted) {
        return Refusal{RefusalReason::InitContainer,
                       "annotation " + inQuotes(kAnnotationContainer) + " names " +
                           inQuotes(*wanted) +
                           ", an init container: it finishes before the workload starts, so "
                           "configuring it caches nothing. Fix: name an app container (" +
                           commaList(names) + ")"};
      }
    }
    return Refusal{RefusalReason::ContainerNotFound,
                   "annotation " + inQuotes(kAnnotationContainer) + " is " + inQuotes(*wanted) +
                       ", which is not a container of this Pod (containers: " + commaList(names) +
                       "). Fix: name the container that runs the engine"};
  }
  if (names.empty()) {
    return Refusal{RefusalReason::NoContainers,
                   "the Pod has no containers to configure. Fix: add the engine's container to "
                   "spec.containers"};
  }
  if (names.size() > 1) {
    return Refusal{RefusalReason::ContainerAmbiguous,
                   "the Pod has " + std::to_string(names.size()) + " containers (" +
                       commaList(names) + ") and annotation " + inQuotes(kAnnotationContainer) +
                       " names none; the first is never picked. Fix: set " +
                       std::string(kAnnotationContainer) + " to the engine's container"};
  }
  return std::size_t{0};
}

// --- Keys the injection owns -----------------------------------------------------------------

// The words of the command line that could be flags: each token, and the words inside a token
// that holds a whole command line (a shell string, env -S), so a second source hidden there is
// found too.
std::vector<std::string_view> flagWords(const std::vector<std::string>& tokens) {
  std::vector<std::string_view> words;
  for (const std::string& token : tokens) {
    std::string_view rest = token;
    while (!rest.empty()) {
      const auto start = rest.find_first_not_of(" \t\n");
      if (start == std::string_view::npos) {
        break;
      }
      rest.remove_prefix(start);
      const auto end = rest.find_first_of(" \t\n");
      const std::string_view word = rest.substr(0, end);
      if (word.starts_with("--")) {
        words.push_back(word);
      }
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    }
  }
  return words;
}

std::string flagFinding(std::string_view word, std::string_view flag, Engine engine) {
  const std::string_view name = word.substr(0, word.find('='));
  if (name == flag) {
    return "flag " + std::string(flag);
  }
  return "flag " + inQuotes(name) + " (" + std::string(engineDisplayName(engine)) +
         "'s parser reads it as " + std::string(flag) + ")";
}

std::optional<Refusal> checkOwnedKeys(const Json& container, std::string_view container_name,
                                      Engine engine, const api::Settings& settings,
                                      const std::vector<std::string>& tokens) {
  // Mechanism keys (a second connector) and configuration-source keys (injected values left
  // unread), per engine; only the engine that reads a key is refused for it.
  static constexpr std::array<std::string_view, 1> kVLLMFlags{"--kv-transfer-config"};
  static constexpr std::array<std::string_view, 2> kSGLangFlags{
      "--hicache-storage-backend", "--hicache-storage-backend-extra-config"};
  static constexpr std::array<std::string_view, 1> kDtypeFlag{"--kv-cache-dtype"};
  const std::string_view owned_env =
      isVLLMFamily(engine) ? "MOONCAKE_CONFIG_PATH" : "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH";
  const std::span<const std::string_view> owned_flags =
      isVLLMFamily(engine) ? std::span<const std::string_view>(kVLLMFlags)
                           : std::span<const std::string_view>(kSGLangFlags);

  std::vector<std::string> conflicts;
  std::vector<std::string> dtype;
  const Json& env = member(container, "env");
  if (env.is_array()) {
    for (const Json& entry : env) {
      if (member(entry, "name") == owned_env) {
        conflicts.push_back("env " + std::string(owned_env));
      }
    }
  }
  for (std::string_view word : flagWords(tokens)) {
    if (auto flag = spelledFlag(word, engine, owned_flags)) {
      conflicts.push_back(flagFinding(word, *flag, engine));
    } else if (settings.kv_cache_dtype_owned) {
      if (auto owned = spelledFlag(word, engine, kDtypeFlag)) {
        dtype.push_back(flagFinding(word, *owned, engine));
      }
    }
  }
  if (conflicts.empty() && dtype.empty()) {
    return std::nullopt;
  }
  std::string message;
  if (!conflicts.empty()) {
    const bool source = engine == Engine::SGLang;
    message = "container " + inQuotes(container_name) +
              " already configures a KV cache: " + commaList(conflicts) + ". " +
              (source ? "On SGLang --hicache-storage-backend picks the store, and "
                        "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH or "
                        "--hicache-storage-backend-extra-config pick where its configuration is "
                        "read from; any of them leaves the injected variables present and read "
                        "by nothing"
                      : "A second connector or configuration path is an ambiguity nothing "
                        "reports") +
              ". Fix: remove yours, or drop the " + std::string(kLabelInject) + " label";
  }
  if (!dtype.empty()) {
    message += message.empty() ? "" : "; ";
    message += "container " + inQuotes(container_name) + " sets " + commaList(dtype) +
               ": the dtype comes from the Binding, and engines writing two dtypes into one "
               "domain read each other's blocks wrong. Fix: remove yours and name a Binding "
               "declaring the dtype you want; the Setting " +
               std::string(api::kSettingDtypeOwned) + " off admits it as before";
  }
  return Refusal{
      conflicts.empty() ? RefusalReason::KVCacheDtypeOwned : RefusalReason::OwnedKeyConflict,
      std::move(message)};
}

std::optional<Refusal> checkStorage(const Json& spec, const Json& container,
                                    std::string_view container_name) {
  std::vector<std::string> collisions;
  const Json& volumes = member(spec, "volumes");
  if (volumes.is_array()) {
    for (const Json& volume : volumes) {
      if (member(volume, "name") == kVolumeName) {
        collisions.push_back("the Pod has a volume named " + inQuotes(kVolumeName));
      }
    }
  }
  const Json& mounts = member(container, "volumeMounts");
  if (mounts.is_array()) {
    for (const Json& mount : mounts) {
      if (member(mount, "name") == kVolumeName) {
        collisions.push_back("container " + inQuotes(container_name) + " mounts a volume named " +
                             inQuotes(kVolumeName));
      }
      const Json& path = member(mount, "mountPath");
      if (path.is_string()) {
        std::string p = path.get<std::string>();
        while (p.size() > 1 && p.back() == '/') {
          p.pop_back();
        }
        if (p == kMountPath) {
          collisions.push_back("container " + inQuotes(container_name) + " mounts something at " +
                               std::string(kMountPath));
        }
      }
    }
  }
  if (collisions.empty()) {
    return std::nullopt;
  }
  return Refusal{RefusalReason::StorageCollision,
                 commaList(collisions) +
                     ", which this webhook owns for the vLLM configuration "
                     "file. Fix: rename yours"};
}

// --- The launch line -------------------------------------------------------------------------

std::string entryPointOf(Engine engine) {
  return isVLLMFamily(engine) ? "vllm serve …" : "python3 -m sglang.launch_server";
}

// Admits (program, forwarded) or refuses.
std::variant<std::pair<std::string, bool>, Refusal> judgeLaunch(const LaunchAnalysis& launch,
                                                                Engine engine, bool declared,
                                                                std::string_view container_name) {
  const std::string who = "container " + inQuotes(container_name);
  const std::string declare = "declare " + std::string(kAnnotationForwarded) + ": \"true\"";
  switch (launch.kind) {
    case LaunchKind::EngineEntry:
      return std::make_pair(launch.program, false);
    case LaunchKind::NoLaunchLine:
      return Refusal{RefusalReason::NoLaunchLine,
                     who +
                         " declares neither command nor args: appending would not append, "
                         "because Kubernetes then reads args as the whole command line and "
                         "discards the image's CMD (and launch arguments put in command "
                         "override the image's ENTRYPOINT too, which on accelerator images "
                         "initialises the vendor runtime). Fix: put the engine executable in "
                         "command and the image's launch arguments in args"};
    case LaunchKind::ArgsWithoutCommand:
      if (declared) {
        return std::make_pair(std::string(), true);
      }
      return Refusal{RefusalReason::ArgsWithoutCommand,
                     who +
                         " declares args but no command: admission cannot inspect the image "
                         "ENTRYPOINT, so it cannot show that appended arguments reach the "
                         "engine. Fix: put the engine executable in command, or " +
                         declare + " only when the image ENTRYPOINT forwards them"};
    case LaunchKind::LauncherWithoutProgram:
      return Refusal{RefusalReason::LauncherWithoutProgram,
                     who + " runs the launcher " + inQuotes(launch.detail) +
                         " with no program after it, so the appended connector flag would "
                         "become the command it executes. Fix: put the engine executable and its "
                         "arguments after the launcher, or in command and args directly"};
    case LaunchKind::ShellCommandString:
      return Refusal{RefusalReason::ShellCommandString,
                     who + " is launched through " + inQuotes(launch.detail) +
                         ": an appended flag becomes one of the shell's positional parameters "
                         "($0), never reaches the engine, and the Pod would be stamped as "
                         "injected anyway. Fix: launch the engine directly — its executable in "
                         "command, its arguments in args — or add the connector flag to the "
                         "script yourself"};
    case LaunchKind::HiddenCommandLine:
      if (declared) {
        return std::make_pair(std::string(), true);
      }
      return Refusal{RefusalReason::HiddenCommandLine,
                     who + " hides its command line inside one argument of " +
                         inQuotes(launch.detail) +
                         ": the launcher splits that string itself, so admission cannot tell "
                         "whether a shell is inside it. Fix: launch the engine directly, add the "
                         "connector flag inside that argument, or " +
                         declare};
    case LaunchKind::Script:
      if (declared) {
        return std::make_pair(launch.program, true);
      }
      return Refusal{RefusalReason::ScriptLaunch,
                     who + " runs the script " + inQuotes(launch.program) +
                         ": whether an appended argument reaches the engine depends on whether "
                         "the script forwards \"$@\", which is a file inside the image rather "
                         "than a token on the command line. Fix: launch the engine directly, add "
                         "the connector flag inside the script, or " +
                         declare + " if it forwards its arguments"};
    case LaunchKind::Unrecognised:
      if (declared) {
        return std::make_pair(launch.program, true);
      }
      return Refusal{RefusalReason::UnrecognisedLauncher,
                     who + " runs " + inQuotes(launch.program) + ", which is neither " +
                         std::string(engineDisplayName(engine)) + "'s entry point (" +
                         entryPointOf(engine) +
                         ") nor a transparent launcher (env, tini, dumb-init, timeout, busybox, "
                         "toybox), so the webhook cannot identify where appended arguments go. "
                         "Fix: launch the engine named by " +
                         std::string(kAnnotationEngine) + " directly, or " + declare +
                         " only for a launcher that passes appended arguments through"};
    case LaunchKind::OtherEngine:
      return Refusal{RefusalReason::EngineMismatch,
                     who + " runs the entry point of " +
                         std::string(launch.detail == "sglang" ? "SGLang (python3 -m "
                                                                 "sglang.launch_server)"
                                                               : "vLLM (vllm)") +
                         ", but the Pod declares " + std::string(engineDisplayName(engine)) + " (" +
                         std::string(engineRecordName(engine)) +
                         "): the webhook would inject one engine's configuration into another "
                         "program. Fix: launch the engine named by " +
                         std::string(kAnnotationEngine) + ", or correct the annotation"};
  }
  return Refusal{RefusalReason::UnrecognisedLauncher, who + " has an unreadable launch line"};
}

// --- Writing ---------------------------------------------------------------------------------

Json& arrayMember(Json& object, std::string_view key) {
  Json& value = object[std::string(key)];
  if (!value.is_array()) {
    value = Json::array();
  }
  return value;
}

void mergeEnv(Json& container, const ClientRender& render, InjectionSummary& summary) {
  Json& env = arrayMember(container, "env");
  for (const EnvVar& var : render.env) {
    bool present = false;
    for (Json& entry : env) {
      if (member(entry, "name") == var.name) {
        entry = var.toJson();  // in place: one entry per name, the Binding's answer
        present = true;
      }
    }
    if (present) {
      summary.overwritten_env.push_back(var.name);
    } else {
      env.push_back(var.toJson());
    }
  }
  for (const EnvVar& var : render.env_defaults) {
    bool present = false;
    for (const Json& entry : env) {
      present = present || member(entry, "name") == var.name;
    }
    if (present) {
      summary.kept_env.push_back(var.name);  // a value the user set changes no result: kept
    } else {
      env.push_back(var.toJson());
    }
  }
}

std::string renderRecord(const InjectionSummary& summary) {
  Json record = Json::object();
  record["binding"] = summary.resolution.binding;
  record["engine"] = engineRecordName(summary.engine);
  record["vehicle"] = summary.render.vehicle;
  record["domain"] = summary.resolution.domain.name;
  record["tenantInjected"] = summary.resolution.tenant_injected;
  record["launchProgram"] = summary.launch_program;
  record["launchArgsForwarded"] = summary.launch_args_forwarded;
  return record.dump();
}

Decision refused(Refusal refusal) {
  Decision decision;
  decision.verdict = Verdict::Refused;
  decision.refusal = std::move(refusal);
  return decision;
}

}  // namespace

std::string_view verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::NotOptedIn:
      return "untouched";
    case Verdict::Injected:
      return "injected";
    case Verdict::Refused:
      return "refused";
    case Verdict::Failed:
      return "failed";
  }
  return "failed";
}

Decision inject(const Json& pod, std::string_view namespace_name, const ClusterView& cluster,
                const api::Settings& settings) {
  // 1. What the Pod asks for.
  auto opt_in = readOptIn(member(pod, "metadata"), namespace_name);
  if (std::holds_alternative<NotOptedIn>(opt_in)) {
    return {};
  }
  if (auto* refusal = std::get_if<Refusal>(&opt_in)) {
    return refused(std::move(*refusal));
  }
  const OptIn& request = std::get<OptIn>(opt_in);

  // 2. What the Binding resolves to.
  ResolveOutcome resolved =
      resolveBinding(namespace_name, request.binding, request.engine, cluster);
  if (auto* status = std::get_if<Status>(&resolved)) {
    Decision failed;
    failed.verdict = Verdict::Failed;
    failed.error = status->message();
    return failed;
  }
  if (auto* refusal = std::get_if<Refusal>(&resolved)) {
    return refused(std::move(*refusal));
  }

  // 3. The container, its owned keys, its storage and its launch line.
  const Json& spec = member(pod, "spec");
  auto selected = selectContainer(spec, request.container);
  if (auto* refusal = std::get_if<Refusal>(&selected)) {
    return refused(std::move(*refusal));
  }
  const std::size_t index = std::get<std::size_t>(selected);
  const Json& container = spec["containers"][index];
  const std::string container_name = member(container, "name").is_string()
                                         ? member(container, "name").get<std::string>()
                                         : std::string();
  const std::vector<std::string> command = strings(member(container, "command"));
  const std::vector<std::string> args = strings(member(container, "args"));
  std::vector<std::string> tokens = command;
  tokens.insert(tokens.end(), args.begin(), args.end());

  if (auto refusal = checkOwnedKeys(container, container_name, request.engine, settings, tokens)) {
    return refused(std::move(*refusal));
  }
  if (isVLLMFamily(request.engine)) {
    if (auto refusal = checkStorage(spec, container, container_name)) {
      return refused(std::move(*refusal));
    }
  }
  const LaunchAnalysis launch = analyzeLaunch(command, args, request.engine);
  auto judged = judgeLaunch(launch, request.engine, request.forwarding_declared, container_name);
  if (auto* refusal = std::get_if<Refusal>(&judged)) {
    return refused(std::move(*refusal));
  }

  // 4. Render, then write. Nothing above this line has touched the object.
  InjectionSummary summary;
  summary.container = container_name;
  summary.engine = request.engine;
  summary.role = request.role;
  summary.resolution = std::move(std::get<Resolution>(resolved));
  std::tie(summary.launch_program, summary.launch_args_forwarded) =
      std::get<std::pair<std::string, bool>>(judged);
  if (request.engine == Engine::SGLang) {
    static constexpr std::array<std::string_view, 1> kSwitch{"--enable-hierarchical-cache"};
    for (std::string_view word : flagWords(tokens)) {
      summary.hierarchical_cache_kept =
          summary.hierarchical_cache_kept || spelledFlag(word, request.engine, kSwitch).has_value();
    }
  }
  summary.render = renderClient(request.engine, request.role, summary.resolution, settings,
                                !summary.hierarchical_cache_kept);

  Decision decision;
  decision.verdict = Verdict::Injected;
  decision.object = pod;
  Json& out = decision.object;
  Json& target = out["spec"]["containers"][index];
  mergeEnv(target, summary.render, summary);
  Json& out_args = arrayMember(target, "args");
  for (const std::string& arg : summary.render.args) {
    out_args.push_back(arg);
  }
  Json& annotations = out["metadata"]["annotations"];
  if (!annotations.is_object()) {
    annotations = Json::object();
  }
  if (summary.render.client_config) {
    arrayMember(target, "volumeMounts").push_back(*summary.render.mount);
    arrayMember(out["spec"], "volumes").push_back(*summary.render.volume);
    annotations[std::string(kAnnotationClientConfig)] = *summary.render.client_config;
  }
  summary.record = renderRecord(summary);
  annotations[std::string(kAnnotationInjected)] = summary.record;
  decision.summary = std::move(summary);
  return decision;
}

}  // namespace kvc::policy
