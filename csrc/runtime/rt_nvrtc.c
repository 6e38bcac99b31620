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
    int (*add_name)(nvrtc_program, const char *);
    int (*lowered_name)(nvrtc_program, const char *, const char **);
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
        SYM(add_name, "nvrtcAddNameExpression");
        SYM(lowered_name, "nvrtcGetLoweredName");
#undef SYM
        nvrtc.lib = lib;
    }
    *major = *minor = 0;
    (void)nvrtc.version(major, minor);
    return 0;
}

int
pg_nvrtc_compile(pg_compile_job *job, char *errbuf, size_t errlen)
{
    nvrtc_program prog = NULL;
    size_t log_size = 0, names_size = 0;
    int rc, result = PG_COMPILE_FAILED;
    job->image = job->log = job->lowered = NULL;
    job->size = 0;
    errbuf[0] = '\0';
    if (nvrtc.lib == NULL) {
        snprintf(errbuf, errlen, "NVRTC is not loaded");
        return PG_COMPILE_NOT_LOADED;
    }
    rc = nvrtc.create(&prog, job->source, job->name, 0, NULL, NULL);
    if (rc != 0) {
        snprintf(errbuf, errlen, "%s", nvrtc.error_string(rc));
        return PG_COMPILE_FAILED;
    }
    for (int i = 0; i < job->nnames; i++) {
        if ((rc = nvrtc.add_name(prog, job->names[i])) != 0) {
            snprintf(errbuf, errlen, "NVRTC refused the name expression '%s' (%s)",
                     job->names[i], nvrtc.error_string(rc));
            goto done;
        }
    }
    rc = nvrtc.compile(prog, job->nopts, job->opts);
    if (nvrtc.log_size(prog, &log_size) == 0 &&
        (job->log = malloc(log_size + 1)) != NULL) {
        job->log[0] = '\0';
        (void)nvrtc.log(prog, job->log);
        job->log[log_size] = '\0';
    }
    if (rc != 0) {
        snprintf(errbuf, errlen, "NVRTC could not compile %s (%s):\n%s", job->name,
                 nvrtc.error_string(rc), job->log != NULL ? job->log : "");
        goto done;
    }
    for (int i = 0; i < job->nnames; i++) {
        const char *lowered = NULL;
        if ((rc = nvrtc.lowered_name(prog, job->names[i], &lowered)) != 0) {
            snprintf(errbuf, errlen,
                     "NVRTC has no kernel for the name expression '%s' (%s)",
                     job->names[i], nvrtc.error_string(rc));
            goto done;
        }
        size_t n = strlen(lowered) + 1;
        char *grown = realloc(job->lowered, names_size + n);
        if (grown == NULL) {
            result = PG_COMPILE_NO_MEMORY;
            goto done;
        }
        memcpy(grown + names_size, lowered, n);
        job->lowered = grown;
        names_size += n;
    }
    if (nvrtc.cubin_size(prog, &job->size) != 0 || job->size == 0) {
        snprintf(errbuf, errlen,
                 "NVRTC made no machine code: pass --gpu-architecture=sm_XX, "
                 "not compute_XX");
        goto done;
    }
    if ((job->image = malloc(job->size)) == NULL) {
        result = PG_COMPILE_NO_MEMORY;
        goto done;
    }
    if ((rc = nvrtc.cubin(prog, job->image)) != 0) {
        snprintf(errbuf, errlen, "NVRTC could not give the cubin of %s (%s)", job->name,
                 nvrtc.error_string(rc));
        goto done;
    }
    result = PG_COMPILE_OK;
done:
    if (result != PG_COMPILE_OK) {
        free(job->image);
        free(job->lowered);
        job->image = job->lowered = NULL;
        job->size = 0;
    }
    (void)nvrtc.destroy(&prog);
    return result;
}
