// kiln.profiler: the engine's profiler (kiln/profiler.h) for Python.
#include <kiln/profiler.h>

#include "bindings.h"

namespace kiln::python {

namespace {

const char* kind_name(profiler::Event::Kind k) {
  switch (k) {
    case profiler::Event::Kind::Eager: return "eager";
    case profiler::Event::Kind::GraphOp: return "graph";
    case profiler::Event::Kind::Function: return "function";
  }
  return "";
}

py::dict event_dict(const profiler::Event& e) {
  py::dict d;
  d["kind"] = kind_name(e.kind);
  d["op"] = e.op;
  d["node"] = e.node;
  d["function"] = e.function;
  d["file"] = e.file;
  d["line"] = e.line;
  py::list shapes;
  for (const Shape& s : e.output_shapes) shapes.append(py::tuple(py::cast(s.to_vector())));
  d["output_shapes"] = shapes;
  d["start_ns"] = e.start_ns;
  d["duration_ns"] = e.duration_ns;
  d["self_ns"] = e.self_ns;
  d["bytes_allocated"] = e.bytes_allocated;
  d["thread"] = e.thread;
  return d;
}

}  // namespace

void bind_profiler(py::module_& m) {
  py::class_<profiler::Profile>(m, "Profile")
      .def("table", &profiler::Profile::table, py::arg("max_rows") = 25)
      .def("chrome_trace_json", &profiler::Profile::chrome_trace_json)
      .def("write_chrome_trace", &profiler::Profile::write_chrome_trace, py::arg("path"),
           py::call_guard<py::gil_scoped_release>())
      .def("events", [](const profiler::Profile& p) {
        py::list out;
        for (const profiler::Event& e : p.events()) out.append(event_dict(e));
        return out;
      });
  m.def("profiler_start", &profiler::start);
  m.def("profiler_stop", &profiler::stop);
  m.def("profiler_active", &profiler::active);
}

}  // namespace kiln::python
