#!/usr/bin/env bash
# A real Apache Kafka broker for tests and CI, without Docker: KRaft, one node acting as broker
# and controller, loopback only. The jars come from Maven Central through pom.xml beside this
# script and are cached under .cache/kafka/.
#
#   scripts/setup/kafka/broker.sh start    # fetch jars if needed, format once, start, wait until ready
#   scripts/setup/kafka/broker.sh stop     # SIGTERM, wait for a clean shutdown (bounded), then SIGKILL
#   scripts/setup/kafka/broker.sh status   # exit 0 when running and answering, 3 when not
#
# Environment (all optional):
#   TRAJWATCH_KAFKA_PORT        client port (default 19092); the controller uses port + 1
#   TRAJWATCH_KAFKA_DIR         run directory: data, config, log, pid (default .cache/kafka/run)
#   TRAJWATCH_KAFKA_HEAP        JVM heap (default 512m)
#   TRAJWATCH_KAFKA_START_TIMEOUT_S / TRAJWATCH_KAFKA_STOP_TIMEOUT_S   bounds (default 90 / 60)
#   TRAJWATCH_KAFKA_SASL_SSL_PORT   when set, a second listener on that port speaking SASL_SSL:
#                               TLS with a certificate for 127.0.0.1 and SCRAM-SHA-512 logins.
#                               keytool makes the key pair on the first start, into
#                               <run dir>/secured/ (never into the repository): keystore.p12,
#                               ca.pem (the certificate clients trust) and the SCRAM user
#                               `trajwatch` whose password is in secured/sasl-password (random,
#                               mode 600). The credential is stored when the data directory is
#                               formatted, so a run directory is secured from its first start on.
#                               The PLAINTEXT listener stays for the broker's own traffic and
#                               the readiness probe.
#
# `start` is idempotent, and stop/start reuse the same data directory, so records survive a
# restart (the outage tests depend on that). Prints `bootstrap=127.0.0.1:PORT` when ready.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/../../.." && pwd)

port=${TRAJWATCH_KAFKA_PORT:-19092}
controller_port=$((port + 1))
run_dir=${TRAJWATCH_KAFKA_DIR:-$repo_dir/.cache/kafka/run}
heap=${TRAJWATCH_KAFKA_HEAP:-512m}
start_timeout_s=${TRAJWATCH_KAFKA_START_TIMEOUT_S:-90}
stop_timeout_s=${TRAJWATCH_KAFKA_STOP_TIMEOUT_S:-60}

kafka_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$script_dir/pom.xml")
# The classpath directory is keyed by a digest of pom.xml so a version change refetches.
pom_digest=$(sha256sum "$script_dir/pom.xml" | cut -c1-12)
libs_dir=$repo_dir/.cache/kafka/libs-$kafka_version-$pom_digest

data_dir=$run_dir/data
config_file=$run_dir/server.properties
log_file=$run_dir/broker.log
pid_file=$run_dir/broker.pid
bootstrap=127.0.0.1:$port
sasl_ssl_port=${TRAJWATCH_KAFKA_SASL_SSL_PORT:-}
secured_dir=$run_dir/secured
sasl_user=trajwatch

log() { echo "kafka-broker: $*" >&2; }
die() { log "error: $*"; exit 1; }

require_tools() {
  command -v java >/dev/null 2>&1 || die "java not found (Java 17+ is required to run the broker)"
  local major
  major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = \([0-9]*\).*/\1/p')
  [[ -n $major && $major -ge 17 ]] || die "Java 17+ required, found specification version '${major:-unknown}'"
}

fetch_jars() {
  if [[ -f $libs_dir/.complete ]]; then return 0; fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found (needed once to fetch the Kafka jars from Maven Central)"
  log "fetching Apache Kafka $kafka_version jars from Maven Central into $libs_dir"
  local tmp=$libs_dir.tmp.$$
  rm -rf "$tmp"
  if ! mvn -B -q -f "$script_dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" >"$run_dir/mvn.log" 2>&1; then
    tail -n 40 "$run_dir/mvn.log" >&2
    rm -rf "$tmp"
    die "mvn could not fetch the Kafka jars (log: $run_dir/mvn.log)"
  fi
  touch "$tmp/.complete"
  rm -rf "$libs_dir"
  mv "$tmp" "$libs_dir"
}

# C1 only: on a busy two-core CI machine the C2 compiler threads slow startup more than the
# (small) test traffic gains from them.
jvm_opts=(-Xmx"$heap" -Xms128m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
  -Dlog4j2.configurationFile="$script_dir/log4j2.xml")
# Short-lived tools (format, readiness probe): start fast rather than run fast.
tool_opts=(-Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true
  -Dlog4j2.configurationFile="$script_dir/log4j2.xml")

java_cmd() { java "${tool_opts[@]}" -cp "$libs_dir/*" "$@"; }

# The secured listener's material, made once per run directory: a self-signed key pair for
# 127.0.0.1 (keytool, PKCS12), its certificate as PEM for clients, and the SCRAM password.
make_secrets() {
  command -v keytool >/dev/null 2>&1 || die "keytool not found (it comes with the JDK; needed for the SASL_SSL listener)"
  mkdir -p "$secured_dir"
  chmod 700 "$secured_dir"
  if [[ ! -f $secured_dir/keystore-password ]]; then
    (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$secured_dir/keystore-password")
  fi
  if [[ ! -f $secured_dir/sasl-password ]]; then
    (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$secured_dir/sasl-password")
  fi
  if [[ ! -f $secured_dir/keystore.p12 ]]; then
    local storepass
    storepass=$(cat "$secured_dir/keystore-password")
    keytool -genkeypair -alias broker -keyalg RSA -keysize 2048 -validity 30 -dname "CN=127.0.0.1" \
      -ext "SAN=IP:127.0.0.1,DNS:localhost" -storetype PKCS12 -keystore "$secured_dir/keystore.p12.tmp" \
      -storepass "$storepass" -keypass "$storepass" >"$secured_dir/keytool.log" 2>&1 || { cat "$secured_dir/keytool.log" >&2; die "keytool -genkeypair failed"; }
    keytool -exportcert -rfc -alias broker -keystore "$secured_dir/keystore.p12.tmp" -storetype PKCS12 -storepass "$storepass" \
      -file "$secured_dir/ca.pem" >>"$secured_dir/keytool.log" 2>&1 || die "keytool -exportcert failed"
    mv "$secured_dir/keystore.p12.tmp" "$secured_dir/keystore.p12"
    log "made a key pair for 127.0.0.1 in $secured_dir with keytool"
  fi
}

secured_config() {
  [[ -n $sasl_ssl_port ]] || return 0
  cat <<PROPS
# The SASL_SSL listener (TRAJWATCH_KAFKA_SASL_SSL_PORT): TLS and SCRAM-SHA-512.
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$secured_dir/keystore.p12
listener.name.sasl_ssl.ssl.keystore.password=$(cat "$secured_dir/keystore-password")
listener.name.sasl_ssl.ssl.key.password=$(cat "$secured_dir/keystore-password")
PROPS
}

write_config() {
  local listeners=PLAINTEXT://127.0.0.1:$port advertised=PLAINTEXT://127.0.0.1:$port protocols=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
  if [[ -n $sasl_ssl_port ]]; then
    listeners+=,SASL_SSL://127.0.0.1:$sasl_ssl_port
    advertised+=,SASL_SSL://127.0.0.1:$sasl_ssl_port
    protocols+=,SASL_SSL:SASL_SSL
  fi
  cat >"$config_file" <<PROPS
# Written by scripts/setup/kafka/broker.sh; regenerated on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=$listeners,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=$advertised
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=$protocols
log.dirs=$data_dir
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Small internal topics and a quick heartbeat: a single test node starts and restarts faster.
offsets.topic.num.partitions=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.num.partitions=1
broker.heartbeat.interval.ms=500
# Topics are created explicitly (the sink's createTopics option, or the tests), never by accident.
auto.create.topics.enable=false
num.network.threads=2
num.io.threads=4
log.retention.hours=24
$(secured_config)
PROPS
  chmod 600 "$config_file"
}

# The pid from the pid file when that process is our broker, else nothing.
running_pid() {
  [[ -f $pid_file ]] || return 0
  local pid
  pid=$(cat "$pid_file")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "kafka.Kafka $config_file"; then
    echo "$pid"
  fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A metadata round trip through the Admin client: the broker has to answer, not just listen.
metadata_ok() {
  java_cmd org.apache.kafka.tools.ClusterTool cluster-id --bootstrap-server "$bootstrap" >/dev/null 2>&1
}

print_secured() {
  [[ -n $sasl_ssl_port ]] || return 0
  echo "sasl_ssl=127.0.0.1:$sasl_ssl_port username=$sasl_user password_file=$secured_dir/sasl-password ca_file=$secured_dir/ca.pem"
}

cmd_start() {
  require_tools
  mkdir -p "$run_dir"
  local pid
  pid=$(running_pid)
  if [[ -n $pid ]]; then
    fetch_jars
    if port_open "$port" && metadata_ok; then
      log "already running (pid $pid)"
      echo "bootstrap=$bootstrap"
      print_secured
      return 0
    fi
    log "pid $pid exists but the broker does not answer; waiting for it"
  else
    if port_open "$port" || port_open "$controller_port" || { [[ -n $sasl_ssl_port ]] && port_open "$sasl_ssl_port"; }; then
      die "port $port, $controller_port or ${sasl_ssl_port:-(no SASL_SSL port)} is already in use by another process"
    fi
    fetch_jars
    [[ -n $sasl_ssl_port ]] && make_secrets
    write_config
    if [[ ! -f $data_dir/meta.properties ]]; then
      local cluster_id scram=()
      cluster_id=$(java_cmd kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
      # SCRAM credentials live in the cluster metadata: stored once, when the log is formatted.
      [[ -n $sasl_ssl_port ]] && scram=(--add-scram "SCRAM-SHA-512=[name=$sasl_user,password=$(cat "$secured_dir/sasl-password")]")
      log "formatting $data_dir (cluster id $cluster_id)"
      java_cmd kafka.tools.StorageTool format -t "$cluster_id" -c "$config_file" "${scram[@]}" >"$run_dir/format.log" 2>&1 ||
        { cat "$run_dir/format.log" >&2; die "storage format failed"; }
    fi
    [[ -f $log_file ]] && mv -f "$log_file" "$log_file.1"
    # setsid: the broker outlives the shell that started it and is not hit by its signals;
    # 9>&-: it must not inherit (and so hold) the start/stop lock.
    setsid bash -c 'exec "$@"' _ java "${jvm_opts[@]}" -cp "$libs_dir/*" kafka.Kafka "$config_file" \
      >"$log_file" 2>&1 </dev/null 9>&- &
    pid=$!
    echo "$pid" >"$pid_file"
    log "started pid $pid (Kafka $kafka_version, log $log_file)"
  fi

  local started=$SECONDS
  while ((SECONDS - started < start_timeout_s)); do
    if [[ ! -d /proc/$pid ]]; then
      tail -n 60 "$log_file" >&2 || true
      rm -f "$pid_file"
      die "broker exited during startup"
    fi
    # The log line first: probing a half-started broker makes the admin client sit in retries.
    if grep -q 'Kafka Server started' "$log_file" 2>/dev/null && port_open "$port" && metadata_ok; then
      log "ready after $((SECONDS - started))s at $bootstrap"
      echo "bootstrap=$bootstrap"
      print_secured
      return 0
    fi
    sleep 0.5
  done
  tail -n 60 "$log_file" >&2 || true
  die "broker not ready within ${start_timeout_s}s (still running as pid $pid; 'broker.sh stop' to end it)"
}

cmd_stop() {
  local pid
  pid=$(running_pid)
  if [[ -z $pid ]]; then
    rm -f "$pid_file"
    log "not running"
    return 0
  fi
  kill -TERM "$pid"
  local started=$SECONDS
  while [[ -d /proc/$pid ]] && ((SECONDS - started < stop_timeout_s)); do sleep 0.2; done
  if [[ -d /proc/$pid ]]; then
    log "no clean shutdown within ${stop_timeout_s}s; sending SIGKILL to $pid"
    kill -KILL "$pid" || true
    while [[ -d /proc/$pid ]]; do sleep 0.1; done
  fi
  rm -f "$pid_file"
  log "stopped after $((SECONDS - started))s"
}

cmd_status() {
  local pid
  pid=$(running_pid)
  if [[ -n $pid ]] && port_open "$port"; then
    echo "running pid=$pid bootstrap=$bootstrap version=$kafka_version"
    return 0
  fi
  echo "not running"
  return 3
}

# One start or stop at a time per run directory (test workers may call this concurrently).
with_lock() {
  mkdir -p "$run_dir"
  exec 9>"$run_dir/broker.lock"
  flock -w $((start_timeout_s + stop_timeout_s + 300)) 9 || die "could not take $run_dir/broker.lock"
  "$@"
}

case "${1:-}" in
  start) with_lock cmd_start ;;
  stop) with_lock cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 {start|stop|status}" >&2; exit 2 ;;
esac
