#include "mimetic/experiments/render/png_test_util.h"

#include <png.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "gtest/gtest.h"

namespace mimetic::experiments {

Rgb DecodedPng::At(uint32_t x, uint32_t y) const {
  const uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  return {p[0], p[1], p[2]};
}

DecodedPng DecodePng(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  DecodedPng out;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << path << ": " << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  const png_color white{255, 255, 255};
  std::vector<uint8_t> rgb(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, &white, rgb.data(), 0, nullptr)) {
    ADD_FAILURE() << path << ": " << image.message;
    return out;
  }
  out.width = image.width;
  out.height = image.height;
  out.rgb = std::move(rgb);
  return out;
}

size_t CountDistinctColors(const DecodedPng& png) {
  std::set<uint32_t> colors;
  for (size_t i = 0; i + 2 < png.rgb.size(); i += 3)
    colors.insert((uint32_t{png.rgb[i]} << 16) | (uint32_t{png.rgb[i + 1]} << 8) | png.rgb[i + 2]);
  return colors.size();
}

size_t CountNear(const DecodedPng& png, const Rgb& color, int tolerance) {
  size_t count = 0;
  for (size_t i = 0; i + 2 < png.rgb.size(); i += 3) {
    if (std::abs(png.rgb[i] - color.r) <= tolerance && std::abs(png.rgb[i + 1] - color.g) <= tolerance &&
        std::abs(png.rgb[i + 2] - color.b) <= tolerance) {
      ++count;
    }
  }
  return count;
}

Rgb ParseHexColor(const std::string& hex) {
  const unsigned long v = std::strtoul(hex.c_str() + (hex.empty() || hex[0] != '#' ? 0 : 1), nullptr, 16);
  return {static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
}

}  // namespace mimetic::experiments
