#include "scenario/imported_scenario.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

namespace clustersim::cli {

namespace {

// The keys as a tree of sections, each in the order its first key came.
struct Section {
  std::string name;
  const ImportedKey* key = nullptr;  // a leaf
  std::vector<std::unique_ptr<Section>> children;

  Section& child(std::string_view child_name) {
    for (const std::unique_ptr<Section>& c : children) {
      if (c->name == child_name) return *c;
    }
    children.push_back(std::make_unique<Section>());
    children.back()->name = std::string(child_name);
    return *children.back();
  }
};

// Comments hold one line: a config value with line breaks shows them escaped.
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

void render(const Section& section, int depth, std::string& out) {
  const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  for (const std::unique_ptr<Section>& c : section.children) {
    if (c->key != nullptr) {
      out += indent + c->name + ": " + yaml_scalar(c->key->value);
      if (!c->key->source.empty()) out += "  # " + one_line(c->key->source);
      out += "\n";
    } else {
      out += indent + c->name + ":\n";
      render(*c, depth + 1, out);
    }
  }
}

void comment_block(std::string_view title, const std::vector<std::string>& lines,
                   std::string& out) {
  if (lines.empty()) return;
  out += "#\n# " + std::string(title) + "\n";
  for (const std::string& line : lines) out += "#   " + one_line(line) + "\n";
}

bool plain_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '+' || c == '/';
}

}  // namespace

void ImportedScenario::set(ImportedKey k) {
  for (ImportedKey& existing : keys) {
    if (existing.key == k.key) {
      existing = std::move(k);
      return;
    }
  }
  keys.push_back(std::move(k));
}

const ImportedKey* ImportedScenario::find(std::string_view key) const {
  for (const ImportedKey& k : keys) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

std::string yaml_scalar(std::string_view text) {
  bool plain = !text.empty() && text.front() != '-' && text.front() != '.';
  for (const char c : text) plain = plain && plain_safe(c);
  if (plain) return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string scenario_yaml(const ImportedScenario& scenario) {
  std::string out = "# Written by `clustersim import " + one_line(scenario.tool) + "` from " +
                    one_line(scenario.config_path) +
                    " (docs/import.md).\n# Each key names what it came from.\n";
  comment_block("Not in the config; supplied by the command line or assumed:", scenario.supplied,
                out);
  comment_block("Written in place of what the config says:", scenario.approximations, out);
  comment_block("Keys of the config with no counterpart in a scenario:", scenario.unmapped, out);
  out += "name: " + yaml_scalar(scenario.name) + "\n";
  if (!scenario.description.empty()) {
    out += "description: " + yaml_scalar(scenario.description) + "\n";
  }
  Section root;
  for (const ImportedKey& k : scenario.keys) {
    Section* at = &root;
    std::string_view rest = k.key;
    for (std::size_t dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
      at = &at->child(rest.substr(0, dot));
      rest = rest.substr(dot + 1);
    }
    at->child(rest).key = &k;
  }
  // The cluster before the job, whatever order the keys were set in.
  std::stable_partition(
      root.children.begin(), root.children.end(), [](const std::unique_ptr<Section>& c) {
        return c->name == "hardware" || c->name == "stack" || c->name == "cluster";
      });
  render(root, 0, out);
  return out;
}

}  // namespace clustersim::cli
