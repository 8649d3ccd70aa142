/*
 * SanitizerCoverage callbacks for TVM built with
 * -fsanitize-coverage=inline-8bit-counters,pc-table (see build_tvm_sancov.sh).
 *
 * Every instrumented shared object calls, from its constructors,
 *   __sanitizer_cov_8bit_counters_init(start, stop)   one 8-bit counter per edge, and
 *   __sanitizer_cov_pcs_init(begin, end)               (pc, flags) pairs, one pair per counter.
 * Without a definition of these two functions an instrumented libtvm cannot be loaded, so TVM's
 * libraries are linked against this small library (libseedzer_sancov.so). It records the ranges
 * and exposes them to Python through ctypes:
 *
 *   int    seedzer_sancov_modules(void)                          number of instrumented objects
 *   size_t seedzer_sancov_counters(int i, uint8_t **start)       counters of object i
 *   size_t seedzer_sancov_pcs(int i, const uintptr_t **start)    its pc table (2 words per counter)
 *   size_t seedzer_sancov_total(void)                            number of counters, all objects
 *   size_t seedzer_sancov_covered(void)                          counters that are non-zero
 *   void   seedzer_sancov_reset(void)                            zero every counter
 *
 * The counters live in each object's data section: after fork() a worker has its own copy, so a
 * worker must report what it reached (e.g. the indices of non-zero counters) to its parent.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SEEDZER_SANCOV_MAX_MODULES 64

struct sancov_module {
    uint8_t *counters;
    size_t n_counters;
    const uintptr_t *pcs;
    size_t n_pcs; /* pairs */
};

static struct sancov_module modules[SEEDZER_SANCOV_MAX_MODULES];
static int n_modules;
static int n_pc_tables;

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
    int i;
    if (start == stop) return;
    for (i = 0; i < n_modules; i++)
        if (modules[i].counters == start) return; /* constructors may run twice */
    if (n_modules == SEEDZER_SANCOV_MAX_MODULES) return;
    modules[n_modules].counters = start;
    modules[n_modules].n_counters = (size_t)(stop - start);
    n_modules++;
}

void __sanitizer_cov_pcs_init(const uintptr_t *begin, const uintptr_t *end) {
    int i;
    size_t pairs = (size_t)(end - begin) / 2;
    for (i = 0; i < n_pc_tables; i++)
        if (modules[i].pcs == begin) return;
    /* The pc table of an object is announced right after its counters and has as many entries. */
    if (n_pc_tables >= n_modules || modules[n_pc_tables].n_counters != pairs) return;
    modules[n_pc_tables].pcs = begin;
    modules[n_pc_tables].n_pcs = pairs;
    n_pc_tables++;
}

int seedzer_sancov_modules(void) { return n_modules; }

size_t seedzer_sancov_counters(int i, uint8_t **start) {
    if (i < 0 || i >= n_modules) return 0;
    *start = modules[i].counters;
    return modules[i].n_counters;
}

size_t seedzer_sancov_pcs(int i, const uintptr_t **start) {
    if (i < 0 || i >= n_modules || modules[i].pcs == NULL) return 0;
    *start = modules[i].pcs;
    return modules[i].n_pcs;
}

size_t seedzer_sancov_total(void) {
    size_t total = 0;
    int i;
    for (i = 0; i < n_modules; i++) total += modules[i].n_counters;
    return total;
}

size_t seedzer_sancov_covered(void) {
    size_t covered = 0, k;
    int i;
    for (i = 0; i < n_modules; i++)
        for (k = 0; k < modules[i].n_counters; k++) covered += modules[i].counters[k] != 0;
    return covered;
}

void seedzer_sancov_reset(void) {
    int i;
    for (i = 0; i < n_modules; i++) memset(modules[i].counters, 0, modules[i].n_counters);
}
