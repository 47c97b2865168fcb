"""keras.utils.get_file (Keras 2.15's rules): a file in Keras' cache ($KERAS_HOME, else ~/.keras, under
`cache_subdir`) is used as it is; a missing one is downloaded from `origin` (with urllib; Kiln itself needs no
network), checked against `file_hash` when given, and unpacked when `extract` / `untar` ask."""
import hashlib
import os
import shutil
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile


def _cache_dir(cache_dir):
    if cache_dir is None:
        cache_dir = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return os.path.expanduser(cache_dir)


def _hash_file(fpath, algorithm="sha256", chunk_size=65535):
    hasher = hashlib.sha256() if algorithm in ("sha256", "auto") else hashlib.md5()
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto"):
    """Whether the file's sha256 (64 hex digits, or algorithm="sha256") or md5 is `file_hash`."""
    if algorithm == "sha256" or (algorithm == "auto" and len(file_hash) == 64):
        hasher = "sha256"
    else:
        hasher = "md5"
    return str(_hash_file(fpath, hasher)) == str(file_hash)


def _check_inside(file_path, path, member):
    target = os.path.realpath(os.path.join(path, member))
    if not target.startswith(os.path.realpath(path) + os.sep):
        raise ValueError(f"Archive member {member!r} of {file_path} would be written outside {path}")


def _extract_archive(file_path, path=".", archive_format="auto"):
    """Unpacks a tar or zip archive into `path`; whether it was one."""
    if archive_format is None:
        return False
    if archive_format == "auto":
        archive_format = ["tar", "zip"]
    if isinstance(archive_format, str):
        archive_format = [archive_format]
    for kind in archive_format:
        if kind == "tar" and tarfile.is_tarfile(file_path):
            with tarfile.open(file_path) as archive:
                if hasattr(tarfile, "data_filter"):  # Python 3.11.4+ and 3.12: the standard library's checks
                    archive.extractall(path, filter="data")
                else:
                    for member in archive.getmembers():
                        _check_inside(file_path, path, member.name)
                        if member.issym() or member.islnk():
                            _check_inside(file_path, path, os.path.join(os.path.dirname(member.name), member.linkname))
                        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
                            raise ValueError(f"Archive member {member.name!r} of {file_path} is a device or fifo")
                    archive.extractall(path)
            return True
        if kind == "zip" and zipfile.is_zipfile(file_path):
            with zipfile.ZipFile(file_path) as archive:
                for member in archive.namelist():
                    _check_inside(file_path, path, member)
                archive.extractall(path)
            return True
    return False


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None):
    """The local path of `fname` in Keras' cache, downloading it from `origin` if it is not there."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    cache_dir = _cache_dir(cache_dir)
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    datadir_base = cache_dir
    try:  # Keras makes ~/.keras when it starts; Kiln when first asked
        os.makedirs(datadir_base, exist_ok=True)
    except OSError:
        pass
    if not os.access(datadir_base, os.W_OK):
        datadir_base = os.path.join("/tmp", ".keras")
    datadir = os.path.join(datadir_base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    fname = os.fspath(fname) if fname is not None else os.path.basename(urllib.parse.urlsplit(origin).path)
    if not fname:
        raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'. Please specify the "
                         "`fname` as the input param.")
    if untar:
        # Keras' rule: the archive is NAME.tar.gz and unpacks to NAME, whether or not fname ends so.
        untar_fpath = os.path.join(datadir, fname[:-len(".tar.gz")] if fname.endswith(".tar.gz") else fname)
        fpath = untar_fpath + ".tar.gz"
    else:
        fpath = os.path.join(datadir, fname)
    download = not os.path.exists(fpath)
    if not download and file_hash is not None and not validate_file(fpath, file_hash, hash_algorithm):
        print(f"A local file was found, but it seems to be incomplete or outdated because the {hash_algorithm} "
              f"file hash does not match the original value of {file_hash} so we will re-download the data.")
        download = True
    if download:
        print(f"Downloading data from {origin}")
        try:
            partial = fpath + ".part"
            with urllib.request.urlopen(origin) as response, open(partial, "wb") as out:
                shutil.copyfileobj(response, out)
            os.replace(partial, fpath)
        except (urllib.error.URLError, OSError, ValueError) as e:
            if os.path.exists(fpath + ".part"):
                os.remove(fpath + ".part")
            raise Exception(f"URL fetch failure on {origin}: {e}") from None
        if file_hash is not None and not validate_file(fpath, file_hash, hash_algorithm):
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not match "
                             f"the provided value of {file_hash}.")
    if untar:
        if not os.path.exists(untar_fpath):
            _extract_archive(fpath, datadir, archive_format="tar")
        return untar_fpath
    if extract:
        _extract_archive(fpath, datadir, archive_format)
    return fpath
