/*
 * bench_db.c - the tuning-record database under load (issue 5, "Benchmark"):
 * inserts 100,000 records in batches of 64, then runs 10,000 `best`
 * queries, on the file backend and on PostgreSQL, and prints inserts per
 * second and the query latency's p50 and p99. With --big, PostgreSQL gets
 * 1,000,000 records first (the size the `best` p99 target is stated for).
 *
 * Targets on the development machine: 100,000 records/s into the file
 * backend, 20,000/s into PostgreSQL, `best` under 1 ms p99 with 1,000,000
 * records in PostgreSQL. They are printed beside the measurements; the exit
 * status does not depend on them (a benchmark informs, tests decide).
 *
 * PostgreSQL runs in a throwaway cluster started the way the tests start
 * theirs (tests/database/pg_cluster.h: initdb + pg_ctl on a temp dir, a unix
 * socket, fsync off, as the `postgres` user when run as root); it is skipped
 * with the reason when no server binaries are installed. Note fsync=off: the
 * PostgreSQL numbers leave out the disk flush the file backend pays for.
 *
 * Records look like a tuning run's: 64 workloads x 2 targets, a trace of a
 * few hundred bytes, 3 run times, one record in 10 a failure.
 *
 *   bench_db [--big] [--records N] [--queries Q] [--only file|postgresql] [--dir DIR]
 *            [--pg-insert unnest|pipeline|copy|all]
 */
#include "database/database.h"
#include "tests/database/pg_cluster.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 64
#define NWORKLOADS 64
#define NTARGETS 2

static const char *const TARGETS[NTARGETS] = {"llvm -mcpu=sapphirerapids -num-cores=56", "cuda -arch=sm_90"};
static const char *const DEVICES[NTARGETS] = {"llvm-sapphirerapids", "cuda-sm90"};

typedef struct {
  int64_t nrecords, nqueries;
  bool big;
  const char *only; /* NULL: both backends */
  const char *dir;  /* parent of the file database's temp dir */
  const char *pg_insert; /* NULL: the backend's default; "all": each in turn */
} options_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t workload_key(int w) { return 0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1); }

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

/* Record i: workload and target spread evenly, a trace of a realistic size
 * made distinct by its decisions, times that differ per record. */
static db_record_t make_record(mlc_arena_t *arena, int64_t i, double *runs) {
  int w = (int)(i % NWORKLOADS), t = (int)((i / NWORKLOADS) % NTARGETS);
  bool failed = i % 10 == 9;
  for (int j = 0; j < 3; j++) runs[j] = 1e-5 * (double)(1 + (i * 7919) % 100003) * (1.0 + 0.01 * j);
  db_record_t r = {
      .workload_key = workload_key(w),
      .target = TARGETS[t],
      .device_key = DEVICES[t],
      .device_json = "{\"model\":\"bench\"}",
      .trace_json = mlc_arena_printf(
          arena,
          "[[[\"GetBlock\",[],[\"C\",\"main\"],[\"b0\"]],[\"GetLoops\",[\"b0\"],[],[\"l1\",\"l2\",\"l3\"]],"
          "[\"SamplePerfectTile\",[\"l1\"],[4,16],[\"v4\",\"v5\",\"v6\",\"v7\"]],"
          "[\"Split\",[\"l1\",\"v4\",\"v5\",\"v6\",\"v7\"],[1,0],[\"l8\",\"l9\",\"l10\",\"l11\"]],"
          "[\"SamplePerfectTile\",[\"l2\"],[4,16],[\"v12\",\"v13\",\"v14\",\"v15\"]],"
          "[\"Split\",[\"l2\",\"v12\",\"v13\",\"v14\",\"v15\"],[1,0],[\"l16\",\"l17\",\"l18\",\"l19\"]],"
          "[\"Parallel\",[\"l8\"],[],[]],[\"Vectorize\",[\"l19\"],[],[]]],"
          "[[2,[%d,%d,4,1]],[4,[%d,1,2,%d]]]]",
          (int)(i % 97), (int)(i / 97 % 89), (int)(i / 8633 % 83), (int)(i / 716539 % 79 + 1)),
      .nrun_secs = failed ? 0 : 3,
      .run_secs = failed ? NULL : runs,
      .error_kind = failed ? MLC_ERROR_KIND_BUILD : MLC_ERROR_KIND_NONE,
      .error_msg = failed ? "bench: a failed build" : "",
      .compiler_version = MLC_VERSION,
      .worker_id = "bench-worker",
      .created_at_us = 1700000000000000LL + i,
  };
  db_record_finish(&r);
  return r;
}

static int commit_workloads(db_t *db) {
  for (int w = 0; w < NWORKLOADS; w++) {
    char name[32];
    snprintf(name, sizeof name, "bench_%d", w);
    int st = db_commit_workload(db, workload_key(w), name, "# bench workload\n");
    if (st != MLC_OK) return st;
  }
  return MLC_OK;
}

/* Inserts records [from, to) in batches; returns the seconds the commits
 * took (building the records is the caller's work and is not counted), or
 * a negative value on error (printed). */
static double insert_range(db_t *db, int64_t from, int64_t to) {
  db_record_t batch[BATCH];
  double runs[BATCH][3], spent = 0;
  mlc_arena_t *arena = mlc_arena_new();
  for (int64_t i = from; i < to;) {
    int n = 0;
    while (i < to && n < BATCH) {
      batch[n] = make_record(arena, i++, runs[n]);
      n++;
    }
    double t0 = now_s();
    int st = db_commit_records(db, batch, n);
    spent += now_s() - t0;
    if (st != MLC_OK) {
      fprintf(stderr, "bench_db: commit: %s\n", mlc_error_last());
      mlc_arena_free(arena);
      return -1;
    }
    if (mlc_arena_bytes(arena) > (64u << 20)) { /* bound memory on --big */
      mlc_arena_free(arena);
      arena = mlc_arena_new();
    }
  }
  mlc_arena_free(arena);
  return spent;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, int64_t n, double p) {
  int64_t i = (int64_t)ceil(p * (double)n) - 1;
  return sorted[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* Runs nq best queries over random (workload, target); p50 and p99 in
 * seconds. False on an error (printed) or a query that found nothing. */
static bool time_best(db_t *db, int64_t nq, double *p50, double *p99) {
  double *lat = mlc_malloc(sizeof *lat * (size_t)nq);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 42);
  bool ok = lat != NULL;
  for (int64_t q = 0; ok && q < nq; q++) {
    int w = (int)mlc_rng_below(&rng, NWORKLOADS), t = (int)mlc_rng_below(&rng, NTARGETS);
    db_result_t *res = NULL;
    bool found = false;
    double t0 = now_s();
    int st = db_best(db, &res, &found, workload_key(w), TARGETS[t]);
    lat[q] = now_s() - t0;
    db_result_free(res);
    if (st != MLC_OK || !found) {
      fprintf(stderr, "bench_db: best: %s\n", st != MLC_OK ? mlc_error_last() : "no record found");
      ok = false;
    }
  }
  if (ok) {
    qsort(lat, (size_t)nq, sizeof *lat, cmp_double);
    *p50 = percentile(lat, nq, 0.50);
    *p99 = percentile(lat, nq, 0.99);
  }
  mlc_free(lat);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* One backend                                                               */
/* ------------------------------------------------------------------------ */

static void print_row(const char *backend, int64_t nrecords, double inserts_per_s, double target_ips, double p50,
                      double p99, double target_p99) {
  printf("%-20s %9lld %12.0f %-9s %9.1f %9.1f %-9s\n", backend, (long long)nrecords, inserts_per_s,
         target_ips <= 0 ? "" : inserts_per_s >= target_ips ? "(ok)" : "(SLOW)", p50 * 1e6, p99 * 1e6,
         target_p99 <= 0 ? "" : p99 <= target_p99 ? "(ok)" : "(SLOW)");
}

/* Inserts nrecords into an empty db, then queries. */
static bool bench_db(db_t *db, const char *name, int64_t nrecords, int64_t nq, double target_ips, double target_p99) {
  if (commit_workloads(db) != MLC_OK) {
    fprintf(stderr, "bench_db: %s: %s\n", name, mlc_error_last());
    return false;
  }
  double dt = insert_range(db, 0, nrecords), p50 = 0, p99 = 0;
  if (dt < 0 || !time_best(db, nq, &p50, &p99)) return false;
  print_row(name, nrecords, (double)nrecords / dt, target_ips, p50, p99, target_p99);
  fflush(stdout);
  return true;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

/* The peer for the file backend: the disk itself. Appends the bytes the
 * backend wrote (records.jsonl's size) to a new file in the same directory,
 * in as many batches, with one fdatasync per batch, as a bare append-only
 * log with the same guarantee would; returns that as records per second. */
static double disk_floor(const char *dir, int64_t nrecords) {
  char rec[600], path[600];
  snprintf(rec, sizeof rec, "%s/db/records.jsonl", dir);
  snprintf(path, sizeof path, "%s/floor.bin", dir);
  struct stat st;
  int64_t nbatches = (nrecords + BATCH - 1) / BATCH;
  if (stat(rec, &st) != 0 || nbatches <= 0) return -1;
  size_t chunk = (size_t)(st.st_size / nbatches);
  char *buf = malloc(chunk ? chunk : 1);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
  if (!buf || fd < 0) {
    free(buf);
    if (fd >= 0) close(fd);
    return -1;
  }
  memset(buf, 'x', chunk);
  double t0 = now_s();
  bool ok = true;
  for (int64_t i = 0; ok && i < nbatches; i++)
    ok = write(fd, buf, chunk) == (ssize_t)chunk && fdatasync(fd) == 0;
  double dt = now_s() - t0;
  close(fd);
  free(buf);
  unlink(path);
  return ok && dt > 0 ? (double)nrecords / dt : -1;
}

/* The file backend in a temp dir; also times reopening (the lazy load). */
static bool bench_file(const options_t *o) {
  char dir[512], uri[600];
  snprintf(dir, sizeof dir, "%s/mlc-bench-db-XXXXXX", o->dir);
  if (!mkdtemp(dir)) {
    perror("bench_db: mkdtemp");
    return false;
  }
  snprintf(uri, sizeof uri, "file:%s/db", dir);
  db_t *db = NULL;
  bool ok = db_open(&db, uri) == MLC_OK && db_init(db) == MLC_OK;
  if (!ok) fprintf(stderr, "bench_db: %s: %s\n", uri, mlc_error_last());
  ok = ok && bench_db(db, "file", o->nrecords, o->nqueries, 100000, 0);
  db_close(db);
  db = NULL;
  if (ok) {
    double floor_ips = disk_floor(dir, o->nrecords);
    if (floor_ips > 0)
      printf("%-20s %9lld %12.0f           (the disk: same bytes, same batches, one fdatasync each)\n",
             "  peer: bare append", (long long)o->nrecords, floor_ips);
  }
  if (ok) { /* a new process's first query: open, load lazily, answer */
    double t0 = now_s(), p50, p99;
    ok = db_open(&db, uri) == MLC_OK && time_best(db, 1, &p50, &p99);
    printf("%-20s first best in a new process (open and lazy load): %.1f ms\n", "file", (now_s() - t0) * 1e3);
    db_close(db);
  }
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return ok;
}

/* A fresh database in the cluster for one insert method, so each method
 * starts from an empty table. */
static bool create_database(const pg_cluster_t *c, const char *name, char *uri, size_t len) {
  PGconn *conn = PQconnectdb(c->conninfo);
  char sql[128];
  snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
  PGresult *res = PQstatus(conn) == CONNECTION_OK ? PQexec(conn, sql) : NULL;
  bool ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
  if (!ok) fprintf(stderr, "bench_db: %s: %s", sql, PQerrorMessage(conn));
  PQclear(res);
  PQfinish(conn);
  snprintf(uri, len, "postgresql:///%s?host=%s&port=5432", name, c->dir);
  return ok;
}

/* One PostgreSQL run: method NULL is the backend's default insert method,
 * else MLC_PG_INSERT=method (the backend's knob for comparing them). */
static bool bench_pg_method(const options_t *o, const pg_cluster_t *c, const char *method) {
  char uri[512], label[64], dbname[64];
  if (method) setenv("MLC_PG_INSERT", method, 1);
  else if ((method = getenv("MLC_PG_INSERT")) && !*method) method = NULL;
  if (method && strspn(method, "abcdefghijklmnopqrstuvwxyz") != strlen(method)) {
    fprintf(stderr, "bench_db: unknown insert method '%s'\n", method);
    return false;
  }
  snprintf(label, sizeof label, "postgresql%s%s", method ? "/" : "", method ? method : "");
  snprintf(dbname, sizeof dbname, "bench_%s", method ? method : "default");
  if (!create_database(c, dbname, uri, sizeof uri)) return false;
  db_t *db = NULL;
  bool ok = db_open(&db, uri) == MLC_OK && db_init(db) == MLC_OK;
  if (!ok) fprintf(stderr, "bench_db: %s: %s\n", label, mlc_error_last());
  ok = ok && bench_db(db, label, o->nrecords, o->nqueries, 20000, 0);
  if (ok && o->big && o->nrecords < 1000000) {
    double dt = insert_range(db, o->nrecords, 1000000), p50 = 0, p99 = 0;
    ok = dt >= 0 && time_best(db, o->nqueries, &p50, &p99);
    if (ok) print_row(label, 1000000, (double)(1000000 - o->nrecords) / dt, 20000, p50, p99, 1e-3);
  }
  db_close(db);
  return ok;
}

static bool bench_postgresql(const options_t *o) {
  static const char *const all[] = {"unnest", "pipeline", "copy"};
  pg_cluster_t cluster;
  int started = pg_cluster_start(&cluster);
  if (started <= 0) return started == 0; /* skipped: reason printed */
  bool ok = true;
  if (o->pg_insert && strcmp(o->pg_insert, "all") == 0) {
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ok = bench_pg_method(o, &cluster, all[i]) && ok;
  } else {
    ok = bench_pg_method(o, &cluster, o->pg_insert);
  }
  pg_cluster_stop(&cluster);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

static int usage(int code) {
  fprintf(code ? stderr : stdout,
          "usage: bench_db [--big] [--records N] [--queries Q] [--only file|postgresql] [--dir DIR]\n"
          "                [--pg-insert unnest|pipeline|copy|all]\n"
          "  --big          also fill PostgreSQL to 1,000,000 records and query again\n"
          "  --records N    records inserted per backend (default 100000)\n"
          "  --queries Q    best queries per measurement (default 10000)\n"
          "  --dir DIR      where the file database's temp dir goes (default /tmp)\n"
          "  --pg-insert M  PostgreSQL's batch insert method (MLC_PG_INSERT); `all` runs\n"
          "                 each on a fresh database, to compare them\n");
  return code;
}

static bool parse_count(const char *s, int64_t *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || v < 1) return false;
  *out = v;
  return true;
}

int main(int argc, char **argv) {
  options_t o = {.nrecords = 100000, .nqueries = 10000, .dir = "/tmp"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0) return usage(0);
    if (strcmp(a, "--big") == 0) o.big = true;
    else if (strcmp(a, "--records") == 0 && v && parse_count(v, &o.nrecords)) i++;
    else if (strcmp(a, "--queries") == 0 && v && parse_count(v, &o.nqueries)) i++;
    else if (strcmp(a, "--only") == 0 && v && (!strcmp(v, "file") || !strcmp(v, "postgresql"))) o.only = argv[++i];
    else if (strcmp(a, "--dir") == 0 && v) o.dir = argv[++i];
    else if (strcmp(a, "--pg-insert") == 0 && v) o.pg_insert = argv[++i];
    else return usage(2);
  }
  mlc_log_set_program("bench_db");
  printf("%-20s %9s %12s %-9s %9s %9s\n", "backend", "records", "inserts/s", "", "best p50", "best p99");
  printf("%-20s %9s %12s %-9s %9s %9s\n", "", "", "", "", "(us)", "(us)");
  bool ok = true;
  if (!o.only || strcmp(o.only, "file") == 0) ok = bench_file(&o) && ok;
  if (!o.only || strcmp(o.only, "postgresql") == 0) ok = bench_postgresql(&o) && ok;
  printf("targets: file >= 100000 inserts/s; postgresql >= 20000 inserts/s, best p99 < 1000 us at 1,000,000 records\n");
  return ok ? 0 : 1;
}
