#!/usr/bin/env bash
# Walks a connector through its whole life with curl, as an operator would:
# create, status, pause, resume, restart, stop, offsets, delete.
#   TRIBUTARY_URL   the worker (default http://127.0.0.1:8083)
#   TOPIC           where the datagen connector writes (default lifecycle-demo)
set -euo pipefail

url=${TRIBUTARY_URL:-http://127.0.0.1:8083}
topic=${TOPIC:-lifecycle-demo}
name=lifecycle-demo

# -f: fail on an HTTP error, so the script stops at the first surprise
call() {
    local method=$1 path=$2
    shift 2
    echo "> $method $path" >&2
    curl -fsS -X "$method" -H 'Content-Type: application/json' "$@" "$url$path"
    echo
}

wait_for_state() {
    local want=$1
    for _ in $(seq 1 100); do
        if call GET "/connectors/$name/status" 2>/dev/null | grep -q "\"connector\":{\"state\":\"$want\""; then
            return 0
        fi
        sleep 0.1
    done
    echo "connector $name never reached $want" >&2
    return 1
}

call POST /connectors -d @- <<JSON
{"name": "$name",
 "config": {"connector.class": "datagen", "topic": "$topic",
            "records.per.second": "20", "tasks.max": "1"}}
JSON
wait_for_state RUNNING
call GET "/connectors/$name/status"
call PUT "/connectors/$name/pause"
wait_for_state PAUSED
call PUT "/connectors/$name/resume"
wait_for_state RUNNING
call POST "/connectors/$name/restart?includeTasks=true"
call PUT "/connectors/$name/stop"
wait_for_state STOPPED
call GET "/connectors/$name/offsets"
call PATCH "/connectors/$name/offsets" -d '{"offsets":[{"partition":{"task":0},"offset":{"sequence":0}}]}'
call DELETE "/connectors/$name/offsets"
call DELETE "/connectors/$name"
call GET /connectors
