"""tf.io.read_file / write_file and the few tf.io.gfile calls pipelines use, on the
local file system."""
import glob as _glob
import os as _os
import shutil as _shutil

from .. import errors as _errors


def _path(p):
    if hasattr(p, "numpy"):
        p = p.numpy()
    return p.decode() if isinstance(p, bytes) else str(p)


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

    GFile = staticmethod(lambda name, mode="r": open(_path(name), mode))
