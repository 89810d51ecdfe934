#include "config/yaml_tree.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <string_view>

#include "config/text_fields.h"
#include "config/yaml_layers.h"

namespace clustersim::sim {

namespace {

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> words) {
  for (const std::string_view w : words) {
    if (text == w) return true;
  }
  return false;
}

// A plain scalar typed as YAML 1.2's core schema does (decimal integers only).
void type_plain_scalar(ConfigNode& node) {
  const std::string& t = node.text;
  if (t.empty() || is_one_of(t, {"~", "null", "Null", "NULL"})) {
    node.kind = ConfigNode::Kind::kNull;
  } else if (is_one_of(t, {"true", "True", "TRUE"})) {
    node.kind = ConfigNode::Kind::kBool;
    node.boolean = true;
  } else if (is_one_of(t, {"false", "False", "FALSE"})) {
    node.kind = ConfigNode::Kind::kBool;
  } else if (const auto i = parse_number<int64_t>(t[0] == '+' ? t.substr(1) : t)) {
    node.kind = ConfigNode::Kind::kInteger;
    node.integer = *i;
    node.number = static_cast<double>(*i);
  } else if (const auto x = parse_number<double>(t[0] == '+' ? t.substr(1) : t)) {
    node.kind = ConfigNode::Kind::kFloat;
    node.number = *x;
  } else {
    node.kind = ConfigNode::Kind::kString;
  }
}

ConfigNode convert(const YAML::Node& node, const std::string& file, DiagnosticSink& sink) {
  ConfigNode out;
  out.where = yaml_location(file, node.Mark());
  switch (node.Type()) {
    case YAML::NodeType::Map:
      out.kind = ConfigNode::Kind::kTable;
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (!it->first.IsScalar()) {
          sink.add(yaml_location(file, it->first.Mark()), "",
                   "expected a key that is a plain name, found a mapping or list as a key");
          continue;
        }
        out.members.push_back(ConfigMember{it->first.Scalar(), convert(it->second, file, sink)});
      }
      break;
    case YAML::NodeType::Sequence:
      out.kind = ConfigNode::Kind::kArray;
      for (const YAML::Node& item : node) out.items.push_back(convert(item, file, sink));
      break;
    case YAML::NodeType::Scalar:
      out.text = node.Scalar();
      if (node.Tag() == "!") {
        out.kind = ConfigNode::Kind::kString;  // quoted
      } else {
        type_plain_scalar(out);
      }
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out.kind = ConfigNode::Kind::kNull;
      break;
  }
  return out;
}

bool only_comments(std::string_view text) {
  for (const TextLine& line : split_lines(text)) {
    const std::string_view t = trim_blanks(line.text);
    if (!t.empty() && t[0] != '#') return false;
  }
  return true;
}

}  // namespace

ConfigNode parse_yaml_tree(std::string_view text, const std::string& file) {
  DiagnosticSink sink;
  if (only_comments(text)) {
    sink.add(SourceLocation{file, 1, 1}, "", "the file is empty; expected a mapping of keys");
    sink.throw_if_any();
  }
  const std::vector<YamlLayer> layers = read_yaml_layers(text, file, false, sink);
  const YAML::Node& root = layers.back().root;
  if (!root.IsMap()) {
    sink.add(yaml_location(file, root.Mark()), "",
             "expected a mapping of keys at the top level, found a scalar or a list");
    sink.throw_if_any();
  }
  ConfigNode tree = convert(root, file, sink);
  tree.where = SourceLocation{file, 0, 0};
  sink.throw_if_any();
  return tree;
}

}  // namespace clustersim::sim
