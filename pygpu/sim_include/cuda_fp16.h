#error "pygpu's simulator does not provide half precision (cuda_fp16.h): run this kernel on a GPU"
