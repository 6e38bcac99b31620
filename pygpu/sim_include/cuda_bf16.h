#error "pygpu's simulator does not provide bfloat16 (cuda_bf16.h): run this kernel on a GPU"
