// Loads LAPACK and BLAS on the first linalg op (lapack.h says why not at start-up).
#include "ops/lapack.h"

#include <dlfcn.h>

#include <string>

#include "kiln/error.h"

namespace kiln::ops::lapack {

namespace {

void* open_library(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }

// A routine from LAPACK, or from BLAS for the BLAS ones (liblapack.so.3 needs libblas.so.3, so
// most builds find them all through the first handle).
void* routine(void* lapack, void* blas, const char* name) {
  void* f = dlsym(lapack, name);
  if (!f && blas) f = dlsym(blas, name);
  if (!f) throw Unimplemented(std::string("the linalg ops need LAPACK: ") + name + " is missing from liblapack.so.3");
  return f;
}

}  // namespace

const Functions& functions() {
  static const Functions loaded = [] {
    void* lapack = open_library("liblapack.so.3");
    if (!lapack)
      throw Unimplemented(std::string("the linalg ops need LAPACK (Debian's liblapack3, or OpenBLAS): ") + dlerror());
    void* blas = open_library("libblas.so.3");
    // OpenBLAS behind the alternatives: its calls run on the calling thread, so that its pool
    // stays asleep beside Kiln's OpenMP threads (the ops loop over a batch themselves).
    using SetThreads = void (*)(int);
    for (void* h : {lapack, blas})
      if (auto set = h ? reinterpret_cast<SetThreads>(dlsym(h, "openblas_set_num_threads")) : nullptr) set(1);
    Functions f;
#define KILN_LAPACK_LOAD(name) f.name = reinterpret_cast<decltype(f.name)>(routine(lapack, blas, #name));
    KILN_LAPACK_ROUTINES(KILN_LAPACK_LOAD)
#undef KILN_LAPACK_LOAD
    return f;
  }();
  return loaded;
}

}  // namespace kiln::ops::lapack
