// A command's document as a sequence of writes, so that one description of
// it serves both front ends: the --json text (JsonWriter, behind every
// to_json) and the Python module's dicts and lists (python/src/to_python.cpp).
// The keys, their order and the values are written once, in the command's
// write() function.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace ctmc::commands {

// Each call adds the member `key` to the innermost open object or, when an
// array is the innermost, an element (the key is then not used). The first
// begin_object / begin_array opens the document itself.
class DocumentWriter {
 public:
  virtual ~DocumentWriter() = default;
  virtual void text(const std::string& key, const std::string& v) = 0;
  // NaN and the infinities are null in a JSON document (nlohmann's dump
  // writes them so); a writer of another kind writes them as its null.
  virtual void real(const std::string& key, double v) = 0;
  virtual void integer(const std::string& key, std::int64_t v) = 0;
  virtual void count(const std::string& key, std::uint64_t v) = 0;
  virtual void boolean(const std::string& key, bool v) = 0;
  virtual void null(const std::string& key) = 0;
  virtual void begin_object(const std::string& key) = 0;
  virtual void begin_array(const std::string& key) = 0;
  virtual void end() = 0;  // closes the innermost open object or array
};

// The writer's call for each C++ type.
inline void put(DocumentWriter& w, const std::string& key, const std::string& v) { w.text(key, v); }
inline void put(DocumentWriter& w, const std::string& key, const char* v) { w.text(key, v); }
inline void put(DocumentWriter& w, const std::string& key, bool v) { w.boolean(key, v); }
template <class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
void put(DocumentWriter& w, const std::string& key, T v) {
  if constexpr (std::is_floating_point_v<T>)
    w.real(key, static_cast<double>(v));
  else if constexpr (std::is_signed_v<T>)
    w.integer(key, static_cast<std::int64_t>(v));
  else
    w.count(key, static_cast<std::uint64_t>(v));
}
template <class T>
void put(DocumentWriter& w, const std::string& key, const std::optional<T>& v) {
  if (v)
    put(w, key, *v);
  else
    w.null(key);
}
template <class T>
void put(DocumentWriter& w, const std::string& key, const std::vector<T>& v) {
  w.begin_array(key);
  for (const auto& x : v) put(w, "", x);
  w.end();
}
// A JSON value as it stands (a model in its file schema).
void put(DocumentWriter& w, const std::string& key, const nlohmann::ordered_json& j);

// An object or array open for the scope.
class Object {
 public:
  Object(DocumentWriter& w, const std::string& key) : w_(w) { w.begin_object(key); }
  ~Object() { w_.end(); }
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

 private:
  DocumentWriter& w_;
};
class Array {
 public:
  Array(DocumentWriter& w, const std::string& key) : w_(w) { w.begin_array(key); }
  ~Array() { w_.end(); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

 private:
  DocumentWriter& w_;
};

// The document as nlohmann JSON (objects keep the order written; a key
// written twice keeps its first place and its last value).
class JsonWriter final : public DocumentWriter {
 public:
  void text(const std::string& key, const std::string& v) override { add(key, v); }
  void real(const std::string& key, double v) override { add(key, v); }
  void integer(const std::string& key, std::int64_t v) override { add(key, v); }
  void count(const std::string& key, std::uint64_t v) override { add(key, v); }
  void boolean(const std::string& key, bool v) override { add(key, v); }
  void null(const std::string& key) override { add(key, nullptr); }
  void begin_object(const std::string& key) override { open(key, nlohmann::ordered_json::object()); }
  void begin_array(const std::string& key) override { open(key, nlohmann::ordered_json::array()); }
  void end() override { open_.pop_back(); }
  nlohmann::ordered_json take() { return std::move(root_); }

 private:
  nlohmann::ordered_json& add(const std::string& key, nlohmann::ordered_json v);
  void open(const std::string& key, nlohmann::ordered_json v) { open_.push_back(&add(key, std::move(v))); }
  nlohmann::ordered_json root_;
  std::vector<nlohmann::ordered_json*> open_;
};

// write(w, result) as nlohmann JSON.
template <class Result>
nlohmann::ordered_json json_of(const Result& r) {
  JsonWriter w;
  write(w, r);
  return w.take();
}

}  // namespace ctmc::commands
