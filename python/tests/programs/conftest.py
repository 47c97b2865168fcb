"""Real programs (keras.io's and TensorFlow's guides and tutorials under examples/python), each run end to end
in its own process: ctest runs this directory as Python.programs, apart from Python.pytest (their run time)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "keras"))  # keras_util
