#include "config/json_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "config/file_text.h"
#include "sim/check.h"

namespace clustersim::sim {

namespace {

// One diagnostic, built by push_back: GCC 12 reports a braced
// vector<Diagnostic> temporary as maybe-uninitialized (a false positive).
[[noreturn]] void throw_one(SourceLocation where, std::string message) {
  std::vector<Diagnostic> diagnostics;
  diagnostics.push_back(Diagnostic{std::move(where), "", std::move(message)});
  throw ConfigError(std::move(diagnostics));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

std::string hex_byte(unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  return std::string("0x") + kHex[c >> 4] + kHex[c & 0xf];
}

std::string hex4_text(uint32_t code) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string text = "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) text += kHex[(code >> shift) & 0xf];
  return text;
}

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xe0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  JsonValue document() {
    blanks();
    JsonValue v = value(0);
    blanks();
    if (!at_end()) fail("expected end of file after the JSON value, found " + found());
    return v;
  }

 private:
  struct Mark {
    int line;
    int column;
  };

  [[noreturn]] void fail(std::string message) const {
    throw_one({file_, line_, column()}, std::move(message));
  }
  [[noreturn]] void fail_at_end(std::string_view inside, Mark opened, std::string_view expected) {
    std::string message = "unexpected end of file in " + std::string(inside) + " (opened at " +
                          std::to_string(opened.line) + ":" + std::to_string(opened.column) + ")";
    if (!expected.empty()) message += "; expected " + std::string(expected);
    fail(std::move(message));
  }

  int column() const { return static_cast<int>(at_ - line_start_) + 1; }
  Mark mark() const { return {line_, column()}; }
  bool at_end() const { return at_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[at_]; }

  // What stands at the current position, for "found ...".
  std::string found() const {
    if (at_end()) return "end of file";
    const char c = text_[at_];
    if (is_word_char(c)) {
      size_t end = at_;
      while (end < text_.size() && is_word_char(text_[end]) && end - at_ < 20) ++end;
      return "'" + std::string(text_.substr(at_, end - at_)) + "'";
    }
    if (c == '\n' || c == '\r') return "a line break";
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) return "byte " + hex_byte(byte);
    return std::string("'") + c + "'";
  }

  void blanks() {
    while (!at_end()) {
      const char c = text_[at_];
      if (c == '\n') {
        ++at_;
        ++line_;
        line_start_ = at_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++at_;
      } else {
        break;
      }
    }
  }

  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    if (at_ + word.size() < text_.size() && is_word_char(text_[at_ + word.size()])) return false;
    at_ += word.size();
    return true;
  }

  JsonValue value(int depth) {
    JsonValue v;
    v.line = line_;
    v.column = column();
    const char c = peek();
    if (c == '{' || c == '[') {
      if (depth >= kMaxJsonDepth) {
        fail("expected at most " + std::to_string(kMaxJsonDepth) +
             " nested arrays and objects, found more");
      }
      if (c == '{') {
        object(v, depth + 1);
      } else {
        array(v, depth + 1);
      }
    } else if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.text = string();
    } else if (literal("true")) {
      v.kind = JsonValue::Kind::kBool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = JsonValue::Kind::kBool;
    } else if (literal("null")) {
      v.kind = JsonValue::Kind::kNull;
    } else if (c == '-' || is_digit(c)) {
      number(v);
    } else {
      fail("expected a value (object, array, string, number, true, false or null), found " +
           found());
    }
    return v;
  }

  void object(JsonValue& v, int depth) {
    v.kind = JsonValue::Kind::kObject;
    const Mark opened = mark();
    ++at_;  // '{'
    blanks();
    if (peek() == '}') {
      ++at_;
      return;
    }
    bool after_comma = false;
    for (;;) {
      if (at_end()) fail_at_end("an object", opened, after_comma ? "a string key" : "");
      if (peek() != '"') {
        fail(std::string(after_comma ? "expected a string key after ',', found "
                                     : "expected a string key or '}', found ") +
             found());
      }
      std::string key = string();
      blanks();
      if (at_end()) fail_at_end("an object", opened, "':' after an object key");
      if (peek() != ':') fail("expected ':' after an object key, found " + found());
      ++at_;
      blanks();
      if (at_end()) fail_at_end("an object", opened, "a value after ':'");
      JsonValue member = value(depth);
      const auto same_key = [&](const JsonMember& m) { return m.key == key; };
      const auto existing = std::find_if(v.members.begin(), v.members.end(), same_key);
      if (existing != v.members.end()) {
        existing->value = std::move(member);
      } else {
        v.members.push_back(JsonMember{std::move(key), std::move(member)});
      }
      blanks();
      if (at_end()) fail_at_end("an object", opened, "',' or '}' after an object member");
      if (peek() == '}') {
        ++at_;
        return;
      }
      if (peek() != ',') fail("expected ',' or '}' after an object member, found " + found());
      ++at_;
      blanks();
      after_comma = true;
    }
  }

  void array(JsonValue& v, int depth) {
    v.kind = JsonValue::Kind::kArray;
    const Mark opened = mark();
    ++at_;  // '['
    blanks();
    if (peek() == ']') {
      ++at_;
      return;
    }
    for (;;) {
      if (at_end()) fail_at_end("an array", opened, "a value");
      if (peek() == ']' || peek() == ',') {
        fail(std::string(v.items.empty() ? "expected a value or ']', found "
                                         : "expected a value after ',', found ") +
             found());
      }
      v.items.push_back(value(depth));
      blanks();
      if (at_end()) fail_at_end("an array", opened, "',' or ']' after an array item");
      if (peek() == ']') {
        ++at_;
        return;
      }
      if (peek() != ',') fail("expected ',' or ']' after an array item, found " + found());
      ++at_;
      blanks();
    }
  }

  void digits(const char* after) {
    if (!is_digit(peek())) fail(std::string("expected a digit ") + after + ", found " + found());
    while (is_digit(peek())) ++at_;
  }

  void number(JsonValue& v) {
    const size_t start = at_;
    bool integral = true;
    if (peek() == '-') {
      ++at_;
      if (!is_digit(peek())) fail("expected a digit after '-', found " + found());
    }
    if (peek() == '0') {
      ++at_;
      if (is_digit(peek())) {
        fail("expected '.', 'e' or the end of the number after a leading 0, found " + found());
      }
    } else {
      digits("");
    }
    if (peek() == '.') {
      integral = false;
      ++at_;
      digits("after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      digits("in the exponent");
    }
    v.kind = JsonValue::Kind::kNumber;
    v.text = std::string(text_.substr(start, at_ - start));
    const char* first = v.text.data();
    const char* last = first + v.text.size();
    const auto [end, ec] = std::from_chars(first, last, v.number);
    if (ec != std::errc() || end != last || !std::isfinite(v.number)) {
      at_ = start;
      fail("expected a number within the range of a double, found " + v.text);
    }
    if (integral) {
      const auto [int_end, int_ec] = std::from_chars(first, last, v.integer);
      v.is_integer = int_ec == std::errc() && int_end == last;
      if (!v.is_integer) v.integer = 0;
    }
  }

  uint32_t hex4() {
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = peek();
      uint32_t digit = 0;
      if (is_digit(c)) {
        digit = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<uint32_t>(c - 'A' + 10);
      } else if (at_end()) {
        return 0x110000;  // the caller reports the end of file
      } else {
        fail("expected 4 hex digits after \\u, found " + found());
      }
      code = (code << 4) | digit;
      ++at_;
    }
    return code;
  }

  std::string string() {
    const Mark opened = mark();
    ++at_;  // '"'
    std::string out;
    const auto end_of_file = [&] { fail_at_end("a string", opened, ""); };
    for (;;) {
      if (at_end()) end_of_file();
      const char c = text_[at_];
      if (c == '"') {
        ++at_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        fail(
            "expected '\"' or a character in a string (control characters must be escaped), "
            "found " +
            found());
      }
      ++at_;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) end_of_file();
      const char e = text_[at_];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const size_t escape_at = at_ - 1;
          ++at_;
          uint32_t code = hex4();
          if (code > 0x10ffff) end_of_file();
          if (code >= 0xdc00 && code < 0xe000) {
            at_ = escape_at;
            fail("expected a high surrogate (\\uD800-\\uDBFF) before the low surrogate " +
                 hex4_text(code) + ", found none");
          }
          if (code >= 0xd800 && code < 0xdc00) {
            if (at_end()) end_of_file();
            if (text_.substr(at_, 2) != "\\u") {
              fail("expected a low surrogate (\\uDC00-\\uDFFF) after " + hex4_text(code) +
                   ", found " + found());
            }
            const size_t low_at = at_;
            at_ += 2;
            const uint32_t low = hex4();
            if (low > 0x10ffff) end_of_file();
            if (low < 0xdc00 || low >= 0xe000) {
              at_ = low_at;
              fail("expected a low surrogate (\\uDC00-\\uDFFF) after " + hex4_text(code) +
                   ", found " + hex4_text(low));
            }
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(out, code);
          continue;  // hex4 moved past the escape
        }
        default:
          fail("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX) after '\\', found " +
               found());
      }
      ++at_;
    }
  }

  std::string_view text_;
  const std::string& file_;
  size_t at_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const JsonMember& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  const JsonValue* value = find(key);
  CLUSTERSIM_CHECK(value != nullptr, "JSON object has a member '" + std::string(key) + "'");
  return *value;
}

std::string_view JsonValue::kind_name() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "a value";
}

std::string JsonValue::describe() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return boolean ? "true" : "false";
    case Kind::kNumber:
      return text;
    case Kind::kString:
      return text.size() <= 60 ? "\"" + text + "\"" : "\"" + text.substr(0, 57) + "...\"";
    case Kind::kArray:
    case Kind::kObject:
      break;
  }
  return std::string(kind_name());
}

JsonValue parse_json(std::string_view text, const std::string& file) {
  return Reader(text, file).document();
}

JsonValue read_json_file(const std::string& path) { return parse_json(read_file_text(path), path); }

std::string json_path_member(std::string_view parent, std::string_view key) {
  bool identifier = !key.empty() && !is_digit(key.front());
  for (char c : key) identifier = identifier && is_word_char(c);
  if (!identifier) {
    std::string quoted = std::string(parent) + "[\"";
    for (char c : key) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    return quoted + "\"]";
  }
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string json_path_index(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

}  // namespace clustersim::sim
