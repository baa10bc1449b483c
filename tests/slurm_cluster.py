"""A one-machine Slurm cluster for tests: Debian's munged, slurmctld and slurmd, started in a folder of their own on
127.0.0.1 (free ports, their own munge socket and key, state and spool in the folder), stopped with everything they
ran. `make test` installs the packages (slurmctld, slurmd, slurm-client, munge) as it does chromium.

What Debian's Slurm 22.05 does on one machine, and what this cluster is set for (issue 46):
- proctrack/linuxproc (no cgroups in a test machine): a job's processes are the batch script's descendants;
- a requeued job may start again only after the credential's lifetime (`cred_expire`, 120 s by default): 10 s here;
- accounting_storage/none (no slurmdbd): `sacct` knows nothing; `scontrol show job` tells a job's state for
  MinJobAge after it ends (300 s here).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from ports import reserved_ports

DAEMONS = ("munged", "slurmctld", "slurmd")
CRED_EXPIRE_S = 10


def installed() -> bool:
    return all(shutil.which(name) or Path("/usr/sbin", name).exists() for name in DAEMONS) and bool(
        shutil.which("sbatch")
    )


def _sbin(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


class LocalSlurm:
    """`with LocalSlurm(folder) as cluster:` a running cluster; `cluster.env` is the environment its clients need
    (SLURM_CONF); `cluster.run(...)` runs a client command in it."""

    def __init__(self, folder: Path, cpus: int = 2) -> None:
        self.folder = folder
        self.cpus = cpus
        self.node = socket.gethostname()
        self._procs: list[subprocess.Popen[bytes]] = []
        # The daemons' ports are named in slurm.conf before they start: locked machine-wide for the cluster's life.
        self._held = contextlib.ExitStack()
        self.conf = folder / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    def __enter__(self) -> LocalSlurm:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object | TracebackType) -> None:
        self.stop()

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, env=self.env, capture_output=True, text=True, check=check, timeout=60)

    def _start(self) -> None:
        f = self.folder
        for sub in ("state", "spool", "munge", "log"):
            (f / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(f / "munge", 0o700)
        key = f / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        socket_path = f / "munge" / "munge.socket"
        munged = [_sbin("munged"), "-F", "--force", f"--socket={socket_path}", f"--key-file={key}",
                  f"--pid-file={f / 'munge' / 'munged.pid'}", f"--log-file={f / 'log' / 'munged.log'}",
                  f"--seed-file={f / 'munge' / 'munged.seed'}"]  # fmt: skip
        self._spawn(munged, "munged")
        self._wait_for(lambda: socket_path.exists(), "munged's socket")
        memory_mb = 1024
        controller, node = self._held.enter_context(reserved_ports(2))
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=ocllmtest",
                    f"SlurmctldHost={self.node}(127.0.0.1)",
                    f"SlurmctldPort={controller}",
                    f"SlurmdPort={node}",
                    f"AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={socket_path},cred_expire={CRED_EXPIRE_S}",
                    "SlurmUser=root\nSlurmdUser=root",
                    f"StateSaveLocation={f / 'state'}",
                    f"SlurmdSpoolDir={f / 'spool'}",
                    f"SlurmctldPidFile={f / 'slurmctld.pid'}",
                    f"SlurmdPidFile={f / 'slurmd.pid'}",
                    f"SlurmctldLogFile={f / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={f / 'log' / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "JobCompType=jobcomp/none",
                    "SchedulerType=sched/backfill",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_CPU",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    "JobRequeue=1",
                    "MinJobAge=300",
                    "KillWait=5",
                    "SchedulerParameters=sched_interval=2",
                    "SlurmctldParameters=enable_configless",
                    f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={memory_mb} State=UNKNOWN",
                    "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )
        self._spawn([_sbin("slurmctld"), "-D", "-i", "-f", str(self.conf)], "slurmctld")
        self._wait_for(lambda: self.run("scontrol", "ping", check=False).returncode == 0, "slurmctld")
        self._spawn([_sbin("slurmd"), "-D", "-f", str(self.conf), "-N", self.node], "slurmd")
        self._wait_for(self._node_idle, "slurmd's node to be idle")

    def _node_idle(self) -> bool:
        shown = self.run("sinfo", "-h", "-o", "%T", check=False).stdout.strip()
        return shown.startswith("idle")

    def _spawn(self, command: list[str], name: str) -> None:
        log = open(self.folder / "log" / f"{name}.out", "wb")  # noqa: SIM115 (the daemon's, closed with it)
        # A process group of its own: stopping the cluster stops whatever the daemon started.
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        log.close()
        self._procs.append(proc)

    def _wait_for(self, ready: object, what: str, timeout_s: float = 60.0) -> None:
        assert callable(ready)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for proc in self._procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{proc.args[0]} exited ({proc.returncode}) while waiting for {what}:\n"
                                       + self.logs())  # fmt: skip
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}:\n" + self.logs())

    def logs(self) -> str:
        out = []
        for path in sorted((self.folder / "log").glob("*")):
            text = path.read_text(errors="replace")
            out.append(f"--- {path.name}\n{text[-3000:]}")
        return "\n".join(out)

    def stop(self) -> None:
        """Every job cancelled, then the daemons stopped, slurmd first (its jobs' processes with it)."""
        if any(p.poll() is None for p in self._procs):
            self.run("scancel", "--full", "--user", os.environ.get("USER", "root"), check=False)
        for proc in reversed(self._procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(self._procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._procs.clear()
        self._held.close()
