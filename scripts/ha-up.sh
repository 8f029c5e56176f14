#!/usr/bin/env bash
# Brings up the highly available topology of docs/cluster.md on one machine, without Docker, in
# the foreground (like `docker compose up`): one etcd member, PostgreSQL nodes managed by Patroni
# (a primary and a synchronous standby by default), HAProxy in front of PostgreSQL (routing to the
# current primary by Patroni's REST health endpoint) and in front of the validator nodes, and the
# validator nodes themselves. Ctrl-C, SIGTERM (or, with HA_STOP_ON_EOF=1, the end of standard
# input) stops everything; the data stays in HA_DIR and the next run starts it again.
#
# Usage (from the root of a clone, after `npm install`): scripts/ha-up.sh
# Settings (environment variables; defaults in brackets):
#   HA_DIR [./.data/ha]          configuration, data, logs, secrets.env and ha.env
#   HA_PG_NODES [2]              PostgreSQL nodes (2: primary + synchronous standby; 3 or more for
#                                a standby that survives the loss of another)
#   HA_VALIDATORS [2]            validator nodes
#   HA_SYNC [on]                 on: synchronous standby while one is up (Patroni synchronous_mode);
#                                strict: no commit without a standby (synchronous_mode_strict);
#                                off: asynchronous replication (an acknowledged commit can be lost)
#   HA_TTL [15] HA_LOOP_WAIT [2] HA_RETRY_TIMEOUT [5]   Patroni's timing (docs/cluster.md)
#   HA_USER [nobody]             as root: the unprivileged user of etcd, Patroni and PostgreSQL
#   HA_BASE_PORT [15400]         ports, unless given one by one: HA_ETCD_PORT (+0), HA_ETCD_PEER_PORT
#                                (+1), HA_PG_PROXY_PORT (+2, PostgreSQL through HAProxy), HA_HTTP_PORT
#                                (+3, the validators through HAProxy), HA_STATS_PORT (+4, HAProxy's
#                                statistics page), HA_PG_PORTS (+10, +11, ...), HA_REST_PORTS (+20,
#                                +21, ...: Patroni), HA_VALIDATOR_PORTS (+30, +31, ...), lists
#                                separated by spaces
#   HA_PG_BIN                    the PostgreSQL server binaries [newest /usr/lib/postgresql/*/bin]
#   HA_STOP_ON_EOF [0]           1: stop when standard input ends (for a parent process)
# Every TENSORMINE_* variable of the environment reaches the validator nodes (docs/validator.md);
# TENSORMINE_TRUST_PROXY is 127.0.0.1 (HAProxy) unless given.
# When everything answers, the script writes HA_DIR/ha.env (the addresses, and where each
# server's data and log are) and prints "ha: ready".
set -euo pipefail
# (The body is one function, read whole before it runs: editing this file while a cluster is up
# does not change the running script.)
main() {

  ROOT=$(cd "$(dirname "$0")/.." && pwd)
  HA_DIR=${HA_DIR:-$ROOT/.data/ha}
  HA_PG_NODES=${HA_PG_NODES:-2}
  HA_VALIDATORS=${HA_VALIDATORS:-2}
  HA_SYNC=${HA_SYNC:-on}
  HA_TTL=${HA_TTL:-15}
  HA_LOOP_WAIT=${HA_LOOP_WAIT:-2}
  HA_RETRY_TIMEOUT=${HA_RETRY_TIMEOUT:-5}
  HA_USER=${HA_USER:-nobody}
  HA_STOP_ON_EOF=${HA_STOP_ON_EOF:-0}
  BASE=${HA_BASE_PORT:-15400}
  HA_ETCD_PORT=${HA_ETCD_PORT:-$((BASE + 0))}
  HA_ETCD_PEER_PORT=${HA_ETCD_PEER_PORT:-$((BASE + 1))}
  HA_PG_PROXY_PORT=${HA_PG_PROXY_PORT:-$((BASE + 2))}
  HA_HTTP_PORT=${HA_HTTP_PORT:-$((BASE + 3))}
  HA_STATS_PORT=${HA_STATS_PORT:-$((BASE + 4))}
  ports() { local from=$1 n=$2 i out=''; for ((i = 0; i < n; i++)); do out+="$((from + i)) "; done; echo "$out"; }
  read -r -a PG_PORTS <<<"${HA_PG_PORTS:-$(ports $((BASE + 10)) "$HA_PG_NODES")}"
  read -r -a REST_PORTS <<<"${HA_REST_PORTS:-$(ports $((BASE + 20)) "$HA_PG_NODES")}"
  read -r -a VALIDATOR_PORTS <<<"${HA_VALIDATOR_PORTS:-$(ports $((BASE + 30)) "$HA_VALIDATORS")}"

  say() { echo "ha: $*"; }
  die() { echo "ha: error: $*" >&2; exit 1; }

  # --- checks --------------------------------------------------------------------------------
  case $HA_SYNC in on | strict | off) ;; *) die "HA_SYNC: expected on, strict or off, got '$HA_SYNC'" ;; esac
  [[ $HA_PG_NODES =~ ^[1-9]$ ]] || die "HA_PG_NODES: expected 1 to 9, got '$HA_PG_NODES'"
  [[ $HA_VALIDATORS =~ ^[1-9]$ ]] || die "HA_VALIDATORS: expected 1 to 9, got '$HA_VALIDATORS'"
  ((${#PG_PORTS[@]} == HA_PG_NODES && ${#REST_PORTS[@]} == HA_PG_NODES)) ||
    die "HA_PG_PORTS and HA_REST_PORTS: expected $HA_PG_NODES ports each"
  ((${#VALIDATOR_PORTS[@]} == HA_VALIDATORS)) || die "HA_VALIDATOR_PORTS: expected $HA_VALIDATORS ports"
  # Patroni's own rule: a leader must be able to retry the DCS twice within one TTL.
  ((HA_LOOP_WAIT + 2 * HA_RETRY_TIMEOUT <= HA_TTL)) ||
    die "HA_TTL ($HA_TTL) must be at least HA_LOOP_WAIT + 2 * HA_RETRY_TIMEOUT ($((HA_LOOP_WAIT + 2 * HA_RETRY_TIMEOUT)))"
  # Debian installs daemons such as haproxy in /usr/sbin, which is not on a normal user's PATH.
  case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac
  for tool in etcd patroni haproxy curl openssl; do
    command -v "$tool" >/dev/null 2>&1 ||
      die "$tool is not installed (Debian: apt-get install etcd-server patroni haproxy curl openssl)"
  done
  if [[ -n ${HA_PG_BIN:-} ]]; then
    PG_BIN=$HA_PG_BIN
  else
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  fi
  [[ -n $PG_BIN && -x $PG_BIN/postgres && -x $PG_BIN/pg_rewind ]] ||
    die "no PostgreSQL server binaries (Debian: apt-get install postgresql; or set HA_PG_BIN)"
  NODE=$ROOT/node_modules/.bin/node
  [[ -x $NODE ]] || NODE=$(command -v node) || die "node is not installed: run npm install"
  # The validator nodes start from the validator's build while it is current (npm install builds
  # it; packages/cli/bin/current-build.js says what current is, as for the miner), else from
  # their sources through tsx.
  if HA_ROOT=$ROOT "$NODE" --input-type=module -e "import { builtAndCurrent } from '$ROOT/packages/cli/bin/current-build.js'; process.exit(builtAndCurrent(process.env.HA_ROOT + '/packages/validator', 'dist/bin.js') ? 0 : 1)" 2>/dev/null; then
    VALIDATOR=(dist/bin.js)
  else
    [[ -d $ROOT/node_modules/tsx ]] || die "run npm install first (the validator runs from the sources with tsx)"
    VALIDATOR=(--conditions=@tensormine/source --import tsx src/bin.ts)
  fi

  # As root, the servers that refuse root (initdb, postgres) and the others that need no privilege
  # run as HA_USER.
  AS=()
  OWNER=''
  if [[ $(id -u) == 0 ]]; then
    id -u "$HA_USER" >/dev/null 2>&1 || die "HA_USER: no user '$HA_USER'"
    OWNER="$(id -u "$HA_USER"):$(id -g "$HA_USER")"
    AS=(setpriv "--reuid=$(id -u "$HA_USER")" "--regid=$(id -g "$HA_USER")" --clear-groups)
  fi

  mkdir -p "$HA_DIR/logs"
  HA_DIR=$(cd "$HA_DIR" && pwd)
  chmod 755 "$HA_DIR"
  if [[ -n $OWNER ]] && ! "${AS[@]}" test -x "$HA_DIR"; then
    die "$HA_USER cannot reach $HA_DIR (a parent directory is closed to it): choose another HA_DIR"
  fi

  # --- secrets: generated at the first run, kept (only the owner may read them) ---------------
  SECRETS=$HA_DIR/secrets.env
  if [[ ! -f $SECRETS ]]; then
    umask 077
    {
      echo "PG_SUPERUSER_PASSWORD=$(openssl rand -hex 16)"
      echo "PG_REPLICATION_PASSWORD=$(openssl rand -hex 16)"
      echo "PG_REWIND_PASSWORD=$(openssl rand -hex 16)"
      echo "TENSORMINE_DB_PASSWORD=$(openssl rand -hex 16)"
      echo "HA_ADMIN_TOKEN=$(openssl rand -hex 24)"
    } >"$SECRETS"
    umask 022
  fi
  # shellcheck disable=SC1090
  source "$SECRETS"
  ADMIN_TOKEN=${TENSORMINE_ADMIN_TOKEN:-$HA_ADMIN_TOKEN}

  # --- processes: started in the background, all stopped on exit -----------------------------
  PIDS=()
  NAMES=()
  STOPPING=0
  start() { # name, then the command; its output goes to logs/<name>.log
    local name=$1
    shift
    # In a session of its own: Ctrl-C reaches this script only, which stops the servers in order.
    setsid "$@" >>"$HA_DIR/logs/$name.log" 2>&1 </dev/null &
    PIDS+=($!)
    NAMES+=("$name")
  }
  stop_all() {
    ((STOPPING)) && return
    STOPPING=1
    trap - INT TERM
    say "stopping"
    local i pid
    # In reverse order: validators, HAProxy, Patroni (which stops its PostgreSQL), etcd.
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
      pid=${PIDS[i]}
      kill -TERM "$pid" 2>/dev/null || continue
      for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then
        say "${NAMES[i]} did not stop in 30 s: killed"
        kill -KILL "$pid" 2>/dev/null || true
      fi
      wait "$pid" 2>/dev/null || true
    done
    # A PostgreSQL whose Patroni was killed: stop it too.
    for ((i = 1; i <= HA_PG_NODES; i++)); do
      local pidfile=$HA_DIR/pg$i/data/postmaster.pid
      if [[ -f $pidfile ]]; then
        pid=$(head -n 1 "$pidfile")
        [[ $pid =~ ^[0-9]+$ ]] && kill -QUIT "$pid" 2>/dev/null || true
      fi
    done
    say "stopped"
  }
  trap stop_all EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  wait_for() { # what, seconds, command...
    local what=$1 seconds=$2
    shift 2
    local end=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
      ((SECONDS < end)) || die "$what: not ready after $seconds s (logs in $HA_DIR/logs)"
      local i
      for ((i = 0; i < ${#PIDS[@]}; i++)); do
        kill -0 "${PIDS[i]}" 2>/dev/null || die "${NAMES[i]} exited: $(tail -n 20 "$HA_DIR/logs/${NAMES[i]}.log")"
      done
      sleep 0.2
    done
  }
  mine() { # creates directories owned by the unprivileged user
    mkdir -p "$@"
    [[ -z $OWNER ]] || chown "$OWNER" "$@"
  }

  # --- etcd: the consensus store where Patroni keeps the leader lock -------------------------
  mine "$HA_DIR/etcd"
  chmod 700 "$HA_DIR/etcd"
  start etcd "${AS[@]}" env HOME="$HA_DIR/etcd" etcd --name etcd1 --data-dir "$HA_DIR/etcd/data" \
    --listen-client-urls "http://127.0.0.1:$HA_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$HA_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" \
    --initial-cluster "etcd1=http://127.0.0.1:$HA_ETCD_PEER_PORT" --initial-cluster-state new \
    --initial-cluster-token tensormine-ha
  wait_for etcd 60 curl -fsS "http://127.0.0.1:$HA_ETCD_PORT/health"
  say "etcd on 127.0.0.1:$HA_ETCD_PORT"

  # --- PostgreSQL under Patroni ---------------------------------------------------------------
  case $HA_SYNC in
  on) SYNC_MODE=true STRICT=false ;;
  strict) SYNC_MODE=true STRICT=true ;;
  off) SYNC_MODE=false STRICT=false ;;
  esac
  for ((i = 1; i <= HA_PG_NODES; i++)); do
    dir=$HA_DIR/pg$i
    mine "$dir"
    chmod 700 "$dir"
    config=$dir/patroni.yml
    # (bootstrap.dcs is read once, when the cluster is created in etcd; later changes go through
    # Patroni's REST API: PATCH /config, or patronictl edit-config.)
    cat >"$config" <<EOF
scope: tensormine
namespace: /tensormine/
name: pg$i
restapi:
  listen: 127.0.0.1:${REST_PORTS[i - 1]}
  connect_address: 127.0.0.1:${REST_PORTS[i - 1]}
etcd3:
  hosts: 127.0.0.1:$HA_ETCD_PORT
bootstrap:
  dcs:
    ttl: $HA_TTL
    loop_wait: $HA_LOOP_WAIT
    retry_timeout: $HA_RETRY_TIMEOUT
    primary_start_timeout: 0
    maximum_lag_on_failover: 1048576
    synchronous_mode: $SYNC_MODE
    synchronous_mode_strict: $STRICT
    postgresql:
      use_pg_rewind: true
      remove_data_directory_on_rewind_failure: true
      remove_data_directory_on_diverged_timelines: true
      use_slots: true
      parameters:
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        hot_standby: 'on'
        synchronous_commit: 'on'
  initdb:
    - encoding: UTF8
    - locale: C
    - data-checksums
postgresql:
  listen: 127.0.0.1:${PG_PORTS[i - 1]}
  connect_address: 127.0.0.1:${PG_PORTS[i - 1]}
  data_dir: $dir/data
  bin_dir: $PG_BIN
  pgpass: $dir/pgpass
  authentication:
    superuser:
      username: postgres
      password: $PG_SUPERUSER_PASSWORD
    replication:
      username: replicator
      password: $PG_REPLICATION_PASSWORD
    rewind:
      username: rewinder
      password: $PG_REWIND_PASSWORD
  parameters:
    unix_socket_directories: '$dir'
  pg_hba:
    - local all all peer
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
EOF
    [[ -z $OWNER ]] || chown "$OWNER" "$config"
    chmod 600 "$config"
    start "patroni-pg$i" "${AS[@]}" env HOME="$dir" patroni "$config"
  done
  leader() { # the REST port of the node that answers 200 on /primary
    local p
    for p in "${REST_PORTS[@]}"; do
      curl -fsS -o /dev/null "http://127.0.0.1:$p/primary" 2>/dev/null && { echo "$p"; return 0; }
    done
    return 1
  }
  wait_for "a PostgreSQL primary" 180 leader
  for ((i = 1; i <= HA_PG_NODES; i++)); do
    wait_for "pg$i" 300 curl -fsS -o /dev/null "http://127.0.0.1:${REST_PORTS[i - 1]}/health"
  done
  if [[ $SYNC_MODE == true && $HA_PG_NODES -gt 1 ]]; then
    synced() {
      local p
      for p in "${REST_PORTS[@]}"; do curl -fsS -o /dev/null "http://127.0.0.1:$p/sync" && return 0; done
      return 1
    }
    wait_for "a synchronous standby" 120 synced
  fi
  say "PostgreSQL: $HA_PG_NODES nodes on ports ${PG_PORTS[*]} (Patroni REST ${REST_PORTS[*]}), synchronous: $HA_SYNC"

  # --- HAProxy: PostgreSQL's primary, and the validator nodes --------------------------------
  mine "$HA_DIR/haproxy"
  for code in 502 503 504; do
    # Whatever HAProxy itself answers (no node up, a node that died mid-request) is the validator's
    # documented 503 service_unavailable, in its JSON shape, with Retry-After.
    printf '%s\r\n' "HTTP/1.1 503 Service Unavailable" "content-type: application/json; charset=utf-8" \
      "retry-after: 1" "cache-control: no-store" "connection: close" "" \
      "{\"code\":\"service_unavailable\",\"message\":\"no validator node could answer (load balancer: $code); send the request again\"}" \
      >"$HA_DIR/haproxy/$code.http"
  done
  {
    cat <<EOF
global
    maxconn 4000

defaults
    log global
    timeout connect 2s
    timeout check 2s
    timeout client 1h
    timeout server 1h

listen stats
    mode http
    bind 127.0.0.1:$HA_STATS_PORT
    stats enable
    stats uri /
    stats refresh 2s

# PostgreSQL: only the node whose Patroni answers 200 on /primary (the leader) receives
# connections; when it stops being the leader, its connections are cut. A connection refused
# by a server (its postmaster died) marks it down at once, without waiting for two checks.
listen postgres
    mode tcp
    bind 127.0.0.1:$HA_PG_PROXY_PORT
    option httpchk OPTIONS /primary
    http-check expect status 200
    default-server inter 1s fastinter 500ms downinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions observe layer4 error-limit 1 on-error mark-down
EOF
    for ((i = 1; i <= HA_PG_NODES; i++)); do
      echo "    server pg$i 127.0.0.1:${PG_PORTS[i - 1]} maxconn 180 check port ${REST_PORTS[i - 1]}"
    done
    cat <<EOF

# The validator nodes: any node answers any request (no stickiness); the event stream sends a
# heartbeat every 15 s, so 60 s without data means a dead connection.
listen validators
    mode http
    bind 127.0.0.1:$HA_HTTP_PORT
    balance roundrobin
    # X-Forwarded-For: the nodes (--trust-proxy 127.0.0.1) apply per-address limits per client.
    option forwardfor
    option redispatch
    retries 2
    timeout client 60s
    timeout server 60s
    option httpchk GET /health
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
    errorfile 502 $HA_DIR/haproxy/502.http
    errorfile 503 $HA_DIR/haproxy/503.http
    errorfile 504 $HA_DIR/haproxy/504.http
EOF
    for ((i = 1; i <= HA_VALIDATORS; i++)); do
      echo "    server node-$i 127.0.0.1:${VALIDATOR_PORTS[i - 1]} check"
    done
  } >"$HA_DIR/haproxy/haproxy.cfg"
  haproxy -c -q -f "$HA_DIR/haproxy/haproxy.cfg" || die "haproxy refused $HA_DIR/haproxy/haproxy.cfg"
  start haproxy "${AS[@]}" haproxy -db -f "$HA_DIR/haproxy/haproxy.cfg"
  psql_su() { # SQL as the superuser, through HAProxy (the primary)
    PGPASSWORD=$PG_SUPERUSER_PASSWORD PGCONNECT_TIMEOUT=3 "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -At \
      -h 127.0.0.1 -p "$HA_PG_PROXY_PORT" -U postgres -d postgres "$@"
  }
  # HAProxy counts a server up until its first check says otherwise: wait until it routes to the
  # primary alone (its statistics, as CSV: the 18th field is the status).
  routed() {
    local up
    up=$(curl -fsS "http://127.0.0.1:$HA_STATS_PORT/;csv" | awk -F, '$1 == "postgres" && $2 ~ /^pg/ && $18 == "UP"' | wc -l)
    [[ $up == 1 && $(psql_su -c 'SELECT NOT pg_is_in_recovery()') == t ]]
  }
  wait_for "PostgreSQL's primary through HAProxy" 60 routed
  say "HAProxy: PostgreSQL primary on 127.0.0.1:$HA_PG_PROXY_PORT, statistics on http://127.0.0.1:$HA_STATS_PORT/"

  # --- the validators' database (each step idempotent, retried while the primary settles) -----
  create_role() {
    psql_su -c "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tensormine') THEN
      CREATE ROLE tensormine LOGIN PASSWORD '$TENSORMINE_DB_PASSWORD'; END IF; END \$\$"
  }
  create_database() {
    psql_su <<<"SELECT 'CREATE DATABASE tensormine OWNER tensormine'
      WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'tensormine') \gexec"
  }
  wait_for "the role tensormine" 60 create_role
  wait_for "the database tensormine" 60 create_database
  DATABASE_URL="postgres://tensormine:$TENSORMINE_DB_PASSWORD@127.0.0.1:$HA_PG_PROXY_PORT/tensormine"

  # --- the validator nodes ---------------------------------------------------------------------
  for ((i = 1; i <= HA_VALIDATORS; i++)); do
    mkdir -p "$HA_DIR/validator-$i"
    # The first node creates the schema; the others wait for it (a migration runs under a lock).
    start "validator-$i" env -C "$ROOT/packages/validator" \
      TENSORMINE_TRUST_PROXY="${TENSORMINE_TRUST_PROXY:-127.0.0.1}" \
      TENSORMINE_DATABASE_URL="$DATABASE_URL" TENSORMINE_ADMIN_TOKEN="$ADMIN_TOKEN" \
      TENSORMINE_NODE_ID="node-$i" TENSORMINE_DATA_DIR="$HA_DIR/validator-$i" \
      "$NODE" "${VALIDATOR[@]}" start \
      --host 127.0.0.1 --port "${VALIDATOR_PORTS[i - 1]}"
  done
  for ((i = 1; i <= HA_VALIDATORS; i++)); do
    wait_for "validator node-$i" 180 curl -fsS -o /dev/null "http://127.0.0.1:${VALIDATOR_PORTS[i - 1]}/health"
  done
  wait_for "the validators through HAProxy" 30 curl -fsS -o /dev/null "http://127.0.0.1:$HA_HTTP_PORT/health"

  # --- ready ---------------------------------------------------------------------------------
  umask 077
  {
    echo "HA_URL=http://127.0.0.1:$HA_HTTP_PORT"
    echo "HA_VALIDATOR_URLS=\"$(for p in "${VALIDATOR_PORTS[@]}"; do printf 'http://127.0.0.1:%s ' "$p"; done)\""
    echo "HA_DATABASE_URL=$DATABASE_URL"
    echo "HA_ADMIN_TOKEN=$ADMIN_TOKEN"
    echo "HA_PG_SUPERUSER_URL=postgres://postgres:$PG_SUPERUSER_PASSWORD@127.0.0.1:$HA_PG_PROXY_PORT/postgres"
    echo "HA_PATRONI_URLS=\"$(for p in "${REST_PORTS[@]}"; do printf 'http://127.0.0.1:%s ' "$p"; done)\""
    echo "HA_PG_DATA_DIRS=\"$(for ((i = 1; i <= HA_PG_NODES; i++)); do printf '%s ' "$HA_DIR/pg$i/data"; done)\""
    echo "HA_STATS_URL=http://127.0.0.1:$HA_STATS_PORT/"
    echo "HA_ETCD_URL=http://127.0.0.1:$HA_ETCD_PORT"
    echo "HA_LOGS=$HA_DIR/logs"
  } >"$HA_DIR/ha.env"
  umask 022
  say "validators: http://127.0.0.1:$HA_HTTP_PORT (nodes on ports ${VALIDATOR_PORTS[*]}), admin token in $HA_DIR/ha.env"
  say "ready"

  if [[ $HA_STOP_ON_EOF == 1 ]]; then
    # (A background command of a script reads /dev/null unless told otherwise: descriptor 3.)
    exec 3<&0
    cat <&3 >/dev/null &
    wait $! || true
  else
    # Until Ctrl-C or SIGTERM (sleep in the background, so that the trap runs at once).
    while :; do
      sleep 3600 &
      wait $! || true
    done
  fi
}

main "$@"
