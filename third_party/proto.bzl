"""C++ code from .proto files with the system protoc (protobuf-compiler).

Bazel 4's native proto rules want protobuf's own source repository; we have
only Debian's protoc and libprotobuf, so a genrule runs protoc directly.
"""

def system_cc_proto_library(name, srcs, deps = [], visibility = None):
    """Generates NAME.pb.{h,cc} for each src and wraps them in a cc_library.

    Args:
      name: the cc_library's name.
      srcs: .proto files in this package; imports are relative to the
        workspace root (e.g. "proto/feature.proto").
      deps: other system_cc_proto_library targets whose protos are imported.
      visibility: the cc_library's visibility.
    """
    pkg = native.package_name()

    # Paths are relative to this repository's root: "." in shardfeed's own
    # workspace, external/shardfeed when another workspace uses it (the
    # generated files then go under $(GENDIR)/external/shardfeed).
    root = Label("//:BUILD").workspace_root
    outs = []
    for src in srcs:
        base = src[:-len(".proto")]
        outs += [base + ".pb.h", base + ".pb.cc"]
    native.genrule(
        name = name + "_genproto",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = outs,
        tools = ["@system//:protoc"],
        cmd = "$(location @system//:protoc) --proto_path=%s --cpp_out=%s " % (
            root or ".",
            "$(GENDIR)/" + root if root else "$(GENDIR)",
        ) +
              " ".join(["%s/%s" % (pkg, s) for s in srcs]),
    )
    native.filegroup(name = name + "_srcs", srcs = srcs, visibility = visibility)
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + ["@system//:protobuf"],
        visibility = visibility,
    )
