#include "config/yaml_layers.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "config/file_text.h"

namespace clustersim::sim {

namespace {

namespace fs = std::filesystem;

// Where each document of a stream starts. yaml-cpp 0.7 (Debian 12's) never
// ends YAML::LoadAll on a stray ',' at the top level (jbeder/yaml-cpp#1040,
// fixed upstream by #1319): every HandleNextDocument reports another null
// document at the same place without consuming the token. So documents are
// counted here, stopping at one that starts where the previous one did.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;  // by document: where its root value is
  bool stuck = false;

  void OnDocumentStart(const YAML::Mark& mark) override {
    stuck = stuck || (!begins_.empty() && begins_.back().pos == mark.pos);
    begins_.push_back(mark);
    root_seen_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { value(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { value(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    value(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    value(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    value(mark);
  }
  void OnMapEnd() override {}

 private:
  void value(const YAML::Mark& mark) {
    if (root_seen_) return;
    root_seen_ = true;
    starts.push_back(mark);
  }

  std::vector<YAML::Mark> begins_;  // where each document's events began
  bool root_seen_ = false;
};

// Throws on the problems after which nothing more can be read.
YAML::Node parse_document(const std::string& text, const std::string& file, bool is_base,
                          DiagnosticSink& sink) {
  DocumentStarts documents;
  YAML::Node first;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (!documents.stuck && parser.HandleNextDocument(documents)) {
    }
    if (documents.stuck) {
      sink.add(yaml_location(file, documents.starts.back()), "",
               "invalid YAML: a token that cannot start a value here (a ',' outside [ ] or "
               "{ }?)");
      sink.throw_if_any();
    }
    if (!documents.starts.empty()) first = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    sink.add(yaml_location(file, e.mark), "", "invalid YAML: " + e.msg);
    sink.throw_if_any();
  }
  const size_t count = documents.starts.size();
  // A file of only comments or whitespace parses as no document or a null one.
  if (count == 0 || (count == 1 && first.IsNull())) {
    sink.add(SourceLocation{file, 1, 1}, "",
             is_base ? "the file is empty; expected a mapping of keys (a file to extend)"
                     : "the file is empty; expected a mapping of scenario keys (at least 'name')");
    sink.throw_if_any();
  }
  if (count > 1) {
    sink.add(yaml_location(file, documents.starts[1]), "",
             "expected one YAML document, found " + std::to_string(count) +
                 " (separated by '---')");
  }
  return first;
}

// The value of the first top-level `extends` (a later one is the walk's
// duplicate); nothing when there is none to follow (absent, or not a
// non-empty scalar: the walk reports those against the schema).
std::optional<YAML::Node> extends_value(const YAML::Node& root) {
  if (!root.IsMap()) return std::nullopt;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    if (key.IsScalar() && key.Scalar() == kExtendsKey) {
      if (value.IsScalar() && !value.Scalar().empty()) return value;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string resolve_against(const std::string& file, const std::string& value) {
  const fs::path target(value);
  if (target.is_absolute()) return target.lexically_normal().string();
  return (fs::path(file).parent_path() / target).lexically_normal().string();
}

// Two spellings of one file ("a/../b.yaml", "b.yaml", a symlink) are one
// file for cycle detection.
std::string identity_of(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : canonical.string();
}


}  // namespace

SourceLocation yaml_location(const std::string& file, const YAML::Mark& mark) {
  // yaml-cpp marks are 0-based; -1 when a node has no position.
  return SourceLocation{file, mark.line >= 0 ? mark.line + 1 : 1,
                        mark.column >= 0 ? mark.column + 1 : 1};
}

std::vector<YamlLayer> read_yaml_layers(std::string_view text, const std::string& file_name,
                                        bool follow_extends, DiagnosticSink& sink) {
  std::vector<YamlLayer> chain;  // the named file first, then each base
  std::vector<std::string> identities;
  std::string file = file_name;
  std::string content(text);
  for (;;) {
    chain.push_back(YamlLayer{file, parse_document(content, file, !chain.empty(), sink)});
    identities.push_back(identity_of(file));
    if (!follow_extends) break;
    const std::optional<YAML::Node> value = extends_value(chain.back().root);
    if (!value) break;
    const SourceLocation where = yaml_location(file, value->Mark());
    const std::string base = resolve_against(file, value->Scalar());
    const auto seen = std::find(identities.begin(), identities.end(), identity_of(base));
    if (seen != identities.end()) {
      std::string cycle;
      for (auto i = static_cast<size_t>(seen - identities.begin()); i < chain.size(); ++i) {
        cycle += chain[i].file + " -> ";
      }
      sink.add(where, std::string(kExtendsKey),
               "expected a chain of files that ends, found a cycle: " + cycle + base);
      sink.throw_if_any();
    }
    if (const ReadOutcome outcome = try_read_file_text(base, content, /*regular_only=*/true);
        outcome.failure != ReadFailure::kNone) {
      sink.add(where, std::string(kExtendsKey),
               "expected a YAML file to extend (relative to this file's folder), found " +
                   found_phrase(outcome, base));
      sink.throw_if_any();
    }
    file = base;
  }
  // Copies, not std::reverse: assigning a YAML::Node assigns the node it
  // refers to, so swapping two handles would make both the same document.
  return std::vector<YamlLayer>(chain.rbegin(), chain.rend());
}

}  // namespace clustersim::sim
