#!/usr/bin/env bash
# Starts, checks and stops real storage servers on 127.0.0.1 for the dfsbench
# backend tests.
#
#   lab/server.sh start|stop|status|env NAME [--dir STATE_DIR]
#
# NAME: minio | minio-ec | seaweedfs | swift | hdfs | webdav
# STATE_DIR (default .cache/lab/NAME at the repo root) holds all data, config,
# logs and pid files; `stop` kills exactly the processes `start` recorded
# there and removes it. `env` prints export lines for a test to eval:
#   eval "$(lab/server.sh env minio)"
# Ports: free ports on 127.0.0.1 picked at start (20000-32767), or
# LAB_PORT_BASE=N for N, N+1, ... . Other knobs: LAB_START_TIMEOUT (s),
# LAB_STOP_GRACE (s), LAB_SWIFT_REPLICAS (3), LAB_SEAWEEDFS_VOLUMES (1),
# LAB_HDFS_NN_HEAP_MB (384), LAB_HDFS_DN_HEAP_MB (256).
# Run lab/install.sh NAME first.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NAMES="minio minio-ec seaweedfs swift hdfs webdav"
BUCKET="dfsbench"
S3_KEY="dfsbench-lab"
S3_SECRET="dfsbench-lab-secret"
S3_REGION="us-east-1"
MARKER=".dfsbench-lab"

usage() { sed -n '2,17p' "$0" >&2; exit 2; }

# get_ports N: sets PORTS to N free ports on 127.0.0.1 (or dies).
get_ports() {
  local out
  out="$(pick_ports "$1")" || die "could not get $1 free ports"
  mapfile -t PORTS <<<"$out"
  [ "${#PORTS[@]}" -eq "$1" ] || die "could not get $1 free ports"
}

# env_line VAR VALUE: an export line, value quoted for the shell.
env_line() { printf 'export %s=%q\n' "$1" "$2"; }

write_s3_env() { # ENDPOINT KEY SECRET
  {
    env_line DFSBENCH_S3_ENDPOINT "$1"
    env_line DFSBENCH_S3_BUCKET "$BUCKET"
    env_line DFSBENCH_S3_PATH_STYLE 1
    env_line AWS_ACCESS_KEY_ID "$2"
    env_line AWS_SECRET_ACCESS_KEY "$3"
    env_line AWS_REGION "$S3_REGION"
    env_line AWS_DEFAULT_REGION "$S3_REGION"
    env_line AWS_ENDPOINT_URL "$1"
  } >>"$STATE/env.sh"
}

# ---- MinIO ----------------------------------------------------------------
start_minio_common() { # DRIVE_ARGS...
  local minio="$BIN_DIR/minio" p c
  [ -x "$minio" ] || die "minio is not installed: lab/install.sh minio"
  get_ports 2; p=${PORTS[0]} c=${PORTS[1]}
  mkdir -p "$STATE/certs"
  start_daemon "$STATE" minio env MINIO_ROOT_USER="$S3_KEY" MINIO_ROOT_PASSWORD="$S3_SECRET" \
    MINIO_CI_CD=1 MINIO_BROWSER=off MINIO_UPDATE=off MINIO_SITE_REGION="$S3_REGION" \
    "$minio" server --quiet --anonymous --address "127.0.0.1:$p" --console-address "127.0.0.1:$c" \
    --certs-dir "$STATE/certs" "$@"
  local ep="http://127.0.0.1:$p"
  wait_until "$STATE" "$TIMEOUT" "MinIO cluster health at $ep" \
    lcurl --fail -o /dev/null "$ep/minio/health/cluster"
  # bucket: PUT /dfsbench signed with the root credentials
  wait_until "$STATE" "$TIMEOUT" "create bucket $BUCKET" \
    s3_make_bucket "$ep" "$S3_KEY" "$S3_SECRET" "$S3_REGION" "$BUCKET"
  wait_until "$STATE" "$TIMEOUT" "S3 PUT+GET round trip on $ep" \
    s3_roundtrip "$ep" "$S3_KEY" "$S3_SECRET" "$S3_REGION" "$BUCKET" ".lab-ready"
  write_s3_env "$ep" "$S3_KEY" "$S3_SECRET"
  echo "$ep/minio/health/cluster" >"$STATE/probe-url"
}
start_minio() { mkdir -p "$STATE/data"; start_minio_common "$STATE/data"; }
# One process, 6 drives = one erasure set (default parity EC:3).
start_minio-ec() {
  mkdir -p "$STATE"/data/d{1..6}
  start_minio_common "$STATE/data/d{1...6}"
}

# ---- SeaweedFS ----------------------------------------------------------------
# master + LAB_SEAWEEDFS_VOLUMES volume servers + filer + S3 gateway (`weed s3`;
# the filer's embedded -s3 did not come up in 4.48). A jwt.filer_signing key
# in security.toml (read from the cwd = STATE) is needed, or the S3 gateway
# fails to load its identities and lets any request through.
start_seaweedfs() {
  local weed="$BIN_DIR/weed" nvol="${LAB_SEAWEEDFS_VOLUMES:-1}" i
  [ -x "$weed" ] || die "seaweedfs is not installed: lab/install.sh seaweedfs"
  get_ports $((6 + 2 * nvol))
  local ports=("${PORTS[@]}")
  local m=${ports[0]} mg=${ports[1]} f=${ports[2]} fg=${ports[3]} s=${ports[4]} sg=${ports[5]}
  local ipf=(-ip=127.0.0.1 -ip.bind=127.0.0.1)
  local master="127.0.0.1:$m.$mg"
  mkdir -p "$STATE/master" "$STATE/filer" "$STATE/conf"
  printf '[jwt.filer_signing]\nkey = "%s"\n' "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" \
    >"$STATE/security.toml"
  cat >"$STATE/conf/s3.json" <<EOF
{"identities": [{"name": "dfsbench", "credentials": [{"accessKey": "$S3_KEY", "secretKey": "$S3_SECRET"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
  start_daemon "$STATE" master "$weed" master "${ipf[@]}" -port="$m" -port.grpc="$mg" \
    -mdir="$STATE/master" -peers=none -telemetry=false \
    -volumeSizeLimitMB="${LAB_SEAWEEDFS_VOLUME_MB:-1024}"
  for ((i = 1; i <= nvol; i++)); do
    mkdir -p "$STATE/vol$i"
    start_daemon "$STATE" "volume$i" "$weed" volume "${ipf[@]}" -port="${ports[4 + 2 * i]}" \
      -port.grpc="${ports[5 + 2 * i]}" -dir="$STATE/vol$i" -max="${LAB_SEAWEEDFS_MAX_VOLUMES:-50}" \
      -master="$master" -preStopSeconds=0
  done
  # the filer's graceful stop waits forever on its own metadata subscription
  DAEMON_GRACE=3 start_daemon "$STATE" filer "$weed" filer "${ipf[@]}" -port="$f" -port.grpc="$fg" \
    -master="$master" -defaultStoreDir="$STATE/filer" -localSocket="$STATE/filer.sock"
  wait_until "$STATE" "$TIMEOUT" "SeaweedFS filer on port $f" \
    lcurl --fail -o /dev/null "http://127.0.0.1:$f/"
  start_daemon "$STATE" s3 "$weed" s3 -ip.bind=127.0.0.1 -filer="127.0.0.1:$f.$fg" \
    -port="$s" -port.grpc="$sg" -port.iceberg=0 -port.lance=0 -config="$STATE/conf/s3.json" \
    -localSocket="$STATE/s3.sock"
  local ep="http://127.0.0.1:$s"
  wait_until "$STATE" "$TIMEOUT" "create bucket $BUCKET on $ep" \
    s3_make_bucket "$ep" "$S3_KEY" "$S3_SECRET" "$S3_REGION" "$BUCKET"
  wait_until "$STATE" "$TIMEOUT" "S3 PUT+GET round trip on $ep" \
    s3_roundtrip "$ep" "$S3_KEY" "$S3_SECRET" "$S3_REGION" "$BUCKET" ".lab-ready"
  write_s3_env "$ep" "$S3_KEY" "$S3_SECRET"
  {
    env_line DFSBENCH_SEAWEEDFS_MASTER "127.0.0.1:$m"
    env_line DFSBENCH_SEAWEEDFS_FILER "http://127.0.0.1:$f"
  } >>"$STATE/env.sh"
  echo "http://127.0.0.1:$m/cluster/status" >"$STATE/probe-url"
}

# ---- WebDAV: Apache httpd + mod_dav_fs --------------------------------------
start_webdav() {
  [ -x /usr/sbin/apache2 ] || die "apache2 is not installed: lab/install.sh webdav"
  local p root="$STATE/root"
  get_ports 1; p=${PORTS[0]}
  mkdir -p "$root/$BUCKET" "$STATE/lock" "$STATE/logs" "$STATE/conf"
  # The workers run as www-data (Apache refuses root); they own the tree.
  chown -R www-data:www-data "$root" "$STATE/lock"
  if ! runuser -u www-data -- test -w "$root/$BUCKET"; then
    die "user www-data cannot write $root (a parent folder is not searchable); use --dir elsewhere"
  fi
  local mods=/usr/lib/apache2/modules
  cat >"$STATE/conf/httpd.conf" <<EOF
ServerRoot /etc/apache2
ServerName 127.0.0.1
Listen 127.0.0.1:$p
PidFile $STATE/httpd.pid
Mutex file:$STATE/lock default
User www-data
Group www-data
ErrorLog $STATE/logs/error.log
LogLevel warn
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule dav_module $mods/mod_dav.so
LoadModule dav_fs_module $mods/mod_dav_fs.so
StartServers 2
ServerLimit 8
ThreadsPerChild 32
MaxRequestWorkers 256
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 30
LimitRequestBody 0
Timeout 120
DavLockDB $STATE/lock/davlock
DocumentRoot $root
<Directory $root>
  Dav On
  DavDepthInfinity On
  Options None
  AllowOverride None
  Require all granted
</Directory>
EOF
  start_daemon "$STATE" httpd /usr/sbin/apache2 -f "$STATE/conf/httpd.conf" -DFOREGROUND
  local url="http://127.0.0.1:$p"
  wait_until "$STATE" "$TIMEOUT" "WebDAV PUT+GET round trip on $url" webdav_roundtrip "$url/$BUCKET/"
  {
    env_line DFSBENCH_WEBDAV_URL "$url/"
    env_line DFSBENCH_WEBDAV_COLLECTION "/$BUCKET/"
  } >>"$STATE/env.sh"
  echo "$url/$BUCKET/" >"$STATE/probe-url"
}

webdav_roundtrip() { # COLLECTION_URL (ends with /)
  local c="$1" body got
  body="dfsbench-lab $(date +%s%N)"
  printf '%s' "$body" | lcurl --fail -o /dev/null -T - "$c.lab-ready" || return 1
  got="$(lcurl --fail "$c.lab-ready")" || return 1
  [ "$got" = "$body" ] || return 1
  lcurl --fail -o /dev/null -X PROPFIND -H 'Depth: 1' "$c" || return 1
  lcurl --fail -o /dev/null -X DELETE "$c.lab-ready"
}

# ---- Swift (SAIO-like) --------------------------------------------------------
# memcached, account/container/object servers (each one process serving
# LAB_SWIFT_REPLICAS devices), proxy with tempauth + s3api. Rings are built in
# one Python process.
SWIFT_USER="test:tester"
SWIFT_KEY="testing"

start_swift() {
  command -v swift-proxy-server >/dev/null || die "swift is not installed: lab/install.sh swift"
  local reps="${LAB_SWIFT_REPLICAS:-3}" conf="$STATE/conf" me
  local mc pp ap cp op
  get_ports 5; mc=${PORTS[0]} pp=${PORTS[1]} ap=${PORTS[2]} cp=${PORTS[3]} op=${PORTS[4]}
  me="$(id -un)"
  mkdir -p "$conf" "$STATE/run" "$STATE/cache"
  local i
  for ((i = 0; i < reps; i++)); do mkdir -p "$STATE/srv/d$i"; done
  cat >"$conf/swift.conf" <<EOF
[swift-hash]
swift_hash_path_suffix = dfsbench-lab
swift_hash_path_prefix = dfsbench-lab

[storage-policy:0]
name = lab
default = yes
EOF
  /usr/bin/python3 - "$conf" "$reps" "$ap" "$cp" "$op" <<'PY'
import os, sys
from swift.common.ring import RingBuilder
conf, reps, ports = sys.argv[1], int(sys.argv[2]), sys.argv[3:6]
for kind, port in zip(("account", "container", "object"), ports):
    b = RingBuilder(8, reps, 0)
    for i in range(reps):
        b.add_dev({"id": i, "region": 1, "zone": i + 1, "ip": "127.0.0.1",
                   "port": int(port), "device": "d%d" % i, "weight": 100, "meta": ""})
    b.rebalance()
    b.save(os.path.join(conf, kind + ".builder"))
    b.get_ring().save(os.path.join(conf, kind + ".ring.gz"))
PY
  local common
  common="swift_dir = $conf
devices = $STATE/srv
mount_check = false
bind_ip = 127.0.0.1
user = $me
workers = 0
recon_cache_path = $STATE/cache
log_level = INFO"
  local kind port
  for kind in account container object; do
    case $kind in account) port=$ap ;; container) port=$cp ;; object) port=$op ;; esac
    cat >"$conf/$kind-server.conf" <<EOF
[DEFAULT]
$common
bind_port = $port
log_name = $kind-server

[pipeline:main]
pipeline = $kind-server

[app:$kind-server]
use = egg:swift#$kind
EOF
  done
  cat >"$conf/proxy-server.conf" <<EOF
[DEFAULT]
swift_dir = $conf
bind_ip = 127.0.0.1
bind_port = $pp
user = $me
workers = ${LAB_SWIFT_PROXY_WORKERS:-1}
log_name = proxy-server
log_level = INFO

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo versioned_writes symlink proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$mc
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:s3api]
use = egg:swift#s3api
location = $S3_REGION
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = $SWIFT_KEY .admin
user_admin_admin = admin .admin .reseller_admin
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
allow_object_versioning = true
[filter:symlink]
use = egg:swift#symlink
EOF
  start_daemon "$STATE" memcached memcached -l 127.0.0.1 -p "$mc" -U 0 -m 64 -u "$me" -v
  for kind in account container object; do
    start_daemon "$STATE" "$kind" "swift-$kind-server" "$conf/$kind-server.conf" -v
  done
  start_daemon "$STATE" proxy swift-proxy-server "$conf/proxy-server.conf" -v
  local url="http://127.0.0.1:$pp"
  wait_until "$STATE" "$TIMEOUT" "Swift proxy healthcheck on $url" \
    lcurl --fail -o /dev/null "$url/healthcheck"
  wait_until "$STATE" "$TIMEOUT" "Swift tempauth + container $BUCKET + PUT/GET" \
    swift_roundtrip "$url"
  # the container is also the S3 bucket (s3api); check that path too
  wait_until "$STATE" "$TIMEOUT" "S3 (s3api) PUT+GET round trip on $url" \
    s3_roundtrip "$url" "$SWIFT_USER" "$SWIFT_KEY" "$S3_REGION" "$BUCKET" ".lab-ready-s3"
  write_s3_env "$url" "$SWIFT_USER" "$SWIFT_KEY"
  {
    env_line DFSBENCH_SWIFT_AUTH_URL "$url/auth/v1.0"
    env_line DFSBENCH_SWIFT_USER "$SWIFT_USER"
    env_line DFSBENCH_SWIFT_KEY "$SWIFT_KEY"
    env_line DFSBENCH_SWIFT_CONTAINER "$BUCKET"
    env_line DFSBENCH_SWIFT_STORAGE_URL "$url/v1/AUTH_test"
    env_line ST_AUTH "$url/auth/v1.0"
    env_line ST_USER "$SWIFT_USER"
    env_line ST_KEY "$SWIFT_KEY"
    env_line OS_AUTH_URL "$url/auth/v1.0"
    env_line DFSBENCH_SWIFT_REPLICAS "$reps"
  } >>"$STATE/env.sh"
  echo "$url/healthcheck" >"$STATE/probe-url"
}

# swift_auth URL: prints "STORAGE_URL TOKEN" from tempauth.
swift_auth() {
  lcurl --fail -D - -o /dev/null -H "X-Auth-User: $SWIFT_USER" -H "X-Auth-Key: $SWIFT_KEY" "$1/auth/v1.0" |
    tr -d '\r' | awk -F': ' 'tolower($1)=="x-storage-url"{u=$2} tolower($1)=="x-auth-token"{t=$2} END{if(u&&t) print u, t; else exit 1}'
}

swift_roundtrip() {
  local url="$1" su tok body got
  read -r su tok < <(swift_auth "$url") || return 1
  [ -n "$tok" ] || return 1
  lcurl --fail -o /dev/null -X PUT -H "X-Auth-Token: $tok" "$su/$BUCKET" || return 1
  body="dfsbench-lab $(date +%s%N)"
  printf '%s' "$body" | lcurl --fail -o /dev/null -X PUT -H "X-Auth-Token: $tok" -T - "$su/$BUCKET/.lab-ready" || return 1
  got="$(lcurl --fail -H "X-Auth-Token: $tok" "$su/$BUCKET/.lab-ready")" || return 1
  [ "$got" = "$body" ] || return 1
  lcurl --fail -o /dev/null -X DELETE -H "X-Auth-Token: $tok" "$su/$BUCKET/.lab-ready"
}

# ---- HDFS: NameNode + 2 DataNodes -------------------------------------------
HDFS_HOME="$CACHE_DIR/hdfs"

hdfs_site() { # FILE NAME=VALUE...
  local f="$1" kv; shift
  {
    echo '<?xml version="1.0"?>'
    echo '<configuration>'
    for kv in "$@"; do
      printf '  <property><name>%s</name><value>%s</value></property>\n' "${kv%%=*}" "${kv#*=}"
    done
    echo '</configuration>'
  } >"$f"
}

# hdfs_java CONF_DIR HEAP_MB [JVM_OPTS] CLASS ARGS...: sets JCMD to the java command.
hdfs_java() {
  local conf="$1" heap="$2"; shift 2
  local opens=() m
  for m in java.base/java.lang java.base/java.lang.reflect java.base/java.io java.base/java.net \
    java.base/java.nio java.base/java.util java.base/java.util.concurrent \
    java.base/java.util.concurrent.atomic java.base/java.util.regex java.base/java.security \
    java.base/sun.nio.ch java.base/sun.nio.cs java.base/sun.security.action \
    java.base/sun.util.calendar java.base/jdk.internal.misc java.security.jgss/sun.security.krb5; do
    opens+=(--add-opens "$m=ALL-UNNAMED")
  done
  # shellcheck disable=SC2054 # the commas are part of -D values
  JCMD=(java "-Xmx${heap}m" -XX:+UseParallelGC "${opens[@]}" \
    -Djava.net.preferIPv4Stack=true -Dhadoop.home.dir="$HDFS_HOME" \
    -Dhadoop.log.dir="$STATE/logs" -Dhadoop.root.logger=INFO,console \
    -Dlog4j.configuration="file:$conf/log4j.properties" \
    -cp "$conf:$HDFS_HOME/res:$HDFS_HOME/lib/*" "$@")
}

start_hdfs() {
  command -v java >/dev/null || die "java is not installed: lab/install.sh hdfs"
  [ -f "$HDFS_HOME/lib/hadoop-hdfs-$HADOOP_VERSION.jar" ] || die "hadoop jars missing: lab/install.sh hdfs"
  local rpc http ports=() i
  get_ports 8; ports=("${PORTS[@]}")
  rpc=${ports[0]} http=${ports[1]}
  local common=(
    "fs.defaultFS=hdfs://127.0.0.1:$rpc"
    "hadoop.tmp.dir=$STATE/tmp"
    "hadoop.security.authentication=simple"
    "dfs.namenode.rpc-address=127.0.0.1:$rpc"
    "dfs.namenode.http-address=127.0.0.1:$http"
    "dfs.namenode.https-address=127.0.0.1:0"
    "dfs.namenode.secondary.http-address=127.0.0.1:0"
    "dfs.namenode.secondary.https-address=127.0.0.1:0"
    "dfs.namenode.backup.address=127.0.0.1:0"
    "dfs.namenode.backup.http-address=127.0.0.1:0"
    "dfs.namenode.name.dir=file://$STATE/nn"
    "dfs.replication=${LAB_HDFS_REPLICATION:-2}"
    "dfs.permissions.enabled=false"
    "dfs.webhdfs.enabled=true"
    "dfs.namenode.safemode.extension=0"
    "dfs.namenode.safemode.min.datanodes=0"
    "dfs.namenode.datanode.registration.ip-hostname-check=false"
    "dfs.heartbeat.interval=1"
    "dfs.namenode.heartbeat.recheck-interval=10000"
    "dfs.client.use.datanode.hostname=false"
    "dfs.datanode.hostname=127.0.0.1"
  )
  local log4j='log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR'
  mkdir -p "$STATE/conf/nn" "$STATE/tmp" "$STATE/logs"
  hdfs_site "$STATE/conf/nn/hdfs-site.xml" "${common[@]}"
  hdfs_site "$STATE/conf/nn/core-site.xml" "fs.defaultFS=hdfs://127.0.0.1:$rpc"
  echo "$log4j" >"$STATE/conf/nn/log4j.properties"
  for i in 1 2; do
    local d="$STATE/conf/dn$i" b=$((2 + 3 * (i - 1)))
    mkdir -p "$d" "$STATE/dn$i"
    hdfs_site "$d/hdfs-site.xml" "${common[@]}" \
      "dfs.datanode.data.dir=file://$STATE/dn$i" \
      "dfs.datanode.address=127.0.0.1:${ports[b]}" \
      "dfs.datanode.http.address=127.0.0.1:${ports[b + 1]}" \
      "dfs.datanode.ipc.address=127.0.0.1:${ports[b + 2]}" \
      "dfs.datanode.https.address=127.0.0.1:0"
    cp "$STATE/conf/nn/core-site.xml" "$STATE/conf/nn/log4j.properties" "$d/"
  done
  # Format the NameNode once (one-shot JVM, ~3 s) and keep a copy of the
  # empty formatted name dir in the cache for later starts.
  local tmpl="$HDFS_HOME/nn-formatted-$HADOOP_VERSION"
  if [ -f "$tmpl/current/VERSION" ]; then
    cp -a "$tmpl" "$STATE/nn"
  else
    JCMD=()
    hdfs_java "$STATE/conf/nn" 256 -XX:TieredStopAtLevel=1 \
      org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive -clusterid dfsbench-lab
    if ! "${JCMD[@]}" >"$STATE/logs/format.log" 2>&1; then
      tail -n 30 "$STATE/logs/format.log" >&2
      die "hdfs namenode -format failed"
    fi
    cp -a "$STATE/nn" "$tmpl.tmp.$$" && { mv -T "$tmpl.tmp.$$" "$tmpl" 2>/dev/null || rm -rf "$tmpl.tmp.$$"; }
  fi
  hdfs_java "$STATE/conf/nn" "${LAB_HDFS_NN_HEAP_MB:-384}" \
    org.apache.hadoop.hdfs.server.namenode.NameNode
  start_daemon "$STATE" namenode "${JCMD[@]}"
  for i in 1 2; do
    hdfs_java "$STATE/conf/dn$i" "${LAB_HDFS_DN_HEAP_MB:-256}" \
      org.apache.hadoop.hdfs.server.datanode.DataNode
    start_daemon "$STATE" "datanode$i" "${JCMD[@]}"
  done
  local web="http://127.0.0.1:$http"
  wait_until "$STATE" "$TIMEOUT" "NameNode out of safe mode with 2 live DataNodes ($web/jmx)" \
    hdfs_ready "$web" 2
  wait_until "$STATE" "$TIMEOUT" "WebHDFS write+read round trip" hdfs_roundtrip "$web"
  {
    env_line DFSBENCH_HDFS_URL "hdfs://127.0.0.1:$rpc"
    env_line DFSBENCH_HDFS_NAMENODE "127.0.0.1:$rpc"
    env_line DFSBENCH_WEBHDFS_URL "$web/webhdfs/v1"
    env_line DFSBENCH_HDFS_HTTP "$web"
    env_line DFSBENCH_HDFS_DIR "/$BUCKET"
    env_line DFSBENCH_HDFS_DATANODES "127.0.0.1:${ports[2]},127.0.0.1:${ports[5]}"
    env_line HADOOP_USER_NAME "$(id -un)"
  } >>"$STATE/env.sh"
  echo "$web/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo" >"$STATE/probe-url"
}

hdfs_ready() { # WEB N_DATANODES
  local j
  j="$(lcurl --fail "$1/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState")" || return 1
  python3 -c '
import json, sys
b = json.loads(sys.argv[1])["beans"][0]
ok = b.get("NumLiveDataNodes") == int(sys.argv[2]) and b.get("FSState") == "Operational"
sys.exit(0 if ok else 1)' "$j" "$2" || return 1
  j="$(lcurl --fail "$1/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")" || return 1
  python3 -c '
import json, sys
sys.exit(0 if json.loads(sys.argv[1])["beans"][0].get("Safemode", "x") == "" else 1)' "$j"
}

hdfs_roundtrip() {
  local w="$1/webhdfs/v1" u body got
  u="user.name=$(id -un)"
  lcurl --fail -o /dev/null -X PUT "$w/$BUCKET?op=MKDIRS&$u" || return 1
  body="dfsbench-lab $(date +%s%N)"
  # CREATE is two steps: the NameNode answers 307 with a DataNode URL, the
  # data goes there.
  local loc
  loc="$(lcurl --fail -o /dev/null -w '%{redirect_url}' -X PUT \
    "$w/$BUCKET/.lab-ready?op=CREATE&overwrite=true&$u")" || return 1
  [ -n "$loc" ] || return 1
  printf '%s' "$body" | lcurl --fail -o /dev/null -X PUT -T - "$loc" || return 1
  got="$(lcurl --fail -L "$w/$BUCKET/.lab-ready?op=OPEN&$u")" || return 1
  [ "$got" = "$body" ] || return 1
  lcurl --fail -o /dev/null -X DELETE "$w/$BUCKET/.lab-ready?op=DELETE&$u"
}

# ---- commands ------------------------------------------------------------------
cmd_start() {
  if [ -f "$STATE/$MARKER" ]; then
    if any_alive "$STATE"; then
      die "$NAME is already running from $STATE (lab/server.sh stop $NAME first)"
    fi
    rm -rf "$STATE"
  elif [ -e "$STATE" ] && [ -n "$(ls -A "$STATE" 2>/dev/null)" ]; then
    die "$STATE exists, is not empty and was not made by server.sh: refusing to use it"
  fi
  mkdir -p "$STATE/logs" "$STATE/pids"
  STATE="$(cd "$STATE" && pwd)"
  echo "$NAME" >"$STATE/$MARKER"
  : >"$STATE/env.sh"
  env_line DFSBENCH_LAB_SERVER "$NAME" >>"$STATE/env.sh"
  env_line DFSBENCH_LAB_STATE_DIR "$STATE" >>"$STATE/env.sh"
  local t0
  t0="$(now_ms)"
  STARTING=1
  trap 'on_start_exit' EXIT
  "start_$NAME"
  STARTING=0
  local ms=$(($(now_ms) - t0))
  echo "$ms" >"$STATE/start-ms"
  log "$NAME ready in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s (state: $STATE; pids: $(pids_of "$STATE" | xargs))"
}

on_start_exit() {
  local rc=$?
  if [ "${STARTING:-0}" = 1 ] && [ $rc -ne 0 ]; then
    echo "[lab] $NAME failed to start; stopping what was started (logs stay in $STATE/logs)" >&2
    stop_all "$STATE" || true
  fi
}

cmd_stop() {
  if [ ! -e "$STATE" ]; then
    log "$NAME: not running ($STATE does not exist)"; return 0
  fi
  [ -f "$STATE/$MARKER" ] || die "$STATE was not made by server.sh: not touching it"
  if ! stop_all "$STATE"; then
    die "some processes of $NAME did not stop; state kept in $STATE"
  fi
  rm -rf "$STATE"
  log "$NAME stopped"
}

cmd_status() {
  if [ ! -f "$STATE/$MARKER" ]; then
    echo "$NAME: not running"; return 3
  fi
  local f n dead=0 pid
  for f in "$STATE"/pids/*.pid; do
    [ -e "$f" ] || continue
    n="$(basename "$f" .pid)"
    read -r pid _ <"$f"
    if daemon_alive "$STATE" "$n"; then
      echo "  $n: pid $pid running"
    else
      echo "  $n: pid $pid DEAD"; dead=1
    fi
  done
  local probe=()
  [ "$NAME" != webdav ] || probe=(-X PROPFIND -H 'Depth: 0')
  if [ -f "$STATE/probe-url" ] && lcurl --fail -o /dev/null --max-time 5 "${probe[@]}" "$(cat "$STATE/probe-url")"; then
    echo "$NAME: responding at $(cat "$STATE/probe-url")"
  else
    echo "$NAME: NOT responding"; dead=1
  fi
  return $dead
}

cmd_env() {
  if [ ! -f "$STATE/$MARKER" ] || [ ! -s "$STATE/env.sh" ]; then
    die "$NAME is not running (no $STATE/env.sh)"
  fi
  any_alive "$STATE" || die "$NAME: no process alive under $STATE"
  cat "$STATE/env.sh"
  # For `dfsbench run/study --server-pid "$DFSBENCH_SERVER_PIDS"`: the server's CPU per phase.
  echo "export DFSBENCH_SERVER_PIDS=$(pids_of "$STATE" | paste -sd, -)"
}

main() {
  [ $# -ge 2 ] || usage
  CMD="$1"; NAME="$2"; shift 2
  STATE=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) [ $# -ge 2 ] || usage; STATE="$2"; shift 2 ;;
      --dir=*) STATE="${1#--dir=}"; shift ;;
      *) usage ;;
    esac
  done
  case " $NAMES " in *" $NAME "*) ;; *) die "unknown server '$NAME' ($NAMES)" ;; esac
  [ -n "$STATE" ] || STATE="$CACHE_DIR/lab/$NAME"
  TIMEOUT="${LAB_START_TIMEOUT:-120}"
  case "$CMD" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) cmd_env ;;
    *) usage ;;
  esac
}

main "$@"
