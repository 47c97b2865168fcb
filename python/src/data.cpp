// kiln.data's engine side: the engine's Dataset over flat lists of tensors,
// with Python callables for map, filter and generators. The structure of
// elements (tuples, dicts) is kept by kiln/data.py.
//
// GIL rule: every call that may pull elements releases the GIL, and every
// Python callback takes it back. A pipeline may pull on another thread
// (prefetch, or a graph's dataset loop), and that thread must be able to run
// the callbacks while the caller waits.
#include <memory>

#include "bindings.h"
#include "data/nodes.h"

namespace kiln::python {

namespace {

using data::Dataset;
using data::Element;

// A prefetch producer thread keeps the Python thread state of its first
// callback until it ends (data/nodes.h, ProducerThreadHooks): pybind11 would
// otherwise make and delete one per callback, which costs time and drops the
// thread's threading.local data (kiln's contexts), so every element paid for
// them again.
thread_local bool t_producer = false;
thread_local bool t_state_kept = false;

// The GIL for a callback from the engine.
struct CallbackGil {
  py::gil_scoped_acquire gil;
  CallbackGil() {
    if (t_producer && !t_state_kept) {
      gil.inc_ref();  // outlives this scope; released by the producer's end hook
      t_state_kept = true;
    }
  }
};

void producer_started() { t_producer = true; }

void producer_ending() {
  if (t_state_kept && Py_IsInitialized()) {
    py::gil_scoped_acquire gil;
    gil.dec_ref();  // this scope's end now deletes the thread state
  }
  t_state_kept = false;
}

Element to_element(py::handle result, const char* what) {
  Element out;
  if (!py::isinstance<py::list>(result) && !py::isinstance<py::tuple>(result))
    throw py::type_error(std::string(what) + " must return a list of tensors");
  for (py::handle t : result) out.push_back(to_tensor(t));
  return out;
}

// Elements from Python: every pass calls `open_pass()` for a new `next()`
// callable (TF calls the generator anew on each pass), which returns a list of
// tensors or None at the end.
class GeneratorNode final : public data::detail::DatasetNode {
 public:
  GeneratorNode(SharedObject open_pass, std::vector<TensorSpec> signature)
      : open_pass_(std::move(open_pass)), signature_(std::move(signature)) {}
  std::unique_ptr<data::detail::Cursor> open() const override {
    py::gil_scoped_acquire gil;
    return std::make_unique<PassCursor>(share((*open_pass_)()));
  }
  int64_t cardinality() const override { return Dataset::kUnknown; }
  // The output_signature, which kiln/data.py checks every element against.
  std::optional<std::vector<TensorSpec>> element_spec() const override { return signature_; }

 private:
  class PassCursor final : public data::detail::Cursor {
   public:
    explicit PassCursor(SharedObject next) : next_(std::move(next)) {}
    std::optional<Element> next() override {
      CallbackGil gil;
      py::object r = (*next_)();
      if (r.is_none()) return std::nullopt;
      return to_element(r, "a dataset generator");
    }

   private:
    SharedObject next_;
  };
  SharedObject open_pass_;
  std::vector<TensorSpec> signature_;
};

// The flat output_signature: each spec as TensorSpec._kiln_spec() gives it.
std::vector<TensorSpec> to_specs(py::handle specs) {
  std::vector<TensorSpec> out;
  for (py::handle item : specs) out.push_back(to_tensor_spec(item));
  return out;
}

// One pass over a dataset, as a Python iterator.
class PyIterator {
 public:
  explicit PyIterator(const Dataset& ds) {
    py::gil_scoped_release nogil;
    it_ = std::make_unique<Dataset::Iterator>(ds.begin());
  }
  // Dropping a pass mid-way may join a prefetch thread that is waiting for
  // the GIL in a callback.
  PyIterator(PyIterator&&) = default;
  ~PyIterator() {
    py::gil_scoped_release nogil;
    it_.reset();
  }
  Element next() {
    if (!it_ || *it_ == std::default_sentinel) throw py::stop_iteration();
    Element e = **it_;
    {
      py::gil_scoped_release nogil;
      ++*it_;
    }
    return e;
  }

 private:
  std::unique_ptr<Dataset::Iterator> it_;
};

}  // namespace

void bind_data(py::module_& m) {
  data::set_producer_thread_hooks({producer_started, producer_ending});
  py::class_<PyIterator>(m, "DatasetIterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &PyIterator::next);

  py::class_<Dataset>(m, "Dataset")
      .def_static("from_tensors", &Dataset::from_tensors)
      .def_static("from_tensor_slices", &Dataset::from_tensor_slices)
      .def_static("range", py::overload_cast<int64_t, int64_t, int64_t>(&Dataset::range))
      .def_static("zip", &Dataset::zip)
      .def_static("from_generator",
                  [](py::object open_pass, py::object signature) {
                    return Dataset(std::make_shared<GeneratorNode>(share(std::move(open_pass)), to_specs(signature)));
                  })
      .def("map",
           [](const Dataset& ds, py::object map_fn) {
             SharedObject fn = share(std::move(map_fn));
             return ds.map([fn](const Element& e) {
               CallbackGil gil;
               return to_element((*fn)(e), "a Dataset.map function");
             });
           })
      .def("filter",
           [](const Dataset& ds, py::object predicate) {
             SharedObject fn = share(std::move(predicate));
             return ds.filter([fn](const Element& e) {
               CallbackGil gil;
               return to_tensor((*fn)(e));
             });
           })
      .def("shuffle", &Dataset::shuffle)
      .def("batch", &Dataset::batch)
      .def("repeat", &Dataset::repeat)
      .def("take", &Dataset::take)
      .def("skip", &Dataset::skip)
      .def("shard", &Dataset::shard)
      .def("prefetch", &Dataset::prefetch)
      .def("cardinality", &Dataset::cardinality)
      .def("node_id", [](const Dataset& ds) { return reinterpret_cast<std::uintptr_t>(ds.node().get()); })
      .def("__iter__", [](const Dataset& ds) { return PyIterator(ds); })
      // The first element, run eagerly (what kiln/data.py reads an unknown
      // structure from), also of a dataset argument while a function traces.
      .def("first",
           [](const Dataset& ds) {
             InitScope eager;
             py::gil_scoped_release nogil;
             std::optional<Element> e = ds.node()->open()->next();
             return e;
           })
      // keep_going (None, or a callable of the state): the loop pulls no more
      // elements once it returns false (AutoGraph's break).
      .def(
          "reduce",
          [](const Dataset& ds, Element initial, py::object reduce_fn, py::object keep_going) {
            std::function<Tensor(const Element&)> keep;
            if (!keep_going.is_none())
              keep = [&keep_going](const Element& state) {
                py::gil_scoped_acquire gil;
                return to_tensor(keep_going(state));
              };
            Element out;
            {
              py::gil_scoped_release nogil;
              out = ds.reduce(
                  std::move(initial),
                  [&reduce_fn](const Element& state, const Element& element) {
                    py::gil_scoped_acquire gil;
                    return to_element(reduce_fn(state, element), "a Dataset.reduce function");
                  },
                  keep);
            }
            return out;
          },
          py::arg("initial"), py::arg("reduce_fn"), py::arg("keep_going") = py::none());

  m.def("read_idx", [](const std::string& path) {
    py::gil_scoped_release nogil;
    return data::read_idx(path);
  });
}

}  // namespace kiln::python
