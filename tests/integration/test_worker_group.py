"""The worker group (connectors/runtime/cluster/tb_worker_group.h) against the real broker: members
meet in a consumer group over a one-partition coordination topic, exactly one is the leader,
every member sees the same members and leader, a killed leader is replaced, and a joining
worker does not take the leadership. Each member is a tests/programs/worker_group_probe."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from kafka_io import create_topic
from worker import wait_for

pytestmark = pytest.mark.integration

PROBE = Path(os.environ.get("TRIBUTARY_BIN", "build/test/tributary")).parent / "worker_group_probe"
SESSION_S = 6  # the probe's session.timeout.ms
REJOIN_BOUND_S = SESSION_S + 30  # a departed member is noticed within its session, plus slack


class Probe:
    """One member; `view` is the last view it printed."""

    def __init__(self, bed, group: str, topic: str, url: str):
        self.url = url
        self.view: dict | None = None
        self.proc = subprocess.Popen(
            [str(PROBE), bed.bootstrap, group, topic, url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.view = json.loads(line)

    def leave(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0, self.proc.stderr.read()

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=30)


def agreed(probes, members):
    """The view every probe shares once the group is settled on `members` (URLs): the same
    member list and leader everywhere, and exactly one probe saying it leads."""
    views = [p.view for p in probes]
    if any(v is None or sorted(v["members"]) != sorted(members) for v in views):
        return None
    leaders = {v["leader_url"] for v in views}
    claiming = [p.url for p, v in zip(probes, views) if v["leader"]]
    if len(leaders) != 1 or claiming != [views[0]["leader_url"]]:
        return None
    return views[0]


@pytest.fixture
def group(bed):
    topic = bed.unique_topic("coordination")
    create_topic(bed, topic, 1)
    probes: list[Probe] = []

    def join(name: str) -> Probe:
        probe = Probe(bed, f"group-{topic}", topic, f"http://127.0.0.1:1/{name}")
        probes.append(probe)
        return probe

    yield join
    for p in probes:
        if p.proc.poll() is None:
            p.kill()


def test_one_leader_survives_joins_and_is_replaced_when_killed(group):
    probes = [group(n) for n in ("a", "b", "c")]
    urls = [p.url for p in probes]
    first = wait_for(lambda: agreed(probes, urls), timeout=60, what="three members agree")
    leader = next(p for p in probes if p.url == first["leader_url"])

    # A fourth worker joins: the leadership stays where it was (sticky assignment).
    probes.append(group("d"))
    urls.append(probes[-1].url)
    joined = wait_for(lambda: agreed(probes, urls), timeout=60, what="four members agree")
    assert joined["leader_url"] == leader.url

    # kill -9 the leader: another member leads once its session has expired.
    leader.kill()
    rest = [p for p in probes if p is not leader]
    after = wait_for(lambda: agreed(rest, [p.url for p in rest]), timeout=REJOIN_BOUND_S,
                     what="the others agree on a new leader")
    assert after["leader_url"] != leader.url

    # A member that leaves cleanly is gone from the others' views.
    quitting = next(p for p in rest if p.url != after["leader_url"])
    quitting.leave()
    staying = [p for p in rest if p is not quitting]
    final = wait_for(lambda: agreed(staying, [p.url for p in staying]),
                     timeout=REJOIN_BOUND_S, what="the member that left is gone")
    assert final["leader_url"] == after["leader_url"]
