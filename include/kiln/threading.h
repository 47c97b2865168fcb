#pragma once
// How many threads Kiln's kernels use, and how the idle ones wait (TF's
// tf.config.threading, in C++).
//
// Kiln's kernels and oneDNN's share one OpenMP pool (libgomp). By default
// libgomp's idle threads spin for about a third of a millisecond before they
// sleep; on a machine where another process holds a core, that spinning burns
// the time slice the thread they wait for needs, and a training step took
// 3-4x longer where losing half the cores should cost 2x. Kiln asks libgomp
// for a short spin instead (GOMP_SPINCOUNT=1000, docs/design-notes.md, "Threads
// and contention"). libgomp reads its environment once, when it is loaded,
// before `main` runs; so a C++ program opts in with one call at the top of
// main (Kiln's own tools do), and the Python package sets it before it loads
// the engine.
namespace kiln::config {

// The most threads one kernel uses; 0 gives the machine's choice (every core,
// or OMP_NUM_THREADS). Holds for ops started from the calling thread.
void set_intra_op_parallelism_threads(int num_threads);
// What set_intra_op_parallelism_threads was given last on this thread (0 if never).
int get_intra_op_parallelism_threads();

// The GOMP_SPINCOUNT Kiln asks for, and whether this process runs with a wait
// policy of its own: the user's (OMP_WAIT_POLICY or GOMP_SPINCOUNT set) or Kiln's.
inline constexpr const char* kFairSpinCount = "1000";
bool wait_policy_is_set();

// Call first in main(argc, argv): when neither OMP_WAIT_POLICY nor
// GOMP_SPINCOUNT is set, sets GOMP_SPINCOUNT=kFairSpinCount and executes the
// program again (libgomp has read its environment already), with the same
// arguments; otherwise returns at once. If the program cannot be executed
// again it returns and the program runs with libgomp's default.
void adopt_fair_wait_policy(int argc, char** argv);

}  // namespace kiln::config
