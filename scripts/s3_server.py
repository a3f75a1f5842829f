"""moto's S3 server on 127.0.0.1 for the scripts that need one
(interop_s3.py, bench_s3.py): started on a free port, waited for (bounded),
stopped on exit. Needs the Python of a venv with moto[server]."""

import contextlib
import os
import socket
import subprocess
import sys
import time


@contextlib.contextmanager
def server():
    """Yields the endpoint URL of a fresh server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    binary = os.path.join(os.path.dirname(sys.executable), "moto_server")
    proc = subprocess.Popen([binary, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit("moto server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
