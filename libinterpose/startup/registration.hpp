// The rank's registration with the server, and its end.
#pragma once

namespace s4bxi::interpose {

// Tells the server this rank has finished with `status` (exit, _exit). Idempotent.
void finish_rank(int status);

}  // namespace s4bxi::interpose
