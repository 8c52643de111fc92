// Test helpers for checking drawn PNGs: decode with libpng, count colours, find a colour.
//
//   DecodedPng png = DecodePng(path);   // ADD_FAILURE on an unreadable file
//   EXPECT_EQ(png.width, 1040u);
//   EXPECT_GE(CountDistinctColors(png), 20u);
//   EXPECT_GT(CountNear(png, {210, 228, 240}, /*tolerance=*/4), 100u);
#ifndef MIMETIC_EXPERIMENTS_PNG_TEST_UTIL_H_
#define MIMETIC_EXPERIMENTS_PNG_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mimetic/experiments/render/plots.h"

namespace mimetic::experiments {

struct DecodedPng {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // (height, width, 3)
  Rgb At(uint32_t x, uint32_t y) const;
};

// Decodes `path` to 8-bit RGB (alpha composed over white); records a test failure and returns an empty
// image when libpng cannot read it.
DecodedPng DecodePng(const std::string& path);

size_t CountDistinctColors(const DecodedPng& png);

// Pixels whose every channel is within `tolerance` of `color`.
size_t CountNear(const DecodedPng& png, const Rgb& color, int tolerance);

// "#1f77b4" -> {31, 119, 180}.
Rgb ParseHexColor(const std::string& hex);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_PNG_TEST_UTIL_H_
