import pytest

import kiln as tf


@pytest.fixture(autouse=True)
def _fresh_names():
    """Keras' layer names restart in every test ("dense", "dense_1", ...)."""
    tf.keras.backend.clear_session()
    yield

