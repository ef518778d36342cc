"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-scheduler and
kube-controller-manager of one release, started from binaries built by
``scripts/build-control-plane.sh`` (never committed; kept in the user's cache folder).

What runs (Kubernetes ``KUBERNETES_VERSION``, etcd ``ETCD_VERSION``):

- etcd, one member on two free loopback ports, its data in the caller's folder,
  ``--unsafe-no-fsync`` (the data is thrown away; a write costs no disk flush).
- kube-apiserver on a free loopback port, TLS with a CA and serving certificate made
  at start (openssl), bearer tokens from a token file (``--token-auth-file``: an admin
  in ``system:masters``, the scheduler's and the controller manager's own users, and
  the caller's ``users`` with no group), ``--authorization-mode=Node,RBAC``,
  service-account keys made at start, and the admission plugins of
  ``ADMISSION_PLUGINS``: the release's defaults (kubernetes
  pkg/kubeapiserver/options/plugins.go ``DefaultOffAdmissionPlugins``) with
  ExtendedResourceToleration and NodeRestriction added, as managed clusters run them,
  and TaintNodesByCondition taken out (below).
- the DRA features of the release: resource.k8s.io/v1 (GA), and the feature gates
  that are on by default and not locked (``release_gates``: pinned on, so the
  simulation holds whatever a binary's defaults; the locked ones such as
  DRAExtendedResource, DRAPrioritizedList and DRAAdminAccess cannot be set off), and
  the caller's ``feature_gates`` (an alpha gate, with its API in ``runtime_config``).
- kube-scheduler with its default profile (the DynamicResources plugin among them).
- kube-controller-manager with every controller on by default but
  ``DISABLED_CONTROLLERS``: Deployment, ReplicaSet, StatefulSet, Job, CronJob,
  the resource claim controller, service accounts and their tokens, namespaces, the
  garbage collector, quotas and the rest run.

What does not run: kubelets, so no pod ever starts (the scheduler binds pods; they
stay Pending with a ``nodeName``), no container runtime, no device plugin and no DRA
driver (ResourceSlices are created through the API, as a driver would publish them),
no kube-proxy, CNI, DNS or cloud provider. Because no kubelet reports a node's
health, the two parts of Kubernetes that exist to act on that report are off: the
TaintNodesByCondition admission plugin (it taints every new Node
``node.kubernetes.io/not-ready:NoSchedule`` until the node lifecycle controller sees
the kubelet's Ready condition; kubernetes plugin/pkg/admission/nodetaint/admission.go)
and the node lifecycle controller (it would taint every Node unreachable when no
kubelet heartbeat comes). The scheduler and the controller manager talk to the API
server at ``--kube-api-qps`` 1000, which changes how fast, never where, pods land.

``find_binaries`` locates the binaries (``MissingControlPlane`` says how to build
them); ``start`` starts the four in one process group and waits until the API server
is ready (``/readyz``), the scheduler and the controller manager are healthy and the
controller manager has made the ``default`` ServiceAccount. The ``ControlPlane`` it
returns is a context manager; ``stop`` ends all four. They are also ended when the
parent process gets SIGTERM or SIGINT, at interpreter exit, and (Linux, when started
from the main thread) when the parent dies (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from dra_migrate import cache
from dra_migrate.k8s.versions import GATES

KUBERNETES_VERSION = "v1.37.2"
ETCD_VERSION = "v3.7.0"
MINOR = 37
BUILD_COMMAND = "bash scripts/build-control-plane.sh"
COMPONENTS = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager")

# kube-apiserver's default admission plugins in 1.37 (DefaultOffAdmissionPlugins'
# defaultOnPlugins), with ExtendedResourceToleration and NodeRestriction, as managed
# clusters run them, and without TaintNodesByCondition (no kubelet ever clears its taint).
ADMISSION_PLUGINS = (
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PodGroupProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodTopologyLabels",
    "NodeDeclaredFeatureValidator",
    "PodResizeValidator",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
)
DISABLED_ADMISSION_PLUGINS = ("TaintNodesByCondition",)
# kube-controller-manager's controllers off (kubernetes cmd/kube-controller-manager/names):
# without kubelets the node lifecycle controller would taint every Node unreachable.
DISABLED_CONTROLLERS = ("node-lifecycle-controller",)
API_QPS, API_BURST = 1000, 2000
SERVICE_CIDR = "10.96.0.0/16"
ISSUER = "https://kubernetes.default.svc.cluster.local"
ADMIN = "dra-migrate-admin"
SCHEDULER_USER = "system:kube-scheduler"  # bound by the bootstrap RBAC policy
CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
_STOP_ORDER = (("kube-scheduler", "kube-controller-manager"), ("kube-apiserver",), ("etcd",))
_LOG_TAIL = 40  # lines of a component's log in an error
_POLL = 0.1  # seconds between readiness checks


class ControlPlaneError(Exception):
    """The control plane could not be started or used (the message says why)."""


class MissingControlPlane(ControlPlaneError):
    """The binaries are not built (the message says the command that builds them)."""


@dataclass(frozen=True, slots=True)
class Binaries:
    folder: Path
    etcd: Path
    kube_apiserver: Path
    kube_scheduler: Path
    kube_controller_manager: Path


def default_folder() -> Path | None:
    """Where ``scripts/build-control-plane.sh`` keeps the binaries (None without a home)."""
    where = cache.location()
    return None if where is None else Path(where) / "control-plane" / KUBERNETES_VERSION


def find_binaries(folder: Path | None = None) -> Binaries:
    """The four binaries in ``folder``, else in the cache folder the build script writes."""
    where = folder if folder is not None else default_folder()
    how = (
        f"build them with `{BUILD_COMMAND}` (from a dra-migrate checkout; Go 1.26 or newer "
        f"and the Go module proxy), which keeps them in "
        f"{default_folder() or 'the user cache folder'}"
    )
    if where is None:
        raise MissingControlPlane(f"no home folder to find the control plane in: {how}")
    missing = [
        name
        for name in COMPONENTS
        if not ((where / name).is_file() and os.access(where / name, os.X_OK))
    ]
    if missing:
        raise MissingControlPlane(
            f"{', '.join(missing)} of Kubernetes {KUBERNETES_VERSION} not found in {where}: {how}"
        )
    return Binaries(
        where.resolve(),
        *(where.resolve() / name for name in COMPONENTS),
    )


def release_gates() -> dict[str, bool]:
    """The DRA feature gates of the release that are beta and on by default, pinned on
    (dra_migrate/k8s/versions.py ``GATES``, read from kubernetes
    pkg/features/kube_features.go). The GA ones are on and not set: a GA gate set, even
    to its default, is a warning in every component's log, and a locked one set off
    stops the component."""
    return {
        gate.name: True
        for gate in GATES.values()
        if gate.on is not None and gate.on <= MINOR and gate.stage(MINOR) == "beta"
    }


@dataclass(slots=True, eq=False)
class ControlPlane:
    """A running control plane. ``kubeconfig`` is the admin's (``system:masters``);
    ``kubeconfig_for(user)`` is one of the ``users`` given to ``start``."""

    binaries: Binaries
    workdir: Path
    server: str
    token: str
    ca_file: Path
    kubeconfig: Path
    etcd_url: str
    version: str  # the API server's gitVersion (GET /version)
    tokens: dict[str, str]  # user -> bearer token
    logs: dict[str, Path]  # component -> its log file
    ports: dict[str, int] = field(default_factory=dict)  # component -> its port
    _group: int = 0  # the process group of the four
    _processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _commands: dict[str, list[str]] = field(default_factory=dict)

    def __enter__(self) -> ControlPlane:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def kubeconfig_for(self, user: str) -> Path:
        if user not in self.tokens:
            raise ControlPlaneError(f"no user {user!r}: give it to start(users=...)")
        return self.workdir / f"kubeconfig-{_file_name(user)}"

    def alive(self) -> bool:
        return bool(self._processes) and all(p.poll() is None for p in self._processes.values())

    def stop(self, grace: float = 10.0) -> None:
        """End the four, clients first: SIGTERM to the scheduler and the controller
        manager, then the API server, then etcd (so none waits on one already gone;
        about a second in all), each given ``grace`` seconds; then SIGKILL to whatever
        is left in the process group. Nothing is removed: the folder the caller gave
        keeps the logs and etcd's data."""
        processes, self._processes = self._processes, {}
        _LIVE.discard(self)
        if not processes:
            return
        for names in _STOP_ORDER:
            batch = [processes[name] for name in names if name in processes]
            for process in batch:
                if process.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.terminate()
            deadline = time.monotonic() + grace
            for process in batch:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(max(0.0, deadline - time.monotonic()))
        _signal_group(self._group, processes.values(), signal.SIGKILL)
        for process in processes.values():
            process.wait()

    def compact_etcd(self) -> int:
        """Compact etcd to its current revision as kube-apiserver's own compactor does
        (kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/compact.go: the
        revision written to ``compact_rev_key``, then etcd compacted), so that every
        older resourceVersion, and the continue token of a list paged before, expires.
        The API server learns it through its watch of that key at once; its watch
        cache drops older list snapshots within 15 seconds (cacher/compactor.go
        ``compactorPollPeriod``). Returns the revision compacted to."""
        key = base64.b64encode(b"compact_rev_key").decode()
        # the put is itself a new revision: the one compacted to, so that every version
        # read before this call is older than the compaction. Its value is the revision
        # before it, which is what a reader of the key learns (the compacted one, or
        # one less: either way older than any version written after)
        current = _etcd(self.etcd_url, "/v3/kv/range", {"key": key})
        value = base64.b64encode(str(int(current["header"]["revision"]) + 1).encode()).decode()
        put = _etcd(self.etcd_url, "/v3/kv/put", {"key": key, "value": value})
        revision = int(put["header"]["revision"])
        _etcd(self.etcd_url, "/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision


def start(
    binaries: Binaries,
    workdir: Path,
    *,
    timeout: float = 90,
    feature_gates: Mapping[str, bool] | None = None,
    runtime_config: Iterable[str] = (),
    users: Iterable[str] = (),
) -> ControlPlane:
    """Start the control plane in ``workdir`` (made if missing; it must not hold one
    already) and wait, at most ``timeout`` seconds, until it is ready. On failure the
    four are stopped and ``ControlPlaneError`` carries the tail of the failing
    component's log; a port taken between its choice and its use is tried again."""
    workdir = workdir.resolve()
    if (workdir / "etcd-data").exists():
        raise ControlPlaneError(f"{workdir} already holds a control plane (etcd-data)")
    workdir.mkdir(parents=True, exist_ok=True)
    gates = {**release_gates(), **(feature_gates or {})}
    tokens = {
        ADMIN: secrets.token_urlsafe(32),
        SCHEDULER_USER: secrets.token_urlsafe(32),
        CONTROLLER_MANAGER_USER: secrets.token_urlsafe(32),
        **{user: secrets.token_urlsafe(32) for user in users},
    }
    pki = _make_pki(workdir / "pki")
    _write_token_file(workdir / "tokens.csv", tokens)
    deadline = time.monotonic() + timeout
    for attempt in range(3):
        if attempt:
            for stale in ("etcd-data",):
                _remove_tree(workdir / stale)
        ports = _free_ports(5)
        plane = _launch(binaries, workdir, pki, tokens, ports, gates, list(runtime_config))
        try:
            _wait_ready(plane, pki, deadline, timeout)
            return plane
        except _PortTaken:
            plane.stop()
        except BaseException:
            plane.stop()
            raise
    raise ControlPlaneError("no free loopback ports after three tries")


# --- starting ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Pki:
    ca: Path
    ca_key: Path
    cert: Path
    key: Path
    sa_key: Path
    sa_pub: Path


def _openssl(*args: str | Path, cwd: Path) -> None:
    try:
        done = subprocess.run(
            ["openssl", *map(str, args)], cwd=cwd, capture_output=True, timeout=60, check=False
        )
    except FileNotFoundError:
        raise ControlPlaneError(
            "openssl is not found: it makes the control plane's certificates"
        ) from None
    if done.returncode != 0:
        raise ControlPlaneError(
            f"openssl {args[0]} failed: {done.stderr.decode(errors='replace').strip()[-500:]}"
        )


def _make_pki(folder: Path) -> _Pki:
    """A CA, a serving certificate for 127.0.0.1 and localhost (every component serves
    with it), and the service-account signing key pair: P-256 keys, made in a moment."""
    folder.mkdir(mode=0o700, exist_ok=True)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
        "-subj", "/CN=dra-migrate control plane CA", cwd=folder,
    )  # fmt: skip
    _openssl(
        "req", "-new", *ec, "-keyout", "serving.key", "-out", "serving.csr",
        "-subj", "/CN=kube-apiserver", cwd=folder,
    )  # fmt: skip
    names = [
        "IP:127.0.0.1",
        "DNS:localhost",
        "DNS:kubernetes",
        "DNS:kubernetes.default",
        "DNS:kubernetes.default.svc",
        "DNS:kubernetes.default.svc.cluster.local",
    ]
    (folder / "serving.ext").write_text(
        f"subjectAltName={','.join(names)}\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth,clientAuth\n",
        encoding="utf-8",
    )
    _openssl(
        "x509", "-req", "-in", "serving.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "serving.crt", "-days", "30", "-extfile", "serving.ext",
        cwd=folder,
    )  # fmt: skip
    _openssl(
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-out", "sa.key", cwd=folder,
    )  # fmt: skip
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=folder)
    return _Pki(
        folder / "ca.crt",
        folder / "ca.key",
        folder / "serving.crt",
        folder / "serving.key",
        folder / "sa.key",
        folder / "sa.pub",
    )


def _write_token_file(path: Path, tokens: Mapping[str, str]) -> None:
    """kube-apiserver's static token file: token,user,uid,"groups" (the admin in
    system:masters; everyone else in no group but system:authenticated)."""
    lines = []
    for user, token in tokens.items():
        groups = ',"system:masters"' if user == ADMIN else ""
        lines.append(f"{token},{user},{user}{groups}\n")
    _write_private(path, "".join(lines))


def _write_private(path: Path, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(text)


def _file_name(user: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in user)


def _write_kubeconfig(path: Path, server: str, ca: Path, user: str, token: str) -> None:
    """A kubeconfig (JSON, which every kubeconfig reader takes) for one user."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "simulate", "cluster": {"server": server, "certificate-authority": str(ca)}}
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "simulate", "context": {"cluster": "simulate", "user": user}}],
        "current-context": "simulate",
    }
    _write_private(path, json.dumps(config, indent=2) + "\n")


def _free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now (a race with another process is caught at start)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _feature_gates(gates: Mapping[str, bool]) -> str:
    return ",".join(f"{name}={str(on).lower()}" for name, on in sorted(gates.items()))


def _launch(
    binaries: Binaries,
    workdir: Path,
    pki: _Pki,
    tokens: Mapping[str, str],
    ports: list[int],
    gates: Mapping[str, bool],
    runtime_config: list[str],
) -> ControlPlane:
    etcd_port, peer_port, api_port, scheduler_port, manager_port = ports
    etcd_url = f"http://127.0.0.1:{etcd_port}"
    server = f"https://127.0.0.1:{api_port}"
    logs = workdir / "logs"
    logs.mkdir(exist_ok=True)
    kubeconfigs = {}
    for user, token in tokens.items():
        kubeconfigs[user] = workdir / f"kubeconfig-{_file_name(user)}"
        _write_kubeconfig(kubeconfigs[user], server, pki.ca, user, token)
    serving = [
        f"--tls-cert-file={pki.cert}",
        f"--tls-private-key-file={pki.key}",
        "--bind-address=127.0.0.1",
    ]
    gate_flag = f"--feature-gates={_feature_gates(gates)}"
    scheduler_config = workdir / "kube-scheduler.yaml"
    scheduler_config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {
                    "kubeconfig": str(kubeconfigs[SCHEDULER_USER]),
                    "qps": API_QPS,
                    "burst": API_BURST,
                },
                "leaderElection": {"leaderElect": False},
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    commands = {
        "etcd": [
            str(binaries.etcd),
            "--name=simulate",
            f"--data-dir={workdir / 'etcd-data'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
            f"--initial-cluster=simulate=http://127.0.0.1:{peer_port}",
            "--unsafe-no-fsync",
        ],
        "kube-apiserver": [
            str(binaries.kube_apiserver),
            f"--etcd-servers={etcd_url}",
            f"--secure-port={api_port}",
            "--advertise-address=127.0.0.1",
            *serving,
            f"--cert-dir={workdir / 'pki'}",
            f"--client-ca-file={pki.ca}",
            f"--token-auth-file={workdir / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            f"--enable-admission-plugins={','.join(ADMISSION_PLUGINS)}",
            f"--disable-admission-plugins={','.join(DISABLED_ADMISSION_PLUGINS)}",
            gate_flag,
            *([f"--runtime-config={','.join(runtime_config)}"] if runtime_config else []),
            f"--service-account-issuer={ISSUER}",
            f"--service-account-key-file={pki.sa_pub}",
            f"--service-account-signing-key-file={pki.sa_key}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--allow-privileged=true",
            # the kubernetes Service's endpoints would name 127.0.0.1, which
            # Endpoints validation refuses; nothing here reaches the API through it
            "--endpoint-reconciler-type=none",
            "--profiling=false",
        ],
        "kube-scheduler": [
            str(binaries.kube_scheduler),
            f"--config={scheduler_config}",
            f"--authentication-kubeconfig={kubeconfigs[SCHEDULER_USER]}",
            f"--authorization-kubeconfig={kubeconfigs[SCHEDULER_USER]}",
            f"--secure-port={scheduler_port}",
            *serving,
            gate_flag,
            "--profiling=false",
        ],
        "kube-controller-manager": [
            str(binaries.kube_controller_manager),
            f"--kubeconfig={kubeconfigs[CONTROLLER_MANAGER_USER]}",
            f"--authentication-kubeconfig={kubeconfigs[CONTROLLER_MANAGER_USER]}",
            f"--authorization-kubeconfig={kubeconfigs[CONTROLLER_MANAGER_USER]}",
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={pki.sa_key}",
            f"--root-ca-file={pki.ca}",
            f"--cluster-signing-cert-file={pki.ca}",
            f"--cluster-signing-key-file={pki.ca_key}",
            f"--controllers=*,{','.join('-' + c for c in DISABLED_CONTROLLERS)}",
            "--leader-elect=false",
            f"--kube-api-qps={API_QPS}",
            f"--kube-api-burst={API_BURST}",
            f"--secure-port={manager_port}",
            *serving,
            gate_flag,
            "--profiling=false",
        ],
    }
    plane = ControlPlane(
        binaries=binaries,
        workdir=workdir,
        server=server,
        token=tokens[ADMIN],
        ca_file=pki.ca,
        kubeconfig=kubeconfigs[ADMIN],
        etcd_url=etcd_url,
        version="",
        tokens=dict(tokens),
        logs={name: logs / f"{name}.log" for name in COMPONENTS},
        ports={
            "etcd": etcd_port,
            "kube-apiserver": api_port,
            "kube-scheduler": scheduler_port,
            "kube-controller-manager": manager_port,
        },
    )
    plane._commands = commands
    return plane


def _spawn(plane: ControlPlane, name: str, command: list[str]) -> None:
    """One component, in the plane's process group (the first one makes it), its
    output into its log file, killed with its parent where Linux can say so."""
    with open(plane.logs[name], "ab") as log:
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=plane.workdir,
                env=_environment(),
                process_group=plane._group,  # 0: a new group, named by this process
                preexec_fn=_die_with_parent(),
            )
        except OSError as exc:
            raise ControlPlaneError(f"{name} could not start: {exc}") from None
    plane._processes[name] = process
    if not plane._group:
        plane._group = process.pid


def _environment() -> dict[str, str]:
    """The components' environment: the caller's, without a kubeconfig of its own."""
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)
    return env


def _die_with_parent() -> Callable[[], None] | None:
    """PR_SET_PDEATHSIG: the child gets SIGKILL when the thread that started it ends,
    so only from the main thread (whose end is the process's)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not (
        threading.main_thread()
    ):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    parent = os.getpid()

    def arm() -> None:
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the call
            os._exit(1)

    return arm


def _signal_group(group: int, processes: Iterable[subprocess.Popen[bytes]], sig: int) -> None:
    """``sig`` to the group while a member still runs (one that runs keeps the group's
    number from being given to another), else to nobody."""
    processes = list(processes)
    if not any(process.poll() is None for process in processes):
        return
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        for process in processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(sig)


# --- readiness ---------------------------------------------------------------------------------


class _PortTaken(ControlPlaneError):
    pass


def _wait_ready(plane: ControlPlane, pki: _Pki, deadline: float, timeout: float) -> None:
    """Start the components phase by phase (one started before what it needs is ready
    fails: the controller manager reads a ConfigMap the API server makes at start),
    each phase's checks passed before the next starts."""
    context = ssl.create_default_context(cafile=str(pki.ca))
    scheduler = f"https://127.0.0.1:{plane.ports['kube-scheduler']}"
    manager = f"https://127.0.0.1:{plane.ports['kube-controller-manager']}"
    token = plane.token
    account = plane.server + "/api/v1/namespaces/default/serviceaccounts/default"
    phases: list[list[tuple[str, str, Callable[[], bool]]]] = [
        [("etcd", "/health", lambda: _ok(plane.etcd_url + "/health", None, None))],
        [("kube-apiserver", "/readyz", lambda: _ok(plane.server + "/readyz", context, token))],
        [
            ("kube-scheduler", "/readyz", lambda: _ok(scheduler + "/readyz", context, None)),
            ("kube-controller-manager", "/healthz", lambda: _ok(manager + "/healthz", context, None)),
            # the controllers run: the service account controller made this one
            ("kube-controller-manager", "the default ServiceAccount", lambda: _ok(account, context, token)),
        ],
    ]  # fmt: skip
    _install_handlers()
    _LIVE.add(plane)
    for phase in phases:
        for component in dict.fromkeys(component for component, _what, _check in phase):
            _spawn(plane, component, plane._commands[component])
        for component, what, check in phase:
            while not check():
                _check_alive(plane)
                if time.monotonic() > deadline:
                    raise ControlPlaneError(
                        f"{component} was not ready ({what}) within {timeout:g} seconds"
                        + _tail(plane.logs[component])
                    )
                time.sleep(_POLL)
    version = _get_json(plane.server + "/version", context, token)
    plane.version = str(version.get("gitVersion", ""))


def _check_alive(plane: ControlPlane) -> None:
    for name, process in plane._processes.items():
        status = process.poll()
        if status is None:
            continue
        text = _read_tail(plane.logs[name])
        if "address already in use" in text:
            raise _PortTaken(f"{name}: a port was taken")
        raise ControlPlaneError(f"{name} exited with status {status}" + _tail(plane.logs[name]))


def _ok(url: str, context: ssl.SSLContext | None, token: str | None) -> bool:
    try:
        with _open(url, context, token, timeout=5) as answer:
            return 200 <= answer.status < 300
    except (OSError, urllib.error.URLError):
        return False


def _get_json(url: str, context: ssl.SSLContext, token: str) -> dict[str, Any]:
    try:
        with _open(url, context, token, timeout=10) as answer:
            data = json.loads(answer.read())
    except (OSError, ValueError) as exc:
        raise ControlPlaneError(f"GET {url}: {exc}") from None
    return data if isinstance(data, dict) else {}


def _open(url: str, context: ssl.SSLContext | None, token: str | None, timeout: float) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    return urllib.request.build_opener(*handlers).open(request, timeout=timeout)


def _etcd(url: str, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """One call of etcd's JSON gateway (``/v3/kv/...``)."""
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as answer:
            data = json.loads(answer.read())
    except (OSError, ValueError) as exc:
        raise ControlPlaneError(f"etcd {path}: {exc}") from None
    return data if isinstance(data, dict) else {}


def _read_tail(path: Path, lines: int = _LOG_TAIL) -> str:
    try:
        with path.open("rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - 64 * 1024))
            text = log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _tail(path: Path) -> str:
    text = _read_tail(path)
    return f"; the end of {path}:\n{text}" if text else f" ({path} is empty)"


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


# --- never left behind ---------------------------------------------------------------------------

_LIVE: set[ControlPlane] = set()
_installed = False


def _stop_all() -> None:
    for plane in list(_LIVE):
        plane.stop(grace=5.0)


def _install_handlers() -> None:
    """Once: stop every live control plane at exit and on SIGTERM or SIGINT, then
    do what the signal did before (the previous handler, or its default action)."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(_stop_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)

        def handler(
            number: int, frame: FrameType | None, previous: Any = previous, sig: int = sig
        ) -> None:
            _stop_all()
            if callable(previous):
                previous(number, frame)
            elif previous == signal.SIG_DFL:
                signal.signal(sig, signal.SIG_DFL)
                os.kill(os.getpid(), sig)

        signal.signal(sig, handler)
