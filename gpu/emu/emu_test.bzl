"""cc_test_with_emulator: a C++ test built twice, against each CUDA runtime.

    cc_test_with_emulator(name = "loader_test", srcs = [...], deps = [...])

makes
  - `loader_test`: linked like every binary (libcudart_static; no GPU here,
    so its device cases skip, and on a GPU machine they run on the GPU);
  - `loader_test_emu`: the same object files linked against the emulated
    runtime (//gpu/emu:cudart), where two emulated GPUs exist, so every
    device case runs. `emu_env` adds environment variables for it
    (SHARDFEED_CUDA_EMU_*, gpu/emu/emu_control.h); `emu_args` replaces
    `args` for it.
The test sources are compiled once (a testonly library both tests link
whole). Both are in `bazel test //...`, so CI runs the GPU path.
"""

def cc_test_with_emulator(name, srcs, deps = [], data = [], size = None, tags = [],
                          args = [], emu_args = None, emu_env = {}, emu_tags = [], shard_count = None,
                          timeout = None, copts = [], linkopts = []):
    lib = name + "_srcs"
    native.cc_library(
        name = lib,
        testonly = True,
        srcs = srcs,
        deps = deps,
        copts = copts,
        alwayslink = True,
    )
    common = dict(
        data = data,
        size = size,
        shard_count = shard_count,
        timeout = timeout,
        linkopts = linkopts,
    )
    native.cc_test(
        name = name,
        deps = [":" + lib],
        args = args,
        tags = tags,
        **common
    )
    native.cc_test(
        name = name + "_emu",
        deps = [":" + lib, Label("//gpu/emu:cudart")],
        args = args if emu_args == None else emu_args,
        tags = tags + emu_tags,
        env = emu_env,
        **common
    )
