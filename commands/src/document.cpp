#include "ctmc/commands/document.hpp"

namespace ctmc::commands {

void put(DocumentWriter& w, const std::string& key, const nlohmann::ordered_json& j) {
  using Type = nlohmann::json::value_t;
  switch (j.type()) {
    case Type::boolean:
      return w.boolean(key, j.get<bool>());
    case Type::number_integer:
      return w.integer(key, j.get<std::int64_t>());
    case Type::number_unsigned:
      return w.count(key, j.get<std::uint64_t>());
    case Type::number_float:
      return w.real(key, j.get<double>());
    case Type::string:
      return w.text(key, j.get<std::string>());
    case Type::array: {
      const Array a(w, key);
      for (const auto& x : j) put(w, "", x);
      return;
    }
    case Type::object: {
      const Object o(w, key);
      for (const auto& [k, v] : j.items()) put(w, k, v);
      return;
    }
    default:
      return w.null(key);
  }
}

nlohmann::ordered_json& JsonWriter::add(const std::string& key, nlohmann::ordered_json v) {
  if (open_.empty()) {
    root_ = std::move(v);
    return root_;
  }
  auto& top = *open_.back();
  if (top.is_array()) {
    top.push_back(std::move(v));
    return top.back();
  }
  return top[key] = std::move(v);
}

}  // namespace ctmc::commands
