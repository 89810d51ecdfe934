#include "config/config_tree.h"

#include <functional>

namespace clustersim::sim {

namespace {

const char* kind_phrase(ConfigNode::Kind kind) {
  switch (kind) {
    case ConfigNode::Kind::kTable:
      return "a table";
    case ConfigNode::Kind::kArray:
      return "an array";
    case ConfigNode::Kind::kString:
      return "a string";
    case ConfigNode::Kind::kInteger:
      return "an integer";
    case ConfigNode::Kind::kFloat:
      return "a number";
    case ConfigNode::Kind::kBool:
      return "a boolean";
    case ConfigNode::Kind::kNull:
      return "null";
  }
  return "?";
}

std::string join(std::string_view prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : std::string(prefix) + "." + std::string(name);
}

std::string cut(std::string text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
}

}  // namespace

const ConfigNode* ConfigNode::member(std::string_view name) const {
  if (kind != Kind::kTable) return nullptr;
  for (const auto& [key, node] : members) {
    if (key == name) return &node;
  }
  return nullptr;
}

const ConfigNode* ConfigNode::find(std::string_view dotted_path) const {
  const ConfigNode* node = this;
  while (node != nullptr && !dotted_path.empty()) {
    const std::size_t dot = dotted_path.find('.');
    node = node->member(dotted_path.substr(0, dot));
    dotted_path = dot == std::string_view::npos ? std::string_view() : dotted_path.substr(dot + 1);
  }
  return node;
}

std::string found_text(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::kString:
      return "the string '" + cut(node.text, 60) + "'";
    case ConfigNode::Kind::kInteger:
    case ConfigNode::Kind::kFloat:
      return "the number " + node.text;
    case ConfigNode::Kind::kBool:
      return node.boolean ? "true" : "false";
    case ConfigNode::Kind::kTable:
    case ConfigNode::Kind::kArray:
    case ConfigNode::Kind::kNull:
      return kind_phrase(node.kind);
  }
  return "?";
}

std::string value_text(const ConfigNode& node, std::size_t max_chars) {
  switch (node.kind) {
    case ConfigNode::Kind::kString:
      return cut("'" + node.text + "'", max_chars);
    case ConfigNode::Kind::kInteger:
    case ConfigNode::Kind::kFloat:
      return node.text;
    case ConfigNode::Kind::kBool:
      return node.boolean ? "true" : "false";
    case ConfigNode::Kind::kNull:
      return "null";
    case ConfigNode::Kind::kTable:
      return node.members.empty() ? "{}" : "{...}";
    case ConfigNode::Kind::kArray: {
      std::string text = "[";
      for (std::size_t i = 0; i < node.items.size() && text.size() <= max_chars; ++i) {
        text += (i == 0 ? "" : ", ") + value_text(node.items[i], max_chars);
      }
      return cut(text + "]", max_chars);
    }
  }
  return "?";
}

ConfigTreeReader::ConfigTreeReader(const ConfigNode& root, DiagnosticSink& sink)
    : root_(root), sink_(sink) {}

bool ConfigTreeReader::was_read(const std::string& path) const {
  // Read when the path or a table above it was taken.
  std::string_view prefix = path;
  while (true) {
    if (read_.contains(prefix)) return true;
    const std::size_t dot = prefix.rfind('.');
    if (dot == std::string_view::npos) return false;
    prefix = prefix.substr(0, dot);
  }
}

bool ConfigTreeReader::has(std::string_view path) const {
  const ConfigNode* node = root_.find(path);
  return node != nullptr && node->kind != ConfigNode::Kind::kNull;
}

void ConfigTreeReader::mark_read(std::string_view path) { read_.emplace(path); }

const ConfigNode* ConfigTreeReader::take(std::string_view path) {
  mark_read(path);
  const ConfigNode* node = root_.find(path);
  return node == nullptr || node->kind == ConfigNode::Kind::kNull ? nullptr : node;
}

void ConfigTreeReader::report(std::string_view path, const ConfigNode* node, std::string message) {
  const SourceLocation where =
      node != nullptr ? node->where : SourceLocation{root_.where.file, 0, 0};
  sink_.add(where, std::string(path), std::move(message));
}

const ConfigNode* ConfigTreeReader::taken_of(std::string_view path, const char* expected,
                                             std::initializer_list<ConfigNode::Kind> kinds) {
  const ConfigNode* node = take(path);
  if (node == nullptr) return nullptr;
  for (const ConfigNode::Kind kind : kinds) {
    if (node->kind == kind) return node;
  }
  report(path, node, std::string("expected ") + expected + ", found " + found_text(*node));
  return nullptr;
}

std::optional<int64_t> ConfigTreeReader::take_int(std::string_view path) {
  const ConfigNode* node = taken_of(path, "an integer", {ConfigNode::Kind::kInteger});
  return node == nullptr ? std::nullopt : std::optional<int64_t>(node->integer);
}

std::optional<double> ConfigTreeReader::take_number(std::string_view path) {
  const ConfigNode* node =
      taken_of(path, "a number", {ConfigNode::Kind::kInteger, ConfigNode::Kind::kFloat});
  return node == nullptr ? std::nullopt : std::optional<double>(node->number);
}

std::optional<bool> ConfigTreeReader::take_bool(std::string_view path) {
  const ConfigNode* node = taken_of(path, "true or false", {ConfigNode::Kind::kBool});
  return node == nullptr ? std::nullopt : std::optional<bool>(node->boolean);
}

std::optional<std::string> ConfigTreeReader::take_string(std::string_view path) {
  const ConfigNode* node = taken_of(path, "a string", {ConfigNode::Kind::kString});
  return node == nullptr ? std::nullopt : std::optional<std::string>(node->text);
}

std::vector<std::pair<std::string, const ConfigNode*>> ConfigTreeReader::unread() const {
  std::vector<std::pair<std::string, const ConfigNode*>> out;
  const std::function<void(const std::string&, const ConfigNode&)> walk =
      [&](const std::string& path, const ConfigNode& node) {
        if (!path.empty() && was_read(path)) return;
        if (node.kind == ConfigNode::Kind::kTable && !node.members.empty()) {
          for (const auto& [key, member] : node.members) walk(join(path, key), member);
        } else if (!path.empty()) {
          out.emplace_back(path, &node);
        }
      };
  walk("", root_);
  return out;
}

}  // namespace clustersim::sim
