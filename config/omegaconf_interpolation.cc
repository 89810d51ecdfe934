#include "config/omegaconf_interpolation.h"

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/text_fields.h"

namespace clustersim::sim {

namespace {

using Path = std::vector<std::string>;

// Past this many references in a chain, the chain is a cycle.
constexpr int kMaxDepth = 32;

std::string dotted(const Path& path) {
  std::string out;
  for (const std::string& p : path) out += (out.empty() ? "" : ".") + p;
  return out;
}

// The end of the "${...}" that starts at `begin` (the index after its '}'),
// or npos when it does not close.
std::size_t closing(std::string_view text, std::size_t begin) {
  int open = 0;
  for (std::size_t i = begin; i < text.size(); ++i) {
    if (text.compare(i, 2, "${") == 0) {
      ++open;
      ++i;
    } else if (text[i] == '}' && --open == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

bool is_interpolation(std::string_view text) {
  text = trim_blanks(text);
  return text.starts_with("${") && closing(text, 0) == text.size();
}

// `text` cut at the commas outside any "${...}".
std::vector<std::string_view> top_level_split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  int open = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "${") == 0) {
      ++open;
      ++i;
    } else if (text[i] == '}') {
      --open;
    } else if (text[i] == separator && open == 0) {
      parts.push_back(trim_blanks(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trim_blanks(text.substr(start)));
  return parts;
}

ConfigNode number_node(double x, bool integral) {
  ConfigNode n;
  if (integral) {
    n.kind = ConfigNode::Kind::kInteger;
    n.integer = static_cast<int64_t>(x);
    n.number = static_cast<double>(n.integer);
    n.text = std::to_string(n.integer);
  } else {
    n.kind = ConfigNode::Kind::kFloat;
    n.number = x;
    n.text = std::to_string(x);
  }
  return n;
}

class Resolver {
 public:
  Resolver(ConfigNode& root, DiagnosticSink& sink) : root_(root), sink_(sink) {}

  void resolve_all() { walk(root_, {}); }

 private:
  void walk(ConfigNode& node, const Path& path) {
    if (node.kind == ConfigNode::Kind::kTable) {
      for (auto& [key, member] : node.members) {
        Path child = path;
        child.push_back(key);
        walk(member, child);
      }
    } else if (node.kind == ConfigNode::Kind::kArray) {
      for (std::size_t i = 0; i < node.items.size(); ++i) {
        Path child = path;
        child.push_back(std::to_string(i));
        walk(node.items[i], child);
      }
    } else if (node.kind == ConfigNode::Kind::kString && is_interpolation(node.text)) {
      resolve(node, path, 0);
    }
  }

  // Replaces the interpolation `node` (at `path`) by its value; false (and
  // the node null, the error reported) when it has none.
  bool resolve(ConfigNode& node, const Path& path, int depth) {
    std::string error;
    std::optional<ConfigNode> value;
    if (depth > kMaxDepth) {
      error = "expected references that end, found a cycle through '" + dotted(path) + "'";
    } else {
      value = evaluate(trim_blanks(node.text), path, depth, error);
    }
    if (!value) {
      sink_.add(node.where, dotted(path), error + " in '" + node.text + "'");
      node.kind = ConfigNode::Kind::kNull;
      return false;
    }
    const SourceLocation where = node.where;
    node = *value;
    node.where = where;
    return true;
  }

  ConfigNode* lookup(const Path& path) {
    ConfigNode* node = &root_;
    for (const std::string& key : path) {
      ConfigNode* next = nullptr;
      if (node->kind == ConfigNode::Kind::kTable) {
        for (auto& [k, member] : node->members) {
          if (k == key) next = &member;
        }
      } else if (node->kind == ConfigNode::Kind::kArray) {
        const std::optional<std::size_t> i = parse_number<std::size_t>(key);
        if (i && *i < node->items.size()) next = &node->items[*i];
      }
      if (next == nullptr) return nullptr;
      node = next;
    }
    return node;
  }

  // The value of "${...}" for the node at `path`.
  std::optional<ConfigNode> evaluate(std::string_view expression, const Path& path, int depth,
                                     std::string& error) {
    const std::string_view inner =
        trim_blanks(expression.substr(2, expression.size() - 3));  // inside "${" and "}"
    const std::vector<std::string_view> head = top_level_split(inner, ':');
    if (head.size() > 1)
      return apply(head[0], inner.substr(inner.find(':') + 1), path, depth, error);
    return reference(inner, path, depth, error);
  }

  std::optional<ConfigNode> reference(std::string_view ref, const Path& path, int depth,
                                      std::string& error) {
    Path target;
    std::size_t dots = 0;
    while (dots < ref.size() && ref[dots] == '.') ++dots;
    if (dots > 0) {
      // ".x" is a key of the table that holds this value; each further dot one table up.
      if (dots > path.size()) {
        error = "expected a reference inside the file, found one above its top";
        return std::nullopt;
      }
      for (std::size_t i = 0; i + dots < path.size(); ++i) target.push_back(path[i]);
    }
    for (const std::string_view part : top_level_split(ref.substr(dots), '.')) {
      target.emplace_back(part);
    }
    if (dots == 0 && target.size() > 1 && target.front() == "training" &&
        root_.member("training") == nullptr) {
      target.erase(target.begin());  // NeMo-Framework-Launcher's namespace
    }
    ConfigNode* node = lookup(target);
    if (node == nullptr || node->kind == ConfigNode::Kind::kNull) {
      error = "expected a value at '" + dotted(target) + "', found none";
      return std::nullopt;
    }
    if (node->kind == ConfigNode::Kind::kString && is_interpolation(node->text) &&
        !resolve(*node, target, depth + 1)) {
      error = "expected '" + dotted(target) + "' to have a value, found none";
      return std::nullopt;
    }
    return *node;
  }

  std::optional<ConfigNode> apply(std::string_view resolver, std::string_view arguments,
                                  const Path& path, int depth, std::string& error) {
    std::vector<double> x;
    bool integral = true;
    for (const std::string_view argument : top_level_split(arguments, ',')) {
      std::optional<ConfigNode> value;
      if (is_interpolation(argument)) {
        value = evaluate(argument, path, depth + 1, error);
        if (!value) return std::nullopt;
      } else if (const auto i = parse_number<int64_t>(argument)) {
        value = number_node(static_cast<double>(*i), true);
      } else if (const auto d = parse_number<double>(argument)) {
        value = number_node(*d, false);
      }
      if (!value ||
          (value->kind != ConfigNode::Kind::kInteger && value->kind != ConfigNode::Kind::kFloat)) {
        error = "expected numbers as the arguments of " + std::string(resolver) + ", found '" +
                std::string(argument) + "'";
        return std::nullopt;
      }
      integral = integral && value->kind == ConfigNode::Kind::kInteger;
      x.push_back(value->number);
    }
    const bool two = x.size() == 2;
    if (resolver == "multiply" && two) return number_node(x[0] * x[1], integral);
    if (resolver == "subtract" && two) return number_node(x[0] - x[1], integral);
    if (resolver == "sum") {
      double total = 0;
      for (const double v : x) total += v;
      return number_node(total, integral);
    }
    if ((resolver == "divide_ceil" || resolver == "divide_floor") && two && x[1] != 0) {
      const double q = x[0] / x[1];
      return number_node(resolver == "divide_ceil" ? std::ceil(q) : std::floor(q), true);
    }
    error =
        "expected one of NeMo's resolvers multiply:a,b, divide_ceil:a,b, divide_floor:a,b, "
        "subtract:a,b or sum:a,..., found '" +
        std::string(resolver) + "' with " + std::to_string(x.size()) + " arguments";
    return std::nullopt;
  }

  ConfigNode& root_;
  DiagnosticSink& sink_;
};

}  // namespace

void resolve_interpolations(ConfigNode& root, DiagnosticSink& sink) {
  Resolver(root, sink).resolve_all();
}

}  // namespace clustersim::sim
