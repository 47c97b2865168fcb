"""Builds the kiln wheel: python/kiln plus its extension, kiln._C, which the project's CMake builds.

CMake works as scripts/build.sh has it (Release, Ninja, ccache) in the same tree, ./build, so a
developer's build is reused and only the kiln_python_ext target is built. KILN_BUILD_DIR names another
tree (the ctest Python.Wheel passes its own). The metadata is in pyproject.toml; the
version is CMakeLists.txt's, the one source of it."""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version():
    """project(Kiln VERSION x.y.z) in CMakeLists.txt."""
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.search(r"project\(\s*Kiln\s+VERSION\s+(\d+(?:\.\d+)*)", text)
    if not found:
        raise RuntimeError("CMakeLists.txt: no project(Kiln VERSION ...) to take the version from")
    return found.group(1)


def cmake_build_dir():
    return Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build")).resolve()


class CMakeExtension(Extension):
    """An extension that a CMake target builds (no sources for setuptools to compile)."""

    def __init__(self, name, target):
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
        if missing:
            raise RuntimeError(f"building kiln needs {' and '.join(missing)} (bash scripts/setup.sh installs them "
                               "and Kiln's other build dependencies)")
        build_dir = cmake_build_dir()
        env = dict(os.environ)
        # ccache hits across checkouts, as in scripts/build.sh.
        env.setdefault("CCACHE_BASEDIR", str(ROOT))
        env.setdefault("CCACHE_NOHASHDIR", "true")
        if not (build_dir / "CMakeCache.txt").exists():
            configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"]
            # A venv's interpreter is a link to its base one: CMake is given the base (python/CMakeLists.txt
            # defaults to /usr/bin/python3), so the tests of this tree do not depend on the venv.
            python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
            if python != os.path.realpath("/usr/bin/python3"):
                configure.append(f"-DPython_EXECUTABLE={python}")
            subprocess.run(configure, check=True, env=env)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", ext.target], check=True, env=env)

        package = build_dir / "python" / "kiln"
        built = package / ("_C" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not built.exists():
            found = ", ".join(p.name for p in package.glob("_C.*")) or "nothing"
            raise RuntimeError(f"{build_dir} holds {found}, not {built.name} for {sys.executable} (the tree was "
                               "configured for another Python): set KILN_BUILD_DIR to a new folder")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        shutil.copymode(built, target)
        # kiln/_version.py, written by python/CMakeLists.txt from the project's version.
        shutil.copyfile(package / "_version.py", target.parent / "_version.py")


# setuptools' own outputs (build/lib, build/bdist.*) go inside the CMake tree, away from CMake's files.
build_base = str(cmake_build_dir() / "setuptools")
os.makedirs(build_base, exist_ok=True)  # egg_info's folder must exist
setup(
    version=project_version(),
    package_dir={"": "python"},
    packages=find_packages("python", include=["kiln", "kiln.*"]),
    zip_safe=False,
    ext_modules=[CMakeExtension("kiln._C", target="kiln_python_ext")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": build_base}, "egg_info": {"egg_base": build_base}},
)
