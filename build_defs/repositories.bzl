"""shardfeed_dependencies(): the repositories shardfeed needs, for a Bazel
workspace that uses shardfeed as an external repository. In its WORKSPACE:

    local_repository(name = "shardfeed", path = "/path/to/shardfeed")
    load("@shardfeed//build_defs:repositories.bzl", "shardfeed_dependencies")
    shardfeed_dependencies()

then deps = ["@shardfeed//:shardfeed"] and #include <shardfeed/shardfeed.h>
(see examples/bazel/). The repository must be named "shardfeed". Each
repository is declared only if the workspace has not declared it already, so
a workspace can bring its own (e.g. another CUDA path).
"""

load("//third_party:private_deps.bzl", "private_deps_repository")

def _shardfeed_folder_impl(rctx):
    """A repository made of one folder of the shardfeed repository."""
    folder = rctx.path(rctx.attr.marker).dirname
    for child in folder.readdir():
        rctx.symlink(child, child.basename)

_shardfeed_folder = repository_rule(
    implementation = _shardfeed_folder_impl,
    attrs = {"marker": attr.label(doc = "a file at the top of the folder")},
    local = True,
)

def shardfeed_dependencies():
    """Declares @system, @cuda, @private_deps, @rules_cc and @rules_java as WORKSPACE does."""
    existing = native.existing_rules()
    if "system" not in existing:
        native.new_local_repository(
            name = "system",
            build_file = str(Label("//third_party:system.BUILD")),
            path = "/usr",
        )
    if "cuda" not in existing:
        native.new_local_repository(
            name = "cuda",
            build_file = str(Label("//third_party:cuda.BUILD")),
            path = "/usr/local/cuda",
        )
    if "private_deps" not in existing:
        private_deps_repository(name = "private_deps")
    if "rules_cc" not in existing:
        _shardfeed_folder(name = "rules_cc", marker = Label("//third_party/rules_cc:WORKSPACE"))
    if "rules_java" not in existing:
        native.local_repository(name = "rules_java", path = "/usr/share/bazel/rules/java")
    if "remote_coverage_tools" not in existing:
        _shardfeed_folder(
            name = "remote_coverage_tools",
            marker = Label("//third_party/remote_coverage_tools:WORKSPACE"),
        )
