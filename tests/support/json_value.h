// Test support: a strict, small JSON reader (RFC 8259) for checking the
// reports and traces the commands write: the whole text must be one JSON
// value (surrounding whitespace allowed); numbers follow JSON's grammar (no
// NaN, no leading '+' or zeros, no trailing '.'); strings decode the escapes
// (\uXXXX of the BMP and surrogate pairs to UTF-8); objects keep their
// members in order and refuse duplicate keys. Any deviation throws
// std::runtime_error naming the byte offset.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clustersim::test_support {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;              // kString: the decoded string; kNumber: the number as written
  std::vector<JsonValue> items;  // kArray
  std::vector<std::pair<std::string, JsonValue>> members;  // kObject, in order

  bool is(Kind k) const { return kind == k; }
  bool has(std::string_view key) const {
    for (const auto& [k, v] : members) {
      if (k == key) return true;
    }
    return false;
  }
  // The member `key` of an object; throws when absent.
  const JsonValue& operator[](std::string_view key) const {
    for (const auto& [k, v] : members) {
      if (k == key) return v;
    }
    throw std::runtime_error("no member '" + std::string(key) + "'");
  }
};

namespace json_detail {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  JsonValue document() {
    JsonValue v = value();
    blanks();
    if (at_ < text_.size()) fail("text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("invalid JSON at byte " + std::to_string(at_) + ": " + what);
  }
  void blanks() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
      ++at_;
    }
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++at_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  JsonValue value() {
    blanks();
    JsonValue v;
    const char c = peek();
    if (c == '{') {
      object(v);
    } else if (c == '[') {
      array(v);
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
    } else if (c == '-' || digit(c)) {
      number(v);
    } else {
      fail("expected a value");
    }
    return v;
  }

  void object(JsonValue& v) {
    v.kind = JsonValue::Kind::kObject;
    expect('{');
    blanks();
    if (peek() == '}') {
      ++at_;
      return;
    }
    for (;;) {
      blanks();
      if (peek() != '"') fail("expected a key");
      std::string key = string();
      if (v.has(key)) fail("duplicate key '" + key + "'");
      blanks();
      expect(':');
      v.members.emplace_back(std::move(key), value());
      blanks();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void array(JsonValue& v) {
    v.kind = JsonValue::Kind::kArray;
    expect('[');
    blanks();
    if (peek() == ']') {
      ++at_;
      return;
    }
    for (;;) {
      v.items.push_back(value());
      blanks();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      expect(']');
      return;
    }
  }

  void number(JsonValue& v) {
    const size_t start = at_;
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (digit(peek())) {
      while (digit(peek())) ++at_;
    } else {
      fail("expected a digit");
    }
    if (peek() == '.') {
      ++at_;
      if (!digit(peek())) fail("expected a digit after '.'");
      while (digit(peek())) ++at_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!digit(peek())) fail("expected a digit in the exponent");
      while (digit(peek())) ++at_;
    }
    v.kind = JsonValue::Kind::kNumber;
    v.text = std::string(text_.substr(start, at_ - start));
    v.number = std::strtod(v.text.c_str(), nullptr);
  }

  uint32_t hex4() {
    if (at_ + 4 > text_.size()) fail("short \\u escape");
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      code <<= 4;
      if (digit(c)) {
        code |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        code |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        code |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        fail("bad hex digit in \\u escape");
      }
    }
    return code;
  }

  static void utf8(std::string& out, uint32_t code) {
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

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (at_ >= text_.size()) fail("unterminated string");
      const char c = text_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) fail("unterminated escape");
      const char e = text_[at_++];
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
          uint32_t code = hex4();
          if (code >= 0xd800 && code < 0xdc00) {
            if (!literal("\\u")) fail("lone high surrogate");
            const uint32_t low = hex4();
            if (low < 0xdc00 || low >= 0xe000) fail("bad low surrogate");
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          }
          utf8(out, code);
          break;
        }
        default:
          fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace json_detail

inline JsonValue parse_json(std::string_view text) { return json_detail::Reader(text).document(); }

}  // namespace clustersim::test_support
