"""kiln.profiler: TF's tf.profiler.experimental API over the engine's profiler."""
import json
import os

import pytest

import kiln as tf


def test_start_stop_writes_the_trace_and_the_table(tmp_path):
    f = tf.function(lambda x: tf.nn.relu(x * 2.0) + 1.0)
    x = tf.constant([-1.0, 2.0])
    f(x)
    tf.profiler.experimental.start(str(tmp_path))
    f(x)
    y = x - 1.0
    profile = tf.profiler.experimental.stop()
    events = profile.events()
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "function" and kinds[-1] == "eager" and "graph" in kinds
    sub = events[-1]
    assert sub["op"] == "Sub" and sub["output_shapes"] == [(2,)] and sub["node"] == ""
    assert sub["file"] == __file__ and sub["line"] > 0  # the user's Python line
    graph_ops = [e for e in events if e["kind"] == "graph"]
    assert all(e["function"] == events[0]["op"] and e["node"] for e in graph_ops)
    assert sum(e["self_ns"] for e in events[:-1]) == events[0]["duration_ns"]
    with open(tmp_path / "kiln.trace.json") as fh:
        trace = json.load(fh)
    names = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X"]
    assert names[-1] == "Sub" and len(names) == len(events)
    table = (tmp_path / "kiln_profile.txt").read_text()
    assert table.startswith(f"kiln profile: {len(events)} events, ")
    assert "Sub                              eager           1 " in table
    del y


def test_profile_context_manager_and_misuse(tmp_path):
    logdir = tmp_path / "logs"
    x = tf.constant([1, 2])
    with tf.profiler.experimental.Profile(str(logdir)) as session:
        x * 3
    assert os.path.exists(logdir / "kiln.trace.json")
    assert [e["op"] for e in session.profile.events()] == ["Mul"]
    with pytest.raises(tf.errors.FailedPreconditionError, match="the profiler is not on"):
        tf.profiler.experimental.stop()
    tf.profiler.experimental.start(str(logdir))
    with pytest.raises(tf.errors.FailedPreconditionError, match="already on"):
        tf.profiler.experimental.start(str(logdir))
    assert tf.profiler.experimental.stop(save=False).events() == []
