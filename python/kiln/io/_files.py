"""tf.io.read_file / write_file and the few tf.io.gfile calls pipelines use, on the
local file system."""
import glob as _glob
import os as _os
import shutil as _shutil

from .. import errors as _errors


def _path(p):
    if hasattr(p, "numpy"):
        p = p.numpy()
    p = p.decode() if isinstance(p, bytes) else str(p)
    return p[len("file://"):] if p.startswith("file://") else p


def read_file(filename, name=None):
    from .._ops import convert_to_tensor
    from .. import dtypes, _C
    if (isinstance(filename, _C.Tensor) and filename._is_symbolic) or _C.is_tracing():
        # A graph tensor (a dataset map, a tf.function): the engine's ReadFile reads the file when the graph runs
        # (src/ops/file_ops.cpp), so the graph also saves.
        return _C.read_file(filename if isinstance(filename, _C.Tensor) else convert_to_tensor(_path(filename)))
    path = _path(filename)
    try:
        with open(path, "rb") as f:
            return convert_to_tensor(f.read(), dtypes.string)
    except FileNotFoundError:
        raise _errors.NotFoundError(f"{path}; No such file or directory") from None
    except IsADirectoryError:  # as ReadFile's kernel (src/ops/file_ops.cpp) and TF's
        raise _errors.FailedPreconditionError(f"{path}; Is a directory") from None


def write_file(filename, contents, name=None):
    if hasattr(contents, "numpy"):
        contents = contents.numpy()
    if isinstance(contents, str):
        contents = contents.encode()
    with open(_path(filename), "wb") as f:
        f.write(contents)


def matching_files(pattern, name=None):
    """The files matching a glob pattern (or each of a vector of them), sorted, as a string tensor."""
    import numpy as np
    from .._ops import constant, convert_to_tensor
    patterns = convert_to_tensor(pattern).numpy()
    found = sorted({f for p in np.ravel(patterns) for f in _glob.glob(_path(p))})
    if not found:
        raise _errors.NotFoundError(f"No files matched pattern: {_path(np.ravel(patterns)[0])}")
    return constant(np.asarray([f.encode() for f in found], dtype=object))


def match_filenames_once(pattern, name=None):
    """A non-trainable string variable holding the files matching pattern, matched once, when it is made."""
    from .. import _C
    with _C.init_scope():
        return _C.Variable(matching_files(pattern), False, name or "matching_filenames", None)


class gfile:  # noqa: N801 - tf.io.gfile is a module in TF
    @staticmethod
    def exists(path):
        return _os.path.exists(_path(path))

    @staticmethod
    def glob(pattern):
        return sorted(_glob.glob(_path(pattern)))

    @staticmethod
    def makedirs(path):
        _os.makedirs(_path(path), exist_ok=True)

    @staticmethod
    def mkdir(path):
        _os.mkdir(_path(path))

    @staticmethod
    def isdir(path):
        return _os.path.isdir(_path(path))

    @staticmethod
    def listdir(path):
        return sorted(_os.listdir(_path(path)))

    @staticmethod
    def remove(path):
        try:
            _os.remove(_path(path))
        except FileNotFoundError:
            raise _errors.NotFoundError(f"{_path(path)}; No such file or directory") from None

    @staticmethod
    def rmtree(path):
        _shutil.rmtree(_path(path))

    @staticmethod
    def rename(src, dst, overwrite=False):
        if not overwrite and _os.path.exists(_path(dst)):
            raise _errors.FailedPreconditionError(f"{_path(dst)}; File already exists")
        _os.replace(_path(src), _path(dst))

    @staticmethod
    def copy(src, dst, overwrite=False):
        if not overwrite and _os.path.exists(_path(dst)):
            raise _errors.AlreadyExistsError(f"{_path(dst)}; File already exists")
        if not _os.path.exists(_path(src)):
            raise _errors.NotFoundError(f"{_path(src)}; No such file or directory")
        _shutil.copyfile(_path(src), _path(dst))

    @staticmethod
    def join(path, *paths):
        return _os.path.join(_path(path), *[_path(p) for p in paths])

    @staticmethod
    def stat(path):
        """TF's FileStatistics: length (bytes), mtime_nsec, is_directory."""
        try:
            st = _os.stat(_path(path))
        except FileNotFoundError:
            raise _errors.NotFoundError(f"{_path(path)}; No such file or directory") from None
        return _FileStatistics(st.st_size, st.st_mtime_ns, _os.path.isdir(_path(path)))

    @staticmethod
    def walk(top, topdown=True, onerror=None):
        """(directory, subdirectory names, file names) for each directory under top, as os.walk."""
        return _os.walk(_path(top), topdown=topdown, onerror=onerror)

    @staticmethod
    def get_registered_schemes():
        """The URI schemes paths may use: local files only in Kiln ("" and "file")."""
        return ["", "file"]

    GFile = staticmethod(lambda name, mode="r": open(_path(name), mode))


class _FileStatistics:
    def __init__(self, length, mtime_nsec, is_directory):
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory
