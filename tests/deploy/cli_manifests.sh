#!/bin/bash
# cli_manifests.sh - deploy/ checked with the tools Debian has (Docker and
# Kubernetes cannot run here): yamllint over deploy/k8s; kustomize (through
# kubectl, when installed) renders both kustomizations; systemd-analyze verify
# on the unit files (through a copy whose ExecStart points at the tree's
# deploy/mlc-service, since verify wants the binary to exist), any warning
# being a failure; systemd-sysusers on the sysusers.d file into a scratch
# root; shellcheck on the scripts (when installed); and check_manifests.py:
# the fields that matter in the manifests and Dockerfiles (images, probes,
# GPU requests, Secrets, the Job's --farm, the unit template).
#
# Usage: bash cli_manifests.sh BUILD_DIR SOURCE_DIR
# Exit 77 (skip) when yamllint or python3's yaml module is missing.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
SRC=$(cd "${2:?source dir}" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
D=$SRC/deploy

command -v yamllint >/dev/null || {
  echo "SKIP: yamllint is not installed (apt-get install yamllint)"
  exit 77
}
"$PY" -c "import yaml" 2>/dev/null || {
  echo "SKIP: python3 has no yaml module (apt-get install python3-yaml)"
  exit 77
}

TMP=$(mktemp -d /tmp/mlc-manifests-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# --- yamllint --------------------------------------------------------------------
yamllint -f parsable -c "$D/.yamllint" "$D/k8s" >"$TMP/yl" 2>&1 || fail "yamllint: $(cat "$TMP/yl")"
[ ! -s "$TMP/yl" ] || fail "yamllint warnings: $(cat "$TMP/yl")"

# --- kustomize --------------------------------------------------------------------
if command -v kubectl >/dev/null; then
  kubectl kustomize "$D/k8s" >"$TMP/farm.yaml" 2>"$TMP/err" || fail "kubectl kustomize deploy/k8s: $(cat "$TMP/err")"
  kubectl kustomize "$D/k8s/tune" >"$TMP/tune.yaml" 2>"$TMP/err" ||
    fail "kubectl kustomize deploy/k8s/tune: $(cat "$TMP/err")"
else
  echo "note: kubectl is not installed: the kustomizations are not rendered"
fi

# --- systemd ----------------------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
  U=$TMP/units
  mkdir -p "$U"
  for f in "$D"/systemd/*.service "$D"/systemd/*.target; do
    sed "s#/usr/local/bin/mlc-service#$D/mlc-service#g" "$f" >"$U/${f##*/}"
  done
  cp "$U/mlc-worker@.service" "$U/mlc-worker@0.service"
  (cd "$U" && systemd-analyze verify --man=no ./mlc-broker.service ./mlc-worker-cpu.service \
    ./mlc-worker@0.service ./mlc-tune.target) >"$TMP/sv" 2>&1 || fail "systemd-analyze verify failed"
  # verify exits 0 on unknown keys and bad values; every line it prints is a problem.
  [ ! -s "$TMP/sv" ] || fail "systemd-analyze verify: $(cat "$TMP/sv")"
  for u in mlc-broker.service mlc-worker-cpu.service mlc-worker@0.service; do
    (cd "$U" && systemd-analyze security --offline=yes --threshold=40 --no-pager "./$u") >"$TMP/sec" 2>&1 ||
      fail "systemd-analyze security $u: $(tail -1 "$TMP/sec")"
  done
else
  echo "note: systemd-analyze is not installed: unit files not verified"
fi
if command -v systemd-sysusers >/dev/null; then
  mkdir -p "$TMP/root/etc"
  systemd-sysusers --root="$TMP/root" "$D/systemd/mlc-tune.conf" >"$TMP/su" 2>&1 || fail "systemd-sysusers: $(cat "$TMP/su")"
  grep -q '^mlc:' "$TMP/root/etc/passwd" 2>/dev/null || fail "systemd-sysusers did not create the user mlc"
  grep -q '^render:.*mlc' "$TMP/root/etc/group" 2>/dev/null || fail "user mlc is not in the render group"
fi

# --- scripts ------------------------------------------------------------------------
if command -v shellcheck >/dev/null; then
  shellcheck "$D/local-farm" "$D/k8s/make-secrets" >"$TMP/sc" 2>&1 || fail "shellcheck: $(cat "$TMP/sc")"
  shellcheck -s sh "$D/mlc-service" >"$TMP/sc" 2>&1 || fail "shellcheck mlc-service: $(cat "$TMP/sc")"
else
  echo "note: shellcheck is not installed: scripts not linted"
fi
# mlc-service builds the command lines the units and images run: check them
# against a fake bin directory that prints its arguments.
mkdir -p "$TMP/fakebin"
for p in mlc-broker mlc-worker; do
  printf '#!/bin/sh\nprintf "%%s|" %s "$@" >&2\n' "$p" >"$TMP/fakebin/$p"
  chmod +x "$TMP/fakebin/$p"
done
# svc [VAR=VALUE...] -- ROLE ARGS...: mlc-service's command line in a clean environment.
svc() {
  local envs=()
  while [ "$1" != -- ]; do
    envs+=("$1")
    shift
  done
  shift
  env -i PATH=/usr/bin:/bin MLC_BIN="$TMP/fakebin" "${envs[@]}" sh "$D/mlc-service" "$@" 2>&1
}
want() { [ "$1" = "$2" ] || fail "mlc-service: got '$1', expected '$2'"; }
want "$(svc MLC_CURVE_KEYS=/k -- broker)" "mlc-broker|--bind|tcp://*:5555|--curve-keys|/k|"
want "$(svc MLC_BROKER=tcp://b:5555 'MLC_TARGET=cuda -arch=sm_90' MLC_CURVE_KEYS=/k MLC_WORKER_ID=h-gpu0 \
  MLC_HEALTH_FILE=/run/h -- worker --device 0)" \
  "mlc-worker|--broker|tcp://b:5555|--target|cuda -arch=sm_90|--curve-keys|/k|--key|worker|--worker-id|h-gpu0|--health-file|/run/h|--device|0|"
want "$(svc MLC_BROKER=tcp://b:5555 -- worker-cpu)" "mlc-worker|--broker|tcp://b:5555|--target|llvm|"
want "$(svc MLC_BROKER=tcp://b:5555 MLC_PREFETCH=4 -- worker-cpu)" \
  "mlc-worker|--broker|tcp://b:5555|--target|llvm|--prefetch|4|"
want "$(svc MLC_BROKER_BIND=tcp://0.0.0.0:6000,ipc:///x -- broker-health)" \
  "mlc-broker|stats|tcp://127.0.0.1:6000|--timeout|2000|"
want "$(svc MLC_BROKER_BIND=ipc:///run/b MLC_CURVE_KEYS=/k -- broker-health)" \
  "mlc-broker|stats|ipc:///run/b|--timeout|2000|--curve-keys|/k|"
want "$(svc MLC_HEALTH_FILE=/run/h -- worker-health --live)" "mlc-worker|health|/run/h|--live|"
svc -- worker >"$TMP/out"
grep -q "MLC_BROKER is not set" "$TMP/out" || fail "mlc-service worker without MLC_BROKER: $(cat "$TMP/out")"

# --- the fields that matter ------------------------------------------------------------
"$PY" "$SRC/tests/deploy/check_manifests.py" "$SRC" ${BUILD:+--build "$BUILD"} || fail "check_manifests.py"

if [ "$FAILS" -ne 0 ]; then
  echo "$FAILS check(s) failed" >&2
  exit 1
fi
echo "cli_manifests: all checks passed"
