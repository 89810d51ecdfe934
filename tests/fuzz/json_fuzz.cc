// libFuzzer target: the JSON reader (config/json_reader.h) that comm
// groups, Kineto traces and step caches go through. Properties:
// fuzz_support.h, and what reads round-trips through the JSON writer
// (config/json_writer.h): written and read again, every value is the same
// (kinds, strings byte for byte, integers exactly, other numbers to the
// double; a number too large for a double is written as null and skipped).
#include <cmath>
#include <sstream>
#include <string>
#include <string_view>

#include "config/json_reader.h"
#include "config/json_writer.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;
namespace sim = clustersim::sim;
using Kind = sim::JsonValue::Kind;

namespace {

void write(sim::JsonWriter& w, const sim::JsonValue& v) {
  switch (v.kind) {
    case Kind::kNull:
      w.null();
      break;
    case Kind::kBool:
      w.boolean(v.boolean);
      break;
    case Kind::kNumber:
      if (v.is_integer) {
        w.int64(v.integer);
      } else {
        w.number(v.number);
      }
      break;
    case Kind::kString:
      w.str(v.text);
      break;
    case Kind::kArray:
      w.begin_array();
      for (const sim::JsonValue& item : v.items) write(w, item);
      w.end_array();
      break;
    case Kind::kObject:
      w.begin_object();
      for (const sim::JsonMember& m : v.members) {
        w.key(m.key);
        write(w, m.value);
      }
      w.end_object();
      break;
  }
}

bool same(const sim::JsonValue& a, const sim::JsonValue& b) {
  if (a.kind == Kind::kNumber && !a.is_integer && !std::isfinite(a.number)) {
    return b.kind == Kind::kNull;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return a.boolean == b.boolean;
    case Kind::kNumber:
      return a.is_integer ? b.is_integer && a.integer == b.integer : a.number == b.number;
    case Kind::kString:
      return a.text == b.text;
    case Kind::kArray:
      if (a.items.size() != b.items.size()) return false;
      for (size_t i = 0; i < a.items.size(); ++i) {
        if (!same(a.items[i], b.items[i])) return false;
      }
      return true;
    case Kind::kObject:
      if (a.members.size() != b.members.size()) return false;
      for (size_t i = 0; i < a.members.size(); ++i) {
        if (a.members[i].key != b.members[i].key) return false;
        if (!same(a.members[i].value, b.members[i].value)) return false;
      }
      return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  sim::JsonValue doc;
  if (!fz::parses([&] { doc = sim::parse_json(text, "fuzz.json"); }, "fuzz.json", text)) return 0;
  std::ostringstream out;
  sim::JsonWriter w(out);
  write(w, doc);
  w.finish();
  try {
    if (!same(doc, sim::parse_json(out.str(), "written.json"))) {
      fz::finding("written JSON reads back differently", out.str());
    }
  } catch (const std::exception& e) {
    fz::finding("written JSON does not read back", std::string(e.what()) + "\n" + out.str());
  }
  return 0;
}
