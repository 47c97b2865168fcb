"""tf.config.optimizer: TF's Grappler switches, mapped onto Kiln's graph passes.

TF keeps the options a program set (set_experimental_options updates them, it never clears)
and reports them in RewriterConfig's field order. Each switch with a Kiln counterpart turns
passes off for the graphs compiled after it, through the engine's own KILN_DISABLE_PASSES list
(src/passes/pipeline.cpp reads it at every compile), joined to whatever the environment set:

  constant_folding: fold   arithmetic_optimization: simplify, cse   disable_model_pruning: dce
  remapping: contract, poolgrad, convpool, adam, fuse   layout_optimizer: layouts
  function_optimization: inline   loop_optimization: replays   disable_meta_optimizer: all

debug_stripper leaves tf.debugging's checks out of graphs traced while it is on. The other
switches have nothing to switch in Kiln and are only recorded."""
import os as _os

# RewriterConfig's fields as TF 2.15's get_experimental_options lists them; True: an on/off toggle
# reported only once set, False: a bool always reported.
_FIELDS = {
    "layout_optimizer": True, "constant_folding": True, "shape_optimization": True, "remapping": True,
    "arithmetic_optimization": True, "dependency_optimization": True, "loop_optimization": True,
    "function_optimization": True, "debug_stripper": True, "disable_model_pruning": False,
    "scoped_allocator_optimization": True, "pin_to_host_optimization": True, "implementation_selector": True,
    "auto_mixed_precision": True, "use_plugin_optimizers": True, "disable_meta_optimizer": False,
    "auto_mixed_precision_onednn_bfloat16": True, "auto_mixed_precision_mkl": True,
}
_PASSES_OFF = {  # (option, the value that turns the passes off): Kiln's pass names
    ("constant_folding", False): ("fold",),
    ("arithmetic_optimization", False): ("simplify", "cse"),
    ("disable_model_pruning", True): ("dce",),
    ("remapping", False): ("contract", "poolgrad", "convpool", "adam", "fuse"),
    ("layout_optimizer", False): ("layouts",),
    ("function_optimization", False): ("inline",),
    ("loop_optimization", False): ("replays",),
    ("disable_meta_optimizer", True): ("all",),
}
_ENV = "KILN_DISABLE_PASSES"
_from_environment = _os.environ.get(_ENV, "")
_options = {}
_jit = [False]


def set_experimental_options(options):
    """Sets the given Grappler options (the ones set before stay); they apply to graphs compiled later."""
    for key, value in options.items():
        if key == "min_graph_nodes":
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"min_graph_nodes must be an int, got {value!r}")
        elif key not in _FIELDS:
            raise ValueError(f"Unknown graph optimizer option {key!r}; TF's are {sorted(_FIELDS)} and "
                             "'min_graph_nodes'")
        elif not isinstance(value, bool):
            raise TypeError(f"The graph optimizer option {key!r} takes a bool, got {value!r}")
    _options.update(options)
    off = [name for name in _from_environment.split(",") if name]
    for (key, value), names in _PASSES_OFF.items():
        if _options.get(key, not value) == value:
            off.extend(names)
    if off:
        _os.environ[_ENV] = ",".join(off)
    else:
        _os.environ.pop(_ENV, None)


def get_experimental_options():
    """The options set, as TF reports them: toggles once set, the two bools always."""
    shown = {}
    for key, toggle in _FIELDS.items():
        if not toggle:
            shown[key] = _options.get(key, False)
        elif key in _options:
            shown[key] = _options[key]
    if _options.get("min_graph_nodes", 0) != 0:
        shown["min_graph_nodes"] = _options["min_graph_nodes"]
    return shown


def debug_stripper_on():
    return _options.get("debug_stripper", False)


def set_jit(enabled):
    """TF's auto-clustering for XLA: Kiln compiles every tf.function graph its own way, so this is recorded."""
    if enabled not in (True, False, "autoclustering"):
        raise ValueError(f"set_jit takes True, False or 'autoclustering', got {enabled!r}")
    _jit[0] = enabled


def get_jit():
    return "autoclustering" if _jit[0] in (True, "autoclustering") else ""
