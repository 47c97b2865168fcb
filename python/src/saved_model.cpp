// kiln.saved_model's engine side: the object tree and signatures handed to
// the engine's saver, and the loaded model's parts. The format is the C++
// one, so a model crosses between Python, C++ and kiln-cli both ways.
#include "bindings.h"

namespace kiln::python {

namespace {

namespace sm = saved_model;

py::tuple info_tuple(const sm::TensorInfo& t) {
  return py::make_tuple(t.name, static_cast<int>(t.dtype), t.shape.to_vector(), t.shape.rank(), t.tensor_name);
}

std::vector<Tensor> call_loaded(const sm::LoadedFunction& f, const std::vector<Tensor>& args) {
  return GraphCall()([&] { return f.call(args).values(); });
}

}  // namespace

void bind_saved_model(py::module_& m) {
  py::class_<sm::Object>(m, "SavedObject")
      .def(py::init<>())
      .def("add_variable", [](sm::Object& o, std::string name, const Variable& v) { o.add(std::move(name), v); })
      .def("add_functions",
           [](sm::Object& o, std::string name, std::vector<ConcreteFunction> traces) {
             o.functions.emplace_back(std::move(name), std::move(traces));
           })
      .def("add_child", [](sm::Object& o, std::string name, const sm::Object& child) { o.add(std::move(name), child); });

  // signatures: {name: (ConcreteFunctionCore, [input names], [output names])}.
  m.def("saved_model_save",
        [](const sm::Object& root, const std::string& dir,
           const std::map<std::string, std::tuple<ConcreteFunction, std::vector<std::string>, std::vector<std::string>>>&
               signatures) {
          sm::Signatures sigs;
          for (const auto& [name, sig] : signatures)
            sigs.emplace(name, sm::Signature(std::get<0>(sig), std::get<1>(sig), std::get<2>(sig)));
          py::gil_scoped_release nogil;
          sm::save(root, dir, sigs);
        });

  py::class_<sm::LoadedSignature>(m, "LoadedSignature")
      .def("__call__",
           [](const sm::LoadedSignature& s, const std::map<std::string, Tensor>& inputs,
              std::optional<double> timeout) { return GraphCall(timeout)([&] { return s(inputs); }); },
           py::arg("inputs"), py::arg("timeout") = py::none())
      .def("inputs",
           [](const sm::LoadedSignature& s) {
             py::list out;
             for (const auto& t : s.inputs()) out.append(info_tuple(t));
             return out;
           })
      .def("outputs",
           [](const sm::LoadedSignature& s) {
             py::list out;
             for (const auto& t : s.outputs()) out.append(info_tuple(t));
             return out;
           })
      .def_property_readonly("function", &sm::LoadedSignature::function);

  py::class_<sm::LoadedFunction>(m, "LoadedFunction")
      .def("call", &call_loaded)
      .def_property_readonly("name", &sm::LoadedFunction::name)
      .def("concrete_functions", &sm::LoadedFunction::concrete_functions);

  py::class_<sm::LoadedObject>(m, "LoadedObject")
      .def("own_variables", &sm::LoadedObject::own_variables)
      .def("functions", &sm::LoadedObject::functions)
      .def("children", &sm::LoadedObject::children)
      .def("variables", &sm::LoadedObject::variables);

  py::class_<sm::Loaded, sm::LoadedObject>(m, "Loaded")
      .def("signatures", &sm::Loaded::signatures)
      .def_property_readonly("format_version", &sm::Loaded::format_version);

  m.def("saved_model_load", [](const std::string& dir) {
    py::gil_scoped_release nogil;
    return sm::load(dir);
  });
}

}  // namespace kiln::python
