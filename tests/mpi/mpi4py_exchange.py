"""A Python MPI program (Debian's mpi4py over its Open MPI): an allreduce, a pickled
object sent from rank 0 to rank 1, a barrier; each rank prints its node name."""
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
assert total == size * (size + 1) // 2, total
t0 = MPI.Wtime()
if rank == 0:
    comm.send({"hello": rank, "payload": list(range(10000))}, dest=1)
elif rank == 1:
    msg = comm.recv(source=0)
    assert msg["hello"] == 0 and len(msg["payload"]) == 10000
comm.Barrier()
print(f"rank {rank} of {size} on {MPI.Get_processor_name()}: ok, {MPI.Wtime() - t0:.6f} s")
