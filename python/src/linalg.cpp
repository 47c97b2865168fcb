// tf.linalg's factorizations and solves (include/kiln/linalg.h); names and defaults users see are
// python/kiln/_linalg_ops.py's.
#include "bindings.h"

namespace kiln::python {

void bind_linalg(py::module_& m) {
  auto T = [](py::handle h) { return to_tensor(h); };
  m.def("matrix_inverse", [T](py::handle x, bool adjoint) { return matrix_inverse(T(x), adjoint, user_location()); });
  m.def("matrix_determinant", [T](py::handle x) { return matrix_determinant(T(x), user_location()); });
  m.def("log_matrix_determinant", [T](py::handle x) {
    auto [sign, log_abs] = log_matrix_determinant(T(x), user_location());
    return py::make_tuple(sign, log_abs);
  });
  m.def("matrix_solve", [T](py::handle a, py::handle b, bool adjoint) {
    return matrix_solve(T(a), T(b), adjoint, user_location());
  });
  m.def("matrix_triangular_solve", [T](py::handle a, py::handle b, bool lower, bool adjoint) {
    return matrix_triangular_solve(T(a), T(b), lower, adjoint, user_location());
  });
  m.def("matrix_exponential", [T](py::handle x) { return matrix_exponential(T(x), user_location()); });
  m.def("lu", [T](py::handle x, py::handle index_dtype) {
    auto [packed, perm] = lu(T(x), dtype_from_python(index_dtype), user_location());
    return py::make_tuple(packed, perm);
  });
  m.def("cholesky", [T](py::handle x) { return cholesky(T(x), user_location()); });
  m.def("qr", [T](py::handle x, bool full_matrices) {
    auto [q, r] = qr(T(x), full_matrices, user_location());
    return py::make_tuple(q, r);
  });
  m.def("svd", [T](py::handle x, bool full_matrices, bool compute_uv) {
    auto [s, u, v] = svd(T(x), full_matrices, compute_uv, user_location());
    return py::make_tuple(s, u, v);
  });
  m.def("self_adjoint_eig", [T](py::handle x, bool compute_v) {
    auto [e, v] = self_adjoint_eig(T(x), compute_v, user_location());
    return py::make_tuple(e, v);
  });
  m.def("eig", [T](py::handle x, bool compute_v) {
    auto [e, v] = eig(T(x), compute_v, user_location());
    return py::make_tuple(e, v);
  });
  m.def("matrix_solve_ls", [T](py::handle a, py::handle b, py::handle l2, bool fast) {
    return matrix_solve_ls(T(a), T(b), T(l2), fast, user_location());
  });
}

}  // namespace kiln::python
