/* NVRTC, the CUDA C compiler of the CUDA toolkit, loaded with dlopen the
 * first time a kernel is compiled (never at import), as the runtime table's
 * compiler_load and compile. Plain C: no Python, no CUDA headers; the Python
 * face (_nvrtc_load, _nvrtc_compile, CompileError) is in rawkernel.c. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

typedef struct _nvrtcProgram *nvrtc_program;
static struct {
    void *lib;
    int (*version)(int *, int *);
    int (*create)(nvrtc_program *, const char *, const char *, int, const char *const *,
                  const char *const *);
    int (*destroy)(nvrtc_program *);
    int (*compile)(nvrtc_program, int, const char *const *);
    int (*log_size)(nvrtc_program, size_t *);
    int (*log)(nvrtc_program, char *);
    int (*cubin_size)(nvrtc_program, size_t *);
    int (*cubin)(nvrtc_program, char *);
    const char *(*error_string)(int);
} nvrtc;

int
pg_nvrtc_load(const char *path, int *major, int *minor, char *errbuf, size_t errlen)
{
    void *lib;
    if (nvrtc.lib == NULL) {
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            snprintf(errbuf, errlen, "cannot load NVRTC from %s: %s", path, dlerror());
            return -1;
        }
#define SYM(field, name)                                                               \
    if ((*(void **)&nvrtc.field = dlsym(lib, name)) == NULL) {                         \
        dlclose(lib);                                                                  \
        memset(&nvrtc, 0, sizeof(nvrtc));                                              \
        snprintf(errbuf, errlen, "%s has no %s", path, name);                          \
        return -1;                                                                     \
    }
        SYM(version, "nvrtcVersion");
        SYM(create, "nvrtcCreateProgram");
        SYM(destroy, "nvrtcDestroyProgram");
        SYM(compile, "nvrtcCompileProgram");
        SYM(log_size, "nvrtcGetProgramLogSize");
        SYM(log, "nvrtcGetProgramLog");
        SYM(cubin_size, "nvrtcGetCUBINSize");
        SYM(cubin, "nvrtcGetCUBIN");
        SYM(error_string, "nvrtcGetErrorString");
#undef SYM
        nvrtc.lib = lib;
    }
    *major = *minor = 0;
    (void)nvrtc.version(major, minor);
    return 0;
}

int
pg_nvrtc_compile(const char *source, const char *name, int nopts,
                 const char *const *opts, char **image, size_t *size, char **log,
                 char *errbuf, size_t errlen)
{
    nvrtc_program prog = NULL;
    size_t log_size = 0;
    int rc, result = PG_COMPILE_FAILED;
    *image = NULL;
    *size = 0;
    *log = NULL;
    errbuf[0] = '\0';
    if (nvrtc.lib == NULL) {
        snprintf(errbuf, errlen, "NVRTC is not loaded");
        return PG_COMPILE_NOT_LOADED;
    }
    rc = nvrtc.create(&prog, source, name, 0, NULL, NULL);
    if (rc != 0) {
        snprintf(errbuf, errlen, "%s", nvrtc.error_string(rc));
        return PG_COMPILE_FAILED;
    }
    rc = nvrtc.compile(prog, nopts, opts);
    if (nvrtc.log_size(prog, &log_size) == 0 && (*log = malloc(log_size + 1)) != NULL) {
        (*log)[0] = '\0';
        (void)nvrtc.log(prog, *log);
        (*log)[log_size] = '\0';
    }
    if (rc != 0) {
        snprintf(errbuf, errlen, "NVRTC could not compile %s (%s):\n%s", name,
                 nvrtc.error_string(rc), *log != NULL ? *log : "");
        goto done;
    }
    if (nvrtc.cubin_size(prog, size) != 0 || *size == 0) {
        snprintf(errbuf, errlen,
                 "NVRTC made no machine code: pass --gpu-architecture=sm_XX, "
                 "not compute_XX");
        goto done;
    }
    if ((*image = malloc(*size)) == NULL) {
        result = PG_COMPILE_NO_MEMORY;
        goto done;
    }
    if ((rc = nvrtc.cubin(prog, *image)) != 0) {
        snprintf(errbuf, errlen, "NVRTC could not give the cubin of %s (%s)", name,
                 nvrtc.error_string(rc));
        goto done;
    }
    result = PG_COMPILE_OK;
done:
    if (result != PG_COMPILE_OK) {
        free(*image);
        *image = NULL;
        *size = 0;
    }
    (void)nvrtc.destroy(&prog);
    return result;
}
