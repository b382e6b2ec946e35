#!/usr/bin/env bash
# OpenSearch for tributary's test bed: one single-node server on loopback, run straight from the
# jars that pom.xml's profile "opensearch" resolves (no distribution, no container), on the
# machine's Java 17. Started and stopped by bed.sh (see README.md beside this file).
#
#   opensearch.sh fetch       resolve the jars into the cache (skipped when complete)
#   opensearch.sh start DIR   fresh node; prints its facts as KEY=value lines on stdout
#   opensearch.sh stop DIR    stop it (SIGTERM, then SIGKILL); no error if not running
#
# OpenSearch refuses to run as root: as root the node runs as the user "nobody", in a fresh
# /tmp/tributary-os.* directory (named in DIR/opensearch.dir) holding its config, data, logs and
# a hard-linked copy of the cached jars, since nobody cannot enter root's cache or DIR. Its pid
# is in DIR/opensearch.pid.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
POM=$HERE/pom.xml
CACHE=${TRIBUTARY_CACHE:-$HOME/.cache/tributary}
OS_VERSION=$(sed -n 's:.*<opensearch.version>\(.*\)</opensearch.version>.*:\1:p' "$POM")
OS_HOME=$CACHE/opensearch-$OS_VERSION
READY_TIMEOUT=${BED_OPENSEARCH_READY_TIMEOUT:-120} # seconds from launch to a served request
STOP_TIMEOUT=${BED_STOP_TIMEOUT:-30}               # seconds of SIGTERM grace before SIGKILL
HEAP=${BED_OPENSEARCH_HEAP:-512m}

# shellcheck source=bed_lib.sh
. "$HERE/bed_lib.sh"

log() { echo "opensearch.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# ---------------------------------------------------------------------------------------- fetch
# A module directory as the distribution has it: its jars, a descriptor and a security policy.
write_module() {
  local dir=$1 name=$2 classname=$3 description=$4
  cat >"$dir/plugin-descriptor.properties" <<EOF
description=$description
version=$OS_VERSION
name=$name
classname=$classname
java.version=11
opensearch.version=$OS_VERSION
extended.plugins=
has.native.controller=false
EOF
  # The node runs under Java's security manager; a module's jars get what its policy grants.
  # This is a loopback test node: the modules may do what the server itself may.
  cat >"$dir/plugin-security.policy" <<'EOF'
grant {
  permission java.security.AllPermission;
};
EOF
}

cmd_fetch() {
  local stamp tmp common
  stamp=$(sha256sum "$POM" "$HERE/opensearch.sh" | sha256sum | cut -d' ' -f1)
  if [[ -f $OS_HOME/.complete && $(<"$OS_HOME/.complete") == "$stamp" ]]; then
    return 0
  fi
  log "resolving OpenSearch $OS_VERSION jars into $OS_HOME"
  tmp=$OS_HOME.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp/plugins" "$tmp/modules"
  common=(-q -B -f "$POM" -P opensearch dependency:copy-dependencies -DincludeScope=runtime)
  # lib/: the server and everything it needs, without the modules and their netty.
  mvn "${common[@]}" -DoutputDirectory="$tmp/lib" \
    -DexcludeGroupIds=io.netty,org.opensearch.plugin >&2
  mvn "${common[@]}" -DoutputDirectory="$tmp/modules/transport-netty4" \
    -DincludeGroupIds=io.netty,org.opensearch.plugin -DexcludeArtifactIds=analysis-common >&2
  mvn "${common[@]}" -DoutputDirectory="$tmp/modules/analysis-common" \
    -DincludeArtifactIds=analysis-common >&2
  write_module "$tmp/modules/transport-netty4" transport-netty4 \
    org.opensearch.transport.Netty4Plugin "HTTP and transport layers on Netty 4"
  write_module "$tmp/modules/analysis-common" analysis-common \
    org.opensearch.analysis.common.CommonAnalysisPlugin "Common analysis components"
  echo "$stamp" >"$tmp/.complete"
  rm -rf "$OS_HOME"
  mv "$tmp" "$OS_HOME"
}

# ---------------------------------------------------------------------------------------- start
# True when PID is alive and is an OpenSearch node (a reused pid has another cmdline).
is_node() {
  [[ -n $1 && -r /proc/$1/cmdline ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q 'org\.opensearch\.bootstrap\.OpenSearch'
}

show_logs() {
  local f
  for f in "$1/logs/tributary-bed.log" "$1/logs/opensearch.out"; do
    [[ -s $f ]] && { echo "---- tail of $f" >&2; tail -n 40 "$f" >&2; }
  done
  return 0
}

cmd_start() {
  local dir=$1 root http transport pid url
  local -a as_node=()
  [[ -d $OS_HOME/lib ]] || die "no OpenSearch jars in $OS_HOME; run: bed.sh fetch"
  cmd_stop "$dir"
  root=$(mktemp -d /tmp/tributary-os.XXXXXX)
  echo "$root" >"$dir/opensearch.dir"
  mkdir -p "$root/config" "$root/data" "$root/logs" "$root/tmp"
  # Hard links when the cache is on the same file system, else a copy (about 70 MB).
  cp -al "$OS_HOME" "$root/home" 2>/dev/null || { rm -rf "$root/home"; cp -a "$OS_HOME" "$root/home"; }
  read -r http transport < <(free_ports 2)
  url=http://127.0.0.1:$http

  # Loopback only, so the production bootstrap checks do not apply; one node, its own cluster.
  # The disk thresholds are off: a full test disk must not make indexes read-only mid-test.
  cat >"$root/config/opensearch.yml" <<EOF
cluster.name: tributary-bed
node.name: bed
path.data: $root/data
path.logs: $root/logs
network.host: 127.0.0.1
http.port: $http
transport.port: $transport
discovery.type: single-node
cluster.routing.allocation.disk.threshold_enabled: false
action.auto_create_index: true
EOF
  cat >"$root/config/log4j2.properties" <<'EOF'
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:opensearch.logs.base_path}${sys:file.separator}${sys:opensearch.logs.cluster_name}.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] [%node_name]%marker %m%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
EOF
  if [[ $(id -u) -eq 0 ]]; then
    chown -R nobody:nogroup "$root"
    # setpriv execs java itself, so the pid below is the node's (a test may SIGSTOP it).
    as_node=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  fi

  # setsid: the node outlives this script; only `opensearch.sh stop` (or bed.sh stop) ends it.
  nohup setsid "${as_node[@]}" java -Xms"$HEAP" -Xmx"$HEAP" -XX:+UseSerialGC -Djava.awt.headless=true \
    -Dfile.encoding=UTF-8 -Djna.nosys=true -Djava.io.tmpdir="$root/tmp" \
    -Dopensearch.path.home="$root/home" -Dopensearch.path.conf="$root/config" \
    -Dopensearch.distribution.type=tar -Dopensearch.bundled_jdk=false \
    -cp "$root/home/lib/*" org.opensearch.bootstrap.OpenSearch >"$root/logs/opensearch.out" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/opensearch.pid"

  # Ready means a real request is served: cluster health green or yellow, bounded.
  local deadline=$((SECONDS + READY_TIMEOUT))
  until curl -fsS -m 5 "$url/_cluster/health?wait_for_status=yellow&timeout=4s" >/dev/null 2>&1; do
    if ! is_running "$pid"; then
      show_logs "$root"
      die "OpenSearch exited during start-up"
    fi
    if ((SECONDS >= deadline)); then
      show_logs "$root"
      cmd_stop "$dir"
      die "OpenSearch was not ready after ${READY_TIMEOUT}s"
    fi
    sleep 0.5
  done

  cat <<EOF
BED_OPENSEARCH_URL=$url
BED_OPENSEARCH_VERSION=$OS_VERSION
BED_OPENSEARCH_PID=$pid
EOF
  log "OpenSearch $OS_VERSION ready at $url (pid $pid)"
}

# ---------------------------------------------------------------------------------------- stop
cmd_stop() {
  local dir=$1 pid i root
  pid=$(cat "$dir/opensearch.pid" 2>/dev/null || true)
  if is_node "$pid"; then
    # A node frozen by a test (SIGSTOP) would never see SIGTERM: thaw it first.
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
      is_node "$pid" || break
      sleep 0.1
    done
    if is_node "$pid"; then
      log "OpenSearch $pid still alive after ${STOP_TIMEOUT}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        is_node "$pid" || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$dir/opensearch.pid"
  root=$(cat "$dir/opensearch.dir" 2>/dev/null || true)
  # Only a directory this script made is removed.
  [[ $root == /tmp/tributary-os.* ]] && rm -rf "$root"
  rm -f "$dir/opensearch.dir"
}

case ${1:-} in
fetch) [[ $# -eq 1 ]] || die "usage: opensearch.sh fetch"; cmd_fetch ;;
start) [[ $# -eq 2 ]] || die "usage: opensearch.sh start DIR"; cmd_start "$2" ;;
stop) [[ $# -eq 2 ]] || die "usage: opensearch.sh stop DIR"; cmd_stop "$2" ;;
*) sed -n '6,8s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
