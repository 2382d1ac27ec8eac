"""shardfeed_install_tree: the install tree for users outside Bazel.

Bazel 4.2.3 has no cc_static_library. This rule reads the deps' CcInfo and
hands one action (install_tree.py) everything an installed copy needs:
  - every static library and loose object of the deps' linking contexts
    (our libraries, the generated protos, the nvcc objects and
    libcudart_static.a), merged with the toolchain's `ar` into one
    lib/libshardfeed.a;
  - the headers reachable through quoted includes from `public_hdrs` (as
    users include them: "shardfeed/shardfeed.h"), taken
    from the deps' compilation contexts (so renamed or added headers follow
    the BUILD files), under include/shardfeed/;
  - the deps' link flags (system libraries: abseil, protobuf, zlib, ISA-L,
    pthread, dl, rt) for lib/pkgconfig/shardfeed.pc and
    lib/cmake/shardfeed/shardfeedConfig.cmake;
  - the version, parsed from `version_hdr`.
The output is one directory; //:install copies it into a prefix.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _include_path(f):
    """A header's path as code includes it: "reader/loader.h", or for a
    library with include_prefix its _virtual_includes path
    ("shardfeed/shardfeed.h")."""
    if "/_virtual_includes/" in f.path:
        return f.path.split("/_virtual_includes/", 1)[1].split("/", 1)[1]
    path = f.short_path
    if path.startswith("../"):  # a file of an external repository
        path = path.split("/", 2)[2]
    return path

def _is_ours(f, repo):
    return f.owner != None and f.owner.workspace_name == repo

def _install_tree_impl(ctx):
    repo = ctx.label.workspace_name
    cc_toolchain = find_cpp_toolchain(ctx)
    archives = []
    objects = []
    flags = []
    headers = []
    for dep in ctx.attr.deps:
        cc = dep[CcInfo]
        for linker_input in cc.linking_context.linker_inputs.to_list():
            flags.extend(linker_input.user_link_flags)
            for lib in linker_input.libraries:
                archive = lib.pic_static_library or lib.static_library
                if archive:
                    archives.append(archive)
                elif lib.pic_objects or lib.objects:
                    objects.extend(lib.pic_objects or lib.objects)
        headers.extend([h for h in cc.compilation_context.headers.to_list() if _is_ours(h, repo)])

    # Dedupe, keeping the first occurrence (Bazel's link order).
    archives = {a.path: a for a in archives}.values()
    objects = {o.path: o for o in objects}.values()
    headers = {_include_path(h): h for h in headers}
    seen_flags = {}
    for flag in flags:
        seen_flags.setdefault(flag, True)

    out = ctx.actions.declare_directory(ctx.label.name)
    args = ctx.actions.args()
    args.use_param_file("%s", use_always = True)
    args.set_param_file_format("multiline")
    args.add(out.path, format = "out=%s")
    args.add(cc_toolchain.ar_executable, format = "ar=%s")
    args.add(ctx.file.version_hdr.path, format = "version_header=%s")
    args.add_all(archives, format_each = "archive=%s")
    args.add_all(objects, format_each = "object=%s")
    args.add_all(["%s:%s" % (rel, f.path) for rel, f in headers.items()], format_each = "header=%s")
    args.add_all(ctx.attr.public_hdrs, format_each = "public=%s")
    args.add_all(seen_flags.keys(), format_each = "link_flag=%s")
    ctx.actions.run_shell(
        command = 'python3 "%s" "$1"' % ctx.file._tool.path,
        arguments = [args],
        inputs = depset(
            archives + objects + headers.values() + [ctx.file.version_hdr, ctx.file._tool],
            transitive = [cc_toolchain.all_files],
        ),
        outputs = [out],
        mnemonic = "ShardfeedInstallTree",
        progress_message = "Assembling the shardfeed install tree %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

shardfeed_install_tree = rule(
    implementation = _install_tree_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        # Include paths, e.g. "shardfeed/shardfeed.h".
        "public_hdrs": attr.string_list(mandatory = True),
        "version_hdr": attr.label(allow_single_file = [".h"], mandatory = True),
        "_tool": attr.label(default = Label("//build_defs:install_tree.py"), allow_single_file = True),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    incompatible_use_toolchain_transition = True,
)
