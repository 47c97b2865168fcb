"""kiln.data (tf.data): input pipelines on the engine's Dataset.

The engine's pipeline carries flat lists of tensors; a Dataset here adds the
structure of its elements (a tensor, a tuple, a dict, nested), so elements come
out as TF gives them. `map` and `filter` functions are traced once, as TF's are
(kiln.function, with AutoGraph), and run as graphs on each element. Iterating a
Dataset inside kiln.function (AutoGraph's `for x in ds`, or `reduce`) builds one
dataset loop op, so the graph does not grow with the data."""
from .. import _C
from .. import dtypes as _dtypes
from .. import nest as _nest
from .._ops import cast as _cast, convert_to_tensor as _convert
from ..function import TensorSpec, function as _function
from ..tensor_shape import TensorShape
from . import _cards
from . import _composite_elements as _ce

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
# What AUTOTUNE prefetches: two elements ahead keeps one step's input ready.
_AUTOTUNE_PREFETCH = 2


def _to_components(value):
    """A Python element as TF's Dataset sources take it: tuples, dicts and
    namedtuples are structure; a list is one tensor (as in tf.data)."""
    if isinstance(value, list):
        return _convert(value)
    if _nest.is_nested(value):
        return _nest._rebuild(value, [_to_components(c) for c in _nest._children(value)])
    if hasattr(type(value), "_type_spec"):
        return value  # a RaggedTensor or SparseTensor: its components travel (_composite_elements.py)
    return _convert(value)


def _spec_of(t, drop_leading=False):
    if hasattr(type(t), "_type_spec"):
        return _ce.spec_of_value(t, drop_leading)
    dims = t.shape.as_list()
    return TensorSpec(dims[1:] if drop_leading else dims, t.dtype)


def _holds_list(structure):
    """Whether a list stands anywhere in `structure` (tf.data's structures take tuples:
    a list is one tensor there, so `zip` refuses it)."""
    if isinstance(structure, list):
        return True
    return _nest.is_nested(structure) and any(_holds_list(c) for c in _nest._children(structure))


def _call_unpacked(fn, element):
    """TF's calling rule for map/filter functions: a tuple element is spread over
    the arguments, anything else is one argument."""
    if isinstance(element, tuple) and not hasattr(type(element), "_fields"):
        return fn(*element)
    return fn(element)


class _Structure:
    """The structure of a dataset's elements: known at creation for sources, and
    for `map` once its function has run (the result's structure is the function's)."""
    __slots__ = ("template", "nested_datasets", "resolve")

    def __init__(self, template=None, nested_datasets=False, resolve=None):
        self.template = template
        # window's elements: each component a Dataset, carried as the window's stacked tensor.
        self.nested_datasets = nested_datasets
        # A dataset made in Python: what tells the template when first needed.
        self.resolve = resolve


class _ZipStructure:
    """A zip's structure: the zipped datasets' structures in the structure of `datasets`,
    known once each of theirs is."""
    __slots__ = ("datasets", "_template")

    def __init__(self, datasets):
        self.datasets = datasets
        self._template = None

    @property
    def template(self):
        if self._template is None:
            self._template = _nest.pack_sequence_as(self.datasets,
                                                    [d._template() for d in _nest.flatten(self.datasets)])
        return self._template


_UNKNOWN = object()
_END = object()


class Dataset:
    """tf.data.Dataset: an immutable pipeline; each transformation returns a new
    Dataset. Iterate it with `for`, or `reduce` it; inside kiln.function both are one
    loop op."""

    def __init__(self, ds, structure, spec=_UNKNOWN, parents=(), card=None, fed=None, options=None):
        self._ds = ds
        self._init_common(structure, spec, parents, card, fed, options)

    def _init_common(self, structure, spec, parents, card, fed, options):
        self._structure = structure if isinstance(structure, (_Structure, _ZipStructure)) else _Structure(structure)
        self._spec = spec
        # The datasets this one reads (their options merge into its own).
        self._parents = tuple(parents)
        # The cardinality where the engine cannot know it (a dataset made in Python
        # reports unknown there): None to ask the engine.
        self._card_override = card
        # A dataset argument of a function being traced (the engine feeds each call's
        # dataset): transformations made in Python cannot follow it.
        self._fed = any(p._fed for p in self._parents) if fed is None else fed
        self._own_options = options

    # ---- structure ----------------------------------------------------------------
    def _template(self):
        if self._structure.template is None:
            resolve = getattr(self._structure, "resolve", None)
            if resolve is not None:
                self._structure.template = _ce.template_of(resolve())
            else:
                self._peek()  # runs the map function once, which records its structure
        return self._structure.template

    def _pack(self, flat):
        if getattr(self._structure, "nested_datasets", False):
            flat = [t.dataset() if hasattr(t, "dataset") else Dataset.from_tensor_slices(t) for t in flat]
        return _nest.pack_sequence_as(self._template(), flat, expand_composites=True)

    def _peek(self):
        return self._ds.first()

    # ---- as a kiln.function argument: keyed by element spec, fed to the graph ---------
    @property
    def _kiln_engine_dataset(self):
        return self._ds

    def _kiln_structure_key(self):
        try:
            return repr(self.element_spec)
        except ValueError:  # empty, and a function decides the structure
            return "<unknown>"

    def _kiln_with_engine_dataset(self, ds):
        return Dataset(ds, self._structure, self._spec, fed=True, options=self._own_options)

    @property
    def element_spec(self):
        """The structure of TensorSpecs of the elements (read from the first element
        when a function's output decides it)."""
        if self._spec is _UNKNOWN:
            first = self._peek()
            if first is None:
                raise ValueError("The element_spec of an empty dataset whose elements come from a function is unknown")
            if _ce.holds_composites(self._template()):
                # A composite's dims differ by element (TF's traced spec leaves them unknown).
                self._spec = _nest.map_structure(
                    lambda v: _ce.loose_spec(_spec_of(v)) if hasattr(type(v), "_type_spec") else _spec_of(v),
                    self._pack(first))
            else:
                self._spec = self._pack([_spec_of(t) for t in first])
            self._spec_from_peek = True  # the first element's dims: a later one may differ
        return self._spec

    def _derived(self, ds, spec=None, card_rule=None):
        """A dataset of the engine's transformation `ds` of this one, with this one's structure;
        `card_rule(n)` gives its cardinality from this one's where only Python knows it."""
        return Dataset(ds, self._structure, self._spec if spec is None else spec, parents=(self,),
                       card=self._card_after(card_rule or (lambda n: n)))

    def _card_after(self, rule):
        return None if self._card_override is None else rule(self._card_override)

    # ---- sources -------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors, name=None):
        value = _to_components(tensors)
        flat = _ce.flatten(value)
        return Dataset(_C.Dataset.from_tensors(flat), _ce.template_of(value), _nest.map_structure(_spec_of, value))

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        value = _to_components(tensors)
        if _ce.holds_composites(value):
            return _ct.composite_slices(value)
        flat = _nest.flatten(value)
        for t in flat:
            if t.shape.rank == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, got a scalar {t!r}")
        return Dataset(_C.Dataset.from_tensor_slices(flat), value,
                       _nest.map_structure(lambda t: _spec_of(t, drop_leading=True), value))

    @staticmethod
    def range(*args, output_type=_dtypes.int64, name=None):  # noqa: A003 - TF's name
        """range(stop), range(start, stop), range(start, stop, step): int64 scalars."""
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 positional arguments, got {len(args)}")
        r = range(*(int(a) for a in args))
        ds = Dataset(_C.Dataset.range(r.start, r.stop, r.step), 0, TensorSpec([], _dtypes.int64))
        output_type = _dtypes.as_dtype(output_type)
        return ds if output_type == _dtypes.int64 else ds.map(lambda x: _cast(x, output_type))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """Elements from `generator(*args)`, called anew on every pass, converted to
        `output_signature` (a structure of TensorSpecs) or `output_types`."""
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is None:
            if output_types is None:
                raise TypeError("The `output_signature` argument (or the deprecated `output_types`) must be set.")
            types = _nest.flatten(output_types)
            shapes = [None] * len(types) if output_shapes is None else _nest.flatten_up_to(output_types, output_shapes)
            output_signature = _nest.pack_sequence_as(
                output_types, [TensorSpec(TensorShape(s), d) for d, s in zip(types, shapes)])
        specs = _nest.flatten(output_signature)
        args = tuple(args) if args is not None else ()

        def open_pass():
            it = iter(generator(*args))
            return lambda: convert(next(it, _END))

        def convert(value):
            if value is _END:
                return None
            try:
                leaves = _nest.flatten_up_to(output_signature, value)
            except ValueError:
                raise TypeError(f"`generator` yielded an element that did not match the expected structure. The "
                                f"expected structure was {output_signature!r}, but the yielded element was "
                                f"{value!r}.") from None
            out = []
            for leaf, spec in zip(leaves, specs):
                if _ce.is_composite_spec(spec):  # a RaggedTensor or SparseTensor: its components
                    out.extend(spec._to_components(_ce.conform(leaf, spec)))
                    continue
                t = _convert(leaf, spec.dtype)
                if not spec.shape.is_compatible_with(t.shape):
                    raise TypeError(f"`generator` yielded an element of shape {t.shape} where an element of shape "
                                    f"{spec.shape} was expected.")
                out.append(t)
            return out

        components = _nest.flatten(output_signature, expand_composites=True)
        return Dataset(_C.Dataset.from_generator(open_pass, [s._kiln_spec() for s in components]),
                       _ce.loose_spec(output_signature), output_signature)

    @staticmethod
    def zip(*args, datasets=None, name=None):  # noqa: A003 - TF's name
        """The datasets side by side: `zip((a, b))` (or `zip(a, b)`) yields `(x, y)` for
        the elements x of a and y of b, in the structure `datasets` has (tuples, dicts,
        nested), and stops at the shortest."""
        if not args and datasets is None:
            raise TypeError("Must pass at least one dataset to `zip`.")
        if args and datasets is not None:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if len(args) == 1:
            datasets = args[0]
        elif len(args) > 1:
            datasets = args
        flat = _nest.flatten(datasets)
        if _holds_list(datasets):
            raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) structures of "
                            "`tf.data.Dataset` objects. Python `list` is not supported and you should use "
                            "`tuple` instead.")
        for ds in flat:
            if not isinstance(ds, Dataset):
                raise TypeError(f"Invalid input to `zip`. Inputs are expected to be (nested) structures of "
                                f"`tf.data.Dataset` objects but encountered object of type {type(ds)}.")
        if not flat:
            raise TypeError("Must pass at least one dataset to `zip`.")
        specs = [ds._spec for ds in flat]
        spec = _UNKNOWN if any(s is _UNKNOWN for s in specs) else _nest.pack_sequence_as(datasets, specs)
        card = None
        if any(ds._card_override is not None for ds in flat):
            card = _cards.zip_([ds._cardinality() for ds in flat])
        return Dataset(_C.Dataset.zip([ds._ds for ds in flat]), _ZipStructure(datasets), spec, parents=flat, card=card)

    # ---- transformations -------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies `map_func` to each element (a tuple element is spread over its
        arguments). The function is traced once per element signature and runs as a
        graph; Python side effects in it happen while tracing only, as in TF. With
        num_parallel_calls (N or AUTOTUNE: one per core) the graphs of N elements run at
        once on threads (_parallel_map.py), in order unless deterministic=False."""
        traced = map_func if hasattr(map_func, "get_concrete_function") else _function(map_func)
        pack = self._pack
        out = _Structure()

        def apply(flat):
            result = _call_unpacked(traced, pack(flat))
            if isinstance(result, list):
                result = tuple(result)  # TF: a list returned from map is a tuple of components
            result = _nest.map_structure(lambda v: v if hasattr(type(v), "_type_spec") else _convert(v), result)
            if out.template is None:
                out.template = _ce.template_of(result)
            return _ce.flatten(result)

        from ._parallel_map import parallel_map, workers_for
        workers = workers_for(num_parallel_calls)
        if workers > 1 and not self._fed:
            # A dataset argument of a traced function keeps the engine's (sequential) map: a Python pass
            # cannot follow the dataset each call feeds.
            mapped = parallel_map(self, apply, out, workers, deterministic is not False)
        else:
            mapped = Dataset(self._ds.map(apply), out, parents=(self,), card=self._card_after(lambda n: n))
        mapped._map_source = (self, apply)  # what ignore_errors maps element by element
        return mapped

    def filter(self, predicate, name=None):
        """Keeps the elements for which `predicate` returns a true bool scalar."""
        traced = predicate if hasattr(predicate, "get_concrete_function") else _function(predicate)
        pack = self._pack

        def keep(flat):
            r = _convert(_call_unpacked(traced, pack(flat)))
            if r.dtype != _dtypes.bool or r.shape.rank != 0:
                raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its "
                                 f"return type was {r.dtype.name} {r.shape}.")
            return r

        # TF's filter is always of unknown cardinality (the engine keeps an infinite input's).
        return Dataset(self._ds.filter(keep), self._structure, self._spec, parents=(self,), card=UNKNOWN_CARDINALITY)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """TF's buffered shuffle; every pass draws a new order (with a seed, the
        sequence of orders is reproducible)."""
        if int(buffer_size) <= 0:
            raise ValueError(f"buffer_size must be greater than zero, got {buffer_size}")
        return self._derived(self._ds.shuffle(int(buffer_size), None if seed is None else int(seed)))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Stacks `batch_size` consecutive elements; the last, smaller batch is kept
        unless `drop_remainder` (then the batch dim of the element spec is known)."""
        if int(batch_size) <= 0:
            raise ValueError(f"batch_size must be greater than zero, got {batch_size}")
        if self._holds_composites():
            return _ct.composite_batch(self, int(batch_size), bool(drop_remainder))
        spec = _UNKNOWN
        if self._spec is not _UNKNOWN:
            lead = int(batch_size) if drop_remainder else None
            spec = _nest.map_structure(lambda s: TensorSpec([lead] + (s.shape.as_list() or []), s.dtype), self._spec)
        return Dataset(self._ds.batch(int(batch_size), bool(drop_remainder)), self._structure, spec, parents=(self,),
                       card=self._card_after(lambda n: _cards.batch(n, int(batch_size), drop_remainder)))

    def _holds_composites(self):
        """Whether the elements hold RaggedTensors or SparseTensors (their batches are made in Python)."""
        if self._spec is not _UNKNOWN:
            return _ce.holds_composites(self._spec)
        if self._fed and self._structure.template is None:
            return False
        return _ce.holds_composites(self._template())

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64, name=None):
        """batch, with each component whose shape is not fully known batched as a RaggedTensor."""
        return _ct.ragged_batch(self, int(batch_size), bool(drop_remainder), row_splits_dtype)

    def sparse_batch(self, batch_size, row_shape, name=None):
        """Batches of rank-(1 + len(row_shape)) SparseTensors of the elements (of shapes within row_shape)."""
        return _ct.sparse_batch(self, batch_size, row_shape)

    def repeat(self, count=None, name=None):
        count = -1 if count is None else int(count)
        return self._derived(self._ds.repeat(count), card_rule=lambda n: _cards.repeat(n, count))

    def take(self, count, name=None):
        return self._derived(self._ds.take(int(count)), card_rule=lambda n: _cards.take(n, int(count)))

    def skip(self, count, name=None):
        return self._derived(self._ds.skip(int(count)), card_rule=lambda n: _cards.skip(n, int(count)))

    def shard(self, num_shards, index, name=None):
        """Every `num_shards`-th element from `index`: worker `index` of `num_shards`
        reads its own disjoint part (shard before shuffling and batching)."""
        return self._derived(self._ds.shard(int(num_shards), int(index)),
                             card_rule=lambda n: _cards.shard(n, int(num_shards), int(index)))

    def prefetch(self, buffer_size, name=None):
        n = _AUTOTUNE_PREFETCH if buffer_size is None or int(buffer_size) == AUTOTUNE else int(buffer_size)
        return self._derived(self._ds.prefetch(n))

    # ---- transformations made in Python (kiln/data/_transforms.py) ------------------------
    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches elements of different shapes, each padded to `padded_shapes` (None or -1
        dims: the batch's longest) with `padding_values` (0, False or b"" by default)."""
        if self._holds_composites():
            _ct.refuse_padded_batch(self)
        return _t.padded_batch(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name=None):
        if self._holds_composites():
            return _ct.composite_unbatch(self)
        return _t.unbatch(self)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        """unbatch().batch(batch_size) in one copy; a list of sizes is cycled through."""
        if self._holds_composites() and not isinstance(batch_size, (list, tuple)):
            return self.unbatch().batch(batch_size, drop_remainder)  # composites re-batch through their rows
        from ._rebatch import rebatch
        return rebatch(self, batch_size, drop_remainder)

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        """Writes the elements to the directory `path` in Kiln's format (_snapshot.py)."""
        from ._snapshot import save
        save(self, path, compression, shard_func, checkpoint_args)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None, name=None):
        """Computes the elements once, saved at `path`, and reads them from there after."""
        from ._snapshot import snapshot
        return snapshot(self, path, compression, reader_func, shard_func)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None):
        """The dataset Dataset.save wrote to `path`."""
        from ._snapshot import load
        return load(path, element_spec, compression, reader_func)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        """Random int64 scalars in [0, 2**32), forever."""
        from ._rebatch import random
        return random(seed, rerandomize_each_iteration)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Elements that are structures of Datasets of `size` elements, windows starting
        `shift` apart, taking every `stride`-th element."""
        return _t.window(self, size, shift, stride, drop_remainder)

    def flat_map(self, map_func, name=None):
        return _t.flat_map(self, map_func)

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        return _t.interleave(self, map_func, cycle_length, block_length, num_parallel_calls,
                             deterministic is not False)

    def cache(self, filename="", name=None):
        return _t.cache(self, filename)

    def enumerate(self, start=0, name=None):  # noqa: A003 - TF's name
        """(index, element) pairs, the index an int64 from `start`."""
        return Dataset.zip((Dataset.counter(start), self))

    def concatenate(self, dataset, name=None):
        return _t.concatenate(self, dataset)

    def scan(self, initial_state, scan_func, name=None):
        """(new_state, output) = scan_func(state, element) over the elements; yields the outputs."""
        return _t.scan(self, initial_state, scan_func)

    def unique(self, name=None):
        return _t.unique(self)

    def take_while(self, predicate, name=None):
        return _t.take_while(self, predicate)

    def ignore_errors(self, log_warning=False, name=None):
        return _t.ignore_errors(self, log_warning)

    def assert_cardinality(self, expected_cardinality):
        return _t.assert_cardinality(self, expected_cardinality)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
        return _t.group_by_window(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        return _t.bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                            padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
                                            drop_remainder)

    def apply(self, transformation_func):
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object. Got {type(result)}.")
        return result

    @staticmethod
    def counter(start=0, step=1, dtype=_dtypes.int64, name=None):
        """start, start + step, ... forever."""
        start, step = int(start), int(step)
        if step == 0:
            ds = Dataset.from_tensors(_convert(start, _dtypes.int64)).repeat()
        else:
            ds = Dataset.range(start, 2 ** 63 - 1 if step > 0 else -2 ** 63, step)
            ds = Dataset(ds._ds, 0, ds._spec, card=INFINITE_CARDINALITY)
        dtype = _dtypes.as_dtype(dtype)
        return ds if dtype == _dtypes.int64 else ds.map(lambda x: _cast(x, dtype))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The files matching `file_pattern` (a glob, or a list of them) as string scalars,
        shuffled unless shuffle=False (then sorted)."""
        import glob
        patterns = file_pattern.numpy() if hasattr(file_pattern, "numpy") else file_pattern
        patterns = [patterns] if isinstance(patterns, (str, bytes)) else list(patterns)
        patterns = [p.decode() if isinstance(p, bytes) else str(p) for p in patterns]
        files = sorted({f for p in patterns for f in glob.glob(p)})
        if not files:
            from .. import errors
            raise errors.InvalidArgumentError(f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                                              f"Summarized data: b'No files matched pattern: {', '.join(patterns)}'")
        ds = Dataset.from_tensor_slices(_convert(files, _dtypes.string))
        return ds if shuffle is False else ds.shuffle(len(files), seed=seed)

    def get_single_element(self, name=None):
        """The one element of the dataset (an InvalidArgumentError if it has none or more)."""
        from .. import errors
        it = iter(self)
        first = next(it, _END)
        if first is _END:
            raise errors.InvalidArgumentError("Dataset was empty.")
        if next(it, _END) is not _END:
            raise errors.InvalidArgumentError("Dataset had more than one element.")
        return first

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None, name=None):
        """(class, element) pairs resampled so their classes follow `target_dist`."""
        return _t.rejection_resample(self, class_func, target_dist, initial_dist, seed)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        return _t.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        return _t.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    # ---- options --------------------------------------------------------------------------
    def options(self):
        """The tf.data.Options of this dataset: its inputs' merged, then its own."""
        from ._options import Options
        merged = Options()
        for p in self._parents:
            merged = merged.merge(p.options())
        return merged if self._own_options is None else merged.merge(self._own_options)

    def with_options(self, options, name=None):
        from ._options import Options
        if not isinstance(options, Options):
            raise TypeError(f"`options` must be a `tf.data.Options` object, got {type(options)}.")
        mine = options if self._own_options is None else self._own_options.merge(options)
        out = Dataset.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out._own_options = mine
        return out

    def cardinality(self):
        """An int64 scalar: the number of elements, INFINITE_CARDINALITY (-1) or
        UNKNOWN_CARDINALITY (-2)."""
        return _convert(self._cardinality(), _dtypes.int64)

    def _cardinality(self):
        return self._ds.cardinality() if self._card_override is None else self._card_override

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    # ---- consumption -----------------------------------------------------------------
    def __iter__(self):
        from ._iterator import OwnedIterator
        pack = self._pack
        return OwnedIterator(self, (pack(flat) for flat in self._ds))

    def as_numpy_iterator(self):
        return (_nest.map_structure(_ce.to_numpy_value, e) for e in self)

    def reduce(self, initial_state, reduce_func, name=None):
        """state = reduce_func(state, element) over every element. Inside kiln.function
        one dataset loop op (the graph does not grow with the data)."""
        return self._reduce(initial_state, reduce_func)

    def _reduce(self, initial_state, reduce_func, keep_going=None):
        """reduce, and while `keep_going(state)` (a bool scalar) holds, checked before each
        element is pulled: AutoGraph's loop with a `break` (TF's scan and take_while). A
        TensorArray in the state travels as its three state tensors (TF's loops carry its flow)."""
        state_template = _nest.map_structure(
            lambda v: v if isinstance(v, _C.TensorArray) else _convert(v), initial_state)
        template_leaves = _nest.flatten(state_template)
        pack = self._pack

        def tensors_of(leaves):
            out = []
            for leaf in leaves:
                out.extend(leaf._leaves() if isinstance(leaf, _C.TensorArray) else [leaf])
            return out

        def state_of(flat):
            leaves, at = [], 0
            for old in template_leaves:
                if isinstance(old, _C.TensorArray):
                    leaves.append(old._with_leaves(list(flat[at:at + 3])))
                    at += 3
                else:
                    leaves.append(flat[at])
                    at += 1
            return _nest.pack_sequence_as(state_template, leaves)

        def mismatch(expected, got):
            return TypeError(f"The element types for the new state must match the initial state. Expected "
                             f"{expected}; got {got}.")

        def step(state_flat, element_flat):
            new_state = reduce_func(state_of(state_flat), pack(element_flat))
            if isinstance(state_template, tuple) and isinstance(new_state, list):
                new_state = tuple(new_state)
            try:
                _nest.assert_same_structure(state_template, new_state, check_types=False)
            except (ValueError, TypeError) as e:
                raise mismatch(repr(state_template), repr(new_state)) from e
            out = []
            for old, new in zip(template_leaves, _nest.flatten(new_state)):
                if isinstance(old, _C.TensorArray):
                    if not isinstance(new, _C.TensorArray) or new._dtype_enum != old._dtype_enum:
                        raise mismatch(repr(old), repr(new))
                    out.append(new)
                    continue
                new = _convert(new, old.dtype)
                if new.dtype != old.dtype:
                    raise mismatch(old.dtype.name, new.dtype.name)
                out.append(new)
            return tensors_of(out)

        keep = None
        if keep_going is not None:
            def keep(state_flat):
                return _convert(keep_going(state_of(state_flat)), _dtypes.bool)

        return state_of(self._ds.reduce(tensors_of(template_leaves), step, keep))

    def __repr__(self):
        spec = self._spec if self._spec is not _UNKNOWN else "<unknown until the first element>"
        return f"<Dataset element_spec={spec}>"


from . import _transforms as _t  # noqa: E402 - the transformations use Dataset
from . import _composite_transforms as _ct  # noqa: E402
