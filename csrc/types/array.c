/* pygpu.DeviceArray: the type (methods, attributes, slots) and the module
 * functions that make arrays (empty, zeros, full, to_device, asarray, ...).
 * Geometry and views are core.c's; copies are copy.c's; memory is buffer.c's;
 * the operators are ops.c's. */
#include <string.h>

#include "pygpu.h"

#define ARR(o) ((pg_array *)(o))

static PyObject *
tuple_from_array(PyObject *const *items, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
    }
    return t;
}

#define STATE_OR_NULL(self) pg_state_of_type(Py_TYPE(self))

/* ---- methods -------------------------------------------------------------- */

static PyObject *
copy_to_host_impl(pg_state *st, pg_array *a, PyObject *out_obj, const pg_stream_arg *s)
{
    PyArrayObject *out;
    if (pg_check_stream_device(&s->ref, pg_array_device(a), s->given) < 0) {
        return NULL;
    }
    if (out_obj == NULL) {
        return pg_array_to_new_host(st, a, &s->ref);
    }
    if (!PyArray_Check(out_obj)) {
        return PyErr_Format(PyExc_TypeError, "out must be a numpy.ndarray, not %.100s",
                            Py_TYPE(out_obj)->tp_name);
    }
    out = (PyArrayObject *)out_obj;
    if (pg_check_same_shape("copy_to_host", NULL, PyArray_NDIM(out), PyArray_DIMS(out),
                            NULL, a->nd, a->shape) < 0 ||
        pg_check_same_dtype("copy_to_host", PyArray_DESCR(out), a->descr) < 0 ||
        PyArray_FailUnlessWriteable(out, "out") < 0 ||
        pg_array_to_host(st, a, out, &s->ref, !s->given) < 0) {
        return NULL;
    }
    return Py_NewRef(out_obj);
}

static const pg_signature copy_to_host_sig = {
    "copy_to_host",
    0,
    2,
    {{"out", pg_conv_object_or_none}, {"stream", pg_conv_stream}}};

static PyObject *
Array_copy_to_host(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *out = NULL;
    pg_stream_arg s;
    if (st == NULL ||
        pg_parse(st, &copy_to_host_sig, args, nargs, kwnames, &out, &s) < 0) {
        return NULL;
    }
    return copy_to_host_impl(st, ARR(self), out, &s);
}

static PyObject *
Array_copy_to_device(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames)
{
    static const pg_signature sig = {
        "copy_to_device", 1, 2, {{"ary", pg_conv_object}, {"stream", pg_conv_stream}}};
    pg_state *st = STATE_OR_NULL(self);
    PyObject *ary = NULL;
    pg_stream_arg s;
    if (st == NULL || pg_parse(st, &sig, args, nargs, kwnames, &ary, &s) < 0 ||
        pg_check_stream_device(&s.ref, pg_array_device(ARR(self)), s.given) < 0 ||
        pg_array_assign(st, ARR(self), ary, "copy_to_device", &s.ref, !s.given) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
Array_copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {
        "copy", 0, 2, {{"order", pg_conv_order}, {"stream", pg_conv_stream}}};
    pg_state *st = STATE_OR_NULL(self);
    pg_stream_arg s;
    int fortran = 0;
    if (st == NULL || pg_parse(st, &sig, args, nargs, kwnames, &fortran, &s) < 0) {
        return NULL;
    }
    return pg_array_copy(st, ARR(self), fortran, &s.ref);
}

/* A view with the new shape, or one of a dense copy where no view can have it. */
static PyObject *
reshape(pg_state *st, pg_array *a, PyObject *shape, int fortran)
{
    int needs_copy = 0;
    PyObject *res = pg_array_reshape(st, a, shape, fortran, &needs_copy), *dense;
    if (res != NULL || !needs_copy) {
        return res;
    }
    dense = pg_array_copy(st, a, fortran, NULL);
    if (dense != NULL) {
        res = pg_array_reshape(st, ARR(dense), shape, fortran, &needs_copy);
        Py_DECREF(dense);
    }
    return res;
}

static PyObject *
Array_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *shape = NULL, *order = NULL, *res = NULL;
    int fortran = 0;
    if (st == NULL) {
        return NULL;
    }
    if (kwnames != NULL) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            if (PyUnicode_CompareWithASCIIString(key, "order") == 0) {
                order = args[nargs + k];
            }
            else if (PyUnicode_CompareWithASCIIString(key, "shape") == 0 &&
                     nargs == 0) {
                shape = Py_NewRef(args[nargs + k]);
            }
            else {
                return PyErr_Format(PyExc_TypeError,
                                    "reshape() got an unexpected keyword "
                                    "argument %R",
                                    key);
            }
        }
    }
    if (pg_conv_order(st, order, &fortran) < 0) {
        Py_XDECREF(shape);
        return NULL;
    }
    if (shape == NULL) {
        if (nargs == 0) {
            PyErr_SetString(PyExc_TypeError, "reshape() needs a shape");
            return NULL;
        }
        shape = nargs == 1 ? Py_NewRef(args[0]) : tuple_from_array(args, nargs);
        if (shape == NULL) {
            return NULL;
        }
    }
    if (!PyTuple_Check(shape) && !PyList_Check(shape) &&
        (PyBool_Check(shape) || !PyIndex_Check(shape))) {
        PyErr_Format(PyExc_TypeError,
                     "reshape() takes a shape: an int or a tuple of ints, "
                     "not %.100s",
                     Py_TYPE(shape)->tp_name);
    }
    else {
        res = reshape(st, ARR(self), shape, fortran);
    }
    Py_DECREF(shape);
    return res;
}

static PyObject *
Array_ravel(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"ravel", 0, 1, {{"order", pg_conv_order}}};
    pg_state *st = STATE_OR_NULL(self);
    PyObject *shape = NULL, *res = NULL;
    int fortran = 0;
    if (st == NULL || pg_parse(st, &sig, args, nargs, kwnames, &fortran) < 0) {
        return NULL;
    }
    shape = PyLong_FromLong(-1);
    if (shape != NULL) {
        res = reshape(st, ARR(self), shape, fortran);
        Py_DECREF(shape);
    }
    return res;
}

static PyObject *
Array_transpose(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *axes = NULL, *res = NULL;
    if (st == NULL) {
        return NULL;
    }
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_SetString(PyExc_TypeError, "transpose() takes no keyword arguments");
        return NULL;
    }
    if (nargs == 1 && args[0] != Py_None) {
        axes = Py_NewRef(args[0]);
    }
    else if (nargs > 1) {
        axes = tuple_from_array(args, nargs);
        if (axes == NULL) {
            return NULL;
        }
    }
    res = pg_array_transpose(st, ARR(self), axes);
    Py_XDECREF(axes);
    return res;
}

/* The one element of a size-1 array, as a Python scalar. */
static PyObject *
Array_item(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_state *st = STATE_OR_NULL(self);
    pg_array *a = ARR(self);
    PyArrayObject *host = NULL;
    PyObject *res = NULL;
    if (st == NULL) {
        return NULL;
    }
    if (pg_array_size(a) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "can only convert an array of size 1 to a Python scalar; "
                     "this one has size %zd",
                     (Py_ssize_t)pg_array_size(a));
        return NULL;
    }
    Py_INCREF(a->descr);
    host = (PyArrayObject *)PyArray_Empty(a->nd, a->shape, a->descr, 0);
    if (host == NULL) {
        return NULL;
    }
    pg_stream_ref cur;
    (void)pg_resolve_stream(st, NULL, &cur);
    if (pg_array_to_host(st, a, host, &cur, 1) == 0) {
        res = PyArray_GETITEM(host, PyArray_DATA(host));
    }
    Py_DECREF(host);
    return res;
}

static PyObject *
Array_array(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(args),
            PyObject *Py_UNUSED(kwargs))
{
    PyErr_SetString(PyExc_TypeError,
                    "pygpu.DeviceArray does not convert to a NumPy array "
                    "implicitly, since that copies from the device. Copy it "
                    "explicitly with a.copy_to_host() or pygpu.asnumpy(a).");
    return NULL;
}

/* NEP 18: a NumPy function given a DeviceArray runs NumPy's own
 * implementation, which works where it only calls the array's methods
 * (np.transpose, np.shape, np.ndim); where that fails (np.sum, np.tensordot,
 * what dask.array calls on its chunks), and for a function with no Python
 * implementation (np.array(..., like=d)), the TypeError names the function. */
/* pygpu._ops.methods, imported at first use and kept in the module state:
 * a borrowed reference, or NULL */
static PyObject *
import_methods(PyObject *self)
{
    pg_state *st = STATE_OR_NULL(self);
    if (st == NULL) {
        return NULL;
    }
    if (st->py_methods == NULL) {
        st->py_methods = PyImport_ImportModule("pygpu._ops.methods");
    }
    return st->py_methods;
}

static PyObject *
Array_array_function(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *impl, *res, *module = NULL, *name = NULL, *type, *cause, *tb;
    if (nargs != 4 || !PyTuple_Check(args[2]) || !PyDict_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "__array_function__(func, types, args, kwargs)");
        return NULL;
    }
    /* pygpu's own implementation first (pygpu/_ops/methods.py's ARRAY_FUNCTIONS) */
    {
        PyObject *mod = import_methods(self), *fn, *r;
        if (mod == NULL) {
            return NULL;
        }
        fn = PyObject_GetAttrString(mod, "array_function");
        r = fn == NULL ? NULL
                       : PyObject_CallFunctionObjArgs(fn, args[0], args[1], args[2],
                                                      args[3], NULL);
        Py_XDECREF(fn);
        if (r != Py_NotImplemented) {
            return r;
        }
        Py_DECREF(r);
    }
    impl = PyObject_GetAttrString(args[0], "_implementation");
    if (impl == NULL) {
        PyErr_Clear();
        res = NULL;
        PyErr_SetString(PyExc_TypeError, "no implementation for DeviceArray");
    }
    else {
        res = PyObject_Call(impl, args[2], args[3]);
        Py_DECREF(impl);
    }
    if (res != NULL || !(PyErr_ExceptionMatches(PyExc_TypeError) ||
                         PyErr_ExceptionMatches(PyExc_AttributeError) ||
                         PyErr_ExceptionMatches(PyExc_IndexError))) {
        return res;
    }
    PyErr_Fetch(&type, &cause, &tb);
    PyErr_NormalizeException(&type, &cause, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    module = PyObject_GetAttrString(args[0], "__module__");
    PyErr_Clear();
    name = PyObject_GetAttrString(args[0], "__qualname__");
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%S.%S is a NumPy function that pygpu.DeviceArray does not support "
                 "(%S): NumPy computes on host arrays. Copy to the host first "
                 "(pygpu.asnumpy(a); in dask.array, x.map_blocks(pygpu.asnumpy)), or "
                 "use pygpu's own operations and kernels",
                 module != NULL ? module : Py_None, name != NULL ? name : Py_None,
                 cause != NULL ? cause : Py_None);
    if (cause != NULL) {
        PyObject *etype, *exc, *etb;
        PyErr_Fetch(&etype, &exc, &etb);
        PyErr_NormalizeException(&etype, &exc, &etb);
        PyException_SetCause(exc, cause); /* steals cause */
        PyErr_Restore(etype, exc, etb);
    }
    Py_XDECREF(module);
    Py_XDECREF(name);
    return NULL;
}

/* ---- methods written in Python ----------------------------------------------- */

/* The one list of DeviceArray's methods that pygpu/_ops/methods.py defines:
 * the reductions, and what NumPy's functions (np.sum(d), np.mean(d), np.round(d))
 * call on an array that is not an ndarray. */
/* clang-format off */
#define PG_PY_METHODS(X)                                                               \
    X(sum) X(prod) X(max) X(min) X(mean) X(var) X(std) X(argmax) X(argmin) X(any)      \
    X(all) X(cumsum) X(cumprod) X(round) X(clip) X(conj) X(conjugate) X(dot) X(fill)   \
    X(squeeze) X(tolist)
/* clang-format on */

/* pygpu._ops.methods.<name>(self, *args, **kwargs) */
static PyObject *
py_method(PyObject *self, const char *name, PyObject *const *args, Py_ssize_t nargs,
          PyObject *kwnames)
{
    PyObject *mod, *fn = NULL, *res = NULL, *small[16], **stack = small;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    pg_state *st;
    if (nargs + nkw <= 1 && (st = STATE_OR_NULL(self)) != NULL) {
        /* d.sum(), d.max(axis=0), d.sum(1), ...: a plan of
         * pygpu._ops.reduction first (an int axis, the call's one argument) */
        PyObject *axis = Py_None;
        if (nargs + nkw == 1) {
            axis = PyLong_CheckExact(args[0]) &&
                           (nkw == 0 || PyUnicode_CompareWithASCIIString(
                                            PyTuple_GET_ITEM(kwnames, 0), "axis") == 0)
                       ? args[0]
                       : NULL;
        }
        int done = axis != NULL ? pg_replay_reduction(st, name, self, axis, &res) : 0;
        if (done != 0) {
            return res;
        }
    }
    mod = import_methods(self);
    if (mod == NULL || (fn = PyObject_GetAttrString(mod, name)) == NULL) {
        return NULL;
    }
    if (nargs + nkw + 1 > (Py_ssize_t)(sizeof(small) / sizeof(small[0])) &&
        (stack = PyMem_Malloc((size_t)(nargs + nkw + 1) * sizeof(PyObject *))) ==
            NULL) {
        Py_DECREF(fn);
        return PyErr_NoMemory();
    }
    stack[0] = self;
    for (Py_ssize_t i = 0; i < nargs + nkw; i++) {
        stack[i + 1] = args[i];
    }
    res = PyObject_Vectorcall(fn, stack, (size_t)(nargs + 1), kwnames);
    if (stack != small) {
        PyMem_Free(stack);
    }
    Py_DECREF(fn);
    return res;
}

#define PG_PY_METHOD_FN(name)                                                          \
    static PyObject *Array_py_##name(PyObject *self, PyObject *const *args,            \
                                     Py_ssize_t nargs, PyObject *kwnames)              \
    {                                                                                  \
        return py_method(self, #name, args, nargs, kwnames);                           \
    }
PG_PY_METHODS(PG_PY_METHOD_FN)
#undef PG_PY_METHOD_FN

/* Attributes that C does not define come from the Python areas of
 * pygpu/_ops (methods.py's attribute(): the array API's and NumPy's methods
 * and properties that are written in Python, such as sort or mT). Only a name
 * that the generic lookup misses pays for the call. */
static PyObject *
Array_getattro(PyObject *self, PyObject *name)
{
    PyObject *res = PyObject_GenericGetAttr(self, name), *mod, *etype, *exc, *etb;
    if (res != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return res;
    }
    PyErr_Fetch(&etype, &exc, &etb);
    mod = import_methods(self);
    res = mod == NULL ? NULL : PyObject_CallMethod(mod, "attribute", "OO", self, name);
    if (res == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear(); /* not there either: the generic lookup's error */
        PyErr_Restore(etype, exc, etb);
        return NULL;
    }
    Py_XDECREF(etype);
    Py_XDECREF(exc);
    Py_XDECREF(etb);
    return res;
}

/* Pickling copies to the host; unpickling copies back (to the current device). */
static PyObject *
Array_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *module = PyType_GetModuleByDef(Py_TYPE(self), &pg_module_def);
    PyObject *host = NULL, *fn = NULL, *res = NULL;
    if (module == NULL) {
        return NULL;
    }
    fn = PyObject_GetAttrString(module, "to_device");
    host = fn == NULL ? NULL : Array_copy_to_host(self, NULL, 0, NULL);
    if (host != NULL) {
        res = Py_BuildValue("(O(O))", fn, host);
    }
    Py_XDECREF(fn);
    Py_XDECREF(host);
    return res;
}

/* Whether key is basic indexing (ints, slices, ..., None: a view), as
 * core.c's pg_array_getitem decides it. */
static int
basic_key(PyObject *key)
{
    if (!PyTuple_Check(key)) {
        return (PyLong_Check(key) && !PyBool_Check(key)) ||
               PyArray_IsScalar(key, Integer) || PySlice_Check(key) ||
               key == Py_Ellipsis || key == Py_None;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
        if (PyTuple_Check(PyTuple_GET_ITEM(key, i)) ||
            !basic_key(PyTuple_GET_ITEM(key, i))) {
            return 0;
        }
    }
    return 1;
}

static int
Array_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *view = NULL;
    int rc;
    if (st == NULL) {
        return -1;
    }
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot delete elements of a DeviceArray");
        return -1;
    }
    if (!basic_key(key)) {
        /* integer arrays, masks, bool scalars: pygpu/_ops/indexing.py */
        PyObject *mod = PyImport_ImportModule("pygpu._ops.indexing"), *r;
        r = mod == NULL ? NULL
                        : PyObject_CallMethod(mod, "setitem", "OOO", self, key, value);
        Py_XDECREF(mod);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    view = pg_array_getitem(st, ARR(self), key);
    if (view == NULL) {
        return -1;
    }
    pg_stream_ref cur;
    (void)pg_resolve_stream(st, NULL, &cur);
    rc = pg_array_setitem(st, ARR(view), value, &cur);
    Py_DECREF(view);
    return rc;
}

static PyObject *
Array_getitem(PyObject *self, PyObject *key)
{
    pg_state *st = STATE_OR_NULL(self);
    return st == NULL ? NULL : pg_array_getitem(st, ARR(self), key);
}

static PyObject *
Array_sq_item(PyObject *self, Py_ssize_t i)
{
    PyObject *key = PyLong_FromSsize_t(i), *res;
    if (key == NULL) {
        return NULL;
    }
    res = Array_getitem(self, key);
    Py_DECREF(key);
    return res;
}

static PyObject *
Array_iter(PyObject *self)
{
    if (ARR(self)->nd == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d array");
        return NULL;
    }
    return PySeqIter_New(self);
}

static Py_ssize_t
Array_length(PyObject *self)
{
    if (ARR(self)->nd == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return -1;
    }
    return ARR(self)->shape[0];
}

/* ---- numbers: conversions of size-1 arrays ---------------------------------- */

static int
Array_bool(PyObject *self)
{
    PyObject *item;
    int r;
    if (pg_array_size(ARR(self)) != 1) { /* NumPy's words */
        PyErr_SetString(PyExc_ValueError,
                        pg_array_size(ARR(self)) == 0
                            ? "The truth value of an empty array is ambiguous. Use "
                              "`array.size > 0` to check that an array is not empty."
                            : "The truth value of an array with more than one element "
                              "is ambiguous. Use a.any() or a.all()");
        return -1;
    }
    item = Array_item(self, NULL);
    if (item == NULL) {
        return -1;
    }
    r = PyObject_IsTrue(item);
    Py_DECREF(item);
    return r;
}

/* The element of a 0-d array, for int(), float() and complex(): NumPy 2
 * converts no other array (bool() takes any size-1 array, as NumPy's). */
static PyObject *
scalar_of(PyObject *self)
{
    if (ARR(self)->nd != 0) {
        PyErr_SetString(PyExc_TypeError,
                        "only 0-dimensional arrays can be converted to Python scalars");
        return NULL;
    }
    return Array_item(self, NULL);
}

static PyObject *
Array_int(PyObject *self)
{
    PyObject *item = scalar_of(self), *r;
    if (item == NULL) {
        return NULL;
    }
    r = PyNumber_Long(item);
    Py_DECREF(item);
    return r;
}

/* operator.index(): as NumPy's, only a 0-d array of an integer dtype (not
 * bool) is an index; its element is read from the device. */
static PyObject *
Array_index(PyObject *self)
{
    PyObject *item, *r;
    if (ARR(self)->nd != 0 || !PyTypeNum_ISINTEGER(ARR(self)->descr->type_num)) {
        PyErr_SetString(
            PyExc_TypeError,
            "only integer scalar arrays can be converted to a scalar index");
        return NULL;
    }
    if ((item = Array_item(self, NULL)) == NULL) {
        return NULL;
    }
    r = PyNumber_Index(item);
    Py_DECREF(item);
    return r;
}

static PyObject *
Array_float(PyObject *self)
{
    PyObject *item = scalar_of(self), *r;
    if (item == NULL) {
        return NULL;
    }
    r = PyNumber_Float(item);
    Py_DECREF(item);
    return r;
}

static PyObject *
Array_complex(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *item = scalar_of(self), *r;
    if (item == NULL) {
        return NULL;
    }
    r = PyObject_CallOneArg((PyObject *)&PyComplex_Type, item);
    Py_DECREF(item);
    return r;
}

/* ---- numbers: the operators of pygpu._ops.ufunc ------------------------------ */

/* +, -, *, the comparisons and @ are C's (ops.c, matmul.c); the other
 * operators are NumPy ufuncs that the Python side runs. */
#define PY_BINARY(fn, name, inplace)                                                   \
    static PyObject *fn(PyObject *a, PyObject *b)                                      \
    {                                                                                  \
        return pg_python_operator(name, a, b, inplace);                                \
    }
#define PY_UNARY(fn, name)                                                             \
    static PyObject *fn(PyObject *a)                                                   \
    {                                                                                  \
        return pg_python_operator(name, a, NULL, 0);                                   \
    }

PY_BINARY(Array_true_divide, "divide", 0)
PY_BINARY(Array_floor_divide, "floor_divide", 0)
PY_BINARY(Array_remainder, "remainder", 0)
PY_BINARY(Array_divmod, "divmod", 0)
PY_BINARY(Array_and, "bitwise_and", 0)
PY_BINARY(Array_or, "bitwise_or", 0)
PY_BINARY(Array_xor, "bitwise_xor", 0)
PY_BINARY(Array_lshift, "left_shift", 0)
PY_BINARY(Array_rshift, "right_shift", 0)
PY_BINARY(Array_itrue_divide, "divide", 1)
PY_BINARY(Array_ifloor_divide, "floor_divide", 1)
PY_BINARY(Array_iremainder, "remainder", 1)
PY_BINARY(Array_iand, "bitwise_and", 1)
PY_BINARY(Array_ior, "bitwise_or", 1)
PY_BINARY(Array_ixor, "bitwise_xor", 1)
PY_BINARY(Array_ilshift, "left_shift", 1)
PY_BINARY(Array_irshift, "right_shift", 1)
PY_UNARY(Array_negative, "negative")
PY_UNARY(Array_positive, "positive")
PY_UNARY(Array_absolute, "absolute")
PY_UNARY(Array_invert, "invert")

/* pow(a, b, mod): NumPy's power takes no modulus (NotImplemented, so that
 * Python raises its TypeError) */
static PyObject *
Array_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return pg_python_power(a, b, 0);
}

static PyObject *
Array_ipower(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return pg_python_power(a, b, 1);
}

/* ---- life cycle ------------------------------------------------------------- */

static int
Array_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(ARR(self)->buf);
    Py_VISIT(ARR(self)->base);
    Py_VISIT(ARR(self)->descr);
    return 0;
}

static int
Array_clear(PyObject *self)
{
    /* data stays pointing into buf: the memory lives while anything may read
     * it, and a cleared array is never used again */
    Py_CLEAR(ARR(self)->base);
    Py_CLEAR(ARR(self)->buf);
    return 0;
}

static void
Array_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (ARR(self)->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    (void)Array_clear(self);
    Py_CLEAR(ARR(self)->descr);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* ---- attributes ----------------------------------------------------------- */

static PyObject *
Array_repr(PyObject *self)
{
    pg_array *a = ARR(self);
    PyObject *shape = PyArray_IntTupleFromIntp(a->nd, a->shape), *r;
    const pg_backend *rt = pg_rt();
    if (shape == NULL) {
        return NULL;
    }
    r = PyUnicode_FromFormat(
        "<pygpu.DeviceArray shape=%R dtype=%S device=%d%s>", shape,
        (PyObject *)a->descr, pg_array_device(a),
        rt != NULL && (rt->caps & PG_CAP_SIMULATED) ? " (simulated)" : "");
    Py_DECREF(shape);
    return r;
}

static PyObject *
Array_get(PyObject *self, void *closure)
{
    pg_array *a = ARR(self);
    switch ((int)(intptr_t)closure) {
    case 0: return PyArray_IntTupleFromIntp(a->nd, a->shape);
    case 1: return PyArray_IntTupleFromIntp(a->nd, a->strides);
    case 2: return Py_NewRef((PyObject *)a->descr);
    case 3: return PyLong_FromSsize_t(pg_array_size(a));
    case 4: return PyLong_FromSsize_t(pg_array_size(a) * PyDataType_ELSIZE(a->descr));
    case 5: return PyLong_FromLong(a->nd);
    case 6: return PyLong_FromSsize_t(PyDataType_ELSIZE(a->descr));
    case 7: return PyLong_FromVoidPtr(a->data);
    case 8: return Py_NewRef(a->base != NULL ? a->base : Py_None);
    case 9:
        return Py_BuildValue("{sOsOsOsO}", "C_CONTIGUOUS",
                             (a->flags & NPY_ARRAY_C_CONTIGUOUS) ? Py_True : Py_False,
                             "F_CONTIGUOUS",
                             (a->flags & NPY_ARRAY_F_CONTIGUOUS) ? Py_True : Py_False,
                             "OWNDATA", a->base == NULL ? Py_True : Py_False,
                             "WRITEABLE", a->buf->readonly ? Py_False : Py_True);
    case 10: {
        pg_state *st = STATE_OR_NULL(self);
        return st == NULL ? NULL : pg_device_new(st, pg_array_device(a));
    }
    case 11: {
        pg_state *st = STATE_OR_NULL(self);
        return st == NULL ? NULL : pg_array_transpose(st, a, NULL);
    }
    default: return NULL;
    }
}

static PyObject *
Array_is_c_contiguous(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(ARR(self)->flags & NPY_ARRAY_C_CONTIGUOUS);
}

static PyObject *
Array_is_f_contiguous(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(ARR(self)->flags & NPY_ARRAY_F_CONTIGUOUS);
}

static PyObject *
Array_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"shape", "dtype", "order", NULL};
    pg_state *st = pg_state_of_type(type);
    PyObject *shape_obj = NULL, *dtype_obj = NULL, *order = NULL, *res = NULL;
    PyArray_Descr *descr = NULL;
    pg_shape shape;
    int fortran = 0;
    if (st == NULL ||
        !PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:DeviceArray", kwlist,
                                     &shape_obj, &dtype_obj, &order)) {
        return NULL;
    }
    if (pg_conv_shape(st, shape_obj, &shape) == 0 &&
        pg_conv_order(st, order, &fortran) == 0 &&
        pg_conv_dtype(st, dtype_obj, &descr) == 0) {
        res = (PyObject *)pg_array_empty_typed(st, type, -1, shape.nd, shape.dims,
                                               descr, fortran, NULL);
    }
    Py_XDECREF(descr);
    return res;
}

static PyGetSetDef Array_getset[] = {
    {"__cuda_array_interface__", pg_array_cai, NULL,
     "The CUDA array interface (version 3): zero-copy export to CuPy, Numba, "
     "PyTorch.",
     NULL},
    {"shape", Array_get, NULL, "Tuple of dimensions.", (void *)0},
    {"strides", Array_get, NULL, "Tuple of byte steps per dimension.", (void *)1},
    {"dtype", Array_get, NULL, "Element type, a numpy.dtype.", (void *)2},
    {"size", Array_get, NULL, "Number of elements.", (void *)3},
    {"nbytes", Array_get, NULL, "Bytes the elements take.", (void *)4},
    {"ndim", Array_get, NULL, "Number of dimensions.", (void *)5},
    {"itemsize", Array_get, NULL, "Bytes per element.", (void *)6},
    {"ptr", Array_get, NULL, "Device address of the first element, an int.", (void *)7},
    {"base", Array_get, NULL, "The array that owns the memory of a view, else None.",
     (void *)8},
    {"flags", Array_get, NULL,
     "Dict with C_CONTIGUOUS, F_CONTIGUOUS, OWNDATA and WRITEABLE.", (void *)9},
    {"device", Array_get, NULL, "The Device holding the array.", (void *)10},
    {"T", Array_get, NULL, "Transposed view.", (void *)11},
    {NULL},
};

/* `x in d` is NumPy's: (d == x).any(), whatever d == x gives (a bool array,
 * or Python's own answer where NumPy's == gives way). */
static int
Array_contains(PyObject *self, PyObject *value)
{
    pg_state *st = STATE_OR_NULL(self);
    PyObject *eq = NULL, *host = NULL, *any = NULL;
    pg_stream_ref cur;
    int r = -1;
    if (st == NULL) {
        return -1;
    }
    eq = PyObject_RichCompare(self, value, Py_EQ);
    if (eq == NULL) {
        return -1;
    }
    if (!pg_array_check(st, eq)) {
        r = PyObject_IsTrue(eq);
        Py_DECREF(eq);
        return r;
    }
    (void)pg_resolve_stream(st, NULL, &cur);
    host = pg_array_to_new_host(st, ARR(eq), &cur);
    if (host != NULL) {
        any = PyArray_Any((PyArrayObject *)host, NPY_RAVEL_AXIS, NULL);
    }
    if (any != NULL) {
        r = PyObject_IsTrue(any);
    }
    Py_XDECREF(any);
    Py_XDECREF(host);
    Py_XDECREF(eq);
    return r;
}

/* f"{d:.2f}": a 0-d array formats as its element, as NumPy's does. */
static PyObject *
Array_format(PyObject *self, PyObject *spec)
{
    PyObject *item, *r;
    if (ARR(self)->nd != 0) {
        return PyObject_CallMethod((PyObject *)&PyBaseObject_Type, "__format__", "OO",
                                   self, spec);
    }
    item = Array_item(self, NULL);
    if (item == NULL) {
        return NULL;
    }
    r = PyObject_Format(item, spec);
    Py_DECREF(item);
    return r;
}

/* A new array with a's contents as dtype, on a's device, in a's order,
 * converted on the device as NumPy casts. */
static PyObject *
cast_copy(pg_state *st, pg_array *a, PyArray_Descr *descr, const pg_stream_ref *s)
{
    int fortran =
        (a->flags & NPY_ARRAY_F_CONTIGUOUS) && !(a->flags & NPY_ARRAY_C_CONTIGUOUS);
    pg_array *res =
        pg_array_empty_on(st, pg_array_device(a), a->nd, a->shape, descr, fortran, s);
    if (res != NULL && pg_array_cast_into(st, res, a, s) < 0) {
        Py_CLEAR(res);
    }
    return (PyObject *)res;
}

/* d.astype(dtype): a new array of dtype, converted on the device as NumPy
 * casts (copy=False gives d itself when it already has the dtype). */
static PyObject *
Array_astype(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {
        "astype", 1, 2, {{"dtype", pg_conv_dtype}, {"copy", pg_conv_object}}};
    pg_state *st = STATE_OR_NULL(self);
    PyArray_Descr *descr = NULL;
    PyObject *copy = NULL, *res = NULL;
    pg_stream_ref cur;
    if (st == NULL || pg_parse(st, &sig, args, nargs, kwnames, &descr, &copy) < 0) {
        goto done;
    }
    if (copy != NULL && !PyObject_IsTrue(copy) &&
        PyArray_EquivTypes(descr, ARR(self)->descr)) {
        res = Py_NewRef(self);
        goto done;
    }
    (void)pg_resolve_stream(st, NULL, &cur);
    res = cast_copy(st, ARR(self), descr, &cur);
done:
    Py_XDECREF(descr);
    return res;
}

static PyMethodDef Array_methods[] = {
    {"__format__", Array_format, METH_O, NULL},
    {"astype", (PyCFunction)(void (*)(void))Array_astype, METH_FASTCALL | METH_KEYWORDS,
     "astype($self, /, dtype, copy=True)\n--\n\nA copy converted to dtype on the "
     "device, as numpy's astype (unsafe casting)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))pg_array_dlpack,
     METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, "
     "copy=None)\n--\n\nExport as a DLPack capsule (zero-copy)."},
    {"__dlpack_device__", pg_array_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n(2, device id): CUDA memory."},
    {"copy_to_host", (PyCFunction)(void (*)(void))Array_copy_to_host,
     METH_FASTCALL | METH_KEYWORDS,
     "copy_to_host($self, /, out=None, stream=None)\n--\n\n"
     "Copy to the host: a new numpy.ndarray, or into `out` (same shape and dtype)."},
    {"get", (PyCFunction)(void (*)(void))Array_copy_to_host,
     METH_FASTCALL | METH_KEYWORDS,
     "get($self, /, out=None, stream=None)\n--\n\nSame as copy_to_host (CuPy's "
     "name)."},
    {"copy_to_device", (PyCFunction)(void (*)(void))Array_copy_to_device,
     METH_FASTCALL | METH_KEYWORDS,
     "copy_to_device($self, /, ary, stream=None)\n--\n\n"
     "Copy `ary` (a DeviceArray or host array of the same shape and dtype) into "
     "this array."},
    {"set", (PyCFunction)(void (*)(void))Array_copy_to_device,
     METH_FASTCALL | METH_KEYWORDS,
     "set($self, /, ary, stream=None)\n--\n\nSame as copy_to_device (CuPy's name)."},
    {"copy", (PyCFunction)(void (*)(void))Array_copy, METH_FASTCALL | METH_KEYWORDS,
     "copy($self, /, order='C', stream=None)\n--\n\nA new device array with the "
     "same contents."},
    {"reshape", (PyCFunction)(void (*)(void))Array_reshape,
     METH_FASTCALL | METH_KEYWORDS,
     "reshape($self, /, *shape, order='C')\n--\n\n"
     "A view with a new shape, or a copy where no view can have it (as NumPy)."},
    {"ravel", (PyCFunction)(void (*)(void))Array_ravel, METH_FASTCALL | METH_KEYWORDS,
     "ravel($self, /, order='C')\n--\n\nA 1-D view, or copy where needed."},
    {"transpose", (PyCFunction)(void (*)(void))Array_transpose,
     METH_FASTCALL | METH_KEYWORDS,
     "transpose($self, /, *axes)\n--\n\nA view with axes permuted."},
    {"item", Array_item, METH_NOARGS,
     "item($self, /)\n--\n\nThe element of a size-1 array as a Python scalar."},
    {"is_c_contiguous", Array_is_c_contiguous, METH_NOARGS,
     "is_c_contiguous($self, /)\n--\n\nTrue if laid out in C order."},
    {"is_f_contiguous", Array_is_f_contiguous, METH_NOARGS,
     "is_f_contiguous($self, /)\n--\n\nTrue if laid out in Fortran order."},
    {"__array__", (PyCFunction)(void (*)(void))Array_array,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"__array_function__", (PyCFunction)(void (*)(void))Array_array_function,
     METH_FASTCALL, NULL},
    {"__array_ufunc__", (PyCFunction)(void (*)(void))pg_array_ufunc,
     METH_FASTCALL | METH_KEYWORDS,
     "__array_ufunc__($self, ufunc, method, /, *inputs, **kwargs)\n--\n\n"
     "NumPy's ufuncs on DeviceArrays (NEP 13): numpy.add(d, 1) and np.float32(2) + d "
     "run on the device, as d + 1 does; host arrays are not copied implicitly."},
    {"__complex__", Array_complex, METH_NOARGS,
     "__complex__($self, /)\n--\n\nThe element of a 0-d array as a Python complex."},
    {"__reduce__", Array_reduce, METH_NOARGS, NULL},
#define PG_PY_METHOD_DEF(name)                                                         \
    {#name, (PyCFunction)(void (*)(void))Array_py_##name,                              \
     METH_FASTCALL | METH_KEYWORDS,                                                    \
     #name "($self, /, *args, **kwargs)\n--\n\nnumpy.ndarray." #name                   \
           " on the device (pygpu/_ops/methods.py)."},
    PG_PY_METHODS(PG_PY_METHOD_DEF)
#undef PG_PY_METHOD_DEF
        {NULL},
};

static PyMemberDef Array_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(pg_array, weakreflist), Py_READONLY},
    {NULL},
};

static PyType_Slot Array_slots[] = {
    {Py_tp_new, Array_new},
    {Py_tp_dealloc, Array_dealloc},
    {Py_tp_traverse, Array_traverse},
    {Py_tp_clear, Array_clear},
    {Py_tp_repr, Array_repr},
    {Py_tp_methods, Array_methods},
    {Py_tp_getattro, Array_getattro},
    {Py_tp_getset, Array_getset},
    {Py_tp_members, Array_members},
    {Py_mp_subscript, Array_getitem},
    {Py_mp_ass_subscript, Array_setitem},
    {Py_mp_length, Array_length},
    {Py_sq_length, Array_length},
    {Py_sq_item, Array_sq_item},
    {Py_tp_iter, Array_iter},
    {Py_nb_bool, Array_bool},
    {Py_nb_int, Array_int},
    {Py_nb_float, Array_float},
    {Py_nb_index, Array_index},
    {Py_nb_add, pg_array_add},
    {Py_nb_subtract, pg_array_subtract},
    {Py_nb_multiply, pg_array_multiply},
    {Py_nb_inplace_add, pg_array_iadd},
    {Py_nb_inplace_subtract, pg_array_isubtract},
    {Py_nb_inplace_multiply, pg_array_imultiply},
    {Py_nb_true_divide, Array_true_divide},
    {Py_nb_floor_divide, Array_floor_divide},
    {Py_nb_remainder, Array_remainder},
    {Py_nb_divmod, Array_divmod},
    {Py_nb_power, Array_power},
    {Py_nb_negative, Array_negative},
    {Py_nb_positive, Array_positive},
    {Py_nb_absolute, Array_absolute},
    {Py_nb_invert, Array_invert},
    {Py_nb_and, Array_and},
    {Py_nb_or, Array_or},
    {Py_nb_xor, Array_xor},
    {Py_nb_lshift, Array_lshift},
    {Py_nb_rshift, Array_rshift},
    {Py_nb_inplace_true_divide, Array_itrue_divide},
    {Py_nb_inplace_floor_divide, Array_ifloor_divide},
    {Py_nb_inplace_remainder, Array_iremainder},
    {Py_nb_inplace_power, Array_ipower},
    {Py_nb_inplace_and, Array_iand},
    {Py_nb_inplace_or, Array_ior},
    {Py_nb_inplace_xor, Array_ixor},
    {Py_nb_inplace_lshift, Array_ilshift},
    {Py_nb_inplace_rshift, Array_irshift},
    {Py_tp_richcompare, pg_array_richcompare},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_sq_contains, Array_contains},
    {Py_nb_matrix_multiply, pg_array_matmul},
    {Py_tp_doc, "DeviceArray(shape, dtype=float64, order='C')\n--\n\n"
                "An n-dimensional array in device memory (uninitialized when "
                "made this way). Made by pygpu.cuda.to_device, pygpu.asarray, "
                "pygpu.empty, zeros, ones, full."},
    {0, NULL},
};

PyType_Spec pg_array_spec = {
    .name = "pygpu.DeviceArray",
    .basicsize = sizeof(pg_array),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_BASETYPE |
             Py_TPFLAGS_HAVE_GC,
    .slots = Array_slots,
};

/* ---- module functions ------------------------------------------------------ */

#define MODULE_STATE(m) pg_state_of_module(m)

/* A new array of shape, filled with zeros (value NULL) or with the scalar value. */
static PyObject *
fill_new(pg_state *st, const pg_shape *shape, PyArray_Descr *descr, int fortran,
         PyObject *value)
{
    PyArrayObject *v = NULL;
    pg_array *a = NULL;
    pg_stream_ref s;
    pg_err err = PG_SUCCESS;
    if (value != NULL) {
        /* dtype from the fill value when none is given, as numpy.full does */
        v = pg_host_array(value, descr);
        if (v == NULL) {
            return NULL;
        }
        descr = PyArray_DESCR(v);
        if (PyArray_NDIM(v) != 0) {
            PyErr_Format(
                PyExc_ValueError,
                "fill_value must be a scalar, got an array with %d dimension(s)",
                PyArray_NDIM(v));
            goto done;
        }
    }
    (void)pg_resolve_stream(st, NULL, &s);
    a = pg_array_empty(st, shape->nd, shape->dims, descr, fortran, &s);
    if (a == NULL || pg_array_size(a) == 0) {
        goto done;
    }
    if (v == NULL) {
        err = pg_rt()->memset_async(a->data, 0, pg_array_nbytes(a), s.handle);
        if (err != PG_SUCCESS) {
            pg_raise(st, err, pg_call_names.memset_async);
            Py_CLEAR(a);
        }
    }
    else {
        err = pg_rt()->kernels->fill((int)PyDataType_ELSIZE(descr), a->data,
                                     pg_array_size(a), PyArray_DATA(v), s.handle);
        if (err != PG_SUCCESS) {
            pg_raise(st, err, pg_kernel_names.fill);
            Py_CLEAR(a);
        }
    }
done:
    Py_XDECREF(v);
    return (PyObject *)a;
}

static PyObject *
mod_empty(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {
        "empty",
        1,
        3,
        {{"shape", pg_conv_shape}, {"dtype", pg_conv_dtype}, {"order", pg_conv_order}}};
    pg_state *st = MODULE_STATE(m);
    PyArray_Descr *descr = NULL;
    PyObject *res = NULL;
    pg_shape shape;
    int fortran = 0;
    if (pg_parse(st, &sig, args, nargs, kwnames, &shape, &descr, &fortran) == 0) {
        res =
            (PyObject *)pg_array_empty(st, shape.nd, shape.dims, descr, fortran, NULL);
    }
    Py_XDECREF(descr);
    return res;
}

static PyObject *
mod_zeros(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {
        "zeros",
        1,
        3,
        {{"shape", pg_conv_shape}, {"dtype", pg_conv_dtype}, {"order", pg_conv_order}}};
    pg_state *st = MODULE_STATE(m);
    PyArray_Descr *descr = NULL;
    PyObject *res = NULL;
    pg_shape shape;
    int fortran = 0;
    if (pg_parse(st, &sig, args, nargs, kwnames, &shape, &descr, &fortran) == 0) {
        res = fill_new(st, &shape, descr, fortran, NULL);
    }
    Py_XDECREF(descr);
    return res;
}

static PyObject *
mod_full(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"full",
                                     2,
                                     4,
                                     {{"shape", pg_conv_shape},
                                      {"fill_value", pg_conv_object},
                                      {"dtype", pg_conv_dtype_or_none},
                                      {"order", pg_conv_order}}};
    pg_state *st = MODULE_STATE(m);
    PyArray_Descr *descr = NULL;
    PyObject *value = NULL, *res = NULL;
    pg_shape shape;
    int fortran = 0;
    if (pg_parse(st, &sig, args, nargs, kwnames, &shape, &value, &descr, &fortran) ==
        0) {
        res = fill_new(st, &shape, descr, fortran, value);
    }
    Py_XDECREF(descr);
    return res;
}

/* empty_like, zeros_like, ones_like and full_like, as NumPy's: `a` is a
 * DeviceArray or anything numpy.asarray takes (an ndarray, a list, a
 * scalar), whose shape, dtype (unless dtype= says) and order (C, or F for an
 * F-ordered array) the new array has, on the current device. A dtype the
 * device lacks (numpy.asarray('abc') is <U3, of None object) is a TypeError
 * naming it. value: NULL leaves the array uninitialized; zero fills it with
 * zeros. */
static PyObject *
new_like(pg_state *st, const char *fname, PyObject *a, PyArray_Descr *dtype,
         PyObject *value, int zero)
{
    PyArrayObject *h = NULL;
    PyArray_Descr *descr = NULL;
    PyObject *res = NULL;
    pg_shape shape;
    int fortran;
    if (pg_array_check(st, a)) {
        pg_array *p = ARR(a);
        shape.nd = p->nd;
        for (int i = 0; i < p->nd; i++) {
            shape.dims[i] = p->shape[i];
        }
        fortran =
            (p->flags & NPY_ARRAY_F_CONTIGUOUS) && !(p->flags & NPY_ARRAY_C_CONTIGUOUS);
        descr = (PyArray_Descr *)Py_NewRef(dtype != NULL ? dtype : p->descr);
    }
    else {
        h = (PyArrayObject *)PyArray_FromAny(a, NULL, 0, 0, 0, NULL);
        if (h == NULL) {
            return NULL;
        }
        if (PyArray_NDIM(h) > PG_MAXDIMS) {
            PyErr_Format(PyExc_ValueError,
                         "%s: a has %d dimensions; pygpu arrays have at most %d", fname,
                         PyArray_NDIM(h), PG_MAXDIMS);
            goto done;
        }
        shape.nd = PyArray_NDIM(h);
        for (int i = 0; i < shape.nd; i++) {
            shape.dims[i] = PyArray_DIM(h, i);
        }
        fortran = PyArray_IS_F_CONTIGUOUS(h) && !PyArray_IS_C_CONTIGUOUS(h);
        if (dtype != NULL) {
            descr = (PyArray_Descr *)Py_NewRef(dtype);
        }
        else if (pg_dtype_info_of(PyArray_TYPE(h)) == NULL) {
            PyObject *prefix = PyUnicode_FromFormat(
                "%s: numpy.asarray(a) of a %.100s has dtype %S and no dtype= was "
                "given; ",
                fname, Py_TYPE(a)->tp_name, (PyObject *)PyArray_DESCR(h));
            const char *text = prefix == NULL ? NULL : PyUnicode_AsUTF8(prefix);
            if (text != NULL) {
                (void)pg_unsupported_dtype(text, PyArray_DESCR(h));
            }
            Py_XDECREF(prefix);
            goto done;
        }
        else { /* pygpu's arrays are in the native byte order */
            descr = PyArray_DescrNewByteorder(PyArray_DESCR(h), NPY_NATIVE);
            if (descr == NULL) {
                goto done;
            }
        }
    }
    if (value != NULL || zero) {
        res = fill_new(st, &shape, descr, fortran, value);
    }
    else {
        res =
            (PyObject *)pg_array_empty(st, shape.nd, shape.dims, descr, fortran, NULL);
    }
done:
    Py_XDECREF(h);
    Py_XDECREF(descr);
    return res;
}

static const pg_signature like_sig[3] = {
    {"empty_like", 1, 2, {{"a", pg_conv_object}, {"dtype", pg_conv_dtype_or_none}}},
    {"zeros_like", 1, 2, {{"a", pg_conv_object}, {"dtype", pg_conv_dtype_or_none}}},
    {"ones_like", 1, 2, {{"a", pg_conv_object}, {"dtype", pg_conv_dtype_or_none}}},
};

static PyObject *
like_function(PyObject *m, int which, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    pg_state *st = MODULE_STATE(m);
    PyObject *a = NULL, *one = NULL, *res = NULL;
    PyArray_Descr *descr = NULL;
    if (pg_parse(st, &like_sig[which], args, nargs, kwnames, &a, &descr) < 0) {
        return NULL;
    }
    if (which == 2 && (one = PyLong_FromLong(1)) == NULL) {
        goto done;
    }
    res = new_like(st, like_sig[which].fname, a, descr, one, which == 1);
done:
    Py_XDECREF(one);
    Py_XDECREF(descr);
    return res;
}

static PyObject *
mod_empty_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return like_function(m, 0, args, nargs, kwnames);
}

static PyObject *
mod_zeros_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return like_function(m, 1, args, nargs, kwnames);
}

static PyObject *
mod_ones_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return like_function(m, 2, args, nargs, kwnames);
}

static PyObject *
mod_full_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"full_like",
                                     2,
                                     3,
                                     {{"a", pg_conv_object},
                                      {"fill_value", pg_conv_object},
                                      {"dtype", pg_conv_dtype_or_none}}};
    pg_state *st = MODULE_STATE(m);
    PyObject *a = NULL, *value = NULL, *res = NULL;
    PyArray_Descr *descr = NULL;
    if (pg_parse(st, &sig, args, nargs, kwnames, &a, &value, &descr) == 0) {
        res = new_like(st, "full_like", a, descr, value, 0);
    }
    Py_XDECREF(descr);
    return res;
}

/* An uninitialized array with the shape, dtype and order of a DeviceArray or
 * ndarray, on stream s; TypeError naming fname for anything else. */
static PyObject *
empty_like(pg_state *st, const char *fname, PyObject *obj, const pg_stream_ref *s)
{
    if (pg_array_check(st, obj)) {
        pg_array *a = ARR(obj);
        int fortran =
            (a->flags & NPY_ARRAY_F_CONTIGUOUS) && !(a->flags & NPY_ARRAY_C_CONTIGUOUS);
        return (PyObject *)pg_array_empty(st, a->nd, a->shape, a->descr, fortran, s);
    }
    if (PyArray_Check(obj)) {
        PyArrayObject *h = (PyArrayObject *)obj;
        int fortran = PyArray_IS_F_CONTIGUOUS(h) && !PyArray_IS_C_CONTIGUOUS(h);
        if (pg_check_dtype(PyArray_DESCR(h)) < 0) {
            return NULL;
        }
        return (PyObject *)pg_array_empty(st, PyArray_NDIM(h), PyArray_DIMS(h),
                                          PyArray_DESCR(h), fortran, s);
    }
    return PyErr_Format(PyExc_TypeError,
                        "%s() takes a DeviceArray or numpy.ndarray, not %.100s", fname,
                        Py_TYPE(obj)->tp_name);
}

static PyObject *
mod_to_device(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"to_device",
                                     1,
                                     4,
                                     {{"obj", pg_conv_object},
                                      {"stream", pg_conv_stream},
                                      {"copy", pg_conv_object},
                                      {"to", pg_conv_object_or_none}}};
    pg_state *st = MODULE_STATE(m);
    PyObject *obj = NULL, *copy_obj = NULL, *to = NULL;
    pg_stream_arg s;
    int copy = 1;
    if (pg_parse(st, &sig, args, nargs, kwnames, &obj, &s, &copy_obj, &to) < 0 ||
        (copy_obj != NULL && (copy = PyObject_IsTrue(copy_obj)) < 0)) {
        return NULL;
    }
    if (to != NULL) {
        if (!pg_array_check(st, to)) {
            return PyErr_Format(PyExc_TypeError,
                                "to= must be a pygpu.DeviceArray, not %.100s",
                                Py_TYPE(to)->tp_name);
        }
        /* copy=False, as in Numba: the array is only made (here: given) */
        if (pg_check_stream_device(&s.ref, pg_array_device(ARR(to)), s.given) < 0 ||
            (copy &&
             pg_array_assign(st, ARR(to), obj, "to_device", &s.ref, !s.given) < 0)) {
            return NULL;
        }
        return Py_NewRef(to);
    }
    if (!copy) {
        PyObject *res = NULL;
        PyArrayObject *h = pg_array_check(st, obj) ? NULL : pg_host_array(obj, NULL);
        if (h == NULL && !pg_array_check(st, obj)) {
            return NULL;
        }
        res = empty_like(st, "to_device", h != NULL ? (PyObject *)h : obj, &s.ref);
        Py_XDECREF(h);
        return res;
    }
    if (pg_array_check(st, obj)) { /* to the current device, as its name says */
        int device = 0;
        if (pg_current_device(st, pg_rt(), &device) < 0) {
            return NULL;
        }
        return pg_array_copy_on(st, ARR(obj), device, 0, &s.ref);
    }
    return (PyObject *)pg_array_from_host(st, obj, NULL, &s.ref, !s.given);
}

/* a (a DeviceArray) as dtype: the same array if it already has it. */
static PyObject *
as_dtype(pg_state *st, PyObject *a, PyArray_Descr *descr, const pg_stream_ref *s)
{
    if (descr == NULL || PyArray_EquivTypes(descr, ARR(a)->descr)) {
        return Py_NewRef(a);
    }
    return cast_copy(st, ARR(a), descr, s);
}

static PyObject *
mod_asarray(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {
        "asarray", 1, 2, {{"obj", pg_conv_object}, {"dtype", pg_conv_dtype_or_none}}};
    pg_state *st = MODULE_STATE(m);
    PyObject *obj = NULL, *res = NULL, *foreign = NULL;
    PyArray_Descr *descr = NULL;
    pg_stream_ref s;
    if (pg_parse(st, &sig, args, nargs, kwnames, &obj, &descr) < 0) {
        return NULL;
    }
    (void)pg_resolve_stream(st, NULL, &s);
    if (pg_array_check(st, obj)) {
        res = as_dtype(st, obj, descr, &s);
    }
    else if ((foreign = pg_array_from_foreign(st, obj)) != NULL) { /* CAI, DLPack */
        res = as_dtype(st, foreign, descr, &s);
        Py_DECREF(foreign);
    }
    else if (!PyErr_Occurred()) {
        res = (PyObject *)pg_array_from_host(st, obj, descr, &s, 1);
    }
    Py_XDECREF(descr);
    return res;
}

static PyObject *
mod_asnumpy(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const pg_signature sig = {"asnumpy",
                                     1,
                                     3,
                                     {{"a", pg_conv_object},
                                      {"out", pg_conv_object_or_none},
                                      {"stream", pg_conv_stream}}};
    pg_state *st = MODULE_STATE(m);
    PyObject *a = NULL, *out = NULL;
    pg_stream_arg s;
    if (pg_parse(st, &sig, args, nargs, kwnames, &a, &out, &s) < 0) {
        return NULL;
    }
    if (!pg_array_check(st, a)) {
        return PyArray_FromAny(a, NULL, 0, 0, 0, NULL);
    }
    return copy_to_host_impl(st, ARR(a), out, &s);
}

static PyObject *
mod_device_array_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    static const pg_signature sig = {
        "device_array_like",
        1,
        2,
        {{"ary", pg_conv_object}, {"stream", pg_conv_stream}}};
    pg_state *st = MODULE_STATE(m);
    PyObject *ary = NULL;
    pg_stream_arg s;
    if (pg_parse(st, &sig, args, nargs, kwnames, &ary, &s) < 0) {
        return NULL;
    }
    return empty_like(st, "device_array_like", ary, &s.ref);
}

static PyObject *
mod_memory_allocated(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames)
{
    static const pg_signature sig = {
        "memory_allocated", 0, 1, {{"device", pg_conv_object_or_none}}};
    PyObject *dev = NULL;
    int device = 0;
    if (pg_parse(MODULE_STATE(m), &sig, args, nargs, kwnames, &dev) < 0) {
        return NULL;
    }
    if (dev != NULL) { /* an id that exists, as every device argument */
        if (pg_conv_device(MODULE_STATE(m), dev, &device) < 0) {
            return NULL;
        }
    }
    else {
        const pg_backend *rt = pg_rt();
        if (rt != NULL && rt->get_device(&device) != PG_SUCCESS) {
            device = 0;
        }
    }
    return PyLong_FromSize_t(pg_pool_used(device));
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pg_array_functions[] = {
    {"empty", FASTKW(mod_empty),
     "empty(shape, dtype=float64, order='C')\n--\n\nAn uninitialized device array."},
    {"zeros", FASTKW(mod_zeros),
     "zeros(shape, dtype=float64, order='C')\n--\n\nA device array of zeros."},
    {"full", FASTKW(mod_full),
     "full(shape, fill_value, dtype=None, order='C')\n--\n\n"
     "A device array filled with fill_value (dtype from it when None)."},
    {"empty_like", FASTKW(mod_empty_like),
     "empty_like(a, dtype=None)\n--\n\n"
     "An uninitialized device array with a's shape and dtype (unless dtype is given); "
     "a is a DeviceArray or anything numpy.asarray takes, as in numpy.empty_like."},
    {"zeros_like", FASTKW(mod_zeros_like),
     "zeros_like(a, dtype=None)\n--\n\n"
     "A device array of zeros with a's shape and dtype (unless dtype is given)."},
    {"ones_like", FASTKW(mod_ones_like),
     "ones_like(a, dtype=None)\n--\n\n"
     "A device array of ones with a's shape and dtype (unless dtype is given)."},
    {"full_like", FASTKW(mod_full_like),
     "full_like(a, fill_value, dtype=None)\n--\n\n"
     "A device array of a's shape and dtype (unless dtype is given) filled with "
     "fill_value, converted as numpy.full_like converts it."},
    {"to_device", FASTKW(mod_to_device),
     "to_device(obj, stream=None, copy=True, to=None)\n--\n\n"
     "Copy a host array (or anything numpy.asarray takes) to a new device array, "
     "or into `to`."},
    {"asarray", FASTKW(mod_asarray),
     "asarray(obj, dtype=None)\n--\n\n"
     "A device array from obj; a DeviceArray of that dtype is returned as is."},
    {"asnumpy", FASTKW(mod_asnumpy),
     "asnumpy(a, out=None, stream=None)\n--\n\nCopy a device array to the host."},
    {"device_array_like", FASTKW(mod_device_array_like),
     "device_array_like(ary, stream=None)\n--\n\n"
     "An uninitialized device array with ary's shape, dtype and order."},
    {"memory_allocated", FASTKW(mod_memory_allocated),
     "memory_allocated(device=None)\n--\n\n"
     "Bytes of device memory that live pygpu arrays hold on the device (default: "
     "current), as the memory pool counts them (rounded up to 512 bytes each)."},
    {NULL},
};
