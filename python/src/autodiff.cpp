// kiln.Variable and the engine side of kiln.GradientTape.
#include <memory>

#include "bindings.h"

namespace kiln::python {

namespace {

// A tape for Python's `with` block: recording stops when the block ends, and
// the tape stays usable for gradient() until the object goes.
class PyTape {
 public:
  PyTape(bool persistent, bool watch_accessed_variables)
      : tape_(std::make_unique<GradientTape>(GradientTapeOptions{persistent, watch_accessed_variables})),
        persistent_(persistent) {}
  ~PyTape() {
    pause_.reset();  // before the tape it points into
    tape_.reset();
  }
  void stop() {
    // Direct initialization from the returned prvalue: Pause is neither copied nor moved.
    if (!pause_) pause_.reset(new GradientTape::Pause(tape_->stop_recording()));
  }
  void resume() { pause_.reset(); }
  void watch(py::handle x) {
    if (py::isinstance<Variable>(x)) tape_->watch(py::cast<const Variable&>(x));
    else tape_->watch(to_tensor(x));
  }
  std::vector<Variable> watched_variables() const { return tape_->watched_variables(); }
  // Flat targets and sources; an undefined result (a source the targets do
  // not depend on) becomes None.
  py::list gradient(const std::vector<Tensor>& targets, py::list sources, py::object output_gradients) {
    if (used_ && !persistent_)
      throw py::value_error(
          "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)");
    used_ = true;
    std::vector<GradientSource> srcs;
    for (py::handle s : sources) {
      if (py::isinstance<Variable>(s)) srcs.emplace_back(py::cast<const Variable&>(s));
      else srcs.emplace_back(py::cast<const Tensor&>(s));
    }
    std::vector<Tensor> out_grads;
    if (!output_gradients.is_none())
      for (py::handle g : output_gradients) out_grads.push_back(to_tensor(g));
    std::vector<Tensor> grads = GraphCall()([&] { return tape_->gradient(targets, srcs, out_grads); });
    py::list out;
    for (Tensor& g : grads) out.append(g.defined() ? py::cast(std::move(g)) : py::none());
    return out;
  }

 private:
  std::unique_ptr<GradientTape> tape_;
  std::unique_ptr<GradientTape::Pause> pause_;
  bool persistent_;
  bool used_ = false;
};

}  // namespace

void bind_autodiff(py::module_& m) {
  py::class_<Variable>(m, "Variable")
      .def(py::init([](py::handle initial_value, bool trainable, py::object name, py::object dtype) {
             VariableOptions o;
             o.trainable = trainable;
             if (!name.is_none()) o.name = py::cast<std::string>(name);
             std::optional<DType> d;
             if (!dtype.is_none()) d = dtype_from_python(dtype);
             return Variable(to_tensor(initial_value, d), o, user_location());
           }),
           py::arg("initial_value"), py::arg("trainable") = true, py::arg("name") = py::none(),
           py::arg("dtype") = py::none())
      .def_property_readonly("_dtype_enum", [](const Variable& v) { return static_cast<int>(v.dtype()); })
      .def_property_readonly("_dims", [](const Variable& v) { return v.shape().to_vector(); })
      .def_property_readonly("_rank", [](const Variable& v) { return v.shape().rank(); })
      .def_property_readonly("_variable_name", [](const Variable& v) { return v.name(); })
      .def_property_readonly("trainable", &Variable::trainable)
      .def("_set_trainable", &Variable::set_trainable)
      .def("_same_state", [](const Variable& a, const Variable& b) { return a.state() == b.state(); })
      .def("_state_id", [](const Variable& v) { return reinterpret_cast<std::uintptr_t>(v.state().get()); })
      .def("read_value", [](const Variable& v) { return v.read_value(user_location()); })
      .def("_assign", [](const Variable& v, py::handle value) { v.assign(to_tensor(value, v.dtype()), user_location()); })
      .def("_assign_add", [](const Variable& v, py::handle value) {
        v.assign_add(to_tensor(value, v.dtype()), user_location());
      })
      .def("_assign_sub", [](const Variable& v, py::handle value) {
        v.assign_sub(to_tensor(value, v.dtype()), user_location());
      });

  m.def("_set_autocast_dtype", &set_autocast_dtype);
  m.def("_autocast_dtype", &autocast_dtype);
  m.def("_set_autocast_variable_type", &set_autocast_variable_type);

  py::class_<PyTape>(m, "GradientTape")
      .def(py::init<bool, bool>(), py::arg("persistent") = false, py::arg("watch_accessed_variables") = true)
      .def("stop", &PyTape::stop)
      .def("resume", &PyTape::resume)
      .def("watch", &PyTape::watch)
      .def("watched_variables", &PyTape::watched_variables)
      .def("gradient", &PyTape::gradient);

  m.def("apply_adam", [](const Variable& var, const Variable& m_slot, const Variable& v_slot, py::handle grad,
                         py::handle alpha, double beta_1, double beta_2, double epsilon) {
    apply_adam(var, m_slot, v_slot, to_tensor(grad), to_tensor(alpha, var.dtype()), beta_1, beta_2, epsilon,
               user_location());
  });
}

}  // namespace kiln::python
