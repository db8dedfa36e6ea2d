#include "to_python.hpp"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace py = pybind11;

namespace ctmc::python {
namespace {

// A document's writes as Python objects, each object a dict in the order written.
class PyWriter final : public commands::DocumentWriter {
 public:
  void text(const std::string& key, const std::string& v) override { add(key, py::str(v)); }
  // json.loads gives None for the null a NaN or an infinity is written as.
  void real(const std::string& key, double v) override {
    add(key, std::isfinite(v) ? py::object(py::float_(v)) : py::object(py::none()));
  }
  void integer(const std::string& key, std::int64_t v) override { add(key, py::int_(v)); }
  void count(const std::string& key, std::uint64_t v) override { add(key, py::int_(v)); }
  void boolean(const std::string& key, bool v) override { add(key, py::bool_(v)); }
  void null(const std::string& key) override { add(key, py::none()); }
  void begin_object(const std::string& key) override { open_.push_back(add(key, py::dict())); }
  void begin_array(const std::string& key) override { open_.push_back(add(key, py::list())); }
  void end() override { open_.pop_back(); }
  py::object take() { return std::move(root_); }

 private:
  py::object add(const std::string& key, py::object v) {
    if (open_.empty())
      root_ = v;
    else if (py::isinstance<py::list>(open_.back()))
      open_.back().cast<py::list>().append(v);
    else
      open_.back().cast<py::dict>()[py::str(key)] = v;
    return v;
  }
  py::object root_;
  std::vector<py::object> open_;
};

template <class T>
py::array_t<T> array(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

}  // namespace

template <class Result>
py::object to_python(const Result& r) {
  PyWriter w;
  commands::write(w, r);
  return w.take();
}
template py::object to_python(const commands::FluxResult&);
template py::object to_python(const commands::CountingResult&);
template py::object to_python(const commands::FormulaResult&);
template py::object to_python(const commands::BernsteinResult&);
template py::object to_python(const commands::TrainCommandResult&);
template py::object to_python(const commands::EvaluateCommandResult&);

py::object to_python(const commands::ConvertResult& r) {
  PyWriter w;
  commands::write(w, r);
  return w.take();
}

py::object to_python(const commands::FitCommandOptions& o, const commands::FitCommandResult& r) {
  PyWriter w;
  commands::write(w, o, r);
  return w.take();
}

py::object to_python(const commands::FitCommandOptions& o, const commands::ScoreResult& r) {
  PyWriter w;
  commands::write(w, o, r);
  return w.take();
}

py::object to_python(const commands::NeuronSimResult& r) {
  PyWriter w;
  commands::write(w, r);
  py::object d = w.take();
  d["counts"] = array(r.counts);
  return d;
}

py::object to_python(const commands::NetworkCommandResult& r) {
  PyWriter w;
  commands::write(w, r);
  py::object d = w.take();
  // int64, as numpy reads Python ints, whatever the width of the C++ int.
  d["predictions"] = array(std::vector<std::int64_t>(r.sim.predictions.begin(), r.sim.predictions.end()));
  d["synops"] = array(r.sim.synops);
  return d;
}

py::object to_python(const commands::CheckResult& r) {
  PyWriter w;
  commands::write(w, r);
  return w.take();
}

}  // namespace ctmc::python
