"""pip install ./python (or pip wheel ./python): the source build. Builds the
extension with Bazel in this checkout (as ./test.sh does; it carries abseil,
protobuf, zlib, libjpeg-turbo, libspng and the CUDA runtime privately, see
python/BUILD) and packages it with the pure-Python layer and the `shardfeed`
console script. The result links ISA-L from this machine (libisal2); the
wheel to give to others is `bazel run //python:wheel` (manylinux, via
auditwheel)."""
import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def shardfeed_version():
    """SHARDFEED_VERSION from include/shardfeed/version.h, the one source."""
    with open(os.path.join(ROOT, "include", "shardfeed", "version.h")) as f:
        return re.search(r'#define SHARDFEED_VERSION "([^"]+)"', f.read()).group(1)


class BuildWithBazel(build_py):
    def run(self):
        subprocess.check_call(["bazel", "build", "//python:_shardfeed.so"], cwd=ROOT)
        bazel_bin = subprocess.check_output(["bazel", "info", "bazel-bin"], cwd=ROOT,
                                            text=True, stderr=subprocess.DEVNULL).strip()
        super().run()
        target = os.path.join(self.build_lib, "shardfeed", "_shardfeed.so")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.exists(target):
            os.remove(target)
        shutil.copyfile(os.path.join(bazel_bin, "python", "_shardfeed.so"), target)
        os.chmod(target, 0o755)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(
    name="shardfeed",
    version=shardfeed_version(),
    description="TFRecord shards into training loops from C++ threads, zero-copy through DLPack",
    packages=["shardfeed"],
    python_requires=">=3.9",
    cmdclass={"build_py": BuildWithBazel},
    entry_points={"console_scripts": ["shardfeed = shardfeed._cli:main"]},
    distclass=BinaryDistribution,
)
