# Shell helpers the bed's scripts share (bed.sh, opensearch.sh, postgres.sh source this file).

# N distinct free loopback ports: bind them all at once so they differ, then release them.
free_ports() {
  python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# True while PID has not exited (a zombie or a dead process is not running). Until nohup,
# setsid and java have exec'd, a child's cmdline is still its script's, so a check by cmdline
# cannot tell yet: this one can.
is_running() {
  local state
  [[ -r /proc/$1/stat ]] || return 1
  state=$(sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f1)
  [[ $state != Z && $state != X ]]
}
