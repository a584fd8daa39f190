#!/usr/bin/env python3
"""A bare boto3 loop: the reference that bench/s3-compare.sh runs against dfsbench.

  boto3_loop.py --endpoint URL --bucket B --prefix P --size BYTES --clients N --duration S
                [--server-pid PID] [--stock]

Does what `dfsbench run -w files --file-size SIZE -j N --duration S --phases write,read` does
on an S3 target: N clients (one thread each, with its own boto3 session and client, i.e. its
own connection pool), each first PUTs objects P/w<k>/f<i> of SIZE bytes for S seconds, then,
after all are done, GETs its own objects round and round (reading every body to its end) for
S seconds. A phase is timed from the moment the clients are released at a barrier until the
last one is done, as dfsbench times its phases. Afterwards every object written is deleted
(DeleteObjects, 1000 keys a request, outside the measurement) and the prefix is checked empty.

Measured per phase, printed as one JSON object on stdout:
  ops, bytes, errors, seconds, ops_per_sec, bytes_per_sec, p50/p99 latency,
  client CPU (getrusage(RUSAGE_SELF) user+sys deltas around the phase: all threads),
  server CPU (/proc/PID/stat utime+stime deltas of --server-pid, when given).

The requests are made the same as OpenDAL's (dfsbench's S3 client) unless --stock:
  - no optional CRC checksums (request_checksum_calculation / response_checksum_validation =
    when_required; boto3 >= 1.36 otherwise sends a CRC32 of every body and checks them on GET),
  - UNSIGNED-PAYLOAD instead of a SHA-256 of the body in the signature (botocore always hashes
    the body over plain http; OpenDAL never does),
  - no retries (dfsbench retries nothing unless told to).
--stock keeps boto3's defaults for the first two (retries stay off).
"""

import argparse
import json
import os
import resource
import sys
import threading
import time

import boto3
import botocore.auth
from botocore.config import Config


STOP = threading.Event()  # set when the run ends early: the clients stop before the cleanup


def proc_cpu(pid):
    """utime + stime of a process in seconds (all its threads), or None."""
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    i = min(len(sorted_values) - 1, int(round(p / 100.0 * (len(sorted_values) - 1))))
    return sorted_values[i]


class Client(threading.Thread):
    def __init__(self, idx, args, body, barrier, clock):
        super().__init__(daemon=True)
        self.idx, self.args, self.body, self.barrier, self.clock = idx, args, body, barrier, clock
        self.written = 0  # objects w<k>/f0 .. f<written-1> to read back
        self.attempted = 0  # keys f0 .. f<attempted-1> to delete
        self.phase = None
        self.go = threading.Event()
        self.done = threading.Event()
        self.result = None
        self.failure = None
        cfg = dict(
            retries={"total_max_attempts": 1},
            max_pool_connections=2,
            s3={"addressing_style": "path"},
            connect_timeout=10,
            read_timeout=60,
        )
        if not args.stock:
            cfg.update(request_checksum_calculation="when_required", response_checksum_validation="when_required")
        # One session and one client per thread: a boto3 client may be shared between threads,
        # but a session may not, and one each is how a concurrent boto3 program scales.
        session = boto3.session.Session()
        self.s3 = session.client(
            "s3",
            endpoint_url=args.endpoint,
            region_name=os.environ.get("AWS_REGION", "us-east-1"),
            config=Config(**cfg),
        )

    def key(self, i):
        return f"{self.args.prefix}/w{self.idx}/f{i}"

    def run(self):
        try:
            while True:
                self.go.wait()
                self.go.clear()
                if self.phase is None:
                    return
                self.barrier.wait()
                self.result = self.run_phase(self.phase)
                self.done.set()
        except BaseException as e:  # report, never hang the main thread
            self.failure = e
            self.done.set()

    def run_phase(self, phase):
        lat, errors, nbytes, i = [], 0, 0, 0
        s3, bucket, body, deadline = self.s3, self.args.bucket, self.body, self.clock["deadline"]
        now = time.monotonic
        while True:
            t0 = now()
            if t0 >= deadline or STOP.is_set():
                break
            try:
                if phase == "put":
                    self.attempted = i + 1
                    s3.put_object(Bucket=bucket, Key=self.key(i), Body=body)
                    self.written = i + 1
                    n = len(body)
                else:
                    if self.written == 0:
                        break
                    r = s3.get_object(Bucket=bucket, Key=self.key(i % self.written))
                    n = len(r["Body"].read())
                    if n != len(body):
                        raise RuntimeError(f"short read: {n} bytes")
                nbytes += n
                lat.append(now() - t0)
            except Exception as e:  # counted, like dfsbench's errors
                errors += 1
                if errors == 1:
                    print(f"boto3_loop: client {self.idx} {phase}: {e}", file=sys.stderr)
                if phase == "put":
                    self.written = i  # a failed PUT leaves no object to read back
            i += 1
        self.t_end = now()
        return lat, errors, nbytes


def run_phase(clients, phase, seconds, server_pid):
    for c in clients:
        c.phase = phase
        c.done.clear()
    barrier, clock = clients[0].barrier, clients[0].clock
    clock["seconds"] = seconds
    cpu0, srv0 = self_cpu(), proc_cpu(server_pid)
    for c in clients:
        c.go.set()
    # The main thread is party to the barrier too; its action sets the start and the deadline
    # before any client is released.
    barrier.wait()
    t0 = clock["start"]
    for c in clients:
        c.done.wait()
        if c.failure:
            raise c.failure
    t1 = max(c.t_end for c in clients)
    cpu1, srv1 = self_cpu(), proc_cpu(server_pid)
    lat = sorted(x for c in clients for x in c.result[0])
    errors = sum(c.result[1] for c in clients)
    nbytes = sum(c.result[2] for c in clients)
    secs = t1 - t0
    wall = time.time() - time.monotonic()
    out = {
        "t0": t0 + wall,  # the phase's window on the wall clock
        "t1": t1 + wall,
        "ops": len(lat),
        "bytes": nbytes,
        "errors": errors,
        "seconds": secs,
        "ops_per_sec": len(lat) / secs,
        "bytes_per_sec": nbytes / secs,
        "p50_ms": percentile(lat, 50) * 1e3,
        "p99_ms": percentile(lat, 99) * 1e3,
        "cpu_user_s": cpu1[0] - cpu0[0],
        "cpu_sys_s": cpu1[1] - cpu0[1],
    }
    if srv0 is not None:
        out["server_cpu_s"] = srv1 - srv0
    return out


def cleanup(clients, args):
    """Delete every object written, then check that nothing is left under the prefix."""
    s3 = clients[0].s3
    keys = [c.key(i) for c in clients for i in range(c.attempted)]
    deleted = 0
    for at in range(0, len(keys), 1000):
        batch = keys[at : at + 1000]
        r = s3.delete_objects(
            Bucket=args.bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True}
        )
        if r.get("Errors"):
            raise RuntimeError(f"DeleteObjects failed: {r['Errors'][:3]}")
        deleted += len(batch)
    left = s3.list_objects_v2(Bucket=args.bucket, Prefix=args.prefix + "/", MaxKeys=10).get("KeyCount", 0)
    if left:
        raise RuntimeError(f"{left}+ objects left under {args.prefix}/")
    return deleted


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--size", type=int, required=True, help="object size in bytes")
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--duration", type=float, default=5.0, help="seconds of each phase")
    ap.add_argument("--server-pid", type=int, default=0)
    ap.add_argument("--stock", action="store_true", help="boto3's default checksums")
    args = ap.parse_args()
    if not args.stock:
        # OpenDAL signs with UNSIGNED-PAYLOAD; botocore hashes the whole body over plain http.
        botocore.auth.S3SigV4Auth._should_sha256_sign_payload = lambda self, request: False

    body = os.urandom(args.size)
    clock = {}

    def release():
        clock["start"] = time.monotonic()
        clock["deadline"] = clock["start"] + clock["seconds"]

    barrier = threading.Barrier(args.clients + 1, action=release)
    clients = [Client(k, args, body, barrier, clock) for k in range(args.clients)]
    for c in clients:
        c.start()
    result = {"tool": "boto3", "boto3": boto3.__version__, "clients": args.clients, "size": args.size,
              "stock": args.stock, "phases": {}}
    try:
        for phase in ("put", "get"):
            result["phases"][phase] = run_phase(clients, phase, args.duration, args.server_pid)
    finally:
        STOP.set()
        barrier.abort()  # frees clients waiting for a phase that will not start
        for c in clients:
            c.phase = None
            c.go.set()
        for c in clients:
            c.join(timeout=70)  # a request in flight ends within the client's read timeout
        result["deleted"] = cleanup(clients, args)
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the objects written are deleted by main's finally
        print("boto3_loop: interrupted", file=sys.stderr)
        sys.exit(130)
