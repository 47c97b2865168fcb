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
    f.sgetrf_ = reinterpret_cast<decltype(f.sgetrf_)>(routine(lapack, blas, "sgetrf_"));
    f.dgetrf_ = reinterpret_cast<decltype(f.dgetrf_)>(routine(lapack, blas, "dgetrf_"));
    f.sgetri_ = reinterpret_cast<decltype(f.sgetri_)>(routine(lapack, blas, "sgetri_"));
    f.dgetri_ = reinterpret_cast<decltype(f.dgetri_)>(routine(lapack, blas, "dgetri_"));
    f.sgetrs_ = reinterpret_cast<decltype(f.sgetrs_)>(routine(lapack, blas, "sgetrs_"));
    f.dgetrs_ = reinterpret_cast<decltype(f.dgetrs_)>(routine(lapack, blas, "dgetrs_"));
    f.spotrf_ = reinterpret_cast<decltype(f.spotrf_)>(routine(lapack, blas, "spotrf_"));
    f.dpotrf_ = reinterpret_cast<decltype(f.dpotrf_)>(routine(lapack, blas, "dpotrf_"));
    f.spotrs_ = reinterpret_cast<decltype(f.spotrs_)>(routine(lapack, blas, "spotrs_"));
    f.dpotrs_ = reinterpret_cast<decltype(f.dpotrs_)>(routine(lapack, blas, "dpotrs_"));
    f.strsm_ = reinterpret_cast<decltype(f.strsm_)>(routine(lapack, blas, "strsm_"));
    f.dtrsm_ = reinterpret_cast<decltype(f.dtrsm_)>(routine(lapack, blas, "dtrsm_"));
    f.sgemm_ = reinterpret_cast<decltype(f.sgemm_)>(routine(lapack, blas, "sgemm_"));
    f.dgemm_ = reinterpret_cast<decltype(f.dgemm_)>(routine(lapack, blas, "dgemm_"));
    f.sgeqrf_ = reinterpret_cast<decltype(f.sgeqrf_)>(routine(lapack, blas, "sgeqrf_"));
    f.dgeqrf_ = reinterpret_cast<decltype(f.dgeqrf_)>(routine(lapack, blas, "dgeqrf_"));
    f.sorgqr_ = reinterpret_cast<decltype(f.sorgqr_)>(routine(lapack, blas, "sorgqr_"));
    f.dorgqr_ = reinterpret_cast<decltype(f.dorgqr_)>(routine(lapack, blas, "dorgqr_"));
    f.sgesdd_ = reinterpret_cast<decltype(f.sgesdd_)>(routine(lapack, blas, "sgesdd_"));
    f.dgesdd_ = reinterpret_cast<decltype(f.dgesdd_)>(routine(lapack, blas, "dgesdd_"));
    f.ssyevd_ = reinterpret_cast<decltype(f.ssyevd_)>(routine(lapack, blas, "ssyevd_"));
    f.dsyevd_ = reinterpret_cast<decltype(f.dsyevd_)>(routine(lapack, blas, "dsyevd_"));
    f.sgelsd_ = reinterpret_cast<decltype(f.sgelsd_)>(routine(lapack, blas, "sgelsd_"));
    f.dgelsd_ = reinterpret_cast<decltype(f.dgelsd_)>(routine(lapack, blas, "dgelsd_"));
    return f;
  }();
  return loaded;
}

}  // namespace kiln::ops::lapack
