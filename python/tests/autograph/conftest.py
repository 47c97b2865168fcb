# kiln/__init__.py does not import kiln.autograph yet (kiln.function imports it on
# first use); importing it here makes `tf.autograph` available to every test.
import kiln.autograph  # noqa: F401
