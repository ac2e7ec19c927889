# SPDX-License-Identifier: Apache-2.0
"""A warm parent for Gravplug's AMUSE workers: a worker forked from a
process that has already imported AMUSE and numpy starts in milliseconds
instead of the second those imports take (AMUSE's C workers, BHTree's,
need none of them).

How: the worker AMUSE starts is a small launcher script (written by
launcher(), run with `python -S`: no site, no imports beyond the standard
library). It connects to the fork server's Unix socket in the worker
directory and sends its arguments, environment, working directory and its
standard streams; the server forks a child that takes them over and runs
the worker (the entry script's run function: worker_start.py's, the usual
Python worker over AMUSE's socket); the launcher waits for the
child's end and exits with its status, so AMUSE sees one process as
before. When no server answers, the launcher starts one for the next
worker and runs this worker itself, as AMUSE would (no slower than
without the server). The server exits after IDLE_S seconds without a
worker to start. The server has
AMUSE's and gravplug's Python modules imported (a change to gravplug's
files gives a new server), never the library or a plugin: those load in
the child, with the caller's environment (GRAVPLUG_PATH, OMP_*).

This file is the mechanism alone (standard library only): the entry
script, which knows what a worker is, runs serve() and names itself to
launcher().
"""
import ast
import hashlib
import os
import signal
import socket
import stat
import sys

IDLE_S = 300

# The launcher: stdlib only, run with -S. {python}, {server} (the entry
# script), {socket}, {path} are filled in by launcher().
_LAUNCHER = r'''#!{python} -S
# Written by gravplug.amuse.forkserver: starts a Gravplug AMUSE worker by
# asking the fork server ({socket}) for one, or runs it here.
import os, socket, sys
SOCK, PY, SERVER, PATH = {socket!r}, {python!r}, {server!r}, {path!r}
def run_here():
    try:
        import subprocess
        subprocess.Popen([PY, SERVER, SOCK], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(PATH)))
    except OSError:
        pass
    os.environ["PYTHONPATH"] = os.pathsep.join(PATH)
    os.execv(PY, [PY, SERVER, "--worker"] + sys.argv[1:])
if sys.argv[3:4] != ["false"]:      # an MPI worker: as AMUSE would
    os.environ["PYTHONPATH"] = os.pathsep.join(PATH)
    os.execv(PY, [PY, SERVER, "--worker"] + sys.argv[1:])
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCK)
    msg = repr({{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}).encode()
    socket.send_fds(s, [len(msg).to_bytes(8, "little") + msg], [0, 1, 2])
except OSError:
    run_here()
status = s.recv(1)
sys.exit(status[0] if status else 1)
'''


def private_dir(path):
    """path as a directory only this user can change (made 0700 if absent),
    or None with the reason when it is a link, someone else's, or open to
    others: the launcher, the fork server's socket and AMUSE's worker
    scripts live there, and whoever can change it runs code as this user."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        return None, f"cannot make {path}: {e.strerror}"
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return None, f"{path} is not a directory (a link or a file stands there)"
    if st.st_uid != os.getuid():
        return None, f"{path} belongs to uid {st.st_uid}, not to this user ({os.getuid()})"
    if st.st_mode & 0o022:
        return None, f"{path} can be written by other users (mode {stat.S_IMODE(st.st_mode):o})"
    return path, None


def launcher(worker_dir, entry):
    """Writes the launcher into worker_dir (once per Python and gravplug
    location) and returns its path: the worker AMUSE is to start. entry:
    the script it runs, as `entry SOCK` to serve and as `entry --worker
    ARGS` to run one worker itself."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # a changed gravplug (its Python files) gets a new server: the old one
    # has them imported
    pkg = os.path.join(here, "gravplug")
    stamps = [(f, os.stat(os.path.join(d, f)).st_mtime_ns) for d in (pkg, os.path.join(pkg, "amuse"))
              for f in sorted(os.listdir(d)) if f.endswith(".py")]
    key = hashlib.sha1(repr((sys.executable, here, sys.path, stamps)).encode()).hexdigest()[:12]
    sock = os.path.join(worker_dir, f"forkserver-{key}.sock")
    path = [here] + [p for p in sys.path if p and os.path.isdir(p) and p != here]
    text = _LAUNCHER.format(python=sys.executable, server=os.path.abspath(entry),
                            socket=sock, path=path)
    script = os.path.join(worker_dir, f"worker-{key}")
    try:
        with open(script) as f:
            if f.read() == text:
                return script
    except OSError:
        pass
    tmp = f"{script}.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o700)
    os.replace(tmp, script)
    return script


def _child(conn, fds, request, run):
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)   # the server's, not a worker's
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin, sys.stdout, sys.stderr = (os.fdopen(0, "r", closefd=False),
                                         os.fdopen(1, "w", closefd=False),
                                         os.fdopen(2, "w", closefd=False))
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    status = 0
    try:
        run(request["argv"])
    except BaseException:  # noqa: BLE001 — the launcher exits with the status
        import traceback
        traceback.print_exc()
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        conn.send(bytes([status]))
    finally:
        os._exit(status)


def serve(sock_path, run):
    """Listens on sock_path, forks a child per request that calls
    run(argv) with the launcher's arguments; exits when idle. The caller
    has imported what a worker needs: the children share it."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(sock_path)
    except OSError:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(sock_path)
            return               # another server answers there
        except OSError:
            os.unlink(sock_path)  # a dead server's socket
            server.bind(sock_path)
    os.chmod(sock_path, 0o600)           # the owner's workers only
    server.listen(16)
    server.settimeout(IDLE_S)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # children reaped by the kernel
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listed = True                        # sock_path is still this server's
    try:
        while True:
            try:
                conn, _ = server.accept()
            except socket.timeout:
                if server.gettimeout() != IDLE_S:
                    return
                # idle: no new launcher finds the socket now; serve those
                # that connected just before it went
                os.unlink(sock_path)
                listed = False
                server.settimeout(0.5)
                continue
            try:
                head, fds, _, _ = socket.recv_fds(conn, 8, 3)
                size = int.from_bytes(head, "little")
                body = b""
                while len(body) < size:
                    part = conn.recv(size - len(body))
                    if not part:
                        break
                    body += part
                request = ast.literal_eval(body.decode())
            except (OSError, ValueError, SyntaxError):
                conn.close()
                continue
            if os.fork() == 0:
                server.close()
                _child(conn, fds, request, run)
            conn.close()
            for fd in fds:
                os.close(fd)
    finally:
        server.close()
        if listed:
            try:
                os.unlink(sock_path)
            except OSError:
                pass

