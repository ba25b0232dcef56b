# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, language_level=3
"""Native kernels of core-teil (issue 5).

``run`` executes a batch program: a list of loop-nest ops (see
``teil_kernels.h``) run for every element ``i`` of a batch label, in
parallel over ``i`` with OpenMP, each thread with its own scratch for the
temporaries that the planner fused into the batch loop.  Only
``core_teil.native.engine`` calls this, and only with descriptors that
``core_teil.native.plan_check`` has checked against the buffers they address.
"""

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t, intptr_t
from libc.stdlib cimport free, malloc

cnp.import_array()


cdef extern from "teil_kernels.h" nogil:
    enum: TK_MAXL
    ctypedef struct tk_op:
        int32_t kind
        int32_t nloops
        int32_t slot[3]
        double coeff
        int64_t off[3]
        int64_t ext[TK_MAXL]
        int64_t st[3][TK_MAXL]
    ctypedef struct tk_slot:
        double *base
        int64_t bstride
        int64_t soff
    void tk_run_element(const tk_op *ops, int nops, const tk_slot *slots, int64_t i, double *scratch)
    void tk_run_chunk(const tk_op *op, const tk_slot *slots, int64_t lo, int64_t hi)
    int tk_max_threads()
    double tk_largest_abs(const double *p, int64_t n)


cdef extern from *:
    const char *CORE_TEIL_BUILD  # set by setup.py


#: How this extension was compiled: "portable" (the default) or "native-arch" (-march=native).
BUILD = CORE_TEIL_BUILD.decode()

#: Columns of one op row: kind, nloops, 3 slots, 3 offsets, then extents and the three stride rows.
MAXL = TK_MAXL
OP_WIDTH = 8 + 4 * TK_MAXL


def openmp_threads() -> int:
    """Number of OpenMP threads the kernels use."""
    return tk_max_threads()


def address(cnp.ndarray a not None) -> int:
    """The address of ``a``'s first element: ``a.ctypes.data`` without building a ctypes
    object (a call's op table needs several; each cost a microsecond)."""
    return <intptr_t> cnp.PyArray_DATA(a)


def aligned_empty(tuple shape not None, Py_ssize_t align):
    """An uninitialised C-contiguous float64 array of ``shape`` whose data starts on an
    ``align``-byte boundary (a power of two, at least 8): a view into a slightly larger
    buffer.  In C because after a large GEMM the same three numpy calls in Python took
    45 us more than ``numpy.empty``."""
    cdef cnp.npy_intp total = _elements(shape) + align // 8
    return aligned_view(cnp.PyArray_EMPTY(1, &total, cnp.NPY_DOUBLE, 0), shape, align)


cdef cnp.npy_intp _elements(tuple shape) except -1:
    cdef cnp.npy_intp n = 1, e
    if len(shape) > 32:
        raise ValueError("aligned_empty: at most 32 dimensions")
    for d in shape:
        e = <cnp.npy_intp> d
        if e < 0:
            raise ValueError("aligned_empty: negative extent")
        n *= e
    return n if n > 0 else 1


def aligned_view(cnp.ndarray raw not None, tuple shape not None, Py_ssize_t align):
    """The C-contiguous float64 array of ``shape`` that starts at ``raw``'s first
    ``align``-byte boundary, with ``raw`` (a 1-D float64 buffer of at least
    ``max(prod(shape), 1) + align // 8`` doubles, checked) as its base."""
    cdef int nd = len(shape), d
    cdef cnp.npy_intp dims[32]
    cdef cnp.npy_intp n = _elements(shape)
    if align < 8 or align & (align - 1):
        raise ValueError("aligned_empty: a power-of-two alignment >= 8")
    if cnp.PyArray_TYPE(raw) != cnp.NPY_DOUBLE or cnp.PyArray_NDIM(raw) != 1 \
            or not cnp.PyArray_IS_C_CONTIGUOUS(raw) or cnp.PyArray_DIMS(raw)[0] < n + align // 8:
        raise ValueError("aligned_view: the buffer is not a 1-D float64 array large enough")
    for d in range(nd):
        dims[d] = <cnp.npy_intp> shape[d]
    cdef char *p = <char *> cnp.PyArray_DATA(raw)
    p += (-(<intptr_t> p)) & (align - 1)
    cdef cnp.ndarray out = cnp.PyArray_SimpleNewFromData(nd, dims, cnp.NPY_DOUBLE, p)
    cnp.Py_INCREF(raw)  # the reference PyArray_SetBaseObject steals
    cnp.PyArray_SetBaseObject(out, raw)
    return out


def same_arrays(values, tuple shapes not None) -> bool:
    """Whether ``values`` are, one for each of ``shapes`` and in order, arrays of exactly
    type ``ndarray`` holding native-order float64, C-contiguous, of that shape.

    The gate of a repeated call (``core_teil.native.engine.Kernel.__call__``): anything else
    takes the checked path.  In C because, after a large GEMM has emptied the caches, the
    same test in Python took 65 us of a matmul's time."""
    cdef Py_ssize_t k = 0, d, n = len(shapes)
    cdef cnp.ndarray a
    cdef tuple shape
    for v in values:
        if k >= n or type(v) is not cnp.ndarray:
            return False
        a = <cnp.ndarray> v
        shape = <tuple> shapes[k]
        if cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or not cnp.PyArray_ISNOTSWAPPED(a) \
                or not cnp.PyArray_IS_C_CONTIGUOUS(a) or cnp.PyArray_NDIM(a) != len(shape):
            return False
        for d in range(len(shape)):
            if cnp.PyArray_DIMS(a)[d] != <cnp.npy_intp> shape[d]:
                return False
        k += 1
    return k == n


def largest_abs(cnp.ndarray a not None) -> float:
    """``max |v|`` over the values of a C-contiguous float64 array that are not NaN, 0 when
    there are none (``engine.largest_size``, the overflow guard's measure of an input; one
    pass, no temporary: numpy's ``abs().max()`` cost 8 us on 64 elements)."""
    if (cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or not cnp.PyArray_IS_C_CONTIGUOUS(a)
            or not cnp.PyArray_ISNOTSWAPPED(a)):
        raise ValueError("largest_abs needs a C-contiguous float64 array in native byte order")
    cdef const double *p = <const double *> cnp.PyArray_DATA(a)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(a)
    cdef double m
    with nogil:
        m = tk_largest_abs(p, n)
    return m


def magnitude(object a) -> float:
    """``max(1, max |v|)`` over the values of ``a`` that are not NaN, when ``a`` is a
    C-contiguous float64 array in native byte order: the overflow guard's factor for one input
    (``engine.Kernel._run_fast``); ``-1.0`` for anything else, which the caller measures itself.
    One call instead of the checks ``engine.largest_size`` makes in Python (issue 15: repeated
    small calls)."""
    if not cnp.PyArray_Check(a):
        return -1.0
    cdef cnp.ndarray arr = <cnp.ndarray> a
    if (cnp.PyArray_TYPE(arr) != cnp.NPY_DOUBLE or not cnp.PyArray_IS_C_CONTIGUOUS(arr)
            or not cnp.PyArray_ISNOTSWAPPED(arr)):
        return -1.0
    cdef double m = tk_largest_abs(<const double *> cnp.PyArray_DATA(arr), cnp.PyArray_SIZE(arr))
    return m if m > 1.0 else 1.0


cdef class OpTable:
    """The op rows of one call (``engine.CompiledCall``), parsed into ``tk_op`` structs once,
    when the plan is compiled: parsing them on every call cost 0.4 of an 8x8 matmul's 3.3 us
    (issue 15, repeated small calls).  ``ops_i`` rows are the planner's checked descriptors
    (``planner.Desc.row``), ``ops_f`` their coefficients."""

    cdef tk_op *ops
    cdef readonly int nops

    def __cinit__(self, const int64_t[:, ::1] ops_i, const double[::1] ops_f):
        cdef int q, r, l, L
        if ops_i.shape[1] != OP_WIDTH:
            raise ValueError("op rows have the wrong width")
        if ops_f.shape[0] != ops_i.shape[0]:
            raise ValueError("one coefficient per op row")
        for q in range(ops_i.shape[0]):
            L = <int> ops_i[q, 1]
            if L < 0 or L > TK_MAXL - 1:
                raise ValueError("too many loops in one op")
        self.nops = <int> ops_i.shape[0]
        self.ops = <tk_op *> malloc(max(self.nops, 1) * sizeof(tk_op))
        if self.ops == NULL:
            raise MemoryError()
        for q in range(self.nops):
            self.ops[q].kind = <int32_t> ops_i[q, 0]
            self.ops[q].nloops = <int32_t> ops_i[q, 1]
            for r in range(3):
                self.ops[q].slot[r] = <int32_t> ops_i[q, 2 + r]
                self.ops[q].off[r] = ops_i[q, 5 + r]
            self.ops[q].coeff = ops_f[q]
            for l in range(TK_MAXL):
                self.ops[q].ext[l] = ops_i[q, 8 + l]
                self.ops[q].st[0][l] = ops_i[q, 8 + TK_MAXL + l]
                self.ops[q].st[1][l] = ops_i[q, 8 + 2 * TK_MAXL + l]
                self.ops[q].st[2][l] = ops_i[q, 8 + 3 * TK_MAXL + l]

    def __dealloc__(self):
        free(self.ops)


# A slot row ``(address, batch stride, scratch offset)`` of int64 is a ``tk_slot`` as laid out in
# memory where pointers are 64 bits, and run reads the table in place.  Elsewhere the extension
# refuses to load: a branch that copied the rows ran on no machine the tests run on (review r18).
if not (sizeof(tk_slot) == 3 * sizeof(int64_t) and sizeof(double *) == sizeof(int64_t)):
    raise ImportError("core-teil's native engine needs 64-bit pointers (a slot row is read as a tk_slot)")


def run(OpTable table not None, cnp.ndarray slots_i not None, int64_t nbatch, int64_t scratch_per_thread, int nthreads=0):
    """Run ``table``'s ops for every batch element ``0 <= i < nbatch``.

    ``slots_i`` (C-contiguous int64, three columns) rows are ``(address or 0, batch stride,
    scratch offset)`` (element units); a zero address marks a per-thread scratch slot.
    ``nthreads``: 0 for OpenMP's default, 1 runs serially with no parallel region to wake."""
    if (cnp.PyArray_TYPE(slots_i) != cnp.NPY_INT64 or cnp.PyArray_NDIM(slots_i) != 2
            or cnp.PyArray_DIMS(slots_i)[1] != 3 or not cnp.PyArray_IS_C_CONTIGUOUS(slots_i)
            or not cnp.PyArray_ISNOTSWAPPED(slots_i) or not cnp.PyArray_ISALIGNED(slots_i)):
        raise ValueError("slots must be an aligned C-contiguous int64 array of three columns")
    cdef const tk_op *ops = table.ops
    cdef int nops = table.nops
    cdef const tk_slot *slots = <const tk_slot *> cnp.PyArray_DATA(slots_i)
    cdef int64_t i
    cdef double *scratch = NULL
    cdef int nt
    cdef int64_t chunk, nchunks
    cdef bint chunked = nops == 1 and scratch_per_thread == 0
    nt = nthreads if nthreads > 0 else tk_max_threads()
    if nbatch < nt:
        nt = <int> max(nbatch, 1)
    if scratch_per_thread > 0:
        scratch = <double *> malloc(nt * scratch_per_thread * sizeof(double) + 64)
        if scratch == NULL:
            raise MemoryError()
    # more chunks than threads, handed out dynamically: a core busy with another
    # process must not hold up the whole op (static halves would)
    nchunks = min(nbatch, 8 * nt) if nt > 1 else 1
    chunk = (nbatch + nchunks - 1) // nchunks
    nchunks = (nbatch + chunk - 1) // chunk if nbatch > 0 else 0
    try:
        with nogil:
            if chunked and nt <= 1:
                tk_run_chunk(ops, slots, 0, nbatch)
            elif chunked:
                for i in prange(nchunks, schedule="dynamic", num_threads=nt):
                    tk_run_chunk(ops, slots, i * chunk, min(nbatch, (i + 1) * chunk))
            elif nt <= 1:
                for i in range(nbatch):
                    tk_run_element(ops, nops, slots, i, _aligned(scratch))
            else:
                for i in prange(nbatch, schedule="dynamic", chunksize=16, num_threads=nt):
                    tk_run_element(ops, nops, slots, i,
                                   _aligned(scratch) + threadid() * scratch_per_thread
                                   if scratch != NULL else NULL)
    finally:
        free(scratch)


cdef inline double *_aligned(double *p) noexcept nogil:
    """The first 64-byte boundary at or after ``p``."""
    if p == NULL:
        return NULL
    return <double *> ((<intptr_t> p + 63) & ~(<intptr_t> 63))


# cblas_dgemm of an ILP64 OpenBLAS (``blasint`` is 64 bits; the enums are ints).
ctypedef void (*tk_dgemm)(int order, int transa, int transb, int64_t m, int64_t n, int64_t k,
                          double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                          double beta, double *c, int64_t ldc) noexcept nogil


def run_streamed(OpTable table not None, cnp.ndarray slots_i not None, const unsigned char[::1] fixed,
                 int64_t nbatch, int64_t chunk, int nthreads, intptr_t dgemm, tuple gemm not None,
                 cnp.ndarray buffers not None):
    """A streamed call (``planner.stream_blas``) with the GEMM inside the team: every thread
    takes chunks of ``chunk`` batch elements, computes their rows of the BLAS step into its own
    chunk buffer (one row of ``buffers``) with a single-threaded ``dgemm`` and then runs the
    table's one op on those elements from that buffer, so each chunk is read by the core that
    wrote it (issue 15: mttkrp on two cores; ``engine.run_call``'s loop runs the GEMM on
    OpenBLAS's threads and the ops on ours).

    ``fixed[r]`` marks the slot rows that address the chunk buffer; the others are moved to
    the chunk's first element, as ``engine.run_call`` moves them.  ``gemm`` is ``(transa,
    transb, rows per element, n, k, a, a's stride per element, lda, b, ldb)`` in CBLAS's
    row-major terms (addresses in bytes, the rest in elements), checked by the caller
    (``engine.Streamed``); OpenBLAS must be limited to one thread while this runs
    (``blas.one_thread``)."""
    if (cnp.PyArray_TYPE(slots_i) != cnp.NPY_INT64 or cnp.PyArray_NDIM(slots_i) != 2
            or cnp.PyArray_DIMS(slots_i)[1] != 3 or not cnp.PyArray_IS_C_CONTIGUOUS(slots_i)
            or not cnp.PyArray_ISNOTSWAPPED(slots_i) or not cnp.PyArray_ISALIGNED(slots_i)):
        raise ValueError("slots must be an aligned C-contiguous int64 array of three columns")
    cdef int64_t nslots = cnp.PyArray_DIMS(slots_i)[0]
    if table.nops != 1 or fixed.shape[0] != nslots or nslots < 3:
        raise ValueError("one op (the planner streams a BLAS step into a single op), one fixed flag per slot row")
    if chunk < 1 or dgemm == 0 or len(gemm) != 10:
        raise ValueError("run_streamed: a positive chunk, a dgemm and ten GEMM terms")
    cdef int transa = gemm[0], transb = gemm[1]
    cdef int64_t mrow = gemm[2], n = gemm[3], k = gemm[4], astep = gemm[6], lda = gemm[7], ldb = gemm[9]
    cdef const double *a = <const double *> <intptr_t> gemm[5]
    cdef const double *b = <const double *> <intptr_t> gemm[8]
    cdef int64_t nchunks = (nbatch + chunk - 1) // chunk if nbatch > 0 else 0
    cdef int nt = nthreads if nthreads > 0 else tk_max_threads()
    if nt > nchunks:
        nt = <int> max(nchunks, 1)
    if (cnp.PyArray_TYPE(buffers) != cnp.NPY_DOUBLE or cnp.PyArray_NDIM(buffers) != 2
            or not cnp.PyArray_IS_C_CONTIGUOUS(buffers) or cnp.PyArray_DIMS(buffers)[0] < nt
            or cnp.PyArray_DIMS(buffers)[1] < chunk * mrow * n):
        raise ValueError("one C-contiguous float64 chunk buffer per thread, each a chunk's rows")
    cdef int64_t width = cnp.PyArray_DIMS(buffers)[1]
    cdef double *bufs = <double *> cnp.PyArray_DATA(buffers)
    cdef const tk_slot *slots = <const tk_slot *> cnp.PyArray_DATA(slots_i)
    cdef tk_slot *mine = <tk_slot *> malloc(nt * nslots * sizeof(tk_slot))
    if mine == NULL:
        raise MemoryError()
    cdef tk_dgemm f = <tk_dgemm> dgemm
    cdef int64_t c
    try:
        with nogil:
            if nt <= 1:
                for c in range(nchunks):
                    _streamed_chunk(table.ops, slots, &fixed[0], nslots, mine, bufs,
                                    c * chunk, min(nbatch, (c + 1) * chunk), f, transa, transb,
                                    mrow, n, k, a, astep, lda, b, ldb)
            else:
                for c in prange(nchunks, schedule="dynamic", num_threads=nt):
                    _streamed_chunk(table.ops, slots, &fixed[0], nslots,
                                    mine + threadid() * nslots, bufs + threadid() * width,
                                    c * chunk, min(nbatch, (c + 1) * chunk), f, transa, transb,
                                    mrow, n, k, a, astep, lda, b, ldb)
    finally:
        free(mine)


cdef void _streamed_chunk(const tk_op *op, const tk_slot *slots, const unsigned char *fixed,
                          int64_t nslots, tk_slot *mine, double *buf, int64_t lo, int64_t hi,
                          tk_dgemm f, int transa, int transb, int64_t mrow, int64_t n, int64_t k,
                          const double *a, int64_t astep, int64_t lda, const double *b, int64_t ldb) noexcept nogil:
    cdef int64_t r
    f(101, transa, transb, (hi - lo) * mrow, n, k, 1.0, a + lo * astep, lda, b, ldb, 0.0, buf, n)
    for r in range(nslots):
        mine[r].bstride = slots[r].bstride
        mine[r].soff = slots[r].soff
        if fixed[r]:
            mine[r].base = buf
        elif slots[r].base != NULL:
            mine[r].base = slots[r].base + lo * slots[r].bstride
        else:
            mine[r].base = NULL
    tk_run_chunk(op, mine, 0, hi - lo)
