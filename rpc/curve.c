/*
 * curve.c - CURVE security for the farm (DESIGN.md, Wire protocol;
 * docs/farm.md, Keys): key files, rpc_keygen, CURVE on client sockets, and
 * the broker's side: a CURVE server socket and a ZAP handler that admits only
 * listed public keys.
 *
 * A key directory holds server.key/server.pub (the broker's pair),
 * clients/NAME.pub and workers/NAME.pub (the public keys admitted), and, on
 * a client or worker machine, that peer's own NAME.key. Key files are Z85
 * text: NAME.pub is the 40-character public key; NAME.key holds the secret
 * key and then the public key, each on its own line (the public half is
 * derived again from the secret when loading, so the two cannot disagree).
 *
 * The ZAP handler rereads the directory for every connection: a key added
 * to clients/ or workers/ is admitted, one removed is refused, without
 * restarting the broker (a handshake is once per connection, so this is
 * cheap). It tells the broker who is who through the ZAP user id
 * ("client:NAME", "worker:NAME", "server" for the broker's own key, which
 * `mlc-broker stats` uses), and the broker lets only workers send READY and
 * only clients SUBMIT.
 */
#include "rpc/rpc_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Key files                                                                 */
/* ------------------------------------------------------------------------ */

static bool is_z85_key(const char *s, size_t len) {
  static const char alphabet[] =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  if (len != RPC_Z85_LEN) return false;
  for (size_t i = 0; i < len; i++)
    if (!s[i] || !strchr(alphabet, s[i])) return false;
  return true;
}

int rpc_key_read(char key[RPC_Z85_LEN + 1], const char *path) {
  char *text = NULL;
  int st = mlc_read_file(&text, NULL, path);
  if (st != MLC_OK) return st;
  st = MLC_ENOTFOUND; /* no key line yet */
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    line += strspn(line, " \t\r");
    size_t len = strcspn(line, " \t\r");
    if (len == 0 || line[0] == '#') continue;
    if (is_z85_key(line, len)) {
      memcpy(key, line, RPC_Z85_LEN);
      key[RPC_Z85_LEN] = '\0';
      st = MLC_OK;
    } else {
      st = mlc_error_set(MLC_EPARSE, "%s: not a Z85 key (40 characters expected)", path);
    }
    break;
  }
  mlc_free(text);
  if (st == MLC_ENOTFOUND) st = mlc_error_set(MLC_EPARSE, "%s: no Z85 key (a line of 40 characters)", path);
  return st;
}

/* A key pair from path (NAME.key): the secret, and the public derived from it. */
static int pair_read(char pub[RPC_Z85_LEN + 1], char sec[RPC_Z85_LEN + 1], const char *path) {
  int st = rpc_key_read(sec, path);
  if (st != MLC_OK) return st;
  if (zmq_curve_public(pub, sec) != 0)
    return mlc_error_set(MLC_EPARSE, "%s: not a CURVE secret key: %s", path, zmq_strerror(zmq_errno()));
  return MLC_OK;
}

static bool name_ok(const char *name) {
  size_t n = strlen(name);
  return n > 0 && n < 128 && name[0] != '.' &&
         strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int write_new(const char *path, const char *text, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return mlc_error_set(MLC_EIO, "%s: %s", path, strerror(errno));
  size_t len = strlen(text);
  bool ok = write(fd, text, len) == (ssize_t)len;
  int e = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (!ok) {
    unlink(path);
    return mlc_error_set(MLC_EIO, "%s: %s", path, strerror(e));
  }
  return MLC_OK;
}

int rpc_keygen(const char *dir, const char *name) {
  if (!dir || !*dir || !name) return mlc_error_set(MLC_EINVAL, "keygen: a directory and a name are needed");
  if (!name_ok(name))
    return mlc_error_set(MLC_EINVAL, "keygen: bad key name '%s' (letters, digits, '.', '_', '-'; not starting with '.')",
                         name);
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) return mlc_error_set(MLC_EIO, "%s: %s", dir, strerror(errno));
  char pub[RPC_Z85_LEN + 1], sec[RPC_Z85_LEN + 1];
  if (zmq_curve_keypair(pub, sec) != 0)
    return mlc_error_set(MLC_EUNSUPPORTED, "keygen: %s (libzmq built without CURVE?)", zmq_strerror(zmq_errno()));
  char path_key[4096], path_pub[4096], text[256];
  snprintf(path_key, sizeof path_key, "%s/%s.key", dir, name);
  snprintf(path_pub, sizeof path_pub, "%s/%s.pub", dir, name);
  if (access(path_pub, F_OK) == 0) return mlc_error_set(MLC_EIO, "%s: exists (refusing to replace a key)", path_pub);
  snprintf(text, sizeof text, "# mlc-tune CURVE key pair '%s': secret key, then public key. Keep it private.\n%s\n%s\n",
           name, sec, pub);
  int st = write_new(path_key, text, 0600);
  if (st != MLC_OK) return st;
  snprintf(text, sizeof text, "# mlc-tune CURVE public key '%s'\n%s\n", name, pub);
  st = write_new(path_pub, text, 0644);
  if (st != MLC_OK) unlink(path_key);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Client side                                                               */
/* ------------------------------------------------------------------------ */

/* The only NAME.key in dir other than server.key, into path. */
static int only_key(char *path, size_t cap, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return mlc_error_set(MLC_EIO, "%s: %s", dir, strerror(errno));
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".key") == 0 && e->d_name[0] != '.') {
      if (n++ == 0) snprintf(path, cap, "%s/%s", dir, e->d_name);
    }
  }
  closedir(d);
  if (n == 1) return MLC_OK;
  return mlc_error_set(MLC_EINVAL, "%s: %s key pair (NAME.key) to authenticate with; name one", dir,
                       n ? "more than one" : "no");
}

/* Where the key pair `name` is: dir/NAME.key, dir/clients/NAME.key,
 * dir/workers/NAME.key; with no name dir/server.key or the only NAME.key. */
static int pair_path(char *path, size_t cap, const char *dir, const char *name) {
  if (!name) {
    snprintf(path, cap, "%s/server.key", dir);
    return access(path, R_OK) == 0 ? MLC_OK : only_key(path, cap, dir);
  }
  if (!name_ok(name)) return mlc_error_set(MLC_EINVAL, "bad key name '%s'", name);
  static const char *const subdirs[] = {"", "clients/", "workers/"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, cap, "%s/%s%s.key", dir, subdirs[i], name);
    if (access(path, R_OK) == 0) return MLC_OK;
  }
  return mlc_error_set(MLC_ENOTFOUND, "%s: no key pair '%s' (looked for %s.key in it, clients/ and workers/)", dir,
                       name, name);
}

static int set_key(void *sock, int opt, const char *z85, const char *what) {
  if (zmq_setsockopt(sock, opt, z85, RPC_Z85_LEN) == 0) return MLC_OK;
  return mlc_error_set(MLC_EIO, "setting the CURVE %s: %s", what, zmq_strerror(zmq_errno()));
}

int rpc_curve_client(void *sock, const char *dir, const char *name) {
  char path[4096], server[RPC_Z85_LEN + 1], pub[RPC_Z85_LEN + 1], sec[RPC_Z85_LEN + 1];
  snprintf(path, sizeof path, "%s/server.pub", dir);
  int st = rpc_key_read(server, path);
  if (st == MLC_OK) st = pair_path(path, sizeof path, dir, name);
  if (st == MLC_OK) st = pair_read(pub, sec, path);
  if (st == MLC_OK) st = set_key(sock, ZMQ_CURVE_SERVERKEY, server, "server key");
  if (st == MLC_OK) st = set_key(sock, ZMQ_CURVE_PUBLICKEY, pub, "public key");
  if (st == MLC_OK) st = set_key(sock, ZMQ_CURVE_SECRETKEY, sec, "secret key");
  return st;
}

/* ------------------------------------------------------------------------ */
/* Server side                                                               */
/* ------------------------------------------------------------------------ */

int rpc_curve_server(void *sock, const char *dir) {
  char path[4096], pub[RPC_Z85_LEN + 1], sec[RPC_Z85_LEN + 1];
  snprintf(path, sizeof path, "%s/server.key", dir);
  int st = pair_read(pub, sec, path);
  if (st != MLC_OK) return st;
  int one = 1;
  if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
      zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "mlc", 3) != 0)
    return mlc_error_set(MLC_EIO, "making a CURVE server: %s", zmq_strerror(zmq_errno()));
  return set_key(sock, ZMQ_CURVE_SECRETKEY, sec, "secret key");
}

struct rpc_zap {
  pthread_t thread;
  void *sock; /* REP on inproc://zeromq.zap.01 */
  char dir[4096];
};

/* Looks key (Z85) up among the dir/SUB/NAME.pub files; fills user "ROLE:NAME". */
static bool listed_in(const char *dir, const char *sub, const char *role, const char *key, char *user, size_t cap) {
  char path[4096 + 32];
  snprintf(path, sizeof path, "%s/%s", dir, sub);
  DIR *d = opendir(path);
  if (!d) return false;
  bool found = false;
  struct dirent *e;
  while (!found && (e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len <= 4 || strcmp(e->d_name + len - 4, ".pub") != 0 || e->d_name[0] == '.') continue;
    char file[sizeof path + 256], k[RPC_Z85_LEN + 1];
    snprintf(file, sizeof file, "%s/%s", path, e->d_name);
    if (rpc_key_read(k, file) == MLC_OK && strcmp(k, key) == 0) {
      snprintf(user, cap, "%s:%.*s", role, (int)(len - 4), e->d_name);
      found = true;
    }
  }
  closedir(d);
  return found;
}

/* Who key belongs to ("client:NAME", "worker:NAME", "server"), or false. */
static bool zap_lookup(const char *dir, const char *key, char *user, size_t cap) {
  char path[4096 + 32], pub[RPC_Z85_LEN + 1], sec[RPC_Z85_LEN + 1];
  snprintf(path, sizeof path, "%s/server.key", dir);
  if (pair_read(pub, sec, path) == MLC_OK && strcmp(pub, key) == 0) {
    snprintf(user, cap, "server");
    return true;
  }
  return listed_in(dir, "clients", "client", key, user, cap) || listed_in(dir, "workers", "worker", key, user, cap);
}

static void frame_str(char *dst, size_t cap, zmq_msg_t *m) {
  size_t n = zmq_msg_size(m) < cap - 1 ? zmq_msg_size(m) : cap - 1;
  memcpy(dst, zmq_msg_data(m), n);
  dst[n] = '\0';
}

/* Answers one ZAP request (RFC 27): frames version, request id, domain,
 * address, identity, mechanism, credentials. */
static void zap_answer(struct rpc_zap *z, zmq_msg_t *f, int n) {
  char version[8] = "", address[128] = "", mechanism[16] = "", key[RPC_Z85_LEN + 1] = "", user[160] = "";
  if (n >= 6) {
    frame_str(version, sizeof version, &f[0]);
    frame_str(address, sizeof address, &f[3]);
    frame_str(mechanism, sizeof mechanism, &f[5]);
  }
  bool curve = n >= 7 && strcmp(mechanism, "CURVE") == 0 && zmq_msg_size(&f[6]) == 32;
  if (curve) zmq_z85_encode(key, zmq_msg_data(&f[6]), 32);
  bool ok = curve && zap_lookup(z->dir, key, user, sizeof user);
  if (!ok && curve)
    MLC_WARN("broker: refused a connection from %s: CURVE key %s is not listed in %s/clients or %s/workers",
             address[0] ? address : "?", key, z->dir, z->dir);
  else if (!ok)
    MLC_WARN("broker: refused a connection from %s: mechanism %s (CURVE required)", address[0] ? address : "?",
             mechanism[0] ? mechanism : "?");
  const char *status = ok ? "200" : "400", *text = ok ? "OK" : "key not listed";
  zmq_send(z->sock, "1.0", 3, ZMQ_SNDMORE);
  if (n >= 2) zmq_send(z->sock, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), ZMQ_SNDMORE);
  else zmq_send(z->sock, "", 0, ZMQ_SNDMORE);
  zmq_send(z->sock, status, 3, ZMQ_SNDMORE);
  zmq_send(z->sock, text, strlen(text), ZMQ_SNDMORE);
  zmq_send(z->sock, user, strlen(user), ZMQ_SNDMORE);
  zmq_send(z->sock, "", 0, 0);
}

static void *zap_main(void *arg) {
  struct rpc_zap *z = arg;
  pthread_setname_np(pthread_self(), "mlc-broker-zap");
  for (;;) {
    zmq_msg_t f[8];
    int n = 0;
    bool more = true, dead = false;
    while (more) {
      zmq_msg_t scratch, *m = n < 8 ? &f[n] : &scratch;
      zmq_msg_init(m);
      if (zmq_msg_recv(m, z->sock, 0) < 0) {
        zmq_msg_close(m);
        dead = zmq_errno() != EINTR;
        break;
      }
      more = zmq_msg_more(m);
      if (m == &scratch) zmq_msg_close(m);
      else n++;
    }
    if (!dead && !more) zap_answer(z, f, n);
    for (int i = 0; i < n; i++) zmq_msg_close(&f[i]);
    if (dead) break; /* the context is shutting down */
  }
  zmq_close(z->sock);
  return NULL;
}

int rpc_zap_start(rpc_zap_t **out, void *ctx, const char *dir) {
  *out = NULL;
  struct rpc_zap *z = mlc_calloc(1, sizeof *z);
  if (!z) return mlc_error_set(MLC_ENOMEM, "out of memory");
  snprintf(z->dir, sizeof z->dir, "%s", dir);
  z->sock = zmq_socket(ctx, ZMQ_REP);
  int linger = 0;
  if (!z->sock || zmq_setsockopt(z->sock, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      zmq_bind(z->sock, "inproc://zeromq.zap.01") != 0) {
    int st = mlc_error_set(MLC_EIO, "starting the ZAP handler: %s", zmq_strerror(zmq_errno()));
    if (z->sock) zmq_close(z->sock);
    mlc_free(z);
    return st;
  }
  if (pthread_create(&z->thread, NULL, zap_main, z) != 0) {
    zmq_close(z->sock);
    mlc_free(z);
    return mlc_error_set(MLC_EIO, "starting the ZAP handler thread");
  }
  *out = z;
  return MLC_OK;
}

void rpc_zap_stop(rpc_zap_t *z) {
  if (!z) return;
  pthread_join(z->thread, NULL);
  mlc_free(z);
}
