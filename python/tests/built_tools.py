"""The project's built command-line tools for tests that run them: the path named by an environment
variable (ctest sets KILN_CLI, KILN_SERVE...), else ./build/<name>; the test skips when neither exists."""
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def built_tool(name, env):
    path = os.environ.get(env) or os.path.join(REPO, "build", name)
    if not os.path.exists(path):
        pytest.skip(f"{name} is not built (set {env})")
    return path
