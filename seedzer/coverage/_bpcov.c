/*
 * _bpcov: one-shot int3 breakpoint coverage for one shared library (Linux x86-64).
 *
 * arm(base, offsets, hitmap) writes 0xCC at base+offsets[i] for every block whose hitmap byte is
 * 0, keeping the original bytes in a C array. The SIGTRAP handler finds the block by binary search,
 * puts the original byte back (through /proc/self/mem, so text pages stay read-only and threads
 * never race on page protections), rewinds RIP by one, marks hitmap[i] with an atomic exchange and,
 * when this process was the first to mark it anywhere, appends i to a per-process list that take()
 * drains. The hitmap may be shared memory, so forked children report into the parent's map.
 * After fork() the child reopens /proc/self/mem and starts with an empty list.
 * A SIGTRAP at an address that is not one of our breakpoints goes to the previous handler.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

typedef struct {
    int active;
    uintptr_t base, lo, hi;       /* lo/hi: first and one-past-last armed address */
    const uint64_t *offsets;      /* sorted block offsets (borrowed from the Python buffer) */
    Py_ssize_t n;
    volatile uint8_t *hitmap;     /* one byte per block, possibly shared between processes */
    uint8_t *orig;                /* original byte of every block (valid where armed[i]) */
    uint8_t *armed;               /* 1 where this process image got a breakpoint */
    uint32_t *fresh;              /* i+1 of blocks this process marked first; 0 = not yet written */
    Py_ssize_t nfresh, taken;
    long traps, foreign, armed_count;
    int memfd;                    /* /proc/self/mem, or -1: text stays writable while armed */
    Py_buffer offsets_buf, hitmap_buf;
    struct sigaction old_action;
} bpstate;

static bpstate g = {.memfd = -1};
static int atfork_registered = 0;

static Py_ssize_t find_block(uint64_t off) {
    Py_ssize_t lo = 0, hi = g.n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (g.offsets[mid] < off) lo = mid + 1; else hi = mid;
    }
    return (lo < g.n && g.offsets[lo] == off) ? lo : -1;
}

static void write_byte(uintptr_t addr, uint8_t value) {
    if (g.memfd >= 0 && pwrite(g.memfd, &value, 1, (off_t)addr) == 1) return;
    *(volatile uint8_t *)addr = value;  /* fallback mode: pages were left writable */
}

static void chain(int sig, siginfo_t *si, void *ctx) {
    __atomic_fetch_add(&g.foreign, 1, __ATOMIC_RELAXED);
    if (g.old_action.sa_flags & SA_SIGINFO) {
        if (g.old_action.sa_sigaction) g.old_action.sa_sigaction(sig, si, ctx);
        return;
    }
    if (g.old_action.sa_handler == SIG_IGN) return;
    if (g.old_action.sa_handler != SIG_DFL) { g.old_action.sa_handler(sig); return; }
    signal(SIGTRAP, SIG_DFL);  /* default action on return: the process dies of SIGTRAP */
    raise(SIGTRAP);
}

static void on_trap(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = (ucontext_t *)ctx;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
    if (__atomic_load_n(&g.active, __ATOMIC_ACQUIRE) && pc >= g.lo && pc < g.hi) {
        Py_ssize_t i = find_block((uint64_t)(pc - g.base));
        if (i >= 0 && g.armed[i]) {
            write_byte(pc, g.orig[i]);  /* idempotent: another thread may have restored it already */
            uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
            __atomic_fetch_add(&g.traps, 1, __ATOMIC_RELAXED);
            if (__atomic_exchange_n(&g.hitmap[i], 1, __ATOMIC_ACQ_REL) == 0) {
                Py_ssize_t slot = __atomic_fetch_add(&g.nfresh, 1, __ATOMIC_ACQ_REL);
                __atomic_store_n(&g.fresh[slot], (uint32_t)(i + 1), __ATOMIC_RELEASE);
            }
            return;
        }
    }
    chain(sig, si, ctx);
}

static void after_fork_child(void) {
    if (!g.active) return;
    if (g.memfd >= 0) {
        close(g.memfd);  /* it still refers to the parent's memory */
        g.memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    }
    memset(g.fresh, 0, sizeof(uint32_t) * (size_t)g.nfresh);
    g.nfresh = g.taken = 0;
    g.traps = g.foreign = 0;
}

static int set_protection(int prot) {
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = g.lo & ~(uintptr_t)(page - 1);
    if (mprotect((void *)start, g.hi - start, prot) != 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    return 0;
}

static void release_state(void) {
    free(g.orig); free(g.armed); free(g.fresh);
    g.orig = g.armed = NULL; g.fresh = NULL;
    if (g.offsets_buf.obj) PyBuffer_Release(&g.offsets_buf);
    if (g.hitmap_buf.obj) PyBuffer_Release(&g.hitmap_buf);
    if (g.memfd >= 0) close(g.memfd);
    g.memfd = -1;
    g.n = 0;
}

static PyObject *bp_arm(PyObject *self, PyObject *args) {
    unsigned long long base;
    PyObject *offsets_obj, *hitmap_obj;
    int writable_text = 0;
    if (!PyArg_ParseTuple(args, "KOO|p", &base, &offsets_obj, &hitmap_obj, &writable_text)) return NULL;
    if (g.active) { PyErr_SetString(PyExc_RuntimeError, "already armed in this process; disarm() first"); return NULL; }
    memset(&g.offsets_buf, 0, sizeof(Py_buffer));
    memset(&g.hitmap_buf, 0, sizeof(Py_buffer));
    if (PyObject_GetBuffer(offsets_obj, &g.offsets_buf, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(hitmap_obj, &g.hitmap_buf, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        release_state(); return NULL;
    }
    g.n = g.offsets_buf.len / 8;
    g.offsets = (const uint64_t *)g.offsets_buf.buf;
    g.hitmap = (volatile uint8_t *)g.hitmap_buf.buf;
    if (g.offsets_buf.len % 8 || g.hitmap_buf.len < g.n || g.n == 0 || g.n >= UINT32_MAX) {
        release_state();
        PyErr_SetString(PyExc_ValueError, "offsets must be a non-empty uint64 buffer and hitmap at least one byte per offset");
        return NULL;
    }
    for (Py_ssize_t i = 1; i < g.n; i++)
        if (g.offsets[i] <= g.offsets[i - 1]) {
            release_state();
            PyErr_Format(PyExc_ValueError, "offsets are not sorted and unique at index %zd", i);
            return NULL;
        }
    g.base = (uintptr_t)base;
    g.lo = g.base + g.offsets[0];
    g.hi = g.base + g.offsets[g.n - 1] + 1;
    g.orig = calloc((size_t)g.n, 1);
    g.armed = calloc((size_t)g.n, 1);
    g.fresh = calloc((size_t)g.n, sizeof(uint32_t));
    if (!g.orig || !g.armed || !g.fresh) { release_state(); return PyErr_NoMemory(); }
    g.nfresh = g.taken = g.traps = g.foreign = g.armed_count = 0;
    g.memfd = writable_text ? -1 : open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    if (set_protection(PROT_READ | PROT_WRITE | PROT_EXEC) < 0) { release_state(); return NULL; }
    for (Py_ssize_t i = 0; i < g.n; i++) {
        volatile uint8_t *p = (volatile uint8_t *)(g.base + g.offsets[i]);
        if (g.hitmap[i] || *p == 0xCC) continue;
        g.orig[i] = *p;
        g.armed[i] = 1;
        g.armed_count++;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTRAP, &sa, &g.old_action) != 0) {
        set_protection(PROT_READ | PROT_EXEC);
        release_state();
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    __atomic_store_n(&g.active, 1, __ATOMIC_RELEASE);
    for (Py_ssize_t i = 0; i < g.n; i++)
        if (g.armed[i]) *(volatile uint8_t *)(g.base + g.offsets[i]) = 0xCC;
    if (g.memfd >= 0 && set_protection(PROT_READ | PROT_EXEC) < 0) return NULL;
    if (!atfork_registered) { pthread_atfork(NULL, NULL, after_fork_child); atfork_registered = 1; }
    return PyLong_FromLong(g.armed_count);
}

static PyObject *bp_take(PyObject *self, PyObject *noargs) {
    if (!g.active) return PyBytes_FromStringAndSize("", 0);
    Py_ssize_t end = __atomic_load_n(&g.nfresh, __ATOMIC_ACQUIRE), j = g.taken;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (end - j) * 4);
    if (!out) return NULL;
    uint32_t *dst = (uint32_t *)PyBytes_AS_STRING(out);
    Py_ssize_t k = 0;
    for (; j < end; j++, k++) {
        uint32_t v = __atomic_load_n(&g.fresh[j], __ATOMIC_ACQUIRE);
        if (v == 0) break;  /* a handler is still writing this slot; take it next time */
        dst[k] = v - 1;
    }
    g.taken = j;
    if (k * 4 != PyBytes_GET_SIZE(out)) _PyBytes_Resize(&out, k * 4);
    return out;
}

/* Put back the original byte of every armed block that is marked in the hitmap (or of all). */
static long restore(int all) {
    long restored = 0;
    int writable = 0;
    for (Py_ssize_t i = 0; i < g.n; i++) {
        uint8_t *p = (uint8_t *)(g.base + g.offsets[i]);
        if (!g.armed[i] || *p != 0xCC || (!all && !g.hitmap[i])) continue;
        if (!writable && g.memfd >= 0) {
            if (set_protection(PROT_READ | PROT_WRITE | PROT_EXEC) < 0) return -1;
            writable = 1;
        }
        *(volatile uint8_t *)p = g.orig[i];
        restored++;
    }
    if (writable && set_protection(PROT_READ | PROT_EXEC) < 0) return -1;
    return restored;
}

static PyObject *bp_refresh(PyObject *self, PyObject *noargs) {
    if (!g.active) return PyLong_FromLong(0);
    long n = restore(0);
    return n < 0 ? NULL : PyLong_FromLong(n);
}

static PyObject *bp_disarm(PyObject *self, PyObject *noargs) {
    if (!g.active) return PyLong_FromLong(0);
    long n = restore(1);
    if (n < 0) return NULL;
    if (g.memfd < 0 && set_protection(PROT_READ | PROT_EXEC) < 0) return NULL;
    sigaction(SIGTRAP, &g.old_action, NULL);
    __atomic_store_n(&g.active, 0, __ATOMIC_RELEASE);
    release_state();
    return PyLong_FromLong(n);
}

static PyObject *bp_stats(PyObject *self, PyObject *noargs) {
    return Py_BuildValue("{s:i,s:n,s:l,s:l,s:n,s:l,s:i}", "active", g.active, "blocks", g.n,
                         "armed", g.armed_count, "traps", g.traps, "new", g.nfresh, "foreign", g.foreign,
                         "memfd", g.memfd >= 0);
}

static PyMethodDef methods[] = {
    {"arm", bp_arm, METH_VARARGS, "arm(base, offsets, hitmap, writable_text=False) -> number of breakpoints written"},
    {"take", bp_take, METH_NOARGS, "take() -> bytes of uint32 block indices this process marked first since the last call"},
    {"refresh", bp_refresh, METH_NOARGS, "refresh() -> restore breakpoints of blocks other processes marked"},
    {"disarm", bp_disarm, METH_NOARGS, "disarm() -> remove every remaining breakpoint and the handler"},
    {"stats", bp_stats, METH_NOARGS, "stats() -> dict of counters"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bpcov", "int3 breakpoint coverage", -1, methods};

PyMODINIT_FUNC PyInit__bpcov(void) { return PyModule_Create(&module); }
