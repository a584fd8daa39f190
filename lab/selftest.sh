#!/usr/bin/env bash
# Checks the lab end to end, for each server: install, start, a real
# write + read-back round trip through its own protocol, status, stop, and
# no process left behind.
#
#   lab/selftest.sh [NAME...]     (default: minio minio-ec seaweedfs swift hdfs webdav)
#
# Prints one line per server and "N passed, N failed" at the end; exits 1 if
# any failed. State goes to .cache/lab-selftest/NAME (not the default state
# dirs, so servers a developer has running are left alone). Output of each
# step: .cache/lab-selftest/NAME.log.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ALL="minio minio-ec seaweedfs swift hdfs webdav"
ST_ROOT="$CACHE_DIR/lab-selftest"
SERVER="$LAB_DIR/server.sh"

secs() { printf '%d.%01d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

# ---- round trips; each prints what it did and fails on the first problem --
make_payload() { # FILE BYTES
  head -c "$2" /dev/urandom >"$1"
}

check_s3() { # uses the env of server.sh env
  local ep="$DFSBENCH_S3_ENDPOINT" b="$DFSBENCH_S3_BUCKET" k="$AWS_ACCESS_KEY_ID" s="$AWS_SECRET_ACCESS_KEY" r="$AWS_REGION"
  local f="$WORK/obj" key="selftest/obj-$RANDOM" code
  make_payload "$f" 1048577
  s3curl "$ep" "$k" "$s" "$r" -o /dev/null -T "$f" "$ep/$b/$key"
  s3curl "$ep" "$k" "$s" "$r" -o "$WORK/back" "$ep/$b/$key"
  cmp "$f" "$WORK/back"
  s3curl "$ep" "$k" "$s" "$r" -o "$WORK/range" -H 'Range: bytes=1000-1999' "$ep/$b/$key"
  cmp "$WORK/range" <(dd if="$f" bs=1000 skip=1 count=1 status=none)
  s3curl "$ep" "$k" "$s" "$r" "$ep/$b?list-type=2&prefix=selftest%2F" | grep -q "<Key>$key</Key>"
  # a wrong secret must be refused
  code="$(s3curl_nofail "$ep" "$k" "wrong-secret" "$r" -o /dev/null -w '%{http_code}' "$ep/$b/$key")"
  [ "$code" = 403 ] || { echo "wrong secret got HTTP $code"; return 1; }
  s3curl "$ep" "$k" "$s" "$r" -o /dev/null -X DELETE "$ep/$b/$key"
  code="$(s3curl_nofail "$ep" "$k" "$s" "$r" -o /dev/null -w '%{http_code}' "$ep/$b/$key")"
  [ "$code" = 404 ] || { echo "GET after DELETE got HTTP $code"; return 1; }
  echo "s3: PUT/GET/range/list/DELETE 1 MiB ok at $ep"
}

check_swift() {
  local su tok hdr f="$WORK/obj"
  hdr="$(lcurl --fail -D - -o /dev/null -H "X-Auth-User: $DFSBENCH_SWIFT_USER" \
    -H "X-Auth-Key: $DFSBENCH_SWIFT_KEY" "$DFSBENCH_SWIFT_AUTH_URL" | tr -d '\r')"
  su="$(echo "$hdr" | awk -F': ' 'tolower($1)=="x-storage-url"{print $2}')"
  tok="$(echo "$hdr" | awk -F': ' 'tolower($1)=="x-auth-token"{print $2}')"
  if [ -z "$su" ] || [ -z "$tok" ]; then echo "tempauth gave no token"; return 1; fi
  make_payload "$f" 1048577
  local u="$su/$DFSBENCH_SWIFT_CONTAINER/selftest-$RANDOM"
  lcurl --fail -o /dev/null -H "X-Auth-Token: $tok" -T "$f" "$u"
  lcurl --fail -o "$WORK/back" -H "X-Auth-Token: $tok" "$u"
  cmp "$f" "$WORK/back"
  lcurl --fail -H "X-Auth-Token: $tok" "$su/$DFSBENCH_SWIFT_CONTAINER" | grep -q "selftest-"
  lcurl --fail -o /dev/null -X DELETE -H "X-Auth-Token: $tok" "$u"
  echo "swift: tempauth + PUT/GET/list/DELETE 1 MiB ok"
  check_s3
}

check_hdfs() {
  local w="$DFSBENCH_WEBHDFS_URL" u="user.name=$HADOOP_USER_NAME" f="$WORK/obj" p loc
  p="$DFSBENCH_HDFS_DIR/selftest-$RANDOM"
  make_payload "$f" 1048577
  loc="$(lcurl --fail -o /dev/null -w '%{redirect_url}' -X PUT "$w$p?op=CREATE&$u")"
  lcurl --fail -o /dev/null -X PUT -T "$f" "$loc"
  lcurl --fail -L -o "$WORK/back" "$w$p?op=OPEN&$u"
  cmp "$f" "$WORK/back"
  lcurl --fail -L -o "$WORK/range" "$w$p?op=OPEN&offset=1000&length=1000&$u"
  cmp "$WORK/range" <(dd if="$f" bs=1000 skip=1 count=1 status=none)
  lcurl --fail "$w$DFSBENCH_HDFS_DIR?op=LISTSTATUS&$u" | grep -q "selftest-"
  echo "webhdfs: CREATE/OPEN/range/LISTSTATUS 1 MiB ok"
  # the native RPC port and the DataNode transfer path, with Hadoop's own client
  local home="$CACHE_DIR/hdfs" conf="$DFSBENCH_LAB_STATE_DIR/conf/nn"
  java -Xmx128m -XX:TieredStopAtLevel=1 -cp "$conf:$home/lib/*" \
    -Dlog4j.configuration="file:$conf/log4j.properties" -Dhadoop.root.logger=WARN,console \
    org.apache.hadoop.fs.FsShell -fs "$DFSBENCH_HDFS_URL" -cat "$p" >"$WORK/back2" 2>"$WORK/fsshell.err" ||
    { cat "$WORK/fsshell.err"; return 1; }
  cmp "$f" "$WORK/back2"
  echo "hdfs rpc: FsShell -cat over $DFSBENCH_HDFS_URL ok"
  lcurl --fail -X DELETE "$w$p?op=DELETE&$u" | grep -q true
}

check_webdav() {
  local base="${DFSBENCH_WEBDAV_URL%/}" c f="$WORK/obj"
  c="$base${DFSBENCH_WEBDAV_COLLECTION}selftest-$RANDOM/"
  make_payload "$f" 1048577
  lcurl --fail -o /dev/null -X MKCOL "$c"
  lcurl --fail -o /dev/null -T "$f" "${c}a"
  lcurl --fail -o "$WORK/back" "${c}a"
  cmp "$f" "$WORK/back"
  lcurl --fail -o "$WORK/range" -H 'Range: bytes=1000-1999' "${c}a"
  cmp "$WORK/range" <(dd if="$f" bs=1000 skip=1 count=1 status=none)
  lcurl --fail -o /dev/null -X COPY -H "Destination: ${c}b" "${c}a"
  lcurl --fail -o /dev/null -X MOVE -H "Destination: ${c}c" "${c}b"
  lcurl --fail -X PROPFIND -H 'Depth: 1' "$c" >"$WORK/propfind"
  grep -q "${c#"$base"}a<" "$WORK/propfind"
  grep -q "${c#"$base"}c<" "$WORK/propfind"
  if grep -q "${c#"$base"}b<" "$WORK/propfind"; then echo "MOVE left its source"; return 1; fi
  lcurl --fail -o "$WORK/back" "${c}c"
  cmp "$f" "$WORK/back"
  lcurl --fail -o /dev/null -X DELETE "$c"
  echo "webdav: MKCOL/PUT/GET/range/COPY/MOVE/PROPFIND/DELETE 1 MiB ok"
}

roundtrip() { # NAME
  case "$1" in
    minio | minio-ec | seaweedfs) check_s3 ;;
    swift) check_swift ;;
    hdfs) check_hdfs ;;
    webdav) check_webdav ;;
  esac
}

# ---- one server -------------------------------------------------------------
# Sets RESULT to the line to print; returns non-zero on failure.
test_one() {
  local name="$1" dir="$ST_ROOT/$1" logf="$ST_ROOT/$1.log" t0 ti ts tr tp part pids=() pgids=() p
  part="$name"; [ "$name" != minio-ec ] || part=minio
  : >"$logf"
  t0="$(now_ms)"
  if ! "$LAB_DIR/install.sh" "$part" >>"$logf" 2>&1; then RESULT="install failed"; return 1; fi
  ti=$(($(now_ms) - t0))
  # leftovers of an earlier interrupted selftest
  "$SERVER" stop "$name" --dir "$dir" >>"$logf" 2>&1 || true
  t0="$(now_ms)"
  if ! "$SERVER" start "$name" --dir "$dir" >>"$logf" 2>&1; then
    RESULT="start failed (see $logf)"; "$SERVER" stop "$name" --dir "$dir" >>"$logf" 2>&1 || true; return 1
  fi
  ts=$(($(now_ms) - t0))
  mapfile -t pids < <(pids_of "$dir")
  for p in "${pids[@]}"; do pgids+=("$p"); done
  t0="$(now_ms)"
  local ok=1
  # a process of its own: in this function (called from an `if`) set -e is
  # off, also in subshells
  "$0" --roundtrip "$name" "$dir" >>"$logf" 2>&1 || ok=0
  tr=$(($(now_ms) - t0))
  "$SERVER" status "$name" --dir "$dir" >>"$logf" 2>&1 || ok=0
  [ $ok = 1 ] || { RESULT="round trip failed (see $logf)"; }
  # everything in the daemons' process groups, before stop
  local members=()
  for p in "${pgids[@]}"; do
    mapfile -t -O "${#members[@]}" members < <(pgrep -g "$p" || true)
  done
  t0="$(now_ms)"
  if ! "$SERVER" stop "$name" --dir "$dir" >>"$logf" 2>&1; then
    RESULT="stop failed (see $logf)"; return 1
  fi
  tp=$(($(now_ms) - t0))
  local left=()
  for p in "${members[@]}"; do
    if [ -r "/proc/$p/stat" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
      left+=("$p")
    fi
  done
  if [ ${#left[@]} -gt 0 ]; then RESULT="processes left after stop: ${left[*]}"; return 1; fi
  if [ -e "$dir" ]; then RESULT="state dir left after stop: $dir"; return 1; fi
  [ $ok = 1 ] || return 1
  RESULT="install $(secs $ti)s, start-to-ready $(secs $ts)s, round trip $(secs $tr)s, stop $(secs $tp)s, ${#members[@]} processes all gone"
}

# internal: selftest.sh --roundtrip NAME STATE_DIR
roundtrip_main() {
  local name="$1" dir="$2"
  set -E
  trap 'echo "[selftest] check failed (line $LINENO): $BASH_COMMAND" >&2' ERR
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  eval "$("$SERVER" env "$name" --dir "$dir")"
  roundtrip "$name"
}

main() {
  if [ "${1:-}" = --roundtrip ]; then shift; roundtrip_main "$@"; return; fi
  local names=("$@") n pass=0 fail=0
  [ ${#names[@]} -gt 0 ] || read -r -a names <<<"$ALL"
  for n in "${names[@]}"; do
    case " $ALL " in *" $n "*) ;; *) die "unknown server '$n' ($ALL)" ;; esac
  done
  mkdir -p "$ST_ROOT"
  for n in "${names[@]}"; do
    RESULT=""
    if test_one "$n"; then
      printf 'PASS %-10s %s\n' "$n" "$RESULT"; pass=$((pass + 1))
    else
      printf 'FAIL %-10s %s\n' "$n" "$RESULT"; fail=$((fail + 1))
      tail -n 15 "$ST_ROOT/$n.log" | sed 's/^/     | /'
    fi
  done
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

main "$@"
