/*
 * gpu.c - the runtime's GPU calls (runtime.h, "GPUs") on top of the driver
 * tables of gpu_cuda.c and gpu_hip.c: lazy loading of the driver (once per
 * kind, the outcome remembered), device numbers checked, the device made
 * current on the calling thread, the module/function cache generated host
 * code launches through, the calling thread's stream per device, event
 * timers and the L2 flush.
 *
 * The cache: a kernel is found by (kind, device, image address, image size,
 * a fingerprint of the image, kernel name), in a chained hash table under
 * one mutex; a miss loads the image as a module on that device (one module
 * per image and device, whatever its kernels) and looks the function up.
 * Entries live as long as the process, as the contract says; the size and
 * the fingerprint (64 bytes sampled across the image) make an image that
 * reuses a freed one's address miss rather than run the old code, and
 * mlc_rt_gpu_unload_image drops an image's modules for a holder that frees
 * it (a JIT).
 *
 * fork: CUDA's state does not survive fork(). A child forked after a driver
 * was loaded gets an error naming that from every call instead of a hang or
 * a crash inside the driver (pthread_atfork marks it).
 */
#include "gpu_priv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KIND_CUDA, KIND_ROCM, NKINDS };
enum { NBUCKETS = 256, FINGERPRINT_SAMPLES = 64 };
/* Bytes the L2 flush writes when the device does not say its L2's size. */
#define FLUSH_DEFAULT_BYTES ((uint64_t)64 << 20)

typedef struct {
  const rt_gpu_driver_t *drv;
  pthread_mutex_t lock;    /* loading, the flush buffers */
  atomic_int state;        /* 0 not tried, 1 usable, -1 unusable (why) */
  atomic_bool forked;      /* this process is a child forked after the load */
  char why[MLC_RT_ERROR_MAX];
  int32_t ndevices;
  void *scratch[MLC_RT_GPU_MAX_DEVICES]; /* L2 flush buffers */
  uint64_t scratch_bytes[MLC_RT_GPU_MAX_DEVICES];
  atomic_uint flush_round;
} gpu_kind_t;

static gpu_kind_t kinds[NKINDS] = {
    [KIND_CUDA] = {.drv = &rt_gpu_cuda_driver, .lock = PTHREAD_MUTEX_INITIALIZER},
    [KIND_ROCM] = {.drv = &rt_gpu_hip_driver, .lock = PTHREAD_MUTEX_INITIALIZER},
};

static _Thread_local void *streams[NKINDS][MLC_RT_GPU_MAX_DEVICES];

/* ------------------------------------------------------------------------ */
/* Loading the driver                                                        */
/* ------------------------------------------------------------------------ */

void *rt_gpu_dlopen(const char *const *names, const char *env, const char *what, const char **used, char *why,
                    size_t len) {
  const char *chosen = env ? getenv(env) : NULL;
  if (chosen && *chosen) {
    void *lib = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
    if (lib) *used = chosen;
    else snprintf(why, len, "no %s driver (%s, from %s)", what, dlerror(), env);
    return lib;
  }
  char first[512] = "";
  for (int i = 0; names[i]; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      *used = names[i];
      return lib;
    }
    const char *e = dlerror();
    if (!first[0]) snprintf(first, sizeof first, "%s", e ? e : names[i]);
  }
  snprintf(why, len, "no %s driver (%s)", what, first);
  return NULL;
}

int rt_gpu_dlsyms(void *lib, const char *lib_name, const char *what, const char *const *names,
                  const size_t *offsets, int n, void *table, char *why, size_t len) {
  for (int i = 0; i < n; i++) {
    void *sym = dlsym(lib, names[i]);
    if (!sym) {
      snprintf(why, len, "no %s driver (%s: no symbol %s)", what, lib_name, names[i]);
      return -1;
    }
    memcpy((char *)table + offsets[i], &sym, sizeof sym); /* POSIX: a function's address */
  }
  return 0;
}

static void on_fork_child(void) {
  for (int k = 0; k < NKINDS; k++)
    if (atomic_load(&kinds[k].state) == 1) atomic_store(&kinds[k].forked, true);
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, on_fork_child); }

static gpu_kind_t *kind_of(int32_t kind) {
  if (kind == MLC_RT_GPU_CUDA) return &kinds[KIND_CUDA];
  if (kind == MLC_RT_GPU_ROCM) return &kinds[KIND_ROCM];
  mlc_rt_error("unknown GPU kind %d (2: CUDA, 10: ROCm)", (int)kind);
  return NULL;
}

/* Loads k's driver and counts its devices; k->lock held. */
static void load(gpu_kind_t *k) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, register_fork_handler);
  if (k->drv->load(k->why, sizeof k->why) != 0) {
    atomic_store(&k->state, -1);
    return;
  }
  int32_t n = 0;
  if (k->drv->device_count(&n) != 0) {
    snprintf(k->why, sizeof k->why, "%s driver: %s", k->drv->name, mlc_last_error());
  } else if (n <= 0) {
    snprintf(k->why, sizeof k->why, "%s driver: no device", k->drv->name);
  } else {
    k->ndevices = n < MLC_RT_GPU_MAX_DEVICES ? n : MLC_RT_GPU_MAX_DEVICES;
    atomic_store(&k->state, 1);
    return;
  }
  atomic_store(&k->state, -1);
}

/* The kind's state, loading its driver on first use; NULL with the error. */
static gpu_kind_t *usable(int32_t kind) {
  gpu_kind_t *k = kind_of(kind);
  if (!k) return NULL;
  if (atomic_load(&k->forked)) {
    mlc_rt_error("%s was initialised before this process was forked; a forked child cannot use it "
                 "(initialise the GPU in the process that uses it)",
                 k->drv->name);
    return NULL;
  }
  if (atomic_load(&k->state) == 0) {
    pthread_mutex_lock(&k->lock);
    if (atomic_load(&k->state) == 0) load(k);
    pthread_mutex_unlock(&k->lock);
  }
  if (atomic_load(&k->state) == 1) return k;
  mlc_rt_error("%s", k->why);
  return NULL;
}

static int check_device(const gpu_kind_t *k, int32_t device) {
  if (device >= 0 && device < k->ndevices) return 0;
  return mlc_rt_error("%s device %d does not exist (%d device%s: 0..%d)", k->drv->name, (int)device,
                      (int)k->ndevices, k->ndevices == 1 ? "" : "s", (int)k->ndevices - 1);
}

/* The kind's state with device made current on this thread; NULL with the
 * error. */
static gpu_kind_t *on_device(int32_t kind, int32_t device) {
  gpu_kind_t *k = usable(kind);
  if (!k || check_device(k, device) != 0 || k->drv->activate(device) != 0) return NULL;
  return k;
}

static void *stream_of(const gpu_kind_t *k, int32_t device) { return streams[k - kinds][device]; }

int32_t mlc_rt_gpu_init(int32_t kind) { return usable(kind) ? 0 : -1; }

int32_t mlc_rt_gpu_device_count(int32_t kind, int32_t *count) {
  if (!count) return mlc_rt_error("mlc_rt_gpu_device_count: NULL count");
  *count = 0;
  gpu_kind_t *k = usable(kind);
  if (!k) return -1;
  *count = k->ndevices;
  return 0;
}

int32_t mlc_rt_gpu_device_props(int32_t kind, int32_t device, mlc_rt_gpu_props_t *out) {
  if (!out) return mlc_rt_error("mlc_rt_gpu_device_props: NULL output");
  memset(out, 0, sizeof *out);
  gpu_kind_t *k = usable(kind);
  if (!k || check_device(k, device) != 0) return -1;
  if (k->drv->props(device, out) == 0) return 0;
  memset(out, 0, sizeof *out);
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Memory, streams                                                           */
/* ------------------------------------------------------------------------ */

int32_t mlc_rt_gpu_alloc(int32_t kind, int32_t device, uint64_t bytes, void **out) {
  if (!out) return mlc_rt_error("mlc_rt_gpu_alloc: NULL output");
  *out = NULL;
  gpu_kind_t *k = on_device(kind, device);
  if (!k) return -1;
  if (bytes == 0) return 0; /* nothing to allocate: NULL */
  if (k->drv->alloc(bytes, out) == 0) return 0;
  char msg[MLC_RT_ERROR_MAX];
  mlc_rt_error_copy(msg, sizeof msg);
  *out = NULL;
  return mlc_rt_error("%s (%llu bytes on device %d)", msg, (unsigned long long)bytes, (int)device);
}

int32_t mlc_rt_gpu_free(int32_t kind, int32_t device, void *ptr) {
  if (!ptr) return 0;
  gpu_kind_t *k = on_device(kind, device);
  return k ? k->drv->release(ptr) : -1;
}

static int32_t copy(int32_t kind, int32_t device, void *dst, const void *src, uint64_t bytes, bool to_device) {
  if (bytes == 0) return 0;
  if (!dst || !src)
    return mlc_rt_error("mlc_rt_gpu_copy_to_%s: NULL %s", to_device ? "device" : "host", dst ? "source" : "destination");
  gpu_kind_t *k = on_device(kind, device);
  return k ? k->drv->copy(dst, src, bytes, to_device) : -1;
}

int32_t mlc_rt_gpu_copy_to_device(int32_t kind, int32_t device, void *dst, const void *src, uint64_t bytes) {
  return copy(kind, device, dst, src, bytes, true);
}

int32_t mlc_rt_gpu_copy_to_host(int32_t kind, int32_t device, void *dst, const void *src, uint64_t bytes) {
  return copy(kind, device, dst, src, bytes, false);
}

int32_t mlc_rt_gpu_sync(int32_t kind, int32_t device) {
  gpu_kind_t *k = on_device(kind, device);
  return k ? k->drv->sync(stream_of(k, device)) : -1;
}

/* Needs no driver: a stream is only remembered (out-of-range kinds or
 * devices are ignored; the next call on them reports the problem). */
void mlc_rt_gpu_set_stream(int32_t kind, int32_t device, void *stream) {
  int k = kind == MLC_RT_GPU_CUDA ? KIND_CUDA : kind == MLC_RT_GPU_ROCM ? KIND_ROCM : -1;
  if (k >= 0 && device >= 0 && device < MLC_RT_GPU_MAX_DEVICES) streams[k][device] = stream;
}

/* ------------------------------------------------------------------------ */
/* The module cache and launches                                             */
/* ------------------------------------------------------------------------ */

typedef struct {
  const void *image;
  uint64_t size, print;
  int32_t kind, device;
} image_key_t;

typedef struct rt_module {
  image_key_t key;
  void *handle;
  struct rt_module *next;
} rt_module_t;

typedef struct rt_function {
  image_key_t key;
  rt_module_t *module;
  char *name;
  void *handle;
  uint32_t shared_allowed; /* dynamic shared bytes the driver was told about */
  struct rt_function *next;
} rt_function_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_function_t *buckets[NBUCKETS];
static rt_module_t *modules;

/* FNV-1a over FINGERPRINT_SAMPLES bytes spread evenly over the image. */
static uint64_t fingerprint(const void *image, uint64_t size) {
  const unsigned char *p = image;
  uint64_t h = 1469598103934665603ull;
  for (uint64_t i = 0; i < FINGERPRINT_SAMPLES; i++) {
    h ^= p[(size - 1) * i / (FINGERPRINT_SAMPLES - 1)];
    h *= 1099511628211ull;
  }
  return h;
}

static bool same_image(const image_key_t *a, const image_key_t *b) {
  return a->image == b->image && a->size == b->size && a->print == b->print && a->kind == b->kind &&
         a->device == b->device;
}

static size_t bucket_of(const image_key_t *key, const char *name) {
  uint64_t h = (uint64_t)(uintptr_t)key->image ^ key->print ^ ((uint64_t)key->device << 32) ^ (uint64_t)key->kind;
  for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return (size_t)(h ^ h >> 29) % NBUCKETS;
}

/* The module holding key's image on its device, loaded on first use. */
static rt_module_t *module_for(const gpu_kind_t *k, const image_key_t *key) {
  for (rt_module_t *m = modules; m; m = m->next)
    if (same_image(&m->key, key)) return m;
  rt_module_t *m = calloc(1, sizeof *m);
  if (!m) {
    mlc_rt_error("out of memory");
    return NULL;
  }
  if (k->drv->module_load(key->image, &m->handle) != 0) {
    free(m);
    return NULL;
  }
  m->key = *key;
  m->next = modules;
  modules = m;
  return m;
}

/* The function `name` of key's image; cache_lock held. */
static rt_function_t *function_for(const gpu_kind_t *k, const image_key_t *key, const char *name) {
  size_t b = bucket_of(key, name);
  for (rt_function_t *f = buckets[b]; f; f = f->next)
    if (same_image(&f->key, key) && strcmp(f->name, name) == 0) return f;
  rt_module_t *m = module_for(k, key);
  if (!m) return NULL;
  rt_function_t *f = calloc(1, sizeof *f);
  char *copy = f ? strdup(name) : NULL;
  if (!copy) {
    free(f);
    mlc_rt_error("out of memory");
    return NULL;
  }
  if (k->drv->function(m->handle, name, &f->handle) != 0) {
    free(copy);
    free(f);
    return NULL;
  }
  f->key = *key;
  f->module = m;
  f->name = copy;
  f->next = buckets[b];
  buckets[b] = f;
  return f;
}

/* The kernel's handle, ready for shared_bytes of dynamic shared memory. */
static void *kernel_handle(const gpu_kind_t *k, const image_key_t *key, const char *name, uint32_t shared_bytes) {
  pthread_mutex_lock(&cache_lock);
  rt_function_t *f = function_for(k, key, name);
  void *handle = NULL;
  if (f && shared_bytes > f->shared_allowed && k->drv->allow_shared(f->handle, shared_bytes) == 0)
    f->shared_allowed = shared_bytes;
  if (f && shared_bytes <= f->shared_allowed) handle = f->handle;
  pthread_mutex_unlock(&cache_lock);
  return handle;
}

static int32_t launch_failed(const char *kernel, const uint32_t grid[3], const uint32_t block[3], uint32_t shared) {
  char msg[MLC_RT_ERROR_MAX];
  mlc_rt_error_copy(msg, sizeof msg);
  return mlc_rt_error("kernel %s (grid %ux%ux%u, block %ux%ux%u, %u bytes of dynamic shared memory): %s", kernel,
                      grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, msg);
}

int32_t mlc_rt_gpu_launch(int32_t kind, int32_t device, const void *image, uint64_t image_size, const char *kernel,
                          const uint32_t grid[3], const uint32_t block[3], uint32_t dynamic_shared_bytes,
                          void **args) {
  if (!image || image_size == 0 || !kernel || !grid || !block)
    return mlc_rt_error("mlc_rt_gpu_launch: NULL or empty argument (image, kernel, grid or block)");
  for (int d = 0; d < 3; d++)
    if (grid[d] == 0 || block[d] == 0)
      return mlc_rt_error("kernel %s: grid %ux%ux%u or block %ux%ux%u has a zero dimension", kernel, grid[0],
                          grid[1], grid[2], block[0], block[1], block[2]);
  gpu_kind_t *k = on_device(kind, device);
  if (!k) return -1;
  image_key_t key = {image, image_size, fingerprint(image, image_size), kind, device};
  void *fn = kernel_handle(k, &key, kernel, dynamic_shared_bytes);
  if (!fn || k->drv->launch(fn, grid, block, dynamic_shared_bytes, stream_of(k, device), args) != 0)
    return launch_failed(kernel, grid, block, dynamic_shared_bytes);
  return 0;
}

void mlc_rt_gpu_unload_image(const void *image) {
  pthread_mutex_lock(&cache_lock);
  for (size_t b = 0; b < NBUCKETS; b++) {
    for (rt_function_t **p = &buckets[b]; *p;) {
      rt_function_t *f = *p;
      if (f->key.image != image) {
        p = &f->next;
        continue;
      }
      *p = f->next;
      free(f->name);
      free(f);
    }
  }
  for (rt_module_t **p = &modules; *p;) {
    rt_module_t *m = *p;
    if (m->key.image != image) {
      p = &m->next;
      continue;
    }
    *p = m->next;
    gpu_kind_t *k = kind_of(m->key.kind);
    /* A module of a forked-away driver is only forgotten. */
    if (k && !atomic_load(&k->forked) && k->drv->activate(m->key.device) == 0) k->drv->module_unload(m->handle);
    free(m);
  }
  pthread_mutex_unlock(&cache_lock);
}

/* ------------------------------------------------------------------------ */
/* Timers and the L2 flush                                                   */
/* ------------------------------------------------------------------------ */

struct mlc_rt_gpu_timer {
  int32_t kind, device;
  void *start, *stop;
};

static void timer_free(const gpu_kind_t *k, mlc_rt_gpu_timer_t *t) {
  char msg[MLC_RT_ERROR_MAX]; /* destroying must not hide the first error */
  mlc_rt_error_copy(msg, sizeof msg);
  if (t->start) k->drv->event_destroy(t->start);
  if (t->stop) k->drv->event_destroy(t->stop);
  mlc_rt_error_set_str(msg);
  free(t);
}

int32_t mlc_rt_gpu_timer_start(int32_t kind, int32_t device, mlc_rt_gpu_timer_t **out) {
  if (!out) return mlc_rt_error("mlc_rt_gpu_timer_start: NULL output");
  *out = NULL;
  gpu_kind_t *k = on_device(kind, device);
  if (!k) return -1;
  mlc_rt_gpu_timer_t *t = calloc(1, sizeof *t);
  if (!t) return mlc_rt_error("mlc_rt_gpu_timer_start: out of memory");
  t->kind = kind;
  t->device = device;
  if (k->drv->event_create(&t->start) != 0 || k->drv->event_create(&t->stop) != 0 ||
      k->drv->event_record(t->start, stream_of(k, device)) != 0) {
    timer_free(k, t);
    return -1;
  }
  *out = t;
  return 0;
}

int32_t mlc_rt_gpu_timer_stop(mlc_rt_gpu_timer_t *t, double *secs) {
  if (secs) *secs = 0;
  if (!t) return mlc_rt_error("mlc_rt_gpu_timer_stop: NULL timer");
  gpu_kind_t *k = kind_of(t->kind);
  /* The events belong to the device's context: make it current again. */
  if (!on_device(t->kind, t->device)) {
    free(t); /* the driver is unusable here (forked): the events cannot be destroyed */
    return -1;
  }
  float ms = 0;
  int rc = k->drv->event_record(t->stop, stream_of(k, t->device));
  if (rc == 0) rc = k->drv->event_elapsed_ms(t->start, t->stop, &ms);
  if (rc == 0 && secs) *secs = (double)ms * 1e-3;
  timer_free(k, t);
  return rc == 0 ? 0 : -1;
}

/* The device's flush buffer (twice its L2: a single pass the L2's size can
 * leave lines of the kernel's data behind with non-LRU replacement). */
static void *flush_buffer(gpu_kind_t *k, int32_t device, uint64_t *bytes) {
  pthread_mutex_lock(&k->lock);
  if (!k->scratch[device]) {
    mlc_rt_gpu_props_t p;
    memset(&p, 0, sizeof p);
    uint64_t n = k->drv->props(device, &p) == 0 && p.l2_cache_bytes > 0 ? 2 * (uint64_t)p.l2_cache_bytes
                                                                        : FLUSH_DEFAULT_BYTES;
    if (k->drv->alloc(n, &k->scratch[device]) == 0) k->scratch_bytes[device] = n;
    else k->scratch[device] = NULL;
  }
  void *buf = k->scratch[device];
  *bytes = k->scratch_bytes[device];
  pthread_mutex_unlock(&k->lock);
  return buf;
}

int32_t mlc_rt_gpu_flush_l2(int32_t kind, int32_t device) {
  gpu_kind_t *k = on_device(kind, device);
  if (!k) return -1;
  uint64_t bytes = 0;
  void *buf = flush_buffer(k, device, &bytes);
  if (!buf) return -1;
  uint8_t value = (uint8_t)(atomic_fetch_add(&k->flush_round, 1) + 1);
  return k->drv->memset_async(buf, value, bytes, stream_of(k, device));
}
