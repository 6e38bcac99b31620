/* pygpu's simulator: the CUDA dialect comes from sim_prelude.h; nothing here. */
