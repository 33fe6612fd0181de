#!/usr/bin/python3
"""check_manifests.py SOURCE_DIR [--build BUILD_DIR]: the fields of deploy/ that
matter, checked without a cluster or a Docker daemon (tests/deploy/cli_manifests.sh
runs it). Prints one line per problem and exits 1 if there is any.

Kubernetes (deploy/k8s, deploy/k8s/tune): every container has an image with a
tag that is not :latest; the broker and every worker have readiness and
liveness probes, the broker's running `mlc-broker stats` (through mlc-service
broker-health) and the workers' `mlc-worker health` on a health file that lives
on an emptyDir; GPU workers request and limit nvidia.com/gpu: 1 / amd.com/gpu: 1;
every container has resource requests and limits; every Secret referenced
(volumes, secretKeyRef) is defined, with that key, in secrets.example.yaml and
by make-secrets; the Job's --farm points at the broker Service's port and its
--db is the mlc-db Secret; the CURVE key files each program looks for are
mounted. Dockerfiles: a debian:12 build stage and a debian:12-slim runtime
stage, a non-root USER, a HEALTHCHECK, an exec-form ENTRYPOINT; with --build,
every shared library the copied programs need comes from a package the runtime
stage installs. systemd: the GPU template sets CUDA_VISIBLE_DEVICES=%i and
passes --device 0; every unit runs as User=mlc, restarts on failure.
"""
import glob
import os
import re
import subprocess
import sys

import yaml

problems = []


def bad(where, what):
    problems.append(f"{where}: {what}")


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def kustomize_resources(kdir):
    docs = []
    k = load(os.path.join(kdir, "kustomization.yaml"))[0]
    for r in k.get("resources", []):
        for d in load(os.path.join(kdir, r)):
            docs.append((r, d))
    return k, docs


def pod_spec(doc):
    kind = doc["kind"]
    if kind in ("Deployment", "DaemonSet", "StatefulSet", "Job"):
        return doc["spec"]["template"]["spec"]
    return None


def containers(spec):
    return spec.get("initContainers", []) + spec.get("containers", [])


def env_value(c, name):
    for e in c.get("env", []):
        if e["name"] == name:
            return e.get("value", e.get("valueFrom"))
    return None


# ---------------------------------------------------------------- Kubernetes
def secrets_defined(src):
    """{name: set(keys)} from secrets.example.yaml, and from make-secrets' text."""
    example = {}
    for d in load(os.path.join(src, "deploy/k8s/secrets.example.yaml")):
        if d["kind"] == "Secret":
            example[d["metadata"]["name"]] = set(d.get("stringData", {})) | set(d.get("data", {}))
    made = {}
    text = open(os.path.join(src, "deploy/k8s/make-secrets")).read()
    for m in re.finditer(r"^\s*secret (\S+) (.*)$", text, re.M):
        made[m.group(1)] = {kv.split("=", 1)[0] for kv in m.group(2).split()}
    for m in re.finditer(r"name: (mlc-[a-z-]+)\\n.*?data:\\n  ([a-z.]+):", text):
        made[m.group(1)] = {m.group(2)}
    return example, made


def check_secret_refs(where, spec, example, made):
    refs = []  # (secret, key or None)
    for v in spec.get("volumes", []):
        if "secret" in v:
            refs += [(v["secret"]["secretName"], i["key"]) for i in v["secret"].get("items", [])] or [
                (v["secret"]["secretName"], None)]
        for s in v.get("projected", {}).get("sources", []):
            if "secret" in s:
                refs += [(s["secret"]["name"], i["key"]) for i in s["secret"].get("items", [])]
    for c in containers(spec):
        for e in c.get("env", []):
            ref = e.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                refs.append((ref["name"], ref["key"]))
    for name, key in refs:
        for label, table in (("secrets.example.yaml", example), ("make-secrets", made)):
            if name not in table:
                bad(where, f"Secret {name} is not defined in {label}")
            elif key and key not in table[name]:
                bad(where, f"Secret {name} has no key {key} in {label}")
    return refs


def check_container_basics(where, c):
    image = c.get("image", "")
    if not image:
        bad(where, f"container {c['name']}: no image")
    elif ":" not in image.rsplit("/", 1)[-1] and "@sha256:" not in image:
        bad(where, f"container {c['name']}: image {image} has no tag")
    elif image.endswith(":latest"):
        bad(where, f"container {c['name']}: image {image} is :latest")
    res = c.get("resources", {})
    for part in ("requests", "limits"):
        for r in ("cpu", "memory"):
            if r not in res.get(part, {}):
                bad(where, f"container {c['name']}: no resources.{part}.{r}")
    sc = c.get("securityContext", {})
    if sc.get("allowPrivilegeEscalation") is not False or sc.get("privileged"):
        bad(where, f"container {c['name']}: allowPrivilegeEscalation must be false, not privileged")


def probe_cmd(c, kind):
    p = c.get(kind)
    return p and p.get("exec", {}).get("command")


def check_worker(where, doc, gpu):
    spec = pod_spec(doc)
    c = spec["containers"][0]
    hf = env_value(c, "MLC_HEALTH_FILE")
    live, ready = probe_cmd(c, "livenessProbe"), probe_cmd(c, "readinessProbe")
    if live != ["mlc-worker", "health", hf, "--live"]:
        bad(where, f"liveness probe {live}: want mlc-worker health {hf} --live")
    if ready != ["mlc-worker", "health", hf]:
        bad(where, f"readiness probe {ready}: want mlc-worker health {hf}")
    hdir = os.path.dirname(hf or "/")
    mount = [m for m in c.get("volumeMounts", []) if m["mountPath"] == hdir]
    vol = mount and [v for v in spec["volumes"] if v["name"] == mount[0]["name"]]
    if not vol or "emptyDir" not in vol[0]:
        bad(where, f"the health file's directory {hdir} is not an emptyDir")
    if env_value(c, "MLC_BROKER") != "tcp://mlc-broker:5555":
        bad(where, "MLC_BROKER is not the broker Service (tcp://mlc-broker:5555)")
    res = c.get("resources", {})
    if gpu:
        for part in ("requests", "limits"):
            if res.get(part, {}).get(gpu) != 1:
                bad(where, f"resources.{part}.{gpu} is not 1")
        if c.get("args", [])[:2] != ["--device", "0"]:
            bad(where, "a GPU worker sees one GPU: args must pass --device 0")
    elif any("gpu" in r for part in res.values() for r in part):
        bad(where, "the CPU worker requests a GPU")
    if (doc["spec"]["template"]["spec"].get("terminationGracePeriodSeconds") or 30) < 60:
        bad(where, "terminationGracePeriodSeconds under 60: a running job cannot finish on SIGTERM")
    keys = env_value(c, "MLC_CURVE_KEYS")
    name = env_value(c, "MLC_KEY_NAME") or "worker"
    return keys, name


def check_k8s(src, example, made):
    kdir = os.path.join(src, "deploy/k8s")
    k, docs = kustomize_resources(kdir)
    kinds = {(d["kind"], d["metadata"]["name"]): (f, d) for f, d in docs}
    for f, d in docs:
        spec = pod_spec(d)
        if not spec:
            continue
        where = f"{f} {d['kind']}/{d['metadata']['name']}"
        for c in containers(spec):
            check_container_basics(where, c)
        check_secret_refs(where, spec, example, made)
        if not spec.get("securityContext", {}).get("runAsNonRoot"):
            bad(where, "the pod does not set runAsNonRoot")

    # The broker: probes on mlc-broker stats, the Service on 5555, its keys.
    f, broker = kinds.get(("Deployment", "mlc-broker"), (None, None))
    if not broker:
        bad("deploy/k8s", "no Deployment mlc-broker")
    else:
        c = broker["spec"]["template"]["spec"]["containers"][0]
        for kind in ("readinessProbe", "livenessProbe"):
            if probe_cmd(c, kind) != ["mlc-service", "broker-health"]:
                bad(f, f"broker {kind} is not `mlc-service broker-health` (mlc-broker stats)")
        if broker["spec"]["replicas"] != 1:
            bad(f, "more than one broker replica")
        paths = set()
        for v in broker["spec"]["template"]["spec"]["volumes"]:
            for s in v.get("projected", {}).get("sources", []):
                paths |= {i["path"] for i in s.get("secret", {}).get("items", [])}
        for need in ("server.key", "server.pub"):
            if need not in paths:
                bad(f, f"the broker's key directory has no {need}")
        if not any(p.startswith("workers/") for p in paths) or not any(p.startswith("clients/") for p in paths):
            bad(f, "the broker's key directory lists no workers/ or no clients/ keys")
    svc = kinds.get(("Service", "mlc-broker"), (None, None))[1]
    if not svc or [p["port"] for p in svc["spec"]["ports"]] != [5555]:
        bad("deploy/k8s", "no Service mlc-broker on port 5555")

    # Workers.
    for kind, name, gpu in (("DaemonSet", "mlc-worker-nvidia", "nvidia.com/gpu"),
                            ("DaemonSet", "mlc-worker-amd", "amd.com/gpu"),
                            ("Deployment", "mlc-worker-cpu", None)):
        f, d = kinds.get((kind, name), (None, None))
        if not d:
            bad("deploy/k8s", f"no {kind} {name}")
            continue
        keys, key_name = check_worker(f"{f} {kind}/{name}", d, gpu)
        spec = pod_spec(d)
        secret = [v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v]
        if keys and not (secret and f"{key_name}.key" in made.get(secret[0], set())
                         and "server.pub" in made.get(secret[0], set())):
            bad(f, f"worker key directory {keys}: needs server.pub and {key_name}.key")

    # PostgreSQL.
    f, pg = kinds.get(("StatefulSet", "mlc-postgres"), (None, None))
    if not pg or not pg["spec"].get("volumeClaimTemplates"):
        bad("deploy/k8s", "no StatefulSet mlc-postgres with a volumeClaimTemplate")
    elif not probe_cmd(pg["spec"]["template"]["spec"]["containers"][0], "readinessProbe"):
        bad(f, "PostgreSQL has no readiness probe")
    if ("Service", "mlc-postgres") not in kinds:
        bad("deploy/k8s", "no Service mlc-postgres")
    if example.get("mlc-db") and "uri" in example["mlc-db"]:
        uri = load(os.path.join(kdir, "secrets.example.yaml"))
        uri = [d for d in uri if d["metadata"]["name"] == "mlc-db"][0]["stringData"]["uri"]
        if "@mlc-postgres:5432/" not in uri:
            bad("secrets.example.yaml", "the mlc-db URI does not point at the mlc-postgres Service")

    # Images: each image the manifests run is named in kustomization images (for retagging).
    names = {i["name"] for i in k.get("images", [])}
    for f, d in docs:
        spec = pod_spec(d)
        for c in containers(spec) if spec else []:
            if c["image"].startswith("registry.example.com/") and c["image"].rsplit(":", 1)[0] not in names:
                bad(f, f"image {c['image']} is not in kustomization.yaml's images")


def check_job(src, example, made):
    tdir = os.path.join(src, "deploy/k8s/tune")
    k, docs = kustomize_resources(tdir)
    jobs = [(f, d) for f, d in docs if d["kind"] == "Job"]
    if len(jobs) != 1:
        bad("deploy/k8s/tune", "expected one Job")
        return
    f, job = jobs[0]
    spec = pod_spec(job)
    where = f"tune/{f}"
    for c in containers(spec):
        check_container_basics(where, c)
    check_secret_refs(where, spec, example, made)
    c = spec["containers"][0]
    argv = c.get("command", []) + c.get("args", [])
    opt = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    if argv[:1] != ["mlc-tune"]:
        bad(where, f"the Job runs {argv[:1]}, not mlc-tune")
    if opt.get("--farm") != "tcp://mlc-broker:5555":
        bad(where, f"--farm {opt.get('--farm')} is not the broker Service tcp://mlc-broker:5555")
    if opt.get("--db") != "$(MLC_DB)" or env_value(c, "MLC_DB") != {"secretKeyRef": {"name": "mlc-db", "key": "uri"}}:
        bad(where, "--db is not $(MLC_DB) from the mlc-db Secret's uri")
    for o in ("--target", "--trials"):
        if o not in opt:
            bad(where, f"no {o}")
    if opt.get("--key") and opt.get("--curve-keys"):
        secret = [v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v]
        if not secret or f"{opt['--key']}.key" not in made.get(secret[0], set()):
            bad(where, f"the tuner's key pair {opt['--key']}.key is not in its mounted Secret")
    workload = argv[1] if len(argv) > 1 else ""
    gen = {os.path.basename(x) for g in k.get("configMapGenerator", []) for x in g.get("files", [])}
    if os.path.basename(workload) not in gen:
        bad(where, f"the workload {workload} is not in the configMapGenerator ({sorted(gen)})")
    for g in gen:
        if not os.path.exists(os.path.join(tdir, g)):
            bad("deploy/k8s/tune", f"{g} is missing")
    init = [x.get("command") for x in spec.get("initContainers", [])]
    if ["mlc-db", "init"] not in init:
        bad(where, "no init container running mlc-db init")


# ---------------------------------------------------------------- Dockerfiles
def needed_packages(build, programs):
    """Debian packages of the shared libraries the programs need: readelf's
    NEEDED entries, resolved to paths by ldd, owned per dpkg -S."""
    pkgs = {}
    for p in programs:
        exe = os.path.join(build, p)
        out = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out))
        ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
        paths = dict(re.findall(r"^\s*(\S+) => (/\S+)", ldd, re.M))
        for lib in needed:
            if re.match(r"lib(asan|ubsan|lsan|tsan)\.so", lib):
                continue  # a sanitizer build of the tests; the images build Release
            path = paths.get(lib)
            candidates = [os.path.realpath(path), path] if path else []  # the file, not a -dev link
            candidates += [c.replace("/usr/lib/", "/lib/", 1) for c in candidates if c.startswith("/usr/lib/")]
            candidates += ["/usr" + c for c in candidates if c.startswith("/lib/")]
            for c in candidates:
                r = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
                if r.returncode == 0:
                    pkgs[lib] = r.stdout.split(":")[0]
                    break
    return pkgs


def check_dockerfiles(src, build):
    ddir = os.path.join(src, "deploy/docker")
    ignore = open(os.path.join(src, ".dockerignore")).read()
    for must in ("build-*", ".git"):
        if must not in ignore.split("\n"):
            bad(".dockerignore", f"does not exclude {must}")
    base = {"libc6", "libgcc-s1", "libstdc++6"}  # in debian:12-slim
    for path in sorted(glob.glob(os.path.join(ddir, "Dockerfile.*"))):
        name = os.path.basename(path)
        text = open(path).read()
        stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M)
        if not stages or stages[0] != ("debian:12", "build"):
            bad(name, f"the first stage is not `FROM debian:12 AS build`: {stages[:1]}")
        if len(stages) < 2 or stages[-1][0] != "debian:12-slim":
            bad(name, "the runtime stage is not debian:12-slim")
        runtime = text[text.rfind("\nFROM "):]
        users = re.findall(r"^USER\s+(\S+)", runtime, re.M)
        if not users or users[-1].split(":")[0] in ("root", "0"):
            bad(name, "the runtime stage does not switch to a non-root USER")
        if not re.search(r"^HEALTHCHECK\s", runtime, re.M):
            bad(name, "no HEALTHCHECK")
        if not re.search(r'^ENTRYPOINT\s+\[', runtime, re.M):
            bad(name, "no exec-form ENTRYPOINT")
        if "latest" in "".join(s[0] for s in stages):
            bad(name, "a :latest base image")
        m = re.search(r"apt-get install[^\n]*\\\n((?:.*\\\n)+)", runtime)
        installed = set(re.findall(r"\b([a-z0-9][a-z0-9.+-]+)\b", m.group(1))) if m else set()
        programs = re.findall(r"--target ([a-z -]+?) \\", text)
        programs = programs[0].split() if programs else []
        if not programs:
            bad(name, "cannot tell which programs it builds (cmake --build --target ...)")
        if build:
            for lib, pkg in needed_packages(build, programs).items():
                if pkg not in installed and pkg not in base:
                    bad(name, f"{lib} (package {pkg}) is not installed in the runtime stage")
        if "worker-cuda" in name and "NVIDIA_DRIVER_CAPABILITIES=compute" not in text:
            bad(name, "the CUDA image does not ask the container toolkit for the compute driver")
        if "worker-rocm" in name and "libamdhip64-5" not in installed:
            bad(name, "the ROCm image does not install libamdhip64-5")


# ---------------------------------------------------------------- systemd
def unit(path):
    sections, cur = {}, None
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            cur = sections.setdefault(line.strip("[]"), [])
        else:
            k, _, v = line.partition("=")
            cur.append((k, v))
    return sections


def check_systemd(src):
    sdir = os.path.join(src, "deploy/systemd")
    for path in glob.glob(os.path.join(sdir, "*.service")):
        name = os.path.basename(path)
        s = dict((k, v) for k, v in unit(path)["Service"])
        svc = unit(path)["Service"]
        if s.get("User") != "mlc":
            bad(name, "not User=mlc")
        if s.get("Restart") != "on-failure" or "RestartSec" not in s:
            bad(name, "no Restart=on-failure with RestartSec")
        if "StartLimitBurst" not in dict(unit(path)["Unit"]):
            bad(name, "no StartLimitBurst")
        if s.get("EnvironmentFile", "").lstrip("-") != "/etc/mlc-tune/mlc.env":
            bad(name, "EnvironmentFile is not /etc/mlc-tune/mlc.env")
        for h in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp"):
            if h not in s:
                bad(name, f"no {h}")
        env = [v for k, v in svc if k == "Environment"]
        if name == "mlc-worker@.service":
            if "CUDA_VISIBLE_DEVICES=%i" not in env:
                bad(name, "the template does not set CUDA_VISIBLE_DEVICES=%i")
            if "--device 0" not in s.get("ExecStart", ""):
                bad(name, "the template does not pass --device 0")
            allow = [v for k, v in svc if k == "DeviceAllow"]
            for dev in ("char-nvidia*", "char-kfd", "char-drm"):
                if not any(a.startswith(dev + " ") for a in allow):
                    bad(name, f"no DeviceAllow={dev}")
        if dict(unit(path).get("Install", [])).get("WantedBy") != "mlc-tune.target":
            bad(name, "not WantedBy=mlc-tune.target")
    env = open(os.path.join(sdir, "mlc.env")).read()
    for var in ("MLC_BROKER_BIND", "MLC_BROKER", "MLC_DB", "MLC_CURVE_KEYS", "MLC_TARGET"):
        if not re.search(rf"^{var}=", env, re.M):
            bad("mlc.env", f"no {var}")


def main():
    src = sys.argv[1]
    build = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--build" else None
    example, made = secrets_defined(src)
    if set(example) != set(made):
        bad("deploy/k8s", f"secrets.example.yaml defines {sorted(example)}, make-secrets {sorted(made)}")
    check_k8s(src, example, made)
    check_job(src, example, made)
    check_dockerfiles(src, build)
    check_systemd(src)
    for p in problems:
        print("check_manifests:", p)
    print(f"check_manifests: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
