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

#endif
