"""Assembles shardfeed's install tree (the action behind //:install_tree).

Input: one parameter file, a line per value, "key=value":
  out=DIR                  the tree to write
  ar=PATH                  the toolchain's ar
  version_header=PATH      shardfeed/version.h (SHARDFEED_VERSION)
  archive=PATH, object=PATH  the static libraries and loose objects to merge
  header=REL:PATH          a header of the deps, as code includes it (REL)
  public=REL               the headers a user includes; the installed set is
                           their closure over quoted includes of REL headers
  link_flag=FLAG           the deps' link flags, in link order

Output, under DIR:
  include/shardfeed/...    the closure, includes rewritten from "reader/x.h"
                           to "shardfeed/reader/x.h" (shardfeed/x.h stays)
  lib/libshardfeed.a       every archive and object in one archive
  lib/pkgconfig/shardfeed.pc, lib/cmake/shardfeed/shardfeed{Config,ConfigVersion}.cmake
                           relocatable (paths relative to the file itself)

Fails, naming the header, when an installed header includes one of ours that
is not in the deps, or a CUDA header (users build without the toolkit).
"""
import os
import re
import subprocess
import sys

QUOTED_INCLUDE = re.compile(r'^(\s*#\s*include\s+)"([^"]+)"', re.M)
ANGLE_INCLUDE = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)


def parse_params(path):
    params = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            if key:
                params.setdefault(key, []).append(value)
    return params


def install_name(rel):
    """Where a header goes under include/: everything under shardfeed/."""
    return rel if rel.startswith("shardfeed/") else "shardfeed/" + rel


def header_closure(pool, public):
    """The headers reachable from `public`, each with its rewritten text."""
    ours = {rel.split("/", 1)[0] for rel in pool}
    todo, done = list(public), {}
    while todo:
        rel = todo.pop()
        if rel in done:
            continue
        if rel not in pool:
            sys.exit(f"install: public header {rel} is not a header of the installed libraries")
        with open(pool[rel]) as f:
            text = f.read()
        for angle in ANGLE_INCLUDE.findall(text):
            if angle.startswith("cuda") or angle.startswith("crt/"):
                sys.exit(f"install: {rel} includes <{angle}>; installed headers must not need "
                         "the CUDA toolkit")

        def rewrite(m):
            inc = m.group(2)
            if inc in pool:
                todo.append(inc)
                return f'{m.group(1)}"{install_name(inc)}"'
            if inc.split("/", 1)[0] in ours:
                sys.exit(f"install: {rel} includes \"{inc}\", which is not a header of the "
                         "installed libraries (add its library to //:install_tree's deps)")
            return m.group(0)  # abseil, protobuf, ...

        done[rel] = QUOTED_INCLUDE.sub(rewrite, text)
    return done


def read_version(path):
    with open(path) as f:
        text = f.read()
    m = re.search(r'#define SHARDFEED_VERSION "(\d+)\.(\d+)\.(\d+)"', text)
    if not m:
        sys.exit(f"install: no SHARDFEED_VERSION \"X.Y.Z\" in {path}")
    for part, value in zip(("MAJOR", "MINOR", "PATCH"), m.groups()):
        if not re.search(rf"#define SHARDFEED_VERSION_{part} {value}\b", text):
            sys.exit(f"install: SHARDFEED_VERSION_{part} in {path} disagrees with "
                     f"SHARDFEED_VERSION {'.'.join(m.groups())}")
    return ".".join(m.groups())


def merge_archives(ar, archives, objects, out):
    """One archive from many (an `ar -M` script keeps members of equal name)."""
    script = [f"CREATE {out}"] + [f"ADDLIB {a}" for a in archives]
    script += [f"ADDMOD {o}" for o in objects] + ["SAVE", "END", ""]
    subprocess.run([ar, "-M"], input="\n".join(script), text=True, check=True)
    subprocess.run([ar, "s", out], check=True)


PC_TEMPLATE = """\
# shardfeed {version}: written by `bazel run //:install`. Relocatable: paths
# are relative to this file. A static library: Libs carries its system
# dependencies (the CUDA runtime is inside libshardfeed.a).
prefix=${{pcfiledir}}/../..
includedir=${{prefix}}/include
libdir=${{prefix}}/lib

Name: shardfeed
Description: TFRecord shards: convert, check, and stream batches to training jobs
Version: {version}
Cflags: -I${{includedir}}
Libs: -L${{libdir}} -lshardfeed {link_flags}
"""

CONFIG_TEMPLATE = """\
# shardfeed {version}: written by `bazel run //:install`. Relocatable.
#   find_package(shardfeed REQUIRED)
#   target_link_libraries(my_trainer PRIVATE shardfeed::shardfeed)
# shardfeed::shardfeed is the static libshardfeed.a (the CUDA runtime is
# inside it: no CUDA toolkit needed) with its system libraries.
get_filename_component(_shardfeed_prefix "${{CMAKE_CURRENT_LIST_DIR}}/../../.." ABSOLUTE)
if(NOT TARGET shardfeed::shardfeed)
  add_library(shardfeed::shardfeed STATIC IMPORTED)
  set_target_properties(shardfeed::shardfeed PROPERTIES
    IMPORTED_LOCATION "${{_shardfeed_prefix}}/lib/libshardfeed.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES CXX
    INTERFACE_INCLUDE_DIRECTORIES "${{_shardfeed_prefix}}/include"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_LINK_LIBRARIES "{link_libraries}")
endif()
set(shardfeed_INCLUDE_DIRS "${{_shardfeed_prefix}}/include")
set(shardfeed_LIBRARIES shardfeed::shardfeed)
unset(_shardfeed_prefix)
"""

# 0.x releases are compatible within a minor version, later ones within a
# major version (semantic versioning); an exact request needs the same.
CONFIG_VERSION_TEMPLATE = """\
# shardfeed {version}: written by `bazel run //:install`.
set(PACKAGE_VERSION "{version}")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
if(NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  if(PACKAGE_FIND_VERSION_MAJOR EQUAL {major} AND
     ({major} GREATER 0 OR PACKAGE_FIND_VERSION_MINOR EQUAL {minor}))
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
if(NOT CMAKE_SIZEOF_VOID_P STREQUAL "" AND NOT CMAKE_SIZEOF_VOID_P EQUAL 8)
  set(PACKAGE_VERSION "{version} (64-bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    params = parse_params(sys.argv[1])
    out = params["out"][0]
    pool = dict(h.split(":", 1) for h in params.get("header", []))
    for rel, text in header_closure(pool, params["public"]).items():
        write(os.path.join(out, "include", install_name(rel)), text)

    version = read_version(params["version_header"][0])
    major, minor, _ = version.split(".")
    flags = params.get("link_flag", [])
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    merge_archives(params["ar"][0], params.get("archive", []), params.get("object", []),
                   os.path.join(out, "lib", "libshardfeed.a"))
    write(os.path.join(out, "lib", "pkgconfig", "shardfeed.pc"),
          PC_TEMPLATE.format(version=version, link_flags=" ".join(flags)))
    cmake_dir = os.path.join(out, "lib", "cmake", "shardfeed")
    write(os.path.join(cmake_dir, "shardfeedConfig.cmake"),
          CONFIG_TEMPLATE.format(version=version, link_libraries=";".join(flags)))
    write(os.path.join(cmake_dir, "shardfeedConfigVersion.cmake"),
          CONFIG_VERSION_TEMPLATE.format(version=version, major=major, minor=minor))


if __name__ == "__main__":
    main()
