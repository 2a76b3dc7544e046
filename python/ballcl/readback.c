/*
 * Where a call's new state lives: pinned host memory under the returned
 * array (a GPU reads back at the bus's speed, with no copy after), or the
 * caller's own array (out=). Pinning is slow, so each context keeps a pool:
 * a block goes back to it when the last array over it is freed. The GIL is
 * the pool's lock. A block holds its own reference to the OpenCL queue and
 * memory: an array outlives later calls, its context and ballcl.close().
 */
#include "core.h"

/* Idle blocks a pool keeps: a frame loop needs two in turn. */
#define POOL_IDLE_MAX 2

typedef struct bpy_pool {
    PyObject_HEAD bcl_host_buffer *idle[POOL_IDLE_MAX];
    size_t nidle;
    size_t block_bytes; /* the size of every block it hands out: the largest asked for */
    size_t out_bytes;   /* bytes of blocks handed out and not yet back */
    bool closed;        /* its context is gone: returned blocks are freed */
    bool disabled;      /* pinned memory failed once: plain memory from then on */
} bpy_pool;

typedef struct bpy_block {
    PyObject_HEAD bcl_host_buffer *hb;
    bpy_pool *pool;
} bpy_block;

/* In a forked child nothing of the parent's OpenCL is released. */
static void destroy(bcl_host_buffer *hb)
{
    if (!bpy_forked())
        bcl_host_buffer_destroy(hb);
}

static void drop_idle(bpy_pool *p)
{
    for (size_t i = 0; i < p->nidle; i++)
        destroy(p->idle[i]);
    p->nidle = 0;
}

static void pool_dealloc(PyObject *self)
{
    drop_idle((bpy_pool *)self);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject pool_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ballcl._core._Pool",
    .tp_basicsize = sizeof(bpy_pool),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Pinned host blocks of one context (internal).",
    .tp_dealloc = pool_dealloc,
};

static void block_dealloc(PyObject *self)
{
    bpy_block *b = (bpy_block *)self;
    bpy_pool *p = b->pool;
    if (b->hb) {
        size_t bytes = bcl_host_buffer_bytes(b->hb);
        p->out_bytes -= bytes;
        if (!p->closed && bytes == p->block_bytes && p->nidle < POOL_IDLE_MAX)
            p->idle[p->nidle++] = b->hb;
        else
            destroy(b->hb);
    }
    Py_XDECREF(p);
    Py_TYPE(self)->tp_free(self);
}

/* No buffer protocol: NumPy then refuses to make a read-only array over a
 * block writable (its base exports no writable buffer). */
static PyTypeObject block_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ballcl._core._PinnedBlock",
    .tp_basicsize = sizeof(bpy_block),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Pinned host memory under a returned state (internal).",
    .tp_dealloc = block_dealloc,
};

int bpy_readback_init(void)
{
    return PyType_Ready(&pool_type) < 0 || PyType_Ready(&block_type) < 0 ? -1 : 0;
}

PyObject *bpy_pool_create(void)
{
    return pool_type.tp_alloc(&pool_type, 0); /* zeroed: empty, open */
}

void bpy_pool_close(PyObject *pool)
{
    bpy_pool *p = (bpy_pool *)pool;
    if (!p)
        return;
    drop_idle(p);
    p->closed = true;
}

size_t bpy_pool_bytes(PyObject *pool)
{
    bpy_pool *p = (bpy_pool *)pool;
    return p ? p->out_bytes + p->nidle * p->block_bytes : 0;
}

/* A float32 (n, 4) array over data, kept alive by base (stolen). */
static PyObject *wrap(void *data, size_t n, PyObject *base)
{
    npy_intp dims[2] = {(npy_intp)n, 4};
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(NPY_FLOAT32), 2, dims,
                                         NULL, data, NPY_ARRAY_CARRAY_RO, NULL);
    if (!arr) {
        Py_DECREF(base);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, base) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* Ordinary memory: a bytes object (immutable, so a read-only array over it
 * cannot be made writable). */
static PyObject *plain_state_array(size_t n, float **data)
{
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 4 * sizeof(float)));
    if (!bytes)
        return NULL;
    *data = (float *)PyBytes_AS_STRING(bytes);
    return wrap(*data, n, bytes);
}

PyObject *bpy_state_array(PyObject *pool, bcl_group *g, const bcl_device_info *d, size_t n,
                          float **data, bool *pinned)
{
    bpy_pool *p = (bpy_pool *)pool;
    size_t bytes = n * 4 * sizeof(float);
    *pinned = false;
    /* A state over one allocation, or a runtime that refused pinned memory
     * once, reads into ordinary memory. */
    if (!p || p->closed || p->disabled || (d->max_alloc && bytes > d->max_alloc))
        return plain_state_array(n, data);
    if (bytes > p->block_bytes) {
        drop_idle(p);
        p->block_bytes = bytes;
    }
    bcl_host_buffer *hb = NULL;
    if (p->nidle) {
        hb = p->idle[--p->nidle];
    } else {
        bcl_error e = {0};
        int rc;
        size_t want = p->block_bytes;
        Py_BEGIN_ALLOW_THREADS;
        rc = bcl_group_host_buffer(g, want, &hb, &e);
        Py_END_ALLOW_THREADS;
        bcl_error_clear(&e);
        if (rc != BCL_OK) {
            p->disabled = true;
            return plain_state_array(n, data);
        }
        if (want != p->block_bytes) { /* another thread grew the pool meanwhile */
            destroy(hb);
            return plain_state_array(n, data);
        }
    }
    bpy_block *b = PyObject_New(bpy_block, &block_type);
    if (!b) {
        destroy(hb);
        return NULL;
    }
    b->hb = hb;
    b->pool = (bpy_pool *)Py_NewRef(pool);
    p->out_bytes += bcl_host_buffer_bytes(hb);
    *data = bcl_host_buffer_data(hb);
    *pinned = true;
    return wrap(*data, n, (PyObject *)b);
}

PyArrayObject *bpy_out_arg(PyObject *out, PyArrayObject **in, bool validate)
{
    size_t n = (size_t)PyArray_DIM(*in, 0);
    if (!PyArray_Check(out)) {
        PyErr_Format(PyExc_TypeError, "out: expected a numpy.ndarray, got %s",
                     Py_TYPE(out)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)out;
    if (PyArray_TYPE(a) == NPY_FLOAT32 && !PyArray_ISNBO(PyArray_DESCR(a)->byteorder)) {
        PyErr_SetString(PyExc_TypeError, "out: expected float32 in the machine's byte order "
                                         "(" BPY_NATIVE_F4 "), got " BPY_SWAPPED_F4);
        return NULL;
    }
    if (PyArray_TYPE(a) != NPY_FLOAT32) {
        PyErr_SetString(PyExc_TypeError, "out: expected dtype float32 (native byte order)");
        return NULL;
    }
    if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) != (npy_intp)n || PyArray_DIM(a, 1) != 4)
        return (PyArrayObject *)bpy_input_error("out: expected shape (%zu, 4), the state's", n);
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a))
        return (PyArrayObject *)bpy_input_error(
            "out: expected a C-contiguous, aligned array (the state is read into it whole)");
    if (!PyArray_ISWRITEABLE(a))
        return (PyArrayObject *)bpy_input_error("out: the array is read-only");
    /* The read-back must not overwrite the start the check compares with. */
    if (validate && bpy_overlaps(PyArray_DATA(a), PyArray_DATA(*in), n * 4 * sizeof(float))) {
        PyObject *copy = PyArray_NewCopy(*in, NPY_CORDER);
        if (!copy)
            return NULL;
        Py_SETREF(*in, (PyArrayObject *)copy);
    }
    return (PyArrayObject *)Py_NewRef(out);
}

bool bpy_overlaps(const void *a, const void *b, size_t bytes)
{
    const char *x = a, *y = b;
    return x < y + bytes && y < x + bytes;
}
