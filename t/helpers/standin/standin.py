# SPDX-License-Identifier: GPL-2.0-or-later
"""What every launcher stand-in shares (t/helpers/standin/*): the stand-ins
take the place of launchers that cannot be installed here (DeepSpeed,
accelerate, SGLang, Ray, vLLM, Megatron) in real jobs on the test cluster.
Each parses its argv with the flags its launcher documents (cited in each
file), exactly: an unknown or misspelled flag, or a value that is not what
the launcher would accept, fails the task (exit 2, the reason on stderr).
Then it checks the values against what SLURM itself says of this task
(SLURM_NODEID in an srun step, SLURM_ARRAY_TASK_ID in an array task, never
the contract it is meant to check) and prints one line

  standin launcher=L node_rank=R nnodes=N nproc=G addr=A port=P host=H self_addr=S ...

for the test to compare across ranks (one address, one port, ranks 0..N-1).
"""
import argparse
import os
import socket
import sys


def fail(name, msg):
    print("standin %s: %s" % (name, msg), file=sys.stderr, flush=True)
    sys.exit(2)


class Parser(argparse.ArgumentParser):
    """argparse that fails like a stand-in (exit 2 with the launcher's name)
    and never guesses an abbreviated flag: a launcher's own parser may, but
    a template must spell the flag out."""

    def __init__(self, name, **kw):
        super().__init__(prog=name, allow_abbrev=False, add_help=False, **kw)
        self.standin = name

    def error(self, message):
        fail(self.standin, "bad arguments: %s (argv: %s)" % (message, sys.argv[1:]))


def slurm_node():
    """This task's node rank and the node count, as SLURM (or spur) says them."""
    env = os.environ
    if env.get("SLURM_STEP_ID") is not None and env.get("SLURM_ARRAY_TASK_ID") is None:
        return int(env["SLURM_NODEID"]), int(env["SLURM_STEP_NUM_NODES"])
    if env.get("SLURM_ARRAY_TASK_ID") is not None:
        # spur sets no SLURM_ARRAY_TASK_COUNT (t/spur/lib.sh, spur_launch_env): there the
        # count is the one the job asked for (MAD_NNODES, the template's option)
        return (int(env["SLURM_ARRAY_TASK_ID"]) - int(env.get("SLURM_ARRAY_TASK_MIN", "0")),
                int(env.get("SLURM_ARRAY_TASK_COUNT", env.get("MAD_NNODES", "0"))))
    return int(env.get("SLURM_NODEID", "0")), int(env.get("SLURM_NNODES", "1"))


def self_addr():
    return socket.gethostbyname(socket.gethostname())


def expect(name, what, got, want):
    if got != want:
        fail(name, "%s is %r, expected %r" % (what, got, want))


def check_node(name, node_rank, nnodes, addr, port):
    """The node-level values a launcher got against SLURM's facts."""
    rank, count = slurm_node()
    expect(name, "the node rank", node_rank, rank)
    expect(name, "the node count", nnodes, count)
    if not addr or addr.startswith("127.") or addr == "::1":
        fail(name, "rank 0's address %r is empty or loopback" % addr)
    if not 1 <= port <= 65535:
        fail(name, "port %d out of range" % port)


def report(name, **fields):
    fields.setdefault("host", socket.gethostname())
    fields.setdefault("self_addr", self_addr())
    line = "standin launcher=%s " % name + " ".join("%s=%s" % kv for kv in fields.items())
    os.write(1, (line + "\n").encode())


def serve_health(host, port):
    """Serve as vLLM's and SGLang's HTTP servers do once up: GET /health answers 200
    (vllm/entrypoints/openai/api_server.py and sglang/srt/entrypoints/http_server.py,
    "/health"), anything else 404, for STANDIN_SERVE_SECONDS (default 5), or until the
    file STANDIN_SERVE_UNTIL names exists (at most 120 s then: a test's client may come
    late on a loaded machine); then return, as if the server were stopped."""
    import http.server
    import threading
    import time

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer((host or "0.0.0.0", port), Health)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    until = os.environ.get("STANDIN_SERVE_UNTIL")
    end = time.monotonic() + float(os.environ.get("STANDIN_SERVE_SECONDS", "120" if until else "5"))
    while time.monotonic() < end and not (until and os.path.exists(until)):
        time.sleep(0.2)
    srv.shutdown()
