// Matching LoaderOptions::transforms to the feature spec, and describing a
// transformed batch tensor. Shared by the streaming Loader and the resident
// cache. Pure functions; errors are INVALID_ARGUMENT naming the feature.
#ifndef SHARDFEED_READER_FEATURE_TRANSFORMS_H_
#define SHARDFEED_READER_FEATURE_TRANSFORMS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "reader/loader.h"

namespace shardfeed {

// Sets (*transform_of)[f] to the index in `transforms` of feature f's
// transform, or -1. Each transform must name a fixed-shape uint8 feature
// whose shape is [C, H, W] (layout kCHW) or [H, W, C] (kHWC) of the
// transform's sizes, at most once, and be valid. Transforms with no size
// (channels = height = width = 0) take it from the feature's shape.
absl::Status ResolveTransforms(const std::vector<FeatureSpec>& features,
                               std::vector<FeatureTransform>* transforms,
                               std::vector<int>* transform_of);

// Parses a command-line transform:
//   FEATURE=LAYOUT[,OPTION...]  LAYOUT: chw (planar, e.g. CIFAR) or hwc
//   options: float32 | float16 | bfloat16, mean=M0/M1/..., std=S0/S1/...,
//            scale=X (default 1/255), pad=N (random crop), flip, seed=N,
//            cifar10 (CIFAR-10's channel mean and std), imagenet (ImageNet's,
//            as torchvision's presets: for decoded images, "hwc,...,imagenet")
// e.g. "image=chw,float16,cifar10,pad=4,flip". The size comes from the
// feature's shape.
absl::StatusOr<FeatureTransform> ParseTransform(const std::string& text);

// The tensor of `rows` transformed images at `data`: [rows, C, H, W] of the
// transform's output type.
Tensor TransformedTensor(const std::string& name, const gpu::ImageTransform& t, int64_t rows,
                         void* data, int device);

DType DTypeOf(gpu::OutputType t);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_FEATURE_TRANSFORMS_H_
