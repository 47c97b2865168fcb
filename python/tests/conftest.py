import pytest

import kiln as tf


@pytest.fixture(autouse=True)
def _eager_functions_off():
    tf.config.run_functions_eagerly(False)
    yield
    tf.config.run_functions_eagerly(False)
