"""Unit tests of install_tree.py: header closure, include rewriting, the
refusals (an uninstalled header of ours, a CUDA header), version parsing."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import install_tree  # noqa: E402


class InstallTreeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        self.pool = {}

    def header(self, rel, text):
        path = os.path.join(self.dir, rel.replace("/", "_"))
        with open(path, "w") as f:
            f.write(text)
        self.pool[rel] = path

    def test_closure_rewrites_our_includes_only(self):
        self.header("shardfeed/shardfeed.h", '#include "reader/loader.h"\n#include "shardfeed/version.h"\n')
        self.header("reader/loader.h", '#include "absl/status/status.h"\n  #  include "proto/m.pb.h"\n#include <vector>\n')
        self.header("proto/m.pb.h", "#include <google/protobuf/message.h>\n")
        self.header("shardfeed/version.h", "")
        self.header("reader/internal.h", "")  # not reachable: not installed
        got = install_tree.header_closure(self.pool, ["shardfeed/shardfeed.h"])
        self.assertEqual(sorted(got), ["proto/m.pb.h", "reader/loader.h", "shardfeed/shardfeed.h",
                                       "shardfeed/version.h"])
        self.assertEqual(got["shardfeed/shardfeed.h"],
                         '#include "shardfeed/reader/loader.h"\n#include "shardfeed/version.h"\n')
        self.assertEqual(got["reader/loader.h"], '#include "absl/status/status.h"\n'
                         '  #  include "shardfeed/proto/m.pb.h"\n#include <vector>\n')
        self.assertEqual(install_tree.install_name("proto/m.pb.h"), "shardfeed/proto/m.pb.h")
        self.assertEqual(install_tree.install_name("shardfeed/version.h"), "shardfeed/version.h")

    def test_refuses_an_uninstalled_header_of_ours(self):
        self.header("shardfeed/shardfeed.h", '#include "reader/loader.h"\n')
        self.header("reader/loader.h", '#include "gpu/cuda_status.h"\n')
        self.header("gpu/other.h", "")
        with self.assertRaises(SystemExit) as e:
            install_tree.header_closure(self.pool, ["shardfeed/shardfeed.h"])
        self.assertIn('reader/loader.h includes "gpu/cuda_status.h"', str(e.exception))

    def test_refuses_a_cuda_header(self):
        self.header("shardfeed/shardfeed.h", "#include <cuda_runtime_api.h>\n")
        with self.assertRaises(SystemExit) as e:
            install_tree.header_closure(self.pool, ["shardfeed/shardfeed.h"])
        self.assertIn("CUDA toolkit", str(e.exception))

    def test_version(self):
        self.header("v.h", '#define SHARDFEED_VERSION_MAJOR 1\n#define SHARDFEED_VERSION_MINOR 20\n'
                    '#define SHARDFEED_VERSION_PATCH 3\n#define SHARDFEED_VERSION "1.20.3"\n')
        self.assertEqual(install_tree.read_version(self.pool["v.h"]), "1.20.3")
        self.header("bad.h", '#define SHARDFEED_VERSION_MAJOR 1\n#define SHARDFEED_VERSION_MINOR 2\n'
                    '#define SHARDFEED_VERSION_PATCH 3\n#define SHARDFEED_VERSION "1.20.3"\n')
        with self.assertRaises(SystemExit) as e:
            install_tree.read_version(self.pool["bad.h"])
        self.assertIn("SHARDFEED_VERSION_MINOR", str(e.exception))


if __name__ == "__main__":
    unittest.main()
