#pragma once
// The LAPACK and BLAS routines the linalg ops call (Debian's liblapack3/libblas3, or the OpenBLAS
// that the alternatives system puts behind them), through their Fortran symbols: one C++ name per
// routine, overloaded on float and double. Matrices are column-major, as LAPACK reads them; the
// kernels copy each row-major matrix into a column-major buffer of their own (linalg_kernels.h).
// The trailing size_t arguments are gfortran's hidden lengths of the CHARACTER arguments.
//
// The library is loaded on the first linalg op (lapack.cpp), not linked: OpenBLAS, often the
// system's libblas.so.3, starts a pool of threads when it loads whose idle members spin, which
// took CPU from every Kiln process's own threads (docs/design-notes.md, "TensorFlow's Python surface").
#include <complex>
#include <cstddef>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, std::size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, std::size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void spotrs_(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda, float* b,
             const int* ldb, int* info, std::size_t);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, double* b,
             const int* ldb, int* info, std::size_t);
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const float* alpha, const float* a, const int* lda, float* b, const int* ldb, std::size_t, std::size_t,
            std::size_t, std::size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, std::size_t,
            std::size_t, std::size_t, std::size_t);
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc, std::size_t, std::size_t);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t, std::size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
             std::size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             std::size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
void sgelsd_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb,
             float* s, const float* rcond, int* rank, float* work, const int* lwork, int* iwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);

// The complex routines: std::complex<float> / <double> are laid out as Fortran's COMPLEX / COMPLEX*16.
void cgetrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv, int* info);
void cgetri_(const int* n, std::complex<float>* a, const int* lda, const int* ipiv, std::complex<float>* work,
             const int* lwork, int* info);
void zgetri_(const int* n, std::complex<double>* a, const int* lda, const int* ipiv, std::complex<double>* work,
             const int* lwork, int* info);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<float>* a, const int* lda,
             const int* ipiv, std::complex<float>* b, const int* ldb, int* info, std::size_t);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<double>* a, const int* lda,
             const int* ipiv, std::complex<double>* b, const int* ldb, int* info, std::size_t);
void ctrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const std::complex<float>* alpha, const std::complex<float>* a, const int* lda, std::complex<float>* b,
            const int* ldb, std::size_t, std::size_t, std::size_t, std::size_t);
void ztrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const std::complex<double>* alpha, const std::complex<double>* a, const int* lda,
            std::complex<double>* b, const int* ldb, std::size_t, std::size_t, std::size_t, std::size_t);
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info, std::size_t);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info, std::size_t);
void cgeqrf_(const int* m, const int* n, std::complex<float>* a, const int* lda, std::complex<float>* tau,
             std::complex<float>* work, const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, std::complex<double>* tau,
             std::complex<double>* work, const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, std::complex<float>* a, const int* lda,
             const std::complex<float>* tau, std::complex<float>* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, std::complex<double>* a, const int* lda,
             const std::complex<double>* tau, std::complex<double>* work, const int* lwork, int* info);
void cgesdd_(const char* jobz, const int* m, const int* n, std::complex<float>* a, const int* lda, float* s,
             std::complex<float>* u, const int* ldu, std::complex<float>* vt, const int* ldvt,
             std::complex<float>* work, const int* lwork, float* rwork, int* iwork, int* info, std::size_t);
void zgesdd_(const char* jobz, const int* m, const int* n, std::complex<double>* a, const int* lda, double* s,
             std::complex<double>* u, const int* ldu, std::complex<double>* vt, const int* ldvt,
             std::complex<double>* work, const int* lwork, double* rwork, int* iwork, int* info, std::size_t);
void cheevd_(const char* jobz, const char* uplo, const int* n, std::complex<float>* a, const int* lda, float* w,
             std::complex<float>* work, const int* lwork, float* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, std::size_t, std::size_t);
void zheevd_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a, const int* lda, double* w,
             std::complex<double>* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, std::size_t, std::size_t);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<float>* a, const int* lda,
            std::complex<float>* w, std::complex<float>* vl, const int* ldvl, std::complex<float>* vr,
            const int* ldvr, std::complex<float>* work, const int* lwork, float* rwork, int* info, std::size_t,
            std::size_t);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a, const int* lda,
            std::complex<double>* w, std::complex<double>* vl, const int* ldvl, std::complex<double>* vr,
            const int* ldvr, std::complex<double>* work, const int* lwork, double* rwork, int* info, std::size_t,
            std::size_t);
}

namespace kiln::ops::lapack {

// Every routine the ops call (one X(name) each): the struct below and the loader walk it.
#define KILN_LAPACK_ROUTINES(X) \
  X(sgetrf_) \
  X(dgetrf_) \
  X(sgetri_) \
  X(dgetri_) \
  X(sgetrs_) \
  X(dgetrs_) \
  X(spotrf_) \
  X(dpotrf_) \
  X(spotrs_) \
  X(dpotrs_) \
  X(strsm_) \
  X(dtrsm_) \
  X(sgemm_) \
  X(dgemm_) \
  X(sgeqrf_) \
  X(dgeqrf_) \
  X(sorgqr_) \
  X(dorgqr_) \
  X(sgesdd_) \
  X(dgesdd_) \
  X(ssyevd_) \
  X(dsyevd_) \
  X(sgelsd_) \
  X(dgelsd_) \
  X(cgetrf_) \
  X(zgetrf_) \
  X(cgetri_) \
  X(zgetri_) \
  X(cgetrs_) \
  X(zgetrs_) \
  X(cpotrf_) \
  X(zpotrf_) \
  X(ctrsm_) \
  X(ztrsm_) \
  X(cgeqrf_) \
  X(zgeqrf_) \
  X(cungqr_) \
  X(zungqr_) \
  X(cgesdd_) \
  X(zgesdd_) \
  X(cheevd_) \
  X(zheevd_) \
  X(cgeev_) \
  X(zgeev_)

// The routines, resolved once; Unimplemented where no LAPACK can be loaded.
struct Functions {
#define KILN_LAPACK_POINTER(name) decltype(&::name) name = nullptr;
  KILN_LAPACK_ROUTINES(KILN_LAPACK_POINTER)
#undef KILN_LAPACK_POINTER
};
const Functions& functions();


inline void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { functions().sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) { functions().dgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getri(int n, float* a, int lda, const int* ipiv, float* work, int lwork, int* info) {
  functions().sgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void getri(int n, double* a, int lda, const int* ipiv, double* work, int lwork, int* info) {
  functions().dgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info) {
  functions().sgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void getrs(char trans, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb,
                  int* info) {
  functions().dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void potrf(char uplo, int n, float* a, int lda, int* info) { functions().spotrf_(&uplo, &n, a, &lda, info, 1); }
inline void potrf(char uplo, int n, double* a, int lda, int* info) { functions().dpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void potrs(char uplo, int n, int nrhs, const float* a, int lda, float* b, int ldb, int* info) {
  functions().spotrs_(&uplo, &n, &nrhs, a, &lda, b, &ldb, info, 1);
}
inline void potrs(char uplo, int n, int nrhs, const double* a, int lda, double* b, int ldb, int* info) {
  functions().dpotrs_(&uplo, &n, &nrhs, a, &lda, b, &ldb, info, 1);
}
inline void trsm(char side, char uplo, char transa, char diag, int m, int n, float alpha, const float* a, int lda,
                 float* b, int ldb) {
  functions().strsm_(&side, &uplo, &transa, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
inline void trsm(char side, char uplo, char transa, char diag, int m, int n, double alpha, const double* a, int lda,
                 double* b, int ldb) {
  functions().dtrsm_(&side, &uplo, &transa, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
inline void gemm(char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                 float beta, float* c, int ldc) {
  functions().sgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}
inline void gemm(char ta, char tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
                 int ldb, double beta, double* c, int ldc) {
  functions().dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}
inline void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  functions().sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  functions().dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) {
  functions().sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) {
  functions().dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt,
                  float* work, int lwork, int* iwork, int* info) {
  functions().sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt,
                  double* work, int lwork, int* iwork, int* info) {
  functions().dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork,
                  int liwork, int* info) {
  functions().ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork, int* iwork,
                  int liwork, int* info) {
  functions().dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void gelsd(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* s, float rcond, int* rank,
                  float* work, int lwork, int* iwork, int* info) {
  functions().sgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}
inline void gelsd(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* s, double rcond, int* rank,
                  double* work, int lwork, int* iwork, int* info) {
  functions().dgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}

// ---- complex: the same names (orgqr is ungqr), and the routines with real work arrays ----
using complex64_t = std::complex<float>;
using complex128_t = std::complex<double>;
inline void getrf(int m, int n, complex64_t* a, int lda, int* ipiv, int* info) { functions().cgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, complex128_t* a, int lda, int* ipiv, int* info) { functions().zgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getri(int n, complex64_t* a, int lda, const int* ipiv, complex64_t* work, int lwork, int* info) {
  functions().cgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void getri(int n, complex128_t* a, int lda, const int* ipiv, complex128_t* work, int lwork, int* info) {
  functions().zgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void getrs(char trans, int n, int nrhs, const complex64_t* a, int lda, const int* ipiv, complex64_t* b, int ldb,
                  int* info) {
  functions().cgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void getrs(char trans, int n, int nrhs, const complex128_t* a, int lda, const int* ipiv, complex128_t* b,
                  int ldb, int* info) {
  functions().zgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void potrf(char uplo, int n, complex64_t* a, int lda, int* info) { functions().cpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void potrf(char uplo, int n, complex128_t* a, int lda, int* info) { functions().zpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void trsm(char side, char uplo, char transa, char diag, int m, int n, complex64_t alpha, const complex64_t* a,
                 int lda, complex64_t* b, int ldb) {
  functions().ctrsm_(&side, &uplo, &transa, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
inline void trsm(char side, char uplo, char transa, char diag, int m, int n, complex128_t alpha, const complex128_t* a,
                 int lda, complex128_t* b, int ldb) {
  functions().ztrsm_(&side, &uplo, &transa, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
inline void geqrf(int m, int n, complex64_t* a, int lda, complex64_t* tau, complex64_t* work, int lwork, int* info) {
  functions().cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void geqrf(int m, int n, complex128_t* a, int lda, complex128_t* tau, complex128_t* work, int lwork, int* info) {
  functions().zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, complex64_t* a, int lda, const complex64_t* tau, complex64_t* work, int lwork,
                  int* info) {
  functions().cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, complex128_t* a, int lda, const complex128_t* tau, complex128_t* work,
                  int lwork, int* info) {
  functions().zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void gesdd(char jobz, int m, int n, complex64_t* a, int lda, float* s, complex64_t* u, int ldu,
                  complex64_t* vt, int ldvt, complex64_t* work, int lwork, float* rwork, int* iwork, int* info) {
  functions().cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, complex128_t* a, int lda, double* s, complex128_t* u, int ldu,
                  complex128_t* vt, int ldvt, complex128_t* work, int lwork, double* rwork, int* iwork, int* info) {
  functions().zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
inline void heevd(char jobz, char uplo, int n, complex64_t* a, int lda, float* w, complex64_t* work, int lwork,
                  float* rwork, int lrwork, int* iwork, int liwork, int* info) {
  functions().cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
inline void heevd(char jobz, char uplo, int n, complex128_t* a, int lda, double* w, complex128_t* work, int lwork,
                  double* rwork, int lrwork, int* iwork, int liwork, int* info) {
  functions().zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
// Right eigenvectors only (jobvl 'N'); rwork holds 2n reals.
inline void geev(char jobvr, int n, complex64_t* a, int lda, complex64_t* w, complex64_t* vr, int ldvr,
                 complex64_t* work, int lwork, float* rwork, int* info) {
  const char no = 'N';
  int one = 1;
  functions().cgeev_(&no, &jobvr, &n, a, &lda, w, nullptr, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}
inline void geev(char jobvr, int n, complex128_t* a, int lda, complex128_t* w, complex128_t* vr, int ldvr,
                 complex128_t* work, int lwork, double* rwork, int* info) {
  const char no = 'N';
  int one = 1;
  functions().zgeev_(&no, &jobvr, &n, a, &lda, w, nullptr, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}

}  // namespace kiln::ops::lapack
