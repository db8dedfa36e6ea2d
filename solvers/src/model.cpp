#include "ctmc/solvers/model.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/io/atomic_write.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/json_input.hpp"

namespace ctmc::solvers {

using ojson = nlohmann::ordered_json;

ExactValue::ExactValue(const Rational& q) : value(q), text(exact_text(q)) {}

Rational Transition::rate(const Rational& H) const {
  if (slope.value == 0) return offset.value > 0 ? offset.value : Rational(0);  // constant: no arithmetic
  Rational r = offset.value + slope.value * H;
  return r > 0 ? r : Rational(0);
}

std::size_t Model::state_index(const std::string& name) const {
  for (std::size_t i = 0; i < states.size(); ++i)
    if (states[i] == name) return i;
  throw std::out_of_range(name);
}

std::vector<Rational> Model::rates(const Rational& H) const {
  std::vector<Rational> r;
  r.reserve(transitions.size());
  for (const auto& t : transitions) r.push_back(t.rate(H));
  return r;
}

void validate(const Model& m, const std::string& source) {
  if (m.states.empty()) throw InputError(source + ": states: the model has no states");
  if (m.transitions.empty()) throw InputError(source + ": transitions: the model has no transitions");
  std::set<std::string> names;
  for (const auto& s : m.states)
    if (!names.insert(s).second) throw InputError(fmt::format("{}: states: duplicate state {}", source, quote_excerpt(s)));
  std::set<std::pair<std::size_t, std::size_t>> seen;
  bool any_spike = false;
  for (std::size_t k = 0; k < m.transitions.size(); ++k) {
    const auto& t = m.transitions[k];
    const std::string where = fmt::format("{}: transitions[{}]", source, k);
    if (t.from >= m.size() || t.to >= m.size()) throw InputError(where + ": unknown state");
    if (t.from == t.to) throw InputError(fmt::format("{}: self-loop on state {}", where, quote_excerpt(m.states[t.from])));
    if (!seen.insert({t.from, t.to}).second)
      throw InputError(fmt::format("{}: duplicate transition {} -> {}", where, quote_excerpt(m.states[t.from]), quote_excerpt(m.states[t.to])));
    if (t.slope.value == 0 && t.offset.value < 0)
      throw InputError(fmt::format("{}.offset: negative constant rate {}", where, t.offset.text));
    any_spike = any_spike || t.spike;
  }
  if (!any_spike) throw InputError(source + ": transitions: no spike transition");
}

namespace {

// One reference token of an RFC 6901 JSON pointer: "~" -> "~0", "/" -> "~1".
// Unescaped, a key containing "/" would name another value's path (a
// top-level key "transitions/0" would shadow transitions[0]).
std::string pointer_token(const std::string& key) {
  std::string r;
  r.reserve(key.size());
  for (char ch : key) {
    if (ch == '~')
      r += "~0";
    else if (ch == '/')
      r += "~1";
    else
      r += ch;
  }
  return r;
}

// Walks the document in order, pairing each number with its text.
void collect_number_texts(const ojson& j, const std::string& path, const std::vector<std::string>& texts,
                          std::size_t& next, std::map<std::string, std::string>& out) {
  if (j.is_number()) {
    out[path] = texts.at(next++);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      collect_number_texts(it.value(), path + "/" + pointer_token(it.key()), texts, next, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) collect_number_texts(j[i], path + "/" + std::to_string(i), texts, next, out);
  }
}

// A misspelt key ("slpoe") would otherwise be ignored and its default used.
void reject_unknown_keys(const ojson& j, std::initializer_list<const char*> allowed, const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const char* a : allowed) known = known || it.key() == a;
    if (known) continue;
    std::string expected;
    for (const char* a : allowed) expected += (expected.empty() ? "" : ", ") + std::string(a);
    throw InputError(fmt::format("{}: unknown key {} (expected {})", where, quote_excerpt(it.key()), expected));
  }
}

// The largest finite double, exactly.
const Rational kMaxMagnitude = [] {
  Rational r;
  mpq_set_d(r.backend().data(), std::numeric_limits<double>::max());
  return r;
}();

ExactValue read_exact(const ojson& t, const char* field, const std::string& path,
                      const std::map<std::string, std::string>& number_text, const std::string& where,
                      bool required) {
  if (!t.contains(field)) {
    if (required) throw InputError(fmt::format("{}.{}: missing", where, field));
    return ExactValue();
  }
  const auto& v = t[field];
  std::string text;
  if (v.is_number()) {
    text = number_text.at(path + "/" + pointer_token(field));
  } else if (v.is_string()) {
    text = v.get<std::string>();
  } else {
    throw InputError(fmt::format("{}.{}: must be a number or an exact string", where, field));
  }
  auto q = parse_exact(text);
  if (!q) throw InputError(fmt::format("{}.{}: {} is not a finite exact number", where, field, quote_excerpt(text)));
  // Every JSON reader (and the double solvers) takes 1e999 as infinity: a
  // magnitude beyond double's range is rejected rather than read as 10^999.
  if (abs(*q) > kMaxMagnitude)
    throw InputError(fmt::format("{}.{}: {} is out of range (magnitude above 1.8e308, i.e. infinite in double)",
                                 where, field, quote_excerpt(text)));
  return ExactValue(*q, text);
}

}  // namespace

namespace {

// Parses `text` into `doc` (parse_json_strict: nesting capped, duplicate keys
// refused) and returns json_number_texts(text).
std::map<std::string, std::string> parse_with_number_texts(const std::string& text, const std::string& source,
                                                           ojson& doc) {
  std::vector<std::string> texts;
  doc = parse_json_strict<ojson>(text, source, &texts);
  std::map<std::string, std::string> number_text;
  std::size_t next = 0;
  collect_number_texts(doc, "", texts, next, number_text);
  return number_text;
}

}  // namespace

std::map<std::string, std::string> json_number_texts(const std::string& text, const std::string& source) {
  ojson doc;
  return parse_with_number_texts(text, source, doc);
}

Model model_from_json_text(const std::string& text, const std::string& source) {
  ojson j;
  const auto number_text = parse_with_number_texts(text, source, j);

  if (!j.is_object()) throw InputError(source + ": malformed model: top level must be an object");
  reject_unknown_keys(j, {"states", "transitions", "meta"}, source + ": top level");
  Model m;
  if (!j.contains("states") || !j["states"].is_array())
    throw InputError(source + ": states: missing or not an array");
  for (std::size_t i = 0; i < j["states"].size(); ++i) {
    const auto& s = j["states"][i];
    if (!s.is_string()) throw InputError(fmt::format("{}: states[{}]: must be a string", source, i));
    m.states.push_back(s.get<std::string>());
  }
  // Hashed once: looking each endpoint up by a scan of the states made reading
  // O(states x transitions) (seconds for a 40,000-state Bernstein chain). The
  // first of duplicate names wins here; validate() rejects duplicates below.
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(m.states.size());
  for (std::size_t i = 0; i < m.states.size(); ++i) index.emplace(m.states[i], i);
  if (!j.contains("transitions") || !j["transitions"].is_array())
    throw InputError(source + ": transitions: missing or not an array");
  for (std::size_t k = 0; k < j["transitions"].size(); ++k) {
    const auto& t = j["transitions"][k];
    const std::string where = fmt::format("{}: transitions[{}]", source, k);
    const std::string path = "/transitions/" + std::to_string(k);
    if (!t.is_object()) throw InputError(where + ": must be an object");
    reject_unknown_keys(t, {"from", "to", "offset", "slope", "spike"}, where);
    Transition tr;
    for (const char* end : {"from", "to"}) {
      if (!t.contains(end) || !t[end].is_string())
        throw InputError(fmt::format("{}.{}: missing or not a state name", where, end));
      const auto name = t[end].get<std::string>();
      const auto found = index.find(name);
      if (found == index.end()) throw InputError(fmt::format("{}.{}: unknown state {}", where, end, quote_excerpt(name)));
      (std::string(end) == "from" ? tr.from : tr.to) = found->second;
    }
    tr.offset = read_exact(t, "offset", path, number_text, where, true);
    tr.slope = read_exact(t, "slope", path, number_text, where, false);
    if (t.contains("spike")) {
      if (!t["spike"].is_boolean()) throw InputError(where + ".spike: must be true or false");
      tr.spike = t["spike"].get<bool>();
    }
    m.transitions.push_back(tr);
  }
  if (j.contains("meta")) {
    if (!j["meta"].is_object()) throw InputError(source + ": meta: must be an object");
    m.meta = j["meta"];
  }
  validate(m, source);
  return m;
}

Model read_model_file(const std::string& path) {
  return model_from_json_text(read_input_file(path, kModelFileKind), path);
}

ojson model_to_json(const Model& m) {
  ojson j;
  j["states"] = m.states;
  j["transitions"] = ojson::array();
  for (const auto& t : m.transitions) {
    ojson o;
    o["from"] = m.states[t.from];
    o["to"] = m.states[t.to];
    o["offset"] = t.offset.text;
    o["slope"] = t.slope.text;
    o["spike"] = t.spike;
    j["transitions"].push_back(o);
  }
  j["meta"] = m.meta;
  return j;
}

void write_model_file(const Model& m, const std::string& path) {
  // All or nothing, symbolic links followed, devices written through
  // (io/atomic_write.hpp); errors are InputErrors naming `path`.
  io::write_file_atomically(path, model_to_json(m).dump(2) + "\n");
}

}  // namespace ctmc::solvers
