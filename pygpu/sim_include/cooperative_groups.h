#error "pygpu's simulator does not provide cooperative groups (cooperative_groups.h): use __syncthreads() and the __shfl_*_sync / __ballot_sync intrinsics, or run the kernel on a GPU"
