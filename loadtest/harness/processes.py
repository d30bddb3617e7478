"""Child processes of the load test: started with their output in files, tracked in one
registry, and always stopped, also when the harness is interrupted or killed."""

import ctypes
import os
import signal
import subprocess
import time

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


_STOPPING_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _die_with_parent():
    # Runs in the child between fork and exec: if the harness dies, even of SIGKILL, the
    # kernel sends the child SIGTERM, so no replay or wrk outlives a killed load test. The
    # child gets back the signals `Children.start` holds (the mask is inherited across exec).
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING_SIGNALS)


class Child:
    """One started process; stdout and stderr go to files (never pipes, which a chatty child
    could fill and block on)."""

    def __init__(self, name, argv, stdout_path, stderr_path, env=None):
        self.name = name
        self.argv = argv
        self.stdout_path = stdout_path
        self.stderr_path = stderr_path
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            self.popen = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                          env=env, preexec_fn=_die_with_parent)
        self.pid = self.popen.pid
        self.started = time.monotonic()

    def running(self):
        return self.popen.poll() is None

    def wait(self, timeout):
        """The exit status, or None when it is still running after `timeout` seconds."""
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace=10.0, sig=signal.SIGTERM):
        """Asks the process to stop (it flushes and exits), then kills it after `grace` seconds."""
        if not self.running():
            return self.popen.returncode
        try:
            self.popen.send_signal(sig)
        except ProcessLookupError:
            pass
        status = self.wait(grace)
        if status is None:
            self.popen.kill()
            status = self.popen.wait()
        return status

    def stdout(self):
        with open(self.stdout_path, "r", errors="replace") as f:
            return f.read()

    def stderr_tail(self, lines=5):
        with open(self.stderr_path, "r", errors="replace") as f:
            return "".join(f.readlines()[-lines:]).strip()


class Children:
    """Every process the harness started, so that one call stops them all."""

    def __init__(self, directory):
        self.directory = directory
        self.all = []

    def start(self, name, argv, env=None):
        # The harness stops on SIGINT or SIGTERM by raising from its handler. Raised between
        # the fork and the append below, it would leave a child running that `stop_all` does
        # not know of, so the two signals wait until the child is registered (the harness
        # runs with them unblocked, `main` sees to that).
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING_SIGNALS)
            child = Child(name, argv, os.path.join(self.directory, f"{name}.out"),
                          os.path.join(self.directory, f"{name}.err"), env=env)
            self.all.append(child)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING_SIGNALS)
        return child

    def stop_all(self):
        # Loaders first, so that the service is not stopped under load; the service last.
        for child in reversed(self.all):
            if child.running():
                child.stop(grace=15.0)
