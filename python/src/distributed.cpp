// kiln.distributed's engine side (python/kiln/distributed.py is the API):
// the world, the collectives and gradient averaging of kiln::distributed.
// Calls that wait for other ranks release the GIL, so Python threads (a
// dataset's prefetch) go on meanwhile.
#include <kiln/distributed.h>

#include "bindings.h"

namespace kiln::python {

namespace {

namespace dist = kiln::distributed;

dist::Reduction reduction(const std::string& name) {
  if (name == "sum") return dist::Reduction::Sum;
  if (name == "mean" || name == "average") return dist::Reduction::Mean;
  if (name == "max") return dist::Reduction::Max;
  if (name == "min") return dist::Reduction::Min;
  throw py::value_error("unknown reduction '" + name + "' (sum, mean, max, min)");
}

// A collective on one tensor, with the GIL released while it waits.
template <class F> Tensor collective(py::handle x, F&& fn) {
  Tensor t = to_tensor(x);
  SourceLocation loc = user_location();
  py::gil_scoped_release release;
  return fn(t, loc);
}

}  // namespace

void bind_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("distributed", "kiln::distributed (data-parallel training over MPI)");
  d.def(
      "init",
      [](double timeout_seconds) {
        py::gil_scoped_release release;
        dist::init({.timeout_seconds = timeout_seconds});
      },
      py::arg("timeout_seconds") = 0.0);
  d.def("finalize", [] {
    py::gil_scoped_release release;
    dist::finalize();
  });
  d.def("initialized", &dist::initialized);
  d.def("built_with_mpi", &dist::built_with_mpi);
  d.def("rank", &dist::rank);
  d.def("size", &dist::size);
  d.def("local_rank", &dist::local_rank);
  d.def("local_size", &dist::local_size);
  d.def("barrier", [] {
    py::gil_scoped_release release;
    dist::barrier();
  });
  d.def("allreduce", [](py::handle x, const std::string& op) {
    dist::Reduction r = reduction(op);
    return collective(x, [r](const Tensor& t, const SourceLocation& loc) { return dist::allreduce(t, r, loc); });
  });
  d.def("broadcast", [](py::handle x, int root) {
    return collective(x, [root](const Tensor& t, const SourceLocation& loc) { return dist::broadcast(t, root, loc); });
  });
  d.def("reduce_to_root", [](py::handle x, int root) {
    return collective(x, [root](const Tensor& t, const SourceLocation& loc) { return dist::reduce_to_root(t, root, loc); });
  });
  d.def("allgather", [](py::handle x) {
    return collective(x, [](const Tensor& t, const SourceLocation& loc) { return dist::allgather(t, loc); });
  });
  // Gradients as a list, None for a variable without one (kept None).
  d.def("average_gradients", [](py::list gradients, int64_t bucket_bytes, const std::string& op) {
    std::vector<Tensor> grads;
    for (py::handle g : gradients) grads.push_back(g.is_none() ? Tensor() : to_tensor(g));
    std::vector<Tensor> out;
    {
      py::gil_scoped_release release;
      out = dist::average_gradients(grads, {.bucket_bytes = bucket_bytes, .op = reduction(op)});
    }
    py::list result;
    for (Tensor& t : out) result.append(t.defined() ? py::cast(std::move(t)) : py::none());
    return result;
  });
  d.def("broadcast_variables", [](const std::vector<Variable>& variables, int root) {
    py::gil_scoped_release release;
    dist::broadcast_variables(variables, root);
  });
  d.def("stats", [] {
    dist::Stats s = dist::stats();
    py::dict out;
    out["collectives"] = s.collectives;
    out["bytes"] = s.bytes;
    out["wait_seconds"] = s.wait_seconds;
    return out;
  });
}

}  // namespace kiln::python
