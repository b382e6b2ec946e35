#!/usr/bin/env bash
# PostgreSQL 15 for tributary's test bed: one server on loopback, started and stopped by
# bed.sh (see README.md beside this file), from Debian's postgresql-15.
#
#   postgres.sh start DIR   fresh server; prints its facts as KEY=value lines on stdout
#   postgres.sh stop DIR    stop it (idempotent)
#
# The data directory is a fresh temporary directory named in DIR/postgres.dir: as root the
# server runs as the system user "postgres", which may not be able to reach DIR itself.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bed_lib.sh
. "$HERE/bed_lib.sh"

PG_BIN=${BED_PG_BIN:-/usr/lib/postgresql/15/bin}
ADMIN=bedadmin     # the superuser initdb creates
USER_NAME=tributary # what tests and connectors log in as
DB_NAME=tributary

log() { echo "postgres.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# Commands run as the server's owner: "postgres" when we are root (the server refuses root).
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

cmd_start() {
  local dir=$1 root port admin_pass user_pass
  [[ -x $PG_BIN/initdb ]] || die "no PostgreSQL 15 in $PG_BIN; run: scripts/install-deps test"
  cmd_stop "$dir"
  root=$(mktemp -d /tmp/tributary-pg.XXXXXX)
  echo "$root" >"$dir/postgres.dir"
  admin_pass=$(openssl rand -hex 24)
  user_pass=$(openssl rand -hex 24)
  port=$(free_ports 1)
  printf '%s\n' "$admin_pass" >"$root/admin.pw"
  chmod 600 "$root/admin.pw"
  [[ $(id -u) -eq 0 ]] && chown -R postgres: "$root"

  # scram-sha-256 for every connection, local and TCP (initdb writes pg_hba.conf so).
  as_owner "$PG_BIN/initdb" -D "$root/data" -U "$ADMIN" --pwfile="$root/admin.pw" \
    --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$root/initdb.log" 2>&1 ||
    { cat "$root/initdb.log" >&2; die "initdb failed"; }
  rm -f "$root/admin.pw"

  # Logical decoding for the CDC source. Durability settings are off: the tests crash
  # tributary, never the server, and a test bed does not need its data after a power cut.
  cat >>"$root/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$root'
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
max_connections = 200
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  as_owner "$PG_BIN/pg_ctl" -D "$root/data" -l "$root/server.log" -w -t 60 start >/dev/null ||
    { tail -n 40 "$root/server.log" >&2; die "the server did not start"; }

  PGPASSWORD=$admin_pass "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" \
    -U "$ADMIN" -d postgres >/dev/null <<EOF
CREATE ROLE $USER_NAME LOGIN REPLICATION CREATEDB PASSWORD '$user_pass';
CREATE DATABASE $DB_NAME OWNER $USER_NAME;
EOF

  cat <<EOF
BED_PG_HOST=127.0.0.1
BED_PG_PORT=$port
BED_PG_DB=$DB_NAME
BED_PG_USER=$USER_NAME
BED_PG_PASSWORD=$user_pass
BED_PG_SUPERUSER=$ADMIN
BED_PG_SUPERPASSWORD=$admin_pass
BED_PG_BIN=$PG_BIN
EOF
  log "PostgreSQL ready on 127.0.0.1:$port (data in $root)"
}

cmd_stop() {
  local dir=$1 root
  root=$(cat "$dir/postgres.dir" 2>/dev/null || true)
  [[ -n $root ]] || return 0
  if [[ -f $root/data/postmaster.pid ]]; then
    as_owner "$PG_BIN/pg_ctl" -D "$root/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
      as_owner "$PG_BIN/pg_ctl" -D "$root/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  # Only a directory this script made is removed.
  [[ $root == /tmp/tributary-pg.* ]] && rm -rf "$root"
  rm -f "$dir/postgres.dir"
}

[[ $# -eq 2 ]] || { sed -n '5,6s/^# \{0,1\}//p' "$0" >&2; exit 2; }
case $1 in
start) cmd_start "$2" ;;
stop) cmd_stop "$2" ;;
*) die "unknown command '$1' (start, stop)" ;;
esac
