#include "config/toml_tree.h"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <sstream>

namespace clustersim::sim {

namespace {

SourceLocation location(const std::string& file, const toml::source_position& at) {
  return SourceLocation{file, static_cast<int>(at.line), static_cast<int>(at.column)};
}

// The shortest text that reads back as the same double.
std::string number_text(double x) {
  std::array<char, 32> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), x);
  return ec == std::errc() ? std::string(buffer.data(), end) : std::to_string(x);
}

ConfigNode convert(const toml::node& node, const std::string& file) {
  ConfigNode out;
  out.where = location(file, node.source().begin);
  switch (node.type()) {
    case toml::node_type::table: {
      out.kind = ConfigNode::Kind::kTable;
      std::vector<std::pair<toml::source_position, ConfigMember>> members;
      for (auto&& [key, value] : *node.as_table()) {
        members.push_back(
            {key.source().begin, ConfigMember{std::string(key.str()), convert(value, file)}});
      }
      // toml++ keeps a table's keys sorted; a listing reads better in the file's order.
      std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
        return a.first.line != b.first.line ? a.first.line < b.first.line
                                            : a.first.column < b.first.column;
      });
      for (auto& m : members) out.members.push_back(std::move(m.second));
      break;
    }
    case toml::node_type::array:
      out.kind = ConfigNode::Kind::kArray;
      for (const toml::node& item : *node.as_array()) out.items.push_back(convert(item, file));
      break;
    case toml::node_type::string:
      out.kind = ConfigNode::Kind::kString;
      out.text = node.as_string()->get();
      break;
    case toml::node_type::integer:
      out.kind = ConfigNode::Kind::kInteger;
      out.integer = node.as_integer()->get();
      out.number = static_cast<double>(out.integer);
      out.text = std::to_string(out.integer);
      break;
    case toml::node_type::floating_point:
      out.kind = ConfigNode::Kind::kFloat;
      out.number = node.as_floating_point()->get();
      out.text = number_text(out.number);
      break;
    case toml::node_type::boolean:
      out.kind = ConfigNode::Kind::kBool;
      out.boolean = node.as_boolean()->get();
      out.text = out.boolean ? "true" : "false";
      break;
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
    case toml::node_type::none: {
      // Dates and times are read as their TOML text: no importer maps one.
      std::ostringstream text;
      if (const auto* d = node.as_date()) text << d->get();
      if (const auto* t = node.as_time()) text << t->get();
      if (const auto* dt = node.as_date_time()) text << dt->get();
      out.kind = ConfigNode::Kind::kString;
      out.text = text.str();
      break;
    }
  }
  return out;
}

}  // namespace

ConfigNode parse_toml_tree(std::string_view text, const std::string& file) {
  try {
    const toml::table root = toml::parse(text, file);
    ConfigNode tree = convert(root, file);
    tree.where = SourceLocation{file, 0, 0};
    return tree;
  } catch (const toml::parse_error& e) {
    DiagnosticSink sink;
    sink.add(location(file, e.source().begin), "",
             "expected valid TOML, found an error: " + std::string(e.description()));
    sink.throw_if_any();
  }
  return {};
}

}  // namespace clustersim::sim
