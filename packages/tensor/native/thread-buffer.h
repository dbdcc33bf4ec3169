/*
 * Scratch kept per thread between calls and grown on demand (OpenMP threads persist, and fresh
 * memory for every call would fault its pages in each time): *buf holds at least `bytes` bytes,
 * 64-byte aligned. Aborts when memory runs out (a kernel has no way to continue).
 */
#ifndef LOOP_THREAD_BUFFER_H
#define LOOP_THREAD_BUFFER_H
#include <stdlib.h>

static inline void *loop_grow(void **buf, size_t *cap, size_t bytes) {
  if (bytes > *cap) {
    free(*buf);
    *buf = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!*buf) abort();
    *cap = bytes;
  }
  return *buf;
}

/* Like loop_grow, but NULL when memory runs out (the old buffer kept), for callers that report
 * it: a call site's scratch that would otherwise be malloc'd and freed on every call — glibc
 * hands large blocks back to the kernel, and faulting them in again costs more than the work. */
static inline void *loop_keep(void **buf, size_t *cap, size_t bytes) {
  if (bytes > *cap) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) return NULL;
    free(*buf);
    *buf = p;
    *cap = bytes;
  }
  return *buf ? *buf : (*buf = aligned_alloc(64, 64));
}

/* the per-thread storage of one call site's kept scratch: LOOP_KEPT(x) → loop_keep(&x, &x_cap, …) */
#define LOOP_KEPT(name) \
  static __thread void *name;   \
  static __thread size_t name##_cap

#endif
