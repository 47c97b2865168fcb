// The world: init/finalize and who this process is.
#include "distributed/comm.h"
#include "kiln/distributed.h"

namespace kiln::distributed {

void init(const InitOptions& options) { Comm::get().init(options); }
void finalize() { Comm::get().finalize(); }
bool initialized() { return Comm::get().initialized(); }
bool built_with_mpi() { return transport::built(); }

int rank() { return Comm::get().world().rank; }
int size() { return Comm::get().world().size; }
int local_rank() { return Comm::get().world().local_rank; }
int local_size() { return Comm::get().world().local_size; }

Stats stats() { return Comm::get().stats(); }

void barrier() {
  Comm& comm = Comm::get();
  Work* w = comm.acquire();
  w->kind = Kind::Barrier;
  comm.submit(w);
  comm.wait_and_release(w);
}

}  // namespace kiln::distributed
