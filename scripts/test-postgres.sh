#!/usr/bin/env bash
# A throwaway PostgreSQL server for the history tests (Debian's postgresql, which
# scripts/setup.sh --tests installs): a new cluster in its own temporary folder, listening on
# loopback only, on a free port, stopped and deleted by `stop`. Nothing outside the folder is
# touched; the machine's own PostgreSQL service, if any, is neither used nor started.
#
#   scripts/test-postgres.sh start     prints `dir=FOLDER`, `port=PORT` and `uri=postgresql://...`
#                                      (a superuser, database postgres), shell assignments that
#                                      `eval "$(scripts/test-postgres.sh start)"` sets
#   scripts/test-postgres.sh stop DIR  stops that server and deletes its folder
#
# Authentication is `trust` on loopback (a throwaway server only this machine reaches), except
# for the role convbench_locked, which must give its password (scram-sha-256): the tests'
# wrong-password case. fsync is off: the tests kill clients, not the server, and every commit
# would otherwise wait for the disk. As root, the server runs as the postgres user (initdb
# refuses root).
set -euo pipefail

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "test-postgres.sh: no PostgreSQL server under /usr/lib/postgresql (scripts/setup.sh --tests installs postgresql)" >&2
  exit 3
fi

as_server_user() {
  # runuser lives in /usr/sbin, which a restricted PATH (the document examples') leaves out.
  if [ "$(id -u)" = 0 ]; then "$(command -v runuser || echo /usr/sbin/runuser)" -u postgres -- "$@"; else "$@"; fi
}

case ${1:-} in
  start)
    # As root, in /tmp itself: $TMPDIR may lie in a folder only root can enter, and the server
    # runs as postgres.
    if [ "$(id -u)" = 0 ]; then tmp=/tmp; else tmp=${TMPDIR:-/tmp}; fi
    dir=$(mktemp -d "$tmp/convbench-postgres.XXXXXX")
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    chmod 700 "$dir"
    as_server_user "$bin/initdb" -D "$dir/data" -U convbench_admin --auth=trust -E UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    hba=$dir/data/pg_hba.conf
    { echo "host all convbench_locked 127.0.0.1/32 scram-sha-256"; cat "$hba"; } >"$hba.new"
    mv "$hba.new" "$hba"
    [ "$(id -u)" = 0 ] && chown postgres: "$hba"
    # A free port: the kernel picks one for a socket bound to port 0; the server takes it next.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    if ! as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='$dir' -c fsync=off" \
        start >"$dir/pg_ctl.log" 2>&1; then
      cat "$dir/pg_ctl.log" "$dir/server.log" >&2
      rm -rf "$dir"
      exit 1
    fi
    echo "dir=$dir"
    echo "port=$port"
    echo "uri=postgresql://convbench_admin@127.0.0.1:$port/postgres"
    ;;
  stop)
    dir=${2:?usage: test-postgres.sh stop DIR}
    case $dir in */convbench-postgres.*) ;; *) echo "test-postgres.sh: $dir is not a folder start made" >&2; exit 2 ;; esac
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: test-postgres.sh start | stop DIR" >&2
    exit 2
    ;;
esac
