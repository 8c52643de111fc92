"""op_family: the Bazel targets of one op family, whose files live in mimetic/ops/<name>/.

Every family folder follows one file convention (docs/ops.md explains what each file holds):

    <name>/<name>.h            public functions and Op classes (library header)
    <name>/<name>.cc           dispatch, InferMeta, reference kernels, VJP rules (:<name>_reference)
    <name>/<name>_cpu.cc       fast CPU kernels (optional, listed in `srcs`)
    <name>/<name>_cases.cc     rows of the backend-consistency table   (cases = True)
    <name>/<name>_test.cc      worked examples and bad-input checks    (always)
    <name>/<name>.cu           CUDA kernels and their launchers        (cuda = "kernels")
    <name>/<name>_kernels.h    the launchers' host-side declarations   (cuda = "kernels")
    <name>/<name>_cuda.cc      CudaKernelFns registered with core      (cuda = "kernels" or "host")
    <name>/<benchmark>.cc      google-benchmark binaries               (benchmarks)

and gets these targets (labels stay in the single package //mimetic/ops):

    :<name>                          the library (public; or an alias of `lib`)
    :<name>_reference                <name>.cc, compiled with reference_copts (REFERENCE_COPTS)
    :<name>_cases                    testonly, alwayslink rows for the harness
    :<name>_consistency_test         fast CPU path vs reference, gradients vs finite differences
    :<name>_reference_fingerprints   hashes of the reference's outputs and VJP per case (testonly)
    :<name>_test                     the unit test
    :<name>_kernels_cuda             nvcc objects of <name>.cu            (tag "cuda")
    :<name>_cuda                     alwayslink kernel registration       (tag "cuda")
    :<name>_cuda_consistency_test    the same table on the GPU            (tag "cuda")

Usage (mimetic/ops/BUILD):

    op_family(
        name = "conv1d",
        deps = ["//mimetic/core:op", "//mimetic/core:tensor", "@system_libs//:absl"],
        test_deps = ["//mimetic/core:key", "//mimetic/core:random"],
        cu_hdrs = ["cuda/cuda_scratch.cuh"],
    )
"""

load("//tools:cuda.bzl", "cuda_library")

_PUBLIC = ["//visibility:public"]

# Copts of the reference sources (<name>.cc). -ffp-contract=off: a reference computes exactly the
# operations it writes, in the written order (no a * b + c fused into one FMA where the compiler's
# code shape allows it), so its bits do not depend on how it indexes its tensors or on the machine's
# vector width (docs/ops.md, "Reading a reference").
REFERENCE_COPTS = ["-ffp-contract=off"]

def op_family(
        name,
        srcs = None,
        hdrs = None,
        deps = [],
        copts = [],
        reference_copts = REFERENCE_COPTS,
        reference_deps = [],
        lib = None,
        cases = True,
        test_deps = [],
        cuda = "kernels",
        cuda_deps = [],
        cu_srcs = None,
        cu_hdrs = [],
        cuda_test_deps = [],
        benchmarks = {},
        cuda_visibility = None):
    """Declares the targets of the op family `name` (files in the folder `name`/).

    Args:
      name: the family, its folder and the prefix of its files and targets.
      srcs: library sources in the folder (file names without the folder); default [<name>.cc].
        <name>.cc is compiled with reference_copts, the others (fast code) without.
      hdrs: library headers in the folder; default [<name>.h].
      deps: the library's deps.
      copts: the library's copts.
      reference_copts: further copts of <name>.cc; default REFERENCE_COPTS.
      reference_deps: further deps of <name>.cc only (e.g. the views of core/xt_view.h).
      lib: when set, the family's code is compiled into this other library (families whose VJPs
        call each other share one); :<name> becomes an alias of it and srcs/hdrs/deps are unused.
      cases: whether <name>_cases.cc exists (consistency tests on CPU and CUDA).
      test_deps: extra deps of <name>_test.
      cuda: "kernels" (<name>.cu, <name>_kernels.h and <name>_cuda.cc), "host" (only
        <name>_cuda.cc, e.g. cuBLAS calls) or None.
      cuda_deps: extra deps of :<name>_cuda.
      cu_srcs: the .cu files in the folder; default [<name>.cu].
      cu_hdrs: further headers the .cu files include (paths relative to mimetic/ops).
      cuda_test_deps: extra deps of <name>_cuda_consistency_test (kernels of other ops the cases use).
      benchmarks: {binary name: deps}; the source is <name>/<binary name>.cc.
      cuda_visibility: visibility of :<name>_cuda (default private: link :cuda_backend instead).
    """
    folder = name + "/"
    library = ":" + name
    if lib:
        native.alias(name = name, actual = lib, visibility = _PUBLIC)
    else:
        # <name>.cc (the reference, with shape inference, VJPs and the public functions) is the library
        # :<name>_reference, compiled with reference_copts; :<name> holds the fast sources with the
        # family's copts only, so they keep their FMA contractions. alwayslink: <name>.cc's Ops call
        # ComputeCpu in the fast objects, which a static link reaches only after passing them.
        reference = name + ".cc"
        fast = [s for s in (srcs if srcs != None else [reference]) if s != reference]
        family_hdrs = [folder + h for h in (hdrs if hdrs != None else [name + ".h"])]
        native.cc_library(
            name = name + "_reference",
            srcs = [folder + reference],
            hdrs = family_hdrs,
            copts = copts + reference_copts,
            deps = deps + reference_deps,
        )
        native.cc_library(
            name = name,
            srcs = [folder + s for s in fast],
            hdrs = family_hdrs,
            copts = copts,
            deps = deps + [":" + name + "_reference"],
            alwayslink = bool(fast),
            visibility = _PUBLIC,
        )

    if cases:
        native.cc_library(
            name = name + "_cases",
            testonly = True,
            srcs = [folder + name + "_cases.cc"],
            deps = [library, "//mimetic/ops/testing:op_cases"],
            alwayslink = True,
        )
        native.cc_test(
            name = name + "_consistency_test",
            deps = [":" + name + "_cases", "//mimetic/ops/testing:consistency_main"],
        )
        native.cc_binary(
            name = name + "_reference_fingerprints",
            testonly = True,
            deps = [":" + name + "_cases", "//mimetic/ops/testing:reference_fingerprints_main"],
        )

    native.cc_test(
        name = name + "_test",
        srcs = [folder + name + "_test.cc"],
        deps = [library, "@system_libs//:gtest_main"] + test_deps,
    )

    for binary, binary_deps in benchmarks.items():
        native.cc_binary(
            name = binary,
            srcs = [folder + binary + ".cc"],
            deps = [library] + binary_deps,
        )

    if not cuda:
        return
    cuda_lib_deps = [
        library,
        ":cuda_glue",
        "//mimetic/core:op",
        "//mimetic/core:status",
        "//mimetic/core:tensor",
        "@system_libs//:absl",
    ] + cuda_deps
    if cuda == "kernels":
        cuda_library(
            name = name + "_kernels_cuda",
            srcs = [folder + f for f in (cu_srcs if cu_srcs != None else [name + ".cu"])],
            hdrs = [folder + name + "_kernels.h"],
            cu_hdrs = cu_hdrs,
            tags = ["cuda"],
        )
        cuda_lib_deps.append(":" + name + "_kernels_cuda")
    elif cuda != "host":
        fail("op_family cuda must be \"kernels\", \"host\" or None, got " + repr(cuda))
    native.cc_library(
        name = name + "_cuda",
        srcs = [folder + name + "_cuda.cc"],
        tags = ["cuda"],
        deps = cuda_lib_deps,
        alwayslink = True,
        visibility = cuda_visibility,
    )
    if cases:
        native.cc_test(
            name = name + "_cuda_consistency_test",
            tags = ["cuda"],
            deps = [
                ":" + name + "_cases",
                ":" + name + "_cuda",
                "//mimetic/core:cuda_runtime",
                "//mimetic/ops/testing:consistency_main",
            ] + cuda_test_deps,
        )
