#include "kvc/policy/store/pod_faults.h"

#include <string_view>
#include <vector>

#include "kvc/api/message.h"
#include "kvc/policy/base/json_lookup.h"
#include "kvc/policy/store/pod_hardening.h"

namespace kvc::policy {
namespace {

std::int64_t number(const Json& object, std::string_view key) {
  const Json& value = field(object, key);
  return value.is_number_integer() ? value.get<std::int64_t>() : 0;
}

const Json& statuses(const Json& pod, std::string_view kind) {
  return field(field(pod, "status"), kind);
}

// "restarted 3 times, last exit code 1: <message>".
std::string crashDetail(std::string_view what, const Json& container_status) {
  const Json& last = field(field(container_status, "lastState"), "terminated");
  const std::int64_t restarts = number(container_status, "restartCount");
  std::string out = std::string(what) + " " + text(container_status, "name") + " restarted " +
                    std::to_string(restarts) + (restarts == 1 ? " time" : " times") +
                    ", last exit code " + std::to_string(number(last, "exitCode"));
  std::string message = text(last, "message");
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  if (!message.empty()) {
    out += ": " + api::boundDetail(message);
  } else if (!text(last, "reason").empty()) {
    out += " (" + text(last, "reason") + ")";
  }
  return out;
}

bool restartedAfterTermination(const Json& container_status) {
  return number(container_status, "restartCount") > 0 &&
         field(field(container_status, "lastState"), "terminated").is_object();
}

// A waiting reason that is a fault: anything but the normal ways of starting.
bool faultyWait(const Json& container_status, std::string& reason, std::string& message) {
  const Json& waiting = field(field(container_status, "state"), "waiting");
  reason = text(waiting, "reason");
  message = text(waiting, "message");
  return !reason.empty() && reason != "ContainerCreating" && reason != "PodInitializing" &&
         reason != "CrashLoopBackOff";
}

}  // namespace

std::optional<PodFault> podFault(const Json& pod) {
  const Json& metadata = field(pod, "metadata");
  if (!field(metadata, "deletionTimestamp").is_null()) {
    return std::nullopt;
  }
  PodFault fault;
  fault.pod = text(metadata, "name");
  for (const Json& condition : field(field(pod, "status"), "conditions").is_array()
                                   ? field(field(pod, "status"), "conditions")
                                   : Json::array()) {
    if (text(condition, "type") == "PodScheduled" && text(condition, "status") == "False" &&
        text(condition, "reason") == "Unschedulable") {
      fault.kind = PodFault::Kind::Unschedulable;
      fault.detail = "cannot be scheduled: " + api::boundDetail(text(condition, "message"));
      return fault;
    }
  }
  const Json& init = statuses(pod, "initContainerStatuses");
  const Json& app = statuses(pod, "containerStatuses");
  if (init.is_array()) {
    for (const Json& status : init) {
      const Json& terminated = field(field(status, "state"), "terminated");
      const bool done = terminated.is_object() && number(terminated, "exitCode") == 0;
      if (!done && restartedAfterTermination(status)) {
        fault.kind = PodFault::Kind::InitCrashLooping;
        fault.detail = crashDetail("init container", status);
        return fault;
      }
    }
  }
  if (app.is_array()) {
    for (const Json& status : app) {
      if (!field(status, "ready").is_boolean() || !field(status, "ready").get<bool>()) {
        if (restartedAfterTermination(status)) {
          fault.kind = PodFault::Kind::CrashLooping;
          fault.detail = crashDetail("container", status);
          return fault;
        }
      }
    }
  }
  for (const Json* list : {&init, &app}) {
    if (!list->is_array()) {
      continue;
    }
    for (const Json& status : *list) {
      std::string reason;
      std::string message;
      if (faultyWait(status, reason, message)) {
        fault.kind = PodFault::Kind::Waiting;
        fault.reason = reason;
        fault.detail = "container " + text(status, "name") + " waits: " + reason +
                       (message.empty() ? std::string() : " (" + api::boundDetail(message) + ")");
        return fault;
      }
    }
  }
  return std::nullopt;
}

namespace {

// The volume a kubelet mount message names: `… for volume "NAME" : …`.
std::string volumeNamed(std::string_view note) {
  constexpr std::string_view kMarker = "volume \"";
  const std::size_t at = note.find(kMarker);
  if (at == std::string_view::npos) {
    return "";
  }
  const std::size_t begin = at + kMarker.size();
  const std::size_t end = note.find('"', begin);
  return end == std::string_view::npos ? "" : std::string(note.substr(begin, end - begin));
}

// The user the Pod's first container runs as (its own securityContext, else the Pod's); "" when
// the image decides.
std::string runAsUser(const Json& pod) {
  const Json& spec = field(pod, "spec");
  const Json& containers = field(spec, "containers");
  std::vector<const Json*> contexts;
  if (containers.is_array() && !containers.empty()) {
    contexts.push_back(&field(containers[0], "securityContext"));
  }
  contexts.push_back(&field(spec, "securityContext"));
  for (const Json* context : contexts) {
    const Json& user = field(*context, "runAsUser");
    if (user.is_number_integer()) {
      return std::to_string(user.get<std::int64_t>());
    }
  }
  return "";
}

}  // namespace

std::optional<PodFault> mountFault(const Json& pod, std::string_view note) {
  const Json& status = field(pod, "status");
  if (note.empty() || text(status, "phase") != "Pending" ||
      !field(field(pod, "metadata"), "deletionTimestamp").is_null()) {
    return std::nullopt;
  }
  const std::string volume = volumeNamed(note);
  std::string path;
  const Json& volumes = field(field(pod, "spec"), "volumes");
  for (const Json& v : volumes.is_array() ? volumes : Json::array()) {
    if (text(v, "name") == volume) {
      path = text(field(v, "hostPath"), "path");
    }
  }
  const std::string node = text(field(pod, "spec"), "nodeName");
  PodFault fault;
  fault.kind = PodFault::Kind::Waiting;
  fault.reason = std::string(kReasonFailedMount);
  fault.pod = text(field(pod, "metadata"), "name");
  fault.detail = "volume " + (volume.empty() ? std::string("?") : volume) +
                 (path.empty() ? std::string() : " (hostPath " + path + ")") +
                 " cannot be mounted" + (node.empty() ? std::string() : " on node " + node) + ": " +
                 api::boundDetail(std::string(note));
  if (!path.empty() && note.find("hostPath type check failed") != std::string_view::npos) {
    // A member that sets no user runs as its image's: this project's store image and the
    // published one both run as kStoreImageUser.
    const std::string declared = runAsUser(pod);
    const std::string user = declared.empty() ? std::to_string(kStoreImageUser) : declared;
    fault.detail +=
        ". Create the directory on that node, writable by the member's user, as "
        "the walkthrough's Step 5 shows: install -d -o " +
        user + " -g 0 -m 0750 " + path;
    if (declared.empty()) {
      fault.detail += " (" + user +
                      ": the store image's user; another image's uid if spec.image "
                      "names one)";
    }
  }
  return fault;
}

std::string describePodFault(const PodFault& fault) {
  return "Pod " + fault.pod + ": " + fault.detail;
}

bool podReady(const Json& pod) {
  const Json& conditions = field(field(pod, "status"), "conditions");
  if (!conditions.is_array()) {
    return false;
  }
  for (const Json& condition : conditions) {
    if (text(condition, "type") == "Ready") {
      return text(condition, "status") == "True";
    }
  }
  return false;
}

std::string podAddress(const Json& pod) { return text(field(pod, "status"), "podIP"); }

}  // namespace kvc::policy
