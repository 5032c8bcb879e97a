#pragma once
// The syntax of the Kubernetes names and values a spec hands on to rendered objects, as the API
// server checks them (apimachinery's validation package, distribution's image reference
// grammar). Admission checks a value with these before the controller renders it, so that a
// bad one is refused at apply time instead of failing every reconcile later. Pure predicates:
// the caller words the refusal.

#include <string_view>

namespace kvc::policy {

// At most 63 characters: lowercase letters, digits and '-', starting and ending with a letter or
// digit (a Pod volume name, a Service port name).
bool isDns1123Label(std::string_view text);
// At most 253 characters: DNS-1123 labels joined by '.' (a Secret or RuntimeClass name).
bool isDns1123Subdomain(std::string_view text);
// A DNS-1123 label that starts with a letter (a Service or DaemonSet name).
bool isDns1035Label(std::string_view text);
// A label or annotation key: `[prefix/]name`, the prefix a DNS-1123 subdomain, the name at most
// 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or
// digit.
bool isQualifiedName(std::string_view text);
// A label value: empty, or what the name part of a qualified name may be.
bool isLabelValue(std::string_view text);
// A container image reference: `[host[:port]/]path[:tag][@algorithm:hex]`, path components in
// lowercase, a tag of at most 128 word characters, '.' and '-', the name at most 255
// characters.
bool isImageReference(std::string_view text);

}  // namespace kvc::policy
