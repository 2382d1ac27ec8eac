"""cuda_library: compiles .cu files with the system nvcc, one action per file.

Each .cu becomes a position-independent object (nvcc -Xcompiler -fPIC) that a
cc_library links together with the CUDA runtime (//gpu:cudart: the static
libcudart_static.a, so binaries need only the NVIDIA driver at run time, or
the emulated runtime of gpu/emu/ with --config=gpuemu). Headers the .cu files
include from this workspace are listed in `hdrs` (and `deps` for C++ code
they call). Targets build on machines without a GPU. Kernels are written with
gpu/host_kernel.h (their per-thread work also runs as a host loop under the
emulator), which every cuda_library may include.
"""

# Real GPUs from Ampere (sm_80) and Hopper (sm_90), plus PTX for newer ones.
CUDA_ARCH_FLAGS = (
    "-gencode=arch=compute_80,code=sm_80 " +
    "-gencode=arch=compute_90,code=sm_90 " +
    "-gencode=arch=compute_90,code=compute_90"
)

def cuda_library(name, srcs, hdrs = [], deps = [], nvcc_flags = [], visibility = None, testonly = False):
    # Includes are relative to this repository's root (external/shardfeed
    # when another workspace uses shardfeed).
    root = Label("//:BUILD").workspace_root
    includes = "-I%s -I$(GENDIR)/%s" % (root, root) if root else "-I. -I$(GENDIR)"
    objects = []
    for src in srcs:
        obj = "_cuda_objs/%s/%s.pic.o" % (name, src[:-len(".cu")])
        native.genrule(
            name = "%s_%s_nvcc" % (name, src.replace("/", "_").replace(".", "_")),
            srcs = [src] + hdrs + [Label("//gpu:host_kernel.h"), Label("//gpu:host_device.h")],
            outs = [obj],
            tools = ["@cuda//:nvcc_files"],
            cmd = ("/usr/local/cuda/bin/nvcc -c -std=c++17 -O3 -Xcompiler -fPIC " +
                   "-Xcompiler -fno-strict-aliasing --expt-relaxed-constexpr " +
                   CUDA_ARCH_FLAGS + " " + includes + " " + " ".join(nvcc_flags) +
                   " -o $@ $(location %s)" % src),
            testonly = testonly,
        )
        objects.append(obj)
    native.cc_library(
        name = name,
        srcs = objects,
        hdrs = hdrs,
        deps = deps + [Label("//gpu:cudart"), Label("//gpu:host_kernel")],
        visibility = visibility,
        testonly = testonly,
        linkstatic = True,
        alwayslink = True,
    )
