"""Kiln's OpenMP wait policy (docs/design-notes.md, "Threads and contention"): importing kiln gives
libgomp a short spin unless the user chose a policy, and leaves no setting for subprocesses."""
import os
import subprocess
import sys

import pytest

_CHILD = ("import os, kiln as tf; print('inherited=' + str(os.environ.get('GOMP_SPINCOUNT'))); "
          "print(float(tf.reduce_sum(tf.ones([100000]))))")


def _run(extra_env):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(extra_env, OMP_DISPLAY_ENV="verbose")
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout + out.stderr


def _spincount(text):
    lines = [line for line in text.splitlines() if "GOMP_SPINCOUNT" in line and "=" in line and "'" in line]
    assert lines, text
    return lines[-1].split("'")[1]


def test_import_gives_libgomp_a_short_spin():
    text = _run({})
    assert _spincount(text) == "1000"
    assert "inherited=None" in text  # not left in os.environ for subprocesses
    assert "100000.0" in text


@pytest.mark.parametrize("env, expected", [({"GOMP_SPINCOUNT": "5"}, "5"),
                                           ({"OMP_WAIT_POLICY": "active"}, None)])
def test_the_users_policy_wins(env, expected):
    text = _run(env)
    spin = _spincount(text)
    if expected is not None:
        assert spin == expected
    else:
        assert spin != "1000"
