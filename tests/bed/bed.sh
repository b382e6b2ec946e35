#!/usr/bin/env bash
# Test bed for tributary: one Kafka KRaft node (broker + controller; 4.4 by default, 3.9 with
# BED_KAFKA_VERSION=3.9.2) on loopback, run from the jars that pom.xml resolves, a second such
# node of the same version (PLAINTEXT only: a second cluster, for MirrorMaker 2), one PostgreSQL
# 15 server (postgres.sh) and one OpenSearch node (opensearch.sh). See README.md beside this file.
#
#   bed.sh fetch                      resolve the jars into the cache (once)
#   bed.sh start DIR                  fresh broker (TLS, SCRAM users, ports), second cluster,
#                                     PostgreSQL server and OpenSearch node; writes DIR/bed.env,
#                                     DIR/bed.json
#   bed.sh stop DIR                   stop them all (idempotent)
#   bed.sh tool DIR NAME [ARGS...]    run a Kafka CLI tool (topics, configs, consumer-groups,
#                                     console-consumer, console-producer, get-offsets, delete-records);
#                                     pass --bootstrap-server yourself
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF=$HERE/$(basename "${BASH_SOURCE[0]}")
POM=$HERE/pom.xml
CACHE=${TRIBUTARY_CACHE:-$HOME/.cache/tributary}
# pom.xml is the one place that names the default versions; BED_KAFKA_VERSION picks another
# Kafka (3.9.2 for the 3.9 line), whose own Connect then runs the FileStream connectors.
pom_property() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$POM"; }
DEFAULT_KAFKA_VERSION=$(pom_property kafka.version)
KAFKA_VERSION=${BED_KAFKA_VERSION:-$DEFAULT_KAFKA_VERSION}
if [[ $KAFKA_VERSION == "$DEFAULT_KAFKA_VERSION" ]]; then
  CONNECT_VERSION=$(pom_property connect.version)
else
  CONNECT_VERSION=$KAFKA_VERSION
fi
[[ $KAFKA_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  { echo "bed.sh: BED_KAFKA_VERSION '$KAFKA_VERSION' is not a version like 3.9.2" >&2; exit 2; }
KAFKA_HOME=$CACHE/kafka-$KAFKA_VERSION
CONNECT_HOME=$KAFKA_HOME/connect-$CONNECT_VERSION
READY_TIMEOUT=${BED_READY_TIMEOUT:-90}   # seconds from launch to a served request
STOP_TIMEOUT=${BED_STOP_TIMEOUT:-30}     # seconds of SIGTERM grace before SIGKILL
# Tools are short-lived JVMs: a small heap, serial GC and C1 only start them faster on 2 cores.
TOOL_JAVA_OPTS=${BED_TOOL_JAVA_OPTS:--Xmx256M -XX:+UseSerialGC -XX:TieredStopAtLevel=1}

# shellcheck source=bed_lib.sh
. "$HERE/bed_lib.sh"

log() { echo "bed.sh: $*" >&2; }
die() { log "$*"; exit 1; }
usage() { sed -n '6,11s/^# \{0,1\}//p' "$SELF" >&2; exit 2; }

# Kafka 4.x logs through log4j2, 3.9 through reload4j (log4j 1 configuration).
log_flavor() { if [[ ${1%%.*} -ge 4 ]]; then echo log4j2; else echo reload4j; fi; }

# ---------------------------------------------------------------------------------------- fetch
cmd_fetch() {
  # The marker holds the pom's hash, so an edited pom (new version, new jar) re-resolves.
  # ... and the versions, so a Kafka chosen by the environment resolves into its own dir.
  local stamp tmp connect=connect-$CONNECT_VERSION
  local -a mvn=(mvn -q -B -f "$POM" -Dkafka.version="$KAFKA_VERSION"
    -Dconnect.version="$CONNECT_VERSION" dependency:copy-dependencies)
  stamp="$(sha256sum "$POM" | cut -d' ' -f1) $KAFKA_VERSION $CONNECT_VERSION"
  "$HERE/opensearch.sh" fetch
  if [[ -f $KAFKA_HOME/.complete && $(<"$KAFKA_HOME/.complete") == "$stamp" ]]; then
    return 0
  fi
  log "resolving Kafka $KAFKA_VERSION and Connect $CONNECT_VERSION jars into $KAFKA_HOME"
  # Resolve into a temporary dir and rename at the end: an interrupted fetch leaves no half cache.
  tmp=$KAFKA_HOME.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # mvn -q prints only errors; keep stdout clean for callers.
  "${mvn[@]}" -P "libs,$(log_flavor "$KAFKA_VERSION")" \
    -DincludeScope=runtime -DoutputDirectory="$tmp/libs" >&2
  "${mvn[@]}" -P "connect,$(log_flavor "$CONNECT_VERSION")" \
    -DincludeScope=runtime -DoutputDirectory="$tmp/$connect/libs" >&2
  "${mvn[@]}" -P plugins -DexcludeTransitive=true -DoutputDirectory="$tmp/$connect/plugins" >&2
  echo "$stamp" >"$tmp/.complete"
  rm -rf "$KAFKA_HOME"
  mv "$tmp" "$KAFKA_HOME"
}

# ---------------------------------------------------------------------------------------- helpers
# A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (like Uuid.toString).
# One starting with "-" would be read as an option by StorageTool, so Kafka avoids it too.
random_cluster_id() {
  python3 -c '
import base64, os
while True:
    s = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
    if not s.startswith("-"):
        print(s)
        break'
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# True when PID is alive and is a Kafka broker (a reused pid or a zombie has another cmdline).
is_broker() {
  [[ -n $1 && -r /proc/$1/cmdline ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q 'kafka\.Kafka '
}

broker_pid() { cat "$1/kafka.pid" 2>/dev/null || true; }

# Version and lib dir of a bed: the ones it was started with, else this checkout's.
version_and_libs_of() {
  if [[ -f $1/bed.env ]]; then
    # shellcheck disable=SC1091 # written by cmd_start
    (source "$1/bed.env" && echo "$BED_KAFKA_VERSION $BED_KAFKA_LIBS")
  else
    echo "$KAFKA_VERSION $KAFKA_HOME/libs"
  fi
}

# The JVM option that points FLAVOR's logging at FILE.
log_option() {
  if [[ $1 == log4j2 ]]; then echo "-Dlog4j2.configurationFile=$2"; else echo "-Dlog4j.configuration=file:$2"; fi
}

# write_log_config FLAVOR FILE LEVEL LOGFILE STDERR: a logging configuration with the root
# logger at LEVEL, into LOGFILE (none when empty; written as given, so a system property
# reference of the flavor works), and to stderr from level STDERR up.
write_log_config() {
  local flavor=$1 file=$2 level=$3 logfile=$4 stderr=$5 pattern='[%d] %p %m (%c)%n'
  if [[ $flavor == log4j2 ]]; then
    {
      echo "status = error"
      echo "rootLogger.level = $level"
      echo "rootLogger.appenderRef.stderr.ref = stderr"
      echo "appender.stderr.type = Console"
      echo "appender.stderr.name = stderr"
      echo "appender.stderr.target = SYSTEM_ERR"
      echo "appender.stderr.layout.type = PatternLayout"
      echo "appender.stderr.layout.pattern = $pattern"
      echo "appender.stderr.filter.threshold.type = ThresholdFilter"
      echo "appender.stderr.filter.threshold.level = $stderr"
      if [[ -n $logfile ]]; then
        echo "rootLogger.appenderRef.file.ref = file"
        echo "appender.file.type = File"
        echo "appender.file.name = file"
        echo "appender.file.fileName = $logfile"
        echo "appender.file.layout.type = PatternLayout"
        echo "appender.file.layout.pattern = $pattern"
      fi
      # Connect's plugin scan is noisy at INFO.
      echo "logger.reflections.name = org.reflections"
      echo "logger.reflections.level = error"
    } >"$file"
  else
    {
      echo "log4j.rootLogger=$level, stderr${logfile:+, file}"
      echo "log4j.appender.stderr=org.apache.log4j.ConsoleAppender"
      echo "log4j.appender.stderr.Target=System.err"
      echo "log4j.appender.stderr.Threshold=$stderr"
      echo "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout"
      echo "log4j.appender.stderr.layout.ConversionPattern=$pattern"
      if [[ -n $logfile ]]; then
        echo "log4j.appender.file=org.apache.log4j.FileAppender"
        echo "log4j.appender.file.File=$logfile"
        echo "log4j.appender.file.layout=org.apache.log4j.PatternLayout"
        echo "log4j.appender.file.layout.ConversionPattern=$pattern"
      fi
      echo "log4j.logger.org.reflections=ERROR"
    } >"$file"
  fi
}

# Tools log only warnings, to stderr, so their stdout stays parseable.
write_tools_log_config() { write_log_config "$1" "$2" WARN "" WARN; }

show_logs() {
  local f
  for f in "$1/logs/server.log" "$1/logs/kafka.out"; do
    [[ -s $f ]] && { echo "---- tail of $f" >&2; tail -n 40 "$f" >&2; }
  done
  return 0
}

# CA and broker certificate, made fresh by openssl at every start (nothing secret is kept in git).
make_tls() {
  local t=$1
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=tributary test CA" \
    -keyout "$t/ca.key" -out "$t/ca.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  # genpkey writes an unencrypted PKCS#8 key ("BEGIN PRIVATE KEY"), the form Kafka's PEM store reads.
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$t/broker.key" 2>/dev/null
  openssl req -new -key "$t/broker.key" -subj "/CN=localhost" -out "$t/broker.csr"
  # Clients connect to 127.0.0.1 and verify the host name (librdkafka does by default): SAN has both.
  printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature,keyEncipherment' \
    'extendedKeyUsage=serverAuth' 'subjectAltName=DNS:localhost,IP:127.0.0.1' >"$t/broker.ext"
  openssl x509 -req -in "$t/broker.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -days 30 \
    -set_serial "0x$(openssl rand -hex 16)" -extfile "$t/broker.ext" -out "$t/broker.pem" 2>/dev/null
  # Kafka's PEM keystore (KIP-651): private key plus certificate chain in one file.
  cat "$t/broker.key" "$t/broker.pem" "$t/ca.pem" >"$t/broker-keystore.pem"
}

# Waits until the broker PID (its logs in LOGDIR, of the bed DIR) serves a real request, the
# topic list over the PLAINTEXT listener PLAIN, and the other PORTS accept; stops the whole
# bed and dies when the broker exits or READY_TIMEOUT passes.
wait_broker() {
  local dir=$1 logdir=$2 pid=$3 plain=$4 port ports_open
  shift 4
  local deadline=$((SECONDS + READY_TIMEOUT))
  while :; do
    ports_open=true
    for port in "$plain" "$@"; do port_open "$port" || ports_open=false; done
    if $ports_open && timeout "$((deadline - SECONDS > 1 ? deadline - SECONDS : 1))" \
      "$SELF" tool "$dir" topics --bootstrap-server "127.0.0.1:$plain" --list >/dev/null 2>&1; then
      return 0
    fi
    if ! is_running "$pid"; then
      show_logs "$logdir"
      cmd_stop "$dir"
      die "the broker of $logdir exited during start-up"
    fi
    if ((SECONDS >= deadline)); then
      show_logs "$logdir"
      cmd_stop "$dir"
      die "the broker of $logdir was not ready after ${READY_TIMEOUT}s"
    fi
    sleep 0.5
  done
}

# The second cluster, in DIR/kafka2: one KRaft node with a PLAINTEXT listener only, otherwise
# set up as the first. Prints "PORT PID CLUSTER_ID" once it serves requests.
start_kafka2() {
  local dir=$1 libs=$2 k2=$1/kafka2 plain ctrl cid pid flavor
  flavor=$(log_flavor "$KAFKA_VERSION")
  mkdir -p "$k2/data" "$k2/logs"
  read -r plain ctrl < <(free_ports 2)
  cid=$(random_cluster_id)
  cat >"$k2/server.properties" <<EOF
# Written by tests/bed/bed.sh: the bed's second cluster, single-node KRaft on loopback.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=PLAINTEXT://127.0.0.1:$plain,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=PLAINTEXT://127.0.0.1:$plain
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$k2/data
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
default.replication.factor=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
num.partitions=1
EOF
  sed "s:$dir/logs/:$k2/logs/:" "$dir/log4j.properties" >"$k2/log4j.properties"
  # shellcheck disable=SC2086 # TOOL_JAVA_OPTS is a list of options
  if ! java $TOOL_JAVA_OPTS "$(log_option "$flavor" "$dir/tools-log4j.properties")" -cp "$libs/*" \
    kafka.tools.StorageTool format -t "$cid" -c "$k2/server.properties" >"$k2/logs/format.out" 2>&1; then
    cat "$k2/logs/format.out" >&2
    cmd_stop "$dir"
    die "formatting the second cluster's storage failed"
  fi
  nohup setsid java -Xmx512M -Xms128M -XX:+UseG1GC -Djava.awt.headless=true \
    "$(log_option "$flavor" "$k2/log4j.properties")" -cp "$libs/*" \
    kafka.Kafka "$k2/server.properties" >"$k2/logs/kafka.out" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$k2/kafka.pid"
  wait_broker "$dir" "$k2" "$pid" "$plain" >&2
  echo "$plain $pid $cid"
}

# Stops the broker whose kafka.pid is in DIR: SIGTERM, and SIGKILL after STOP_TIMEOUT.
stop_broker() {
  local dir=$1 pid i
  pid=$(broker_pid "$dir")
  if is_broker "$pid"; then
    # SIGTERM lets the broker shut down cleanly; SIGKILL only if that hangs.
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
      is_broker "$pid" || break
      sleep 0.1
    done
    if is_broker "$pid"; then
      log "broker $pid still alive after ${STOP_TIMEOUT}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        is_broker "$pid" || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$dir/kafka.pid"
}

# ---------------------------------------------------------------------------------------- start
cmd_start() {
  local dir=$1 pid plain sasl ctrl cid libs flavor connect_flavor connect_log
  cmd_fetch
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  pid=$(broker_pid "$dir")
  is_broker "$pid" && die "a broker is already running for $dir (pid $pid); run: bed.sh stop $dir"
  # Every start is fresh (certificates, passwords, ports, cluster id, data): bed.env tells the
  # new facts. Only the names this script writes are removed, never DIR itself.
  pid=$(broker_pid "$dir/kafka2")
  is_broker "$pid" && die "a second broker is already running for $dir (pid $pid); run: bed.sh stop $dir"
  rm -rf "$dir/tls" "$dir/data" "$dir/logs" "$dir/kafka2" "$dir/bed.env" "$dir/bed.json" "$dir/kafka.pid" \
    "$dir/server.properties" "$dir/log4j.properties" "$dir/tools-log4j.properties" \
    "$dir/connect-log4j.properties"
  umask 077 # key, passwords: owner only
  mkdir -p "$dir/tls" "$dir/data" "$dir/logs"
  libs=$KAFKA_HOME/libs
  flavor=$(log_flavor "$KAFKA_VERSION")

  make_tls "$dir/tls"
  local user256=tributary256 user512=tributary512 pass256 pass512
  # Hex passwords: StorageTool's --add-scram syntax has no escaping for "," "]" or "=".
  pass256=$(openssl rand -hex 24)
  pass512=$(openssl rand -hex 24)
  read -r plain sasl ctrl < <(free_ports 3)
  cid=$(random_cluster_id)

  cat >"$dir/server.properties" <<EOF
# Written by tests/bed/bed.sh: single-node KRaft test broker on loopback.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$ctrl
listeners=PLAINTEXT://127.0.0.1:$plain,SASL_SSL://127.0.0.1:$sasl,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=PLAINTEXT://127.0.0.1:$plain,SASL_SSL://127.0.0.1:$sasl
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$dir/data

# SASL_SSL: SCRAM users are created at format time (KIP-900); the server-side login module
# needs no credentials of its own, the inter-broker listener being PLAINTEXT.
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# PEM stores (KIP-651): no keystore password; the PKCS#8 key is unencrypted (owner-only file).
ssl.keystore.type=PEM
ssl.keystore.location=$dir/tls/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$dir/tls/ca.pem
ssl.client.auth=none

# One node: the internal topics' defaults (replication 3, min ISR 2) would make groups and
# transactions hang. Fewer internal partitions make the first group or transaction quicker.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
default.replication.factor=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
num.partitions=1
EOF

  # Broker logs go to files under DIR/logs; only errors reach kafka.out.
  write_log_config "$flavor" "$dir/log4j.properties" INFO "$dir/logs/server.log" ERROR
  write_tools_log_config "$flavor" "$dir/tools-log4j.properties"
  # A Connect peer logs at INFO into the file its JVM names with -Dtributary.connect.log=FILE.
  connect_flavor=$(log_flavor "$CONNECT_VERSION")
  # shellcheck disable=SC2016 # a system property reference for the logging framework
  connect_log='${tributary.connect.log}'
  # shellcheck disable=SC2016
  [[ $connect_flavor == log4j2 ]] && connect_log='${sys:tributary.connect.log}'
  write_log_config "$connect_flavor" "$dir/connect-log4j.properties" INFO "$connect_log" ERROR

  # shellcheck disable=SC2086 # TOOL_JAVA_OPTS is a list of options
  if ! java $TOOL_JAVA_OPTS "$(log_option "$flavor" "$dir/tools-log4j.properties")" -cp "$libs/*" \
    kafka.tools.StorageTool format -t "$cid" -c "$dir/server.properties" \
    --add-scram "SCRAM-SHA-256=[name=$user256,password=$pass256]" \
    --add-scram "SCRAM-SHA-512=[name=$user512,password=$pass512]" >"$dir/logs/format.out" 2>&1; then
    cat "$dir/logs/format.out" >&2
    die "formatting the storage failed"
  fi

  # setsid: the broker outlives this script and its terminal; only `bed.sh stop` ends it.
  nohup setsid java -Xmx1G -Xms256M -XX:+UseG1GC -Djava.awt.headless=true \
    "$(log_option "$flavor" "$dir/log4j.properties")" -cp "$libs/*" \
    kafka.Kafka "$dir/server.properties" >"$dir/logs/kafka.out" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/kafka.pid"

  wait_broker "$dir" "$dir" "$pid" "$plain" "$sasl"
  local plain2 pid2 cid2
  read -r plain2 pid2 cid2 < <(start_kafka2 "$dir" "$libs")

  local -a pg_facts
  if ! mapfile -t pg_facts < <("$HERE/postgres.sh" start "$dir") || [[ ${#pg_facts[@]} -eq 0 ]]; then
    cmd_stop "$dir"
    die "PostgreSQL did not start"
  fi
  local -a os_facts
  if ! mapfile -t os_facts < <("$HERE/opensearch.sh" start "$dir") || [[ ${#os_facts[@]} -eq 0 ]]; then
    cmd_stop "$dir"
    die "OpenSearch did not start"
  fi

  # The facts, for shell (sourceable; values are shell-quoted) and for Python (JSON).
  local -a facts=(
    "BED_DIR=$dir"
    "BED_BOOTSTRAP=127.0.0.1:$plain"
    "BED_SASL_BOOTSTRAP=127.0.0.1:$sasl"
    "BED_CA=$dir/tls/ca.pem"
    "BED_SCRAM256_USER=$user256"
    "BED_SCRAM256_PASSWORD=$pass256"
    "BED_SCRAM512_USER=$user512"
    "BED_SCRAM512_PASSWORD=$pass512"
    "BED_CLUSTER_ID=$cid"
    "BED_KAFKA_VERSION=$KAFKA_VERSION"
    "BED_KAFKA_LIBS=$libs"
    "BED_CONNECT_VERSION=$CONNECT_VERSION"
    "BED_CONNECT_LIBS=$CONNECT_HOME/libs"
    "BED_CONNECT_PLUGINS=$CONNECT_HOME/plugins"
    "BED_CONNECT_LOG_OPTION=$(log_option "$connect_flavor" "$dir/connect-log4j.properties")"
    "BED_PID=$pid"
    "BED_KAFKA2_BOOTSTRAP=127.0.0.1:$plain2"
    "BED_KAFKA2_CLUSTER_ID=$cid2"
    "BED_KAFKA2_PID=$pid2"
    "${pg_facts[@]}"
    "${os_facts[@]}"
  )
  local f
  for f in "${facts[@]}"; do printf '%s=%q\n' "${f%%=*}" "${f#*=}"; done >"$dir/bed.env"
  python3 -c '
import json, sys
facts = dict(a.split("=", 1) for a in sys.argv[1:])
facts["BED_PID"] = int(facts["BED_PID"])
facts["BED_KAFKA2_PID"] = int(facts["BED_KAFKA2_PID"])
facts["BED_PG_PORT"] = int(facts["BED_PG_PORT"])
facts["BED_OPENSEARCH_PID"] = int(facts["BED_OPENSEARCH_PID"])
print(json.dumps(facts, indent=2))' "${facts[@]}" >"$dir/bed.json"
  chmod 600 "$dir/bed.env" "$dir/bed.json"
  log "Kafka $KAFKA_VERSION (two clusters), PostgreSQL and OpenSearch ready in ${SECONDS}s: PLAINTEXT 127.0.0.1:$plain, SASL_SSL 127.0.0.1:$sasl (pid $pid), second cluster PLAINTEXT 127.0.0.1:$plain2 (pid $pid2); facts in $dir/bed.env"
}

# ---------------------------------------------------------------------------------------- stop
cmd_stop() {
  local dir=$1
  stop_broker "$dir/kafka2"
  stop_broker "$dir"
  "$HERE/postgres.sh" stop "$dir"
  "$HERE/opensearch.sh" stop "$dir"
}

# ---------------------------------------------------------------------------------------- tool
cmd_tool() {
  local dir=$1 name=$2 main version libs conf flavor
  shift 2
  read -r version libs < <(version_and_libs_of "$dir")
  flavor=$(log_flavor "$version")
  # Main classes (checked against the jars): in 3.9 ConsoleProducer and ConfigCommand are
  # still in the Scala core; 4.x moved them to kafka-tools like the others.
  case $name in
  topics) main=org.apache.kafka.tools.TopicCommand ;;
  configs) main=kafka.admin.ConfigCommand ;;
  consumer-groups) main=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
  console-consumer) main=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
  console-producer) main=kafka.tools.ConsoleProducer ;;
  get-offsets) main=org.apache.kafka.tools.GetOffsetShell ;;
  delete-records) main=org.apache.kafka.tools.DeleteRecordsCommand ;;
  transactions) main=org.apache.kafka.tools.TransactionsCommand ;;
  *) die "unknown tool '$name' (topics, configs, consumer-groups, console-consumer, console-producer, get-offsets, delete-records, transactions)" ;;
  esac
  if [[ $flavor == log4j2 ]]; then
    case $name in
    configs) main=org.apache.kafka.tools.ConfigCommand ;;
    console-producer) main=org.apache.kafka.tools.ConsoleProducer ;;
    esac
  fi
  [[ -d $libs ]] || die "no Kafka jars in $libs; run: bed.sh fetch"
  conf=$dir/tools-log4j.properties
  if [[ ! -f $conf ]]; then
    mkdir -p "$dir"
    write_tools_log_config "$flavor" "$conf"
  fi
  # shellcheck disable=SC2086 # TOOL_JAVA_OPTS is a list of options
  exec java $TOOL_JAVA_OPTS "$(log_option "$flavor" "$conf")" -cp "$libs/*" "$main" "$@"
}

# ---------------------------------------------------------------------------------------- main
[[ $# -ge 1 ]] || usage
cmd=$1
shift
case $cmd in
fetch) [[ $# -eq 0 ]] || usage; cmd_fetch ;;
start) [[ $# -eq 1 ]] || usage; cmd_start "$1" ;;
stop) [[ $# -eq 1 ]] || usage; cmd_stop "$1" ;;
tool) [[ $# -ge 2 ]] || usage; cmd_tool "$@" ;;
*) usage ;;
esac
