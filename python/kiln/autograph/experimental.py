"""kiln.autograph.experimental (tf.autograph.experimental)."""
import functools

__all__ = ["do_not_convert", "set_loop_options"]


def do_not_convert(func=None):
    """Decorator: AutoGraph leaves `func` (and what it calls) as written."""
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    wrapper.__kiln_do_not_convert__ = True
    return wrapper


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None, shape_invariants=None):
    """Options of the loop whose body starts with this call: `shape_invariants` is a list
    of (variable, shape) pairs, `maximum_iterations` bounds a graph loop. AutoGraph takes
    the call out of the loop body; anywhere else it does nothing."""
